"""What a file is when it holds no benchmark figure: the reason a refusal gives.

A file is refused only when no benchmark figure can be read from it (a missing label never
refuses it). The refusal then says what the file is, when its content tells: a config without
results, a temperature log without power, an empty file. `what_is` returns None when it cannot
tell; the caller then keeps its own message.
"""

from __future__ import annotations

import csv
import json
import re
from typing import Any

from importers.base import Source
from importers.general_table import MAP_IT, flatten, nested_records, twice_encoded
from importers.powerlogs.log import METER_TIME_COLUMNS, TIME_COLUMNS
from importers.table_labels import label_field
from importers.table_text import approximate_column, text_tables
from joulebench.errors import ResultFileError

_TEGRA_TEMP = re.compile(r"\b[A-Za-z0-9_]+@-?\d+(?:\.\d+)?C\b")  # tegrastats: CPU@45.5C
_TEGRA_RAIL = re.compile(r"\b(?:VDD|POM|VIN)_[A-Z0-9_]+ \d+(?:mW)?/\d+")
_RESULT_COLUMN = re.compile(r"(?i)latency|token|request|\bqps\b|throughput|ttft|tok/s")
_TEMP_COLUMN = re.compile(r"(?i)\btemp(erature)?\b|temperature\.gpu|_temp\b|\btemp_")
_POWER_COLUMN = re.compile(r"(?i)power|watt|\benergy|_mw\b|\[mw\]|\[w\]")
_UTIL_COLUMN = re.compile(r"(?i)utilization|util\b|usage")

# The refusal of an unknown file names the tools it reads, grouped by family so the line stays short as readers
# are added: importer NAME -> (family, the tool's short name in that family; "" names the family alone). Importers
# not listed are named by their TOOL.
TOOL_FAMILIES: dict[str, tuple[str, str]] = {
    "mlperf-inference": ("MLPerf", "LoadGen"), "mlperf-training": ("MLPerf", "training logs"),
    "mlperf-app": ("MLPerf", "reference app"), "mlperf-mobile": ("MLPerf", "Mobile"), "mlperf-tiny": ("MLPerf", "Tiny"),
    "mlperf-tiny-summary": ("MLPerf", "Tiny"),
    "lambda-dlbench": ("Lambda benchmarks", ""), "hf-trainer": ("HF Trainer", ""), "dllogger": ("dllogger", ""),
    "vllm-bench": ("LLM serving", "vLLM"), "vllm-offline": ("LLM serving", "vLLM"),
    "serving-report": ("LLM serving", "vLLM"),  # vLLM's and SGLang's printed report: the vLLM / SGLang entries
    "llmperf": ("LLM serving", "LLMPerf"), "sglang-bench": ("LLM serving", "SGLang"),
    "llama-bench": ("LLM serving", "llama-bench"), "trtllm-bench": ("LLM serving", "trtllm-bench"),
    "genai-perf": ("LLM serving", "GenAI-Perf/AIPerf"), "guidellm": ("LLM serving", "GuideLLM"),
    "tgi-bench": ("LLM serving", "TGI"),
    "tokenpowerbench": ("LLM serving", "TokenPowerBench"), "ollama": ("LLM serving", "Ollama"),
    "mlenergy-leaderboard": ("ML.ENERGY", "leaderboard"), "zeus": ("ML.ENERGY", "Zeus"),
    "perseus": ("ML.ENERGY", "Perseus"),
    "dcgm": ("power logs", "DCGM"), "nvidia-smi": ("power logs", "nvidia-smi"), "nvidia-smi-q": ("power logs", ""),
    "tegrastats": ("power logs", "tegrastats"), "jtop": ("power logs", "jtop"),
    "tegrastats-json": ("power logs", "tegrastats"), "gpu-power-csv": ("power logs", "NVML loggers"),
    "amd-uprof": ("power logs", "uProf"), "powermetrics": ("power logs", "powermetrics"),
    "power-table": ("power logs", ""),
    "trtexec": ("inference engines", "trtexec"), "trtexec-times": ("inference engines", "trtexec"),
    "mlperf-summary": ("MLPerf", "summary.csv"),
    "hailortcli": ("inference engines", "hailortcli"), "openvino-benchmark": ("inference engines", "OpenVINO"),
    "tflite-benchmark": ("inference engines", "TFLite"), "benchncnn": ("inference engines", "ncnn"),
    "ultralytics-benchmark": ("inference engines", "Ultralytics"), "mnn-benchmark": ("inference engines", "MNN"),
    "whisper-bench": ("inference engines", "whisper.cpp"),
    "experiment-table": ("results tables", ""), "general-table": ("results tables", ""),
    "text-figures": ("figures in text", ""),
}


