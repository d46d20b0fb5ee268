"""Cost & buying guide: cost per 1M samples for every run, in one currency, with the duty cycle;
a ranking of the cheapest qualifying configuration per device that ranks only what has a cost.

A run is costed when it has a throughput and an energy figure (measured, or, when the user asks,
estimated and labelled) and a device price convertible to the display currency. Everything else
is listed apart with the reason, never ranked.

Each costed row carries the trust grade of the figures its cost uses (`trust_grade`: the lower of
its throughput's and its energy's, each its configuration's stored grade; an estimate has none),
and `grade_warning` says when a ranking rests on grades C or D.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from decision.aggregates import NOT_GRADED, low_grade_warning
from decision.money import (
    J_PER_KWH,
    NO_PRICE,
    SECONDS_PER_YEAR,
    CostSettings,
    CostSplit,
    CostTerms,
    Rates,
    cost_split,
    cost_terms,
    crossover,
    price_covers,
    price_origin,
)
from decision.text import BASIS_NAMES, BOUNDARY_NAMES, batch_label, precision_name
from joulebench.metrics import label


@dataclass(frozen=True)
class Constraints:
    """What a device must meet to be ranked (Cost) or to fit (Decide); None: no constraint."""

    max_power_w: float | None = None
    min_memory_gb: float | None = None
    max_p99_ms: float | None = None
    budget: float | None = None  # per device, display currency

    def any(self) -> bool:
        return any(v is not None for v in (self.budget, self.max_power_w, self.min_memory_gb, self.max_p99_ms))

    def to_query(self) -> dict[str, list[str]]:
        """The constraints set, for a page's link."""
        return {k: [f"{v:g}"] for k, v in (("budget", self.budget), ("max_w", self.max_power_w),
                                           ("min_mem", self.min_memory_gb), ("max_p99", self.max_p99_ms)) if v}


def idle_power_by_device(runs: pl.DataFrame) -> dict[str, float]:
    """Each device's idle power (W), the mean of its idle measurements."""
    idle = runs.filter((pl.col("mode") == "idle") & pl.coalesce("avg_power_w", "idle_power_w").is_not_null())
    return dict(idle.group_by("device_name").agg(pl.coalesce("avg_power_w", "idle_power_w").mean().alias("w"))
                .iter_rows())


def converted_prices(catalog: pl.DataFrame, rates: Rates, currency: str,
                     overrides: Mapping[str, float | None] | None = None) -> tuple[dict[str, float], dict[str, str]]:
    """Device prices in `currency` (overrides are already in it), and why the others have none."""
    prices: dict[str, float] = {}
    missing: dict[str, str] = {}
    for row in catalog.iter_rows(named=True):
        name = row["device_name"]
        conv = rates.convert(row["price_amount"], row["price_currency"], currency)
        given = overrides.get(name) if overrides is not None else conv.amount
        if given is not None and given < 0:
            missing[name] = "a negative price in the catalog (fix it on the Devices page)"
        elif given is not None:
            prices[name] = float(given)
        else:
            reason = conv.missing_reason if conv.amount is None else "price set to 0 (unknown) on this page"
            missing[name] = NO_PRICE if reason in (None, "no price in the catalog") else reason
    return prices, missing


PRICE_INPUT_MAX = 1e9  # the largest price a page's price box takes (the result schema's maximum)


def price_box(price: float | None) -> float:
    """The value a price box starts at: the converted price, held inside the box's range (a stored
    price or rate may convert to more than it takes; the page then keeps the converted price)."""
    return min(max(round(price or 0.0, 2), 0.0), PRICE_INPUT_MAX)


def price_help(row: Mapping[str, object], missing: str | None) -> str:
    """Where a device's catalog price comes from and what it covers (or why there is none)."""
    if missing:
        return missing
    return f"{price_origin(row)}; covers {price_covers(str(row.get('kind') or ''))}"


def mode_budgets(modes: pl.DataFrame) -> dict[str, float]:
    """'device|mode id' -> the Jetson power mode's budget (W), where the source states one."""
    known = modes.filter(pl.col("power_budget_w").is_not_null())
    return {f"{d}|{m}": float(w) for d, m, w in known.select("device_name", "mode_id", "power_budget_w").iter_rows()}


