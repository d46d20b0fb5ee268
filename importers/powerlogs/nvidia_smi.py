"""nvidia-smi `--query-gpu` CSV logs, read with polars (a long log's unused columns are never built).

Units in the header (`power.draw [W]`, `memory.used [MiB]`) or in the cells (`25.31 W`); one trace
per GPU, told apart by the id column that varies; the tools' 'not available' cells are gaps.

A log written with `--format=csv,noheader` has no header row: its first row is data ('2026/04/25 16:06:06.780,
0 %, 2 MiB, 27, 11.64 W'). Its columns are then told by their cells (`noheader_columns`): the date-time is the
timestamp, the one column in W (or the one of several that varies) the power draw, a GPU's name, bus id or UUID
by their look; the %, MiB, MHz and bare-number columns cannot be told apart (memory used or free, which
utilisation) and are not read. Without a name column the GPU is not stated.
"""

from __future__ import annotations

import io
import re
from datetime import datetime

import numpy as np
import polars as pl

from energy.trace import PowerTrace
from importers.base import MB_PER_MIB, W_PER_MW
from importers.powerlogs.log import PowerLog, PowerLogError, csv_rows
from importers.table_units import data_row, value_kind

_GPU_NAME = re.compile(r"(?i)^(?:nvidia|geforce|tesla|quadro|titan|rtx|gtx)\b")
_BUS_ID = re.compile(r"^[0-9A-Fa-f]{4,8}:[0-9A-Fa-f]{2}:[0-9A-Fa-f]{2}\.[0-7]$")
_UUID = re.compile(r"^(?:GPU|MIG)-[0-9A-Fa-f-]{8,}")
_STATE = re.compile(r"(?i)^(?:P\d{1,2}|enabled|disabled|active|not active|default)$")
_NAMED_BY_CELL = {"time": "timestamp", "name": "name", "bus": "pci.bus_id", "uuid": "uuid"}
MAX_NOHEADER_ROWS = 200  # the rows looked at to tell the power draw from a constant power column (a limit)


def _cell_kind(cell: str) -> str | None:
    """What a cell of a log without header is: time, power, name, bus, uuid, another value kind; None: unknown."""
    text = cell.strip()
    kind = value_kind(text)
    if kind == "time" or kind is not None:
        return kind
    if _BUS_ID.match(text):
        return "bus"
    if _UUID.match(text):
        return "uuid"
    if _STATE.match(text):
        return "state"  # pstate 'P0', power.management 'Enabled': read by no one
    return "name" if _GPU_NAME.match(text) else None


def noheader_columns(head: str) -> list[str] | None:
    """The header a `--format=csv,noheader` log lacks, from its first rows' cells: 'timestamp', 'power.draw [W]',
    'name', 'pci.bus_id', 'uuid', a constant power column 'power (W, constant)'; every other column 'column N'
    (not read). None when the text is no such log (its first row is a header, or no cell is a time or a power)."""
    lines = [line for line in head.splitlines()[:MAX_NOHEADER_ROWS + 1] if line.strip()]
    if len(head) >= 16000:
        lines = lines[:-1]  # the last line of a cut head may be cut
    rows = [r for r in csv_rows("\n".join(lines)) if r]
    if len(rows) < 2 or not data_row(rows[0]):
        return None
    kinds = [_cell_kind(c) for c in rows[0]]
    if None in kinds or kinds.count("time") != 1 or "power" not in kinds:
        return None
    if any(len(r) != len(kinds) or _cell_kind(r[kinds.index("time")]) != "time" for r in rows[1:]):
        return None
    powers = [i for i, k in enumerate(kinds) if k == "power"]
    varying = [i for i in powers if len({r[i].strip() for r in rows}) > 1]
    draw = powers[0] if len(powers) == 1 else varying[0] if len(varying) == 1 else None
    if draw is None:
        return None
    header = []
    for i, kind in enumerate(kinds):
        if i == draw:
            header.append("power.draw [W]")
        elif kind in _NAMED_BY_CELL and kinds.count(kind) == 1:
            header.append(_NAMED_BY_CELL[kind])
        else:
            header.append(f"column {i + 1}" + (" [W, constant]" if kind == "power" else ""))
    return header


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


def _numbers(frame: pl.DataFrame, column: str, headed: int = 1) -> np.ndarray:
    """A column's numbers with units stripped; NaN for the tools' 'not available' cells."""
    raw = frame[column].str.strip_chars()
    cleaned = raw.str.strip_chars_end(" WmMiBHzC%").str.strip_chars_end()
    values = cleaned.cast(pl.Float64, strict=False)
    missing_text = cleaned.is_null() | cleaned.is_in(_MISSING_CELLS)
    bad = values.is_null() & ~missing_text
    if bad.any():
        row = _first_true(bad, column)
        raise PowerLogError(f"line {row + 1 + headed}: {column}", f"{raw[row][:40]!r} is not a number")
    out: np.ndarray = values.to_numpy()
    if not np.isfinite(out[~np.isnan(out)]).all():
        raise PowerLogError(column, "non-finite value")
    return out


_ZONED_FORMATS = ("%Y-%m-%dT%H:%M:%S%.f%z", "%Y-%m-%dT%H:%M:%S%z", "%Y-%m-%d %H:%M:%S%.f%z", "%Y-%m-%d %H:%M:%S%z")
_ISO_FORMATS = ("%Y-%m-%dT%H:%M:%S%.f", "%Y-%m-%dT%H:%M:%S", "%Y-%m-%d %H:%M:%S%.f", "%Y-%m-%d %H:%M:%S")  # and
# Python's str(datetime), as loggers of their own write it ('2025-04-15 15:54:33')


