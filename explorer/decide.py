"""Decide: which of 2-6 candidate devices to buy for a job, and why (pure logic, polars in).

For each candidate it gathers the figures the data holds for the job (throughput, joules per
example or per iteration, idle power, price, memory, p99 latency), each with its basis:

- measured here (a local run), imported (an uploaded file), reference table (shipped data);
- stated ratio: a ratio a source states between two devices (findings), used where no pair of
  absolute figures exists;
- estimate: derived with a stated assumption (examples per iteration taken from the source's
  other rows; throughput = estimated power while running ÷ J/example; energy = TDP ÷ throughput).

It compares the candidates like for like (same workload, precision, batch and sequence length)
where both were measured, else by the sources' stated ratios, else by estimates, and says which.
The cost of a sample carries the duty cycle (idle power over the idle share) and the crossover
utilisation at which two devices swap places. What the data cannot answer is listed with the
run or upload that would fill it.
"""

from __future__ import annotations

import math
import re
from collections.abc import Iterable
from dataclasses import dataclass, field, replace
from typing import Any

import polars as pl

from energy.stats import aggregate, ratio_interval
from explorer.aggregates import NOT_GRADED, low_grade_warning, worst_grade
from explorer.cost import Constraints
from explorer.markdown import md
from explorer.money import (
    CostSettings,
    CostTerms,
    Rates,
    cost_terms,
    crossover,
    price_covers,
    price_entered,
    price_origin,
)
from explorer.text import (
    BASIS_NAMES,
    basis_of,
    batch_label,
    boundary_name,
    count,
    in_sentence,
    money,
    pct,
    precision_name,
    ratio,
    sig,
)

MAX_DEVICES = 6
# the example on an empty Decide page: a student choosing a card for fine-tuning BERT (its link)
EXAMPLE = {"device": ["GeForce RTX 3060", "Jetson AGX Xavier"], "mode": ["train"], "kwh": ["0.3"], "years": ["3"],
           "util": ["0.5"], "currency": ["USD"]}
ESTIMATE = "estimate"
ENTERED = "entered by you"
STATED = "stated ratio"
CONFIG_KEY = ("workload", "precision", "batch_size", "grad_accum_steps", "seq_len", "gpu_count")
WALL_LIKE = ("wall", "system")


# --- the question -------------------------------------------------------------------------

@dataclass(frozen=True)
class Job:
    """What the devices are for: train or infer, a model size class (`model`) or one workload."""

    mode: str = "train"
    model: str | None = None
    workload: str | None = None
    precision: str | None = None
    seq_len: int | None = None  # the input size (sequence length); None: any, each figure states its own

    def describe(self) -> str:
        what = self.workload or (f"{self.model} (any task)" if self.model else "any workload")
        prec = f", {precision_name(self.precision)}" if self.precision else ""
        size = f", sequence length {self.seq_len}" if self.seq_len else ", any input size (each figure states its own)"
        return f"{what}, {'training' if self.mode == 'train' else 'inference'}{prec}{size}"


def scopes(runs: pl.DataFrame, mode: str) -> list[str]:
    """Job choices for a mode: each model class ('model:bert-large') and each workload."""
    of_mode = runs.filter(pl.col("mode") == mode)
    models = sorted(of_mode["model"].drop_nulls().unique().to_list())
    workloads = sorted(of_mode["workload"].drop_nulls().unique().to_list())
    return [f"model:{m}" for m in models] + [f"workload:{w}" for w in workloads]


def scope_label(scope: str) -> str:
    kind, _, value = scope.partition(":")
    return f"{value} (any task)" if kind == "model" else value


INTRO = ("Pick two to six candidate devices and the job. The answer comes first in sentences, then every figure "
         "with its basis (measured here, imported, reference table, stated ratio, estimate), where it was measured "
         "and its source.")
SEQ_HELP = ("Throughput and energy depend on the input size; pick one to compare every device at it. The sizes "
            "listed are those the data holds for these devices and this job.")
BEST_HELP = ("For each device with runs of this workload at several GPU power limits or Jetson power modes, take it "
             "at the setting recommended for the goal (measured, or predicted by a model checked by leave-one-out, "
             "as on the Power settings page); the others stay at their measured figures.")
GOAL_HELP = ("energy: fewest joules; speed: most throughput; balanced: Zeus's 0.5 x energy + 0.5 x max power x time; "
             "cost: electricity + hardware (needs the device's price). The power cap constraint (sidebar) applies "
             "to the average power.")
ANSWER_CAPTION = ("Single-device figures only (multi-GPU system rows are left out). Sources' ratios are used where "
                  "no pair of absolute figures exists, and labelled so; estimates say how they were made.")
ELSEWHERE = ("Measured on another machine? Export its runs there (Compare, Download the selection) or take the log "
             "of the tool that measured them, and upload the file here.")


def chosen_job(mode: str, scope: str, auto_scope: str | None, precision: str, seq: str = "any") -> Job:
    """The job the page's controls pick ('auto', 'any' resolved)."""
    return job_from(mode, auto_scope if scope == "auto" else scope, None if precision == "any" else precision,
                    None if seq == "any" else int(seq))


def job_from(mode: str, scope: str | None, precision: str | None, seq_len: int | None = None) -> Job:
    kind, _, value = (scope or "").partition(":")
    return Job(mode, value if kind == "model" else None, value if kind == "workload" else None, precision or None,
               seq_len)


def input_sizes(runs: pl.DataFrame, devices: list[str], job: Job) -> list[int]:
    """The sequence lengths the candidates' rows for the job hold (any precision chosen applies)."""
    rows = pl.concat([job_rows(runs, d, replace(job, seq_len=None)) for d in devices]) if devices else runs.clear()
    return sorted(int(v) for v in rows["seq_len"].drop_nulls().unique().to_list())


def default_scope(runs: pl.DataFrame, devices: list[str], mode: str) -> str | None:
    """The model class with rows for the most candidates in this mode (then the most rows)."""
    rows = runs.filter(pl.col("device_name").is_in(devices) & (pl.col("mode") == mode)
                       & pl.col("model").is_not_null())
    if rows.is_empty():
        options = scopes(runs, mode)
        return options[0] if options else None
    best = (rows.group_by("model").agg(pl.col("device_name").n_unique().alias("d"), pl.len().alias("n"))
            .sort(["d", "n", "model"], descending=[True, True, False]))
    return f"model:{best['model'][0]}"


# --- figures ------------------------------------------------------------------------------

@dataclass(frozen=True)
class Figure:
    """One number on the page, with where it comes from. A measured figure is the mean of its
    configuration's repeats: `n`, the 95 % interval `ci_low`-`ci_high` (n >= 2) and the values
    themselves (`repeats`, for ratio intervals); `grade` is the configuration's stored trust grade
    (None where nothing is stored: the catalog, a stated ratio, an estimate)."""

    device: str
    what: str  # "Throughput", "Energy per example", ...
    value: float | None
    unit: str
    basis: str  # measured here | imported | reference table | stated ratio | estimate | catalog | not measured
    boundary: str = ""
    config: str = ""
    source: str = ""  # citation, file, or the derivation of an estimate
    missing_reason: str = ""
    run_id: str | None = None
    setting: str = ""  # the short configuration for a sentence: precision, batch, power setting
    n: int | None = None
    ci_low: float | None = None
    ci_high: float | None = None
    grade: str | None = None
    repeats: tuple[float, ...] = ()

    @property
    def known(self) -> bool:
        return self.value is not None

    def shown(self, digits: int = 3) -> str:
        if self.value is None:
            return "not measured"
        return f"{sig(self.value, digits)} {self.unit}".strip()


def _missing(device: str, what: str, unit: str, reason: str) -> Figure:
    return Figure(device, what, None, unit, "not measured", missing_reason=reason)


def config_label(row: dict[str, Any], *, short: bool = False) -> str:
    """'bert-large-ner · FP16 · batch 12x2 · seq 512 · PL 100 W · DGX-1', naming each field;
    `short`: precision, batch (when stated) and power setting only."""
    parts = []
    if not short and row.get("workload"):
        parts.append(str(row["workload"]))
    if row.get("precision"):
        parts.append(precision_name(row["precision"]))
    if not short or row.get("batch_size"):
        parts.append(batch_label(row.get("batch_size"), row.get("grad_accum_steps")))
    if row.get("seq_len"):
        parts.append(f"seq {row['seq_len']}")
    if row.get("power_setting") and row["power_setting"] != "default":
        parts.append(str(row["power_setting"]))
    if not short and row.get("system_name"):
        parts.append(str(row["system_name"]))
    return " · ".join(parts)


def _source(row: dict[str, Any]) -> str:
    return str(row.get("citation") or row.get("source_file") or "")


def _repeats(rows: pl.DataFrame, row: dict[str, Any], column: str) -> list[float]:
    """The values of `column` over the ok runs of `row`'s configuration (the row alone without one)."""
    key = row.get("config_key")
    if key is None or "config_key" not in rows.columns:
        return [float(row[column])]
    values = rows.filter((pl.col("config_key") == key) & (pl.col("status") == "ok"))[column].to_list()
    return [float(v) for v in values if v is not None and math.isfinite(v)] or [float(row[column])]


def figure_basis(row: dict[str, Any], *, energy: bool = False) -> str:
    """A figure's basis computed from how it was made: an energy figure estimated (energy method
    or boundary 'estimated', e.g. TDP x time) is an 'estimate' wherever the run was made; else
    where the run comes from (measured here, imported, reference table)."""
    if energy and "estimated" in (row.get("energy_method"), row.get("energy_boundary")):
        return ESTIMATE
    return basis_of(row.get("source_kind"))


