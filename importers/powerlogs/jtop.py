"""jtop (jetson-stats) CSV logs and the other Jetson telemetry CSVs (sysfs loggers, parsed
tegrastats, NAME-FIELD wide tables): a time column and rail power columns matched by name; the
module's power follows the board table (`energy.rails`, through `log.jetson_log`).
"""

from __future__ import annotations

import csv
import io
import re

import numpy as np

from energy.rails import board_for_device, boards_for_rails, module_power, rail_key
from energy.trace import PowerTrace
from importers.powerlogs.log import (
    AVERAGE_WORD,
    GENERIC_RAIL_WORDS,
    KNOWN_RAILS,
    MODE_COLUMNS,
    TIME_COLUMNS,
    PowerLog,
    PowerLogError,
    csv_times,
    jetson_log,
    jetson_unit,
    looks_like_power_table,
)

FLAG_TIMES_NOMINAL = "sample_times_nominal"

_JTOP_TOTAL = ("power tot", "power cur")  # jtop's own total (its meaning changed across versions)
_DISCRETE = re.compile(r"vram|memory\.used|memory\.total|fb_used|dedicated")  # a discrete GPU's own memory
_POWER_WORD = re.compile(r"(?i)power|pwr|(?:^|[_ ])mw(?:$|[_ )])|\(mw\)|\[mw\]")


def _rail_column(col: str) -> str | None:
    """The rail a column measures (instant power), or None: averages, maxima, currents and voltages
    of a rail are not its power. 'VDD_GPU_SOC-IN_POWER' -> VDD_GPU_SOC; 'POM_5V_IN_CUR' -> POM_5V_IN."""
    name = col.strip()
    if "-" in name and re.search(r"(?i)-(in_power|power)$", name):
        return name.rsplit("-", 1)[0]
    if "-" in name:
        return None  # tegra wide CSVs: NAME-IN_VOLTAGE, NAME-AVG_POWER, ...
    low = name.lower()
    if AVERAGE_WORD.search(low) or "voltage" in low or ("current" in low and "power" not in low and not re.search(
            r"[(\[]m?w[)\]]", low)):  # tegrastats_parser's 'VDD_GPU_SOC Current (mW)': the power now, not amperes
        return None
    key = rail_key(name)
    if not key:
        return None
    if _POWER_WORD.search(name) or (key in KNOWN_RAILS and key not in GENERIC_RAIL_WORDS):
        return name  # a bare 'GPU' or 'CPU' column is a temperature or a load as often as a rail
    return None


_DOMAIN_NOISE = re.compile(r"(?i)(?:^|[ _])(?:power|pwr)(?:[ _]inst)?|\s*[\[(]m?W[\])]|[_ ](?:cur|mw|w)$")


def _domain(column: str) -> str:
    """A short domain name for a rail column: 'CPU_Power_Inst' -> CPU, 'Power VDD_IN' -> VDD_IN,
    'VDD_GPU_SOC-IN_POWER' -> VDD_GPU_SOC, 'Current VDD_IN Power Consumption (mW)' -> VDD_IN."""
    if "-" in column:
        return column.rsplit("-", 1)[0][:100]
    name = _DOMAIN_NOISE.sub("", column).strip(" _")
    return (rail_key(column) if " " in name or not name else name)[:100]


def jetson_csv_header(text: str) -> tuple[list[list[str]], int] | None:
    """The rows of a Jetson telemetry CSV and the index of its header row (after a quoted preamble),
    when the file is one: a time column and at least one Jetson rail or jtop power column."""
    try:
        rows = list(csv.reader(io.StringIO(text)))
    except csv.Error:
        return None
    for i, row in enumerate(rows[:4]):
        cells = [c.strip() for c in row]
        if len(cells) < 2:
            continue
        low = [c.lower() for c in cells]
        if not any(c in TIME_COLUMNS or c.startswith("time (") for c in low):
            return None
        rails = [c for c in cells if _rail_column(c)]
        if any(_DISCRETE.search(c) for c in low) and all(rail_key(c) in GENERIC_RAIL_WORDS for c in rails):
            return None  # 'GPU Power (W)' beside 'VRAM Usage (%)': a discrete GPU's (a Jetson has no VRAM)
        jtop = any(c in _JTOP_TOTAL or c.startswith("power ") for c in low)
        known = any(rail_key(c.rsplit("-", 1)[0]) in KNOWN_RAILS for c in cells if _rail_column(c))
        if rails and (known or jtop) and looks_like_power_table(cells):
            return rows, i
        return None
    return None


