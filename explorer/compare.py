"""Compare logic (pure, polars): filters, coverage, the all-devices table, series (the ratios between
series and the sources' stated findings: explorer.compare_ratios).

Nothing is narrowed behind the user's back: what the filters hold is what is shown. A chart's
x axis is the configuration (only the fields that vary, each named: 'FP16 · batch 8 · seq 384'),
its colours are the series (device, plus system, power setting or source where those vary), and
ratios are stated only between series measured on the same configuration.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, field

import polars as pl

from decision.aggregates import worst_grade_expr
from decision.money import CostSettings
from decision.text import (
    BASIS_NAMES,
    BOUNDARY_NAMES,
    MODE_NAMES,
    basis_expr,
    basis_of,
    count,
    energy_estimate_expr,
    in_sentence,
    precision_name,
    setting_text,
)
from energy.stats import aggregate
from explorer import memo
from joulebench.configuration import BY_NAME, COMPARE, WORK_NAMED
from joulebench.metrics import figure

# Filter dimensions: URL key -> run column.
FILTERS: dict[str, str] = {
    "workload": "workload", "mode": "mode", "precision": "precision", "batch": "batch_size",
    "seq": "seq_len", "device": "device_name", "power": "power_setting", "source": "source_kind",
    "run": "run_id",
}
# a filter's label is its configuration field's (joulebench.configuration), where the field has one and it is short
FILTER_LABELS = {key: BY_NAME[column].label for key, column in FILTERS.items() if column in BY_NAME} | {
    "seq": "Sequence length", "power": "Power limit / mode", "source": "Source", "run": "Runs"}


@dataclass(frozen=True)
class Metric:
    """A figure Compare can chart: a metric of the catalogue (joulebench.metrics, which gives its label, unit and
    direction), whether it is an energy figure, and why a cell of it can be empty."""

    column: str  # a joulebench.metrics name (stored or derived)
    energy: bool = False
    missing: str = ""  # why a cell is empty, for the column's hover help

    @property
    def label(self) -> str:
        return figure(self.column).label

    @property
    def higher_is_better(self) -> bool:
        return figure(self.column).higher_is_better

    def title(self) -> str:
        return figure(self.column).title()


_NOT_SERVING = "not a serving run, or the source gives no"
METRICS: dict[str, Metric] = {
    "throughput": Metric("throughput_sps", missing="not measured: the run or the source gives no throughput"),
    "j_per_sample": Metric("j_per_sample", energy=True,
                           missing="not measured: no energy figure per example (the reference tables give none; "
                                   "local runs and the blog's figures do)"),
    "j_per_iteration": Metric("j_per_iteration", energy=True,
                              missing="not measured: no energy figure per optimizer step"),
    "net_j_per_sample": Metric("net_j_per_sample", energy=True,
                               missing="not measured: needs an idle baseline at the same power setting"),
    "p99": Metric("latency_p99_ms", missing="not measured: no latency percentiles for this run"),
    "power": Metric("avg_power_w", energy=True, missing="not measured: no power measurement for this run"),
    "cost": Metric("cost_per_1m_samples", energy=True,
                   missing="not known: needs throughput, energy and a price convertible to the display currency"),
    "electricity": Metric("electricity_cost_per_1m", energy=True,
                          missing="not known: needs throughput and energy (no device price is needed)"),
    "tokens": Metric("tokens_per_s", missing="not measured: not a generation run, or the source gives no token rate"),
    "j_per_token": Metric("j_per_token", energy=True,
                          missing="not measured: not a generation run, or no energy per token"),
    "j_per_request": Metric("j_per_request", energy=True, missing=f"not measured: {_NOT_SERVING} energy per request"),
    "goodput_per_j": Metric("goodput_requests_per_j", energy=True,
                            missing=f"not measured: {_NOT_SERVING} goodput (requests meeting an SLO) with energy"),
    "tpot_p90": Metric("tpot_p90_ms",
                       missing="not measured: not a generation run, or the source gives no TPOT p90 (per request)"),
    "itl_p90": Metric("itl_p90_ms",
                      missing="not measured: not a generation run, or the source gives no ITL p90 (token gaps)"),
    "ttft_p90": Metric("ttft_p90_ms", missing="not measured: not a generation run, or the source gives no TTFT p90"),
}
# what names a series beside its device (data.runs' columns for the COMPARE view's series fields, and the system)
_SERIES_BESIDE = ("system_name", "power_setting", "source_kind", "tag")
# the configuration's columns every table shows; the other fields of the COMPARE view show where a row states them
_TABLE_BASE = (*WORK_NAMED, "batch_size", "grad_accum_steps", "seq_len", "gpu_count")
MONEY_COLUMNS = frozenset({"cost_per_1m_samples", "electricity_cost_per_1m"})  # labelled with the currency
TABLE_METRICS = ("throughput", "p99", "j_per_sample", "j_per_iteration", "power", "electricity", "cost", "tokens",
                 "j_per_token", "j_per_request", "goodput_per_j", "ttft_p90", "tpot_p90", "itl_p90")
# in the table only when a row has them
TOKEN_METRICS = ("tokens", "j_per_token", "j_per_request", "goodput_per_j", "tpot_p90", "itl_p90", "ttft_p90")
TOKEN_COLUMNS = tuple(METRICS[k] for k in TOKEN_METRICS)


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

    def to_query(self, reference: str | None = None, log_scale: bool = False,
                 settings: CostSettings | None = None) -> dict[str, list[str]]:
        """The page's link: the filters and metric, the reference device and log scale when set, and
        the cost settings when the link came with them."""
        out = {k: list(v) for k, v in self.filters.items() if v}
        out["metric"] = [self.metric]
        if reference:
            out["ref"] = [reference]
        if log_scale:
            out["log"] = ["1"]
        if settings is not None:
            out.update(settings.to_query())
        return out


# a run whose energy was modelled (CPU utilisation x TDP), or partly modelled by the tool that wrote it
# (CodeCarbon's CPU and RAM power): its Basis says so (decision.text.energy_estimate, one rule for every page)
_ESTIMATED = energy_estimate_expr()
# a serving point whose arrivals outpaced its completions: drawn apart, never a bar's best, never a ratio's basis
OVERLOADED = pl.col("flags").list.contains("overloaded").fill_null(False)

MAX_SERIES = 20
MAX_CONFIGS = 40
MAX_TABLE_ROWS = 400  # rows drawn with formatted numbers (pandas Styler costs ~0.1 ms a cell)


def _text(column: str) -> pl.Expr:
    return pl.col(column).cast(pl.String)


@memo.shared(max_entries=32)
def options(runs: pl.DataFrame, key: str) -> list[str]:
    values = runs[FILTERS[key]].drop_nulls().unique().to_list()
    numeric = all(isinstance(v, (int, float)) for v in values)
    return [str(v) for v in sorted(values)] if numeric else sorted(str(v) for v in values)


@memo.shared(max_entries=8)  # one frame per selection, the same object at every visit (its digest kept)
def apply(runs: pl.DataFrame, selection: Selection) -> pl.DataFrame:
    frame = runs
    for key, values in selection.filters.items():
        if values:
            frame = frame.filter(_text(FILTERS[key]).is_in(list(values)))
    return frame


def unknown_values(runs: pl.DataFrame, params: Mapping[str, list[str]]) -> list[str]:
    """Values a link asks for that this database does not hold (reported, never replaced)."""
    problems = []
    for key, values in params.items():
        if key in FILTERS:
            known = set(options(runs, key))
            missing = [v for v in values if v not in known]
            if missing:
                problems.append(f"{FILTER_LABELS[key].lower()} {', '.join(repr(v) for v in missing)}")
        elif key == "metric" and values and values[0] not in METRICS:
            problems.append(f"metric {values[0]!r}")
    return problems


@memo.shared(max_entries=32)
def devices_of(chosen: pl.DataFrame, selection: Selection) -> tuple[list[str], list[str]]:
    """The devices the selection measured (for "Relative to"), and those whose stated findings to
    show: the ones the filter names, else all of them."""
    modes = chosen.select("device_name", "mode")  # two columns filtered, not every one (100,000 runs: 0.15 s)
    measured = sorted(modes.filter(pl.col("mode") != "idle")["device_name"].unique().to_list())
    return measured, list(selection.filters.get("device", ())) or measured


def applied_text(selection: Selection, chosen: int, total: int) -> str:
    """What the filters hold, said above the page: '12 of 360 runs: device: A100 40GB. ...'."""
    applied = "; ".join(f"{FILTER_LABELS[k].lower()}: {', '.join(v)}" for k, v in selection.filters.items())
    return (f"{chosen} of {total} runs: " + (applied if applied else "no filter, every run")
            + ". Change the filters in the sidebar.")


def nothing_measured(measured: pl.DataFrame, metric: Metric, stated: int) -> str:
    """Why the chart is empty and what the selection does hold: never a dead end."""
    have = [f"{in_sentence(m.label)} ({n} runs)" for m in METRICS.values()
            if m.column in measured.columns and (n := measured[m.column].is_not_null().sum())]
    return (f"No run in this selection measured {in_sentence(metric.label)}. "
            + (f"This selection has: {', '.join(have)}" if have else "This selection has no measured metric")
            + (f"; and {stated} stated findings (below)." if stated else ".")
            + " Pick another chart metric in the sidebar.")


def run_labels(runs: pl.DataFrame) -> dict[str, str]:
    """A short label per run id for the Runs filter: device · workload · mode · id."""
    labels = runs.select("run_id", pl.concat_str([pl.col("device_name"), pl.col("workload"), pl.col("mode"),
                                                  pl.col("run_id").str.slice(0, 8)], separator=" · ",
                                                 ignore_nulls=True).alias("label"))
    return dict(labels.iter_rows())


# --- coverage ------------------------------------------------------------------------------

@memo.shared(max_entries=32)
def coverage(runs: pl.DataFrame, findings: pl.DataFrame) -> pl.DataFrame:
    """What exists: per device, workload and mode, how many runs and how many measured each metric."""
    measured = runs.filter(pl.col("mode") != "idle")
    table = (measured.group_by("device_name", "workload", "mode")
             .agg(pl.len().alias("Runs"),
                  *[pl.col(METRICS[k].column).is_not_null().sum().alias(METRICS[k].label)
                    for k in ("throughput", "j_per_sample", "j_per_iteration", "p99", "power")],
                  (pl.col("status") == "oom").sum().alias("Out of memory")))
    idle = (runs.filter(pl.col("mode") == "idle").group_by("device_name").agg(pl.len().alias("Idle measurements")))
    stated = pl.concat([findings.select(pl.col("subject_device").alias("device_name")),
                        findings.select(pl.col("baseline_device").alias("device_name"))]) \
        .drop_nulls().group_by("device_name").agg(pl.len().alias("Stated findings"))
    out = (table.join(idle, on="device_name", how="left").join(stated, on="device_name", how="left")
           .with_columns(pl.col("Idle measurements").fill_null(0), pl.col("Stated findings").fill_null(0))
           .sort(["device_name", "workload", "mode"]))
    return out.rename({"device_name": "Device", "workload": "Workload", "mode": "Mode"})


# --- series and configurations ----------------------------------------------------------------

def _varies(runs: pl.DataFrame, column: str) -> bool:
    return runs[column].n_unique() > 1


def with_labels(runs: pl.DataFrame) -> tuple[pl.DataFrame, str]:
    """Add `series` (device, plus system / power setting / source / tag where they vary) and `config`
    (the configuration fields that vary, each named); return the fields all rows share, as text."""
    series = [pl.col("device_name")]
    for col in _SERIES_BESIDE:
        if col in runs.columns and _varies(runs, col):
            text = pl.col(col).cast(pl.String)
            if col == "power_setting":
                text = text.replace("default", "default power")
            elif col == "source_kind":
                text = text.replace_strict({k: basis_of(k) for k in BASIS_NAMES}, default=text)
            elif col == "tag":
                text = pl.lit("tag ") + text
            series.append(text)
    parts: list[pl.Expr] = []
    shared: list[str] = []
    first = runs.row(0, named=True) if runs.height else {}
    for col in COMPARE.fields:
        if col == "grad_accum_steps" or col not in runs.columns:
            continue  # grad_accum_steps is written with the batch ('batch 2x8')
        varies = runs.height and (_varies(runs, col) or (col == "batch_size" and _varies(runs, "grad_accum_steps")))
        if varies:
            parts.append(_field_expr(col))
        elif first.get(col) is not None:
            shared.append(setting_text(col, first))
    labelled = runs.with_columns(
        pl.concat_str(series, separator=" · ", ignore_nulls=True).alias("series"),
        (pl.concat_str(parts, separator=" · ", ignore_nulls=True) if parts else pl.lit("all runs")).alias("config"))
    return _apart(labelled), " · ".join(shared)


def _apart(labelled: pl.DataFrame) -> pl.DataFrame:
    """Where one bar would still pool several configurations (the same labels from different files, such as short
    and long windows of the same setup; or runs of one file measured at two boundaries or in two environments), the
    series names what tells them apart: the source file, then where the energy was measured, then the environment.
    Repeats are pooled only within a configuration (its stored key), never across."""
    if "config_key" not in labelled.columns or not labelled.height:
        return labelled
    tellers = (("source_file", pl.col("source_file").fill_null("no file")),
               ("energy_boundary", pl.lit("measured at ") + pl.col("energy_boundary").fill_null("not stated")),
               ("env_id", pl.lit("env ") + pl.col("env_id").cast(pl.String).str.slice(0, 8).fill_null("not stated")),
               ("config_key", pl.lit("configuration ") + pl.col("config_key").str.slice(0, 8)))
    for column, text in tellers:
        pooled = pl.col("config_key").n_unique().over("series", "config") > 1
        if column in labelled.columns and labelled.select(pooled.any()).item():
            labelled = labelled.with_columns(pl.when(pooled).then(pl.col("series") + " · " + text)
                                             .otherwise(pl.col("series")).alias("series"))
    return labelled


def _field_expr(col: str) -> pl.Expr:
    """A configuration field's value as a person reads it on the axis ('FP16', 'batch 2x8', 'rate 2/s')."""
    c = pl.col(col)
    if col == "mode":
        return c.replace_strict(MODE_NAMES, default=c)
    if col == "precision":
        return c.replace_strict({k: precision_name(k) for k in ("fp32", "tf32", "fp16", "bf16", "fp16-weights")},
                                default=c)
    if col == "workload":
        return c
    if col == "batch_size":
        return pl.concat_str([pl.lit("batch "), pl.when(pl.col("grad_accum_steps").fill_null(1) > 1)
                              .then(pl.col("grad_accum_steps").cast(pl.String) + "x").otherwise(pl.lit("")),
                              c.cast(pl.String).fill_null("not stated")])
    field = BY_NAME[col]
    if col == "compile":
        return pl.when(c).then(pl.lit("compiled")).when(c.not_()).then(pl.lit("not compiled"))
    text = c.cast(pl.String).str.replace(r"\.0$", "")
    suffix = pl.lit(field.suffix)
    if field.suffix.startswith(" ") and field.suffix.endswith("s"):  # '1 GPU', '1 token'
        suffix = pl.when(text == "1").then(pl.lit(field.suffix[:-1])).otherwise(suffix)
    return pl.concat_str([pl.lit(field.prefix), text, suffix])


