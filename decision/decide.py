"""Decide: which of 2-6 candidate devices to buy for a job, and why (pure logic, polars in).

For each candidate `decide` gathers the figures the data holds for the job (decision.figures), each
with its basis; compares the candidates like for like where both were measured, else by the sources'
stated ratios, else by estimates (decision.like_for_like); checks the constraints; and lists what the
data cannot answer with the run or upload that would fill it. The cost of a sample carries the duty
cycle (idle power over the idle share) and the crossover utilisation at which two devices swap places.
The sentences are decision.sentences, the tables decision.tables; decision.answer puts them together.
"""

from __future__ import annotations

import math
from collections.abc import Iterable
from dataclasses import dataclass, field, replace

import polars as pl

from decision.best_settings import BestSetting, at_best_settings, best_of, label_best
from decision.cost import Constraints
from decision.figures import ESTIMATE, STATED, DeviceAnswer, device_answer, set_cost
from decision.like_for_like import Comparison, compare_energy, compare_speed, finding_scope, stated_between
from decision.money import CostSettings, Rates, crossover
from decision.scope import MAX_DEVICES, Job, job_rows
from decision.text import money, ratio, sig
from joulebench.defaults import RUNNER_WORKLOADS


@dataclass(frozen=True)
class Gap:
    device: str
    what: str  # what is missing, as a sentence
    fill: str  # "run" (a runner workload, New run's form) | "serve" (an LLM from a file: serve-bench against an engine
    # serving it) | "devices"
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
        else:  # a power or latency figure names the configuration it was measured at (the one the claims use)
            at = f" at {fig.config}" if fig.config and fig.unit in ("W", "ms") else ""
            verdict = "fits" if good(fig.value, limit) else "fails"
            out.append(("ok" if verdict == "fits" else "fails", f"{name(limit)}: {verdict} ({show(fig.value)}{at})"))
    return out


def _gaps(ans: DeviceAnswer, job: Job, rows: pl.DataFrame) -> list[Gap]:
    prefill = {"workload": job.workload or _workload_of(rows, job), "mode": job.mode}
    if job.precision:
        prefill["precision"] = job.precision
    seqs = rows["seq_len"].drop_nulls().unique().to_list() if rows.height else []
    if len(seqs) == 1:
        prefill["seq"] = str(seqs[0])
    prefill = {k: v for k, v in prefill.items() if v}
    # the runner measures its own workloads; a model a file names (an LLM such as meta-llama/Llama-3.1-70B-Instruct)
    # is measured here by serving it with an engine and pointing serve-bench at it
    fill = "run" if prefill.get("workload") in RUNNER_WORKLOADS else "serve"
    if fill == "serve":
        prefill = {"model": prefill["workload"]} if prefill.get("workload") else {}
    gaps = []
    if not ans.throughput.known:
        gaps.append(Gap(ans.device, f"no measured {'training' if job.mode == 'train' else 'inference'} throughput",
                        fill, prefill))
    if not ans.j_per_sample.known and not ans.j_per_iteration.known:
        gaps.append(Gap(ans.device, "no energy figure", fill, prefill))
    if not ans.idle_power.known:
        idle_run = {"workload": RUNNER_WORKLOADS[0]} if fill == "serve" else prefill  # any workload: idle is idle
        gaps.append(Gap(ans.device, "no idle power (it decides the cost at low utilisation)", "run",
                        {**idle_run, "idle": "30"}))
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
        label_best(per[d], b, settings)
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
        # a ratio only between the settings it was stated for: the figures the costs use must be at them
        at = {d: per[d].cost_energy.config or per[d].cost_throughput.config for d in (a, b)}
        usable = [c for c in stated if stated_between(c, at) is None]
        if not usable:
            for d in estimated:
                why = stated_between(stated[0], at)
                per[d].cost_throughput = replace(per[d].cost_throughput,
                                                 source=f"{per[d].cost_throughput.source}; {why}")
            continue
        c = next((c for c in usable if (finding_scope(c.detail)[1] or "") in energy_setting), usable[0])
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
        set_cost(per[target], settings)
