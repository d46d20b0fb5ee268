"""Derived metrics the explorer shows, each with its formula (PRODUCT.md definitions)."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

J_PER_KWH = 3.6e6
SECONDS_PER_YEAR = 365.25 * 24 * 3600

COST_FORMULA = (
    "cost per sample = electricity + hardware\n"
    "electricity = J/example ÷ 3,600,000 × price per kWh × PUE\n"
    "hardware = device price ÷ (throughput × lifetime in seconds × utilisation)\n"
    "$ per 1M samples = 1,000,000 × cost per sample"
)


@dataclass(frozen=True)
class CostInputs:
    electricity_per_kwh: float = 0.15
    pue: float = 1.0
    lifetime_years: float = 3.0
    utilisation: float = 0.5

    def __post_init__(self) -> None:
        if self.electricity_per_kwh < 0:
            raise ValueError("electricity price must be >= 0")
        if self.pue < 1:
            raise ValueError("PUE must be >= 1")
        if self.lifetime_years <= 0:
            raise ValueError("lifetime must be > 0 years")
        if not 0 < self.utilisation <= 1:
            raise ValueError("utilisation must be in (0, 1]")


def with_cost(runs: pl.DataFrame, inputs: CostInputs, price_column: str = "price_amount") -> pl.DataFrame:
    """Add energy_cost_per_1m, hardware_cost_per_1m and cost_per_1m_samples (missing stays missing)."""
    lifetime_s = inputs.lifetime_years * SECONDS_PER_YEAR
    return runs.with_columns(
        (pl.col("j_per_sample") / J_PER_KWH * inputs.electricity_per_kwh * inputs.pue * 1e6)
        .alias("energy_cost_per_1m"),
        (pl.col(price_column) / (pl.col("throughput_sps") * lifetime_s * inputs.utilisation) * 1e6)
        .alias("hardware_cost_per_1m"),
    ).with_columns((pl.col("energy_cost_per_1m") + pl.col("hardware_cost_per_1m")).alias("cost_per_1m_samples"))


def pareto_front(frame: pl.DataFrame, x: str, y: str) -> pl.DataFrame:
    """Rows not dominated in (x, y), both minimised; sorted by x."""
    pts = frame.drop_nulls([x, y]).sort([x, y])
    keep, best_y = [], float("inf")
    for i, value in enumerate(pts[y].to_list()):
        if value < best_y:
            keep.append(i)
            best_y = value
    return pts[keep]
