"""What a table's rows say besides their figures, for the general reader (`importers.general_table`):

- a row whose status column says it failed (`failed`, `error`, `oom`, ...) holds no measurement: it is left out with
  a warning naming it and its error, and the other rows are read (a table of failed rows only is refused);
- a model column whose value is a precision (`FP16`, `INT8`) or an engine (`PYTORCH`, `TensorRT`) states that, not a
  model: the value is read as the precision (a quantisation where it is no compute dtype) or the engine;
- a device column that holds where the code ran (`igpu`, `cpu_offload`, `cuda`) beside other labels (`a770`) names
  setups, not devices: none of its values is taken as the device (no guessing), each is kept in the run's tag;
- short text columns no reader knows that tell the rows apart (`Strategy`, `name`) are kept in the tag, so that runs
  of different setups never read as repeats of one configuration;
- a power mode named in a row's notes (`MAXN_SUPER mode`, `15W mode`) is the run's power mode setting.

A figure given in a column per setup is `importers.table_setups`'.
"""

from __future__ import annotations

import re

from importers.base import Conversion
from importers.table_fields import HEADING_TAG, INPUT_MEDIA, OK_COLUMNS, SET_ON, Field, plain
from importers.table_labels import label_field
from joulebench import units

Rows = list[tuple[int, list[str]]]
Columns = dict[int, tuple[Field, units.Unit | None]]
# the words a device column holds when it names where the code ran, not the device: never a device name
_BACKENDS = re.compile(r"(?:cuda|cpu|gpu|mps|rocm|hip|xpu|npu|tpu|auto|cuda\s*:\s*\d{1,3}|gpu\s*:?\s*\d{1,3}|"
                       r"(?:xpu|npu|mps|hip|rocm)\s*:\s*\d{1,3}|metal|vulkan|opencl|default|none|"
                       r"[ide]gpu|(?:cpu|gpu|partial|full)?[ _-]?offload(?:ed)?|hybrid|integrated|discrete)")

NOT_OK = {"no", "false", "n", "0", "x", "✗", "✘"}  # in an 'ok' / 'success' column: the run failed
FAILED = {"failed", "fail", "failure", "error", "errored", "oom", "crashed", "crash", "timeout", "timed_out",
          "timedout", "killed", "aborted", "cancelled", "canceled", "skipped",
          "invalid", "unreliable", "discarded", "rejected"}  # a measurement its writer marked void: no run's figure
_FAILURE_WHY = {"oom": "out of memory", "out_of_memory": "out of memory", "cuda_oom": "out of memory",
                "timeout": "the run timed out", "timed_out": "the run timed out", "timedout": "the run timed out",
                "killed": "the run was killed"}  # what FAILED's words say, where more than 'the run failed'


def failure_named(text: str) -> str | None:
    """What a figure's cell says instead of a number when its run failed ('OOM': out of memory), or None."""
    word = "_".join(text.strip().strip("()[]*_!").lower().split())
    if word in FAILED or word in _FAILURE_WHY or word == "err":
        return _FAILURE_WHY.get(word, "the run failed")
    if word.lstrip("+") in ("inf", "infinity"):  # float('inf') written for a mode that failed
        return "an infinite figure: the writer's mark of a run that did not finish"
    return None


_ERROR_COLS = ("error", "error_message", "err", "message", "reason", "exception", "stderr", "failure_reason")
_NAME_COLS = ("name", "run_name", "id", "run_id", "experiment", "config", "label", "test", "benchmark")
PRECISION_WORDS = {"fp32", "float32", "fp16", "float16", "half", "bf16", "bfloat16", "tf32", "int8", "int4", "fp8",
                   "fp4", "nf4", "w8a8", "w4a16",
                   # quantization methods: stored as the quantization (general_table.read_row: not a precision)
                   "gptq", "awq", "gguf", "bnb", "bitsandbytes", "smoothquant", "exl2", "hqq", "q4_0", "q4_k_m",
                   "q5_k_m", "q8_0"}
