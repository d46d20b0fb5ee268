"""The Pareto front of two figures both minimised (Compare's time-vs-energy view)."""

from __future__ import annotations

import polars as pl


def pareto_front(frame: pl.DataFrame, x: str, y: str) -> pl.DataFrame:
    """Rows not dominated in (x, y), both minimised; sorted by x."""
    pts = frame.drop_nulls([x, y]).sort([x, y])
    keep, best_y = [], float("inf")
    for i, value in enumerate(pts[y].to_list()):
        if value < best_y:
            keep.append(i)
            best_y = value
    return pts[keep]