def _from_row(device: str, what: str, column: str, unit: str, row: dict[str, Any], *, energy: bool = False,
              note: str = "", rows: pl.DataFrame | None = None) -> Figure:
    """The figure of `row`'s configuration: with `rows` (runs holding its repeats), the mean of the
    repeats with n and the 95 % interval; the configuration's stored grade either way."""
    src = _source(row)
    values = _repeats(rows, row, column) if rows is not None else [float(row[column])]
    agg = aggregate(values)
    assert agg is not None
    return Figure(device, what, agg.mean, unit, figure_basis(row, energy=energy),
                  boundary_name(row.get("energy_boundary")) if energy else "", config_label(row),
                  f"{note}; {src}" if note and src else (note or src), run_id=row.get("run_id"),
                  setting=config_label(row, short=True), n=agg.n, ci_low=agg.ci95_low, ci_high=agg.ci95_high,
                  grade=row.get("config_grade"), repeats=tuple(values))


def _best_row(ok: pl.DataFrame, column: str, *, highest: bool) -> dict[str, Any] | None:
    """A run of the configuration whose mean of `column` is the highest (or lowest): the first run
    of that configuration as the rows are ordered; None when no ok run measured it."""
    rows = ok.filter(pl.col(column).is_not_null() & pl.col(column).is_finite()).with_row_index("_row")
    if rows.is_empty():
        return None
    key = pl.coalesce("config_key", "run_id") if "config_key" in rows.columns else pl.col("run_id")
    means = rows.group_by(key.alias("_key"), maintain_order=True).agg(pl.col(column).mean().alias("_mean"),
                                                                      pl.first("_row"))
    best = means.sort("_mean", descending=highest, maintain_order=True).row(0, named=True)
    return rows.drop("_row").row(int(best["_row"]), named=True)


def mixed_sizes_note(sizes: list[str]) -> str:
    """What 'any input size' means when the data holds several: each figure is the device's best,
    at whatever size gave it, and says which; picking one compares every device at it."""
    return (f"The data holds these input sizes: {', '.join(sizes)} tokens. With 'any', each device's figures are "
            "its best at whichever size gave them (each figure states its size); pick one to compare all at it.")


def job_rows(runs: pl.DataFrame, device: str, job: Job) -> pl.DataFrame:
    """The device's single-device runs for the job (any status; the caller picks `ok` or `oom`):
    a buyer compares one device with another, so multi-GPU system rows are left out."""
    rows = runs.filter((pl.col("device_name") == device) & (pl.col("mode") == job.mode)
                       & (pl.col("gpu_count").fill_null(1) == 1))
    if job.workload:
        rows = rows.filter(pl.col("workload") == job.workload)
    elif job.model:
        rows = rows.filter(pl.col("model") == job.model)
    if job.precision:
        rows = rows.filter(pl.col("precision") == job.precision)
    if job.seq_len:
        rows = rows.filter(pl.col("seq_len") == job.seq_len)
    return rows


def idle_rows(runs: pl.DataFrame, device: str) -> pl.DataFrame:
    return runs.filter((pl.col("device_name") == device) & (pl.col("mode") == "idle")
                       & pl.coalesce("avg_power_w", "idle_power_w").is_not_null())


def _examples_per_iteration(rows: pl.DataFrame, row: dict[str, Any]) -> tuple[int, str] | None:
    """Examples per optimizer step for a row that states J/iteration: its own batch, else the
    total batch the same source states for this device, workload and precision (an estimate)."""
    if row.get("batch_size"):
        return int(row["batch_size"]) * int(row.get("grad_accum_steps") or 1), ""
    siblings = rows.filter(pl.col("batch_size").is_not_null() & (pl.col("workload") == row["workload"])
                           & (pl.col("precision") == row["precision"]) & (pl.col("status") == "ok")
                           & (pl.col("source_file") == row["source_file"]))
    if siblings.is_empty():
        return None
    totals = siblings.with_columns(
        (pl.col("batch_size") * pl.col("grad_accum_steps").fill_null(1)).alias("total"))
    common = totals.group_by("total").agg(pl.len().alias("n"), pl.first("grad_accum_steps").alias("m"),
                                          pl.first("batch_size").alias("b"))
    best = common.sort(["n", "total"], descending=True).row(0, named=True)
    how = (f"the energy figure does not state its batch; {best['total']} examples per iteration is the "
           f"total batch ({batch_label(best['b'], best['m']).removeprefix('batch ')}) the same source states "
           f"for this device and precision")
    return int(best["total"]), how


@dataclass
class DeviceAnswer:
    device: str
    kind: str | None
    throughput: Figure
    j_per_sample: Figure
    j_per_iteration: Figure
    idle_power: Figure
    price: Figure
    memory: Figure
    p99: Figure
    power: Figure  # power drawn while running (measured avg) or the setting's cap / TDP
    cost_throughput: Figure  # the throughput the cost uses (measured, or an estimate)
    cost_energy: Figure  # the J/example the cost uses
    terms: CostTerms | None = None
    cost_missing: str = ""
    ooms: list[str] = field(default_factory=list)  # configurations recorded as out of memory
    oom_basis: str = ""

    def cost_at(self, u: float) -> float | None:
        return None if self.terms is None else self.terms.at(u)

    def figures(self, with_latency: bool = True) -> list[Figure]:
        figs = [self.throughput, self.j_per_sample, self.j_per_iteration, self.idle_power, self.power,
                self.price, self.memory]
        return [*figs, self.p99] if with_latency else figs


def _cap_w(row: dict[str, Any], modes: pl.DataFrame, tdp_w: float | None) -> tuple[float, str] | None:
    """The most power the row's setting allows: its power limit, its Jetson mode's budget, or TDP."""
    if row.get("power_limit_w"):
        return float(row["power_limit_w"]), f"power limit {row['power_limit_w']:g} W"
    if row.get("power_mode"):
        mode_id = str(row["power_mode"]).split(" ", 1)[0]
        found = modes.filter((pl.col("device_name") == row["device_name"]) & (pl.col("mode_id") == mode_id)
                             & pl.col("power_budget_w").is_not_null())
        if found.height:
            budget = float(found["power_budget_w"][0])
            return budget, f"mode {row['power_mode']} budget {budget:g} W"
    if tdp_w and tdp_w > 0:
        return float(tdp_w), f"TDP {tdp_w:g} W (catalog)"
    return None


def device_answer(runs: pl.DataFrame, catalog_row: dict[str, Any] | None, modes: pl.DataFrame, rates: Rates,
                  job: Job, settings: CostSettings) -> DeviceAnswer:
    device = catalog_row["device_name"] if catalog_row else "?"
    rows = job_rows(runs, device, job)
    ok = rows.filter(pl.col("status") == "ok")
    mode_word = "training" if job.mode == "train" else "inference"
    scope = job.describe()

    # throughput: the configuration with the best mean the job's rows state
    tp_row = _best_row(ok, "throughput_sps", highest=True)
    throughput = (_from_row(device, "Throughput", "throughput_sps", "samples/s", tp_row, rows=ok)
                  if tp_row is not None else
                  _missing(device, "Throughput", "samples/s", f"no {mode_word} throughput for {scope} in the data"))

    # energy per example: stated, or J/iteration over the examples of one iteration
    j_row = _best_row(ok, "j_per_sample", highest=False)
    it_row = _best_row(ok, "j_per_iteration", highest=False)
    j_iter = (_from_row(device, "Energy per iteration", "j_per_iteration", "J", it_row, energy=True, rows=ok)
              if it_row is not None else _missing(device, "Energy per iteration", "J", f"no J/iteration for {scope}"))
    if j_row is not None:
        j_sample = _from_row(device, "Energy per example", "j_per_sample", "J", j_row, energy=True, rows=ok)
    elif it_row is not None:
        row = it_row
        per_it = _examples_per_iteration(rows, row)
        if per_it is None:
            j_sample = _missing(device, "Energy per example", "J",
                                "the source gives J/iteration without the examples per iteration")
        else:
            n, how = per_it
            basis = ESTIMATE if how else basis_of(row.get("source_kind"))
            assert j_iter.value is not None

            def per_example(v: float | None) -> float | None:
                return None if v is None else v / n

            j_sample = replace(j_iter, what="Energy per example", value=j_iter.value / n, basis=basis,
                               source=f"{sig(j_iter.value, 4)} J/iteration ÷ {n} examples per iteration"
                               + (f" ({how})" if how else "") + f"; {_source(row)}",
                               ci_low=per_example(j_iter.ci_low), ci_high=per_example(j_iter.ci_high),
                               repeats=tuple(v / n for v in j_iter.repeats))
    else:
        j_sample = _missing(device, "Energy per example", "J", f"no {mode_word} energy figure for {scope} in the data")

    # idle power (same boundary as the energy figure where there is a choice)
    idle = idle_rows(runs, device)
    energy_row = j_row if j_row is not None else it_row
    if idle.height:
        wanted = energy_row.get("energy_boundary") if energy_row else None
        idle = idle.sort(pl.col("energy_boundary") != wanted if wanted else pl.lit(0))
        irow = idle.row(0, named=True)
        idle_col = "avg_power_w" if irow.get("avg_power_w") is not None else "idle_power_w"
        idle_fig = _from_row(device, "Idle power", idle_col, "W", irow, energy=True, rows=idle)
        idle_fig = replace(idle_fig, config=str(irow.get("system_name") or irow.get("power_setting") or ""),
                           setting="")
    else:
        idle_fig = _missing(device, "Idle power", "W", "no idle measurement for this device: measure one with a "
                            "New run (idle baseline) on it, or upload a file that holds one")

    # catalog: price (converted), memory, TDP
    cat = catalog_row or {}
    conv = rates.convert(cat.get("price_amount"), cat.get("price_currency"), settings.currency)
    if conv.amount is None:
        price = Figure(device, "Price", None, settings.currency, "not measured",
                       missing_reason=f"{conv.missing_reason}: enter one on the Devices page"
                       if "catalog" in (conv.missing_reason or "") else conv.missing_reason or "")
    else:
        original = f"{sig(cat['price_amount'], 4)} {cat['price_currency']}"
        how = f"{original} converted at {conv.describe()}" if conv.rates else original
        price = Figure(device, "Price", conv.amount, settings.currency,
                       ENTERED if price_entered(cat) else "catalog",
                       config=f"covers {price_covers(cat.get('kind'))}", source=f"{how}; {price_origin(cat)}")
    memory = (Figure(device, "Memory", float(cat["memory_gb"]), "GB", "catalog", source=str(cat.get("citation") or ""))
              if cat.get("memory_gb") else _missing(device, "Memory", "GB", "the catalog gives no memory size"))
    p99_row = _best_row(ok, "latency_p99_ms", highest=False)
    p99 = (_from_row(device, "p99 latency per batch (lowest)", "latency_p99_ms", "ms", p99_row, rows=ok)
           if p99_row is not None else _missing(device, "p99 latency per batch (lowest)", "ms",
                                            f"no latency percentiles for {scope}"))
    oom_rows = rows.filter(pl.col("status") == "oom")
    ooms = [config_label(r) for r in oom_rows.iter_rows(named=True)]
    oom_basis = " and ".join(sorted({basis_of(k) for k in oom_rows["source_kind"].to_list()}))

    # power drawn while running: measured average, else the cap of the setting, else TDP
    pw_row = _best_row(ok, "avg_power_w", highest=False)
    if pw_row is not None:
        power = _from_row(device, "Power while running", "avg_power_w", "W", pw_row, energy=True, rows=ok)
    elif energy_row is not None and _cap_w(energy_row, modes, cat.get("tdp_w")):
        cap = _cap_w(energy_row, modes, cat.get("tdp_w"))
        assert cap is not None
        basis = "catalog" if "TDP" in cap[1] else "reference table"
        power = Figure(device, "Power cap of the setting", cap[0], "W", basis, config=config_label(energy_row),
                       source=cap[1])
    elif cat.get("tdp_w"):
        power = Figure(device, "Power cap of the setting", float(cat["tdp_w"]), "W", "catalog",
                       source=f"TDP {cat['tdp_w']:g} W (catalog)")
    else:
        power = _missing(device, "Power while running", "W", "no power measurement and no TDP in the catalog")

    answer = DeviceAnswer(device, cat.get("kind"), throughput, j_sample, j_iter, idle_fig, price, memory, p99,
                          power, throughput, j_sample, ooms=ooms, oom_basis=oom_basis)
    _operating_point(answer, ok, energy_row, modes, cat, settings)
    return answer