ENGINE_WORDS = {"pytorch", "torch", "tensorrt", "trt", "onnx", "onnxruntime", "ort", "tflite", "tensorflow", "jax",
                "openvino", "llama.cpp", "llamacpp", "vllm", "sglang", "tgi", "ollama", "mlc", "exllama", "ctranslate2",
                "deepspeed", "tensorrt-llm", "trt-llm", "coreml", "mlx"}
NOT_TAG_WORDS = {"error", "message", "output", "text", "prompt", "response", "notes", "note", "comment", "comments",
             "timestamp", "date", "time", "datetime", "path", "file", "filename", "cmd", "command", "description",
             "url", "stderr", "stdout", "log", "reason", "exception", "answer", "question", "completion"}
MAX_TAG_COLUMNS = 3
SETUP_TAG = "setup (from the column names)"  # the tag split_setups gives each run: the setup its column names
WHOLE = re.compile(r"\d{1,9}")
_MONEY = {"cost", "usd", "eur", "price", "dollars"}
_MEASURED = {"time", "latency", "throughput", "energy", "power", "speed", "rate", "duration", "count", "total",
             "completed", "failed", "memory", "mem", "loss", "flops", "gflops", "gmacs", "macs", "macts", "params",
             "param", "ms", "sec", "tokens", "samples", "watts", "joules", "temp", "temperature", "step", "steps",
             "before", "after", "util", "utilization", "usage", "vram", "mib", "percent", "pct",  # a snapshot
             "bytes", "revision",  # a model's size, a chip's revision: what it is, not a setting
             "answer", "response", "reply",  # 'answer_length': what came out, never what was set
             *_MONEY}  # a cost worked out from the figures
MAX_TAG_CELL = 60
DATE_CELL = re.compile(r"^\d{4}[-/]\d{2}[-/]\d{2}")


def is_backend(name: str) -> bool:
    """'cuda', 'cuda:0', 'cpu', 'mps', 'auto', 'igpu', 'cpu_offload': where the code ran, not which device it ran
    on."""
    text = re.sub(r"\s*\([^()]{0,40}\)\s*$", "", name.strip().lower()[:80])  # 'CPU (no CUDA)': the CPU, unnamed
    return bool(_BACKENDS.fullmatch(text[:20]))


def backends_only(cells: list[str]) -> bool:
    """Whether a column's cells all name where code ran ('cuda', 'cpu'), never a device."""
    named = {c.strip() for c in cells[:200]} - {""}
    return bool(named) and all(is_backend(c) for c in named)


def cell(row: list[str], i: int | None) -> str:
    return row[i].strip() if i is not None and i < len(row) else ""


def _find(header: list[str], names: tuple[str, ...]) -> int | None:
    low = [plain(h.strip()).split(".")[-1] for h in header]
    return next((low.index(n) for n in names if n in low), None)


def _says_failed(said: str, failed: set[str]) -> bool:
    """'error', 'Error 404', 'OOM (CUDA out of memory)', 'Error: ConnectionError(...)': a failed run; 'ok', 'success',
    'no error' are not."""
    if said in failed:
        return True
    words = re.findall(r"[a-z]+", said)
    if not words or words[0] in {"no", "ok", "success", "succeeded", "passed", "completed", "done", "none"}:
        return False
    return words[0] in FAILED or any(w in FAILED or w.endswith(("error", "exception")) for w in words[:40])


def status_column(columns: Columns) -> int | None:
    return next((i for i, (f, _) in columns.items() if f.key == "status"), None)


def _verdicts(rows: Rows, status: int) -> bool:
    return bool({plain(cell(row, status)) for _, row in rows} & {"pass", "passed"})


def failures(header: list[str], rows: Rows, columns: Columns) -> tuple[int, dict[int, str]] | None:
    """The status column and, for each row it says failed, what it says (its error column's text beside, where
    there is one), by line; None when there is no status column or it gives verdicts (PASS / FAIL against a
    target), not failures."""
    status = status_column(columns)
    if status is None or _verdicts(rows, status):
        return None
    error = _find(header, _ERROR_COLS)
    failed = FAILED | (NOT_OK if plain(header[status].strip()).split(".")[-1] in OK_COLUMNS else set())
    out: dict[int, str] = {}
    for n, row in rows:
        said = plain(cell(row, status)).replace(" ", "_")
        if _says_failed(said, failed) or (re.fullmatch(r"[1-5]\d\d", said) and int(said) >= 400):  # HTTP 503
            why = " ".join(cell(row, error).split())
            why = f"{why[:60]} ... {why[-100:]}" if len(why) > 170 else why  # a log's last line says what went wrong
            out[n] = f"{cell(row, status)[:20]!r}" + (f" ({header[error][:30]}: {why})" if why and error is not None
                                                      else "")
    return status, out


