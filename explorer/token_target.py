"""Energy per token at a latency target: which device generates with the fewest joules per output token
while its time per output token (TPOT p90) and time to first token (TTFT p90) stay under the user's limits.

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
from dataclasses import dataclass

import polars as pl

from explorer.markdown import md
from explorer.money import CostSettings, Rates, cost_terms
from explorer.text import BASIS_NAMES, money, sig

COST_FORMULA = ("cost per 1M tokens = J/token × 1,000,000 ÷ 3,600,000 × price per kWh × PUE"
                " + device price ÷ (output tokens/s × lifetime in seconds × utilisation)")


@dataclass(frozen=True)
class Target:
    """The user's latency limits, ms (None: no limit)."""

    tpot_p90_ms: float | None = None
    ttft_p90_ms: float | None = None

    def describe(self) -> str:
        parts = [f"TPOT p90 ≤ {sig(v)} ms" if k == "tpot" else f"TTFT p90 ≤ {sig(v)} ms"
                 for k, v in (("tpot", self.tpot_p90_ms), ("ttft", self.ttft_p90_ms)) if v is not None]
        return " and ".join(parts) if parts else "no latency limit"


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
    for key, limit, label in (("tpot_p90_ms_mean", target.tpot_p90_ms, "TPOT p90"),
                              ("ttft_p90_ms_mean", target.ttft_p90_ms, "TTFT p90")):
        if limit is None:
            continue
        value = row.get(key)
        if value is None:
            return "not known", f"no {label} in its runs"
        if value > limit:
            return "misses", f"{label} {sig(value)} ms > {sig(limit)} ms"
    return "meets", ""


@dataclass(frozen=True)
class DeviceAnswer:
    device: str
    status: str  # meets | misses | not known
    best: dict | None  # the configuration with the fewest J/token among those meeting (or, failing that, all)
    why: str
    cost_per_1m: float | None = None
    cost_missing: str | None = None


def answer(rows: pl.DataFrame, shape: str, devices: list[str], target: Target, catalog: pl.DataFrame,
           rates: Rates, settings: CostSettings) -> list[DeviceAnswer]:
    """Per device, in order of fewest J/token among the configurations meeting the target."""
    out = []
    same = rows.filter(pl.col("shape") == shape) if not rows.is_empty() else rows
    prices = {r["device_name"]: r for r in catalog.iter_rows(named=True)}
    for device in devices:
        mine = same.filter(pl.col("device_name") == device) if not same.is_empty() else same
        if mine.is_empty():
            out.append(DeviceAnswer(device, "not known", None, "no runs of this model and lengths with J per token"))
            continue
        rated = [(r, *_status(r, target)) for r in mine.sort("j_per_token_mean").iter_rows(named=True)]
        meeting = [r for r, status, _ in rated if status == "meets"]
        if meeting:
            best, status, why = meeting[0], "meets", ""
        else:  # the configuration closest to the target: the lowest latency among those that miss it
            status = "misses" if any(s == "misses" for _, s, _ in rated) else "not known"
            candidates = [(r, w) for r, s, w in rated if s == status]
            best, why = min(candidates, key=lambda c: (c[0].get("tpot_p90_ms_mean") or 0.0,
                                                       c[0].get("ttft_p90_ms_mean") or 0.0))
        cost, missing = _cost(best, prices.get(device), rates, settings)
        out.append(DeviceAnswer(device, status, best, why, cost, missing))
    order = {"meets": 0, "misses": 1, "not known": 2}
    return sorted(out, key=lambda a: (order[a.status], a.best["j_per_token_mean"] if a.best else float("inf")))


def _cost(row: dict, device: dict | None, rates: Rates, settings: CostSettings) -> tuple[float | None, str | None]:
    """The per-sample cost formula (explorer.money) per output token; idle electricity left out."""
    tokens_s = row.get("tokens_per_s_mean")
    if not tokens_s:
        return None, "no output tokens/s for this configuration"
    price = rates.convert(device.get("price_amount") if device else None,
                          device.get("price_currency") if device else None, settings.currency)
    if price.amount is None:
        return None, f"no device price in {settings.currency}: {price.missing_reason}"
    terms = cost_terms(row["j_per_token_mean"], tokens_s, None, price.amount, settings)
    return terms.at(settings.utilisation), None


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
    answers = [DeviceAnswer(md(a.device), a.status, a.best, a.why, a.cost_per_1m, a.cost_missing) for a in answers]
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
            "TPOT p90 (ms)": b.get("tpot_p90_ms_mean"), "TTFT p90 (ms)": b.get("ttft_p90_ms_mean"),
            f"Cost per 1M output tokens ({currency})": a.cost_per_1m,
            "Grade": b.get("trust_grade"), "Basis": b.get("basis"),
            "Why": a.why or (a.cost_missing or ""),
        })
    return pl.DataFrame(rows, infer_schema_length=None)