@memo.shared(max_entries=8)  # a frame of up to one row per run: kept for a few selections
def chart_runs(measured: pl.DataFrame) -> tuple[pl.DataFrame, str, str | None]:
    """The runs the charts draw, labelled (`with_labels`) and cut to MAX_SERIES series and
    MAX_CONFIGS configurations with the most runs; the fields all share; what was left out, if any."""
    labelled, shared = with_labels(measured)
    labelled, series_left = limit(labelled, "series", MAX_SERIES)
    labelled, configs_left = limit(labelled, "config", MAX_CONFIGS)
    left_out = None
    if series_left or configs_left:
        left_out = (f"The chart shows the {MAX_SERIES} series and {MAX_CONFIGS} configurations with the most runs "
                    f"({series_left} series and {configs_left} configurations more match); narrow the filters.")
    return labelled, shared, left_out


def limit(runs: pl.DataFrame, column: str, most: int) -> tuple[pl.DataFrame, int]:
    """Keep the `most` values of `column` with the most runs; return how many were left out."""
    counts = runs[column].value_counts(sort=True)
    if counts.height <= most:
        return runs, 0
    keep = counts[column].head(most)
    return runs.filter(pl.col(column).is_in(keep.to_list())), counts.height - most


@memo.shared(max_entries=32)
def bars(runs: pl.DataFrame, metric: Metric) -> pl.DataFrame:
    """One bar per series and configuration over the ok runs that measured the metric: the mean of
    its repeats (`value`), n, the 95 % interval (`ci_low`, `ci_high`; None for a single run), the
    repeats themselves (`values`, for ratio intervals), the weakest trust grade of the
    configurations behind it (`grade`) and whether it is an overloaded serving point (`overloaded`)."""
    measured = runs.filter(pl.col(metric.column).is_not_null() & pl.col(metric.column).is_finite()
                           & (pl.col("status") == "ok"))
    grades = pl.col("config_grade") if "config_grade" in measured.columns else pl.lit(None, pl.String)
    estimated = _ESTIMATED if metric.energy else pl.lit(None, pl.String)  # a throughput is measured either way
    grouped = (measured.with_columns(grades.alias("_grade"), estimated.alias("_estimated"))
               .with_columns(basis_expr("source_kind", "_estimated").alias("_basis")).group_by(["series", "config"])
               .agg(pl.col(metric.column).alias("values"), pl.len().alias("n"),
                    worst_grade_expr("_grade").alias("grade"),
                    pl.col("energy_boundary").drop_nulls().unique().sort().str.join(", ").alias("boundary"),
                    pl.col("energy_method").drop_nulls().unique().sort().str.join(", ").alias("method"),
                    pl.col("_basis").drop_nulls().unique().sort().str.join(", ").alias("basis"),
                    pl.col("citation").drop_nulls().first().alias("citation"),
                    pl.col("device_name").first().alias("device_name"),  # a series is a device at its settings
                    pl.col("batch_size").first().alias("batch_size"), pl.col("seq_len").first().alias("seq_len"),
                    (OVERLOADED.any() if "flags" in measured.columns else pl.lit(False)).alias("overloaded")))
    stats = [aggregate(v) for v in grouped["values"].to_list()]
    return (grouped.with_columns(
                pl.Series("value", [a.mean if a else None for a in stats], pl.Float64),
                pl.Series("ci_low", [a.ci95_low if a else None for a in stats], pl.Float64),
                pl.Series("ci_high", [a.ci95_high if a else None for a in stats], pl.Float64),
            ).sort(["config", "series"]))



