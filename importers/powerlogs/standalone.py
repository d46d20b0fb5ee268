"""Power and telemetry logs imported on their own: nvidia-smi CSV and -q reports, tegrastats, jtop and other
Jetson telemetry CSVs, parsed tegrastats records (JSON) and wide GPU power CSVs.

The logs are parsed by the format modules beside this one (the same parsers the runner's
`--power-log` and an attached log use). A log imported on its own is kept as a standalone trace: one run with the
log's traces, its energy (trapezoid over the total domains), average power and duration,
workload `power-log` unless --workload names it. What the device was doing is not in a log, so
a standalone log needs --mode (train, infer or idle). A Jetson log's module power follows the
board table (`energy.rails`): the input rail, or the sum of the input-side rails on a board
without one; --device names the board when the log's column names do not.
"""

from __future__ import annotations

from datetime import timedelta
from typing import Any

from energy import energy_figures
from energy.figures import compare_counter_and_sampled
from energy.rails import board_for_device, modules_for
from importers.base import Conversion, Importer, Source, iso_utc
from importers.powerlogs.detect import sniff
from importers.powerlogs.gpu_power_csv import parse_gpu_power_csv
from importers.powerlogs.json_log import as_csv, is_json_power_log
from importers.powerlogs.jtop import parse_jtop
from importers.powerlogs.log import PowerLog, PowerLogError
from importers.powerlogs.nvidia_smi import parse_nvidia_smi
from importers.powerlogs.nvidia_smi_dmon import parse_nvidia_smi_dmon
from importers.powerlogs.nvidia_smi_query import is_query_log, parse_nvidia_smi_query
from importers.powerlogs.powermetrics import machine_model, parse_powermetrics
from importers.powerlogs.recordings import MIN_GAP_S, recordings
from importers.powerlogs.tegrastats import parse_tegrastats
from importers.powerlogs.tegrastats_json import parse_tegrastats_json
from importers.powerlogs.two_column import parse_two_column, two_column_header
from importers.powerlogs.uprof import parse_uprof


def _parse(conv: Conversion, parse: Any, jetson: bool = False, device: str | None = None) -> PowerLog:
    try:
        if jetson:
            log: PowerLog = parse(conv.source.data, conv.hints.boundary, device or conv.hints.device)
        else:
            log = parse(conv.source.data, conv.hints.boundary)
    except PowerLogError as e:
        raise conv.fail(e.where, e.reason) from e
    return log


def _metrics(log: PowerLog, flags: list[str], missing: str) -> dict[str, Any]:
    duration = log.duration_s()
    if not log.totals:
        return {"duration_s": duration, "energy_missing_reason": missing}
    if duration is None:
        return {"energy_missing_reason": "fewer than 2 samples over a positive time span"}
    out: dict[str, Any] = {"duration_s": duration}
    out.update(energy_figures(log.total_j(), boundary=log.boundary, method="sampled", duration_s=duration,
                              what="the log's power", flags=flags))
    return out


def _no_module(log: PowerLog) -> str:
    """Why a Jetson log gives no module energy (the board table's reason, kept in the log's notes),
    with the modules its CPU cores and RAM fit when it prints them."""
    reason = next((n for n in log.notes if "rail" in n and ("lacks" in n or "no module input" in n
                                                            or "does not have" in n)), None)
    reason = reason or f"no module power in the log; rails: {', '.join(t.domain for t in log.traces)}"
    offer = log.module_offer()
    return f"{reason} ({offer})" if offer else reason


def _jetson_device(conv: Conversion, log: PowerLog, says: str) -> dict[str, Any]:
    """A Jetson log names no module: not stated, with the modules its CPU cores and RAM fit offered."""
    offer = log.module_offer()
    return conv.device(None, "jetson", where=f"(whole file; {says}" + (f"; {offer})" if offer else ")"))


def _jetson_config(log: PowerLog) -> dict[str, Any]:
    return {"power_mode": log.power_mode} if log.power_mode else {}


def _start_note(started: Any) -> str:
    if started is None:
        return ""
    zone = "" if started.tzinfo is not None else " (local time, zone not recorded)"
    return f"; log starts {started.isoformat(sep=' ')}{zone}"


def _standalone(conv: Conversion, log: PowerLog, device: dict[str, Any], metrics: dict[str, Any],
                config: dict[str, Any] | None = None) -> dict[str, Any]:
    return conv.document([_standalone_run(conv, log, device, metrics, config)])