def _operating_point(ans: DeviceAnswer, ok: pl.DataFrame, energy_row: dict[str, Any] | None, modes: pl.DataFrame,
                     cat: dict[str, Any], settings: CostSettings) -> None:
    """The throughput and J/example the cost uses: one run with both (the cheapest), else the
    figures as they are with the missing one estimated, labelled."""
    device = ans.device
    both = ok.filter(pl.col("throughput_sps").is_not_null() & pl.col("j_per_sample").is_not_null())
    if both.height:
        price = ans.price.value or 0.0
        idle = ans.idle_power.value
        key = pl.coalesce("config_key", "run_id") if "config_key" in both.columns else pl.col("run_id")
        firsts = both.filter(key.is_first_distinct()).iter_rows(named=True)
        points = [(r, _from_row(device, "Throughput", "throughput_sps", "samples/s", r, rows=ok),
                   _from_row(device, "Energy per example", "j_per_sample", "J", r, energy=True, rows=ok))
                  for r in firsts]  # each configuration at the means of its repeats
        _, tp, j = min(points, key=lambda p: cost_terms(p[2].value or 0.0, p[1].value or 0.0, idle, price,
                                                        settings).at(settings.utilisation))
        ans.cost_throughput, ans.cost_energy = tp, j
    elif ans.throughput.known and ans.j_per_sample.known:
        ans.cost_throughput = replace(ans.throughput, basis=ESTIMATE,
                                      source=f"from another configuration than the energy figure; "
                                             f"{ans.throughput.source}")
    elif ans.j_per_sample.known and energy_row is not None:
        cap = _cap_w(energy_row, modes, cat.get("tdp_w"))
        wall = energy_row.get("energy_boundary") in WALL_LIKE
        if cap is not None and (not wall or ans.idle_power.known):
            watts = cap[0] + (ans.idle_power.value or 0.0 if wall else 0.0)
            assert ans.j_per_sample.value is not None
            how = (f"{cap[1]}" + (f" + idle {ans.idle_power.value:g} W (rest of the system, the figure is "
                                  f"{boundary_name(energy_row.get('energy_boundary'))})" if wall else "")
                   + f" = {watts:g} W while running, ÷ {sig(ans.j_per_sample.value)} J/example")
            ans.cost_throughput = Figure(device, "Throughput", watts / ans.j_per_sample.value, "samples/s", ESTIMATE,
                                         "", ans.j_per_sample.config, how)
    elif ans.throughput.known and cat.get("tdp_w"):
        row = (ok.filter(pl.col("throughput_sps").is_not_null()).sort("throughput_sps", descending=True)
               .row(0, named=True))
        watts = float(cat["tdp_w"]) * float(row.get("gpu_count") or 1)
        assert ans.throughput.value is not None
        ans.cost_energy = Figure(device, "Energy per example", watts / ans.throughput.value, "J", ESTIMATE,
                                 "estimated", ans.throughput.config,
                                 f"TDP {watts:g} W ÷ {sig(ans.throughput.value)} samples/s (an upper bound)")
    _set_cost(ans, settings)


def _set_cost(ans: DeviceAnswer, settings: CostSettings) -> None:
    """The cost terms from the figures the cost uses, or why there are none."""
    ans.terms = None
    ans.cost_missing = ""
    if not ans.cost_throughput.known:
        ans.cost_missing = "no throughput, measured or estimable from power and energy"
        return
    if not ans.cost_energy.known:
        ans.cost_missing = "no energy figure, and no TDP to estimate one"
        return
    if not ans.price.known:
        ans.cost_missing = ans.price.missing_reason
        return
    assert ans.cost_energy.value is not None and ans.cost_throughput.value is not None and ans.price.value is not None
    ans.terms = cost_terms(ans.cost_energy.value, ans.cost_throughput.value, ans.idle_power.value, ans.price.value,
                           settings)


# --- comparisons --------------------------------------------------------------------------

@dataclass(frozen=True)
class Comparison:
    """`winner` is `factor` times better than `loser` on `what` (factor >= 1), with the 95 % interval
    `low`-`high` of the factor where both sides have repeats (energy.stats.ratio_interval), and the
    trust grade of each side's figures (None: nothing stored, e.g. a ratio a source states)."""

    what: str  # "faster" | "fewer joules"
    winner: str
    loser: str
    factor: float
    basis: str
    detail: str  # the figures or configurations compared, and the source
    quote: str = ""
    low: float | None = None
    high: float | None = None
    grades: tuple[tuple[str, str | None], ...] = ()  # (device, grade) for both sides
    noise: str = ""  # over several configurations: how many of their ratios are within the noise

    @property
    def within_noise(self) -> bool | None:
        """True when the interval holds 1 (no difference shown); None without an interval."""
        if self.low is None or self.high is None:
            return None
        return self.low <= 1.0 <= self.high

    def grade_of(self, device: str) -> str | None:
        return dict(self.grades).get(device)


def _oriented(r: float, low: float | None, high: float | None, first: str, second: str
              ) -> tuple[str, str, float, float | None, float | None]:
    """(winner, loser, factor >= 1, low, high) from a ratio `r` in favour of `first` when >= 1."""
    if r >= 1:
        return first, second, r, low, high
    return second, first, 1 / r, (1 / high if high else None), (1 / low if low else None)


_MODE_WORDS = {"train": ("training", "train", "fine-tuning"), "infer": ("inference", "infer")}
_PRECISION_WORDS = {"fp16": ("fp16", "mixed precision"), "fp32": ("fp32",), "tf32": ("tf32",), "bf16": ("bf16",)}


def finding_scope(desc: str | None) -> tuple[str | None, str | None]:
    """(mode, precision) a finding's description names, or None where it names none."""
    text = (desc or "").lower()
    mode = next((m for m, words in _MODE_WORDS.items() if any(re.search(rf"\b{w}\b", text) for w in words)), None)
    prec = next((p for p, words in _PRECISION_WORDS.items() if any(w in text for w in words)), None)
    return mode, prec


def _run_grade(runs: pl.DataFrame | None, run_id: str | None) -> str | None:
    """The stored grade of the run a finding cites (None when it cites none or it is not stored)."""
    if runs is None or not run_id or "trust_grade" not in runs.columns:
        return None
    found = runs.filter(pl.col("run_id") == run_id)["trust_grade"]
    return found[0] if found.len() else None