def with_cost(runs: pl.DataFrame, prices: Mapping[str, float], price_missing: Mapping[str, str],
              idle_w: Mapping[str, float], settings: CostSettings, estimate: bool = False,
              budgets: Mapping[str, float] | None = None) -> pl.DataFrame:
    """Add price, throughput_used and j_per_sample_used with their basis, the cost parts per 1M
    samples (electricity while busy, while idle, hardware), cost_per_1m_samples, and cost_missing
    (the reason), and the trust grades of the figures used (throughput_grade, energy_grade: the
    configuration's stored grade for a measured figure, none for an estimate; trust_grade: the lower).
    With `estimate`, gaps are filled and labelled: energy = TDP ÷ throughput (an
    upper bound) where a run measured none; throughput = (the setting's power cap, plus idle power
    when the energy is at the wall) ÷ J/example where a source gives energy but no throughput."""
    u = settings.utilisation
    per_joule = settings.electricity_per_kwh * settings.pue / J_PER_KWH * 1e6
    lifetime_s = settings.lifetime_years * SECONDS_PER_YEAR
    idle = pl.col("device_name").replace_strict(dict(idle_w), default=None, return_dtype=pl.Float64)
    budget = (pl.concat_str([pl.col("device_name"), pl.lit("|"), pl.col("power_mode").str.split(" ").list.first()])
              .replace_strict(dict(budgets or {}), default=None, return_dtype=pl.Float64))
    tdp = pl.when(pl.col("tdp_w") > 0).then(pl.col("tdp_w"))  # a TDP of 0 or below is no figure
    cap = pl.coalesce(pl.col("power_limit_w"), budget, tdp * pl.col("gpu_count").fill_null(1))
    wall = pl.col("energy_boundary").is_in(["wall", "system"])
    cap_tp = (cap + pl.when(wall).then(idle).otherwise(0.0)) / pl.col("j_per_sample")
    has_tp, has_j = pl.col("throughput_sps").is_not_null(), pl.col("j_per_sample").is_not_null()
    tdp_j = tdp * pl.col("gpu_count").fill_null(1) / pl.col("throughput_sps")
    grade = pl.col("config_grade") if "config_grade" in runs.columns else pl.lit(None, pl.String)
    # an energy figure the run estimated is an estimate, wherever the run was made (never 'measured here')
    method = pl.col("energy_method") if "energy_method" in runs.columns else pl.lit(None, pl.String)
    estimated_j = ((method == "estimated") | (pl.col("energy_boundary") == "estimated")).fill_null(False)
    frame = runs.with_columns(
        pl.when(has_tp).then(grade).otherwise(None).alias("throughput_grade"),
        pl.when(has_j).then(grade).otherwise(None).alias("energy_grade"),
    ).with_columns(
        # grades are letters A (best) to D, so the lower grade is the later letter
        pl.max_horizontal("throughput_grade", "energy_grade").alias("trust_grade"),
        pl.col("device_name").replace_strict(dict(prices), default=None, return_dtype=pl.Float64).alias("price"),
        idle.alias("idle_power_used_w"),
        pl.when(has_tp).then(pl.col("throughput_sps")).when(pl.lit(estimate)).then(cap_tp).otherwise(None)
        .alias("throughput_used"),
        pl.when(has_tp).then(pl.col("source_kind").replace_strict(BASIS_NAMES, default=pl.col("source_kind")))
        .when(pl.lit(estimate) & cap_tp.is_not_null())
        .then(pl.lit("estimate: power cap ÷ J/example")).otherwise(pl.lit("not measured")).alias("throughput_basis"),
        pl.when(has_j).then(pl.col("j_per_sample"))
        .when(pl.lit(estimate)).then(tdp_j).otherwise(None).alias("j_per_sample_used"),
        pl.when(has_j & estimated_j).then(pl.lit("estimate (the run estimated its energy, e.g. TDP × time)"))
        .when(has_j).then(pl.col("source_kind").replace_strict(BASIS_NAMES, default=pl.col("source_kind")) + " · "
                            + pl.col("energy_boundary").replace_strict(BOUNDARY_NAMES, default="boundary not stated"))
        .when(pl.lit(estimate) & tdp_j.is_not_null()).then(pl.lit("estimate: TDP ÷ throughput"))
        .otherwise(pl.lit("not measured")).alias("energy_basis"),
    )
    frame = frame.with_columns(
        (pl.col("j_per_sample_used") * per_joule).alias("energy_cost_per_1m"),
        (pl.col("idle_power_used_w").fill_null(0) / pl.col("throughput_used") * (1 - u) / u * per_joule)
        .alias("idle_cost_per_1m"),
        (pl.col("price") / (pl.col("throughput_used") * lifetime_s * u) * 1e6).alias("hardware_cost_per_1m"),
    ).with_columns(
        # the electricity part needs no price: known whenever the energy and the throughput are
        (pl.col("energy_cost_per_1m") + pl.col("idle_cost_per_1m")).alias("electricity_cost_per_1m"),
        (pl.col("energy_cost_per_1m") + pl.col("idle_cost_per_1m") + pl.col("hardware_cost_per_1m"))
        .alias("cost_per_1m_samples"),
        pl.when(pl.col("throughput_used").is_null())
        .then(pl.lit("no throughput" + ("" if estimate else " (turn on estimates to derive one from energy)")))
        .when(pl.col("j_per_sample_used").is_null())
        .then(pl.lit("no energy per example" + (" and no TDP to estimate one" if estimate else "")))
        .when(pl.col("price").is_null())
        .then(pl.col("device_name").replace_strict(dict(price_missing), default="no price", return_dtype=pl.String))
        .otherwise(None).alias("cost_missing"),
    )
    if "j_per_token" in frame.columns and "tokens_per_s" in frame.columns:
        # generation runs: the same formula per output token (measured figures only, never estimated)
        tokens_s = pl.col("tokens_per_s")
        frame = frame.with_columns(
            (pl.col("j_per_token") * per_joule
             + pl.col("idle_power_used_w").fill_null(0) / tokens_s * (1 - u) / u * per_joule)
            .alias("electricity_cost_per_1m_tokens"),
            (pl.col("price") / (tokens_s * lifetime_s * u) * 1e6).alias("hardware_cost_per_1m_tokens"),
        ).with_columns(
            (pl.col("electricity_cost_per_1m_tokens") + pl.col("hardware_cost_per_1m_tokens"))
            .alias("cost_per_1m_tokens"))
    return frame


