"""A power or telemetry log attached to the runs of a result file, at import time.

`joulebench import RESULT --power-log LOG` (and the Upload page, through
`ingest.import_with_power_log`) reads RESULT with its importer, then, before validation and
ingest, gives each run whose wall-clock window is known the log's samples inside that window
as a power trace (t_s from the window start). The log is read from its bytes and aligned with
the same code as the runner's `--power-log` (`importers.powerlogs`: nvidia-smi, tegrastats, jtop or a
wall meter's time,watts CSV; energy = trapezoid over the window with the power at both edges
interpolated), so an imported pair gives the same figures as a live run with `--power-log`.

- A run without energy of its own gets energy_j = the log's energy over its window, boundary
  `--power-log-boundary`, else `wall` for a meter CSV, else the log's own (gpu_board for
  nvidia-smi, jetson_module for tegrastats / jtop), method `sampled`; avg_power_w, j_per_sample,
  j_per_iteration (and net figures when the run has an idle baseline) are derived by
  `energy.reading_figures` / `energy.idle_figures`, the runner's rules.
- A run with energy keeps it. Where the log measured the same boundary, its figure goes into
  energy_sampled_j with energy_disagreement_pct, flagged `energy_counter_vs_sampled_disagree` over
  the limit (`energy.figures`); a different boundary is not compared (the figure is in the run's notes).
- Windows: `started_at` / `ended_at`, else what the format records (CodeCarbon: `timestamp`, the
  end of the run in whole seconds, and `duration`). Times without a zone (the logs', CodeCarbon's)
  are read as this machine's local time, as the runner reads them; set TZ to import a pair
  recorded elsewhere.
- A run whose window is unknown or not covered by the log is imported without the trace, with a
  warning naming it and why; when no run can be aligned the pair is refused (ResultFileError).

The pair is one source: its content hash covers both files (`pair_sha256`), so the same pair
imports once and the result file alone is another source. Run ids stay the result file's, so a
run already stored (say, imported before without the log) is a duplicate and is left as stored.
"""

from __future__ import annotations

import bisect
import copy
import hashlib
from dataclasses import dataclass, replace
from datetime import datetime
from typing import Any

from energy import EnergyReading, idle_figures, reading_figures
from energy.figures import FLAG_SHORT_WINDOW, compare_counter_and_sampled, window_is_short
from importers import POWER_LOG_FORMATS, ImportedFile, detect, load_source, validate_imported
from importers.base import Conversion, Hints, Source, read_csv
from importers.codecarbon import CodeCarbonImporter
from importers.powerlogs.detect import read_power_log
from importers.powerlogs.log import PowerLog, PowerLogError
from importers.powerlogs.meter import parse_meter_csv
from joulebench.errors import ResultFileError
from joulebench.vocab import BOUNDARIES

MAX_REASONS = 8  # per error message


@dataclass(frozen=True)
class PowerLogFile:
    """The bytes of a power log to attach, its file name, and the boundary the user states."""

    data: bytes
    name: str
    boundary: str | None = None

    def __post_init__(self) -> None:
        if self.boundary is not None and self.boundary not in BOUNDARIES:
            raise ResultFileError(
                "--power-log-boundary", [f"{self.boundary!r} is not one of {', '.join(BOUNDARIES)}"])

    @property
    def base_name(self) -> str:
        return self.name.rstrip("/").rsplit("/", 1)[-1] or "power-log"


def pair_sha256(result_sha256: str, log_data: bytes) -> str:
    """The content hash of a result source with a log attached: stable over both files' bytes."""
    h = hashlib.sha256(b"joulebench-power-log-pair-v1\x00")
    h.update(result_sha256.encode() + b"\x00")
    h.update(hashlib.sha256(log_data).hexdigest().encode())
    return h.hexdigest()


def pair_name(result_name: str, log_name: str) -> str:
    return f"{result_name} + {log_name.rstrip('/').rsplit('/', 1)[-1]}"


def read_power_log_bytes(log: PowerLogFile, device: str | None = None) -> PowerLog:
    """The log parsed by `importers.powerlogs` (`device`: the runs' device, which names a Jetson board whose
    rails a hand-rolled log does not); ResultFileError names the log and its line."""
    try:
        return read_power_log(log.data, log.boundary, device)
    except PowerLogError as e:
        raise ResultFileError(log.base_name, [f"{e.where}: {e.reason}"]) from e