def stated_ratios(findings: pl.DataFrame, a: str, b: str, job: Job, metric: str = "throughput_sps",
                  runs: pl.DataFrame | None = None) -> list[Comparison]:
    """The sources' ratios between two devices for this job's mode (and precision, if chosen); a
    ratio's grade is that of the run it cites on each side, where it cites one (given `runs`)."""
    pair = findings.filter((pl.col("metric") == metric) & (pl.col("relation") == "ratio")
                           & (((pl.col("subject_device") == a) & (pl.col("baseline_device") == b))
                              | ((pl.col("subject_device") == b) & (pl.col("baseline_device") == a))))
    out = []
    for f in pair.iter_rows(named=True):
        mode, prec = finding_scope(f["subject_desc"])
        if mode is not None and mode != job.mode:
            continue
        if job.precision and prec is not None and prec != job.precision:
            continue
        value = float(f["value"])
        winner, loser = (f["subject_device"], f["baseline_device"]) if value >= 1 else \
            (f["baseline_device"], f["subject_device"])
        grades = ((f["subject_device"], _run_grade(runs, f.get("subject_run_id"))),
                  (f["baseline_device"], _run_grade(runs, f.get("baseline_run_id"))))
        out.append(Comparison("faster", winner, loser, value if value >= 1 else 1 / value, STATED,
                              f"{f['subject_desc']} vs {f['baseline_desc']}; {f['citation']}", f["quote"] or "",
                              grades=grades))
    return out


@dataclass(frozen=True)
class LikeForLike:
    """a/b over the configurations both measured (geometric mean of the per-configuration means)."""

    ratio: float
    count: int
    basis: str
    configs: str
    low: float | None  # the 95 % interval, for a single configuration measured with repeats on both sides
    high: float | None
    grade_a: str | None  # the worst grade of a's configurations compared
    grade_b: str | None
    noise: str  # several configurations: how many of their ratios are within the noise


def like_for_like(runs: pl.DataFrame, a: str, b: str, job: Job, column: str) -> LikeForLike | None:
    """Geometric mean of a/b over the configurations both measured, with its interval where it is
    one configuration with repeats on both sides, and each side's grade."""
    def per_config(device: str) -> pl.DataFrame:
        rows = job_rows(runs, device, job).filter((pl.col("status") == "ok") & pl.col(column).is_not_null())
        if "config_grade" not in rows.columns:
            rows = rows.with_columns(pl.lit(None, pl.String).alias("config_grade"))
        return rows.with_columns([pl.col(c).fill_null(-1) for c in ("batch_size", "grad_accum_steps", "seq_len",
                                                                   "gpu_count")]) \
            .group_by(list(CONFIG_KEY)).agg(pl.col(column).mean().alias("v"), pl.col(column).alias("vals"),
                                            pl.col("source_kind").first().alias("kind"),
                                            pl.col("config_grade").alias("grades"))
    joined = per_config(a).join(per_config(b), on=list(CONFIG_KEY), suffix="_b")
    if joined.is_empty():
        return None
    pairs = [(x, y, va, vb) for x, y, va, vb in zip(joined["v"], joined["v_b"], joined["vals"], joined["vals_b"])
             if x and y]
    if not pairs:
        return None
    logs = [math.log(x / y) for x, y, _, _ in pairs]
    intervals = [ratio_interval(va, vb) for _, _, va, vb in pairs]
    low = high = None
    noise = ""
    if len(pairs) == 1 and intervals[0] is not None and intervals[0].low is not None:
        low, high = intervals[0].low, intervals[0].high
    elif len(pairs) > 1:
        with_ci = [r for r in intervals if r is not None and r.low is not None]
        if with_ci:
            within = sum(1 for r in with_ci if r.within_noise)
            noise = (f"{within} of the {count(len(with_ci), 'configuration')} measured with repeats on both sides "
                     "differ within the noise")
    bases = sorted({basis_of(k) for k in joined["kind"].to_list() + joined["kind_b"].to_list()})
    precs = sorted({precision_name(p) for p in joined["precision"].drop_nulls()})
    batches = sorted(b for b in joined["batch_size"].to_list() if b != -1)
    seqs = sorted({s for s in joined["seq_len"].to_list() if s != -1})
    parts = [", ".join(sorted(set(joined["workload"].to_list())))]
    if precs:
        parts.append("/".join(precs))
    if batches:
        parts.append(f"batch {batches[0]}–{batches[-1]}" if batches[0] != batches[-1] else f"batch {batches[0]}")
    if seqs:
        parts.append("seq " + "/".join(map(str, seqs)))
    grade_a = worst_grade(g for gs in joined["grades"].to_list() for g in gs)
    grade_b = worst_grade(g for gs in joined["grades_b"].to_list() for g in gs)
    return LikeForLike(math.exp(sum(logs) / len(logs)), len(logs), " and ".join(bases), " · ".join(parts),
                       low, high, grade_a, grade_b, noise)


def _figure_ratio(what: str, fa: Figure, fb: Figure, a: str, b: str, basis: str, detail: str, quote: str = ""
                  ) -> Comparison:
    """Two figures compared ("faster": a/b of throughputs; "fewer joules": a/b of energies), with the
    interval of the ratio where both carry repeats."""
    assert fa.value is not None and fb.value is not None
    r = fa.value / fb.value
    interval = ratio_interval(fa.repeats, fb.repeats) if len(fa.repeats) > 1 and len(fb.repeats) > 1 else None
    low, high = (interval.low, interval.high) if interval is not None else (None, None)
    if what == "faster":
        winner, loser, f, low, high = _oriented(r, low, high, a, b)
    else:
        winner, loser, f, low, high = _oriented(r, low, high, b, a)
    return Comparison(what, winner, loser, f, basis, detail, quote, low, high, ((a, fa.grade), (b, fb.grade)))


def compare_speed(runs: pl.DataFrame, findings: pl.DataFrame, answers: dict[str, DeviceAnswer], a: str, b: str,
                  job: Job, at_best: frozenset[str] = frozenset()) -> list[Comparison]:
    """Like for like, else the sources' ratios, else the figures the costs use (when one is an
    estimate, or a device is taken at its best power setting: a source's ratio is for another)."""
    found = like_for_like(runs, a, b, job, "throughput_sps")
    if found:
        winner, loser, f, low, high = _oriented(found.ratio, found.low, found.high, a, b)
        return [Comparison("faster", winner, loser, f, found.basis,
                           f"geometric mean over {count(found.count, 'configuration')} both measured ({found.configs})",
                           low=low, high=high, grades=((a, found.grade_a), (b, found.grade_b)), noise=found.noise)]
    best = bool({a, b} & at_best)
    stated = [] if best else stated_ratios(findings, a, b, job, runs=runs)
    if stated:
        return stated
    ta, tb = answers[a].cost_throughput, answers[b].cost_throughput
    if ta.known and tb.known and (ESTIMATE in (ta.basis, tb.basis) or best):
        assert ta.value is not None and tb.value is not None
        basis = ESTIMATE if ESTIMATE in (ta.basis, tb.basis) else " and ".join(sorted({ta.basis, tb.basis}))
        return [_figure_ratio("faster", ta, tb, a, b, basis,
                              f"{sig(ta.value)} vs {sig(tb.value)} samples/s ({a}: {ta.source}; {b}: {tb.source})")]
    return []


def compare_energy(runs: pl.DataFrame, findings: pl.DataFrame, answers: dict[str, DeviceAnswer], a: str, b: str,
                   job: Job) -> list[Comparison]:
    found = like_for_like(runs, a, b, job, "j_per_sample")
    if found:
        winner, loser, f, low, high = _oriented(found.ratio, found.low, found.high, b, a)
        return [Comparison("fewer joules", winner, loser, f, found.basis,
                           f"J/example, geometric mean over {count(found.count, 'configuration')} both measured "
                           f"({found.configs})", low=low, high=high, grades=((a, found.grade_a), (b, found.grade_b)),
                           noise=found.noise)]
    fa, fb = answers[a], answers[b]
    quotes = [q for q in findings.filter(
        pl.col("metric").is_in(["j_per_iteration", "j_per_sample"]) & pl.col("subject_device").is_in([a, b])
        & pl.col("baseline_device").is_in([a, b]))["quote"].drop_nulls().to_list()]
    quote = quotes[0] if quotes else ""
    for pick in (lambda x: x.j_per_sample if x.j_per_sample.basis != ESTIMATE else None,
                 lambda x: x.j_per_iteration,
                 lambda x: x.j_per_sample):
        ga, gb = pick(fa), pick(fb)
        if ga is None or gb is None or not ga.known or not gb.known:
            continue
        assert ga.value is not None and gb.value is not None
        r = ga.value / gb.value
        w, lo = (gb, ga) if r >= 1 else (ga, gb)
        per = "per example" if ga.what == "Energy per example" else "per iteration"
        basis = " and ".join(sorted({ga.basis, gb.basis}))
        boundary = w.boundary if w.boundary == lo.boundary else f"{w.boundary} vs {lo.boundary}"
        detail = f"{sig(w.value)} vs {sig(lo.value)} J {per}, {boundary}; {w.setting} vs {lo.setting}"
        return [_figure_ratio("fewer joules", ga, gb, a, b, basis, detail, quote)]
    return []


def _leader(devices: list[str], comparisons: dict[tuple[str, str], list[Comparison]]) -> str | None:
    wins = dict.fromkeys(devices, 0)
    seen = False
    for found in comparisons.values():
        if found:
            seen = True
            if found[0].within_noise is not True:  # a difference within the noise is no win
                wins[found[0].winner] += 1
    if not seen:
        return None
    return max(devices, key=lambda d: wins[d])


# --- the answer ---------------------------------------------------------------------------

@dataclass(frozen=True)
class Gap:
    device: str
    what: str  # what is missing, as a sentence
    fill: str  # "run" | "upload" | "devices"
    prefill: dict[str, str] = field(default_factory=dict)


