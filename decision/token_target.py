"""Energy per token at a latency target: which device generates with the fewest joules per output token
while its latency stays under the user's limits: time per output token (TPOT p90, per request), inter-token
latency (ITL p90, every gap between tokens) and time to first token (TTFT p90), as joulebench.metrics defines
them. TPOT and ITL are different measures: a limit on one is applied to that figure only, never to the other
(a configuration whose source states only the other is "not known" for that limit).

Only like-for-like configurations are compared (a "shape", decision.token_shapes: the model, offline
batch or online serving, the load kind, the request lengths, the engine), whatever measured them (this
machine's runner or serve-bench, an imported vLLM / ML.ENERGY / AI Energy Score file), each figure labelled
with its basis; what a comparison leaves out is listed with the reason. Every figure is a configuration's
stored aggregate (the mean of its repeats, with n and its trust grade). A configuration without the figure a
limit needs is "not known", never counted as meeting it; an overloaded load point never meets a target.

For online serving the load points of a sweep share a shape: each device is taken at the highest load it
sustains within the target (requests/s), and its J/token and cost are those of that point.

    cost per 1M tokens = J/token x 1e6 / 3.6e6 x price per kWh x PUE            (electricity, always shown)
                         + device price / (tokens/s x lifetime in seconds x utilisation)   (hardware, with a price)
"""

from __future__ import annotations

from dataclasses import dataclass, field, replace
from typing import Any

import polars as pl

from decision import token_shapes
from decision.figures import DeviceAnswer
from decision.markdown import md
from decision.money import J_PER_KWH, CostSettings, CostTerms, Rates, cost_terms
from decision.text import ENERGY_ESTIMATED, basis_expr, money, sig
from decision.token_shapes import model_key
from joulebench.configuration import BY_NAME
from joulebench.metrics import ITL, TPOT, TTFT, Metric, label, short

__all__ = ["Target", "TokenDecision", "decide", "model_key", "token_configs", "with_serving"]

COST_FORMULA = ("cost per 1M tokens = electricity + hardware\n"
                "electricity = J/token × 1,000,000 ÷ 3,600,000 × price per kWh × PUE\n"
                "hardware = device price ÷ (output tokens/s × lifetime in seconds × utilisation)")
# the columns db.serving adds to a configuration (absent from a store read without them: not stated)
SERVING_COLUMNS: dict[str, pl.DataType | type[pl.DataType]] = {
    "load_kind": pl.String, "max_concurrency": pl.Int64, "arrival": pl.String, "engine": pl.String,
    "engine_version": pl.String, "prompt_tokens_requested": pl.Float64, "output_tokens_requested": pl.Float64,
    "length_distribution": pl.String, "goodput_slo": pl.String, "prompt_tokens_mean": pl.Float64,
    "output_tokens_mean": pl.Float64, "requests_per_s_mean": pl.Float64, "goodput_requests_per_s_mean": pl.Float64,
    "j_per_request_mean": pl.Float64, "e2e_latency_p90_ms_mean": pl.Float64, "overloaded": pl.Boolean,
    "latency_missing_reason": pl.String, "sweep_ids": pl.List(pl.String)}


@dataclass(frozen=True)
class Target:
    """The user's latency limits, ms (None: no limit)."""

    tpot_p90_ms: float | None = None
    ttft_p90_ms: float | None = None
    itl_p90_ms: float | None = None

    def limits(self) -> list[tuple[Metric, float]]:
        """(the metric, its limit) for every limit set, in the order they are checked and described."""
        return [(m, v) for m, v in ((TPOT.p90, self.tpot_p90_ms), (ITL.p90, self.itl_p90_ms),
                                    (TTFT.p90, self.ttft_p90_ms)) if v is not None]

    def describe(self) -> str:
        parts = [f"{_short(m)} ≤ {sig(v)} ms" for m, v in self.limits()]
        return " and ".join(parts) if parts else "no latency limit"


