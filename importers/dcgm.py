"""NVIDIA DCGM outputs: `dcgmi dmon` logs and the C API's long field CSV (power logs, parsed by
`importers.powerlogs.dcgm`), and per-job statistics tables (`dcgmi stats` exports: one row per job
and GPU with `energyconsumed_joules`, `powerusage_watts_avg`, `totalexecutiontime_sec`).

A dmon log is kept as a standalone power trace like the other logs (GPU board power, W per GPU);
its energy is the sum of the GPUs' TOTEC counters when the log has them (method `counter`), else the
trapezoid over POWER (rounds 1 s apart, dmon's default, when no wrapper wrote times: flagged).
A recording without any power field (dmon `-e 1001,252`: GRACT, FBUSD) is refused with that reason.
Job statistics: DCGM's energy counter saturates on long jobs (about 2e5 J), so a job's energy that
disagrees with average power x time by more than 10 % is not stored; the run keeps the power.
"""

from __future__ import annotations

from typing import Any

from energy import energy_figures
from importers.base import Conversion, Importer, Source, cell, clean_str, energy_metrics, num, positive, read_csv
from importers.powerlogs.dcgm import dcgm_kind, parse_dcgm
from importers.powerlogs.log import PowerLog, PowerLogError
from importers.powerlogs.standalone import _metrics, _standalone

JOB_COLUMNS = {"energyconsumed_joules", "powerusage_watts_avg", "totalexecutiontime_sec"}
DMON_SHORT_NAMES = {"GRACT", "SMACT", "SMOCC", "TENSO", "DRAMA", "FBUSD", "GPUTL", "MCUTL", "TMPTR", "POWER", "POWINST",
                    "TOTEC", "SMCLK", "MMCLK", "PCITX", "PCIRX", "NVLTX", "NVLRX"}
SATURATION_TOLERANCE = 0.10  # short jobs agree within 1 %


def _header(head: str) -> list[str]:
    return [c.strip() for c in head.split("\n", 1)[0].split(",")]


class DcgmImporter(Importer):
    NAME = "dcgm"
    TOOL = "NVIDIA DCGM"
    DESCRIPTION = "DCGM: dcgmi dmon logs, GPUId,TimeStampUs,Field,Values CSV, job statistics tables"

    def sniff(self, source: Source) -> bool:
        head = source.head
        if dcgm_kind(head):
            return True
        cols = set(_header(head))
        return JOB_COLUMNS <= cols or ("EntityId" in cols and len(cols & DMON_SHORT_NAMES) >= 1)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        head = conv.source.head
        cols = set(_header(head))
        if JOB_COLUMNS <= cols:
            return self._jobs(conv)
        if not dcgm_kind(head):
            power = cols & {"POWER", "POWINST", "TOTEC"}
            if not power:
                raise conv.fail("line 1", f"a DCGM dmon recording without power fields ({', '.join(sorted(cols))}): "
                                          "utilisation and memory only, nothing to measure energy with")
            raise conv.fail("line 1", "a CSV re-written from dcgmi dmon output: import the dmon log itself")
        try:
            log: PowerLog = parse_dcgm(conv.source.data, conv.hints.boundary)
        except PowerLogError as e:
            raise conv.fail(e.where, e.reason) from e
        flags: list[str] = []
        if log.counter_j is not None:
            metrics: dict[str, Any] = {"duration_s": log.duration_s()}
            metrics.update(energy_figures(log.counter_j, boundary=log.boundary, method="counter",
                                          duration_s=log.duration_s(), what="the TOTEC counters", flags=flags))
        else:
            metrics = _metrics(log, flags, "no GPU power samples")
        log.flags.extend(flags)
        device = conv.device(None, "gpu", where="(whole file; DCGM logs do not name the GPU)")
        return _standalone(conv, log, device, metrics, {"gpu_count": log.gpu_count} if log.gpu_count else None)

    def _jobs(self, conv: Conversion) -> dict[str, Any]:
        header, rows = read_csv(conv, conv.source.text or "")
        runs = []
        saturated = 0
        for i, (lineno, row) in enumerate(rows):
            def val(col: str, _row: list[str] = row, _lineno: int = lineno) -> float | None:
                return num(cell(header, _row, col), f"line {_lineno}: {col}", conv)

            duration = positive(val("totalexecutiontime_sec"))
            power = positive(val("powerusage_watts_avg"))
            energy = val("energyconsumed_joules")
            flags: list[str] = []
            metrics: dict[str, Any] = {"duration_s": duration}
            if energy is not None and energy > 0 and power and duration and abs(energy - power * duration) > (
                    SATURATION_TOLERANCE * power * duration):
                saturated += 1
                flags.append("energy_counter_saturated")
                metrics["energy_missing_reason"] = (
                    f"energyconsumed_joules {energy:g} J disagrees with powerusage_watts_avg x totalexecutiontime_sec "
                    f"= {power * duration:g} J by more than {SATURATION_TOLERANCE:.0%} (DCGM's job energy saturates "
                    "on long jobs)")
                metrics["avg_power_w"] = power
            elif energy is not None:
                metrics.update(energy_metrics(energy, duration_s=duration, boundary=conv.boundary("gpu_board"),
                                              method="counter", what="energyconsumed_joules", flags=flags))
                if "energy_j" not in metrics and power:
                    metrics["avg_power_w"] = power
            job = clean_str(cell(header, row, "id_job"))
            runs.append({
                "run_id": conv.run_id(i),
                "status": "ok",
                "device": conv.device(None, "gpu", where=f"line {lineno} (DCGM job statistics do not name the GPU)"),
                "config": {
                    "workload": conv.hints.workload or f"job {job or i}",
                    "mode": conv.mode(None, f"line {lineno} (job statistics do not say what the job did)"),
                    "precision": conv.precision(None),
                    "gpu_count": 1,
                    "tag": f"{clean_str(cell(header, row, 'Node')) or '?'} gpu "
                           f"{clean_str(cell(header, row, 'gpu_id'))}",
                },
                "metrics": {k: v for k, v in metrics.items() if v is not None},
                "flags": flags,
                "notes": f"DCGM job statistics, job {job or '?'}: one GPU's share of the job",
            })
        if saturated:
            conv.warn(f"{saturated} job(s) whose DCGM energy saturated: their energy is not stored")
        return conv.document(runs)