@dataclass
class Answer:
    job: Job
    settings: CostSettings
    constraints: Constraints
    devices: list[str]
    per_device: dict[str, DeviceAnswer]
    speed: dict[tuple[str, str], list[Comparison]]
    energy: dict[tuple[str, str], list[Comparison]]
    fits: dict[str, list[tuple[str, str]]]  # device -> [(status ok|fails|unknown, sentence)]
    gaps: list[Gap]
    best: dict[str, BestSetting] = field(default_factory=dict)  # devices taken at their best power setting
    not_best: dict[str, str] = field(default_factory=dict)  # the other devices, when asked: why not

    def costed(self) -> list[str]:
        """Devices with a cost, cheapest first at the chosen utilisation."""
        u = self.settings.utilisation
        have = [d for d in self.devices if self.per_device[d].terms is not None]
        return sorted(have, key=lambda d: self.per_device[d].cost_at(u) or math.inf)

    def crossovers(self) -> list[tuple[str, str, float]]:
        """(cheaper below u*, cheaper above u*, u*) for each pair of costed devices that swap."""
        out = []
        have = self.costed()
        for i, a in enumerate(have):
            for b in have[i + 1:]:
                ta, tb = self.per_device[a].terms, self.per_device[b].terms
                assert ta is not None and tb is not None
                u = crossover(ta, tb)
                if u is None:
                    continue
                low = a if ta.at(u / 2) < tb.at(u / 2) else b
                out.append((low, b if low == a else a, u))
        return out


def _fits(ans: DeviceAnswer, c: Constraints, currency: str) -> list[tuple[str, str]]:
    out: list[tuple[str, str]] = []
    checks = (
        (c.budget, ans.price, lambda v, lim: v <= lim, lambda lim: f"budget {money(lim, currency)}",
         lambda v: money(v, currency)),
        (c.max_power_w, ans.power, lambda v, lim: v <= lim, lambda lim: f"power cap {sig(lim)} W",
         lambda v: f"{sig(v)} W"),
        (c.min_memory_gb, ans.memory, lambda v, lim: v >= lim, lambda lim: f"at least {sig(lim)} GB memory",
         lambda v: f"{sig(v)} GB"),
        (c.max_p99_ms, ans.p99, lambda v, lim: v <= lim, lambda lim: f"p99 at most {sig(lim)} ms",
         lambda v: f"{sig(v)} ms"),
    )
    for limit, fig, good, name, show in checks:
        if limit is None:
            continue
        if not fig.known:
            out.append(("unknown", f"{name(limit)}: not known ({fig.missing_reason})"))
        elif good(fig.value, limit):
            out.append(("ok", f"{name(limit)}: fits ({show(fig.value)})"))
        else:
            out.append(("fails", f"{name(limit)}: fails ({show(fig.value)})"))
    return out


def _gaps(ans: DeviceAnswer, job: Job, rows: pl.DataFrame) -> list[Gap]:
    prefill = {"workload": job.workload or _workload_of(rows, job), "mode": job.mode}
    if job.precision:
        prefill["precision"] = job.precision
    seqs = rows["seq_len"].drop_nulls().unique().to_list() if rows.height else []
    if len(seqs) == 1:
        prefill["seq"] = str(seqs[0])
    prefill = {k: v for k, v in prefill.items() if v}
    gaps = []
    if not ans.throughput.known:
        gaps.append(Gap(ans.device, f"no measured {'training' if job.mode == 'train' else 'inference'} throughput",
                        "run", prefill))
    if not ans.j_per_sample.known and not ans.j_per_iteration.known:
        gaps.append(Gap(ans.device, "no energy figure", "run", prefill))
    if not ans.idle_power.known:
        gaps.append(Gap(ans.device, "no idle power (it decides the cost at low utilisation)", "run",
                        {**prefill, "idle": "30"}))
    if not ans.price.known:
        gaps.append(Gap(ans.device, ans.price.missing_reason or "no price", "devices"))
    return gaps


def _workload_of(rows: pl.DataFrame, job: Job) -> str:
    found = rows["workload"].drop_nulls().value_counts(sort=True) if rows.height else None
    if found is not None and found.height:
        return str(found["workload"][0])
    return f"{job.model}-ner" if job.model and job.model.startswith("bert") else (job.model or "")


def decide(runs: pl.DataFrame, findings: pl.DataFrame, catalog: pl.DataFrame, modes: pl.DataFrame, rates: Rates,
           devices: Iterable[str], job: Job, settings: CostSettings, constraints: Constraints,
           best: pl.DataFrame | None = None) -> Answer:
    """The answer for the candidates. With `best` (rows of explorer.power_settings.best_settings),
    each device with a recommended power setting is taken at it (`at_best_settings`)."""
    devices = list(dict.fromkeys(devices))[:MAX_DEVICES]
    chosen, not_best = best_of(best, devices) if best is not None else ({}, {})
    runs = at_best_settings(runs, job, chosen)
    by_name = {r["device_name"]: r for r in catalog.iter_rows(named=True)}
    per = {d: device_answer(runs, by_name.get(d, {"device_name": d}), modes, rates, job, settings) for d in devices}
    for d, b in chosen.items():
        _label_best(per[d], b, settings)
    pairs = [(a, b) for i, a in enumerate(devices) for b in devices[i + 1:]]
    speed = {p: compare_speed(runs, findings, per, *p, job, frozenset(chosen)) for p in pairs}
    energy = {p: compare_energy(runs, findings, per, *p, job) for p in pairs}
    _throughput_from_stated(per, speed, job, settings)
    fits = {d: _fits(per[d], constraints, settings.currency) for d in devices}
    gaps = [g for d in devices for g in _gaps(per[d], job, job_rows(runs, d, job))]
    return Answer(job, settings, constraints, devices, per, speed, energy, fits, gaps, chosen, not_best)


def _throughput_from_stated(per: dict[str, DeviceAnswer], speed: dict[tuple[str, str], list[Comparison]],
                            job: Job, settings: CostSettings) -> None:
    """Where a cost would rest on an estimated throughput (power ÷ J/example) and a source states
    the speed ratio of the pair, the cost uses the ratio's consequence instead: the other device's
    throughput (measured, or its estimate when both are estimates; then the faster device's is
    kept) times or divided by the stated ratio, labelled 'stated ratio' with the estimate it
    replaces. The ratio of the precision the energy figures use is preferred."""
    done: set[str] = set()
    for (a, b), found in speed.items():
        stated = [c for c in found if c.basis == STATED]
        ta, tb = per[a].cost_throughput, per[b].cost_throughput
        if not stated or not (ta.known and tb.known):
            continue
        estimated = [d for d in (a, b) if per[d].cost_throughput.basis == ESTIMATE and d not in done]
        if not estimated:
            continue
        energy_setting = per[a].cost_energy.setting.lower()
        c = next((c for c in stated if (finding_scope(c.detail)[1] or "") in energy_setting), stated[0])
        target = estimated[0] if len(estimated) == 1 else c.loser
        anchor = b if target == a else a
        if per[anchor].cost_throughput.basis == ESTIMATE and anchor != c.winner and len(estimated) == 2:
            continue
        old, base = per[target].cost_throughput, per[anchor].cost_throughput
        assert old.value is not None and base.value is not None
        value = base.value / c.factor if target == c.loser else base.value * c.factor
        op = "÷" if target == c.loser else "×"
        est_ratio = max(old.value / base.value, base.value / old.value)
        per[target].cost_throughput = replace(
            old, value=value, basis=STATED, grade=None, n=None, ci_low=None, ci_high=None, repeats=(),
            source=f"{sig(base.value)} samples/s ({anchor}'s throughput used for cost, {base.basis}) {op} "
                   f"{ratio(c.factor)}, the source's stated ratio ({c.detail}); preferred to the estimate from "
                   f"power ÷ energy ({old.source} = {sig(old.value)} samples/s, {ratio(est_ratio)} apart), "
                   "which disagrees with it")
        done.add(target)
        _set_cost(per[target], settings)


def price_coverage_warning(answer: Answer) -> str | None:
    """When the candidates' prices buy different things (a bare card vs a complete system), say so
    (Markdown, names escaped): the cost per sample then compares unlike purchases."""
    covers = {d: price_covers(answer.per_device[d].kind) for d in answer.devices if answer.per_device[d].price.known}
    if len(set(covers.values())) < 2:
        return None
    each = "; ".join(f"{_name(d)}'s price buys {md(c)}" for d, c in covers.items())
    return (f"**The prices compare different things:** {each}. A card needs a host PC, whose price is not in its "
            "cost; to compare like for like, enter the price of the card with its host "
            "on the Devices page.")


# --- each device at its best power setting ----------------------------------------------------

@dataclass(frozen=True)
class BestSetting:
    """A device's recommended power setting for a goal (a row of power_settings.best_settings)."""

    device: str
    workload: str
    setting: str  # "125 W", "mode 6 (30W)"
    measured: bool
    basis: str  # "measured at 125 W" | "predicted at 185 W (leave-one-out MAPE time 3.9%, power 0.8%)"
    recommendation: str  # the recommendation's sentence
    configuration: str
    power_limit_w: float | None = None
    power_mode_id: str | None = None
    precision: str | None = None
    batch_size: int | None = None
    throughput_sps: float | None = None  # predicted figures (None when the profile counts runs, not samples)
    j_per_sample: float | None = None
    avg_power_w: float | None = None


def profile_workloads(runs: pl.DataFrame, devices: Iterable[str], job: Job) -> dict[str, str | None]:
    """The workload whose power-setting profile stands for each device in this job: the job's own,
    else the device's workload with the most power settings among the job's rows (None: no rows)."""
    out: dict[str, str | None] = {}
    for d in devices:
        if job.workload:
            out[d] = job.workload
            continue
        rows = job_rows(runs, d, job).filter((pl.col("status") == "ok") & pl.col("workload").is_not_null())
        if rows.is_empty():
            out[d] = None
            continue
        counts = (rows.group_by("workload").agg(pl.col("power_setting").n_unique().alias("settings"), pl.len())
                  .sort(["settings", "len", "workload"], descending=[True, True, False]))
        out[d] = str(counts["workload"][0])
    return out