MAX_DEFAULT_BARS = 12  # more bars than this do not read: the chart shows each series' best instead


def readable_bars(frame: pl.DataFrame, higher_is_better: bool, show_all: bool) -> tuple[pl.DataFrame, str | None]:
    """The bars the chart shows by default: all when they are few (or asked for), else each
    series' best configuration for the metric (the best `MAX_DEFAULT_BARS` series when even those
    are many), with a sentence saying what is left out."""
    if show_all or frame.height <= MAX_DEFAULT_BARS:
        return frame, None
    # an overloaded point measured what arrived, not the load it was offered: never a series' best
    servable = frame.filter(~pl.col("overloaded")) if "overloaded" in frame.columns else frame
    ranked = servable.sort("value", descending=higher_is_better, nulls_last=True)
    best = ranked.group_by("series", maintain_order=True).first()
    kept = best.head(MAX_DEFAULT_BARS).sort(["config", "series"])
    series = best.height
    devices = best["device_name"].n_unique() if "device_name" in best.columns else series
    each, what = (("device", "devices") if devices == series else
                  ("series", f"series ({count(devices, 'device')}, each at several settings: power, system, source)"))
    cut = f", the best {MAX_DEFAULT_BARS} of {series} {what}" if series > MAX_DEFAULT_BARS else ""
    return kept, (f"Showing each {each}'s best configuration for this metric{cut}: {kept.height} of "
                  f"{frame.height} configurations. Turn on 'Show every configuration' to see them all, or narrow "
                  "the filters; the table above lists every configuration.")


