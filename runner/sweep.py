"""A sweep: one run per combination of the options, one result file, one ingest."""

from __future__ import annotations

import sys
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

from joulebench.errors import JouleBenchError
from runner import record
from runner.execute import execute
from runner.interrupts import InterruptGuard, exit_code, signal_name
from runner.options import SweepOptions
from runner.power import PowerMeter
from runner.report import Progress


@dataclass
class SweepResult:
    runs: list[dict[str, Any]] = field(default_factory=list)
    out_path: Path | None = None
    ingest: Any = None  # db.IngestReport
    ingest_error: JouleBenchError | None = None
    interrupted_by: int | None = None

    @property
    def exit_code(self) -> int:
        """128 + signal when interrupted; the ingest error's code; 1 when a run failed; else 0.
        Out-of-memory is an outcome, not a failure."""
        if self.interrupted_by is not None:
            return exit_code(self.interrupted_by)
        if self.ingest_error is not None:
            return self.ingest_error.exit_code
        return 1 if any(r["status"] == "failed" for r in self.runs) else 0


def run_sweep(options: SweepOptions, *, meter: PowerMeter | None = None, ingest: bool = True,
              stream: TextIO | None = None) -> SweepResult:
    """Validate (raising RunConfigError before anything runs), run every combination, write the
    result file after each run, then ingest it. SIGINT/SIGTERM end the sweep cleanly."""
    options.validate()
    configs = options.expand()
    stream = stream or sys.stderr
    out_path = options.out or record.default_out_path(options.db)
    result = SweepResult(out_path=out_path)
    progress = Progress(len(configs), stream)
    with InterruptGuard() as guard:
        for index, cfg in enumerate(configs):
            if guard.pending is not None:
                break
            progress.start(index, cfg)
            outcome = execute(cfg, meter=meter, guard=guard, on_step=progress.step_callback(cfg))
            result.runs.append(outcome.record)
            progress.finish(index, outcome.record)
            record.write(result.runs, out_path)  # finished runs survive even a hard kill
            if outcome.interrupted_by is not None:
                break
        result.interrupted_by = guard.pending
        if result.interrupted_by is not None:
            print(f"{signal_name(result.interrupted_by)} received: stopping; keeping {len(result.runs)} run(s)",
                  file=stream, flush=True)
        if not result.runs:
            result.out_path = None
            return result
        record.write(result.runs, out_path)
        print(f"wrote {len(result.runs)} run(s) to {out_path}", file=stream, flush=True)
        if ingest:
            try:
                result.ingest = record.ingest(out_path, options.db)
            except JouleBenchError as e:
                result.ingest_error = e
    return result