def _times(frame: pl.DataFrame, column: str, formats: tuple[str, ...], headed: int = 1) -> tuple[np.ndarray, datetime]:
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
        raise PowerLogError(f"line {row + 1 + headed}: {column}", f"{raw[row]!r} is not a time like {formats[0]}")
    micros = parsed.cast(pl.Int64).to_numpy()
    t = (micros - micros[0]) / 1e6
    if np.any(np.diff(t) < 0):
        row = int(np.argmax(np.diff(t) < 0)) + 1
        raise PowerLogError(f"line {row + 1 + headed}: {column}", "time goes backwards; is the log from several runs?")
    return t, parsed[0]


def interleaved(t: np.ndarray) -> int:
    """How many GPUs a log without an index column holds: nvidia-smi writes one line per GPU, in index order,
    each interval, so k GPUs give groups of k lines ms apart, the groups an interval apart (a line now and then a
    little late). 1 unless, for some k, the gaps inside the groups are all far shorter than those between them."""
    gaps = np.diff(t)
    at = np.arange(len(gaps))
    for k in range(2, 9):
        inside, between = gaps[(at + 1) % k != 0], gaps[(at + 1) % k == 0]
        if len(between) >= 4 and np.percentile(between, 25) > 5 * max(float(np.median(inside)), 1e-4):
            return k
    return 1


def parse_nvidia_smi(data: bytes, boundary: str | None = None) -> PowerLog:
    """`nvidia-smi --query-gpu=timestamp,...,power.draw --format=csv` (units in header or cells), also with
    `noheader` (the columns told by their cells: `noheader_columns`)."""
    trimmed = data.rstrip(b"\x00")  # a logger killed while writing leaves its last block as NUL bytes
    cut = len(data) - len(trimmed)
    if b"\x00" in trimmed:
        raise PowerLogError("(whole file)", "NUL bytes inside the log (not only where a killed logger stopped): the "
                                            "file is damaged")
    data = trimmed.rstrip(b" \t\r\n") + b"\n"  # blank lines after the last sample are no sample
    named = noheader_columns(data[:16384].decode("utf-8-sig", errors="replace"))
    headed = 1
    if named is not None:
        data = (",".join(named) + "\n").encode() + data.removeprefix(b"\xef\xbb\xbf")
        headed = 0
    log = _parse(data, boundary, headed)
    if cut:
        log.notes.append(f"{cut} NUL bytes at the end left out (the logger was stopped while writing its last line)")
    if named is not None:
        told = [f"{h} (column {i + 1})" for i, h in enumerate(named) if not h.startswith("column ")]
        others = len(named) - len(told)
        log.notes.append(f"no header row (nvidia-smi --format=csv,noheader): columns told by their cells: "
                         f"{', '.join(told)}" + (f"; the {others} other column{'s' if others > 1 else ''} (%, MiB, "
                                                 "bare numbers) cannot be told apart and are not read" if others
                                                 else "") + ("" if "name" in named else "; the GPU's name is not in "
                                                             "the log"))
    return log


def _parse(data: bytes, boundary: str | None, headed: int) -> PowerLog:
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
    power = _numbers(frame, power_col, headed) * scale
    t, started = _times(frame, cols["timestamp"], ("%Y/%m/%d %H:%M:%S%.f", "%Y/%m/%d %H:%M:%S"), headed)
    if not gpu_key:
        count = interleaved(t)
        order = [str(n) for n in range(count)]
        codes = (np.arange(frame.height) % count).astype(np.int32)
    where = boundary or "gpu_board"
    traces = []
    for n in range(len(order)):
        mask = codes == n
        tt, pp = (t, power) if len(order) == 1 else (t[mask], power[mask])
        keep = ~np.isnan(pp)
        traces.append(PowerTrace(f"gpu{n}", where, "sampled", tt[keep].tolist(), pp[keep].tolist()))
    log = PowerLog("nvidia-smi", traces, [t.domain for t in traces], where, started, samples=frame.height,
                   gpu_count=len(order), total_column=power_col)
    if not gpu_key and len(order) > 1:
        log.notes.append(f"{len(order)} GPUs without an index column: nvidia-smi writes one line per GPU each "
                         f"interval, in index order, so each interval's {len(order)} lines (ms apart) are told apart "
                         "by their order")
    names = first[cols["name"]].str.strip_chars().to_list() if "name" in cols else []
    log.device_name = (names[0] or None) if names else None
    if "power.limit" in cols:
        limits = _numbers(first, cols["power.limit"])
        if len(limits) and not np.isnan(limits[0]) and limits[0] > 0:
            log.power_limit_w = float(limits[0]) * scale
    if "memory.used" in cols:
        used = _numbers(frame, cols["memory.used"], headed)
        if np.any(~np.isnan(used)):
            mib = "MiB" in cols["memory.used"] or frame[cols["memory.used"]].str.ends_with("MiB").any()
            log.mem_used_mb = float(np.nanmax(used)) * (MB_PER_MIB if mib else 1.0)
    if "memory.total" in cols:
        totals = _numbers(first, cols["memory.total"])
        if len(totals) and not np.isnan(totals[0]) and totals[0] > 0:
            log.memory_gb = float(totals[0]) * MB_PER_MIB / 1e3
    log.notes.append(f"nvidia-smi log, {frame.height} samples from {len(order)} GPU(s)")
    return log