REFERENCE_HELP = ("Adds the chart metric of each row divided by this device's on the same configuration (same "
                  "workload, mode, precision, batch, sequence length)")
COVERAGE_CAPTION = ("How many runs measured each metric; stated findings are ratios a source states for the device. "
                    "Pick devices and workloads in the filters from here.")
BAR_CAPTION = ("Each bar is the mean of a configuration's repeats; error bars are its 95 % confidence interval "
               "(Student's t; none for a single run); the grade on the bar is its trust grade. Hover for n, the "
               "interval, basis, boundary and source.")
BAR_GRADES = ("A bar's grade is the weakest of the configurations behind it (window against the sensor's update "
              "period, steady state, repeats and their spread, counter vs trace, throttling, boundary, origin); a "
              "ratio's, the weaker of its two sides.")
STATED_CAPTION = ("Ratios and percentages the sources give where they give no absolute pair of figures; each with "
                  "its quote and citation.")


def chart_label(metric: Metric, currency: str) -> str:
    """The chart's axis label: a cost names its currency."""
    return metric.label if metric.column not in MONEY_COLUMNS else f"{metric.label} ({currency})"


def mixed_boundaries_warning(runs: pl.DataFrame, metric: Metric) -> str | None:
    """Said when an energy comparison mixes measurement boundaries (wall vs board)."""
    boundaries = mixed_boundaries(runs, metric)
    if len(boundaries) < 2:
        return None
    return (f"This comparison mixes measurement boundaries ({', '.join(boundaries)}): wall power includes the whole "
            "machine, board power only the GPU. Filter to one boundary for a like-for-like comparison.")


