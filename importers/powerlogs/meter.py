"""A wall meter's CSV: a time column and a watts column."""

from __future__ import annotations

from datetime import datetime

from energy.trace import PowerTrace
from importers.powerlogs.log import METER_TIME_COLUMNS, PowerLog, PowerLogError, csv_rows

METER_WATT_COLUMNS = ("watts", "power_w", "power", "w", "power [w]", "power (w)", "active_power_w")


def _meter_time(text: str) -> float:
    text = text.strip()
    try:
        return float(text)  # Unix seconds
    except ValueError:
        pass
    return datetime.fromisoformat(text.replace("/", "-")).timestamp()  # naive: local time


def parse_meter_csv(data: bytes, boundary: str | None = None) -> PowerLog:
    """A wall meter's CSV: a header with a time column and a watts column."""
    text = data.decode("utf-8-sig", errors="replace")
    rows = csv_rows(text)
    if not rows:
        raise PowerLogError("(whole file)", "empty")
    header = [h.strip().lower() for h in rows[0]]
    t_col = next((header.index(c) for c in METER_TIME_COLUMNS if c in header), None)
    w_col = next((header.index(c) for c in METER_WATT_COLUMNS if c in header), None)
    if t_col is None or w_col is None:
        raise PowerLogError("line 1", f"expected a time column ({', '.join(METER_TIME_COLUMNS)}) and a watts column "
                                      f"({', '.join(METER_WATT_COLUMNS)}); found {', '.join(header) or 'nothing'}")
    wall: list[float] = []
    watts: list[float] = []
    for lineno, row in enumerate(rows[1:], 2):
        if not row or not "".join(row).strip():
            continue
        try:
            wall.append(_meter_time(row[t_col]))
            watts.append(float(row[w_col].strip().removesuffix("W").strip()))
        except (ValueError, IndexError, OverflowError) as e:
            raise PowerLogError(f"line {lineno}", f"not a time and a number of watts ({e})") from e
    if len(wall) < 2:
        raise PowerLogError("(whole file)", "fewer than 2 samples")
    if any(b < a for a, b in zip(wall, wall[1:])):
        raise PowerLogError("time column", "time goes backwards")
    where = boundary or "wall"
    trace = PowerTrace("wall", where, "sampled", [w - wall[0] for w in wall], watts)
    return PowerLog("meter-csv", [trace], ["wall"], where, datetime.fromtimestamp(wall[0]), samples=len(wall),
                    total_column=header[w_col], start_wall_s=wall[0])