def _standalone_run(conv: Conversion, log: PowerLog, device: dict[str, Any], metrics: dict[str, Any],
                    config: dict[str, Any] | None = None, index: int = 0) -> dict[str, Any]:
    span_note = log.span_note()
    if span_note:
        log.notes.append(span_note)
    for note in log.notes[1:]:
        conv.warn(note)
    started = log.started
    zoned = started is not None and started.tzinfo is not None
    run: dict[str, Any] = {
        "run_id": conv.run_id(index),
        "status": "ok",
        "device": device,
        "config": {
            "workload": conv.hints.workload or "power-log",
            "mode": conv.mode(None, "(whole file; a power log does not say what ran: pass --mode train|infer|idle)"),
            "precision": conv.hints.precision,
            "batch_size": conv.hints.batch_size,
            **(config or {}),
        },
        "metrics": {k: v for k, v in metrics.items() if v is not None},
        "flags": [*log.flags, "standalone_power_trace"],
        "power_traces": [t.to_json() for t in log.traces],
        "notes": "; ".join([log.notes[0] + _start_note(started), *log.notes[1:]]),
    }
    duration = metrics.get("duration_s")
    if zoned and started is not None:
        run["started_at"] = iso_utc(started)
        if duration:
            run["ended_at"] = iso_utc(started + timedelta(seconds=duration))
    return run


def _board_of_fits(log: PowerLog) -> str | None:
    """The module whose board's rail rule applies when the log's rails do not tell the board but its CPU cores
    and RAM total do: every module they fit on one board (an AGX Orin 64GB's 12 cores and 62,841 MB fit that
    module alone; 6 cores and 7.6 GB fit an Orin NX 8GB or an Orin Nano 8GB, both with the input rail VDD_IN);
    None when they fit none, or modules of boards whose rails differ."""
    fits = modules_for(log.cpu_cores, log.ram_total_mb, [t.domain for t in log.traces])
    boards = [board_for_device(name) for name in fits]
    if not fits or None in boards or len({b.name for b in boards if b is not None}) != 1:
        return None
    return fits[0]


def _jetson_run(conv: Conversion, log: PowerLog, unnamed: str,
                parse: Any = None) -> dict[str, Any]:
    """A Jetson log as one standalone run: the module's energy (or why there is none) and the module
    the log's cores and RAM fit, offered, never stated. A log whose rails do not tell the board is read by
    the rail rule of the board its CPU cores and RAM total fit, when they fit one board only (`_board_of_fits`)."""
    module = _board_of_fits(log) if parse is not None and not log.totals and not conv.hints.device else None
    if module is not None:
        offer = log.module_offer()
        ruled = _parse(conv, parse, jetson=True, device=module)
        if ruled.totals:
            ruled.notes.insert(1, f"the rails do not tell the board, so its rail rule is taken from {module} "
                                  f"({offer}; the device is left for you to confirm)")
            log = ruled
    flags: list[str] = []
    metrics = _metrics(log, flags, _no_module(log))
    device = _jetson_device(conv, log, unnamed)
    log.flags.extend(flags)
    return _standalone(conv, log, device, metrics, _jetson_config(log))


class NvidiaSmiImporter(Importer):
    NAME = "nvidia-smi"
    TOOL = "nvidia-smi"
    TOLERATES_NUL = True  # a logger killed while writing leaves NUL bytes at the end (parse_nvidia_smi)
    DESCRIPTION = "nvidia-smi --query-gpu CSV log with header"

    def sniff(self, source: Source) -> bool:
        return sniff(source.head) == self.NAME

    def convert(self, conv: Conversion) -> dict[str, Any]:
        log = _parse(conv, parse_nvidia_smi)
        flags: list[str] = []
        metrics = _metrics(log, flags, "no GPU power samples")
        metrics["mem_used_device_mb"] = log.mem_used_mb
        config: dict[str, Any] = {"gpu_count": log.gpu_count, "power_limit_w": log.power_limit_w}
        device = conv.device(log.device_name, "gpu", where="name column", memory_gb=log.memory_gb)
        log.flags.extend(flags)
        return _standalone(conv, log, device, metrics, {k: v for k, v in config.items() if v is not None})


