"""Text the pages and `joulebench decide` show: numbers, units and labels written for a person, citations
named by their documents' titles, and text for plotly. (Escaping text for Markdown is decision.markdown.md.)"""

from __future__ import annotations

import csv
import math
from collections.abc import Mapping
from datetime import datetime
from functools import cache
from typing import Any

import polars as pl

from joulebench.configuration import BY_NAME
from joulebench.paths import SAMPLE_DATA_DIR

NOT_MEASURED = "not measured"
TIME_FORMAT = "%Y-%m-%d %H:%M:%S"  # times a person reads: to the second (stored with microseconds)


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
BASIS_NAMES = {"local": "measured here", "upload": "imported", "reference": "reference table",
               "team": "measured by a team runner"}  # a runner's own run, read from the team store
BOUNDARY_NAMES = {"gpu_board": "GPU board", "jetson_module": "Jetson module", "cpu_package": "CPU package",
                  "system": "whole system", "wall": "at the wall", "estimated": "estimated"}


# The command line's flags as the fields a page shows for them: a message from code the CLI shares says the
# flag, and a page says the field (longest first: --device-kind before --device).
FIELD_OF_FLAG = {"--device-kind": "Device kind", "--batch-size": "Batch size", "--boundary": "Energy measured at",
                 "--precision": "Precision", "--device": "Device", "--mode": "Mode", "--unit": "Units of columns"}


def as_fields(message: str) -> str:
    """A message that names command-line flags, naming the page's fields instead."""
    for flag, name in FIELD_OF_FLAG.items():
        message = message.replace(flag, name)
    return message


def precision_name(precision: str | None) -> str:
    return PRECISION_NAMES.get(precision or "", precision or "precision not stated")


def setting_text(col: str, row: Mapping[str, Any]) -> str:
    """A configuration field's value in `row` as a person reads it ('FP16', 'training', 'batch 2x8', 'rate 2/s'):
    the words of the work and the batch here, every other field as `joulebench.configuration` writes it."""
    value = row[col]
    if col == "mode":
        return MODE_NAMES.get(value, value)
    if col == "precision":
        return precision_name(value)
    if col == "batch_size":
        return batch_label(value, row.get("grad_accum_steps"))
    if col == "workload":
        return str(value)
    return BY_NAME[col].text(value)


# The same, for a run whose energy the tool modelled rather than measured (energy_method 'estimated': CPU
# utilisation x TDP): 'measured here' would claim a measurement that was not made.
# a local run's estimate is the runner's (runner.sensors: the whole machine's CPU utilisation x TDP), so it counts
# every process of the machine, not the workload's alone
ESTIMATED_BASIS_NAMES = {"local": "run here, energy estimated (not measured: the machine's CPU use × TDP, other "
                                  "processes included)",
                         "upload": "imported, energy estimated (not measured)",
                         "reference": "reference table, energy estimated (not measured)",
                         "team": "run by a team runner, energy estimated (not measured)"}
# And for a run whose energy the tool that wrote it partly modelled (flag energy_partly_estimated: CodeCarbon's
# CPU power from TDP, RAM power from its size): graded at most C, and said so wherever its energy is shown.
PARTLY_ESTIMATED_BASIS_NAMES = {"local": "run here, energy partly estimated",
                                "upload": "imported, energy partly estimated",
                                "reference": "reference table, energy partly estimated",
                                "team": "run by a team runner, energy partly estimated"}
ENERGY_ESTIMATED = "estimated"  # the whole energy modelled (utilisation x TDP)
ENERGY_PARTLY_ESTIMATED = "partly estimated"  # part of it modelled by the tool that wrote it
_ESTIMATE_NAMES = {ENERGY_ESTIMATED: ESTIMATED_BASIS_NAMES, ENERGY_PARTLY_ESTIMATED: PARTLY_ESTIMATED_BASIS_NAMES}
FLAG_PARTLY_ESTIMATED = "energy_partly_estimated"  # energy.grades.FLAG_PARTLY_ESTIMATED (decision reads no energy)


def energy_estimate(energy_method: str | None, energy_boundary: str | None, flags: object = ()) -> str | None:
    """How much of a run's energy was modelled rather than measured, from its own fields: 'estimated' (method or
    boundary 'estimated'), 'partly estimated' (flagged energy_partly_estimated), else None (measured). The one
    rule behind every Basis a page shows (`basis_of`, `basis_expr`, `energy_estimate_expr`)."""
    if "estimated" in (energy_method, energy_boundary):
        return ENERGY_ESTIMATED
    if isinstance(flags, (list, tuple, set)) and FLAG_PARTLY_ESTIMATED in flags:
        return ENERGY_PARTLY_ESTIMATED
    return None


def energy_estimate_expr() -> pl.Expr:
    """`energy_estimate` over a runs frame (columns energy_method, energy_boundary, flags): a string column,
    null where the energy was measured. Of several runs, `.drop_nulls().min()` is the most estimated
    ('estimated' sorts before 'partly estimated')."""
    method = pl.col("energy_method").cast(pl.String)
    boundary = pl.col("energy_boundary").cast(pl.String)
    partly = pl.col("flags").list.contains(FLAG_PARTLY_ESTIMATED).fill_null(False)
    return (pl.when(((method == "estimated") | (boundary == "estimated")).fill_null(False))
            .then(pl.lit(ENERGY_ESTIMATED)).when(partly).then(pl.lit(ENERGY_PARTLY_ESTIMATED))
            .otherwise(pl.lit(None, pl.String)))


