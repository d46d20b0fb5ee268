"""Power and telemetry logs: nvidia-smi CSV (every --query-gpu variant with a header, units in
the header or the cells), tegrastats (old `POM_5V_IN 2793/1750` and new `VDD_IN 5012mW/...`
rails, with or without a leading timestamp) and jtop CSV logs.

A log imported on its own is kept as a standalone trace: one run with the log's traces, its
energy (sum of P_i * dt_i over the log), average power and duration, workload `power-log`
unless --workload names it. What the device was doing is not in a log, so a standalone log
needs --mode (train, infer or idle). Powers are stored in W (mW converted), times in s from
the first sample.
"""

from __future__ import annotations

import io
import re
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import numpy as np
import polars as pl

from importers.base import (
    MB_PER_MIB,
    W_PER_MW,
    Conversion,
    Hints,
    Importer,
    Source,
    clean_str,
    energy_metrics,
    positive,
)


@dataclass
class LogSeries:
    """A power log's samples, for callers that align them to a window (runner.sensors.external).

    `started` is the first sample's time as written (local time, no zone) or None when the log
    has no times; `traces` hold W and seconds from the first sample; `totals` are the domains
    whose energies add up to the device's (each GPU; a Jetson's input rail, never a sum of rails).
    """

    fmt: str
    started: datetime | None
    traces: list[dict[str, Any]]
    totals: list[str]
    boundary: str | None


class SeriesCapture(Conversion):
    """A conversion that also keeps the parsed series (see `read_power_log`)."""

    series: LogSeries | None = None


def _keep(conv: Conversion, series: LogSeries) -> None:
    if isinstance(conv, SeriesCapture):
        conv.series = series


def read_power_log(data: bytes, name: str, boundary: str | None = None) -> LogSeries | None:
    """Parse an nvidia-smi, tegrastats or jtop log with the importers' own parsing; None when the
    bytes are none of these. Raises ResultFileError naming the line when the log is malformed."""
    source = Source.single(data, name)
    for importer in (NvidiaSmiImporter(), TegrastatsImporter(), JtopImporter()):
        if importer.sniff(source):
            conv = SeriesCapture(source, Hints(device="power log", mode="idle", boundary=boundary), importer)
            importer.convert(conv)
            return conv.series
    return None


def _trace_metrics(
    conv: Conversion, t_s: np.ndarray, power_w: np.ndarray, boundary: str | None, flags: list[str], what: str
) -> dict[str, Any]:
    metrics: dict[str, Any] = {}
    if len(t_s) < 2 or t_s[-1] <= t_s[0]:
        metrics["energy_missing_reason"] = f"{what}: fewer than 2 samples over a positive time span"
        return metrics
    duration = float(t_s[-1] - t_s[0])
    energy = float(np.sum(power_w[:-1] * np.diff(t_s)))
    metrics["duration_s"] = duration
    metrics.update(
        energy_metrics(energy, duration_s=duration, boundary=boundary, method="sampled", what=what, flags=flags)
    )
    return metrics


def _standalone(
    conv: Conversion,
    device: dict[str, Any],
    traces: list[dict[str, Any]],
    metrics: dict[str, Any],
    flags: list[str],
    notes: str,
    started: datetime | None = None,
    config: dict[str, Any] | None = None,
) -> dict[str, Any]:
    run: dict[str, Any] = {
        "run_id": conv.run_id(0),
        "status": "ok",
        "device": device,
        "config": {
            "workload": conv.hints.workload or "power-log",
            "mode": conv.mode(None, "(whole file; a power log does not say what ran: pass --mode train|infer|idle)"),
            "precision": conv.hints.precision,
            "batch_size": conv.hints.batch_size,
            **(config or {}),
        },
        "metrics": metrics,
        "flags": flags + ["standalone_power_trace"],
        "power_traces": traces,
        "notes": notes
        + (f"; log starts {started.isoformat(sep=' ')} (local time, zone not recorded)" if started else ""),
    }
    return conv.document([run])


def _frame(conv: Conversion, data: bytes, columns: list[str] | None = None, n_rows: int | None = None) -> pl.DataFrame:
    """Columns as text, header names stripped (nvidia-smi pads with ', '). `columns` (stripped
    names) reads only those: a long log's other columns are never materialised."""
    try:
        raw_names = None
        if columns is not None:
            raw = {c.strip(): c for c in pl.read_csv(io.BytesIO(data), n_rows=0, infer_schema=False).columns}
            raw_names = [raw[c] for c in columns if c in raw]
        frame = pl.read_csv(
            io.BytesIO(data), infer_schema=False, truncate_ragged_lines=False, has_header=True, quote_char='"',
            columns=raw_names, n_rows=n_rows,
        )
    except Exception as e:  # polars raises its own exception types for malformed CSV
        raise conv.fail("CSV", f"cannot be read: {str(e).splitlines()[0][:200]}") from e
    return frame.rename({c: c.strip() for c in frame.columns})