def mixed_boundaries(runs: pl.DataFrame, metric: Metric) -> list[str]:
    """The distinct measurement boundaries behind an energy metric in this selection."""
    if not metric.energy:
        return []
    measured = runs.filter(pl.col(metric.column).is_not_null())
    return sorted(measured["energy_boundary"].drop_nulls().unique().to_list())


def runs_table(labelled: pl.DataFrame, metric: Metric, detail_url: str) -> pl.DataFrame:
    """The runs behind the chart, one row each, with a link to Run detail."""
    return labelled.with_columns(_ESTIMATED.alias("_estimated")).select(
        (pl.lit(detail_url + "?run_id=") + pl.col("run_id")).alias("Run"), pl.col("series").alias("Series"),
        pl.col("config").alias("Configuration"), pl.col("status").alias("Status"),
        pl.col(metric.column).alias(metric.label),
        pl.col("energy_boundary").replace_strict(BOUNDARY_NAMES, default=None).alias("Energy measured at"),
        pl.col("energy_method").alias(figure("energy_method").label),
        basis_expr("source_kind", "_estimated").alias("Basis"),
        pl.col("trust_grade").fill_null("not graded").alias("Trust grade"), pl.col("citation").alias("Citation"))


def energy_time_points(runs: pl.DataFrame) -> pl.DataFrame:
    """Time per example (s) and energy per example (J) for runs that measured both."""
    return (runs.filter(pl.col("throughput_sps").is_not_null() & pl.col("j_per_sample").is_not_null())
            .with_columns((1.0 / pl.col("throughput_sps")).alias("s_per_sample")))