def load_with_power_log(source: Source, log: PowerLogFile,
                        hints: Hints | None = None) -> tuple[ImportedFile, str]:
    """Convert `source` (any known format), attach `log` to its runs, validate the whole.

    Returns the ImportedFile (named 'result + log', hashed over both) and the result's format.
    Raises ResultFileError (and nothing else) for a bad result file, a bad log, a log without
    timestamps or without a total power domain, or when no run could be aligned to the log.
    """
    imported, fmt = load_source(source, hints)
    devices = [run.get("device", {}).get("name") for run in imported.runs if isinstance(run.get("device"), dict)]
    power_log = read_power_log_bytes(log, devices[0] if len(set(devices)) == 1 else None)
    if power_log.start_wall_s is None:
        raise ResultFileError(log.base_name, [
            "(whole file): the log has no timestamps (e.g. tegrastats from an older L4T), so it cannot be "
            f"aligned to the runs of {source.name}; log with times (tegrastats --logfile on a newer L4T, jtop, "
            "nvidia-smi --query-gpu=timestamp,...), or import the log alone as a standalone trace"])
    if not power_log.totals:
        raise ResultFileError(log.base_name, [
            "(whole file): no domain measures the whole device: "
            + next((n for n in power_log.notes if "rail" in n), "no Jetson module power, no GPU power")
            + "; so nothing can be attached"])
    document = copy.deepcopy(imported.document)
    windows = run_windows(document, source, fmt)
    warnings = list(imported.warnings)
    reasons: list[str] = []
    attached = 0
    for i, (run, window) in enumerate(zip(document.get("runs", []), windows)):
        label = f"runs[{i}] ({run.get('run_id')})"
        reason: str | None
        if isinstance(window, str):
            reason = window
        else:
            reason = attach_to_run(run, power_log, window[0], window[1], log.base_name, window[2], warnings, label)
        if reason is None:
            attached += 1
        else:
            reasons.append(f"{label}: {reason}")
            warnings.append(f"{label}: power log not attached: {reason}")
    if not attached:
        shown = reasons[:MAX_REASONS] + ([f"... and {len(reasons) - MAX_REASONS} more"]
                                          if len(reasons) > MAX_REASONS else [])
        raise ResultFileError(source.name, [f"--power-log {log.base_name}: no run could be aligned to the log"]
                              + (shown or ["the file holds no runs"]))
    warnings.insert(0, f"power log {log.base_name} attached to {attached} of {len(windows)} run(s)")
    name = pair_name(source.name, log.base_name)
    validate_imported(document, name)
    return replace(imported, name=name, content_sha256=pair_sha256(source.content_sha256, log.data),
                   document=document, warnings=tuple(warnings)), fmt


def load_pair(result_data: bytes, result_name: str, log_data: bytes, log_name: str, *,
              boundary: str | None = None, hints: Hints | None = None,
              dirs: tuple[str, ...] = ()) -> tuple[ImportedFile, str]:
    """Bytes of one result file (any known format) and of a power log -> the attached ImportedFile."""
    return load_with_power_log(Source.single(result_data, result_name, dirs),
                               PowerLogFile(log_data, log_name, boundary), hints)


# --- run windows ------------------------------------------------------------------------------

Window = tuple[float, float, str]  # Unix start, Unix end, where the window came from


def _wall(text: Any) -> float | None:
    if not isinstance(text, str) or not text.strip():
        return None
    try:
        return datetime.fromisoformat(text.strip().replace("Z", "+00:00")).timestamp()  # naive: local time
    except ValueError:
        return None


def run_windows(document: dict[str, Any], source: Source, fmt: str) -> list[Window | str]:
    """Per run, its wall-clock window, or why it is not known."""
    runs = document.get("runs", [])
    from_format: list[Window | None] = [None] * len(runs)
    if fmt == CodeCarbonImporter.NAME:
        from_format = _codecarbon_windows(source, len(runs))
    out: list[Window | str] = []
    for run, known in zip(runs, from_format):
        start, end = _wall(run.get("started_at")), _wall(run.get("ended_at"))
        if start is not None and end is not None:
            out.append((start, end, "started_at to ended_at") if end > start
                       else f"ended_at {run.get('ended_at')} is not after started_at {run.get('started_at')}")
        elif known is not None:
            out.append(known)
        else:
            out.append("its wall-clock window is not known (no started_at and ended_at"
                       + (", and the format records none)" if fmt != "joulebench-result" else ")"))
    return out


def _codecarbon_windows(source: Source, count: int) -> list[Window | None]:
    """CodeCarbon writes `timestamp` when a run stops (local time, whole seconds) and `duration` (s)."""
    doc = source.json
    if doc is not None:
        records = doc if isinstance(doc, list) else [doc]
    else:
        conv = Conversion(source=source, hints=Hints(), importer=CodeCarbonImporter())
        header, lines = read_csv(conv, source.text or "")
        records = [dict(zip(header, cells)) for _, cells in lines if cells != header]
    out: list[Window | None] = []
    for record in records[:count]:
        end = _wall(record.get("timestamp")) if isinstance(record, dict) else None
        try:
            duration = float(record.get("duration"))
        except (TypeError, ValueError, AttributeError):
            duration = None
        if end is None or not duration or duration <= 0:
            out.append(None)
        else:
            out.append((end - duration, end, "CodeCarbon timestamp (run end, whole seconds) minus duration"))
    return out + [None] * (count - len(out))


# --- one run ----------------------------------------------------------------------------------

def _when(wall_s: float) -> str:
    return datetime.fromtimestamp(wall_s).isoformat(sep=" ", timespec="milliseconds")


