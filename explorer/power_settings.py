"""Power settings: the data behind the Power settings page, `joulebench recommend` and the buying
guide's "each device at its best setting for this goal".

Runs come from `db.queries.power_setting_runs`; the modelling is `tuning`'s. Nothing here imports
streamlit, so the CLI shares it; the page's cached wrappers live in `explorer.data`.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import Any

import polars as pl

from db import Store, queries
from decision.money import J_PER_KWH, SECONDS_PER_YEAR, CostSettings, Rates
from decision.text import count
from joulebench.errors import PredictionRefusedError
from joulebench.metrics import label
from tuning import (
    POWER_LIMIT,
    UNIT_RUN,
    UNIT_SAMPLE,
    UNIT_TOKEN,
    Constraints,
    Goal,
    ModeOption,
    PowerProfile,
    Recommendation,
    profiles_from_runs,
    recommend,
)


@dataclass(frozen=True)
class Selection:
    """Which runs to model: one device and workload; the rest narrows when several configurations
    (precision, batch size, ...) have power settings."""

    device: str
    workload: str
    mode: str | None = None
    precision: str | None = None
    batch_size: int | None = None
    tag: str | None = None


@dataclass(frozen=True)
class Loaded:
    profiles: list[PowerProfile]  # one per configuration, the one with the most settings first
    modes: list[ModeOption]  # the device's power modes from the power-mode table (Jetsons)
    catalog: dict[str, Any] | None  # the device's catalog row (price, currency, TDP)


def mode_options(table: pl.DataFrame) -> list[ModeOption]:
    """Power-mode table rows -> ModeOption (features None where the table lacks a clock)."""
    out = []
    for row in table.iter_rows(named=True):
        values = [row.get(k) for k in ("cpu_cores", "cpu_max_mhz", "gpu_max_mhz", "memory_max_mhz")]
        known = [float(v) for v in values if v is not None and v > 0]
        x = tuple(known) if len(known) == len(values) else None
        name = f" ({row['mode_name']})" if row.get("mode_name") else ""
        out.append(ModeOption(str(row["mode_id"]), f"mode {row['mode_id']}{name}", x))
    return out


def load(store: Store, selection: Selection) -> Loaded:
    runs = queries.power_setting_runs(store, selection.device, selection.workload, selection.mode,
                                      selection.precision, selection.batch_size, selection.tag)
    return Loaded(profiles_from_runs(runs), mode_options(queries.device_power_modes(store, selection.device)),
                  queries.device_catalog_row(store, selection.device))


def catalog_price(loaded: Loaded, rates: Rates, currency: str) -> float | None:
    """The device's catalog price in `currency`, converted with the stored exchange rates (never an
    amount in one currency weighed against electricity in another); None without a price;
    PredictionRefusedError when the price cannot be converted."""
    catalog = loaded.catalog or {}
    if catalog.get("price_amount") is None:
        return None
    converted = rates.convert(catalog["price_amount"], catalog.get("price_currency"), currency)
    if converted.amount is None:
        raise PredictionRefusedError(f"the cost goal needs the device's price in {currency}: "
                                     f"{converted.missing_reason}")
    return converted.amount


def cost_goal(inputs: CostSettings, device_price: float | None) -> Goal:
    """The cost goal's weights: electricity per joule and the device's price per second of use."""
    if not device_price:
        raise PredictionRefusedError("the cost goal needs the device's price: enter one on the Devices page")
    usd_per_j = inputs.electricity_per_kwh * inputs.pue / J_PER_KWH
    usd_per_s = device_price / (inputs.lifetime_years * SECONDS_PER_YEAR * inputs.utilisation)
    return Goal("cost", usd_per_j=usd_per_j, usd_per_s=usd_per_s)


def make_goal(name: str, eta: float = 0.5, inputs: CostSettings | None = None,
              device_price: float | None = None) -> Goal:
    if name == "cost":
        return cost_goal(inputs or CostSettings(), device_price)
    return Goal(name, eta=eta)


def recommendation(loaded: Loaded, goal: Goal, constraints: Constraints | None = None) -> Recommendation:
    """The recommendation for the selection's main configuration (the one with the most settings)."""
    if not loaded.profiles:
        raise PredictionRefusedError("no finished runs of this device and workload at a known power limit or mode; "
                                     "measure some with `joulebench run --profile --power-limit ...` (GPUs) or "
                                     "`--power-mode ...` (Jetsons)")
    return recommend(loaded.profiles[0], goal, constraints, loaded.modes)