def without_failed(conv: Conversion, header: list[str], rows: Rows, columns: Columns, where: str) -> Rows:
    """The rows whose status column does not say they failed; each failed row said in a warning."""
    found = failures(header, rows, columns)
    if found is None:
        if (status := status_column(columns)) is not None:
            conv.warn(f"{header[status][:40]} gives verdicts (PASS / FAIL against a target), not failed runs: every "
                      "row's figures are kept")
        return rows
    status, failed = found
    model = next((i for i, (f, _) in columns.items() if f.key == "model"), None)
    name = model if model is not None else _find(header, _NAME_COLS)
    kept: Rows = []
    for n, row in rows:
        if n not in failed:
            kept.append((n, row))
            continue
        who = cell(row, name)
        conv.warn(f"{where} {n}{f' ({who[:60]})' if who else ''} left out: its {header[status][:40]} is "
                  f"{failed[n]}; a failed or voided run holds no measurement")
    if rows and not kept:
        raise conv.fail(f"{where} {rows[0][0]}", f"every row's {header[status][:40]} says it failed: no measurement to "
                   "import")
    return kept


_WARM_UP = re.compile(r"(?:is_)?warm_?ups?(?:_(?:run|iter|iteration|step|phase|round))?")


def says_warm_up(text: str) -> bool:
    """Whether a name or a cell says warm-up ('warmup', 'Warm-up', 'is_warmup', 'warmup_iters')."""
    return _WARM_UP.fullmatch(plain(text.strip()).replace(" ", "_").replace("-", "_")) is not None


def without_warm_ups(conv: Conversion, header: list[str], rows: Rows, columns: Columns, where: str) -> Rows:
    """The rows less the warm-ups: rows a column no field reads calls `warmup` (`phase: warmup` beside `benchmark`),
    or marks True in a `warmup` / `is_warmup` column. A warm-up runs before the measurement (a compile, a cache
    fill) and is no run's figure; each row left out is said. A table whose every row says warm-up is kept."""
    for i, name in enumerate(header):
        if i in columns:
            continue
        if says_warm_up(name):
            said = [plain(cell(row, i)).strip() for _, row in rows]
            warm = [s in ("true", "yes", "1") for s in said] if set(said) <= {"true", "false", "yes", "no", "1",
                                                                               "0"} else []
        else:
            warm = [says_warm_up(cell(row, i)) for _, row in rows]
        if any(warm) and not all(warm):
            left = [str(n) for (n, _), w in zip(rows, warm) if w]
            conv.warn(f"{where} {', '.join(left[:10])}{' ...' if len(left) > 10 else ''} left out: its "
                      f"{header[i][:30]} says warm-up, run before the measurement (a compile, a cache fill) and no "
                      "run's figure")
            return [r for r, w in zip(rows, warm) if not w]
    return rows


# a run column's word for a row that summarises the repeats beside it ('r3_mean_stdev', 'average', 'summary')
_SUMMARY_WORDS = {"mean", "avg", "average", "median", "stdev", "std", "sd", "summary", "aggregate", "overall", "all"}


