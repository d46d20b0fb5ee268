"""Energy per token at a latency target: which device generates with the fewest joules per output token
while its latency stays under the user's limits: time per output token (TPOT p90, per request), inter-token
latency (ITL p90, every gap between tokens) and time to first token (TTFT p90), as joulebench.metrics defines
them. TPOT and ITL are different measures: a limit on one is applied to that figure only, never to the other
(a configuration whose source states only the other is "not known" for that limit).

Only like-for-like configurations are compared: the same model and the same prompt and output lengths
(a "shape"), whatever measured them (this machine's runner, an imported vLLM / ML.ENERGY / AI Energy
Score file), each figure labelled with its basis. Every figure is a configuration's stored aggregate
(the mean of its repeats, with n and its trust grade). A configuration without the figure a limit
needs is "not known", never counted as meeting it.

    cost per 1M tokens = J/token x 1e6 / 3.6e6 x price per kWh x PUE
                         + device price / (tokens/s x lifetime in seconds x utilisation)
"""

from __future__ import annotations

import re
from dataclasses import dataclass, replace
from typing import Any

import polars as pl

from decision.figures import DeviceAnswer
from decision.markdown import md
from decision.money import CostSettings, CostTerms, Rates, cost_terms
from decision.text import BASIS_NAMES, money, sig
from joulebench.metrics import ITL, TPOT, TTFT, Metric

COST_FORMULA = ("cost per 1M tokens = J/token × 1,000,000 ÷ 3,600,000 × price per kWh × PUE"
                " + device price ÷ (output tokens/s × lifetime in seconds × utilisation)")


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
    return metric.label.split(" (", 1)[0]


_VARIANT = re.compile(r"(?i)[-_](?:instruct|chat|hf|base|it)$")


def model_key(name: str | None) -> str | None:
    """A model's architecture name: 'meta-llama/Llama-3.1-8B-Instruct' -> 'llama-3.1-8b', the name of
    JouleBench's llm-8b shape. The organisation and the tuning variant (instruct, chat, base) change
    neither speed nor energy, so they do not split a like-for-like comparison."""
    if not name:
        return None
    key = name.strip().rsplit("/", 1)[-1].lower()
    while _VARIANT.search(key):
        key = _VARIANT.sub("", key)
    return key


def shape_of(row: dict) -> str:
    """'llama-3.1-8b, prompt 512 + 128 new tokens': what is compared like for like."""
    prompt = f"prompt {row['seq_len']}" if row.get("seq_len") else "prompt not stated"
    new = f"{row['max_new_tokens']} new tokens" if row.get("max_new_tokens") else "output length not stated"
    return f"{model_key(row.get('model')) or row.get('workload') or 'model not stated'}, {prompt} + {new}"


def token_configs(configs: pl.DataFrame, devices: list[str]) -> pl.DataFrame:
    """The candidate devices' configurations that have J per output token, with their shape and basis."""
    if "j_per_token_mean" not in configs.columns:
        return pl.DataFrame()
    rows = configs.filter(pl.col("device_name").is_in(devices) & pl.col("j_per_token_mean").is_not_null())
    if rows.is_empty():
        return rows
    return rows.with_columns(
        pl.Series("shape", [shape_of(r) for r in rows.iter_rows(named=True)], pl.String),
        pl.col("source_kind").replace_strict(BASIS_NAMES, default="imported").alias("basis"))


def shapes(rows: pl.DataFrame) -> list[str]:
    """The shapes, those with the most devices first."""
    if rows.is_empty():
        return []
    counts = rows.group_by("shape").agg(pl.col("device_name").n_unique().alias("n")).sort(["n", "shape"],
                                                                                            descending=[True, False])
    return counts["shape"].to_list()


def _status(row: dict, target: Target) -> tuple[str, str]:
    """('meets' | 'misses' | 'not known', why) for one configuration."""
    for metric, limit in target.limits():
        value = row.get(metric.name + "_mean")
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
    return tuple(row.get(m.name + "_mean") or 0.0 for m, _ in target.limits())


def answer(rows: pl.DataFrame, shape: str, devices: list[str], target: Target, catalog: pl.DataFrame,
           rates: Rates, settings: CostSettings) -> list[DeviceAnswer]:
    """Per device, in order of fewest J/token among the configurations meeting the target."""
    out = []
    same = rows.filter(pl.col("shape") == shape) if not rows.is_empty() else rows
    prices = {r["device_name"]: r for r in catalog.iter_rows(named=True)}
    for device in devices:
        kind = (prices.get(device) or {}).get("kind")
        mine = same.filter(pl.col("device_name") == device) if not same.is_empty() else same
        if mine.is_empty():
            out.append(DeviceAnswer.per_token(device, kind, "not known", None,
                                              "no runs of this model and lengths with J per token"))
            continue
        rated = [(r, *_status(r, target)) for r in mine.sort("j_per_token_mean").iter_rows(named=True)]
        meeting = [r for r, status, _ in rated if status == "meets"]
        if meeting:
            best, status, why = meeting[0], "meets", ""
        else:  # the configuration closest to the target: the lowest latency among those that miss it
            status = "misses" if any(s == "misses" for _, s, _ in rated) else "not known"
            candidates = [(r, w) for r, s, w in rated if s == status]
            best, why = min(candidates, key=lambda c: _latency_key(c[0], target))
        terms, missing = _cost(best, prices.get(device), rates, settings)
        out.append(DeviceAnswer.per_token(device, kind, status, best, why, terms,
                                          None if terms is None else terms.at(settings.utilisation), missing))
    order = {"meets": 0, "misses": 1, "not known": 2}
    return sorted(out, key=lambda a: (order[a.status], a.best["j_per_token_mean"] if a.best else float("inf")))


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


