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

from explorer.markdown import md
from explorer.money import CostSettings, CostTerms, Rates, cost_terms, crossover
from explorer.text import basis_of, batch_label, boundary_name, money, precision_name, ratio, sig

MAX_DEVICES = 6
ESTIMATE = "estimate"
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

    def describe(self) -> str:
        what = self.workload or (f"{self.model} (any task)" if self.model else "any workload")
        prec = f", {precision_name(self.precision)}" if self.precision else ""
        return f"{what}, {'training' if self.mode == 'train' else 'inference'}{prec}"


@dataclass(frozen=True)
class Constraints:
    budget: float | None = None  # per device, display currency
    max_power_w: float | None = None
    min_memory_gb: float | None = None
    max_p99_ms: float | None = None

    def any(self) -> bool:
        return any(v is not None for v in (self.budget, self.max_power_w, self.min_memory_gb, self.max_p99_ms))


def scopes(runs: pl.DataFrame, mode: str) -> list[str]:
    """Job choices for a mode: each model class ('model:bert-large') and each workload."""
    of_mode = runs.filter(pl.col("mode") == mode)
    models = sorted(of_mode["model"].drop_nulls().unique().to_list())
    workloads = sorted(of_mode["workload"].drop_nulls().unique().to_list())
    return [f"model:{m}" for m in models] + [f"workload:{w}" for w in workloads]


def scope_label(scope: str) -> str:
    kind, _, value = scope.partition(":")
    return f"{value} (any task)" if kind == "model" else value


def job_from(mode: str, scope: str | None, precision: str | None) -> Job:
    kind, _, value = (scope or "").partition(":")
    return Job(mode, value if kind == "model" else None, value if kind == "workload" else None, precision or None)


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
    """One number on the page, with where it comes from. Optional `ci_low`, `ci_high`, `n` and
    `grade` are left for repeat statistics and trust grades (shown when set)."""

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
    if not short and row.get("seq_len"):
        parts.append(f"seq {row['seq_len']}")
    if row.get("power_setting") and row["power_setting"] != "default":
        parts.append(str(row["power_setting"]))
    if not short and row.get("system_name"):
        parts.append(str(row["system_name"]))
    return " · ".join(parts)


def _source(row: dict[str, Any]) -> str:
    return str(row.get("citation") or row.get("source_file") or "")


