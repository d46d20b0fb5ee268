"""Power summaries: the figures a power logger writes at the end of a run, not its samples.

Two shapes, both home-grown around nvidia-smi, pynvml or tegrastats:

- long `metric,gpu_index,value,unit` summaries, one figure a row, per GPU and over ALL GPUs
  (`TIME,ALL,32.6,sec`, `POWER,0,202.8,W`, `ENERGY,1,8643.7,J`, `POWER_ALL_AVG,ALL,233.9,W`,
  `ENERGY_TOTAL,ALL,15259.8,J`). A stated total (a row over ALL, or a metric named TOTAL) is the run's
  figure as written: it is never summed again with the per-GPU rows it totals; the per-GPU rows are
  added up only where no total is stated. A figure averaged over the GPUs (POWER_ALL_AVG) is one GPU's
  mean, not the run's power. A writer that appends one block per run (a new TIME row) gives one run
  a block. (A summary without any stated total is a per-experiment table: `importers.experiment_table`.)
- wide per-run rail summaries: a row per run and, per rail, its peak and mean (`RUN,PWR_IN_MAX,PWR_CPU_MAX,
  PWR_GPU_MAX,PWR_IN_AVG,...` around tegrastats; `RUN,PWR_MAX,PWR_AVG` around nvidia-smi; or Jetson rail
  names such as `VDD_IN_AVG`, `POM_5V_IN_AVG`). Such tables do not write their unit, and the same project
  writes mW for a Jetson and W for a GPU under one name, so the unit is decided per table from the rail
  names and the magnitudes (`rail_unit`), the decision written into the run's notes; a table whose
  names and values fit both mW and W is refused, naming the columns and the fix (--unit COLUMN=W|mW).
  They hold no duration, so a run stores its mean power and no energy.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from typing import Any

from energy.rails import INPUT_RAILS, module_power, rail_key
from importers.base import Conversion, Importer, Source, energy_metrics, num, positive, read_csv
from importers.powerlogs.log import JETSON_MAX_W, KNOWN_RAILS, SINGLE_DEVICE_MAX_W, TIME_COLUMNS
from joulebench import units

LONG_COLUMNS = ("metric", "value", "unit")
GPU_COLUMNS = ("gpu_index", "gpu", "gpu_id", "device_index", "index")
_TOTAL_WORDS = {"total", "sum", "tot"}
_MEAN_WORDS = {"avg", "average", "mean"}
_SPREAD_WORDS = {"max", "min", "peak", "std", "stdev", "p50", "p90", "p95", "p99", "per"}
# a rail summary column: a rail name and a statistic, with no unit ('PWR_IN_AVG', 'VDD_IN_MAX', 'PWR_AVG')
RAIL_STAT = re.compile(r"(?i)^(?P<rail>(?:pwr|power|pom|vdd|vin)(?:_[a-z0-9]+)*?)"
                       r"_(?P<stat>avg|average|mean|max|peak|min)$")
ROW_ID = ("run", "iteration", "iter", "idx", "index", "id", "step", "trial", "repeat", "name", "model")
_ALL = ("all", "total", "")


def _words(text: str) -> set[str]:
    return set(re.split(r"[^a-z0-9]+", text.lower()))


# --- long metric,gpu_index,value,unit summaries ------------------------------------------------------

def _long_header(head: str) -> list[str] | None:
    first = [c.strip().strip('"').lower() for c in head.split("\n", 1)[0].split(",")]
    if not set(LONG_COLUMNS) <= set(first) or not any(c in first for c in GPU_COLUMNS):
        return None
    if set(first) - set(LONG_COLUMNS) - set(GPU_COLUMNS) - {""}:
        return None  # other columns (model, run) name several runs: a long results table (importers.general_table)
    return first


def _states_a_total(head: str, header: list[str]) -> bool:
    """A long summary with a figure over ALL GPUs or named TOTAL: what the per-GPU rows must not be added to."""
    gpu = header.index(next(c for c in GPU_COLUMNS if c in header))
    metric = header.index("metric")
    for line in head.splitlines()[1:]:
        cells = [c.strip().strip('"') for c in line.split(",")]
        if len(cells) <= max(gpu, metric):
            continue
        if cells[gpu].lower() in ("all", "total") or _words(cells[metric]) & _TOTAL_WORDS:
            return True
    return False


@dataclass
class _Row:
    lineno: int
    metric: str
    gpu: str  # '0', '1', ... or 'ALL'
    quantity: str  # energy | power | time
    value: float  # J, W or s


def _long_rows(conv: Conversion, header: list[str], rows: list[tuple[int, list[str]]]) -> list[_Row]:
    index = {name.lower(): i for i, name in enumerate(header)}
    gpu_col = next(c for c in GPU_COLUMNS if c in index)
    out: list[_Row] = []
    skipped: list[str] = []
    for lineno, row in rows:
        def cell(name: str, row: list[str] = row) -> str:
            return row[index[name]].strip() if index[name] < len(row) else ""

        metric, unit = cell("metric"), cell("unit").lower()
        value = num(cell("value"), f"line {lineno}: value", conv)
        quantity, factor = units.factor_of(unit, ("energy", "power", "time")) or (None, 1.0)
        if value is None or quantity is None or _words(metric) & _SPREAD_WORDS:
            skipped.append(metric[:40] or f"line {lineno}")
            continue
        gpu = cell(gpu_col)
        out.append(_Row(lineno, metric, "ALL" if gpu.lower() in _ALL else gpu, quantity, value * factor))
    if skipped:
        conv.warn(f"rows left out (a peak, a spread, a per-item figure or a unit not read): {', '.join(skipped[:8])}")
    return out


def _blocks(rows: list[_Row]) -> list[list[_Row]]:
    """A writer that appends one summary per run: a figure met again for the same GPU starts the next run."""
    blocks: list[list[_Row]] = [[]]
    seen: set[tuple[str, str]] = set()
    for r in rows:
        key = (r.metric.lower(), r.gpu)
        if key in seen:
            blocks.append([])
            seen = set()
        seen.add(key)
        blocks[-1].append(r)
    return [b for b in blocks if b]


def _stated_or_summed(rows: list[_Row], quantity: str, notes: list[str]) -> tuple[float | None, str]:
    """A quantity's run figure: the stated total over ALL GPUs, else the sum of the per-GPU rows; an ALL row
    that averages over the GPUs is a per-GPU mean and is not the run's figure."""
    parts = [r for r in rows if r.quantity == quantity and r.gpu != "ALL"]
    alls = [r for r in rows if r.quantity == quantity and r.gpu == "ALL"]
    means = [r for r in alls if _words(r.metric) & _MEAN_WORDS]
    totals = [r for r in alls if r not in means]
    summed = sum(r.value for r in parts) if parts else None
    unit = {"energy": "J", "power": "W"}[quantity]
    for m in means:
        notes.append(f"{m.metric} {m.value:g} {unit} (line {m.lineno}) is the mean over the GPUs, not the run's "
                     f"{quantity}")
    if totals:
        total = totals[0]
        note = f"{quantity} {total.value:.10g} {unit} as stated by {total.metric} (line {total.lineno})"
        if summed is not None:
            agree = abs(summed - total.value) <= 0.01 * max(abs(total.value), 1e-9)
            note += (f"; the {len(parts)} per-GPU {parts[0].metric} rows add up to {summed:.10g} {unit}"
                     + (" (the same: not added again)" if agree else
                        f" ({(summed - total.value) / total.value:+.1%}): the stated total is kept"))
        notes.append(note)
        return total.value, total.metric
    if summed is not None and len(parts) > 1:
        notes.append(f"{quantity} = sum of the {len(parts)} per-GPU {parts[0].metric} rows ({summed:g} {unit}); "
                     "no total is stated")
    return summed, parts[0].metric if parts else quantity