def without_summaries(conv: Conversion, header: list[str], rows: Rows, columns: Columns, where: str) -> Rows:
    """The rows less those whose run column names a statistic of the repeats ('r3_mean_stdev') where those repeats
    are rows of their own (the same labels otherwise): a summary is not one more run. A summary row without its
    repeats is kept (its figures are the repeats' means); each row left out is said."""
    run = next((i for i, (f, _) in columns.items() if f.key == "repeat"), None)
    if run is None:
        return rows
    labels = sorted(i for i, (f, _) in columns.items() if f.section != "metrics" and i != run)

    def is_summary(row: list[str]) -> bool:
        return bool(set(re.split(r"[^a-z]+", plain(cell(row, run)))) & _SUMMARY_WORDS)

    repeated = {tuple(cell(row, j) for j in labels) for _, row in rows if not is_summary(row)}
    kept = [(n, row) for n, row in rows if not (is_summary(row) and tuple(cell(row, j) for j in labels) in repeated)]
    if len(kept) < len(rows):
        still = {n for n, _ in kept}
        left = [f"{n}" for n, _ in rows if n not in still]
        conv.warn(f"{where} {', '.join(left[:10])}{' ...' if len(left) > 10 else ''} left out: its {header[run][:30]} "
                  "names a summary of the repeats (mean, stdev) whose own rows are read")
    return kept


def relabelled(conv: Conversion, header: list[str], rows: Rows, columns: Columns
               ) -> tuple[list[str], Rows, Columns, set[str]]:
    """The table with a model column's precisions and engines, a device column's setups, a power mode named in a
    row's text ('MAXN_SUPER mode', '15W mode') and the text columns that tell rows apart moved to the fields they
    state (new columns at the end of each row), and the names of the columns no field read that the tag now holds."""
    header, columns = list(header), dict(columns)
    moved: dict[str, dict[int, str]] = {}  # new column -> {row index: value}
    by_key = {f.key: i for i, (f, _) in columns.items()}
    if (m := by_key.get("model")) is not None:
        for r, (_, row) in enumerate(rows):
            value = plain(cell(row, m))
            if value in PRECISION_WORDS and "precision" not in by_key:
                moved.setdefault("precision", {})[r] = cell(row, m)
                row[m] = ""
            elif value in ENGINE_WORDS and "engine" not in by_key:
                moved.setdefault("engine", {})[r] = cell(row, m)
                row[m] = ""
        for key in ("precision", "engine"):
            if key in moved:
                said = sorted(set(moved[key].values()))
                one, many = {"precision": ("is a precision or a quantization", "are precisions or quantizations"),
                             "engine": ("is an engine", "are engines")}[key]
                conv.warn(f"{header[m][:40]}: {', '.join(said)[:120]} {many if len(said) > 1 else one}, not "
                          f"{'models' if len(said) > 1 else 'a model'}: read as the "
                          f"{'precision, or the quantization where it is no precision' if key == 'precision' else key}"
                          " (the model is not stated in "
                          "those rows)")
    read: set[int] = set()  # columns no field reads that a label now holds
    if "model" not in by_key and (joined := _family_and_size(header, rows, columns)) is not None:
        moved["model"], read = joined[0], set(joined[1])
        conv.warn(f"the model read as its family ({header[joined[1][0]][:30]}) and parameter count "
                  f"({header[joined[1][1]][:30]}): " + ", ".join(sorted(set(joined[0].values()))[:3])
                  + (" ..." if len(set(joined[0].values())) > 3 else ""))
    tags: dict[int, list[str]] = {}
    telling: list[int] = []  # the columns in the tag: a device column's setups first
    if "engine" not in by_key and (e := _engine_column(header, rows, columns)) is not None:
        moved["engine"] = {r: FORMAT_ENGINES.get(plain(cell(row, e)), cell(row, e)) for r, (_, row) in enumerate(rows)
                           if cell(row, e)}
        conv.warn(f"{header[e][:40]} names engines ({', '.join(sorted(set(moved['engine'].values())))[:80]}): read "
                  "as the engine")
        read.add(e)
    if "power_mode" not in by_key and (modes := _power_modes(header, rows, columns)):
        moved["power_mode"] = modes
        conv.warn(f"the power mode read from the text of the rows ({', '.join(sorted(set(modes.values())))[:80]})")
    if (d := by_key.get("device")) is not None:
        values = {cell(row, d) for _, row in rows} - {""}
        placements = sorted(v for v in values if is_backend(v))
        if placements and values - set(placements):  # backends only: each row's says so (GeneralTableImporter.read_row)
            conv.warn(f"{header[d][:40]} holds where the code ran ({', '.join(placements)[:80]}) beside other labels "
                      f"({', '.join(sorted(values - set(placements)))[:80] or 'none'}): it names setups, not devices; "
                      "none is taken as the device (kept in the tag)")
            for r, (_, row) in enumerate(rows):
                if cell(row, d):
                    tags.setdefault(r, []).append(f"{header[d][:30]} {cell(row, d)}")
                row[d] = ""
            telling.append(d)  # in the tag, as a column that tells the rows apart
    # the headings above a text's table, or the setups its columns are named by: the columns that tell its rows
    # apart join them
    heading = by_key.get("tag") if header[by_key.get("tag", 0)] in (HEADING_TAG, SETUP_TAG) else None
    if heading is not None:  # the headings above a text's table: the columns that tell its rows apart join them
        for r, (_, row) in enumerate(rows):
            if cell(row, heading):
                tags.setdefault(r, []).insert(0, cell(row, heading))
    if "tag" not in by_key or heading is not None:
        placed, telling = telling, telling_columns(header, rows, columns, read)
        for i in reversed(telling):
            for r, (_, row) in enumerate(rows):
                if cell(row, i) and cell(row, i).lower() not in MISSING_CELLS:  # 'rate -': no rate, no tag
                    tags.setdefault(r, []).insert(0 if heading is None else 1,
                                                  f"{header[i][:30]} {cell(row, i)}".strip())
        if heading is not None and (telling or placed):
            for _, row in rows:
                row[heading] = ""  # now in the tag read from the table
        if telling:
            conv.warn(telling_said([header[i][:40] or "the unnamed first column" for i in telling]))
        if tags and (heading is None or telling or placed):
            moved["tag"] = {r: ", ".join(parts)[:200] for r, parts in tags.items()}
    fields = {"precision": Field("precision", None, "label"), "engine": Field("engine", None, "config"),
              "power_mode": Field("power_mode", None, "config"),
              "tag": Field("tag", None, "config"), "model": Field("model", None, "label")}
    for key, cells in moved.items():
        columns[len(header)] = (fields[key], None)
        header.append(f"{key} (from the table)")
        rows = [(n, [*row, cells.get(r, "")]) for r, (n, row) in enumerate(rows)]
    return header, rows, columns, {header[i][:40] for i in (*telling, *read)}


