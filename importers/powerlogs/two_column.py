"""A time column and power column(s), as anyone logging a Jetson or a laptop writes with a few lines of Python:
`Timestamp (s),Power (mW)`, `sec,mw`, `time_ms,gpu_power_w`, `Zeit (s);Leistung (W)`.

Units come from the headers (joulebench.units: a unit in brackets, a last word such as `_mw`, a lone `mw`); a
power column whose header states no unit is refused naming it (mW and W cannot be told apart), a time column
without a unit is read as Unix seconds, seconds from the start or ISO 8601 (`log.csv_times`), and so is one whose
header states a unit over cells that are all date-times (`Timestamp (s)` over `2025-05-16 01:12:05.19`: the clock
times, the unit their resolution). One power column is
the total; of several, the one literally named the total (`total_watts`, `Total (W)`) is, else one named as the
input (sys, system, input, in, board, wall), else none is and the log gives traces without an energy (rails need
not add up); the other columns are kept as traces of their own, never added to it. Where it was measured is not
stated, except a column that names the GPU (gpu_board) or the CPU (cpu_package).
"""

from __future__ import annotations

import re
from collections import Counter

import numpy as np

from energy.trace import PowerTrace
from importers.powerlogs.log import PowerLog, PowerLogError, csv_rows, csv_times, looks_like_power_table
from importers.table_checks import states_a_mode
from importers.table_fields import FieldError, measure_field
from importers.table_labels import label_field
from joulebench import units

_TIME_WORDS = {"time", "timestamp", "t", "sec", "secs", "seconds", "s", "ms", "zeit", "tiempo", "temps", "tempo",
               "elapsed", "datetime", "date_time", "epoch", "unix", "unix_s", "time_s", "time_ms", "t_s", "t_ms",
               "ts", "ts_s", "ts_ms", "unix_ts", "time_stamp"}
_POWER_WORDS = {"power", "pwr", "watts", "watt", "mw", "w", "potencia", "leistung", "puissance", "potenza",
                "potência", "vdd_in", "p"}
_TOTAL_WORDS = {"total", "tot", "sys", "system", "input", "in", "board", "wall", "vdd_in", "node", "processor",
                "package", "pkg"}  # a CPU's package (Intel Power Gadget's 'Processor Power'): its cores among it
_LITERAL_TOTAL = {"total", "tot", "sum"}  # a column literally named the total is it, before sys/input/board
_ID_WORDS = {"index", "idx", "id", "rank", "gpu", "device", "card", "dev"}  # gpu_index, device_id, rank
_ABOUT_WORDS = {"source", "available", "availability", "supported", "type", "name", "method", "status"}  # text
# about a power column ('gpu_power_source': rocm-smi --showpower), no power of its own
_SETTING_WORDS = {"limit", "cap", "enforced", "default", "target",  # a power limit set, not a power drawn
                  "pl1", "pl2", "pl4", "psyspl1", "psyspl2"}  # Intel's package and platform limits
MAX_POWER_COLUMNS = 32
MAX_LOG_COLUMNS = 600  # a telemetry log's columns: a 64-core machine's clocks, usages and temperatures
MAX_DEVICES = 64  # devices one log tells apart by an index column
_DATE_TIME = re.compile(r"^\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}(?::\d{2}(?:\.\d+)?)?")  # '2025-05-16 01:12:05.1936'


def _words(name: str) -> set[str]:
    return {w for w in re.split(r"[^\w]+", name.lower()) if w}


def _parts(name: str) -> set[str]:
    """The words of a name split at underscores too ('total_watts': total, watts)."""
    return {w for w in re.split(r"[^a-z0-9]+", name.lower()) if w}


def time_column(header: list[str]) -> tuple[int, float | None] | None:
    """(index, seconds per unit; None for a clock time or bare number) of the one time column."""
    found: list[tuple[int, float | None]] = []
    for i, h in enumerate(header):
        name, unit, _ = units.header_unit(h)
        words = _words(name) | _words(h)
        if unit is not None and unit.kind == "time" and (words & _TIME_WORDS or h.strip().lower() in _TIME_WORDS):
            found.append((i, unit.factor))
        elif unit is None and h.strip().lower() in _TIME_WORDS:
            found.append((i, None))
    timed = [f for f in found if f[1] is not None]  # 'timestamp' beside 'elapsed_s': the elapsed seconds, exact
    return found[0] if len(found) == 1 else timed[0] if len(timed) == 1 and len(found) == 2 else None