def _short(metric: Metric) -> str:
    """'TPOT p90': a latency column's family and statistic, as the limits name them."""
    return short(metric.name)


def with_serving(configs: pl.DataFrame, serving: pl.DataFrame) -> pl.DataFrame:
    """The configurations with how their token figures were measured (db.serving.serving_configs)."""
    if configs.is_empty() or serving.is_empty() or "config_key" not in configs.columns:
        return configs
    extra = [c for c in serving.columns if c == "config_key" or c not in configs.columns]
    return configs.join(serving.select(extra), on="config_key", how="left")


def shape_of(row: dict) -> str:
    """'llama-3.1-8b, prompt 512 + 128 new tokens, offline batch, engine ...': what is compared like for like."""
    return token_shapes.shape_of(row).label()


def token_configs(configs: pl.DataFrame, devices: list[str]) -> pl.DataFrame:
    """The candidate devices' configurations that have J per output token, with their shape and basis."""
    if "j_per_token_mean" not in configs.columns:
        return pl.DataFrame()
    rows = configs.filter(pl.col("device_name").is_in(devices) & pl.col("j_per_token_mean").is_not_null())
    if rows.is_empty():
        return rows
    rows = rows.with_columns([pl.lit(None, t).alias(c) for c, t in SERVING_COLUMNS.items() if c not in rows.columns])
    # an estimated energy (CPU utilisation x TDP) is called an estimate, never "measured here"
    rows = rows.with_columns([pl.lit(None, pl.String).alias(c) for c in ("energy_method", "energy_boundary")
                              if c not in rows.columns])
    estimated = (pl.when(((pl.col("energy_method") == "estimated") | (pl.col("energy_boundary") == "estimated"))
                         .fill_null(False)).then(pl.lit(ENERGY_ESTIMATED)).otherwise(pl.lit(None, pl.String)))
    return (token_shapes.assign(rows).with_columns(estimated.alias("_estimated"))
            .with_columns(basis_expr("source_kind", "_estimated").alias("basis")).drop("_estimated"))


def shapes(rows: pl.DataFrame) -> list[str]:
    """The shapes, those with the most devices first."""
    if rows.is_empty():
        return []
    counts = rows.group_by("shape").agg(pl.col("device_name").n_unique().alias("n")).sort(["n", "shape"],
                                                                                            descending=[True, False])
    return counts["shape"].to_list()


def _status(row: dict, target: Target) -> tuple[str, str]:
    """('meets' | 'misses' | 'not known', why) for one configuration."""
    withheld = row.get("latency_missing_reason")
    if row.get("overloaded"):
        return "misses", ("overloaded at this load: " + (f"latency withheld: {withheld}" if withheld else
                                                         "arrivals outpaced completions (no steady-state latency)"))
    for metric, limit in target.limits():
        value = row.get(metric.name + "_mean")
        if value is None and withheld:
            return "not known", f"{_short(metric)} withheld: {withheld}"
        if value is None:
            other = {TPOT.p90.name: ITL.p90, ITL.p90.name: TPOT.p90}.get(metric.name)
            stated = row.get(other.name + "_mean") if other is not None else None
            if other is not None and stated is not None:
                return "not known", (f"no {_short(metric)} in its runs; its source states {_short(other)} "
                                     f"{sig(stated)} ms, a different measure (set the limit on {_short(other)})")
            return "not known", f"no {_short(metric)} in its runs"
        if value > limit:
            return "misses", f"{_short(metric)} {sig(value)} ms > {sig(limit)} ms"
    return "meets", ""


def _latency_key(row: dict, target: Target) -> tuple[float, ...]:
    """How close a configuration is to the target: its figures of the limited metrics, in order."""
    return (bool(row.get("overloaded")), *(row.get(m.name + "_mean") or 0.0 for m, _ in target.limits()))