def best_of(best: pl.DataFrame, devices: Iterable[str]) -> tuple[dict[str, BestSetting], dict[str, str]]:
    """(devices with a recommended setting, the others with why not) from best_settings rows."""
    chosen: dict[str, BestSetting] = {}
    why: dict[str, str] = {}
    rows = {r["device_name"]: r for r in best.iter_rows(named=True)} if not best.is_empty() else {}
    for d in devices:
        r = rows.get(d)
        if r is None:
            why[d] = "no runs of this job on this device, so no power-setting profile"
        elif r.get("power_setting") is None:
            why[d] = str(r.get("why_not") or "no recommended setting")
        else:
            measured = r["setting_basis"] == "measured"
            detail = str(r["setting_basis"]).removeprefix("predicted, ")
            basis = f"measured at {r['power_setting']}" if measured else \
                f"predicted at {r['power_setting']} ({detail})"
            chosen[d] = BestSetting(d, str(r["workload"]), str(r["power_setting"]), measured, basis,
                                    str(r.get("recommendation") or ""), str(r.get("configuration") or ""),
                                    r.get("power_limit_w"), r.get("power_mode_id"), r.get("precision"),
                                    r.get("batch_size"), r.get("throughput_sps"), r.get("j_per_sample"),
                                    r.get("avg_power_w"))
    return chosen, why


def _at_setting(b: BestSetting) -> pl.Expr:
    """Runs of the profile's configuration at the recommended setting."""
    match = pl.col("workload") == b.workload
    if b.power_limit_w is not None:
        match &= pl.col("power_limit_w") == b.power_limit_w
    elif b.power_mode_id is not None:
        match &= pl.col("power_mode").str.split(" ").list.first() == b.power_mode_id
    else:
        return pl.lit(False)
    if b.precision is not None:
        match &= pl.col("precision") == b.precision
    if b.batch_size is not None:
        match &= pl.col("batch_size") == b.batch_size
    return match


def at_best_settings(runs: pl.DataFrame, job: Job, chosen: dict[str, BestSetting]) -> pl.DataFrame:
    """The runs with each chosen device's job rows narrowed to its recommended setting: the runs at
    it where it was measured, none where it is predicted (its figures then come from the model)."""
    drop: list[str] = []
    for d, b in chosen.items():
        rows = job_rows(runs, d, job)
        keep = rows.filter(_at_setting(b)) if b.measured else rows.clear()
        drop += rows.filter(~pl.col("run_id").is_in(keep["run_id"].to_list()))["run_id"].to_list()
    return runs.filter(~pl.col("run_id").is_in(drop)) if drop else runs


def _label_best(ans: DeviceAnswer, b: BestSetting, settings: CostSettings) -> None:
    """Label the device's figures with its setting: 'measured at 125 W' on those from its runs, or
    the model's predictions ('predicted at 185 W (leave-one-out MAPE ...)') in place of its figures."""
    run_based = set(BASIS_NAMES.values())
    if b.measured:
        for name in ("throughput", "j_per_sample", "j_per_iteration", "power", "p99", "cost_throughput",
                     "cost_energy"):
            f = getattr(ans, name)
            if f.known and f.basis in run_based:
                setattr(ans, name, replace(f, basis=b.basis, source=f"{f.basis}; {b.recommendation}; {f.source}"))
        return
    why = (f"the {b.setting} setting is predicted; the profile ({b.configuration}) counts runs, not samples, "
           "so no per-sample figure is predicted")
    source = f"{b.configuration}; {b.recommendation}"

    def predicted(what: str, value: float | None, unit: str) -> Figure:
        if value is None:
            return _missing(ans.device, what, unit, why)
        return Figure(ans.device, what, float(value), unit, b.basis, config=b.configuration, source=source,
                      setting=b.setting)

    ans.throughput = ans.cost_throughput = predicted("Throughput", b.throughput_sps, "samples/s")
    ans.j_per_sample = ans.cost_energy = predicted("Energy per example", b.j_per_sample, "J")
    ans.j_per_iteration = _missing(ans.device, "Energy per iteration", "J", f"not predicted at {b.setting}")
    ans.power = predicted("Power while running", b.avg_power_w, "W")
    ans.p99 = _missing(ans.device, "p99 latency per batch (lowest)", "ms",
                       f"latency is not predicted for a power setting ({b.setting} was not measured)")
    _set_cost(ans, settings)


def best_setting_notes(answer: Answer) -> tuple[list[str], list[str]]:
    """(one sentence per device taken at its best setting, one per device that stays at its measured
    figures and why), Markdown with every name escaped."""
    at_best = [f"{_name(d)} at {md(b.setting)} ({md(b.basis)}): {md(b.configuration)}, {md(b.recommendation)}."
               for d, b in answer.best.items()]
    stays = [f"{_name(d)} stays at its measured figures: {md(why)}." for d, why in answer.not_best.items()]
    return at_best, stays


# --- what the page says -------------------------------------------------------------------

def _name(device: str) -> str:
    return f"**{md(device)}**"


def _grades_text(c: Comparison) -> str:
    """'grades C vs D' (winner vs loser), or 'not graded' where nothing is stored."""
    gw, gl = c.grade_of(c.winner), c.grade_of(c.loser)
    if gw is None and gl is None:
        return NOT_GRADED
    if gw == gl:
        return f"grade {gw} on both sides"
    return f"grades {gw or NOT_GRADED} vs {gl or NOT_GRADED}"


def _comparison_sentence(c: Comparison, what: str, either: str, quoted: set[str]) -> str:
    """One comparison with its interval and grades; a source's quote is given once per page section.
    `what`: 'is faster at training than'; `either`: 'either is faster at training' (for the noise)."""
    about = f"(*{md(c.basis)}*, {_grades_text(c)}: {md(c.detail)}" + (f"; {md(c.noise)}" if c.noise else "") + ")"
    if c.low is not None and c.high is not None and c.within_noise:
        text = (f"{_name(c.winner)} vs {_name(c.loser)}: {c.factor:.2f}x ({c.low:.2f}-{c.high:.2f}, 95 % "
                f"interval), **within the noise**: the interval includes 1x, so the data does not show that "
                f"{either} {about}")
    elif c.low is not None and c.high is not None:
        text = (f"{_name(c.winner)} {what} {_name(c.loser)}: {c.factor:.2f}x ({c.low:.2f}-{c.high:.2f}, 95 % "
                f"interval) {about}")
    elif same_ratio(c.factor):
        alike = "are about as fast as each other" if c.what == "faster" else "use about as many joules"
        text = f"{_name(c.winner)} and {_name(c.loser)} {alike}: {c.factor:.2f}x, which rounds to 1.0x {about}"
    else:
        text = f"{_name(c.winner)} {what} {_name(c.loser)}: {ratio(c.factor)} {about}"
    if c.quote and c.quote not in quoted:
        quoted.add(c.quote)
        text += f" — “{md(c.quote)}”"
    return text


def speed_sentences(answer: Answer) -> list[str]:
    leader = _leader(answer.devices, answer.speed)
    mode = "training" if answer.job.mode == "train" else "inference"
    if leader is None:
        return [f"**Faster:** the data holds no like-for-like {mode} throughput, stated ratio or estimate for "
                "these devices (see what is missing below)."]
    lines: list[str] = []
    quoted: set[str] = set()
    for other in answer.devices:
        if other == leader:
            continue
        pair = (leader, other) if (leader, other) in answer.speed else (other, leader)
        for c in answer.speed[pair]:
            lines.append(_comparison_sentence(c, f"is faster at {mode} than", f"either is faster at {mode}", quoted))
        if not answer.speed[pair]:
            lines.append(f"{_name(other)}: no like-for-like {mode} throughput, stated ratio or estimate "
                         f"against {_name(leader)}.")
    return [f"**Faster:** {lines[0]}", *lines[1:]] if lines else []


def energy_sentences(answer: Answer) -> list[str]:
    leader = _leader(answer.devices, answer.energy)
    if leader is None:
        return ["**Fewer joules:** the data holds no energy figure for both of any two of these devices "
                "(see what is missing below)."]
    lines: list[str] = []
    quoted: set[str] = set()
    for other in answer.devices:
        if other == leader:
            continue
        pair = (leader, other) if (leader, other) in answer.energy else (other, leader)
        for c in answer.energy[pair]:
            lines.append(_comparison_sentence(c, "uses fewer joules than", "either uses fewer joules", quoted))
        if not answer.energy[pair]:
            lines.append(f"{_name(other)}: no energy figure to compare with {_name(leader)}.")
    return [f"**Fewer joules:** {lines[0]}", *lines[1:]] if lines else []


def cost_sentences(answer: Answer) -> list[str]:
    s = answer.settings
    u = s.utilisation
    cur = s.currency
    costed = answer.costed()
    head = (f"**Cost per 1M samples** at {u * 100:.0f}% utilisation over {s.lifetime_years:g} years, "
            f"{s.electricity_per_kwh:g} {cur} per kWh:")
    parts = []
    for d in answer.devices:
        ans = answer.per_device[d]
        if ans.terms is None:
            parts.append(f"{_name(d)} not known ({md(ans.cost_missing)})")
            continue
        bases = sorted({ans.cost_throughput.basis, ans.cost_energy.basis})
        entered = ans.price.source.rsplit("; ", 1)[-1] if ans.price.basis == ENTERED else ""
        price = f"; price {md(entered)}" if entered else ""
        parts.append(f"{_name(d)} {md(money(ans.cost_at(u), cur))} (*{md(' and '.join(bases))}*{price})")
    lines = [head + " " + "; ".join(parts) + "."]
    used = [f"{_name(d)} {md(answer.per_device[d].cost_throughput.shown())} ({_throughput_why(answer.per_device[d])})"
            for d in costed]
    if used:
        lines.append("**Throughput each cost uses:** " + "; ".join(used) + ".")
    if len(costed) >= 2:
        best, second = costed[0], costed[1]
        cb, cs = answer.per_device[best].cost_at(u), answer.per_device[second].cost_at(u)
        assert cb is not None and cs is not None
        if cb > 0 and same_ratio(cs / cb):
            lines.append(f"**Cheapest per sample at {u * 100:.0f}% utilisation:** {_name(best)} and {_name(second)} "
                         f"cost about the same ({cs / cb:.2f}x).")
        else:
            lines.append(f"**Cheapest per sample at {u * 100:.0f}% utilisation:** {_name(best)}, "
                         f"{ratio(cs / cb) if cb > 0 else ''} cheaper than {_name(second)}.")
    lines.extend(duty_cycle_sentences(answer))
    lines.extend(estimate_caveats(answer))
    return lines