def _first_true(conv: Conversion, mask: pl.Series, column: str) -> int:
    """The row of the first True in a boolean column (polars' arg_max is None only for an empty one)."""
    row = mask.arg_max()
    if row is None:
        raise conv.fail(column, "no rows")
    return int(row)


def _numbers(conv: Conversion, frame: pl.DataFrame, column: str, *, allow_missing: bool = True) -> np.ndarray:
    raw = frame[column].str.strip_chars()
    cleaned = raw.str.strip_chars_end(" WmMiBHzC%").str.strip_chars_end()
    values = cleaned.cast(pl.Float64, strict=False)
    missing_text = cleaned.is_null() | cleaned.is_in(
        ["", "[N/A", "N/A", "[Not Supported]", "[Not Supported", "[Unknown Error]", "[Unknown Error"]
    )
    bad = values.is_null() & ~missing_text
    if bad.any():
        row = _first_true(conv, bad, column)
        raise conv.fail(f"line {row + 2}: {column}", f"{raw[row][:40]!r} is not a number")
    if not allow_missing and missing_text.any():
        row = _first_true(conv, missing_text, column)
        raise conv.fail(f"line {row + 2}: {column}", "empty")
    out: np.ndarray = values.to_numpy()
    if not np.isfinite(out[~np.isnan(out)]).all():
        raise conv.fail(column, "non-finite value")
    return out


def _times(conv: Conversion, frame: pl.DataFrame, column: str, formats: tuple[str, ...]) -> tuple[np.ndarray, datetime]:
    raw = frame[column].str.strip_chars()
    parsed = None
    for fmt in formats:
        attempt = raw.str.strptime(pl.Datetime("us"), fmt, strict=False, cache=False)
        if attempt.null_count() == 0:
            parsed = attempt
            break
    if parsed is None:
        attempt = raw.str.strptime(pl.Datetime("us"), formats[0], strict=False)
        row = _first_true(conv, attempt.is_null(), column)
        raise conv.fail(f"line {row + 2}: {column}", f"{raw[row]!r} is not a time like {formats[0]}")
    micros = parsed.cast(pl.Int64).to_numpy()
    t = (micros - micros[0]) / 1e6
    if np.any(np.diff(t) < 0):
        row = int(np.argmax(np.diff(t) < 0)) + 1
        raise conv.fail(f"line {row + 2}: {column}", "time goes backwards; is the log from several runs?")
    first = parsed[0]
    return t, first