def units_of(profile: PowerProfile) -> tuple[str, str, str]:
    """Column labels: (time, throughput, energy) with their units."""
    if profile.unit == UNIT_SAMPLE:
        return "s per sample", "throughput (samples/s)", "J per sample"
    if profile.unit == UNIT_TOKEN:
        return "s per output token", "output tokens/s", "J per output token"
    return "s per run", "runs per hour", "J per run"


def candidates_frame(rec: Recommendation) -> pl.DataFrame:
    """One row per measured and predicted setting, for the table and the charts."""
    front = {p.label for p in rec.front}
    best = rec.best.point.label if rec.best else None
    rows = []
    for c in rec.candidates:
        p = c.point
        band = c.prediction
        per_hour = 3600.0 if rec.profile.unit == UNIT_RUN else 1.0
        rows.append({
            "setting": p.label, "power_limit_w": p.power_limit_w, "basis": "measured" if c.measured else "predicted",
            "s_per_unit": p.s_per_unit, "throughput": per_hour / p.s_per_unit, "avg_power_w": p.avg_power_w,
            "j_per_unit": p.j_per_unit,
            "j_per_unit_low": band.j_per_unit_range()[0] if band else None,
            "j_per_unit_high": band.j_per_unit_range()[1] if band else None,
            "throughput_low": per_hour / band.s_per_unit_range()[1] if band else None,
            "throughput_high": per_hour / band.s_per_unit_range()[0] if band else None,
            "runs": p.runs, "profile": p.profile, "on_front": p.label in front, "recommended": p.label == best,
            "excluded": c.excluded,
        })
    frame = pl.DataFrame(rows, infer_schema_length=None)
    if rec.profile.kind == POWER_LIMIT:
        return frame.sort("power_limit_w")
    return frame.sort("s_per_unit", descending=True)


def shown_table(rec: Recommendation, frame: pl.DataFrame) -> pl.DataFrame:
    """The table a person reads: units in the column names."""
    time_label, rate_label, energy_label = units_of(rec.profile)
    return frame.select(
        pl.col("setting").alias("Setting"), pl.col("basis").alias("Basis"),
        pl.col("throughput").alias(_cap(rate_label)),
        pl.col("s_per_unit").alias(_cap(time_label)), pl.col("avg_power_w").alias(label("avg_power_w")),
        pl.col("j_per_unit").alias(_cap(energy_label)), pl.col("on_front").alias("On Pareto front"),
        pl.col("recommended").alias("Recommended"), pl.col("excluded").alias("Constraint broken"),
        pl.col("runs").alias("Runs measured"))


def _cap(label: str) -> str:
    return label[:1].upper() + label[1:]


def model_summary(rec: Recommendation) -> str:
    """What the model is and how well it predicts held-out settings (or why there is none)."""
    if rec.model is None:
        return f"No predictions: {rec.refusal}"
    v = rec.model.validation
    edges = f"; {', '.join(v.not_held_out)} at the edge of the range, not held out" if v.not_held_out else ""
    return (f"{rec.model.spec.name} model ({rec.model.spec.description}); leave-one-out over "
            f"{len(v.held_out)} measured settings{edges}: MAPE time {v.time_mape_pct:.1f}%, "
            f"power {v.power_mape_pct:.1f}%, energy {v.energy_mape_pct:.1f}%; the band is ± the RMS error")