def tools_line(importers: list[tuple[str, str]]) -> str:
    """'a, b, LLM serving (vLLM, SGLang, ...), power logs (...) and tqdm' from (NAME, TOOL) in detection order."""
    groups: dict[str, list[str]] = {}
    for name, tool in importers:
        family, short = TOOL_FAMILIES.get(name, (tool, ""))
        members = groups.setdefault(family, [])
        if short and short not in members:
            members.append(short)
    items = [f"{family} ({', '.join(members)})" if members else family for family, members in groups.items()]
    return ", ".join(items[:-1]) + " and " + items[-1] if len(items) > 1 else "".join(items)


def what_is(source: Source) -> str | None:
    """A short description of a file without benchmark figures, e.g. 'a temperature log without power'."""
    if source.is_folder:
        return None
    try:
        data = source.data
    except ResultFileError:
        return None
    if not data.strip():
        return "an empty file"
    head = source.head
    if not head:
        return "binary data, not a result file (no text)"
    doc = source.json
    if isinstance(doc, dict):
        return _json_kind(doc)
    if isinstance(doc, list) and len(doc) > 1 and isinstance(doc[0], dict) and set(doc[0]) == {"count"} and all(
            isinstance(d, dict) and {"name", "averageMs"} <= set(d) for d in doc[1:50]):
        return ("a TensorRT trtexec --exportProfile per-layer profile (each record one layer's time over the "
                "profiled runs, not a run): import the trtexec log of the same engine (its Performance summary)")
    if doc is not None:
        return None
    return _approximate(source.text or "") or _log_kind(head)


def _approximate(text: str) -> str | None:
    """A text whose table gives approximate ranges ('~15-17 tokens/sec') where figures would be."""
    if "~" not in text and "-" not in text and "≈" not in text:
        return None
    found = approximate_column(text_tables(text)[0])
    if found is None:
        return None
    column, cell, kind = found
    return (f"a {kind} whose figures are approximate ranges: its {column[:40]!r} column gives {cell[:40]!r} and the "
            "like, which are not measurements and are not stored as figures; if you have the exact figures, write "
            "one number per cell (e.g. '16.2 tokens/s') in a table or a CSV and import that, mapping its columns on "
            "the Upload page or with joulebench import --mapping RECIPE FILE")


def _json_kind(doc: dict[str, Any]) -> str | None:
    keys = set(doc)
    if {"backend", "scenario"} <= keys or ({"backend", "launcher"} <= keys and "report" not in keys):
        return ("an optimum-benchmark config without results (benchmark_config.json: its results are in "
                "benchmark_report.json; import both together, e.g. their folder)")
    if "model_type" in keys and ("architectures" in keys or "hidden_size" in keys or "vocab_size" in keys):
        return "a model config (config.json) without results"
    if "per_device_train_batch_size" in keys or ({"output_dir", "learning_rate"} <= keys):
        return "training arguments (training_args / a Trainer config) without results"
    if isinstance(doc.get("log_history"), list):
        return ("a Trainer state without timing figures (no train_runtime, eval_runtime or *_samples_per_second "
                "in its log_history)")
    return None


_CLOCK_COLUMN = re.compile(r"(?i)(?:time(?:stamp)?|date(?:[ _]?time)?|elapsed|t|sec|seconds|time[ _]\(?m?s\)?)")


def _log_kind(head: str) -> str | None:
    lines = [line for line in head.splitlines() if line.strip()]
    if not lines:
        return None
    if any(_TEGRA_TEMP.search(line) for line in lines[:5]) and "RAM " in lines[0]:
        if not any(_TEGRA_RAIL.search(line) for line in lines[:5]):
            return "a temperature log without power (tegrastats without power rails: no VDD_IN / POM_5V_IN)"
        return None
    first = lines[0]
    if "," not in first and "\t" not in first:
        return None
    columns = [c.strip() for c in re.split(r"[,\t]", first)]
    temps = [c for c in columns if _TEMP_COLUMN.search(c)]
    power = [c for c in columns if _POWER_COLUMN.search(c)]
    if power:
        return None
    timed = any(c.strip().lower() in (*TIME_COLUMNS, *METER_TIME_COLUMNS) for c in columns)
    if temps and timed and not any(_RESULT_COLUMN.search(c) for c in columns):  # an LLM's sampling 'Temperature'
        # beside its latencies is a setting of a results table, no sensor; a sensor's log has times
        return f"a temperature log without power (columns {', '.join(columns[:8])}; no power column)"
    if any(_UTIL_COLUMN.search(c) for c in columns) and any(_CLOCK_COLUMN.fullmatch(c) for c in columns):
        return f"a utilisation log without power (columns {', '.join(columns[:8])}; no power column)"
    return None