def _from_row(device: str, what: str, column: str, unit: str, row: dict[str, Any], *, energy: bool = False,
              note: str = "") -> Figure:
    src = _source(row)
    return Figure(device, what, float(row[column]), unit, basis_of(row.get("source_kind")),
                  boundary_name(row.get("energy_boundary")) if energy else "", config_label(row),
                  f"{note}; {src}" if note and src else (note or src), run_id=row.get("run_id"),
                  setting=config_label(row, short=True))


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

    # throughput: the best the job's rows state
    with_tp = ok.filter(pl.col("throughput_sps").is_not_null()).sort("throughput_sps", descending=True)
    throughput = (_from_row(device, "Throughput", "throughput_sps", "samples/s", with_tp.row(0, named=True))
                  if with_tp.height else
                  _missing(device, "Throughput", "samples/s", f"no {mode_word} throughput for {scope} in the data"))

    # energy per example: stated, or J/iteration over the examples of one iteration
    with_j = ok.filter(pl.col("j_per_sample").is_not_null()).sort("j_per_sample")
    with_it = ok.filter(pl.col("j_per_iteration").is_not_null()).sort("j_per_iteration")
    j_iter = (_from_row(device, "Energy per iteration", "j_per_iteration", "J", with_it.row(0, named=True),
                        energy=True) if with_it.height else
              _missing(device, "Energy per iteration", "J", f"no J/iteration for {scope}"))
    if with_j.height:
        j_sample = _from_row(device, "Energy per example", "j_per_sample", "J", with_j.row(0, named=True), energy=True)
    elif with_it.height:
        row = with_it.row(0, named=True)
        per_it = _examples_per_iteration(rows, row)
        if per_it is None:
            j_sample = _missing(device, "Energy per example", "J",
                                "the source gives J/iteration without the examples per iteration")
        else:
            n, how = per_it
            basis = ESTIMATE if how else basis_of(row.get("source_kind"))
            j_sample = Figure(device, "Energy per example", float(row["j_per_iteration"]) / n, "J", basis,
                              boundary_name(row.get("energy_boundary")), config_label(row),
                              f"{row['j_per_iteration']:g} J/iteration ÷ {n} examples per iteration"
                              + (f" ({how})" if how else "") + f"; {_source(row)}", run_id=row.get("run_id"),
                              setting=config_label(row, short=True))
    else:
        j_sample = _missing(device, "Energy per example", "J", f"no {mode_word} energy figure for {scope} in the data")

    # idle power (same boundary as the energy figure where there is a choice)
    idle = idle_rows(runs, device)
    energy_row = (with_j.row(0, named=True) if with_j.height else
                  with_it.row(0, named=True) if with_it.height else None)
    if idle.height:
        wanted = energy_row.get("energy_boundary") if energy_row else None
        idle = idle.sort(pl.col("energy_boundary") != wanted if wanted else pl.lit(0))
        irow = idle.row(0, named=True)
        idle_col = "avg_power_w" if irow.get("avg_power_w") is not None else "idle_power_w"
        idle_fig = _from_row(device, "Idle power", idle_col, "W", irow, energy=True)
        idle_fig = Figure(device, "Idle power", idle_fig.value, "W", idle_fig.basis, idle_fig.boundary,
                          str(irow.get("system_name") or irow.get("power_setting") or ""), idle_fig.source,
                          run_id=irow.get("run_id"))
    else:
        idle_fig = _missing(device, "Idle power", "W", "no idle measurement for this device: run `joulebench idle` "
                            "on it, or a New run with an idle baseline")

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
        price = Figure(device, "Price", conv.amount, settings.currency, "catalog",
                       config=str(cat.get("price_kind") or ""),
                       source=f"{how}; {cat.get('price_source') or cat.get('citation') or ''}".strip("; "))
    memory = (Figure(device, "Memory", float(cat["memory_gb"]), "GB", "catalog", source=str(cat.get("citation") or ""))
              if cat.get("memory_gb") else _missing(device, "Memory", "GB", "the catalog gives no memory size"))
    with_p99 = ok.filter(pl.col("latency_p99_ms").is_not_null()).sort("latency_p99_ms")
    p99 = (_from_row(device, "p99 latency per batch (lowest)", "latency_p99_ms", "ms", with_p99.row(0, named=True))
           if with_p99.height else _missing(device, "p99 latency per batch (lowest)", "ms",
                                            f"no latency percentiles for {scope}"))
    oom_rows = rows.filter(pl.col("status") == "oom")
    ooms = [config_label(r) for r in oom_rows.iter_rows(named=True)]
    oom_basis = " and ".join(sorted({basis_of(k) for k in oom_rows["source_kind"].to_list()}))

    # power drawn while running: measured average, else the cap of the setting, else TDP
    with_pw = ok.filter(pl.col("avg_power_w").is_not_null()).sort("avg_power_w")
    if with_pw.height:
        power = _from_row(device, "Power while running", "avg_power_w", "W", with_pw.row(0, named=True), energy=True)
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
        best = min(both.iter_rows(named=True), key=lambda r: cost_terms(
            r["j_per_sample"], r["throughput_sps"], idle, price, settings).at(settings.utilisation))
        ans.cost_throughput = _from_row(device, "Throughput", "throughput_sps", "samples/s", best)
        ans.cost_energy = _from_row(device, "Energy per example", "j_per_sample", "J", best, energy=True)
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
    """`winner` is `factor` times better than `loser` on `what` (factor >= 1)."""

    what: str  # "faster" | "fewer joules"
    winner: str
    loser: str
    factor: float
    basis: str
    detail: str  # the figures or configurations compared, and the source
    quote: str = ""


