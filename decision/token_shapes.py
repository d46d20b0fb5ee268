"""Like for like for token figures (issue 26): what a configuration's J/token was measured under, and
which configurations compare.

A token figure's shape is the model (its architecture: `model_key`), the GPUs per system, the mode (offline batch,
or online serving), the load kind (an open-loop rate or a fixed concurrency; the load's value is the sweep's axis,
so the points of a sweep share a shape), the request lengths (fixed, or a distribution: its mean and
spread) and the engine. A mode or engine a source does not state is left out of the shape (never taken
for another). A source that states only the mean prompt and output lengths of its requests compares with
a configuration whose lengths are within 10 % (LENGTH_TOLERANCE) of them, whatever their spread. What a
comparison leaves out is listed with the reason (`left_out`)."""

from __future__ import annotations

import re
from dataclasses import dataclass

import polars as pl

from joulebench.configuration import BY_NAME

LENGTH_TOLERANCE = 0.10  # an imported run's mean lengths compare with lengths within 10 % of them
SERVING, BATCH = "online serving", "offline batch"
LOAD_NAMES = {"rate": "requests at a set rate", "concurrency": "a fixed concurrency", "batch": "batches"}
BUILT_IN = "transformers (JouleBench's built-in loop)"
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


@dataclass(frozen=True)
class Shape:
    """What one configuration's token figures were measured under."""

    model: str
    mode: str | None  # SERVING | BATCH | None: not stated
    load: str | None  # rate | concurrency | batch | None
    engine: str | None
    prompt: float | None  # tokens: requested (or fixed), else the source's stated mean
    output: float | None
    spread: str | None  # "fixed", the distribution as stored, or None: only the means are stated
    means_only: bool = False
    gpus: int = 1  # accelerators per system: 2 GPUs are compared with 2 GPUs, never with 4

    def lengths_text(self) -> str:
        if self.prompt is None and self.output is None:
            return "prompt not stated + output length not stated"
        prompt = "prompt not stated" if self.prompt is None else f"prompt {self.prompt:.4g}"
        output = "output length not stated" if self.output is None else f"{self.output:.4g} new tokens"
        if self.means_only:
            return f"{prompt} + {output} (means)".replace("prompt ", "prompt mean ", 1)
        if self.spread and self.spread != "fixed":
            return f"{prompt} + {output} ({self.spread})"
        return f"{prompt} + {output}"

    def label(self) -> str:
        """'llama-3.1-8b, prompt 512 + 128 new tokens, online serving (requests at a set rate), engine vllm'."""
        parts = [self.model, self.lengths_text()]
        if self.mode is not None:
            parts.append(self.mode + (f" ({LOAD_NAMES[self.load]})" if self.load in LOAD_NAMES and self.mode == SERVING
                                      else ""))
        if self.engine:
            parts.append(f"engine {self.engine}")
        if self.gpus != 1:  # a shape on one GPU reads as it did before GPU counts were compared
            parts.append(BY_NAME["gpu_count"].text(self.gpus))
        return ", ".join(parts)


def shape_of(row: dict) -> Shape:
    """The shape of a configurations row (with db.serving's columns where the store has them)."""
    load = row.get("load_kind")
    local = row.get("origin_kind") == "local" or row.get("source_kind") in ("local", "team")
    if load in ("rate", "concurrency"):
        mode: str | None = SERVING
    elif load == "batch":
        mode = BATCH
    elif row.get("request_rate_per_s") is not None:
        mode, load = SERVING, "rate"
    elif row.get("max_concurrency") is not None:
        mode, load = SERVING, "concurrency"
    elif local and row.get("max_new_tokens"):
        mode, load = BATCH, "batch"  # the runner's built-in generation: batches back to back
    else:
        mode = None
    engine = row.get("engine") or (BUILT_IN if local and row.get("workload") != "serve-bench" and mode else None)
    prompt, output = row.get("prompt_tokens_requested"), row.get("output_tokens_requested")
    distribution = row.get("length_distribution")
    if prompt is None and output is None and row.get("max_new_tokens"):
        prompt, output = row.get("seq_len"), row.get("max_new_tokens")
    means_only = False
    if prompt is None and output is None:
        prompt, output = row.get("prompt_tokens_mean"), row.get("output_tokens_mean")
        means_only = prompt is not None or output is not None
    spread = None if means_only or (prompt is None and output is None) else (
        "fixed" if not distribution or ("stdev" not in distribution and not distribution.startswith("csv"))
        else str(distribution))
    model = model_key(row.get("model")) or row.get("workload") or "model not stated"
    return Shape(model, mode, load, engine, _num(prompt), _num(output), spread, means_only,
                 int(row.get("gpu_count") or 1))