def _long_run(conv: Conversion, i: int, rows: list[_Row]) -> dict[str, Any]:
    notes: list[str] = []
    flags: list[str] = []
    gpus = sorted({r.gpu for r in rows if r.gpu != "ALL"},
                  key=lambda g: (not g.isdigit(), int(g) if g.isdigit() else 0))
    times = [r for r in rows if r.quantity == "time"]
    stated_time = [r for r in times if r.gpu == "ALL"]
    duration = positive(stated_time[0].value if stated_time else max((r.value for r in times), default=None))
    energy, what = _stated_or_summed(rows, "energy", notes)
    power, _ = _stated_or_summed(rows, "power", notes)
    metrics: dict[str, Any] = {"duration_s": duration}
    boundary = conv.boundary("gpu_board")
    if energy is not None and energy > 0:
        metrics.update(energy_metrics(energy, duration_s=duration, boundary=boundary, method="reported", what=what,
                                      flags=flags))
    if "avg_power_w" not in metrics and power:
        metrics["avg_power_w"] = power
        metrics.setdefault("energy_boundary", boundary)
    return {
        "run_id": conv.run_id(i),
        "status": "ok",
        "device": conv.device(None, "gpu", where="(whole file; a power summary does not name the GPU)"),
        "config": {
            "workload": conv.hints.workload or "power-summary",
            "mode": conv.mode(None, "(whole file; a power summary does not say what ran)"),
            "precision": conv.precision(None),
            "batch_size": conv.hints.batch_size,
            "gpu_count": len(gpus) or None,
        },
        "metrics": {k: v for k, v in metrics.items() if v is not None},
        "flags": flags,
        "notes": "; ".join([f"power summary of {len(gpus)} GPU(s) ({', '.join(gpus)})", *notes]),
    }