_MODE_WORDS = {"train": ("training", "train", "fine-tuning"), "infer": ("inference", "infer")}
_PRECISION_WORDS = {"fp16": ("fp16", "mixed precision"), "fp32": ("fp32",), "tf32": ("tf32",), "bf16": ("bf16",)}


def finding_scope(desc: str | None) -> tuple[str | None, str | None]:
    """(mode, precision) a finding's description names, or None where it names none."""
    text = (desc or "").lower()
    mode = next((m for m, words in _MODE_WORDS.items() if any(re.search(rf"\b{w}\b", text) for w in words)), None)
    prec = next((p for p, words in _PRECISION_WORDS.items() if any(w in text for w in words)), None)
    return mode, prec


def stated_ratios(findings: pl.DataFrame, a: str, b: str, job: Job, metric: str = "throughput_sps"
                  ) -> list[Comparison]:
    """The sources' ratios between two devices for this job's mode (and precision, if chosen)."""
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
        out.append(Comparison("faster", winner, loser, value if value >= 1 else 1 / value, STATED,
                              f"{f['subject_desc']} vs {f['baseline_desc']}; {f['citation']}", f["quote"] or ""))
    return out


def like_for_like(runs: pl.DataFrame, a: str, b: str, job: Job, column: str) -> tuple[float, int, str, str] | None:
    """Geometric mean of a/b over the configurations both measured: (ratio, count, basis, configs)."""
    def per_config(device: str) -> pl.DataFrame:
        rows = job_rows(runs, device, job).filter((pl.col("status") == "ok") & pl.col(column).is_not_null())
        return rows.with_columns([pl.col(c).fill_null(-1) for c in ("batch_size", "grad_accum_steps", "seq_len",
                                                                   "gpu_count")]) \
            .group_by(list(CONFIG_KEY)).agg(pl.col(column).mean().alias("v"),
                                            pl.col("source_kind").first().alias("kind"))
    joined = per_config(a).join(per_config(b), on=list(CONFIG_KEY), suffix="_b")
    if joined.is_empty():
        return None
    logs = [math.log(x / y) for x, y in zip(joined["v"], joined["v_b"]) if x and y]
    if not logs:
        return None
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
    return math.exp(sum(logs) / len(logs)), len(logs), " and ".join(bases), " · ".join(parts)


def compare_speed(runs: pl.DataFrame, findings: pl.DataFrame, answers: dict[str, DeviceAnswer], a: str, b: str,
                  job: Job) -> list[Comparison]:
    found = like_for_like(runs, a, b, job, "throughput_sps")
    if found:
        r, n, basis, configs = found
        winner, loser, f = (a, b, r) if r >= 1 else (b, a, 1 / r)
        return [Comparison("faster", winner, loser, f, basis,
                           f"geometric mean over {n} configuration(s) both measured ({configs})")]
    stated = stated_ratios(findings, a, b, job)
    if stated:
        return stated
    ta, tb = answers[a].cost_throughput, answers[b].cost_throughput
    if ta.known and tb.known and ESTIMATE in (ta.basis, tb.basis):
        assert ta.value is not None and tb.value is not None
        r = ta.value / tb.value
        winner, loser, f = (a, b, r) if r >= 1 else (b, a, 1 / r)
        return [Comparison("faster", winner, loser, f, ESTIMATE,
                           f"{sig(ta.value)} vs {sig(tb.value)} samples/s ({a}: {ta.source}; {b}: {tb.source})")]
    return []


def compare_energy(runs: pl.DataFrame, findings: pl.DataFrame, answers: dict[str, DeviceAnswer], a: str, b: str,
                   job: Job) -> list[Comparison]:
    found = like_for_like(runs, a, b, job, "j_per_sample")
    if found:
        r, n, basis, configs = found
        winner, loser, f = (b, a, r) if r >= 1 else (a, b, 1 / r)
        return [Comparison("fewer joules", winner, loser, f, basis,
                           f"J/example, geometric mean over {n} configuration(s) both measured ({configs})")]
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
        winner, loser, f = (b, a, r) if r >= 1 else (a, b, 1 / r)
        w, lo = (gb, ga) if r >= 1 else (ga, gb)
        per = "per example" if ga.what == "Energy per example" else "per iteration"
        basis = " and ".join(sorted({ga.basis, gb.basis}))
        boundary = w.boundary if w.boundary == lo.boundary else f"{w.boundary} vs {lo.boundary}"
        detail = f"{sig(w.value)} vs {sig(lo.value)} J {per}, {boundary}; {w.setting} vs {lo.setting}"
        return [Comparison("fewer joules", winner, loser, f, basis, detail, quote)]
    return []


