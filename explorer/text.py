"""Text the pages show: numbers, units and labels written for a person, and text for plotly.
(Escaping text for Markdown is explorer.markdown.md.)"""

from __future__ import annotations

import csv
import math
import re
from functools import cache

import polars as pl

from joulebench.paths import SAMPLE_DATA_DIR

NOT_MEASURED = "not measured"


def plot_text(text: object) -> str:
    """Text for a plotly label or legend: plotly reads a few HTML tags (<a href>, <b>, <br>), so
    angle brackets and ampersands become entities (shown as the characters)."""
    if text is None:
        return ""
    return str(text).replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def sig(value: float | int | None, digits: int = 3, *, missing: str = NOT_MEASURED) -> str:
    """A number to `digits` significant figures, thousands separated, no exponent for everyday
    sizes, trailing zeros dropped: 828.2 -> '828', 11.04 -> '11', 2.046 -> '2.05', 0.004513 ->
    '0.00451', 123456 -> '123,456'."""
    if value is None or (isinstance(value, float) and not math.isfinite(value)):
        return missing
    if value == 0:
        return "0"
    magnitude = math.floor(math.log10(abs(value)))
    if magnitude >= digits - 1:
        return f"{round(value):,}"
    decimals = digits - 1 - magnitude
    if decimals > 9:
        return f"{value:.{digits - 1}e}"
    text = f"{value:,.{decimals}f}"
    return text.rstrip("0").rstrip(".") if "." in text else text


def money(value: float | None, currency: str, digits: int = 3, *, missing: str = NOT_MEASURED) -> str:
    """'2.04 USD'; a missing amount says so (never 0)."""
    if value is None or not math.isfinite(value):
        return missing
    return f"{sig(value, digits)} {currency}"


def count(n: int, noun: str, plural: str | None = None) -> str:
    """'1 run', '2 runs', '0 runs'; '1,234 settings' (never '(1 settings)' or 'run(s)')."""
    return f"{n:,} {noun if n == 1 else (plural or noun + 's')}"


def ratio(value: float) -> str:
    """A ratio for a sentence: 3 -> '3.0x', 1.484 -> '1.5x', 12.3 -> '12x'."""
    return f"{value:.0f}x" if value >= 10 else f"{value:.1f}x"


def pct(value: float) -> str:
    return f"{value * 100:.0f}%"


def batch_label(batch: int | None, accum: int | None) -> str:
    """'batch 8', or the blog's m x n notation for gradient accumulation: 'batch 12x2'."""
    if batch is None:
        return "batch not stated"
    return f"batch {accum}x{batch}" if accum and accum > 1 else f"batch {batch}"


PRECISION_NAMES = {"fp32": "FP32", "tf32": "TF32", "fp16": "FP16", "bf16": "BF16", "fp16-weights": "FP16 weights"}
MODE_NAMES = {"train": "training", "infer": "inference", "idle": "idle"}
BASIS_NAMES = {"local": "measured here", "upload": "imported", "reference": "reference table"}
BOUNDARY_NAMES = {"gpu_board": "GPU board", "jetson_module": "Jetson module", "cpu_package": "CPU package",
                  "system": "whole system", "wall": "at the wall", "estimated": "estimated"}


def precision_name(precision: str | None) -> str:
    return PRECISION_NAMES.get(precision or "", precision or "precision not stated")


def basis_of(source_kind: str | None) -> str:
    """How a run's number came to be: measured here (a local run), imported (an upload), or a
    reference table shipped with the app."""
    return BASIS_NAMES.get(source_kind or "", source_kind or "unknown")


def boundary_name(boundary: str | None) -> str:
    return BOUNDARY_NAMES.get(boundary or "", boundary or "")


_UNIT_SUFFIXES = (("_per_sample", " per example (J)"), ("_per_iteration", " per iteration (J)"),
                  ("_sps", " (samples/s)"), ("_ms", " (ms)"), ("_mhz", " (MHz)"), ("_gbs", " (GB/s)"),
                  ("_pct", " (%)"), ("_mb", " (MB)"), ("_gb", " (GB)"), ("_w", " (W)"), ("_j", " (J)"),
                  ("_s", " (s)"))
_WORDS = {"j": "energy", "tdp": "TDP", "avg": "average", "mem": "memory", "sha256": "SHA-256", "tf32": "TF32",
          "cuda": "CUDA", "cudnn": "cuDNN", "cpu": "CPU", "gpu": "GPU", "os": "OS", "ram": "RAM", "id": "ID"}


def human_field(name: str) -> str:
    """A column name for a person: 'throughput_sps' -> 'Throughput (samples/s)', 'j_per_sample' ->
    'Energy per example (J)', 'latency_p99_ms' -> 'Latency p99 (ms)'."""
    unit = ""
    for suffix, text in _UNIT_SUFFIXES:
        if name.endswith(suffix):
            name, unit = name[: -len(suffix)], text
            break
    words = [_WORDS.get(w, w) for w in name.split("_") if w]
    text = " ".join(words) if words else ""
    text = (text[:1].upper() + text[1:]) if text else ""
    return (text + unit).strip() or name


@cache
def document_titles() -> dict[str, str]:
    """Seed document file -> its title (sample_data/documents.csv): a citation names the document
    a person can find, not the file it was transcribed from."""
    with open(SAMPLE_DATA_DIR / "documents.csv", newline="") as f:
        return {row["file"]: row["title"] for row in csv.DictReader(f)}


def cite(citation: str | None) -> str | None:
    """'003_a690d2fb17d185da.txt · Inference performance: ...' -> 'NVIDIA DeepLearningExamples: BERT
    for TensorFlow, benchmark results · Inference performance: ...' (the title, then the section)."""
    if not citation:
        return citation
    for file, title in document_titles().items():
        if citation.startswith(file):
            return title + citation[len(file):]
    return citation


def cited(frame: pl.DataFrame, column: str = "citation") -> pl.DataFrame:
    """The frame with its citations naming documents by title (see `cite`)."""
    if column not in frame.columns or frame.schema[column] != pl.String:
        return frame
    expr = pl.col(column)
    for file, title in document_titles().items():
        expr = expr.str.replace(f"^{re.escape(file)}", title.replace("$", "$$"))
    return frame.with_columns(expr.alias(column))