def best_settings(store: Store, devices: Sequence[str], workload: str, goal_name: str = "energy", *,
                  eta: float = 0.5, inputs: CostSettings | None = None, constraints: Constraints | None = None,
                  mode: str | None = None, precision: str | None = None,
                  batch_size: int | None = None) -> pl.DataFrame:
    """For the buying guide: each device's recommended power setting for the goal, one row per device
    with a power-setting profile of this workload; `setting_basis` says measured or predicted (with the
    model's leave-one-out MAPE), `why_not` why a device has no row's figures; `power_limit_w` /
    `power_mode_id` name the setting for matching runs, `precision` and `batch_size` the profile's
    configuration, and `recommendation` is the recommendation's sentence."""
    inputs = inputs or CostSettings()
    rates = Rates.from_frame(queries.exchange_rates(store))
    rows = []
    for device in devices:
        sel = Selection(device, workload, mode, precision, batch_size)
        loaded = load(store, sel)
        row: dict[str, Any] = {"device_name": device, "power_setting": None, "setting_basis": None,
                               "throughput_sps": None, "avg_power_w": None, "j_per_sample": None,
                               "throughput_change_pct": None, "energy_change_pct": None, "baseline_setting": None,
                               "configuration": None, "why_not": None, "power_limit_w": None,
                               "power_mode_id": None, "precision": None, "batch_size": None,
                               "recommendation": None}
        try:
            price = catalog_price(loaded, rates, inputs.currency) if goal_name == "cost" else None
            rec = recommendation(loaded, make_goal(goal_name, eta, inputs, price), constraints)
        except PredictionRefusedError as e:
            row["why_not"] = e.reason
            rows.append(row)
            continue
        row["configuration"] = rec.profile.describe()
        row["baseline_setting"] = rec.baseline.label
        row["precision"] = rec.profile.config.get("precision")
        row["batch_size"] = rec.profile.config.get("batch_size")
        if rec.best is None:
            row["why_not"] = rec.sentence()
        else:
            p = rec.best.point
            per_sample = rec.profile.unit == UNIT_SAMPLE
            row.update(power_setting=p.label, setting_basis=rec.basis(), avg_power_w=p.avg_power_w,
                       power_limit_w=p.power_limit_w, power_mode_id=p.mode_id, recommendation=rec.sentence(),
                       throughput_sps=p.throughput_per_s if per_sample else None,
                       j_per_sample=p.j_per_unit if per_sample else None,
                       throughput_change_pct=rec.throughput_change_pct(), energy_change_pct=rec.energy_change_pct())
        rows.append(row)
    return pl.DataFrame(rows, infer_schema_length=None)


def escape(text: str) -> str:
    """Text from files and the database made safe for st.markdown (no markup, no HTML)."""
    out = text.replace("\\", "\\\\")
    for ch in "*_`#[]<>|~$":
        out = out.replace(ch, "\\" + ch)
    return out


def settings_text(choice: dict[str, Any]) -> str:
    """'4 settings, 3 with time and power' for a workload of the page's list."""
    total, profiled = int(choice["settings"]), int(choice.get("profiled") or 0)
    text = count(total, "setting")
    return text if profiled == total else f"{text}, {profiled:,} with time and power"


def without_profile(choices: pl.DataFrame) -> str | None:
    """The device and workload pairs at known settings but without time and power measured at
    any: said once, so a reader knows why they are not offered."""
    rows = choices.filter(choices["profiled"] == 0)
    if rows.is_empty():
        return None
    pairs = [f"{r['device_name']} ({r['workload']}, {count(int(r['settings']), 'setting')})"
             for r in rows.head(8).iter_rows(named=True)]
    more = f" and {rows.height - 8:,} more" if rows.height > 8 else ""
    return ("Not offered, since none of their settings has both time and power measured: " + "; ".join(pairs) + more
            + ". Upload files that hold their energy or power, or measure them here.")


def no_profile_text(choices: pl.DataFrame) -> str:
    """What the page says when no device has a power-setting profile, and how to get one."""
    head = "No device in this database has a power-setting profile yet: runs at two or more power limits (GPU) or " \
           "power modes (Jetson), each with its time and power measured."
    return head + (" " + (without_profile(choices) or "") if not choices.is_empty() else "") + \
        " Upload a profile (a Zeus or Perseus power-limit sweep, or JouleBench result files), or profile this " \
        "machine below."