def _sustained(row: dict) -> float:
    """The load a serving point sustained: its requests/s, else its output tokens/s."""
    return float(row.get("requests_per_s_mean") or row.get("tokens_per_s_mean") or 0.0)


def held(configs: pl.DataFrame, device: str) -> str:
    """What a device's generation runs are, for an answer that has none at the asked shape: their models (at most
    three) and whether any gives J per token ('' when it has none)."""
    if configs.is_empty() or not {"device_name", "task", "model"} <= set(configs.columns):
        return ""
    mine = configs.filter((pl.col("device_name") == device) & (pl.col("task") == "text-generation"))
    if mine.is_empty():
        return ""
    models = sorted({m or "model not stated" for m in mine["model"].to_list()})
    energy = "j_per_token_mean" in mine.columns and mine["j_per_token_mean"].drop_nulls().len() > 0
    named = ", ".join(models[:3]) + (f" and {len(models) - 3} more" if len(models) > 3 else "")
    return (f"; it holds generation runs of {named}" + ("" if energy else ", none with J per token"))


def answer(rows: pl.DataFrame, shape: str, devices: list[str], target: Target, catalog: pl.DataFrame,
           rates: Rates, settings: CostSettings, configs: pl.DataFrame | None = None) -> list[DeviceAnswer]:
    """Per device, in order of fewest J/token among the configurations meeting the target (online serving:
    each device at the highest load it sustains within the target). `configs`: every configuration of the
    candidates, to say what a device without runs at the shape holds instead."""
    out = []
    same = rows.filter(pl.col("shape") == shape) if not rows.is_empty() else rows
    serving = not same.is_empty() and "serving" in same.columns and bool(same["serving"].any())
    prices = {r["device_name"]: r for r in catalog.iter_rows(named=True)}
    for device in devices:
        kind = (prices.get(device) or {}).get("kind")
        mine = same.filter(pl.col("device_name") == device) if not same.is_empty() else same
        if mine.is_empty():
            out.append(DeviceAnswer.per_token(device, kind, "not known", None,
                                              "no runs of this model and lengths with J per token"
                                              + held(configs if configs is not None else rows, device)))
            continue
        rated = [(r, *_status(r, target)) for r in mine.sort("j_per_token_mean").iter_rows(named=True)]
        meeting = [r for r, status, _ in rated if status == "meets"]
        if meeting:
            best = max(meeting, key=_sustained) if serving else meeting[0]
            status, why = "meets", ""
        else:  # the configuration closest to the target. A configuration whose figure for a limit is missing could
            # meet it: while one is "not known" the device is, never "misses" (only every configuration missing does)
            status = "not known" if any(s == "not known" for _, s, _ in rated) else "misses"
            candidates = [(r, w) for r, s, w in rated if s == status]
            best, why = min(candidates, key=lambda c: _latency_key(c[0], target))
        terms, missing = _cost(best, prices.get(device), rates, settings)
        out.append(DeviceAnswer.per_token(device, kind, status, best, why, terms,
                                          None if terms is None else terms.at(settings.utilisation), missing))
    order = {"meets": 0, "misses": 1, "not known": 2}
    return sorted(out, key=lambda a: (order[a.status], a.best["j_per_token_mean"] if a.best else float("inf")))


def electricity_per_1m(j_per_token: float | None, settings: CostSettings) -> float | None:
    """The electricity of 1M output tokens at the user's price and PUE (no device price needed)."""
    if j_per_token is None:
        return None
    return j_per_token * 1e6 / J_PER_KWH * settings.electricity_per_kwh * settings.pue


def cost_split(a: DeviceAnswer, settings: CostSettings) -> tuple[float | None, float | None]:
    """(electricity, hardware) per 1M output tokens: electricity whenever J/token is known, hardware with a
    device price (amortised at the configuration's output tokens/s and the user's utilisation)."""
    energy = electricity_per_1m(a.best.get("j_per_token_mean") if a.best else None, settings)
    return energy, (None if a.terms is None else a.terms.hardware_per_u / settings.utilisation)