def looks_like(source: Source) -> str:
    """What an unknown file looks like, in a few words: its shape and first names, never its content
    in bulk ('a table with columns hello, world', 'a JSON object with keys a, b')."""
    if source.is_folder:
        return f"a folder of {len(source.files)} files"
    try:
        head = source.head
    except ResultFileError:
        return "a file that cannot be read"
    if not head:
        return "binary data"
    doc = source.json
    if isinstance(doc, dict):
        nested = nested_records(doc)
        if nested is not None:
            return (f"a JSON object with keys {_names(list(doc))} nesting {len(nested)} sets of figures with keys "
                    f"{_names([k for k in nested[0] if k not in ('model', 'tag')])}; {MAP_IT}")
        return f"a JSON object with keys {_names(list(doc))}"
    if isinstance(doc, list):
        first = doc[0] if doc else None
        if isinstance(first, dict):
            return (f"a JSON array of {len(doc)} item{'' if len(doc) == 1 else 's'} of objects with keys "
                    f"{_names(list(first))}; {MAP_IT}")
        return f"a JSON array of {len(doc)} item{'' if len(doc) == 1 else 's'}"
    inner = _json_in_string(source.text or "")
    if inner is not None:
        return inner
    lines = [line for line in head.splitlines() if line.strip()]
    first = lines[0] if lines else ""
    if first.lstrip().startswith("{"):  # JSON Lines: records, never a table whose 'columns' are JSON
        try:
            record = json.loads(first)
        except (ValueError, RecursionError):
            record = None
        if isinstance(record, dict):
            return (f"JSON Lines records with keys {_names(list(record))}, none a figure with a unit JouleBench "
                    f"reads (name the unit in the key, e.g. energy_j, latency_ms, or {MAP_IT})")
    sep = _table_separator(lines)
    if sep is not None:
        return f"a table with columns {_names([c.strip().strip(chr(34)) for c in first.split(sep)])}; {MAP_IT}"
    return f"text beginning {first.strip()[:60]!r}"


def _table_separator(lines: list[str]) -> str | None:
    """The separator of a table: the first lines split into the same number of cells (2 or more) by it, the header
    and at least one row; None for text that merely contains commas ('=== vLLM 0.20 (x), ctx8192 ===' then prose)."""
    rows = lines[:6]
    if len(rows) < 2:
        return None
    for sep in ("\t", ";", ","):
        try:
            counts = [len(next(csv.reader([row], delimiter=sep))) for row in rows]
        except csv.Error:  # a stray carriage return in a cell: not this delimiter's table
            continue
        if counts[0] >= 2 and sum(1 for c in counts[1:] if c == counts[0]) * 2 >= len(counts) - 1:
            return sep
    return None


def _json_in_string(text: str) -> str | None:
    """What a JSON string is: one that holds JSON (a document encoded twice, which the general reader decodes once,
    so it is here only when no key of the inner document is a figure with a unit), or one that holds no JSON."""
    if text.lstrip()[:1] != '"':
        return None
    try:
        outer = json.loads(text, parse_constant=lambda c: None)
    except (ValueError, RecursionError):
        return None
    if not isinstance(outer, str):
        return None
    doc = twice_encoded(text)
    if isinstance(doc, dict):
        nested = nested_records(doc)
        flat = flatten(nested[0] if nested else doc)
        what = f"an object with keys {_names(list(doc))}"
    elif isinstance(doc, list):
        first = doc[0] if doc else None
        flat = flatten(first) if isinstance(first, dict) else {}
        what = f"an array of {len(doc)} items"
    elif outer.lstrip()[:1] in ('"', "{", "["):
        return ("a JSON string that holds a JSON string or broken JSON: the document was encoded more than twice or "
                "cut; only one level of encoding is decoded")
    else:
        return f"a JSON string holding text ({outer.strip()[:40]!r}), not JSON: no object or array of results in it"
    numbers = [k for k, v in flat.items() if isinstance(v, (int, float)) and label_field(k) is None]
    if not numbers:
        return f"a JSON string that holds JSON ({what}, decoded once): no figures in it"
    return (f"a JSON string that holds JSON ({what}, decoded once): none of its numbers ({_names(numbers)}) states "
            f"its unit (name the unit in the key, e.g. latency_ms, or {MAP_IT})")


def _names(names: list[str], shown: int = 8) -> str:
    text = ", ".join(n[:40] for n in names[:shown])
    return text + (f" and {len(names) - shown} more" if len(names) > shown else "")