class NvidiaSmiImporter(Importer):
    NAME = "nvidia-smi"
    TOOL = "nvidia-smi"
    DESCRIPTION = "nvidia-smi --query-gpu CSV log with header"

    def sniff(self, source: Source) -> bool:
        first = source.head.split("\n", 1)[0].lower()
        return "power.draw" in first and "," in first

    def convert(self, conv: Conversion) -> dict[str, Any]:
        first = _frame(conv, conv.source.data, n_rows=1)  # every column, one row: names and first-row facts
        cols = {c.split(" [")[0].strip(): c for c in first.columns}
        power_col = cols.get("power.draw") or cols.get("power.draw.instant") or cols.get("power.draw.average")
        if power_col is None:
            raise conv.fail("line 1", "no power.draw column")
        if first.height == 0:
            raise conv.fail("line 2", "no samples after the header")
        gpu_key = cols.get("index") or cols.get("uuid") or cols.get("pci.bus_id")
        per_sample = [c for c in (power_col, gpu_key, cols.get("timestamp"), cols.get("memory.used")) if c]
        frame = _frame(conv, conv.source.data, columns=per_sample)
        scale = W_PER_MW if "[mW]" in power_col else 1.0
        if gpu_key:
            ids_col = frame[gpu_key].str.strip_chars().fill_null("")
            order = ids_col.unique(maintain_order=True).to_list()
            codes = ids_col.replace_strict(order, list(range(len(order))), return_dtype=pl.Int32).to_numpy()
        else:
            order, codes = ["0"], np.zeros(frame.height, dtype=np.int32)
        power = _numbers(conv, frame, power_col) * scale
        if "timestamp" in cols:
            t, started = _times(conv, frame, cols["timestamp"], ("%Y/%m/%d %H:%M:%S%.f", "%Y/%m/%d %H:%M:%S"))
        else:
            raise conv.fail("line 1", "no timestamp column: add 'timestamp' to --query-gpu so samples can be timed")
        names = first[cols["name"]].str.strip_chars().to_list() if "name" in cols else []
        device_name = clean_str(names[0]) if names else None
        flags: list[str] = []
        traces = []
        energies: list[dict[str, Any]] = []
        for n, _gid in enumerate(order):
            mask = codes == n
            tt, pp = (t, power) if len(order) == 1 else (t[mask], power[mask])
            keep = ~np.isnan(pp)
            tt, pp = tt[keep], pp[keep]
            traces.append(
                {
                    "domain": f"gpu{n}",
                    "boundary": conv.boundary("gpu_board"),
                    "method": "sampled",
                    "t_s": tt.tolist(),
                    "power_w": pp.tolist(),
                }
            )
            energies.append(_trace_metrics(conv, tt, pp, conv.boundary("gpu_board"), flags, f"gpu{n} power"))
        metrics = dict(energies[0])
        if len(order) > 1 and all("energy_j" in e for e in energies):
            metrics["energy_j"] = sum(e["energy_j"] for e in energies)
            metrics["avg_power_w"] = metrics["energy_j"] / metrics["duration_s"]
        config: dict[str, Any] = {"gpu_count": len(order)}
        if "power.limit" in cols:
            limits = _numbers(conv, first, cols["power.limit"])
            if len(limits) and not np.isnan(limits[0]) and limits[0] > 0:
                config["power_limit_w"] = float(limits[0]) * scale
        if "memory.used" in cols:
            used = _numbers(conv, frame, cols["memory.used"])
            if np.any(~np.isnan(used)):
                mib = "MiB" in cols["memory.used"] or frame[cols["memory.used"]].str.ends_with("MiB").any()
                metrics["mem_used_device_mb"] = float(np.nanmax(used)) * (MB_PER_MIB if mib else 1.0)
        total = None
        if "memory.total" in cols:
            totals = _numbers(conv, first, cols["memory.total"])
            total = positive(float(totals[0]) * MB_PER_MIB / 1e3) if len(totals) and not np.isnan(totals[0]) else None
        _keep(conv, LogSeries(self.NAME, started, traces, [t["domain"] for t in traces], conv.boundary("gpu_board")))
        device = conv.device(device_name, "gpu", where="name column", memory_gb=total)
        return _standalone(
            conv,
            device,
            traces,
            metrics,
            flags,
            f"nvidia-smi log, {frame.height} samples from {len(order)} GPU(s)",
            started,
            config,
        )


_TEGRA_RAIL = re.compile(
    r"\b([A-Z][A-Z0-9_]*(?:IN|GPU|CPU|SOC|CV|VDDRQ|SYS5V|SYS_5V0|DDR|VDD_[A-Z0-9_]+|5V_[A-Z]+)"
    r"|VDD_[A-Z0-9_]+|VIN_[A-Z0-9_]+|POM_[A-Z0-9_]+) (\d+)(mW)?/(\d+)(mW)?"
)
_TEGRA_TIME = re.compile(r"^(\d{2}-\d{2}-\d{4} \d{2}:\d{2}:\d{2})\s+")
INPUT_RAILS = ("POM_5V_IN", "VDD_IN", "VIN_SYS_5V0", "VIN")