_FAMILY = {"model family", "model_family", "family", "model series", "series"}
_SIZE = {"parameters", "params", "parameter count", "param count", "parameter_count", "num_params", "#params",
         "size (params)", "model size (params)"}
_PARAMS = re.compile(r"^(\d{1,4}(?:\.\d{1,3})?)\s?([bBmMkK])$")  # '1.5 B', '7B', '500M' parameters


def _family_and_size(header: list[str], rows: Rows, columns: Columns) -> tuple[dict[int, str], tuple[int, int]] | None:
    """({row: 'DeepSeek R1 1.5B'}, the two columns) for a table naming each model by its family and its parameter
    count in two columns ('Model Family', 'Parameters': '1.5 B'); None for any other."""
    low = [plain(h.strip()) for h in header]
    family = next((i for i, h in enumerate(low) if h in _FAMILY and i not in columns), None)
    size = next((i for i, h in enumerate(low) if h in _SIZE and i not in columns), None)
    if family is None or size is None:
        return None
    out: dict[int, str] = {}
    for r, (_, row) in enumerate(rows):
        name, count = cell(row, family), _PARAMS.match(cell(row, size))
        if not name or count is None:
            return None  # a size that is no parameter count ('1.1 GB'): nothing joined
        out[r] = f"{name} {count.group(1)}{count.group(2).upper()}"[:200]
    return (out, (family, size)) if out else None


# a Jetson power mode named in a row's text ('MAXN_SUPER mode; flash-attn on', '15W mode (GPU 612 MHz cap)')
_POWER_MODE = re.compile(r"\b(MAXN(?:[_ ]SUPER)?)\b|\b(\d{1,3}\s?W)\s+(?:power\s+)?mode\b", re.IGNORECASE)


def _power_modes(header: list[str], rows: Rows, columns: Columns) -> dict[int, str]:
    """{row: power mode} from the text columns no field reads, where a row's text names one mode (and only one)."""
    out: dict[int, str] = {}
    for r, (_, row) in enumerate(rows):
        found = {(m.group(1) or m.group(2)).upper().replace(" ", "_" if m.group(1) else "")
                 for i in range(len(header)) if i not in columns for m in _POWER_MODE.finditer(cell(row, i))}
        if len(found) == 1:
            out[r] = found.pop()
    return out


