"""Wide GPU power logs written with NVML (pynvml) or a wrapper: one power column per GPU."""

from __future__ import annotations

import re

import numpy as np

from energy.trace import PowerTrace
from importers.powerlogs.log import (
    AVERAGE_WORD,
    METER_TIME_COLUMNS,
    TIME_COLUMNS,
    PowerLog,
    PowerLogError,
    csv_rows,
    csv_times,
    jetson_unit,
    looks_like_power_table,
)

_GPU_ID = re.compile(r"(?:gpu|cuda|device)[ _:#-]?(\d+)")
_ONE_GPU = re.compile(r"gpu[ _]?power(?:[ _]?draw)?(?:[ _]?\((?:m?w)\)|[ _]\[m?w\]|[ _](?:m?w|watts))")
_GPU_POWER_WORD = re.compile(r"power|pwr|watt|(?:^|[ _\[(])m?w(?:$|[\])])")


def _gpu_power_index(column: str) -> int | None:
    """The GPU a column gives the instant power of ('GPU_0_power_w', 'gpu1 power (W)'), else None."""
    low = column.strip().lower()
    m = _GPU_ID.search(low)
    if m is None and _ONE_GPU.fullmatch(low):  # 'GPU Power (W)', 'gpu_power_w': the one GPU, numbered 0
        return 0
    if m is None or AVERAGE_WORD.search(low) or re.search(r"energy|limit|cap|joule|_j$|\bj\b", low):
        return None
    rest = (low[:m.start()] + " " + low[m.end():]).strip(" _-")
    return int(m.group(1)) if _GPU_POWER_WORD.search(rest) else None


def gpu_power_header(first_line: str) -> bool:
    cells = [c.strip().strip('"') for c in first_line.split(",")]
    low = [c.lower() for c in cells]
    has_time = any(c in TIME_COLUMNS or c in METER_TIME_COLUMNS for c in low)
    return has_time and any(_gpu_power_index(c) is not None for c in cells) and looks_like_power_table(cells)


def parse_gpu_power_csv(data: bytes, boundary: str | None = None) -> PowerLog:
    """A wide GPU power log written with NVML (pynvml) or a wrapper: a time column (Unix seconds,
    seconds from any origin, or ISO 8601) and one instant-power column per GPU ('GPU_0_power_w')."""
    text = data.decode("utf-8-sig", errors="replace")
    rows = [r for r in csv_rows(text) if "".join(r).strip()]
    if len(rows) < 3:
        raise PowerLogError("(whole file)", "fewer than 2 samples after the header")
    header = [c.strip() for c in rows[0]]
    low = [c.lower() for c in header]
    time_col = next(i for i, c in enumerate(low) if c in TIME_COLUMNS or c in METER_TIME_COLUMNS)
    gpu_cols = {i: idx for i, c in enumerate(header) if (idx := _gpu_power_index(c)) is not None}
    body = rows[1:]
    t, started, start_wall, notes = csv_times([r[time_col] if time_col < len(r) else "" for r in body],
                                               header[time_col])
    if np.any(np.diff(t) < 0):
        raise PowerLogError(header[time_col], "time goes backwards; is the log from several runs?")
    where = boundary or "gpu_board"
    flags: list[str] = []
    traces = []
    for i, gpu in sorted(gpu_cols.items(), key=lambda kv: kv[1]):
        values = np.full(len(body), np.nan)
        for j, row in enumerate(body):
            cell = row[i].strip().removesuffix("W").strip() if i < len(row) else ""
            if cell in ("", "N/A", "nan"):
                continue
            try:
                values[j] = float(cell)
            except ValueError as e:
                raise PowerLogError(f"line {j + 2}: {header[i]}", f"{cell[:40]!r} is not a number") from e
        if np.all(np.isnan(values)):
            continue
        values = values * jetson_unit(header[i], float(np.nanmax(values)), False, flags, notes)
        keep = ~np.isnan(values)
        traces.append(PowerTrace(f"gpu{gpu}", where, "sampled", t[keep].tolist(), values[keep].tolist()))
    if not traces:
        raise PowerLogError("line 1", "no GPU power column with values")
    log = PowerLog("gpu-power-csv", traces, [tr.domain for tr in traces], where, started, samples=len(body),
                   gpu_count=len(traces), flags=flags, start_wall_s=start_wall,
                   total_column=" + ".join(header[i] for i in gpu_cols))
    log.notes = [f"GPU power log, {len(body)} samples of {len(traces)} GPU(s)", *notes]
    return log