# --- wide per-run rail summaries -----------------------------------------------------------------------

def _rail_columns(header: list[str]) -> dict[str, tuple[str, str]] | None:
    """Column -> (rail, statistic) when every column is a rail statistic or a row's name, with a mean."""
    rails: dict[str, tuple[str, str]] = {}
    for col in header:
        m = RAIL_STAT.match(col.strip())
        if m:
            rails[col] = (m.group("rail"), m.group("stat").lower())
        elif col.strip().lower() not in ROW_ID:
            return None
    if not any(stat in _MEAN_WORDS for _, stat in rails.values()):
        return None
    return rails


def _rail_name(rail: str) -> str:
    """'PWR_IN' -> 'IN', 'PWR' -> '' (the device's one power), 'VDD_CPU_GPU_CV' -> 'VDD_CPU_GPU_CV'."""
    return rail_key(rail)


def rail_unit(rails: dict[str, list[float]], jetson: bool, inputs: list[str]) -> tuple[float | None, str]:
    """W per unit of a table's unit-less rail columns and why; (None, why) when mW and W both fit."""
    top = max((max(v) for v in rails.values() if v), default=0.0)
    low = min((min(v) for v in rails.values() if v), default=0.0)
    peak = max(rails, key=lambda c: max(rails[c], default=0.0))
    if jetson:
        if top > JETSON_MAX_W:
            return 1e-3, (f"the table states no unit; its columns name Jetson rails and {peak} reaches {top:,.0f}, "
                          f"which no Jetson draws in W (at most {JETSON_MAX_W:g} W), so it is read as mW, as "
                          "tegrastats writes them")
        in_low = min((min(rails[c]) for c in inputs if rails[c]), default=None)
        if in_low is not None and in_low >= 0.2:
            return 1.0, (f"the table states no unit; its input rail {inputs[0]} stays between {in_low:g} and "
                         f"{max(rails[inputs[0]]):g}, which in mW would be under a fifth of a watt, less than any "
                         "Jetson module's input, so it is read as W")
        return None, (f"the values (up to {top:g}) fit both W and mW for Jetson rails without the module's input "
                      "rail")
    if top > SINGLE_DEVICE_MAX_W:
        return 1e-3, (f"the table states no unit; {peak} reaches {top:,.0f}, which no single device draws in W "
                      f"(at most {SINGLE_DEVICE_MAX_W:g} W), so it is read as mW")
    if low >= 1.0:
        return 1.0, (f"the table states no unit; its values stay between {low:g} and {top:g}, which in mW would be "
                     "under 1.5 W, less than a GPU draws while it runs, so they are read as W")
    return None, f"the values ({low:g} to {top:g}) fit both W and mW"