# a model's file format as an export column names it ('format': pt / onnx / engine): the engine that ran it
FORMAT_ENGINES = {"pt": "PyTorch", "pth": "PyTorch", "torchscript": "TorchScript", "engine": "TensorRT",
                  "plan": "TensorRT", "tflite": "TFLite", "hef": "HailoRT", "rknn": "RKNN", "mlpackage": "Core ML",
                  "mnn": "MNN", "ncnn": "ncnn", "gguf": "llama.cpp"}
_FORMAT_NAMES = {"format", "fmt", "export_format", "model_format", "file_format"}


def _engine_column(header: list[str], rows: Rows, columns: Columns) -> int | None:
    """A column no field reads whose every value is an engine ('runtime': llamacpp / ollama / vllm), or a model's
    file format under a format's name ('format': pt / onnx / engine)."""
    for i in range(len(header)):
        if i in columns or label_field(header[i]) is not None:
            continue
        values = {plain(cell(row, i)) for _, row in rows} - {""}
        formats = plain(header[i]).strip().replace(" ", "_") in _FORMAT_NAMES
        if values and values <= ENGINE_WORDS | (set(FORMAT_ENGINES) if formats else set()):
            return i
    return None


def telling_said(names: list[str]) -> str:
    """The warning that the columns `names` (no field reads them) are kept in the tag."""
    several = len(names) > 1
    return (f"{', '.join(names)} {'tell' if several else 'tells'} the rows apart (no field reads "
            f"{'them' if several else 'it'}): kept in the tag, so that different setups are not read as repeats of one")


# 'streaming_ratio': 0.9, 0.5, 0.1 of a workload's mix; 'cpu_load_percent': 0, 25, 50 of a sweep (levels repeated)
_SWEPT = {"ratio", "fraction", "mix", "share", "proportion", "load"}
_SNAPSHOT = {"before", "after", "initial", "final", "snapshot"}  # 'cpu_load_1m_before': read off the machine
# counts and clocks a run is set to ('infStreams': 1, 2, 4; 'threads'): settings, whatever else the table names
_COUNTS_SET = {"threads", "thread", "streams", "infstreams", "nstreams", "workers", "instances", "replicas",
               "coref", "memf", "corefreq", "memfreq", "coreclock", "memclock",  # a DVFS sweep's clocks ('coreF')
               "rate", "budget"}  # a load's rate beside its profile ('constant', 5.0); a time budget ('budget_s')