def terms_of(row: Mapping[str, object], settings: CostSettings) -> CostTerms:
    """A costed run's cost as A + B ÷ u (for the crossover and the utilisation curve)."""
    idle = row.get("idle_power_used_w")
    return cost_terms(float(row["j_per_sample_used"]), float(row["throughput_used"]),  # type: ignore[arg-type]
                      None if idle is None else float(idle), float(row["price"]), settings)  # type: ignore[arg-type]


def _qualifying(costed: pl.DataFrame, c: Constraints) -> pl.DataFrame:
    frame = costed
    if c.max_power_w is not None:
        frame = frame.filter(pl.coalesce("avg_power_w", "power_limit_w", "tdp_w") <= c.max_power_w)
    if c.min_memory_gb is not None:
        frame = frame.filter(pl.col("memory_gb") >= c.min_memory_gb)
    if c.max_p99_ms is not None:
        frame = frame.filter(pl.col("latency_p99_ms") <= c.max_p99_ms)
    if c.budget is not None:
        frame = frame.filter(pl.col("price") <= c.budget)
    return frame


def rank(runs: pl.DataFrame, constraints: Constraints) -> tuple[pl.DataFrame, pl.DataFrame]:
    """(ranked, not ranked). Ranked: the cheapest qualifying costed configuration per device,
    cheapest first, numbered. Not ranked: devices with runs here but no cost, and why."""
    ok = runs.filter(pl.col("status") == "ok")
    costed = _qualifying(ok.filter(pl.col("cost_per_1m_samples").is_not_null()), constraints)
    best = (costed.sort(["cost_per_1m_samples", "throughput_used"], descending=[False, True])
            .group_by("device_name", maintain_order=True).first())
    ranked = best.with_row_index("rank", offset=1).with_columns(pl.col("rank").cast(pl.Int64))
    others = ok.filter(~pl.col("device_name").is_in(ranked["device_name"].to_list()))
    reasons = (others.with_columns(pl.coalesce("cost_missing", pl.lit("fails a constraint")).alias("why"))
               .group_by("device_name").agg(pl.col("why").unique().sort().str.join("; ").alias("why"),
                                            pl.len().alias("runs"))
               .sort("device_name"))
    return ranked, reasons


