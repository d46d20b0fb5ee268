"""Request lengths: fixed, drawn from a distribution, or replayed from a CSV; and prompts built to a length.

`--prompt-tokens 128` is a fixed length; `--prompt-tokens mean=128,stdev=32,min=16,max=256` draws each
request's length from a normal distribution cut to [min, max] (GuideLLM's form), seeded; `--lengths-csv`
replays (prompt tokens, output tokens) pairs in order, cycling. The requested lengths are recorded with
each request, beside the lengths the server reports in its `usage`.

A prompt is built to the requested count with a local tokenizer (`--tokenizer PATH`, loaded with
transformers' AutoTokenizer, offline): random words from a fixed list, encoded, cut to the count and
decoded, then re-encoded to check (byte-level BPE may merge across the cut; the closest text is kept).
Without one the prompt is that many words, which most tokenizers count as about one token each: the
actual count is then the server's.
"""

from __future__ import annotations

import csv
import math
import random
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from runner.serve_bench.options import MAX_TOKENS, ServeBenchError, number_problem

WORDS = ("time person year way day thing man world life hand part child eye woman place work week case point "
         "government company number group problem fact energy power token model server request batch watt "
         "joule second answer question river mountain city light water stone paper music garden window").split()
MAX_CSV_ROWS = 1_000_000


@dataclass(frozen=True)
class Lengths:
    """How many tokens one side of a request gets: fixed (`stdev` 0) or a cut normal distribution."""

    mean: int
    stdev: float = 0.0
    min: int | None = None
    max: int | None = None

    def describe(self) -> str:
        if not self.stdev:
            return f"{self.mean}"
        return f"mean={self.mean},stdev={self.stdev:g},min={self.min},max={self.max}"

    def draw(self, rng: random.Random) -> int:
        if not self.stdev:
            return self.mean
        lo, hi = self.min or 1, self.max or MAX_TOKENS
        return int(min(hi, max(lo, round(rng.gauss(self.mean, self.stdev)))))


def parse_lengths(option: str, text: str) -> Lengths:
    """`128` or `mean=128,stdev=32,min=16,max=256`; ServeBenchError naming the option otherwise."""
    text = str(text).strip()
    if "=" not in text:
        return Lengths(_whole(option, text))
    parts: dict[str, str] = {}
    for item in text.split(","):
        key, sep, value = item.partition("=")
        key = key.strip().lower()
        if not sep or key not in ("mean", "stdev", "min", "max") or key in parts:
            raise ServeBenchError(f"{option}: {item.strip()[:40]!r} is not valid; write a whole number (128) or "
                                  "mean=128,stdev=32,min=16,max=256")
        parts[key] = value.strip()
    if "mean" not in parts:
        raise ServeBenchError(f"{option}: a distribution needs mean=, e.g. mean=128,stdev=32,min=16,max=256")
    mean = _whole(option + " mean", parts["mean"])
    stdev = _float(option + " stdev", parts.get("stdev", "0"), allow_zero=True)
    lo = _whole(option + " min", parts["min"]) if "min" in parts else 1
    hi = _whole(option + " max", parts["max"]) if "max" in parts else max(mean, round(mean + 4 * stdev))
    if not lo <= mean <= hi:
        raise ServeBenchError(f"{option}: min {lo} <= mean {mean} <= max {hi} does not hold")
    return Lengths(mean, stdev, lo, hi)


def _float(option: str, text: str, *, allow_zero: bool = False) -> float:
    try:
        value = float(text)
    except ValueError:
        raise ServeBenchError(f"{option}: {text[:40]!r} is not a number") from None
    if not math.isfinite(value) or value < 0 or (value == 0 and not allow_zero):
        raise ServeBenchError(f"{option}: {text[:40]!r} is not valid; expected a positive number")
    return value


def _whole(option: str, text: str) -> int:
    try:
        value = float(text)
    except ValueError:
        raise ServeBenchError(f"{option}: {text[:40]!r} is not valid; expected a whole number of tokens, "
                              "e.g. 128") from None
    problem = number_problem(option, value, "tokens")
    if problem:
        raise ServeBenchError(problem)
    return int(value)


