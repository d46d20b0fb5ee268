"""Compare logic (pure, polars): filters, series, aggregation, ratios, boundary checks."""

from __future__ import annotations

import math
from collections.abc import Mapping
from dataclasses import dataclass, field

import polars as pl

# Filter dimensions: URL key -> run column.
FILTERS: dict[str, str] = {
    "workload": "workload", "mode": "mode", "precision": "precision", "batch": "batch_size",
    "seq": "seq_len", "device": "device_name", "power": "power_setting", "source": "source_kind",
}
FILTER_LABELS = {"workload": "Workload", "mode": "Mode", "precision": "Precision", "batch": "Batch size",
                 "seq": "Sequence length", "device": "Device", "power": "Power limit / mode",
                 "source": "Source"}


@dataclass(frozen=True)
class Metric:
    column: str
    label: str
    higher_is_better: bool
    energy: bool = False


METRICS: dict[str, Metric] = {
    "throughput": Metric("throughput_sps", "Throughput (samples/s)", True),
    "j_per_sample": Metric("j_per_sample", "Energy per example (J)", False, energy=True),
    "net_j_per_sample": Metric("net_j_per_sample", "Net energy per example, idle subtracted (J)", False, energy=True),
    "cost": Metric("cost_per_1m_samples", "Cost per 1M samples", False, energy=True),
    "p99": Metric("latency_p99_ms", "p99 latency per batch (ms)", False),
    "power": Metric("avg_power_w", "Average power (W)", False, energy=True),
}


@dataclass(frozen=True)
class Selection:
    """What the user picked; round-trips through the URL's query parameters."""

    filters: Mapping[str, tuple[str, ...]] = field(default_factory=dict)
    metric: str = "throughput"

    @classmethod
    def from_query(cls, params: Mapping[str, list[str]]) -> Selection:
        filters = {k: tuple(v) for k, v in params.items() if k in FILTERS and v}
        metric = (params.get("metric") or ["throughput"])[0]
        return cls(filters, metric if metric in METRICS else "throughput")

    def to_query(self) -> dict[str, list[str]]:
        out = {k: list(v) for k, v in self.filters.items() if v}
        out["metric"] = [self.metric]
        return out


MAX_SERIES = 20


def default_selection(runs: pl.DataFrame, selection: Selection) -> Selection:
    """Without a workload or mode filter, compare within the most common workload and mode:
    one chart across every workload would mix incomparable numbers."""
    filters = dict(selection.filters)
    for key in ("workload", "mode"):
        if not filters.get(key):
            scope = apply(runs, Selection(filters))
            if scope.is_empty():
                break
            common = scope[FILTERS[key]].drop_nulls().value_counts(sort=True)
            if common.height:
                filters[key] = (str(common[FILTERS[key]][0]),)
    return Selection(filters, selection.metric)


def limit_series(runs: pl.DataFrame, limit: int = MAX_SERIES) -> tuple[pl.DataFrame, int]:
    """Keep the `limit` series with the most runs; return how many series were left out."""
    counts = runs["series"].value_counts(sort=True)
    if counts.height <= limit:
        return runs, 0
    keep = counts["series"].head(limit)
    return runs.filter(pl.col("series").is_in(keep.to_list())), counts.height - limit


def _as_text(frame: pl.DataFrame) -> pl.DataFrame:
    return frame.with_columns([pl.col(c).cast(pl.String).alias(f"_{k}") for k, c in FILTERS.items()])


def options(runs: pl.DataFrame, key: str) -> list[str]:
    values = runs[FILTERS[key]].drop_nulls().unique().to_list()
    numeric = all(isinstance(v, (int, float)) for v in values)
    return [str(v) for v in sorted(values)] if numeric else sorted(str(v) for v in values)


def apply(runs: pl.DataFrame, selection: Selection) -> pl.DataFrame:
    frame = _as_text(runs)
    for key, values in selection.filters.items():
        if values:
            frame = frame.filter(pl.col(f"_{key}").is_in(list(values)))
    return frame.drop([f"_{k}" for k in FILTERS])


def with_series(runs: pl.DataFrame) -> pl.DataFrame:
    """A label per compared series: the device, plus whatever else varies in the selection."""
    parts = [pl.col("device_name")]
    for col in ("system_name", "workload", "mode", "precision", "power_setting", "seq_len", "source_kind"):
        if runs[col].n_unique() > 1:
            parts.append(pl.col(col).cast(pl.String))
    return runs.with_columns(pl.concat_str(parts, separator=" · ", ignore_nulls=True).alias("series"))


def bars(runs: pl.DataFrame, metric: Metric) -> pl.DataFrame:
    """Mean of the metric per series and batch size over the runs that measured it."""
    measured = runs.filter(pl.col(metric.column).is_not_null() & (pl.col("status") == "ok"))
    return (measured.group_by(["series", "batch_size"])
            .agg(pl.col(metric.column).mean().alias("value"), pl.len().alias("runs"),
                 pl.col("energy_boundary").drop_nulls().unique().sort().str.join(", ").alias("boundary"),
                 pl.col("energy_method").drop_nulls().unique().sort().str.join(", ").alias("method"),
                 pl.col("citation").drop_nulls().first().alias("citation"))
            .sort(["series", "batch_size"]))


def mixed_boundaries(runs: pl.DataFrame, metric: Metric) -> list[str]:
    """The distinct measurement boundaries behind an energy metric in this selection."""
    if not metric.energy:
        return []
    measured = runs.filter(pl.col(metric.column).is_not_null())
    return sorted(measured["energy_boundary"].drop_nulls().unique().to_list())


def ratio_table(bar_frame: pl.DataFrame, metric: Metric) -> pl.DataFrame:
    """Each series against each other on the batch sizes both measured (geometric mean of ratios)."""
    wide = bar_frame.pivot(on="series", index="batch_size", values="value")
    series = [c for c in wide.columns if c != "batch_size"]
    rows = []
    for a in series:
        for b in series:
            if a == b:
                continue
            pairs = wide.select(a, b).drop_nulls()
            if pairs.is_empty():
                continue
            ratios = [x / y for x, y in pairs.iter_rows() if x and y]
            if not ratios:
                continue
            ratio = math.exp(sum(math.log(r) for r in ratios) / len(ratios))
            if (ratio >= 1) != metric.higher_is_better and not math.isclose(ratio, 1):
                continue  # state each pair once, from the better side
            rows.append({"A": a, "B": b, "ratio": round(ratio, 2), "batch sizes compared": pairs.height,
                         "statement": _statement(a, b, ratio, metric)})
    return pl.DataFrame(rows, schema={"A": pl.String, "B": pl.String, "ratio": pl.Float64,
                                      "batch sizes compared": pl.Int64, "statement": pl.String})


def _statement(a: str, b: str, ratio: float, metric: Metric) -> str:
    what = metric.label[0].lower() + metric.label[1:]  # "energy per example (J)": units keep their case
    if metric.column == "throughput_sps":
        return f"{a} is {ratio:.1f}x faster than {b}"
    if metric.higher_is_better:
        return f"{a} has {ratio:.1f}x the {what} of {b}"
    return f"{a} needs {ratio:.2f}x the {what} of {b} ({1 / ratio:.1f}x better)"


def energy_time_points(runs: pl.DataFrame) -> pl.DataFrame:
    """Time per example (s) and energy per example (J) for runs that measured both."""
    return (runs.filter(pl.col("throughput_sps").is_not_null() & pl.col("j_per_sample").is_not_null())
            .with_columns((1.0 / pl.col("throughput_sps")).alias("s_per_sample")))