def _cost(row: dict, device: dict | None, rates: Rates, settings: CostSettings) -> tuple[CostTerms | None, str]:
    """The per-sample cost formula (decision.money) per output token; idle electricity left out."""
    tokens_s = row.get("tokens_per_s_mean")
    if not tokens_s:
        return None, "no output tokens/s for this configuration"
    price = rates.convert(device.get("price_amount") if device else None,
                          device.get("price_currency") if device else None, settings.currency)
    if price.amount is None:
        return None, f"no device price in {settings.currency}: {price.missing_reason}"
    return cost_terms(row["j_per_token_mean"], tokens_s, None, price.amount, settings), ""


def _load_text(row: dict) -> str:
    """'2 requests/s' or 'concurrency 8' (a serving point's load), else ''."""
    if row.get("load_kind") == "concurrency" and row.get("max_concurrency") is not None:
        return f"concurrency {row['max_concurrency']}"
    if row.get("request_rate_per_s") is not None:
        return f"offered load {sig(row['request_rate_per_s'])} requests/s"
    return ""


def _config_text(row: dict) -> str:
    load = _load_text(row)
    parts = [load] if load else [f"batch {row['batch_size']}" if row.get("batch_size") else "batch not stated"]
    if row.get("precision") or not load:  # a server's precision is the server's: not stated by a load point
        parts.append(row.get("precision") or "precision not stated")
    parts += [row["tag"]] if row.get("tag") else []
    if row.get("power_setting") and row["power_setting"] != "default":
        parts.append(row["power_setting"])
    return ", ".join(parts)


def _md_config(row: dict) -> str:
    return md(_config_text(row))


def _figure(row: dict) -> str:
    n = row.get("j_per_token_n")
    return (f"{sig(row['j_per_token_mean'])} J/token (n {n}, grade {row.get('trust_grade') or 'not graded'}, "
            f"{row['basis']})")


def _money_text(a: DeviceAnswer, settings: CostSettings) -> str:
    """'cost per 1M output tokens 0.0029 USD electricity + 0.41 USD hardware = 0.41 USD' (or electricity only)."""
    energy, hardware = cost_split(a, settings)
    if energy is None:
        return ""
    c = settings.currency
    if hardware is None:
        return f"cost per 1M output tokens {money(energy, c)} electricity (hardware not known: {a.cost_missing})"
    return (f"cost per 1M output tokens {money(energy, c)} electricity + {money(hardware, c)} hardware = "
            f"{money(energy + hardware, c)} at your price, hardware amortised at that sustained rate")


def _sweep_sentences(meeting: list[DeviceAnswer], shape: str, target: Target, settings: CostSettings) -> list[str]:
    lines = []
    for i, a in enumerate(meeting):
        b = a.best
        assert b is not None
        rate = b.get("requests_per_s_mean")
        sustains = (f"sustains {sig(rate)} requests/s ({sig(b.get('tokens_per_s_mean'))} output tokens/s)"
                    if rate else f"sustains {sig(b.get('tokens_per_s_mean'))} output tokens/s")
        head = (f"At {target.describe()} ({shape}), **{a.device}**" if i == 0 else f"{a.device}")
        money_text = _money_text(a, settings)
        lines.append(f"{head} {sustains} at {sig(b['j_per_token_mean'])} J/token ({_md_config(b)}; n "
                     f"{b.get('j_per_token_n')}, grade {b.get('trust_grade') or 'not graded'}, {b['basis']})"
                     + (f"; {md(money_text)}" if money_text else "") + ".")
    return lines