# --- the all-devices table -------------------------------------------------------------------

@memo.shared(max_entries=8)  # a frame of up to one row per run: kept for a few selections
def config_table(runs: pl.DataFrame, reference: str | None, metric: Metric, currency: str) -> pl.DataFrame:
    """One row per configuration (device, system, power setting, source, tag and setup: a
    configuration's repeats pool, nothing else does), several metrics at once (means over
    repeats, `Runs` counting them), its trust grade, plus the chosen metric relative to the
    `reference` device on the same configuration (Lambda style). Missing stays missing."""
    keys = ["device_name", *_SERIES_BESIDE, *COMPARE.fields, "config_key"]
    # lazy: only the columns the table reads are filtered and grouped, not every column of every run
    measured = runs.lazy().filter((pl.col("status") == "ok") & (pl.col("mode") != "idle"))
    present = [METRICS[k] for k in TABLE_METRICS if METRICS[k].column in runs.columns]
    tokens = [m.column for m in present if m in TOKEN_COLUMNS]
    stated = measured.select([pl.col(c).drop_nulls().len() for c in tokens]).collect().row(0, named=True)
    cols = [m for m in present if m not in TOKEN_COLUMNS or stated[m.column]]
    keys = [k for k in keys if k in runs.columns]
    grouped = (measured.group_by(keys).agg(pl.len().alias("n"), *[pl.col(m.column).mean() for m in cols],
                                           pl.col("energy_boundary").drop_nulls().first(),
                                           _ESTIMATED.drop_nulls().min().alias("_estimated"),  # the most estimated
                                           worst_grade_expr("config_grade").alias("grade"),
                                           pl.col("latency_missing_reason").drop_nulls().first(),
                                           OVERLOADED.any().alias("_overloaded"))
               .collect())
    rel_label = None
    if reference:
        # relative to the reference device at the same configuration, and only where it has exactly one there (two
        # power settings or sources of it on one configuration are not averaged); an overloaded point is no basis
        rel_label = f"{metric.label.split(' (')[0]} relative to {reference} (×)"
        config = [c for c in COMPARE.fields if c in grouped.columns]
        ref = (grouped.filter((pl.col("device_name") == reference) & ~pl.col("_overloaded"))
               .group_by(config).agg(pl.col(metric.column).first().alias("_ref"), pl.len().alias("_refs")))
        grouped = (grouped.join(ref, on=config, how="left", nulls_equal=True)
                   .with_columns(pl.when((pl.col("_refs") == 1) & ~pl.col("_overloaded"))
                                 .then(pl.col(metric.column) / pl.col("_ref")).alias(rel_label))
                   .drop("_ref", "_refs"))
    named = grouped.with_columns(
        pl.col("energy_boundary").replace_strict(BOUNDARY_NAMES, default=pl.col("energy_boundary")),
        basis_expr("source_kind", "_estimated").alias("source_kind"),
        pl.col("precision").replace_strict({k: precision_name(k) for k in ("fp32", "tf32", "fp16", "bf16",
                                                                            "fp16-weights")},
                                           default=pl.col("precision")),
        pl.col("mode").replace_strict(MODE_NAMES, default=pl.col("mode")),
        pl.when(pl.col("grad_accum_steps").fill_null(1) > 1)
        .then(pl.col("grad_accum_steps").cast(pl.String) + "x" + pl.col("batch_size").cast(pl.String))
        .otherwise(pl.col("batch_size").cast(pl.String)).fill_null("not stated").alias("batch"),
    )
    order = [metric.column] if metric.column in named.columns else []
    named = named.sort([*order, "device_name"], descending=[metric.higher_is_better] * len(order) + [False],
                       nulls_last=True)
    # the configuration fields beyond the usual ones (load, lengths, engine, ...) are columns where any row states one
    described = [c for c in COMPARE.fields
                 if c not in _TABLE_BASE and c in named.columns and named[c].drop_nulls().len()]
    # an on/off setting reads as words (empty where a row does not state it, like every text cell)
    named = named.with_columns([_field_expr(c).alias(c) for c in described if named.schema[c] == pl.Boolean])
    renames = {"device_name": "Device", "system_name": "System", "workload": "Workload", "mode": "Mode",
               "precision": "Precision", "batch": "Batch", "seq_len": "Sequence length", "gpu_count": "GPUs",
               **{c: BY_NAME[c].label for c in described},
               "power_setting": "Power setting", "tag": "Tag", "source_kind": "Basis", "n": "Runs",
               "energy_boundary": "Energy measured at", "grade": "Trust grade",
               "latency_missing_reason": "Why no latency figures", "_overloaded": "Overloaded"}
    for m in cols:
        renames[m.column] = m.label if m.column not in MONEY_COLUMNS else f"{m.label} ({currency})"
    tagged = ["tag"] if named["tag"].drop_nulls().len() else []
    # a serving point whose latency percentiles were withheld (overloaded, too few requests) says why beside them
    withheld = ["latency_missing_reason"] if named["latency_missing_reason"].drop_nulls().len() else []
    overloaded = ["_overloaded"] if named["_overloaded"].any() else []
    shown = ["device_name", "system_name", "workload", "mode", "precision", "batch", "seq_len", *described,
             "gpu_count", "power_setting", *tagged, "source_kind", "n", *[m.column for m in cols],
             *overloaded, *withheld, *([rel_label] if rel_label else []), "grade", "energy_boundary"]
    return named.select(shown).rename(renames, strict=False)