def _wide_runs(conv: Conversion, header: list[str], rows: list[tuple[int, list[str]]],
               rails: dict[str, tuple[str, str]]) -> list[dict[str, Any]]:
    values: dict[str, list[float]] = {c: [] for c in rails}
    cells: list[dict[str, float | None]] = []
    for lineno, row in rows:
        got: dict[str, float | None] = {}
        for col in rails:
            i = header.index(col)
            v = num(row[i] if i < len(row) else "", f"line {lineno}: {col}", conv)
            got[col] = v
            if v is not None:
                values[col].append(v)
        cells.append(got)
    for column, _unit in conv.hints.units:
        if column.strip().lower() not in {h.strip().lower() for h in header}:
            raise conv.fail(f"--unit {column}", f"no such column; the file's columns are {', '.join(header)[:300]}")
    means = {c: r for c, (r, stat) in rails.items() if stat in _MEAN_WORDS}
    names = {c: _rail_name(r) for c, r in means.items()}
    inputs = [c for c, n in names.items() if n in ("IN", *INPUT_RAILS)]
    known = [c for c, n in names.items() if n in KNOWN_RAILS or n in INPUT_RAILS]
    jetson = bool(inputs or known)
    stated = {u for c in means if (u := conv.hints.unit_of(c)) is not None}
    if stated:
        if len(stated) > 1 or stated - {"W", "mW", "kW"}:
            raise conv.fail("--unit", "give the rail columns one power unit (W or mW), not "
                                      f"{', '.join(sorted(stated))}")
        unit = stated.pop()
        factor: float | None = {"W": 1.0, "mW": 1e-3, "kW": 1e3}[str(unit)]
        why = f"read in {unit}, as you stated (--unit)"
    else:
        factor, why = rail_unit({c: values[c] for c in means}, jetson, inputs)
    if factor is None:
        cols = ", ".join(means)
        raise conv.fail("line 1", f"the columns {cols} do not state their unit and {why}, so they cannot be read: "
                                  f"pass --unit {next(iter(means))}=mW (or W) for the table, or in Upload under "
                                  "'Units of columns'")
    if jetson:
        rail = inputs[0] if inputs else None
        choice = None if rail else module_power(list(names.values()), conv.hints.device)
        if choice is not None and choice.ok and len(choice.rails) == 1:
            rail = next(c for c, n in names.items() if n == choice.rails[0])
        how = (f"module power = {rail} (the module's input rail)" if rail else
               (choice.missing_reason if choice else None) or "no module input rail among the columns")
        boundary = "jetson_module"
    else:
        rail = next(iter(means)) if len(means) == 1 else None
        how = f"power = {rail}" if rail else f"several power columns ({', '.join(means)}) and none named the total"
        boundary = None
    left_out = [c for c, (_, stat) in rails.items() if stat not in _MEAN_WORDS]
    notes = [why, how, *([f"peaks left out: {', '.join(left_out)}"] if left_out else [])]
    row_id = next((h for h in header if h.strip().lower() in ROW_ID), None)
    runs = []
    for i, ((lineno, row), got) in enumerate(zip(rows, cells)):
        power = positive(got.get(rail)) if rail else None
        metrics: dict[str, Any] = {}
        if power is not None:
            metrics = {"avg_power_w": power * factor, "energy_boundary": conv.boundary(boundary),
                       "energy_missing_reason": "a power summary holds the mean power, not the time it was "
                                                "averaged over"}
        else:
            metrics = {"energy_missing_reason": how if not rail else f"no {rail} value on line {lineno}"}
        run_name = row[header.index(row_id)].strip() if row_id and header.index(row_id) < len(row) else str(i)
        runs.append({
            "run_id": conv.run_id(i),
            "status": "ok",
            "device": conv.device(None, "jetson" if jetson else "gpu",
                                  where="(whole file; a power summary does not name the device)"),
            "config": {
                "workload": conv.hints.workload or "power-summary",
                "mode": conv.mode(None, "(whole file; a power summary does not say what ran)"),
                "precision": conv.precision(None),
                "batch_size": conv.hints.batch_size,
            },
            "metrics": metrics,
            "flags": [],
            "notes": "; ".join([f"power summary, {row_id or 'row'} {run_name}", *notes]),
        })
    return runs


class PowerSummaryImporter(Importer):
    NAME = "power-summary"
    TOOL = "power logs"  # the family of the logs they summarise (the tools line names each family once)
    DESCRIPTION = ("a power logger's end-of-run summary: metric,gpu_index,value,unit rows with stated totals, or a "
                   "row per run of rail means and peaks (PWR_IN_AVG, VDD_IN_MAX, PWR_AVG)")

    def sniff(self, source: Source) -> bool:
        head = source.head
        if not head or head.lstrip()[:1] in ("{", "["):
            return False
        long = _long_header(head)
        if long is not None:
            return _states_a_total(head, long)
        first = [c.strip().strip('"') for c in head.split("\n", 1)[0].split(",")]
        if any(c.lower() in TIME_COLUMNS for c in first):
            return False  # a time series: a power log, not a summary
        return _rail_columns(first) is not None

    def convert(self, conv: Conversion) -> dict[str, Any]:
        conv.tool_version = None
        header, rows = read_csv(conv, conv.source.text or "")
        if not rows:
            raise conv.fail("line 2", "no rows after the header")
        if _long_header(conv.source.head) is not None:
            blocks = _blocks(_long_rows(conv, header, rows))
            if not blocks:
                raise conv.fail("line 2", "no energy, power or time row with a unit JouleBench reads")
            if len(blocks) > 1:
                conv.warn(f"{len(blocks)} summaries appended one after another: one run each")
            return conv.document([_long_run(conv, i, b) for i, b in enumerate(blocks)])
        rails = _rail_columns(header)
        if rails is None:
            raise conv.fail("line 1", "not a power summary: expected rail columns such as PWR_IN_AVG")
        return conv.document(_wide_runs(conv, header, rows, rails))
