"""Each device at its best power setting: the setting recommended for a goal (measured, or predicted by a
model checked by leave-one-out; rows of explorer.power_settings.best_settings) narrows the device's runs
to it, or replaces its figures with the model's predictions, labelled."""

from __future__ import annotations

from collections.abc import Iterable
from dataclasses import dataclass, replace

import polars as pl

from decision.figures import DeviceAnswer, Figure, missing, set_cost
from decision.money import CostSettings
from decision.scope import Job, job_rows
from decision.text import BASIS_NAMES


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


def label_best(ans: DeviceAnswer, b: BestSetting, settings: CostSettings) -> None:
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
            return missing(ans.device, what, unit, why)
        return Figure(ans.device, what, float(value), unit, b.basis, config=b.configuration, source=source,
                      setting=b.setting)

    ans.throughput = ans.cost_throughput = predicted("Throughput", b.throughput_sps, "samples/s")
    ans.j_per_sample = ans.cost_energy = predicted("Energy per example", b.j_per_sample, "J")
    ans.j_per_iteration = missing(ans.device, "Energy per iteration", "J", f"not predicted at {b.setting}")
    ans.power = predicted("Power while running", b.avg_power_w, "W")
    ans.p99 = missing(ans.device, "p99 latency per batch (lowest)", "ms",
                       f"latency is not predicted for a power setting ({b.setting} was not measured)")
    set_cost(ans, settings)