def electricity_only(runs: pl.DataFrame, constraints: Constraints) -> pl.DataFrame:
    """Devices with an electricity cost but no device price (so no total, never ranked): per device the
    qualifying configuration with the least electricity per 1M samples (the budget cannot be checked
    without a price, so it is not applied), least first."""
    ok = runs.filter((pl.col("status") == "ok") & pl.col("price").is_null()
                     & pl.col("electricity_cost_per_1m").is_not_null())
    found = _qualifying(ok, replace(constraints, budget=None))
    return (found.sort(["electricity_cost_per_1m", "throughput_used"], descending=[False, True])
            .group_by("device_name", maintain_order=True).first())


def setting_text(row: Mapping[str, Any]) -> str:
    """'BF16, batch not stated, max_num_seqs 2048': what was set for a costed row, for a sentence."""
    parts = [precision_name(row.get("precision")), batch_label(row.get("batch_size"), row.get("grad_accum_steps"))]
    if row.get("seq_len"):
        parts.append(f"seq {row['seq_len']}")
    parts += [str(row[k]) for k in ("tag", "power_setting") if row.get(k) and row[k] != "default"]
    return ", ".join(parts)


def split_of(row: Mapping[str, object], settings: CostSettings, per: str = "samples") -> CostSplit:
    """A costed row's cost per 1M samples (or output tokens) as electricity + hardware, with the workings."""
    def num(key: str) -> float | None:
        value = row.get(key)
        return None if value is None else float(value)  # type: ignore[arg-type]

    j, rate = ((num("j_per_sample_used"), num("throughput_used")) if per == "samples"
               else (num("j_per_token"), num("tokens_per_s")))
    idle = num("idle_power_used_w")
    missing = str(row.get("cost_missing") or NO_PRICE)
    return cost_split(j, rate, idle if idle is not None and rate else None, num("price"), settings, per,
                      price_missing=missing)


def _tag(frame: pl.DataFrame) -> pl.Expr:
    """What the source names the configuration by (a server setting such as 'max_num_seqs 2048'), if any."""
    return pl.col("tag") if "tag" in frame.columns else pl.lit(None, pl.String)


def electricity_table(found: pl.DataFrame, currency: str) -> pl.DataFrame:
    """The devices without a price: their electricity per 1M samples (and output tokens), the hardware part
    saying how to get it."""
    money = f"({currency} per 1M samples)"
    tokens = []
    if "electricity_cost_per_1m_tokens" in found.columns and found["j_per_token"].drop_nulls().len():
        tokens = [pl.col("tokens_per_s").alias(label("tokens_per_s")),
                  pl.col("j_per_token").alias(label("j_per_token")),
                  pl.col("electricity_cost_per_1m_tokens").alias(f"Electricity ({currency} per 1M output tokens)")]
    return found.select(
        pl.col("device_name").alias("Device"), pl.col("precision").alias("Precision"),
        pl.col("batch_size").alias("Batch"), _tag(found).alias("Configuration"),
        pl.col("power_setting").alias("Power setting"),
        pl.col("throughput_used").alias(label("throughput_sps")),
        pl.col("j_per_sample_used").alias(label("j_per_sample")), pl.col("energy_basis").alias("Energy basis"),
        pl.col("electricity_cost_per_1m").alias(f"Electricity {money}"), *tokens,
        pl.coalesce("cost_missing", pl.lit(NO_PRICE)).alias("Hardware"),
        pl.col("trust_grade").fill_null(NOT_GRADED).alias("Trust grade"), pl.col("run_id").alias("Run"),
    )