def telling_columns(header: list[str], rows: Rows, columns: Columns, read: set[int]) -> list[int]:
    """The columns no field reads whose short text values differ between rows (a setup's name, a strategy)."""
    out: list[int] = []
    # a repeat's or a run's id tells every row apart and no setup: it never stands for the columns that do
    labels = sorted(i for i, (f, _) in columns.items() if f.section != "metrics" and f.key != "repeat")
    keys_read = {f.key for f, _ in columns.values()}
    # a column that names the setup ('config_name', 'variant') before the settings it stands for
    order = sorted(range(len(header)), key=lambda i: not _SETUP_NAMED.search(plain(header[i])))
    for i in order:
        name = header[i]
        words = [w for w in re.split(r"[^a-z]+", plain(name)) if w]
        label = label_field(name)  # a settings column of names, not numbers ('ctx': tiny, small), is no label read
        unnamed_first = i == 0 and not name.strip()  # a pandas index or a table's row names: ',Accuracy (%),...'
        named_mode = label is not None and label.key == "mode"  # not read: its cells name no mode ('ane', 'mlx')
        duplicate = label is not None and label.key in keys_read and label.section != "config"  # a second model
        if i in columns or i in read or duplicate and not named_mode or not (  # column ('model_full_name'); a label
                words or unnamed_first):  # column left out ('system': fullkv, headkv) still tells rows apart
            continue
        values = [cell(row, i) for _, row in rows]
        seen = {v for v in values if v}
        # a prompt or output column holds texts, never a setup; but a few short names repeated down it are the
        # setups it was run at ('prompt': '128tok (142 tok)', '1k (1038 tok)' over 28 rows)
        if "seed" in words or {"elapsed", "since", "uptime"} & set(words):  # a seed draws a repeat of one setup;
            continue  # 'elapsed_seconds_from_start' says when a row was taken: neither is another setup
        named_texts = bool(words) and words[-1] in NOT_TAG_WORDS and not (  # 'source_file': concurrent16, sweep[3]:
            words[-1] in ("file", "filename") and not any(re.search(r"[/\\.]", v) for v in seen))  # runs' names
        sizes = named_texts and all(len(v) <= 24 for v in seen) and len(seen) <= len(rows) // 2
        if named_texts and not sizes:
            continue
        longest = 200 if _SETUP_NAMED.search(plain(name)) else MAX_TAG_CELL  # a setup's name may be long
        if len(seen) < 2 or any(len(v) > longest or "\n" in v or DATE_CELL.match(v) for v in seen):
            continue
        if sizes:
            numbers = False  # '128tok (142 tok)': a size's name, whatever a number in it reads as
        else:
            try:  # '8-bit', '4-bit (G=32)': a quantization's name, whatever its number reads as
                numbers = any(units.parse(v) is not None for v in sorted(seen) if not _BIT_WIDTH.match(v))
            except units.UnitError:  # a number in a unit none converts: a figure, unless other cells are names
                if all(v[:1].isdigit() for v in seen) and not _SETUP_NAMED.search(plain(name)):  # ('LOP7 off,
                    continue  # CPU' beside '24× single patch, CPU'); a setup's names ('580 驅動程式') are names
                numbers = False
        # a column of whole numbers with a setting's name ('infer_img_size': 160, 224) tells rows apart as a text
        # column does; a column of other numbers is a figure without its unit, never a setting
        if numbers and _ROW_NUMBER.fullmatch(plain(name).strip()) and _counts_rows(seen):
            continue  # 'id': 000001, 000002, ...: the row's number
        # a number set on the device or the load ('clock_target_mhz': 3105, 3045) tells rows apart, as a name does
        setting = not set(words) & (_STATISTIC_WORDS | _MONEY | _SNAPSHOT) and (
            bool(set(words) & (SET_ON | INPUT_MEDIA | _COUNTS_SET))
            or bool(set(words) & _SWEPT) and len(seen) <= len(rows) // 2  # a mix's ratio, a load level swept
            or _round_sweep(values))  # 'Token Count': 128, 256, 512, 1024, each on several rows: lengths set
        # with no label read, whole numbers in a column before any figure are the key a person set ('R': a LoRA
        # rank, 8, 16, 32), never a row's number counted 0, 1, 2, ...
        leading = not labels and all(columns[j][0].section != "metrics" for j in columns if j < i) and not (
            _counts_rows(seen))
        if numbers and not setting and not ((labels or leading) and all(WHOLE.fullmatch(v) for v in seen)
                                            and not set(words) & _MEASURED):
            continue
        if numbers and not setting and units.header_unit(name)[1] is not None:  # 'min_us': a figure, its unit named
            continue
        given: dict[tuple[str, ...], set[str]] = {}  # a column the labels or the chosen ones already tell
        for _, row in rows:                             # (test_name by test_id, a model's short name by the model)
            given.setdefault(tuple(cell(row, j) for j in (*labels, *out)), set()).add(cell(row, i))
        if (labels or out) and all(len(v) == 1 for v in given.values()):
            continue
        out.append(i)
        if len(out) == MAX_TAG_COLUMNS:
            break
    return out


_BIT_WIDTH = re.compile(r"(?i)\d{1,2}[- ]?bits?\b")
_SETUP_NAMED = re.compile(r"(?:^|[_\s.])(?:config|configuration|setup|variant|experiment|scenario)(?:_name)?$")
_STATISTIC_WORDS = {"avg", "mean", "average", "median", "peak", "max", "min", "std", "p50", "p90", "p95", "p99"}
_ROW_NUMBER = re.compile(r"id|idx|index|no|nr|num|number|row|#|unnamed: ?0|")