def read_lengths_csv(path: Path) -> list[tuple[int, int]]:
    """(prompt tokens, output tokens) per row; a header row of names is skipped."""
    try:
        handle = path.open(newline="", encoding="utf-8")
    except OSError as e:
        raise ServeBenchError(f"--lengths-csv: cannot read {path}: {e.strerror or e}") from None
    pairs: list[tuple[int, int]] = []
    with handle:
        for number, row in enumerate(csv.reader(handle), start=1):
            cells = [c.strip() for c in row]
            if not any(cells):
                continue
            if number == 1 and not cells[0].replace(".", "", 1).isdigit():
                continue  # a header
            if len(cells) < 2:
                raise ServeBenchError(f"--lengths-csv: {path} row {number}: expected prompt tokens,output tokens")
            pairs.append((_whole(f"--lengths-csv row {number} prompt tokens", cells[0]),
                          _whole(f"--lengths-csv row {number} output tokens", cells[1])))
            if len(pairs) > MAX_CSV_ROWS:
                raise ServeBenchError(f"--lengths-csv: {path} holds more than {MAX_CSV_ROWS:,} rows")
    if not pairs:
        raise ServeBenchError(f"--lengths-csv: {path} holds no (prompt tokens, output tokens) rows")
    return pairs


@dataclass(frozen=True)
class LengthPlan:
    """Where each request's (prompt tokens, output tokens) come from."""

    prompt: Lengths | None = None
    output: Lengths | None = None
    pairs: tuple[tuple[int, int], ...] = ()

    def draw(self, count: int, rng: random.Random) -> list[tuple[int, int]]:
        if self.pairs:
            return [self.pairs[i % len(self.pairs)] for i in range(count)]
        assert self.prompt is not None and self.output is not None
        return [(self.prompt.draw(rng), self.output.draw(rng)) for _ in range(count)]

    def describe(self) -> str:
        """The length_distribution text stored with the run."""
        if self.pairs:
            mean_p = sum(p for p, _ in self.pairs) / len(self.pairs)
            mean_o = sum(o for _, o in self.pairs) / len(self.pairs)
            return f"csv: {len(self.pairs)} pairs, prompt mean {mean_p:.4g}, output mean {mean_o:.4g}"
        assert self.prompt is not None and self.output is not None
        return f"prompt {self.prompt.describe()}; output {self.output.describe()}"

    def requested_means(self) -> tuple[float, float]:
        if self.pairs:
            return (sum(p for p, _ in self.pairs) / len(self.pairs), sum(o for _, o in self.pairs) / len(self.pairs))
        assert self.prompt is not None and self.output is not None
        return float(self.prompt.mean), float(self.output.mean)


class PromptBuilder:
    """Prompt text of a requested token count: exact with a local tokenizer, approximate (words) without."""

    def __init__(self, tokenizer_path: Path | None = None) -> None:
        self.tokenizer: Any = None
        if tokenizer_path is not None:
            try:
                from transformers import AutoTokenizer

                self.tokenizer = AutoTokenizer.from_pretrained(str(tokenizer_path), local_files_only=True)
            except (OSError, ValueError) as e:
                raise ServeBenchError(f"--tokenizer: cannot load a tokenizer from {tokenizer_path}: "
                                      f"{str(e).splitlines()[0][:200]}") from None

    @property
    def exact(self) -> bool:
        return self.tokenizer is not None

    def build(self, tokens: int, rng: random.Random) -> str:
        words = [rng.choice(WORDS) for _ in range(tokens)]
        if self.tokenizer is None:
            return " ".join(words)
        tok = self.tokenizer
        ids = tok.encode(" ".join(words * 2), add_special_tokens=False)
        best = tok.decode(ids[:tokens])
        for cut in range(tokens, max(0, tokens - 8), -1):  # a cut may merge on re-encoding: take the closest
            text = tok.decode(ids[:cut])
            if len(tok.encode(text, add_special_tokens=False)) == tokens:
                return text
        return best

    def count(self, text: str) -> int | None:
        if self.tokenizer is None:
            return None
        return len(self.tokenizer.encode(text, add_special_tokens=False))

    def count_sent(self, text: str, api: str) -> int | None:
        """The tokens the server's model reads for `text` sent on `api`, counted with the tokenizer: for the chat
        API the prompt in the tokenizer's chat template (with the generation prompt), where it has one; for
        completions the prompt with the tokenizer's special tokens (a BOS token); None without a tokenizer."""
        if self.tokenizer is None:
            return None
        tok = self.tokenizer
        if api == "chat" and getattr(tok, "chat_template", None):
            try:
                ids = tok.apply_chat_template([{"role": "user", "content": text}], add_generation_prompt=True,
                                              tokenize=True)
                ids = ids.get("input_ids", ids) if isinstance(ids, dict) or hasattr(ids, "keys") else ids
                return len(ids)
            except Exception:  # noqa: BLE001 - a template that does not render: the prompt's own count
                pass
        return len(tok.encode(text, add_special_tokens=True))
