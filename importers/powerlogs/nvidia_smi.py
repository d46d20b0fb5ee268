"""nvidia-smi `--query-gpu` CSV logs, read with polars (a long log's unused columns are never built).

Units in the header (`power.draw [W]`, `memory.used [MiB]`) or in the cells (`25.31 W`); one trace
per GPU, told apart by the id column that varies; the tools' 'not available' cells are gaps.
"""

from __future__ import annotations

import io
import re
from datetime import datetime

import numpy as np
import polars as pl

from energy.trace import PowerTrace
from importers.base import MB_PER_MIB, W_PER_MW
from importers.powerlogs.log import PowerLog, PowerLogError


def _frame(data: bytes, columns: list[str] | None = None, n_rows: int | None = None) -> pl.DataFrame:
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
        raise PowerLogError("CSV", f"cannot be read: {str(e).splitlines()[0][:200]}") from e
    return frame.rename({c: c.strip() for c in frame.columns})


def _first_true(mask: pl.Series, column: str) -> int:
    row = mask.arg_max()
    if row is None:
        raise PowerLogError(column, "no rows")
    return int(row)


_MISSING_CELLS = ["", "[N/A", "N/A", "[Not Supported]", "[Not Supported", "[Unknown Error]", "[Unknown Error"]


def _numbers(frame: pl.DataFrame, column: str) -> np.ndarray:
    """A column's numbers with units stripped; NaN for the tools' 'not available' cells."""
    raw = frame[column].str.strip_chars()
    cleaned = raw.str.strip_chars_end(" WmMiBHzC%").str.strip_chars_end()
    values = cleaned.cast(pl.Float64, strict=False)
    missing_text = cleaned.is_null() | cleaned.is_in(_MISSING_CELLS)
    bad = values.is_null() & ~missing_text
    if bad.any():
        row = _first_true(bad, column)
        raise PowerLogError(f"line {row + 2}: {column}", f"{raw[row][:40]!r} is not a number")
    out: np.ndarray = values.to_numpy()
    if not np.isfinite(out[~np.isnan(out)]).all():
        raise PowerLogError(column, "non-finite value")
    return out


_ZONED_FORMATS = ("%Y-%m-%dT%H:%M:%S%.f%z", "%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%d %H:%M:%S%.f%z", "%Y-%m-%d %H:%M:%S%z")
_ISO_FORMATS = ("%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S")


def _times(frame: pl.DataFrame, column: str, formats: tuple[str, ...]) -> tuple[np.ndarray, datetime]:
    """Seconds from the first sample and the first sample's time: naive (local) for the tools' own
    formats, UTC when the text carries an offset (ISO 8601 written by wrappers)."""
    raw = frame[column].str.strip_chars()
    parsed = None
    for fmt in (*formats, *_ISO_FORMATS):
        attempt = raw.str.strptime(pl.Datetime("us"), fmt, strict=False, cache=False)
        if attempt.null_count() == 0:
            parsed = attempt
            break
    if parsed is None and raw.str.contains(r"[+-]\d{2}:?\d{2}$|Z$").all():
        for fmt in _ZONED_FORMATS:
            attempt = raw.str.replace(r"Z$", "+00:00").str.strptime(pl.Datetime("us", "UTC"), fmt, strict=False,
                                                                     cache=False)
            if attempt.null_count() == 0:
                parsed = attempt
                break
    if parsed is None:
        attempt = raw.str.strptime(pl.Datetime("us"), formats[0], strict=False)
        row = _first_true(attempt.is_null(), column)
        raise PowerLogError(f"line {row + 2}: {column}", f"{raw[row]!r} is not a time like {formats[0]}")
    micros = parsed.cast(pl.Int64).to_numpy()
    t = (micros - micros[0]) / 1e6
    if np.any(np.diff(t) < 0):
        row = int(np.argmax(np.diff(t) < 0)) + 1
        raise PowerLogError(f"line {row + 2}: {column}", "time goes backwards; is the log from several runs?")
    return t, parsed[0]


def parse_nvidia_smi(data: bytes, boundary: str | None = None) -> PowerLog:
    """`nvidia-smi --query-gpu=timestamp,...,power.draw --format=csv` (units in header or cells)."""
    first = _frame(data, n_rows=1)  # every column, one row: names and first-row facts
    cols = {re.split(r" ?[\[(]", c)[0].strip(): c for c in first.columns}  # `power.draw [W]`, `power.draw(W)`
    power_col = cols.get("power.draw") or cols.get("power.draw.instant") or cols.get("power.draw.average")
    if power_col is None:
        raise PowerLogError("line 1", "no power.draw column")
    if first.height == 0:
        raise PowerLogError("line 2", "no samples after the header")
    if "timestamp" not in cols:
        raise PowerLogError("line 1", "no timestamp column: add 'timestamp' to --query-gpu so samples can be timed")
    id_cols = [cols[k] for k in ("gpu", "index", "uuid", "pci.bus_id") if k in cols]
    per_sample = [c for c in (power_col, *id_cols, cols["timestamp"], cols.get("memory.used")) if c]
    frame = _frame(data, columns=per_sample)
    # the column that tells GPUs apart: a wrapper may write a constant 'index' and the ids in 'gpu'
    gpu_key = max(id_cols, key=lambda c: frame[c].n_unique(), default=None)
    scale = W_PER_MW if "[mW]" in power_col or "(mW)" in power_col else 1.0
    if gpu_key:
        ids_col = frame[gpu_key].str.strip_chars().fill_null("")
        order = ids_col.unique(maintain_order=True).to_list()
        codes = ids_col.replace_strict(order, list(range(len(order))), return_dtype=pl.Int32).to_numpy()
    else:
        order, codes = ["0"], np.zeros(frame.height, dtype=np.int32)
    power = _numbers(frame, power_col) * scale
    t, started = _times(frame, cols["timestamp"], ("%Y/%m/%d %H:%M:%S%.f", "%Y/%m/%d %H:%M:%S"))
    where = boundary or "gpu_board"
    traces = []
    for n in range(len(order)):
        mask = codes == n
        tt, pp = (t, power) if len(order) == 1 else (t[mask], power[mask])
        keep = ~np.isnan(pp)
        traces.append(PowerTrace(f"gpu{n}", where, "sampled", tt[keep].tolist(), pp[keep].tolist()))
    log = PowerLog("nvidia-smi", traces, [t.domain for t in traces], where, started, samples=frame.height,
                   gpu_count=len(order), total_column=power_col)
    names = first[cols["name"]].str.strip_chars().to_list() if "name" in cols else []
    log.device_name = (names[0] or None) if names else None
    if "power.limit" in cols:
        limits = _numbers(first, cols["power.limit"])
        if len(limits) and not np.isnan(limits[0]) and limits[0] > 0:
            log.power_limit_w = float(limits[0]) * scale
    if "memory.used" in cols:
        used = _numbers(frame, cols["memory.used"])
        if np.any(~np.isnan(used)):
            mib = "MiB" in cols["memory.used"] or frame[cols["memory.used"]].str.ends_with("MiB").any()
            log.mem_used_mb = float(np.nanmax(used)) * (MB_PER_MIB if mib else 1.0)
    if "memory.total" in cols:
        totals = _numbers(first, cols["memory.total"])
        if len(totals) and not np.isnan(totals[0]) and totals[0] > 0:
            log.memory_gb = float(totals[0]) * MB_PER_MIB / 1e3
    log.notes.append(f"nvidia-smi log, {frame.height} samples from {len(order)} GPU(s)")
    return log