def _round_sweep(values: list[str]) -> bool:
    """Whether a column's whole numbers are the round values a sweep sets (powers of two from 16, or hundreds), each
    on two rows or more: a length or a size chosen, not a count that came out of the run."""
    if not values or not all(WHOLE.fullmatch(v) for v in values):
        return False
    counts: dict[int, int] = {}
    for v in values:
        counts[int(v)] = counts.get(int(v), 0) + 1
    return 2 <= len(counts) and min(counts.values()) >= 2 and all(
        (n >= 16 and n & (n - 1) == 0) or (n and n % 100 == 0) for n in counts)


def _counts_rows(values: set[str]) -> bool:
    """Whether a column's values are the rows' numbers: whole numbers, each once, one after another."""
    if not all(WHOLE.fullmatch(v) for v in values):
        return False
    numbers = sorted(int(v) for v in values)
    return numbers[-1] - numbers[0] == len(numbers) - 1


MISSING_CELLS = ("", "nan", "n/a", "na", "none", "null", "-", "—", "–", "--", "---", "tbd", "tba", "todo", "pending",
                 "?")  # a cell that states no value
_SYSTEM_NAMES = frozenset({"linux", "windows", "darwin", "macos", "freebsd", "posix", "nt", "x86_64", "amd64",
                           "aarch64", "arm64", "i386", "i686",
                           "amd", "nvidia", "intel", "apple", "qualcomm", "rocm"})  # a vendor or a stack: no device
# an operating system's or a framework's name in a 'platform' key ('ubuntu_pytorch', 'macos_mlx'): where, not on what
_STACKS = frozenset({"ubuntu", "debian", "fedora", "centos", "win", "win32", "win64", "mac", "osx", "wsl", "wsl2",
                     "pytorch", "torch", "mlx", "tensorflow", "tf", "jax", "onnx", "onnxruntime", "metal", "coreml",
                     "openvino", "tensorrt", "llamacpp", "ollama",
                     # where it was hosted ('local', 'aws', 'azure'): no device either
                     "local", "localhost", "aws", "azure", "gcp", "gcloud", "cloud", "onprem", "sagemaker", "runpod",
                     "colab", "kaggle"})  # 'cuda', 'mps': backends (is_backend)


def system_names(cells: list[str]) -> bool:
    """Whether a device column's cells are all names of an operating system or CPU architecture (Python's
    platform.system() and machine()), which say where a run ran but not on what device."""
    named = [c.strip().lower() for c in cells[:200] if c.strip().lower() not in MISSING_CELLS]
    return bool(named) and all(_PLATFORM.fullmatch(c) or _stack(c) for c in named)


def _stack(cell: str) -> bool:
    """'Darwin/arm64', 'ubuntu_pytorch', 'Metal 3': names of systems and stacks, with their versions."""
    if cell in _SYSTEM_NAMES:  # 'x86_64', 'aarch64': one name with its '_'
        return True
    parts = [p for p in re.split(r"[/_\s-]+", cell) if p and p not in ("x86", "64")]
    words = [p for p in parts if not re.fullmatch(r"v?[\d.]+", p)]
    return bool(words) and all(p in _SYSTEM_NAMES | _STACKS for p in words)


# Python's platform.platform(): 'Linux-5.15.0-91-generic-x86_64-with-glibc2.35', 'macOS-14.2-arm64-arm-64bit'
_PLATFORM = re.compile(r"(?:windows|linux|macos|darwin|freebsd)(?:-[\w.+-]{1,120}|\s[\d.]{1,20}(?:\s\(\w{1,20}\))?)")
# ('Darwin 24.6.0 (x86_64)': platform.system(), release() and machine() joined)


def not_number(cells: list[str]) -> str | None:
    """The first cell of a settings column that is no number ('tiny', '64k': the names of setups); None when every
    cell is a number or missing."""
    for value in cells[:200]:
        text = value.strip()
        if text.lower() in MISSING_CELLS:
            continue
        try:
            quantity = units.parse(text)
        except units.UnitError:
            return text
        if quantity is None or quantity.unit not in (None, units.UNITS["tokens"]):  # '128 tokens': a count
            return text
    return None
