"""Cost & buying guide: rank devices by cost per sample under the user's prices and constraints."""

from __future__ import annotations

from dataclasses import dataclass, replace

import polars as pl

from explorer.metrics import CostInputs, with_cost


@dataclass(frozen=True)
class Constraints:
    max_power_w: float | None = None
    min_memory_gb: float | None = None
    max_p99_ms: float | None = None
    budget: float | None = None


def _energy(runs: pl.DataFrame, estimate_from_tdp: bool) -> pl.DataFrame:
    """Energy per example used for cost: measured, else (if asked) TDP / throughput, labelled."""
    tdp_j = pl.col("tdp_w") * pl.col("gpu_count").fill_null(1) / pl.col("throughput_sps")
    measured = pl.col("j_per_sample").is_not_null()
    return runs.with_columns(
        pl.when(measured).then(pl.col("j_per_sample"))
        .when(pl.lit(estimate_from_tdp)).then(tdp_j).otherwise(None).alias("j_per_sample_used"),
        pl.when(measured).then(pl.lit("measured: ") + pl.col("energy_boundary").fill_null("?"))
        .when(pl.lit(estimate_from_tdp) & tdp_j.is_not_null()).then(pl.lit("estimated: TDP ÷ throughput"))
        .otherwise(pl.lit("missing")).alias("energy_basis"),
    )


def rank(runs: pl.DataFrame, inputs: CostInputs, prices: dict[str, float | None], constraints: Constraints,
         estimate_from_tdp: bool = False) -> pl.DataFrame:
    """The cheapest qualifying configuration per device, ranked by cost per 1M samples (missing last)."""
    frame = runs.filter(pl.col("status") == "ok")
    frame = frame.with_columns(
        pl.col("device_name").replace_strict(prices, default=None, return_dtype=pl.Float64).alias("price"))
    frame = _energy(frame, estimate_from_tdp)
    c = constraints
    if c.max_power_w is not None:
        frame = frame.filter(pl.coalesce("avg_power_w", "tdp_w") <= c.max_power_w)
    if c.min_memory_gb is not None:
        frame = frame.filter(pl.col("memory_gb") >= c.min_memory_gb)
    if c.max_p99_ms is not None:
        frame = frame.filter(pl.col("latency_p99_ms") <= c.max_p99_ms)
    if c.budget is not None:
        frame = frame.filter(pl.col("price") <= c.budget)
    costed = with_cost(frame.drop("j_per_sample").rename({"j_per_sample_used": "j_per_sample"}),
                       inputs, price_column="price")
    costed = costed.with_columns(
        (pl.col("energy_cost_per_1m") / pl.col("cost_per_1m_samples")).alias("energy_cost_share"))
    best = (costed.sort(["cost_per_1m_samples", "throughput_sps"], descending=[False, True], nulls_last=True)
            .group_by("device_name", maintain_order=True).first())
    return best.select(
        "device_name", "precision", "batch_size", "power_setting", "throughput_sps", "j_per_sample",
        "energy_basis", "price", "price_currency", "energy_cost_per_1m", "hardware_cost_per_1m",
        "cost_per_1m_samples", "energy_cost_share", "latency_p99_ms", "memory_gb", "run_id",
    ).with_row_index("rank", offset=1)


def sensitivity(runs: pl.DataFrame, inputs: CostInputs, prices: dict[str, float | None], constraints: Constraints,
                estimate_from_tdp: bool, parameter: str, values: list[float]) -> pl.DataFrame:
    """Cost per 1M samples per device as one input (`electricity_per_kwh` or `utilisation`) moves."""
    frames = []
    for value in values:
        ranked = rank(runs, replace(inputs, **{parameter: value}), prices, constraints, estimate_from_tdp)
        frames.append(ranked.filter(pl.col("cost_per_1m_samples").is_not_null())
                      .select("device_name", "cost_per_1m_samples", "rank").with_columns(pl.lit(value).alias("x")))
    return pl.concat(frames) if frames else pl.DataFrame()