def _throughput_why(ans: DeviceAnswer) -> str:
    """Why the cost uses this throughput, in a few words (the figure table has the derivation)."""
    f = ans.cost_throughput
    if f.basis == STATED:
        return md(f.source.split(", the source's stated ratio", 1)[0]) + ", the source's stated speed ratio"
    if f.basis == ESTIMATE and f is not ans.throughput and not ans.throughput.known:
        return "estimated as power while running ÷ J/example: no throughput measured"
    if f.basis == ESTIMATE:
        return "measured in another configuration than the energy figure, so an estimate"
    return f"{md(f.basis)}, in the same configuration as the energy figure"


def estimate_caveats(answer: Answer, tolerance: float = 0.25) -> list[str]:
    """Where a cost rests on estimated throughputs whose ratio disagrees with a stated or
    like-for-like ratio by more than `tolerance`, say so: the costs are then rough."""
    lines = []
    for (a, b), found in answer.speed.items():
        ta, tb = answer.per_device[a].cost_throughput, answer.per_device[b].cost_throughput
        if not (ta.known and tb.known) or ESTIMATE not in (ta.basis, tb.basis):
            continue
        assert ta.value is not None and tb.value is not None
        trusted = [c for c in found if c.basis != ESTIMATE]
        if not trusted:
            continue
        est = ta.value / tb.value
        stated = [c.factor if c.winner == a else 1 / c.factor for c in trusted]
        if all(abs(est / s - 1) > tolerance for s in stated):
            shown = " to ".join(ratio(x) for x in sorted({round(max(v, 1 / v), 1) for v in stated}))
            lines.append(f"*Caveat:* the estimated throughputs behind these costs ({md(sig(ta.value))} vs "
                         f"{md(sig(tb.value))} samples/s, {ratio(max(est, 1 / est))}) disagree with the "
                         f"{md(trusted[0].basis)} ({shown}) between {_name(a)} and {_name(b)}: treat the "
                         "costs as rough until a run measures throughput and energy together.")
    return lines


COST_PARTS = ("electricity while busy", "electricity while idle", "hardware")
DOMINANT_SHARE = 0.5  # a part above half of the cost dominates it
SMALL_SHARE = 0.1  # parts below a tenth of the cost add little


def cost_shares(terms: CostTerms, u: float) -> dict[str, float]:
    """Each part's share of the cost per sample at utilisation u (they add up to 1)."""
    split = terms.split(u)
    total = sum(split.values())
    return {k: (v / total if total > 0 else 0.0) for k, v in split.items()}


def _share_words(shares: dict[str, float]) -> str:
    """What the numbers say about the parts: which dominates (over half), which add little (under
    a tenth), with the percentages."""
    ordered = sorted(shares.items(), key=lambda kv: kv[1], reverse=True)
    top, top_share = ordered[0]
    small = [f"{k} {pct(v)}" for k, v in ordered[1:] if round(v * 100) < SMALL_SHARE * 100]
    rest = [f"{k} {pct(v)}" for k, v in ordered[1:] if round(v * 100) >= SMALL_SHARE * 100]
    if top_share > DOMINANT_SHARE:
        text = f"{top} dominates ({pct(top_share)})"
    else:
        text = f"no part dominates: {top} {pct(top_share)}"
    if rest:
        text += ", then " + ", ".join(rest)
    if small:
        text += "; " + " and ".join(small) + (" add" if len(small) > 1 else " adds") + " little"
    return text


def duty_cycle_sentences(answer: Answer) -> list[str]:
    """The duty cycle in sentences whose words follow the numbers: each device's cost split into
    busy electricity, idle electricity and hardware, with the share of each and which dominates."""
    s = answer.settings
    u = s.utilisation
    cur = s.currency
    costed = answer.costed()
    if not costed:
        return []
    idle_share = 1 - u
    parts = []
    for d in costed:
        ans = answer.per_device[d]
        assert ans.terms is not None
        split = ans.terms.split(u)
        total = ans.terms.at(u)
        shares = cost_shares(ans.terms, u)
        idle_w = f"{sig(ans.idle_power.value)} W idle" if ans.idle_power.known else "idle power not measured"
        parts.append(f"{_name(d)} ({md(idle_w)}): of {md(money(total, cur))}, hardware "
                     f"{md(money(split['hardware'], cur))} ({pct(shares['hardware'])}), electricity while busy "
                     f"{md(money(split['electricity while busy'], cur))} ({pct(shares['electricity while busy'])}), "
                     f"idle electricity {md(money(split['electricity while idle'], cur))} "
                     f"({pct(shares['electricity while idle'])}): {_share_words(shares)}")
    if u >= 0.999:
        head = ("**Duty cycle:** busy all the time, so idle power costs nothing and the price is spread over the "
                "most samples")
    else:
        head = f"**Duty cycle:** at {u * 100:.0f}% utilisation each device idles {idle_share * 100:.0f}% of the time"
    lines = [head + ": " + "; ".join(parts) + "."]
    flips = answer.crossovers()
    if flips:
        for low, high, at in flips:
            lines.append(f"**Crossover:** below {at * 100:.0f}% utilisation {_name(low)} is cheaper per sample; "
                         f"above it, {_name(high)}.")
    elif len(costed) >= 2:
        lines.append(f"**No crossover:** {_name(costed[0])} stays the cheapest per sample at every utilisation "
                     "from 1% to 100%.")
    missing_idle = [d for d in costed if not answer.per_device[d].idle_power.known]
    if missing_idle:
        lines.append("Idle power not measured for " + ", ".join(_name(d) for d in missing_idle)
                     + ": their idle electricity is left out, so their cost at low utilisation is understated.")
    return lines


def fit_status(answer: Answer, device: str) -> str:
    """'fits', 'fails' (a constraint is broken) or 'unknown' (a figure a constraint needs is missing)."""
    checks = answer.fits[device]
    return ("fails" if any(st == "fails" for st, _ in checks) else
            "unknown" if any(st == "unknown" for st, _ in checks) else "fits")


def constraint_sentences(answer: Answer) -> list[str]:
    if not answer.constraints.any():
        return []
    lines = []
    for d in answer.devices:
        checks = answer.fits[d]
        word = {"fits": "fits the constraints", "fails": "does not fit",
                "unknown": "may fit (not all is known)"}[fit_status(answer, d)]
        lines.append(f"{_name(d)} {word}: " + "; ".join(md(t) for _, t in checks) + ".")
    return ["**Constraints:** " + lines[0], *lines[1:]] if lines else []


def same_ratio(factor: float) -> bool:
    """A ratio that rounds to 1.0x says no difference: 'about as fast', never '1.0x faster'."""
    return ratio(factor) == "1.0x"


def _settled(leader: str, comparisons: dict[tuple[str, str], list[Comparison]]) -> bool:
    """Whether the leader wins at least one comparison by more than the noise (and more than 1.0x)."""
    return any(c.winner == leader and c.within_noise is not True and not same_ratio(c.factor)
               for found in comparisons.values() for c in found[:1])


def _among(pool: list[str], comparisons: dict[tuple[str, str], list[Comparison]]
           ) -> dict[tuple[str, str], list[Comparison]]:
    return {p: v for p, v in comparisons.items() if p[0] in pool and p[1] in pool}


def _summary(answer: Answer, pool: list[str]) -> list[str]:
    """Who is faster, who uses fewer joules, who is cheapest per sample among `pool`."""
    parts = []
    speed, energy = _among(pool, answer.speed), _among(pool, answer.energy)
    fast = _leader(pool, speed) if len(pool) > 1 else None
    if fast and not _settled(fast, speed):
        parts.append("no difference in speed shown (within the noise, or about 1.0x)")
        fast = None
    elif fast:
        parts.append(f"{_name(fast)} is faster")
    frugal = _leader(pool, energy) if len(pool) > 1 else None
    if frugal and not _settled(frugal, energy):
        parts.append("no difference in joules shown (within the noise, or about 1.0x)")
    elif frugal:
        parts.append(f"{_name(frugal)} uses fewer joules" if frugal != fast else "and uses fewer joules")
    costed = [d for d in answer.costed() if d in pool]
    u = answer.settings.utilisation
    if len(costed) >= 2:
        parts.append(f"{_name(costed[0])} costs least per sample at {u * 100:.0f}% utilisation")
    return parts


def _best_fitting(answer: Answer, pool: list[str]) -> tuple[str, str]:
    """The best of the devices that fit, and why: the cheapest per sample, else the fastest, else
    the one that uses fewest joules, else the only one."""
    u = answer.settings.utilisation
    costed = [d for d in answer.costed() if d in pool]
    if costed:
        cost = answer.per_device[costed[0]].cost_at(u)
        return costed[0], (f"it costs least per sample at {u * 100:.0f}% utilisation "
                           f"({md(money(cost, answer.settings.currency))} per 1M samples)")
    for comparisons, word in ((answer.speed, "it is the fastest"), (answer.energy, "it uses the fewest joules")):
        leader = _leader(pool, _among(pool, comparisons)) if len(pool) > 1 else None
        if leader:
            return leader, word
    return pool[0], "the only candidate that fits" if len(pool) == 1 else "the data cannot rank them further"