class TegrastatsImporter(Importer):
    NAME = "tegrastats"
    TOOL = "tegrastats"
    DESCRIPTION = "Jetson tegrastats log (old and new rail formats)"

    def sniff(self, source: Source) -> bool:
        lines = [line for line in source.head.splitlines()[:5] if line.strip()]
        return bool(lines) and all("RAM " in line and ("CPU [" in line or "EMC_FREQ" in line) for line in lines[:3])

    def convert(self, conv: Conversion) -> dict[str, Any]:
        text = conv.source.text or ""
        rails: dict[str, list[float]] = {}
        times: list[datetime] = []
        count = 0
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.strip():
                continue
            if "RAM " not in line:
                raise conv.fail(f"line {lineno}", "not a tegrastats line (no 'RAM used/totalMB')")
            tm = _TEGRA_TIME.match(line)
            if tm:
                try:
                    times.append(datetime.strptime(tm.group(1), "%m-%d-%Y %H:%M:%S"))
                except ValueError as e:
                    raise conv.fail(f"line {lineno}", f"bad timestamp {tm.group(1)!r}") from e
            found = {m.group(1): float(m.group(2)) * W_PER_MW for m in _TEGRA_RAIL.finditer(line)}
            if count and set(found) != set(rails):
                raise conv.fail(f"line {lineno}", f"power rails change from {sorted(rails)} to {sorted(found)}")
            for rail, watts in found.items():
                rails.setdefault(rail, []).append(watts)
            count += 1
        if not rails:
            raise conv.fail("(whole file)", "no power rails (e.g. 'POM_5V_IN 2793/1750' or 'VDD_IN 5012mW/5012mW')")
        flags: list[str] = []
        if times and len(times) == count:
            base = times[0]
            t = np.array([(x - base).total_seconds() for x in times])
            if np.any(np.diff(t) < 0):
                raise conv.fail("timestamps", "time goes backwards")
            started: datetime | None = base
        else:
            t = np.arange(count, dtype=float)
            started = None
            flags.append("sample_interval_assumed_1s")
            conv.warn(
                "tegrastats lines carry no time: samples are taken as 1 s apart (tegrastats' default --interval 1000)"
            )
        boundary = conv.boundary("jetson_module")
        traces = [
            {
                "domain": rail,
                "boundary": boundary if rail in INPUT_RAILS else None,
                "method": "sampled",
                "t_s": t.tolist(),
                "power_w": values,
            }
            for rail, values in rails.items()
        ]
        total = next((r for r in INPUT_RAILS if r in rails), None)
        _keep(conv, LogSeries(self.NAME, started, traces, [total] if total else [], boundary))
        if total:
            metrics = _trace_metrics(conv, t, np.asarray(rails[total]), boundary, flags, f"{total} power")
        else:
            metrics = {
                "duration_s": positive(float(t[-1] - t[0])),
                "energy_missing_reason": f"no module input rail ({', '.join(INPUT_RAILS)}) in the log; "
                f"rails: {', '.join(rails)}",
            }
        device = conv.device(None, "jetson", where="(whole file; tegrastats does not name the module)")
        return _standalone(conv, device, traces, metrics, flags, f"tegrastats log, {count} samples", started)


class JtopImporter(Importer):
    NAME = "jtop"
    TOOL = "jetson-stats (jtop)"
    DESCRIPTION = "jtop / jetson-stats CSV log"

    def sniff(self, source: Source) -> bool:
        first = source.head.split("\n", 1)[0].lower()
        cols = [c.strip() for c in first.split(",")]
        return (
            ("time" in cols or "timestamp" in cols)
            and any("power" in c for c in cols)
            and any(c.startswith(("ram", "cpu", "gpu")) for c in cols)
        )

    def convert(self, conv: Conversion) -> dict[str, Any]:
        frame = _frame(conv, conv.source.data)
        if frame.height == 0:
            raise conv.fail("line 2", "no samples after the header")
        time_col = next(c for c in frame.columns if c.lower() in ("time", "timestamp"))
        t, started = _times(conv, frame, time_col, ("%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%d %H:%M:%S"))
        power_cols = [c for c in frame.columns if "power" in c.lower() and "avg" not in c.lower()]
        flags: list[str] = []
        traces = []
        series: dict[str, np.ndarray] = {}
        for col in power_cols:
            values = _numbers(conv, frame, col)
            if np.all(np.isnan(values)):
                continue  # an empty column ('Extra Power')
            scale = 1.0 if re.search(r"\[W\]|\(W\)", col) else W_PER_MW
            keep = ~np.isnan(values)
            series[col] = values * scale
            domain = re.sub(r"(?i)_?power(_inst)?|\s*\[.*\]", "", col).strip(" _") or col
            traces.append(
                {
                    "domain": domain[:100],
                    "boundary": None,
                    "method": "sampled",
                    "t_s": t[keep].tolist(),
                    "power_w": (values[keep] * scale).tolist(),
                }
            )
        if not traces:
            raise conv.fail("line 1", "no power column with values")
        total = next((c for c in series if re.search(r"(?i)tot|system|vdd_in|^power cur", c)), None)
        boundary = conv.boundary("jetson_module")
        if total:
            keep = ~np.isnan(series[total])
            for trace in traces:
                if trace["domain"] == (re.sub(r"(?i)_?power(_inst)?|\s*\[.*\]", "", total).strip(" _") or total)[:100]:
                    trace["boundary"] = boundary
            metrics = _trace_metrics(conv, t[keep], series[total][keep], boundary, flags, f"{total}")
        else:
            metrics = {
                "duration_s": positive(float(t[-1] - t[0])),
                "energy_missing_reason": "no total power column (e.g. 'Power TOT', 'System_Power_Inst')",
            }
        _keep(conv, LogSeries(self.NAME, started, traces, [t["domain"] for t in traces if t["boundary"]], boundary))
        device = conv.device(None, "jetson", where="(whole file; the jtop log does not name the module)")
        return _standalone(
            conv,
            device,
            traces,
            metrics,
            flags,
            f"jtop log, {frame.height} samples, power in mW converted to W; total from '{total}'",
            started,
        )