def table_notes(metric: Metric, settings: CostSettings, shown: int, total: int) -> list[str]:
    """What the all-devices table shows and how it is sorted (plain text; the page escapes it)."""
    notes = []
    if total > shown:
        notes.append(f"Showing the first {shown:,} of {total:,} rows (sorted by {in_sentence(metric.label)}); "
                     "narrow the filters for the rest.")
    notes.append(f"Sorted by {metric.label.split(' (')[0].lower()}, "
                 f"{'highest' if metric.higher_is_better else 'lowest'} first; click a header to sort by it. Cost at "
                 f"{settings.describe()}, catalog prices in {settings.currency}.")
    return notes


def table_help(currency: str) -> dict[str, str]:
    """Hover help per column of the table: what it is, and why a cell can say 'not measured'."""
    out = {m.label: f"{m.title()}. Empty cells: {m.missing}." for m in (METRICS[k] for k in TABLE_METRICS)}
    out["Output tokens per request"] = "Generation runs: tokens generated per request (the prompt: sequence length)"
    cost = METRICS["cost"]
    out[f"{cost.label} ({currency})"] = (f"{cost.title()}: electricity + hardware, at the Cost page's default "
                                         f"settings in {currency}. Empty cells: {cost.missing}.")
    power = METRICS["electricity"]
    out[f"{power.label} ({currency})"] = (f"{power.title()}: the electricity part of the cost, at your electricity "
                                          f"price (the Cost page's settings); shown without a device price. "
                                          f"Empty cells: {power.missing}.")
    out["Why no latency figures"] = ("A serving point whose TTFT, ITL, TPOT and end-to-end percentiles were withheld "
                                     "when it was measured, and why (an overloaded point: arrivals outpaced "
                                     "completions; too few requests in the steady state)")
    out["Runs"] = "Runs averaged in this row (repeats of the same configuration)"
    out["Trust grade"] = ("How far the row's figures can be trusted, A (decision grade) to D (unreliable): the "
                          "weakest grade of the configurations behind the row (the legend below says what each means)")
    out["Basis"] = ("measured here (a run on this machine), imported (an uploaded file), or reference table; "
                    "'energy estimated' where the energy was modelled (CPU utilisation × TDP), not measured; "
                    "'energy partly estimated' where the tool that wrote it modelled part of it (CodeCarbon's CPU "
                    "or RAM power)")
    return out