class NvidiaSmiDmonImporter(Importer):
    NAME = "nvidia-smi-dmon"
    TOOL = "nvidia-smi dmon"
    DESCRIPTION = "nvidia-smi dmon output: each GPU's pwr per round, under its '# gpu pwr ...' and units lines"

    def sniff(self, source: Source) -> bool:
        return sniff(source.head) == self.NAME

    def convert(self, conv: Conversion) -> dict[str, Any]:
        log = _parse(conv, parse_nvidia_smi_dmon)
        metrics = _metrics(log, log.flags, "no GPU power samples")
        device = conv.device(None, "gpu", where="(whole file; dmon numbers the GPUs, it does not name them)")
        return _standalone(conv, log, device, metrics, {"gpu_count": log.gpu_count})


class NvidiaSmiQueryImporter(Importer):
    NAME = "nvidia-smi-q"
    TOOL = "nvidia-smi"
    DESCRIPTION = "nvidia-smi -q reports (NVSMI LOG), one after another: each GPU's Power Draw at each Timestamp"

    def sniff(self, source: Source) -> bool:
        return is_query_log(source.head)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        log = _parse(conv, parse_nvidia_smi_query)
        flags: list[str] = []
        if log.samples < 2:  # one report: one sample per GPU, no time span
            metrics: dict[str, Any] = {"energy_missing_reason": "the log holds one sample (one nvidia-smi -q "
                                                                "report): a run's energy needs at least two"}
        else:
            metrics = _metrics(log, flags, "no GPU power samples")
        metrics["mem_used_device_mb"] = log.mem_used_mb
        config: dict[str, Any] = {"gpu_count": log.gpu_count, "power_limit_w": log.power_limit_w}
        device = conv.device(log.device_name, "gpu", memory_gb=log.memory_gb,
                             where="(whole file; the reports give no Product Name: nvidia-smi -q -d POWER omits it)")
        log.flags.extend(flags)
        return _standalone(conv, log, device, metrics, {k: v for k, v in config.items() if v is not None})


class TegrastatsImporter(Importer):
    NAME = "tegrastats"
    TOOL = "tegrastats"
    DESCRIPTION = "Jetson tegrastats log (old and new rail formats)"

    def sniff(self, source: Source) -> bool:
        return sniff(source.head) == self.NAME

    def convert(self, conv: Conversion) -> dict[str, Any]:
        return _jetson_run(conv, _parse(conv, parse_tegrastats, jetson=True), "tegrastats does not name the module",
                           parse_tegrastats)


class JtopImporter(Importer):
    NAME = "jtop"
    TOOL = "jetson-stats (jtop)"
    DESCRIPTION = "jtop / jetson-stats CSV log and other Jetson telemetry CSVs (rails by name)"

    def sniff(self, source: Source) -> bool:
        return sniff(source.head) == self.NAME

    def convert(self, conv: Conversion) -> dict[str, Any]:
        log = _parse(conv, parse_jtop, jetson=True)
        if log.fmt != "jtop":
            conv.tool_version = None
            conv.warn(f"a Jetson telemetry CSV ({log.notes[0]}), not written by jtop itself")
        return _jetson_run(conv, log, "the jtop log does not name the module", parse_jtop)


class TegrastatsJsonImporter(Importer):
    NAME = "tegrastats-json"
    TOOL = "tegrastats (parsed to JSON)"
    DESCRIPTION = "JSON array of parsed tegrastats records: a timestamp and rails in mW, per line or per rail"

    def sniff(self, source: Source) -> bool:
        return sniff(source.head) == self.NAME

    def convert(self, conv: Conversion) -> dict[str, Any]:
        conv.tool_version = None
        return _jetson_run(conv, _parse(conv, parse_tegrastats_json, jetson=True),
                           "parsed tegrastats records do not name the module", parse_tegrastats_json)


class GpuPowerCsvImporter(Importer):
    NAME = "gpu-power-csv"
    TOOL = "NVML GPU power loggers"
    DESCRIPTION = "a GPU power log written with NVML (pynvml): a time column and one power column per GPU"

    def sniff(self, source: Source) -> bool:
        return sniff(source.head) == self.NAME

    def convert(self, conv: Conversion) -> dict[str, Any]:
        log = _parse(conv, parse_gpu_power_csv)
        metrics = _metrics(log, log.flags, "no GPU power samples")
        device = conv.device(None, "gpu", where="(whole file; the log does not name the GPU)")
        return _standalone(conv, log, device, metrics, {"gpu_count": log.gpu_count})