def _num(value: object) -> float | None:
    return None if value is None else float(value)  # type: ignore[arg-type]


def _off_pct(value: float | None, anchor: float | None) -> float | None:
    """How far `value` is from `anchor`, as a share of it (None: either not stated)."""
    if value is None or anchor is None or anchor <= 0:
        return None
    return abs(value - anchor) / anchor


def difference(shape: Shape, anchor: Shape) -> str | None:
    """Why `shape` does not compare with `anchor` (None: it does), in words a person reads."""
    if shape.model != anchor.model:
        return f"another model ({shape.model})"
    if shape.mode != anchor.mode:
        return (f"{shape.mode or 'mode not stated'}, not {anchor.mode or 'a mode not stated'}"
                + (" (a batch's latencies leave out the queue a served request waits in)"
                   if {shape.mode, anchor.mode} == {SERVING, BATCH} else ""))
    if shape.load != anchor.load:
        loads = [LOAD_NAMES.get(x or "", "not stated") for x in (shape.load, anchor.load)]
        return f"load as {loads[0]}, not {loads[1]}"
    if shape.engine != anchor.engine:
        return f"engine {shape.engine or 'not stated'}, not {anchor.engine or 'not stated'}"
    if shape.gpus != anchor.gpus:
        return f"{BY_NAME['gpu_count'].text(shape.gpus)} per system, not {anchor.gpus}"
    for what, mine, theirs in (("prompt", shape.prompt, anchor.prompt), ("output", shape.output, anchor.output)):
        if (mine is None) != (theirs is None):
            return f"{what} length {'not stated' if mine is None else f'{mine:.4g}'}, not " \
                   f"{'not stated' if theirs is None else f'{theirs:.4g}'}"
        off = _off_pct(mine, theirs)
        if off is not None and off > LENGTH_TOLERANCE + 1e-9:
            return (f"{what} {'mean ' if shape.means_only else ''}{mine:.4g} tokens is {off * 100:.0f} % from "
                    f"{theirs:.4g} (more than {LENGTH_TOLERANCE * 100:.0f} %)")
    if shape.spread is not None and anchor.spread is not None and shape.spread != anchor.spread:
        return f"lengths {shape.spread}, not {anchor.spread}"
    return None


def _order(shape: Shape) -> tuple:
    # stated lengths anchor a comparison before means, fixed before distributions
    return (shape.means_only, shape.spread != "fixed", shape.label())


def assign(rows: pl.DataFrame) -> pl.DataFrame:
    """`rows` with its `shape` (the label of the comparison each row joins) and `lengths_note` (how a
    mean-length match was made): each row joins the first shape it differs from in nothing, shapes with
    stated lengths first; otherwise it starts its own."""
    if rows.is_empty():
        return rows.with_columns(pl.lit(None, pl.String).alias("shape"), pl.lit(None, pl.String).alias("lengths_note"))
    own = [shape_of(r) for r in rows.iter_rows(named=True)]
    anchors: list[Shape] = []
    chosen: dict[int, Shape] = {}
    for i in sorted(range(len(own)), key=lambda j: _order(own[j])):
        found = next((a for a in anchors if difference(own[i], a) is None), None)
        if found is None:
            anchors.append(own[i])
            found = own[i]
        chosen[i] = found
    notes = [None if chosen[i] == own[i] else
             f"{own[i].lengths_text()}, within {LENGTH_TOLERANCE * 100:.0f} % of {chosen[i].lengths_text()}"
             for i in range(len(own))]
    return rows.with_columns(pl.Series("shape", [chosen[i].label() for i in range(len(own))], pl.String),
                             pl.Series("lengths_note", notes, pl.String),
                             pl.Series("serving", [chosen[i].mode == SERVING for i in range(len(own))], pl.Boolean))


def left_out(rows: pl.DataFrame, shape: str, devices: list[str]) -> list[str]:
    """For each candidate device, its token configurations that are not of `shape`, counted by the
    reason they do not compare (markdown-free text; names are escaped by the caller)."""
    if rows.is_empty():
        return []
    inside = rows.filter(pl.col("shape") == shape)
    if inside.is_empty():
        return []
    own = [shape_of(r) for r in inside.iter_rows(named=True)]
    anchor = next((s for s in own if s.label() == shape), own[0])  # the row that started the comparison
    out = []
    for device in devices:
        reasons: dict[str, int] = {}
        for r in rows.filter((pl.col("device_name") == device) & (pl.col("shape") != shape)).iter_rows(named=True):
            why = difference(shape_of(r), anchor) or "another comparison"
            reasons[why] = reasons.get(why, 0) + 1
        for why, n in reasons.items():
            out.append((device, n, why))
    return [f"{d}: {n} configuration{'s' if n != 1 else ''} left out: {why}" for d, n, why in out]