def _leader(devices: list[str], comparisons: dict[tuple[str, str], list[Comparison]]) -> str | None:
    wins = dict.fromkeys(devices, 0)
    seen = False
    for found in comparisons.values():
        if found:
            seen = True
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
           devices: Iterable[str], job: Job, settings: CostSettings, constraints: Constraints) -> Answer:
    devices = list(dict.fromkeys(devices))[:MAX_DEVICES]
    by_name = {r["device_name"]: r for r in catalog.iter_rows(named=True)}
    per = {d: device_answer(runs, by_name.get(d, {"device_name": d}), modes, rates, job, settings) for d in devices}
    pairs = [(a, b) for i, a in enumerate(devices) for b in devices[i + 1:]]
    speed = {p: compare_speed(runs, findings, per, *p, job) for p in pairs}
    energy = {p: compare_energy(runs, findings, per, *p, job) for p in pairs}
    fits = {d: _fits(per[d], constraints, settings.currency) for d in devices}
    gaps = [g for d in devices for g in _gaps(per[d], job, job_rows(runs, d, job))]
    return Answer(job, settings, constraints, devices, per, speed, energy, fits, gaps)


# --- what the page says -------------------------------------------------------------------

def _name(device: str) -> str:
    return f"**{md(device)}**"


def _comparison_sentence(c: Comparison, what: str, quoted: set[str]) -> str:
    """One comparison; a source's quote is given once per page section."""
    text = (f"{_name(c.winner)} {what} {_name(c.loser)}: {ratio(c.factor)} "
            f"(*{md(c.basis)}*: {md(c.detail)})")
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
            lines.append(_comparison_sentence(c, f"is faster at {mode} than", quoted))
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
            lines.append(_comparison_sentence(c, "uses fewer joules than", quoted))
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
        parts.append(f"{_name(d)} {md(money(ans.cost_at(u), cur))} (*{md(' and '.join(bases))}*)")
    lines = [head + " " + "; ".join(parts) + "."]
    if len(costed) >= 2:
        best, second = costed[0], costed[1]
        cb, cs = answer.per_device[best].cost_at(u), answer.per_device[second].cost_at(u)
        assert cb is not None and cs is not None
        lines.append(f"**Cheapest per sample at {u * 100:.0f}% utilisation:** {_name(best)}, "
                     f"{ratio(cs / cb) if cb > 0 else ''} cheaper than {_name(second)}.")
    lines.extend(duty_cycle_sentences(answer))
    lines.extend(estimate_caveats(answer))
    return lines


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


def duty_cycle_sentences(answer: Answer) -> list[str]:
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
        idle_w = f"{sig(ans.idle_power.value)} W idle" if ans.idle_power.known else "idle power not measured"
        idle_cost = md(money(split["electricity while idle"], cur))
        parts.append(f"{_name(d)} ({md(idle_w)}): idle electricity {idle_cost}, "
                     f"hardware {md(money(split['hardware'], cur))} of {md(money(total, cur))}")
    if u >= 0.999:
        head = ("**Duty cycle:** busy all the time, so idle power costs nothing and the price is spread over the "
                "most samples")
    elif u >= 0.5:
        head = (f"**Duty cycle:** at {u * 100:.0f}% utilisation each device idles {idle_share * 100:.0f}% of the time; "
                "idle power and the price add little per sample")
    else:
        head = (f"**Duty cycle:** at {u * 100:.0f}% utilisation each device idles {idle_share * 100:.0f}% of the time, "
                "so idle power and the purchase price, spread over few samples, weigh heavily")
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


