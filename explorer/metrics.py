"""Derived-metric constants and the Pareto front (PRODUCT.md definitions); the cost of a sample
lives in explorer.money."""

from __future__ import annotations

import polars as pl

J_PER_KWH = 3.6e6
SECONDS_PER_YEAR = 365.25 * 24 * 3600


def pareto_front(frame: pl.DataFrame, x: str, y: str) -> pl.DataFrame:
    """Rows not dominated in (x, y), both minimised; sorted by x."""
    pts = frame.drop_nulls([x, y]).sort([x, y])
    keep, best_y = [], float("inf")
    for i, value in enumerate(pts[y].to_list()):
        if value < best_y:
            keep.append(i)
            best_y = value
    return pts[keep]