def ranking_table(ranked: pl.DataFrame, currency: str) -> pl.DataFrame:
    """The ranking with human headers and units (numbers stay numbers, for sorting); for generation
    runs also their output tokens/s, J per output token and cost per 1M output tokens."""
    money = f"({currency} per 1M samples)"
    tokens = []
    if "cost_per_1m_tokens" in ranked.columns and ranked["j_per_token"].drop_nulls().len():
        per = f"({currency} per 1M output tokens)"
        tokens = [pl.col("tokens_per_s").alias(label("tokens_per_s")),
                  pl.col("j_per_token").alias(label("j_per_token")),
                  pl.col("electricity_cost_per_1m_tokens").alias(f"Electricity {per}"),
                  pl.col("hardware_cost_per_1m_tokens").alias(f"Hardware {per}"),
                  pl.col("cost_per_1m_tokens").alias(f"Cost {per}")]
    return ranked.select(
        pl.col("rank").alias("Rank"), pl.col("device_name").alias("Device"),
        pl.col("precision").alias("Precision"), pl.col("batch_size").alias("Batch"),
        pl.col("seq_len").alias("Sequence length"), _tag(ranked).alias("Configuration"),
        pl.col("power_setting").alias("Power setting"),
        pl.col("throughput_used").alias(label("throughput_sps")), pl.col("throughput_basis").alias("Throughput basis"),
        pl.col("j_per_sample_used").alias(label("j_per_sample")), pl.col("energy_basis").alias("Energy basis"),
        pl.col("idle_power_used_w").alias(label("idle_power_w")),
        pl.col("price").alias(f"Price ({currency})"),
        pl.col("electricity_cost_per_1m").alias(f"Electricity {money}"),
        pl.col("hardware_cost_per_1m").alias(f"Hardware {money}"),
        pl.col("cost_per_1m_samples").alias(f"Cost {money}"),
        pl.col("energy_cost_per_1m").alias(f"of the electricity, while busy {money}"),
        pl.col("idle_cost_per_1m").alias(f"of the electricity, while idle {money}"),
        *tokens,
        pl.col("trust_grade").fill_null(NOT_GRADED).alias("Trust grade"),
        pl.col("latency_p99_ms").alias(label("latency_p99_ms")), pl.col("memory_gb").alias("Memory (GB)"),
        pl.col("run_id").alias("Run"),
    )


def grade_warning(ranked: pl.DataFrame) -> str | None:
    """The warning (Markdown, names escaped) when a ranked device's cost rests on figures graded C or
    D: which devices, which grades, and what would settle it; None otherwise."""
    grades = dict(ranked.select("device_name", "trust_grade").iter_rows()) if not ranked.is_empty() else {}
    return low_grade_warning(grades, "This ranking")


def crossovers(ranked: pl.DataFrame, settings: CostSettings) -> list[tuple[str, str, float]]:
    """For the cheapest device against each other ranked one: the utilisation where they swap."""
    rows = list(ranked.iter_rows(named=True))
    out: list[tuple[str, str, float]] = []
    if len(rows) < 2:
        return out
    first = terms_of(rows[0], settings)
    for other in rows[1:]:
        t = terms_of(other, settings)
        u = crossover(first, t)
        if u is not None:
            low = rows[0]["device_name"] if first.at(u / 2) < t.at(u / 2) else other["device_name"]
            high = other["device_name"] if low == rows[0]["device_name"] else rows[0]["device_name"]
            out.append((low, high, u))
    return out


def utilisation_curve(ranked: pl.DataFrame, settings: CostSettings, start_pct: int = 5) -> pl.DataFrame:
    rows = []
    for r in ranked.iter_rows(named=True):
        t = terms_of(r, settings)
        rows += [{"device": r["device_name"], "utilisation": p / 100, "cost": t.at(p / 100)}
                 for p in range(start_pct, 101)]
    return pl.DataFrame(rows, schema={"device": pl.String, "utilisation": pl.Float64, "cost": pl.Float64})


def sensitivity(runs: pl.DataFrame, prices: Mapping[str, float], price_missing: Mapping[str, str],
                idle_w: Mapping[str, float], settings: CostSettings, constraints: Constraints,
                estimate: bool, values: list[float], budgets: Mapping[str, float] | None = None) -> pl.DataFrame:
    """Cost per 1M samples of each device's cheapest configuration as the electricity price moves."""
    frames = []
    for value in values:
        moved = replace(settings, electricity_per_kwh=value)
        ranked, _ = rank(with_cost(runs, prices, price_missing, idle_w, moved, estimate, budgets), constraints)
        frames.append(ranked.select("device_name", "cost_per_1m_samples", "rank")
                      .with_columns(pl.lit(value).alias("x")))
    return pl.concat(frames) if frames else pl.DataFrame()