def headline(answer: Answer) -> str:
    """One sentence: with constraints that rule devices out, the best device that fits them (or
    that none does, and why); then who is faster, who uses fewer joules, who is cheapest per
    sample at the chosen utilisation among the devices that fit (each only where the data can say)."""
    pool = list(answer.devices)
    lead = ""
    if answer.constraints.any():
        failed = [d for d in answer.devices if fit_status(answer, d) == "fails"]
        fits = [d for d in answer.devices if fit_status(answer, d) == "fits"]
        maybe = [d for d in answer.devices if fit_status(answer, d) == "unknown"]
        why_out = "; ".join(f"{_name(d)} breaks " + ", ".join(md(t.replace(": fails (", " (is "))
                                                             for st, t in answer.fits[d] if st == "fails")
                            for d in failed)
        if failed and not fits and not maybe:
            return (f"**In short:** none of these devices fits the constraints: {why_out}. Relax a constraint in "
                    "the sidebar or add candidates.")
        if failed:
            pool = fits or maybe
            best, why = _best_fitting(answer, pool)
            unsure = "" if fits else " (it may fit: not every figure a constraint needs is known)"
            lead = (f"the best device that fits the constraints is {_name(best)}{unsure}: {why}. Ruled out: "
                    f"{why_out}")
    parts = _summary(answer, pool)
    if lead:
        among = f"; among those that fit, {'; '.join(parts)}" if len(pool) > 1 and parts else ""
        text = (lead + among).replace("is faster; and uses", "is faster and uses")
        return f"**In short:** {text}. The reasons and the basis of each figure follow."
    if not parts:
        return "**In short:** the data cannot compare these devices for this job yet; see what is missing below."
    text = "; ".join(parts).replace("is faster; and uses", "is faster and uses")
    return f"**In short:** {text}. The reasons and the basis of each figure follow."


def device_grades(answer: Answer) -> dict[str, str | None]:
    """Each candidate's worst grade among the figures the answer rests on: throughput, energy, idle
    power, the figures its cost uses, and the comparisons it takes part in (None: nothing graded)."""
    out: dict[str, str | None] = {}
    for d in answer.devices:
        ans = answer.per_device[d]
        figs = [ans.throughput, ans.j_per_sample, ans.j_per_iteration, ans.idle_power, ans.cost_throughput,
                ans.cost_energy]
        grades = [f.grade for f in figs if f.known]
        grades += [c.grade_of(d) for found in [*answer.speed.values(), *answer.energy.values()] for c in found
                   if d in (c.winner, c.loser)]
        out[d] = worst_grade(grades)
    return out


def grade_warning(answer: Answer) -> str | None:
    """The warning (Markdown) when the answer rests on figures graded C or D: who, which grade, and
    what would settle it; None otherwise."""
    return low_grade_warning(device_grades(answer), "This answer")


def verdict(answer: Answer) -> list[str]:
    """The answer in sentences (Markdown, every name and citation escaped)."""
    covers = price_coverage_warning(answer)
    return [headline(answer), *speed_sentences(answer), *energy_sentences(answer), *cost_sentences(answer),
            *([covers] if covers else []), *constraint_sentences(answer)]


# --- the table ----------------------------------------------------------------------------

N_COLUMN, CI_COLUMN, GRADE_COLUMN = "Repeats (n)", "95% interval", "Trust grade"
OPTIONAL_COLUMNS = (N_COLUMN, CI_COLUMN, GRADE_COLUMN)
# what each column of the figure table holds, for its header's help
FIGURE_COLUMN_HELP = {
    "Value": "'not measured': the reason is in the last column",
    "Basis": "measured here (a run on this machine), imported (an uploaded file), reference table (shipped with the "
             "app), stated ratio (a source's ratio), estimate (derived with the assumption stated), catalog; with the "
             "best-setting toggle: measured at a setting, or predicted at it with the model's leave-one-out error",
    "Boundary": "where the power was measured",
    N_COLUMN: "runs of the configuration that measured the figure; the value is their mean",
    CI_COLUMN: "95% confidence interval of the mean (Student's t), with two or more repeats",
    GRADE_COLUMN: "A best .. D unreliable; see 'What the grades mean' below",
}


def page_query(devices: list[str], mode: str, scope: str, precision: str, settings: CostSettings,
               constraints: Constraints, goal: str | None, seq: str = "any") -> dict[str, list[str]]:
    """Decide's link: what is picked, the input size, the cost settings, the constraints set, the
    best-setting goal."""
    query = {"device": devices, "mode": [mode], "job": [scope], "precision": [precision], "seq": [seq],
             **settings.to_query(), **constraints.to_query()}
    if goal is not None:
        query.update({"best": ["1"], "goal": [goal]})
    return query


def _grade_cell(f: Figure) -> str | None:
    """The figure's stored grade; 'not graded' for a figure from data that stores none (a stated
    ratio, an estimate); empty for the catalog and what is not measured."""
    if not f.known:
        return None
    if f.grade is not None:
        return f.grade
    return None if f.basis == "catalog" else NOT_GRADED


def _interval_cell(f: Figure) -> str | None:
    if f.ci_low is None or f.ci_high is None:
        return None
    return f"{sig(f.ci_low)}–{sig(f.ci_high)} {f.unit}".strip()


def figure_table(answer: Answer) -> pl.DataFrame:
    """One row per figure and device, with basis, boundary, configuration and source; the
    optional columns (repeats n, 95% interval, trust grade) appear when any figure carries them."""
    u = answer.settings.utilisation
    cur = answer.settings.currency
    rows: list[dict[str, Any]] = []
    for d in answer.devices:
        ans = answer.per_device[d]
        figs = ans.figures(answer.job.mode == "infer" or answer.constraints.max_p99_ms is not None)
        if ans.cost_throughput is not ans.throughput:
            figs.insert(1, replace(ans.cost_throughput, what="Throughput used for cost"))
        if ans.cost_energy is not ans.j_per_sample:
            figs.insert(2, replace(ans.cost_energy, what="Energy per example used for cost"))
        cost = ans.cost_at(u)
        bases = sorted({ans.cost_throughput.basis, ans.cost_energy.basis}) if cost is not None else []
        figs.append(Figure(d, f"Cost per 1M samples at {u * 100:.0f}% utilisation", cost, cur,
                           " and ".join(bases) if cost is not None else "not measured",
                           source="electricity while busy and idle + hardware (formula below); its grade is the "
                                  "lower of the throughput's and the energy's",
                           missing_reason=ans.cost_missing,
                           grade=worst_grade([ans.cost_throughput.grade, ans.cost_energy.grade])))
        for f in figs:
            rows.append({"Device": d, "Figure": f.what, "Value": f.shown(), "Basis": f.basis,
                         "Boundary": f.boundary, "Configuration": f.config,
                         "Source or derivation": f.source if f.known else f.missing_reason,
                         N_COLUMN: f.n if f.known else None, CI_COLUMN: _interval_cell(f),
                         GRADE_COLUMN: _grade_cell(f)})
        if ans.ooms:
            rows.append({"Device": d, "Figure": "Out of memory (a recorded outcome)", "Value": "; ".join(ans.ooms[:4]),
                         "Basis": ans.oom_basis, "Boundary": "", "Configuration": "",
                         "Source or derivation": f"{count(len(ans.ooms), 'configuration')} ran out of memory"})
    frame = pl.DataFrame(rows, schema={"Device": pl.String, "Figure": pl.String, "Value": pl.String,
                                       "Basis": pl.String, "Boundary": pl.String, "Configuration": pl.String,
                                       "Source or derivation": pl.String, N_COLUMN: pl.Int64, CI_COLUMN: pl.String,
                                       GRADE_COLUMN: pl.String})
    empty = [c for c in OPTIONAL_COLUMNS if frame[c].is_null().all()]
    return frame.drop(empty)


def cost_curve(answer: Answer, start_pct: int = 5) -> pl.DataFrame:
    """Cost per 1M samples against utilisation (`start_pct`% to 100%) for each costed device."""
    rows = []
    for d in answer.costed():
        terms = answer.per_device[d].terms
        assert terms is not None
        for percent in range(start_pct, 101):
            u = percent / 100
            rows.append({"device": d, "utilisation": u, "cost": terms.at(u)})
    return pl.DataFrame(rows, schema={"device": pl.String, "utilisation": pl.Float64, "cost": pl.Float64})


def device_bars(answer: Answer) -> pl.DataFrame:
    """The throughput and J/example each costed figure rests on, per device, for the bar chart:
    value, a short label (value, unit, input size, grade) and a hover text with the basis."""
    rows = []
    for d in answer.devices:
        ans = answer.per_device[d]
        for what, fig in (("Throughput", ans.cost_throughput), ("Energy per example", ans.cost_energy)):
            if not fig.known:
                continue
            size = next((p for p in f"{fig.setting} · {fig.config}".split(" · ") if p.startswith("seq ")),
                        "input size not stated")
            grade = f"grade {fig.grade}" if fig.grade else NOT_GRADED
            rows.append({"device": d, "figure": what, "value": fig.value,
                         "label": f"{fig.shown()}, {size}, {grade}",
                         "hover": f"{d}: {in_sentence(what)} {fig.shown()} ({fig.basis}); {fig.setting or fig.config}; "
                                  f"{grade}"})
    return pl.DataFrame(rows, schema={"device": pl.String, "figure": pl.String, "value": pl.Float64,
                                      "label": pl.String, "hover": pl.String})