class UprofImporter(Importer):
    NAME = "amd-uprof"
    TOOL = "AMD uProf"
    DESCRIPTION = "AMD uProf's power profile report (CSV): socket package and core power over time"

    def sniff(self, source: Source) -> bool:
        return sniff(source.head) == self.NAME

    def convert(self, conv: Conversion) -> dict[str, Any]:
        log = _parse(conv, parse_uprof)
        metrics = _metrics(log, log.flags, "no socket package power counter in the report")
        device = conv.device(None, "cpu", where="(whole file; uProf names the CPU by family and model numbers only)")
        return _standalone(conv, log, device, metrics)


class PowermetricsImporter(Importer):
    NAME = "powermetrics"
    TOOL = "macOS powermetrics"
    DESCRIPTION = "macOS powermetrics text output: the SoC's combined power (CPU, GPU, ANE) per sample"

    def sniff(self, source: Source) -> bool:
        return sniff(source.head) == self.NAME

    def convert(self, conv: Conversion) -> dict[str, Any]:
        log = _parse(conv, parse_powermetrics)
        metrics = _metrics(log, log.flags, "no combined or package power line in the samples")
        model = machine_model(conv.source.head)
        says = f"powermetrics names the Mac as {model!r}, a model identifier, not its chip" if model else \
            "powermetrics does not name the chip"
        device = conv.device(None, where=f"(whole file; {says})")
        return _standalone(conv, log, device, metrics)


class PowerTableImporter(Importer):
    NAME = "power-table"
    TOOL = "home-grown power logs"
    DESCRIPTION = "a time column and power column(s) with their units ('Timestamp (s),Power (mW)'; 'sec,mw')"

    def sniff(self, source: Source) -> bool:
        head = source.head
        if head.lstrip()[:1] == "{":  # a JSON Lines log: a time and power readings, or each device's, per line
            return is_json_power_log(head)
        return bool(head) and head.lstrip()[:1] != "[" and two_column_header(head.split("\n", 1)[0], head)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        stated = {c.strip().lower(): u for c, u in conv.hints.units}
        data = conv.source.data
        if conv.source.head.lstrip()[:1] == "{":
            try:
                data = as_csv(conv.source.text or "")
            except ValueError as e:
                raise conv.fail("(whole file)", f"a JSON Lines power log: {e}") from e
            conv.warn("a JSON Lines power log: each line a sample, read as the rows of a power table")
        try:
            whole = parse_two_column(data, conv.hints.boundary, stated)
        except PowerLogError as e:
            raise conv.fail(e.where, e.reason) from e
        device = conv.device(None, "gpu", where="(whole file; a power log does not name the device)")
        parts = recordings(whole)
        if len(parts) > 1:
            conv.warn(f"{len(parts)} recordings in one log (sampling stopped for more than {MIN_GAP_S:g} s between "
                      "them: sessions appended to one file): a run each, never integrated across the gap")
        runs = []
        for n, log in enumerate(parts):
            total = next((tr for tr in log.traces if tr.domain in log.totals), None)
            duration = log.duration_s()
            flags: list[str] = []
            metrics: dict[str, Any] = {"duration_s": duration}
            if total is None or duration is None:
                metrics["energy_missing_reason"] = (log.notes[-1] if total is None else
                                                    "fewer than 2 samples over a positive time span")
            elif log.counter_j is not None:  # the meter's own running energy: a counter before a sampled integral
                metrics.update(energy_figures(log.counter_j, boundary=conv.boundary(total.boundary), method="counter",
                                              duration_s=duration, what="the log's energy counter", flags=flags))
                metrics.update(compare_counter_and_sampled(log.counter_j, log.total_j() or 0.0, flags))
            else:
                metrics.update(energy_figures(log.total_j(), boundary=conv.boundary(total.boundary), method="sampled",
                                              duration_s=duration, what="the log's power", flags=flags))
            log.flags.extend(flags)
            config: dict[str, Any] = {"gpu_count": log.gpu_count}
            if len(parts) > 1:
                config["tag"] = f"recording {n + 1} of {len(parts)}"
            runs.append(_standalone_run(conv, log, device, metrics, config, n))
        return conv.document(runs)