def sentences(answers: list[DeviceAnswer], shape: str, target: Target, currency: str,
              settings: CostSettings | None = None) -> list[str]:
    """The answer in sentences (markdown, every name escaped), each computed from the figures beside it."""
    settings = settings or CostSettings(currency=currency)
    answers = [replace(a, device=md(a.device)) for a in answers]
    serving = any(a.best and a.best.get("serving") for a in answers)
    shape = md(shape)
    meeting = [a for a in answers if a.status == "meets"]
    lines = []
    if meeting and serving:
        lines += _sweep_sentences(meeting, shape, target, settings)
    elif meeting:
        top = meeting[0]
        assert top.best is not None
        lines.append(f"Fewest joules per output token with {target.describe()} ({shape}): **{top.device}** at "
                     f"{_md_config(top.best)}: {_figure(top.best)}.")
        for other in meeting[1:]:
            assert other.best is not None
            ratio = other.best["j_per_token_mean"] / top.best["j_per_token_mean"]
            lines.append(f"{other.device} also meets it, at {sig(ratio)}× the energy per token "
                         f"({_figure(other.best)}, {_md_config(other.best)}).")
    else:
        lines.append(f"No candidate device has a {shape} configuration with {target.describe()}.")
    costed = [a for a in meeting if a.cost_per_1m is not None]
    if len(costed) >= 2:
        cheapest = min(costed, key=lambda a: a.cost_per_1m or 0.0)
        lines.append(f"Cheapest per 1M output tokens among them at your electricity price and utilisation: "
                     f"**{cheapest.device}**, {money(cheapest.cost_per_1m, currency)}.")
    for a in answers:
        if a.status == "misses" and a.best is not None:
            closest = "lightest load" if serving else "fastest configuration"
            lines.append(f"{a.device} misses the target: even its {closest} has {a.why} ({_md_config(a.best)}).")
        elif a.status == "not known":
            lines.append(f"{a.device}: not known ({a.why}).")
    return lines


def table(answers: list[DeviceAnswer], currency: str, settings: CostSettings | None = None) -> pl.DataFrame:
    """One row per device: its chosen configuration's figures with their basis, and the cost split."""
    settings = settings or CostSettings(currency=currency)
    rows = []
    for a in answers:
        b = a.best or {}
        energy, hardware = cost_split(a, settings)
        rows.append({
            "Device": a.device, BY_NAME["gpu_count"].label: (b.get("gpu_count") or 1) if b else None,
            "Meets the target": a.status, "Configuration": _config_text(b) if b else "",
            label("j_per_token"): b.get("j_per_token_mean"),
            label("decode_j_per_token"): b.get("decode_j_per_token_mean"),
            label("tokens_per_s"): b.get("tokens_per_s_mean"), label("requests_per_s"): b.get("requests_per_s_mean"),
            TPOT.p90.label: b.get(TPOT.p90.name + "_mean"), ITL.p90.label: b.get(ITL.p90.name + "_mean"),
            TTFT.p90.label: b.get(TTFT.p90.name + "_mean"),
            f"Electricity per 1M output tokens ({currency})": energy,
            f"Hardware per 1M output tokens ({currency})": hardware,
            f"Cost per 1M output tokens ({currency})": a.cost_per_1m,
            "Grade": b.get("trust_grade"), "Basis": b.get("basis"),
            "Why": "; ".join(t for t in (a.why or a.cost_missing, b.get("lengths_note")) if t),
        })
    frame = pl.DataFrame(rows, infer_schema_length=None)
    if frame.is_empty():
        return frame
    # a column no row has a value in (no device priced) is typed as numbers, shown empty, not as "None"
    frame = frame.with_columns(pl.col(pl.Null).cast(pl.Float64))
    optional = (label("requests_per_s"), label("decode_j_per_token"))  # shown where a device has them
    return frame.drop([c for c in optional if not frame[c].drop_nulls().len()])