def power_columns(header: list[str]) -> dict[int, float | None]:
    """{index: W per unit, None when the header states no unit} of the power columns."""
    out: dict[int, float | None] = {}
    for i, h in enumerate(header):
        name, unit, _ = units.header_unit(h)
        if unit is not None and unit.kind == "power" and not _parts(h) & _SETTING_WORDS:  # never 'power_cap_watts'
            out[i] = unit.factor
        elif unit is None and _words(h) & _POWER_WORDS and not _words(h) & (_SETTING_WORDS | _ABOUT_WORDS | {
                "max", "min", "peak", "avg", "average", "mean"}):
            out[i] = None
    return out


def _device_column(header: list[str], body: list[list[str]], t: np.ndarray, taken: set[int]) -> int | None:
    """The column that tells devices apart in a log of several devices written one row per device and time
    (`timestamp,gpu_index,...,power_W`, as an nvidia-smi query loop over eight GPUs writes): named an index or id,
    with few distinct short values, each row of one time naming another device."""
    first = [j for j in range(len(body)) if t[j] == t[0]]
    for i, h in enumerate(header):
        if i in taken or not _parts(h) & _ID_WORDS:
            continue
        values = {r[i].strip() for r in body if i < len(r)}
        at_first = [body[j][i].strip() for j in first if i < len(body[j])]
        if 1 < len(values) <= min(MAX_DEVICES, len(body) // 2) and all(0 < len(v) <= 40 for v in values) \
                and len(set(at_first)) == len(at_first) > 1:
            return i
    return None


_RAIL_WORDS = {"rail", "channel", "domain", "sensor"}


def _rail_column(header: list[str], body: list[list[str]], taken: set[int]) -> int | None:
    """The column naming the power rail each row is of, where a logger writes its rails in turn, each with its own
    time ('rail_name': VDD_IN, VDD_CPU_GPU_CV, VDD_SOC, ...): text names, a few, each on many rows."""
    for i, h in enumerate(header):
        if i in taken or not _parts(h) & _RAIL_WORDS:
            continue
        counts = Counter(r[i].strip() for r in body if i < len(r))
        if 1 < len(counts) <= 16 and all(re.search(r"[A-Za-z]", v) and n >= 2 for v, n in counts.items()):
            return i
    return None


def two_column_header(first_line: str, head: str = "") -> bool:
    """A header of a time column and power column(s), nothing naming runs or durations; a time column named as an
    elapsed time ('elapsed_s') is the log's clock where the first rows' times rise, one sample after another."""
    delimiter = ";" if first_line.count(";") > first_line.count(",") else ","
    cells = [c.strip().strip('"') for c in first_line.split(delimiter)]
    if not (2 <= len(cells) <= MAX_LOG_COLUMNS):  # EnergiBridge writes a frequency, usage and temperature a core
        return False
    if any(re.fullmatch(r"[-+]?\d+(?:\.\d+)?", c) for c in cells):  # a row of figures, no header (PTD's spl.txt)
        return False
    powers = power_columns(cells)
    if len(powers) > MAX_POWER_COLUMNS:
        return False
    time = time_column(cells)
    if time is None or not powers or time[0] in powers:
        return False
    if not looks_like_power_table(cells) and not (
            looks_like_power_table([c for i, c in enumerate(cells) if i != time[0]]) and _rising(head, time[0])):
        return False
    for i, c in enumerate(cells):  # nothing else a result table has: labels, energies, rates, latencies
        if i == time[0] or i in powers:
            continue
        if (label := label_field(c)) is not None and label.key == "mode" and not any(
                states_a_mode(v) for v in _cells(head, i, delimiter)):
            continue  # a 'phase' column naming what ran then ('pflash_load', 'niah_ctx16372'): no run's mode
        if (label := label_field(c)) is not None and not (label.key == "device" and _parts(c) & _ID_WORDS):
            return False  # a label other than the device each row is of ('device': card0 .. card7)
        if (unit := units.header_unit(c)[1]) is not None and unit.kind == "power":
            continue  # a power limit beside the power drawn: no figure of a result table
        try:
            field = measure_field(c)[0]
        except FieldError:
            return False
        if field is not None and field.key == "energy_j" and _rising(head, i, strictly=False):
            continue  # a meter's running energy counter beside its power ('energy1_mWh': 587170, 587172, ...)
        if field is not None and field.key not in ("avg_power_w", "duration_s", "gpu_clock_avg_mhz",
                                                   "mem_used_device_mb", "mem_peak_rss_mb"):
            return False  # a clock or the memory in use beside the power: a telemetry log's, no result table's
    return True


def _cells(head: str, column: int, delimiter: str) -> list[str]:
    """A column's cells in the first rows of a log."""
    return [cells[column] for line in head.splitlines()[1:40] if len(cells := line.split(delimiter)) > column]


def _rising(head: str, column: int, strictly: bool = True) -> bool:
    """Whether the first rows' values in a column rise (a clock's; a counter's, never falling, where not
    `strictly`), over five rows at least; the table ends at a blank line (Intel Power Gadget's summary after it)."""
    values = []
    for line in head.splitlines()[1:40]:
        if not line.strip():
            break
        cells = line.split(",")
        try:
            values.append(float(cells[column]))
        except (IndexError, ValueError):
            return False
    return len(values) >= 5 and all(b > a or not strictly and b == a for a, b in zip(values, values[1:], strict=False))


def _decimal_comma(header: list[str], body: list[list[str]], powers: dict[int, float | None]) -> bool:
    """Whether the last (power) column is written with a decimal comma, unquoted, in a comma-separated file: every
    row one cell longer than the header, its last two cells whole numbers ('2025-02-18 15:16:12,30,3')."""
    if list(powers) != [len(header) - 1] or not body:
        return False
    longer = [r for r in body if len(r) == len(header) + 1]
    return len(longer) >= 0.95 * len(body) and all(
        r[-2].strip().lstrip("-").isdigit() and r[-1].strip().isdigit() for r in longer)


def _by_device(body: list[list[str]], column: int, t: np.ndarray, time_name: str) -> dict[str, np.ndarray]:
    """{device id: its rows, in order}; each device's times must not go backwards."""
    ids = [r[column].strip() if column < len(r) else "" for r in body]
    groups: dict[str, list[int]] = {}
    for j, v in enumerate(ids):
        groups.setdefault(v, []).append(j)
    out = {k: np.array(v) for k, v in groups.items()}
    for k, rows in out.items():
        if np.any(np.diff(t[rows]) < 0):
            raise PowerLogError(time_name, f"time goes backwards for device {k[:20]}; is the log from several runs?")
    return out


_COUNTER_WORDS = {"cumulative", "energy", "total", "accumulated", "power", "0"}  # words that do not name a domain


def _counter_j(header: list[str], body: list[list[str]], total: str) -> tuple[float, str] | None:
    """(J, column) of the total's running energy counter beside its power ('Cumulative Processor Energy_0(Joules)'
    beside 'Processor Power_0(Watt)', Intel Power Gadget's; 'energy1_mWh' beside the one power column of a meter):
    an energy column whose values never fall, naming the total's domain (or the only one); its rise over the log.
    The first of its units the header states (Joules before mWh)."""
    domain = _parts(total) - _COUNTER_WORDS
    found: list[tuple[int, float, set[str]]] = []
    for i, h in enumerate(header):
        name, unit, _ = units.header_unit(h)
        if unit is None or unit.kind != "energy":
            continue
        try:
            values = [float(r[i]) * unit.factor for r in body if i < len(r) and r[i].strip()]
        except ValueError:
            continue
        if len(values) == len(body) >= 2 and all(b >= a for a, b in zip(values, values[1:], strict=False)):
            found.append((i, values[-1] - values[0], _parts(name) - _COUNTER_WORDS))
    named = [f for f in found if f[2] == domain] if domain else found
    pick = named[0] if len(named) == 1 or domain and named else None  # Joules before mWh of one domain
    return (pick[1], header[pick[0]]) if pick is not None and pick[1] > 0 else None


def parse_two_column(data: bytes, boundary: str | None = None, stated: dict[str, str] | None = None) -> PowerLog:
    """The log; `stated` gives a unit for a column whose header has none ({'power': 'mW'}, from --unit)."""
    text = data.decode("utf-8-sig", errors="replace")
    first = text.split("\n", 1)[0]
    if ";" in first and first.count(";") > first.count(","):
        text = text.replace(",", ".").replace(";", ",")  # a decimal comma with ';' between cells
    rows = [r for r in csv_rows(text) if "".join(r).strip()]
    if len(rows) < 3:
        raise PowerLogError("(whole file)", "fewer than 2 samples after the header")
    header = [c.strip() for c in rows[0]]
    time = time_column(header)
    powers = power_columns(header)
    if time is None or not powers:
        raise PowerLogError("line 1", "expected one time column and power columns")
    for i, f in list(powers.items()):
        given = (stated or {}).get(header[i].strip().lower())
        if f is None and given is not None:
            found = units.find_unit(given)
            if found is None or found.kind != "power":
                raise PowerLogError(f"--unit {header[i]}", f"{given!r} is not a unit of power (W, mW, kW)")
            powers[i] = found.factor
    unstated = [header[i] for i, f in powers.items() if f is None]
    if unstated:
        raise PowerLogError(unstated[0], "the header states no unit, so mW and W cannot be told apart: write it "
                                         "as 'Power (mW)' or 'Power (W)', or pass --unit COLUMN=mW")
    body = [r for r in rows[1:] if "".join(r[:time[0]] + r[time[0] + 1:]).strip()]  # not a time alone: a separator
    summary = next((k for k, r in enumerate(body) if len(r) == 1 and "=" in r[0]), None)
    if summary is not None and all(len(r) == 1 for r in body[summary:]):  # Intel Power Gadget's closing lines
        body = body[:summary]  # ('Total Elapsed Time (sec) = 7.39'): the tool's summary of the samples above
    decimal_comma = _decimal_comma(header, body, powers)
    if decimal_comma:
        body = [[*r[:-2], f"{r[-2].strip()}.{r[-1].strip()}"] if len(r) == len(header) + 1 else r for r in body]
    t_index, t_factor = time
    cells = [r[t_index].strip() if t_index < len(r) else "" for r in body]
    if t_factor is not None and all(_DATE_TIME.match(c) for c in cells):  # 'Timestamp (s)' over date-times:
        t, started, start_wall, notes = csv_times(cells, header[t_index])  # clock times, (s) their resolution
        notes = [*notes, f"'{header[t_index]}' holds date-times: read as the clock times (its unit is not an offset)"]
    elif t_factor is not None:
        try:
            t_raw = np.array([float(c) for c in cells]) * t_factor
        except ValueError as e:
            raise PowerLogError(header[t_index], f"a time that is not a number ({e})") from e
        clock = next((h for i, h in enumerate(header) if i != t_index and h.strip().lower() in _TIME_WORDS), None)
        t, started, start_wall, notes = t_raw - t_raw[0], None, None, [
            f"'{header[t_index]}' is time from the start" + (f"; '{clock[:40]}' beside it, the clock, is not read"
                                                            if clock else "; the wall-clock time is not in the file")]
    else:
        t, started, start_wall, notes = csv_times(cells, header[t_index])
    device = _device_column(header, body, t, {t_index, *powers}) if len(np.unique(t)) < len(t) else None
    rail = _rail_column(header, body, {t_index, *powers}) if device is None and len(powers) == 1 else None
    if rail is not None:  # 'VDD_IN', 'VDD_CPU_GPU_CV', 'VDD_SOC' in turn: one trace per rail, the input the total
        notes.append(f"the rails named in '{header[rail]}' written in turn: a trace per rail; the input (or total) "
                     "rail is the energy, the others are parts of it (never added)")
    groups = _by_device(body, device, t, header[t_index]) if device is not None else _by_device(
        body, rail, t, header[t_index]) if rail is not None else {"": np.arange(len(body))}
    if device is None and np.any(np.diff(t) < 0):
        raise PowerLogError(header[t_index], "time goes backwards; is the log from several runs?")
    if device is not None:
        notes.append(f"{len(groups)} devices told apart by '{header[device]}', one row per device and time: a "
                     "trace per device, their energies added")
        if len(powers) > 1:
            raise PowerLogError(header[device], "several devices and several power columns: which column is each "
                                                "device's total cannot be told; keep one power column")
    if decimal_comma:
        notes.append(f"'{header[-1]}' written with a decimal comma in a comma-separated file ('30,3' is 30.3)")
    traces = []
    for i, factor in powers.items():
        values = np.full(len(body), np.nan)
        for j, row in enumerate(body):
            cell = row[i].strip() if i < len(row) else ""
            if cell in ("", "N/A", "nan", "-"):
                continue
            try:
                values[j] = float(cell) * (factor or 1.0)
            except ValueError as e:
                raise PowerLogError(f"line {j + 2}: {header[i]}", f"{cell[:40]!r} is not a number") from e
        negative = int(np.sum(values < 0))
        if negative:  # no device gives power back: a counter read across its wrap, or a subtraction gone wrong
            values[values < 0] = np.nan
            lowest = f"the lowest kept is {np.nanmin(values):.4g} W" if np.any(~np.isnan(values)) else "none kept"
            notes.append(f"{header[i]}: {negative} negative sample(s) left out (power below 0 is no reading: often an "
                         f"energy counter that wrapped); {lowest}")
        words = _words(header[i])
        where = boundary or ("gpu_board" if "gpu" in words or device is not None and "gpu" in _parts(header[device])
                             else "cpu_package" if "cpu" in words else None)
        domain = re.sub(r"\s*[\(\[].*$", "", header[i]).strip()[:60] or f"column {i + 1}"
        by = header[device][:30] if device is not None else ""
        if rail is not None:
            by = ""  # a rail's trace is named by the rail alone ('VDD_IN')
        for name, members in groups.items():
            keep = members[~np.isnan(values[members])]
            if len(keep) >= 2:
                traces.append(PowerTrace(f"{by} {name}" if name else domain, where, "sampled",
                                         t[keep].tolist(), values[keep].tolist()))
    if not traces:
        raise PowerLogError("line 2", "no power column with 2 samples or more")
    if rail is not None:
        totals = [tr.domain for tr in traces if _parts(tr.domain) & (_TOTAL_WORDS | _LITERAL_TOTAL)][:1]
    elif len(traces) == 1 or device is not None:
        totals = [tr.domain for tr in traces]
    else:
        literal = [tr.domain for tr in traces if _parts(tr.domain) & _LITERAL_TOTAL]  # total_watts, Total (W)
        named = literal or [tr.domain for tr in traces if _words(tr.domain) & _TOTAL_WORDS]
        totals = named[:1]
        if totals:
            others = [tr.domain for tr in traces if tr.domain not in totals]
            notes.append(f"{totals[0]} is the total: the energy is taken from it; {', '.join(others)[:200]} kept as "
                         "traces of their own (not added to it)")
        else:
            notes.append(f"{len(traces)} power columns, none named the total ({', '.join(tr.domain for tr in traces)})"
                         ": no energy is taken from them (rails need not add up)")
    chosen = next((tr for tr in traces if tr.domain in totals), None)
    counted = _counter_j(header, body, chosen.domain) if chosen is not None and device is None and rail is None \
        else None
    if counted is not None:
        notes.append(f"'{counted[1]}' is the meter's own running energy: the energy is its rise over the log "
                     f"({counted[0]:.4g} J), the trace's integral kept beside it")
    log = PowerLog("power-table", traces, totals, (chosen.boundary if chosen else None) or "",
                   started, samples=len(body), start_wall_s=start_wall,
                   total_column=chosen.domain if chosen else None, gpu_count=len(traces) if device is not None
                   and "gpu" in _parts(header[device]) else None, counter_j=counted[0] if counted else None)
    log.notes = [f"power log, {len(body)} samples of " + (f"{len(traces)} devices" if device is not None else
                                                          f"{len(traces)} power column(s)"), *notes]
    return log