def constraint_sentences(answer: Answer) -> list[str]:
    if not answer.constraints.any():
        return []
    lines = []
    for d in answer.devices:
        checks = answer.fits[d]
        status = ("fails" if any(s == "fails" for s, _ in checks) else
                  "unknown" if any(s == "unknown" for s, _ in checks) else "fits")
        word = {"fits": "fits the constraints", "fails": "does not fit",
                "unknown": "may fit (not all is known)"}[status]
        lines.append(f"{_name(d)} {word}: " + "; ".join(md(t) for _, t in checks) + ".")
    return ["**Constraints:** " + lines[0], *lines[1:]] if lines else []


def headline(answer: Answer) -> str:
    """One sentence: who is faster, who uses fewer joules, who is cheapest per sample at the
    chosen utilisation (each only where the data can say)."""
    parts = []
    fast = _leader(answer.devices, answer.speed)
    if fast:
        parts.append(f"{_name(fast)} is faster")
    frugal = _leader(answer.devices, answer.energy)
    if frugal:
        parts.append(f"{_name(frugal)} uses fewer joules" if frugal != fast else "and uses fewer joules")
    costed = answer.costed()
    u = answer.settings.utilisation
    if len(costed) >= 2:
        parts.append(f"{_name(costed[0])} costs least per sample at {u * 100:.0f}% utilisation")
    if not parts:
        return "**In short:** the data cannot compare these devices for this job yet; see what is missing below."
    text = "; ".join(parts).replace("is faster; and uses", "is faster and uses")
    return f"**In short:** {text}. The reasons and the basis of each figure follow."


def verdict(answer: Answer) -> list[str]:
    """The answer in sentences (Markdown, every name and citation escaped)."""
    return [headline(answer), *speed_sentences(answer), *energy_sentences(answer), *cost_sentences(answer),
            *constraint_sentences(answer)]


# --- the table ----------------------------------------------------------------------------

OPTIONAL_COLUMNS = ("n", "ci_low", "ci_high", "grade")


def figure_table(answer: Answer) -> pl.DataFrame:
    """One row per figure and device, with basis, boundary, configuration and source; the
    optional columns (n, 95% CI, grade) appear when any figure carries them."""
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
                           source="electricity while busy and idle + hardware (formula below)",
                           missing_reason=ans.cost_missing))
        for f in figs:
            rows.append({"Device": d, "Figure": f.what, "Value": f.shown(), "Basis": f.basis,
                         "Boundary": f.boundary, "Configuration": f.config,
                         "Source or derivation": f.source if f.known else f.missing_reason,
                         "n": f.n, "ci_low": f.ci_low, "ci_high": f.ci_high, "grade": f.grade})
        if ans.ooms:
            rows.append({"Device": d, "Figure": "Out of memory (a recorded outcome)", "Value": "; ".join(ans.ooms[:4]),
                         "Basis": ans.oom_basis, "Boundary": "", "Configuration": "",
                         "Source or derivation": f"{len(ans.ooms)} configuration(s) ran out of memory"})
    frame = pl.DataFrame(rows, schema={"Device": pl.String, "Figure": pl.String, "Value": pl.String,
                                       "Basis": pl.String, "Boundary": pl.String, "Configuration": pl.String,
                                       "Source or derivation": pl.String, "n": pl.Int64, "ci_low": pl.Float64,
                                       "ci_high": pl.Float64, "grade": pl.String})
    empty = [c for c in OPTIONAL_COLUMNS if frame[c].is_null().all()]
    return frame.drop(empty)


def cost_curve(answer: Answer, start_pct: int = 5) -> pl.DataFrame:
    """Cost per 1M samples against utilisation (`start_pct`% to 100%) for each costed device."""
    rows = []
    for d in answer.costed():
        terms = answer.per_device[d].terms
        assert terms is not None
        for pct in range(start_pct, 101):
            u = pct / 100
            rows.append({"device": d, "utilisation": u, "cost": terms.at(u)})
    return pl.DataFrame(rows, schema={"device": pl.String, "utilisation": pl.Float64, "cost": pl.Float64})