def attach_to_run(run: dict[str, Any], log: PowerLog, start: float, end: float, log_name: str, how: str,
                  warnings: list[str], label: str) -> str | None:
    """Attach the log over [start, end] (Unix s) to `run` in place; the reason when it cannot."""
    assert log.start_wall_s is not None
    energy = log.energy_j(start, end)  # the runner's alignment: edge interpolation + trapezoid
    covered = log.covered_wall_s()
    if energy is None and covered is not None:
        first, last = covered
        return (f"the log covers {_when(first)} to {_when(last)}, not the whole run window {_when(start)} to "
                f"{_when(end)} (local time; {how})")
    if energy is None:
        return "the log has no total power domain"
    a, b = start - log.start_wall_s, end - log.start_wall_s
    traces = run.setdefault("power_traces", [])
    taken = {t.get("domain") for t in traces}
    samples = 0
    for trace in log.traces:
        ts = trace.t_s
        lo, hi = bisect.bisect_left(ts, a), bisect.bisect_right(ts, b)
        if hi <= lo:
            continue
        name = trace.domain if trace.domain not in taken else f"{trace.domain} (power log)"[:100]
        traces.append({"domain": name, "boundary": log.boundary if trace.domain in log.totals else None,
                       "method": "sampled", "t_s": [t - a for t in ts[lo:hi]],
                       "power_w": list(trace.power_w[lo:hi])})
        samples += hi - lo
    metrics = run.setdefault("metrics", {})
    flags = run.setdefault("flags", [])
    note = (f"power log {log_name} ({log.fmt}) attached: {samples} samples over {end - start:.3f} s "
            f"({how}), {energy:.6g} J at {log.boundary}, sampled")
    if metrics.get("energy_j") is None and metrics.get("j_per_sample") is None:
        _fill_energy(metrics, flags, log, energy, start, end)
    elif metrics.get("energy_j") is not None and metrics.get("energy_boundary") == log.boundary:
        if metrics.get("energy_sampled_j") is None and energy > 0:
            own = float(metrics["energy_j"])
            compared = compare_counter_and_sampled(own, energy, flags)
            metrics["energy_sampled_j"] = energy
            metrics["energy_disagreement_pct"] = compared.get("energy_disagreement_pct")
            if metrics.get("energy_method") == "counter" and metrics.get("energy_counter_j") is None:
                metrics["energy_counter_j"] = own
        else:
            warnings.append(f"{label}: already has energy_sampled_j; the log's {energy:.6g} J is in its notes")
    else:
        warnings.append(f"{label}: its energy is at {metrics.get('energy_boundary') or 'an unstated boundary'}, "
                        f"the log's at {log.boundary}; kept its own, not compared (the log's figure is in its notes)")
    run["notes"] = f"{run['notes']}; {note}" if run.get("notes") else note
    return None


def _fill_energy(metrics: dict[str, Any], flags: list[str], log: PowerLog, energy: float, start: float,
                 end: float) -> None:
    """The run's energy from the log, derived figures by the runner's own rules."""
    duration = metrics.get("duration_s") or (end - start)
    reading = EnergyReading(energy_j=energy, boundary=log.boundary, method="sampled")
    period = log.period_s()
    if period:
        reading.metrics["sample_period_s"] = period
        if window_is_short(end - start, period):
            reading.flags.append(FLAG_SHORT_WINDOW)
    derived = reading_figures(reading, examples=metrics.get("examples"),
                              optimizer_steps=metrics.get("optimizer_steps"), duration_s=duration)
    metrics.pop("energy_missing_reason", None)
    metrics.update(derived)
    new_flags: list[str] = list(reading.flags)
    if metrics.get("idle_power_w") is not None and metrics.get("energy_j") is not None:
        metrics.update(idle_figures(metrics, metrics["idle_power_w"], new_flags))
    flags.extend(f for f in new_flags if f not in flags)


# --- folders and archives ---------------------------------------------------------------------

def is_power_log(source: Source) -> bool:
    """An nvidia-smi / tegrastats / jtop log, or a wall meter's time,watts CSV."""
    if source.is_folder:
        return False
    try:
        return detect(source).NAME in POWER_LOG_FORMATS
    except ResultFileError:
        pass
    try:
        parse_meter_csv(source.data)
    except (ResultFileError, PowerLogError, ValueError):
        return False
    return True


def pair_sources(sources: list[Source]) -> list[tuple[Source, PowerLogFile | None]]:
    """`--attach-logs`: in each folder holding exactly one power log and one other source, the log
    is attached to that source; every other source is imported as it is."""
    groups: dict[str, list[Source]] = {}
    for source in sources:
        groups.setdefault(source.name.rstrip("/").rsplit("/", 1)[0] if "/" in source.name else "", []).append(source)
    out: list[tuple[Source, PowerLogFile | None]] = []
    for members in groups.values():
        logs = [s for s in members if is_power_log(s)]
        others = [s for s in members if s not in logs]
        if len(logs) == 1 and len(others) == 1:
            raw = next(iter(logs[0].files.values()))
            out.append((others[0], PowerLogFile(raw, logs[0].base_name)))
        else:
            out.extend((s, None) for s in members)
    return out