def curve(rows: pl.DataFrame, shape: str) -> pl.DataFrame:
    """The serving points of `shape`, one per device and load, in load order: what the latency-throughput
    and J/token-against-load charts draw (explorer.serving_charts)."""
    if rows.is_empty() or "serving" not in rows.columns:
        return pl.DataFrame()
    points = rows.filter((pl.col("shape") == shape) & pl.col("serving"))
    if points.is_empty():
        return pl.DataFrame()
    load = (pl.when(pl.col("load_kind") == "concurrency").then(pl.col("max_concurrency").cast(pl.Float64))
            .otherwise(pl.col("request_rate_per_s")))
    # a configuration pooled from several sweeps is a point of each (its aggregate); none stated: one curve
    return points.select(
        "device_name", "load_kind", load.alias("load"), "tokens_per_s_mean", "requests_per_s_mean",
        "j_per_token_mean", f"{TPOT.p90.name}_mean", f"{ITL.p90.name}_mean", f"{TTFT.p90.name}_mean",
        pl.col("overloaded").fill_null(False), "latency_missing_reason", "trust_grade", "basis",
        pl.when(pl.col("sweep_ids").list.len() > 0).then(pl.col("sweep_ids")).otherwise(None).alias("sweep_id")
    ).explode("sweep_id").sort(["device_name", "sweep_id", "load"], nulls_last=True)


def curve_metric(points: pl.DataFrame, target: Target) -> Metric:
    """The latency the curve draws: the one the user limits (TPOT before ITL), else TPOT where the points
    have it, else ITL; never one drawn against a limit on the other."""
    if target.tpot_p90_ms is not None:
        return TPOT.p90
    if target.itl_p90_ms is not None:
        return ITL.p90
    tpot = f"{TPOT.p90.name}_mean"
    return TPOT.p90 if tpot in points.columns and points[tpot].drop_nulls().len() else ITL.p90


@dataclass(frozen=True)
class TokenDecision:
    """Decide's per-token question answered: the shapes the candidates' data offers (most devices first),
    the one compared, the target, each device's answer (fewest J/token among those meeting it first),
    the sentences and table computed from them, what the comparison left out and why, and the serving
    points of the shape (`curve`, empty for offline batch)."""

    shapes: list[str]
    shape: str | None  # None: no candidate has generation runs with J per token
    target: Target
    answers: list[DeviceAnswer]
    sentences: list[str]
    table: pl.DataFrame
    left_out: list[str] = field(default_factory=list)
    curve: pl.DataFrame = field(default_factory=pl.DataFrame)

    def to_dict(self) -> dict[str, Any]:
        return {"shape": self.shape, "shapes": self.shapes, "target": self.target.describe(),
                "tpot_p90_ms": self.target.tpot_p90_ms, "itl_p90_ms": self.target.itl_p90_ms,
                "ttft_p90_ms": self.target.ttft_p90_ms,
                "devices": [a.device for a in self.answers], "sentences": self.sentences,
                "table": self.table.to_dicts(), "left_out": self.left_out, "curve": self.curve.to_dicts()}


def decide(configs: pl.DataFrame, devices: list[str], shape: str | None, target: Target, catalog: pl.DataFrame,
           rates: Rates, settings: CostSettings) -> TokenDecision:
    """The per-token answer for the candidates at `shape` (None: the shape with the most devices); a
    shape the data does not offer for them is a ValueError naming those it does."""
    rows = token_configs(configs, devices)
    offered = shapes(rows)
    if shape is not None and shape not in offered:
        raise ValueError(f"{shape!r}: these devices have no generation runs of it with J per token; they have "
                         + ("; ".join(repr(s) for s in offered) or "none"))
    if not offered:
        return TokenDecision([], None, target, [], [], pl.DataFrame())
    chosen = shape or offered[0]
    answers = answer(rows, chosen, devices, target, catalog, rates, settings, configs)
    return TokenDecision(offered, chosen, target, answers, sentences(answers, chosen, target, settings.currency,
                                                                     settings),
                         table(answers, settings.currency, settings),
                         [md(line) for line in token_shapes.left_out(rows, chosen, devices)], curve(rows, chosen))