def parse_jtop(data: bytes, boundary: str | None = None, device: str | None = None) -> PowerLog:
    """jtop (jetson-stats) CSV logs and the other Jetson telemetry CSVs (sysfs loggers, parsed
    tegrastats, NAME-FIELD wide tables): a time column and rail power columns in mW unless the header
    says W. Rails are matched by name and the module's power follows the board table (energy.rails);
    jtop's own 'Power TOT' is used only when no rail tells the board (its meaning changed across
    jtop versions). A trailing summary row that does not fit the header is dropped."""
    text = data.decode("utf-8-sig", errors="replace")
    found = jetson_csv_header(text)
    if found is None:
        raise PowerLogError("line 1", "expected a time column and Jetson rail power columns (e.g. 'Power VDD_IN', "
                                      "'POM_5V_IN_CUR', 'VDD_GPU_SOC-IN_POWER')")
    rows, h = found
    header = [c.strip() for c in rows[h]]
    flags: list[str] = []
    notes: list[str] = []
    preamble = [" ".join(r).strip() for r in rows[:h] if "".join(r).strip()]
    body = [r for r in rows[h + 1:] if "".join(r).strip()]
    width = len(header)
    while header and header[-1] == "" and width > 1:
        width -= 1
    if body and len([c for c in body[-1] if c.strip()]) > width:
        notes.append(f"last row ({','.join(body[-1])[:60]}) is a summary, not a sample: dropped")
        body = body[:-1]
    if not body:
        raise PowerLogError("line 2", "no samples after the header")
    time_col = next(i for i, c in enumerate(header) if c.lower() in TIME_COLUMNS or c.lower().startswith("time ("))
    t, started, start_wall, time_notes = csv_times([r[time_col] if time_col < len(r) else "" for r in body],
                                                    header[time_col])
    notes += time_notes
    if preamble and started is None and header[time_col].lower().startswith(("time (", "t_ms")):
        notes.append(f"preamble kept as text: {preamble[0][:60]}")
    if np.any(np.diff(t) < 0):
        row = int(np.argmax(np.diff(t) < 0)) + 1
        raise PowerLogError(f"line {h + row + 2}: {header[time_col]}",
                            "time goes backwards; is the log from several runs?")
    steps = np.diff(t)
    if len(steps) > 5 and np.all(np.abs(steps - steps[0]) < 1e-9):
        flags.append(FLAG_TIMES_NOMINAL)
        notes.append(f"every interval is exactly {steps[0]:g} s: the times look computed (index x interval), not "
                     "measured, so energy over them may be off by the logger's real period")
    columns: dict[str, tuple[str, np.ndarray]] = {}
    jtop_total: str | None = None
    for i, col in enumerate(header):
        rail = _rail_column(col) if i != time_col else None
        if col.lower() in _JTOP_TOTAL:
            jtop_total = col
            rail = col
        if not rail:
            continue
        cells = [(r[i].strip() if i < len(r) else "") for r in body]
        values = np.full(len(cells), np.nan)
        for j, c in enumerate(cells):
            c = c.removesuffix("mW").removesuffix("W").strip()
            if c in ("", "-", "N/A", "nan"):
                continue
            try:
                values[j] = float(c)
            except ValueError as e:
                raise PowerLogError(f"line {h + j + 2}: {col}", f"{cells[j][:40]!r} is not a number") from e
        if not np.all(np.isnan(values)):  # an empty column ('Extra Power') is dropped
            columns[col] = ("TOT" if col == jtop_total else _domain(rail)), values
    if not columns:
        raise PowerLogError("line 1", "no power column with values")
    jetson = board_for_device(device) is not None or bool(boards_for_rails(d for d, _ in columns.values()))
    rails: dict[str, np.ndarray] = {}
    for col, (domain, values) in columns.items():
        rails[domain] = values * jetson_unit(col, float(np.nanmax(values)), jetson, flags, notes)
    fmt = "jtop" if jtop_total or any(c.lower().startswith("power ") for c in header) else "jetson-csv"
    names = [d for d in rails if d != "TOT"]
    if jtop_total and "TOT" in rails and not module_power(names, device).ok:
        notes.append(f"total from jtop's '{jtop_total}' column: jtop reports the input rail where the board has "
                     "one and a sum of rails (or, before 4.2, one rail) where it has not")
        where = boundary or "jetson_module"
        traces = [PowerTrace(d, where if d == "TOT" else None, "sampled", t[~np.isnan(v)].tolist(),
                             v[~np.isnan(v)].tolist()) for d, v in rails.items()]
        tot_log = PowerLog(fmt, traces, ["TOT"], where, started, samples=len(body), flags=flags, notes=notes,
                           total_column=jtop_total, start_wall_s=start_wall)
        _jetson_facts(tot_log, header, body)
        return tot_log
    rails.pop("TOT", None)
    log = jetson_log(fmt, rails, t, started, len(body), boundary, device, flags, notes, start_wall_s=start_wall)
    log.notes.insert(0, f"{fmt} log, {len(body)} samples")
    _jetson_facts(log, header, body)
    return log


_CORE_COLUMN = re.compile(r"(?i)^cpu[ _-]?(?:util[ _-]?)?(?:core[ _-]?)?(\d+)(?:[ _-]?(?:util|usage|load|%))?$")
_RAM_CELL = re.compile(r"^\s*\d+(?:\.\d+)?\s*/\s*(\d+(?:\.\d+)?)\s*([kMG])B\s*$")
_RAM_SCALE = {"k": 1e-3, "M": 1.0, "G": 1e3}


def _jetson_facts(log: PowerLog, header: list[str], body: list[list[str]]) -> None:
    """What a Jetson CSV says of the module besides power: CPU cores (one column per core), the RAM
    total ('11283/62841MB' cells) and the power mode (jtop's 'nvp model': MAXN, 15W, ...)."""
    cores = {m.group(1) for c in header if (m := _CORE_COLUMN.match(c))}
    log.cpu_cores = len(cores) or None
    for i, col in enumerate(header):
        cells = [r[i].strip() for r in body if i < len(r) and r[i].strip()]
        if not cells:
            continue
        if "ram" in col.lower() and (m := _RAM_CELL.match(cells[0])):
            log.ram_total_mb = float(m.group(1)) * _RAM_SCALE[m.group(2)]
        if col.lower() in MODE_COLUMNS:
            modes = list(dict.fromkeys(cells))
            if len(modes) == 1:
                log.power_mode = modes[0][:60]
            else:
                log.notes.append(f"the power mode changes during the log ({', '.join(m[:20] for m in modes[:5])}): "
                                 "no one power mode is stored")
