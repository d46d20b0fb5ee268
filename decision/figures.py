"""Figures: each number Decide shows, with where it comes from, and each candidate device's answer.

For each candidate it gathers the figures the data holds for the job (throughput, joules per
example or per iteration, idle power, price, memory, p99 latency), each with its basis:

- measured here (a local run), imported (an uploaded file), reference table (shipped data);
- stated ratio: a ratio a source states between two devices (findings), used where no pair of
  absolute figures exists;
- estimate: derived with a stated assumption (examples per iteration taken from the source's
  other rows; throughput = estimated power while running ÷ J/example; energy = TDP ÷ throughput).

The cost of a sample (decision.money) uses one operating point per device: a configuration that
measured both throughput and energy (the cheapest), else the figures as they are with the missing
one estimated, labelled.
"""

from __future__ import annotations

import math
from dataclasses import dataclass, field, replace
from typing import Any

import polars as pl

from decision.money import CostSettings, CostTerms, Rates, cost_terms, price_covers, price_entered, price_origin
from decision.scope import Job, idle_rows, job_rows
from decision.text import ENERGY_ESTIMATED, basis_of, batch_label, boundary_name, energy_estimate, precision_name, sig
from energy.stats import aggregate

ESTIMATE = "estimate"
ENTERED = "entered by you"
STATED = "stated ratio"

WALL_LIKE = ("wall", "system")

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


def missing(device: str, what: str, unit: str, reason: str) -> Figure:
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
    where the run comes from (measured here, imported, reference table), 'energy partly estimated' where
    the tool that wrote it modelled part of the energy (decision.text.energy_estimate)."""
    estimate = (energy_estimate(row.get("energy_method"), row.get("energy_boundary"), row.get("flags"))
                if energy else None)
    if estimate == ENERGY_ESTIMATED:
        return ESTIMATE
    return basis_of(row.get("source_kind"), estimate)


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
    """What Decide says about one candidate device, for one of its two questions:

    - per sample for a job (`decide.decide`): its figures, each known or missing with the reason, and
      the operating point its cost uses (`cost_throughput`, `cost_energy`);
    - per output token at a latency target (`token_target.answer`): `status` (meets | misses | not
      known), the configuration the answer rests on (`best`, a row of the configurations table) and `why`;
      the per-sample figures are then missing, with that reason.

    Either way the cost per 1M samples or output tokens at the chosen utilisation is `cost_per_1m`, with
    its parts (`terms`, A + B ÷ u), or None and `cost_missing` says why."""

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
    cost_per_1m: float | None = None  # at the chosen utilisation
    cost_missing: str = ""
    ooms: list[str] = field(default_factory=list)  # configurations recorded as out of memory
    oom_basis: str = ""
    status: str = ""  # the per-token question: meets | misses | not known
    best: dict[str, Any] | None = None  # the per-token question: the configuration it rests on
    why: str = ""  # the per-token question: why it misses the target or is not known

    @classmethod
    def per_token(cls, device: str, kind: str | None, status: str, best: dict[str, Any] | None, why: str,
                  terms: CostTerms | None = None, cost_per_1m: float | None = None,
                  cost_missing: str = "") -> DeviceAnswer:
        """The answer to the per-token question; the per-sample figures are missing, saying so."""
        def not_asked(what: str, unit: str) -> Figure:
            return missing(device, what, unit, "asked per output token, not per sample")

        tp, j = not_asked("Throughput", "samples/s"), not_asked("Energy per example", "J")
        return cls(device, kind, tp, j, not_asked("Energy per iteration", "J"), not_asked("Idle power", "W"),
                   not_asked("Price", ""), not_asked("Memory", "GB"),
                   not_asked("p99 latency per batch (lowest)", "ms"), not_asked("Power while running", "W"), tp, j,
                   terms, cost_per_1m, cost_missing, status=status, best=best, why=why)

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
                  missing(device, "Throughput", "samples/s", f"no {mode_word} throughput for {scope} in the data"))

    # energy per example: stated, or J/iteration over the examples of one iteration
    j_row = _best_row(ok, "j_per_sample", highest=False)
    it_row = _best_row(ok, "j_per_iteration", highest=False)
    j_iter = (_from_row(device, "Energy per iteration", "j_per_iteration", "J", it_row, energy=True, rows=ok)
              if it_row is not None else missing(device, "Energy per iteration", "J", f"no J/iteration for {scope}"))
    if j_row is not None:
        j_sample = _from_row(device, "Energy per example", "j_per_sample", "J", j_row, energy=True, rows=ok)
    elif it_row is not None:
        row = it_row
        per_it = _examples_per_iteration(rows, row)
        if per_it is None:
            j_sample = missing(device, "Energy per example", "J",
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
        j_sample = missing(device, "Energy per example", "J", f"no {mode_word} energy figure for {scope} in the data")

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
        idle_fig = missing(device, "Idle power", "W", "no idle measurement for this device: measure one with a "
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
              if cat.get("memory_gb") else missing(device, "Memory", "GB", "the catalog gives no memory size"))
    p99_row = _best_row(ok, "latency_p99_ms", highest=False)
    p99 = (_from_row(device, "p99 latency per batch (lowest)", "latency_p99_ms", "ms", p99_row, rows=ok)
           if p99_row is not None else missing(device, "p99 latency per batch (lowest)", "ms",
                                            f"no latency percentiles for {scope}"))
    oom_rows = rows.filter(pl.col("status") == "oom")
    ooms = [config_label(r) for r in oom_rows.iter_rows(named=True)]
    oom_basis = " and ".join(sorted({basis_of(k) for k in oom_rows["source_kind"].to_list()}))

    # power drawn while running, at the configuration whose figures the answer compares (the fastest, else the one
    # of the energy figure): a power cap is checked on the configuration a claim uses, never on another one;
    # else the cap of the setting, else TDP
    pw_row = next((r for r in (tp_row, energy_row) if r is not None and r.get("avg_power_w") is not None),
                  None) or _best_row(ok, "avg_power_w", highest=False)  # else the one measured, named by its config
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
        power = missing(device, "Power while running", "W", "no power measurement and no TDP in the catalog")

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
    set_cost(ans, settings)


def set_cost(ans: DeviceAnswer, settings: CostSettings) -> None:
    """The cost terms from the figures the cost uses, and the cost at the chosen utilisation; or why
    there are none."""
    ans.terms = ans.cost_per_1m = None
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
    ans.cost_per_1m = ans.terms.at(settings.utilisation)