def basis_of(source_kind: str | None, energy_estimated: bool | str | None = False) -> str:
    """How a run's number came to be: measured here (a local run), imported (an upload), or a
    reference table shipped with the app; with `energy_estimated` (True or 'estimated', or 'partly
    estimated': `energy_estimate`), said so (never 'measured')."""
    estimate = ENERGY_ESTIMATED if energy_estimated is True else (energy_estimated or None)
    names = _ESTIMATE_NAMES.get(str(estimate), BASIS_NAMES) if estimate else BASIS_NAMES
    return names.get(source_kind or "", source_kind or "unknown")


def basis_expr(source_kind: str = "source_kind", energy_estimated: str | None = None) -> pl.Expr:
    """basis_of over a frame's columns: `source_kind` named, and said to be estimated or partly estimated where
    the column `energy_estimated` says so (a string column from `energy_estimate_expr`; a boolean column
    means wholly estimated)."""
    kind = pl.col(source_kind)
    named = kind.replace_strict(BASIS_NAMES, default=kind)
    if energy_estimated is None:
        return named
    estimate = pl.col(energy_estimated).cast(pl.String).replace({"true": ENERGY_ESTIMATED, "false": None})
    return (pl.when(estimate == ENERGY_ESTIMATED).then(kind.replace_strict(ESTIMATED_BASIS_NAMES, default=kind))
            .when(estimate == ENERGY_PARTLY_ESTIMATED)
            .then(kind.replace_strict(PARTLY_ESTIMATED_BASIS_NAMES, default=kind)).otherwise(named))


def boundary_name(boundary: str | None) -> str:
    return BOUNDARY_NAMES.get(boundary or "", boundary or "")


_UNIT_SUFFIXES = (("_per_sample", " per example (J)"), ("_per_iteration", " per iteration (J)"),
                  ("_sps", " (samples/s)"), ("_ms", " (ms)"), ("_mhz", " (MHz)"), ("_gbs", " (GB/s)"),
                  ("_pct", " (%)"), ("_mb", " (MB)"), ("_gb", " (GB)"), ("_w", " (W)"), ("_j", " (J)"),
                  ("_per_s", " per second"), ("_s", " (s)"))
_WORDS = {"j": "energy", "tdp": "TDP", "avg": "average", "mem": "memory", "sha256": "SHA-256", "tf32": "TF32",
          "cuda": "CUDA", "cudnn": "cuDNN", "cpu": "CPU", "gpu": "GPU", "os": "OS", "ram": "RAM", "id": "ID"}


FLAG_TEXTS = {
    "window_short_for_sensor": "the measured window is short for the power sensor's update period",
    "window_under_minimum": "the measured window is under the minimum asked for",
    "warmup_not_steady": "power and step time were not steady when the warmup's time cap was reached",
    "energy_counter_vs_sampled_disagree": "the energy counter and the sampled power trace disagree",
    "energy_nonpositive": "the sensor reported zero or negative energy",
    "net_energy_nonpositive": "the energy above idle came out zero or negative",
    "avg_power_implausible": "energy / time is above the device's plausible power (different windows)",
    "energy_sum_of_rails": "energy is the sum of the board's power rails",
    "sample_times_nominal": "power sample times are nominal, not read from a clock",
    "sample_times_spread_within_second": "power sample times are spread within each logged second",
    "repetitions_excluded": "some repetitions were left out by the tool that wrote the file",
    "client_bound": "the benchmark client fell behind its send schedule: latencies include its own delay",
    "usage_disagrees_with_stream": "the server's token counts disagreed with its stream: the client's counts are "
                                   "used",
    "prompt_tokens_differ_from_server": "the server counted the prompts differently from the client's tokenizer",
    "output_tokens_counted_by_client": "some output tokens were counted by the client (the server sent no usable "
                                       "count)",
}


def flag_text(flag: str) -> str:
    """A run's validity flag in words ('window_short_for_sensor' -> 'the measured window is short ...')."""
    return FLAG_TEXTS.get(flag, flag.replace("_", " "))


def in_sentence(label: str) -> str:
    """A label inside a sentence: its first letter lower-case, units and acronyms kept
    ('Average power (W)' -> 'average power (W)', never 'average power (w)'; 'TDP (W)' stays)."""
    first = label.split(" ", 1)[0]
    return label if first.isupper() else label[:1].lower() + label[1:]


def when(value: datetime) -> str:
    """A stored time to the second, with its zone: '2026-11-24 23:18:40 UTC'."""
    zone = value.tzname() or ""
    return f"{value.strftime(TIME_FORMAT)} {zone}".strip()


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
    for TensorFlow, benchmark results · Inference performance: ...': each seed file named in the
    text (a citation, a price's source) becomes its document's title."""
    if not citation:
        return citation
    for file, title in document_titles().items():
        citation = citation.replace(file, title)
    return citation


CITING_COLUMNS = ("citation", "price_source", "notes")


def cited(frame: pl.DataFrame, *, back: bool = False) -> pl.DataFrame:
    """The frame with the seed files its citing columns name replaced by the documents' titles;
    `back` undoes it (an edited catalog row is saved with the stored text, not the shown one)."""
    columns = [c for c in CITING_COLUMNS if c in frame.columns and frame.schema[c] == pl.String]
    if not columns:
        return frame
    exprs = []
    for column in columns:
        expr = pl.col(column)
        for file, title in document_titles().items():
            expr = expr.str.replace_all(title, file, literal=True) if back else \
                expr.str.replace_all(file, title, literal=True)
        exprs.append(expr.alias(column))
    return frame.with_columns(exprs)