def _config_text(row: dict) -> str:
    parts = [f"batch {row['batch_size']}" if row.get("batch_size") else "batch not stated",
             row.get("precision") or "precision not stated", *([row["tag"]] if row.get("tag") else [])]
    if row.get("power_setting") and row["power_setting"] != "default":
        parts.append(row["power_setting"])
    return ", ".join(parts)


def _md_config(row: dict) -> str:
    return md(_config_text(row))


def _figure(row: dict) -> str:
    n = row.get("j_per_token_n")
    return (f"{sig(row['j_per_token_mean'])} J/token (n {n}, grade {row.get('trust_grade') or 'not graded'}, "
            f"{row['basis']})")


def sentences(answers: list[DeviceAnswer], shape: str, target: Target, currency: str) -> list[str]:
    """The answer in sentences (markdown, every name escaped), each computed from the figures beside it."""
    answers = [replace(a, device=md(a.device)) for a in answers]
    shape = md(shape)
    meeting = [a for a in answers if a.status == "meets"]
    lines = []
    if meeting:
        top = meeting[0]
        assert top.best is not None
        lines.append(f"Fewest joules per output token with {target.describe()} ({shape}): **{top.device}** at "
                     f"{_md_config(top.best)}: {_figure(top.best)}.")
        for other in meeting[1:]:
            assert other.best is not None
            ratio = other.best["j_per_token_mean"] / top.best["j_per_token_mean"]
            lines.append(f"{other.device} also meets it, at {sig(ratio)}× the energy per token "
                         f"({_figure(other.best)}, {_md_config(other.best)}).")
        costed = [a for a in meeting if a.cost_per_1m is not None]
        if len(costed) >= 2:
            cheapest = min(costed, key=lambda a: a.cost_per_1m or 0.0)
            lines.append(f"Cheapest per 1M output tokens among them at your electricity price and utilisation: "
                         f"**{cheapest.device}**, {money(cheapest.cost_per_1m, currency)}.")
    else:
        lines.append(f"No candidate device has a {shape} configuration with {target.describe()}.")
    for a in answers:
        if a.status == "misses" and a.best is not None:
            lines.append(f"{a.device} misses the target: even its fastest configuration has {a.why} "
                         f"({_md_config(a.best)}).")
        elif a.status == "not known":
            lines.append(f"{a.device}: not known ({a.why}).")
    return lines


def table(answers: list[DeviceAnswer], currency: str) -> pl.DataFrame:
    """One row per device: its chosen configuration's figures with their basis."""
    rows = []
    for a in answers:
        b = a.best or {}
        rows.append({
            "Device": a.device, "Meets the target": a.status, "Configuration": _config_text(b) if b else "",
            "J per output token": b.get("j_per_token_mean"),
            "Decode J per token": b.get("decode_j_per_token_mean"),
            "Output tokens/s": b.get("tokens_per_s_mean"),
            TPOT.p90.label: b.get(TPOT.p90.name + "_mean"), ITL.p90.label: b.get(ITL.p90.name + "_mean"),
            TTFT.p90.label: b.get(TTFT.p90.name + "_mean"),
            f"Cost per 1M output tokens ({currency})": a.cost_per_1m,
            "Grade": b.get("trust_grade"), "Basis": b.get("basis"),
            "Why": a.why or a.cost_missing,
        })
    return pl.DataFrame(rows, infer_schema_length=None)


@dataclass(frozen=True)
class TokenDecision:
    """Decide's per-token question answered: the shapes the candidates' data offers (most devices first),
    the one compared, the target, each device's answer (fewest J/token among those meeting it first),
    and the sentences and table computed from them."""

    shapes: list[str]
    shape: str | None  # None: no candidate has generation runs with J per token
    target: Target
    answers: list[DeviceAnswer]
    sentences: list[str]
    table: pl.DataFrame

    def to_dict(self) -> dict[str, Any]:
        return {"shape": self.shape, "shapes": self.shapes, "target": self.target.describe(),
                "tpot_p90_ms": self.target.tpot_p90_ms, "itl_p90_ms": self.target.itl_p90_ms,
                "ttft_p90_ms": self.target.ttft_p90_ms,
                "devices": [a.device for a in self.answers], "sentences": self.sentences,
                "table": self.table.to_dicts()}


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
    answers = answer(rows, chosen, devices, target, catalog, rates, settings)
    return TokenDecision(offered, chosen, target, answers, sentences(answers, chosen, target, settings.currency),
                         table(answers, settings.currency))
