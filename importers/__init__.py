"""Importers: other tools' result files -> JouleBench result documents v1, one ingest path.

Detection is by content, in a fixed order (`IMPORTERS`); the first importer whose `sniff`
accepts the file converts it. The document is validated like any result file and ingested by
`ingest` (the import service) with `file_format=<importer NAME>`. The content hash is the SHA-256
of the original bytes (for a folder: a stable hash over sorted (relative path, bytes)).

    loaded, fmt = importers.load(data, "benchmark.json", hints=Hints(device="A100 80GB"))
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from polars.exceptions import PolarsError

from importers.ai_energy_score import AiEnergyScoreImporter
from importers.base import DEVICE_NOT_STATED, Conversion, Hints, Importer, Source
from importers.benchncnn import BenchncnnImporter
from importers.carbontracker import CarbonTrackerImporter
from importers.codecarbon import CodeCarbonImporter
from importers.dcgm import DcgmImporter
from importers.describe import looks_like, tools_line, what_is
from importers.dllogger import DlloggerImporter
from importers.executorch import ExecutorchImporter
from importers.experiment_table import ExperimentTableImporter
from importers.genai_bench import GenAiBenchImporter
from importers.genai_perf import GenAiPerfImporter
from importers.general_table import GeneralTableImporter
from importers.guidellm import GuideLlmImporter
from importers.hailortcli import HailortcliImporter
from importers.hf_trainer import HfTrainerImporter
from importers.joulebench_file import JouleBenchImporter
from importers.json_tail import json_at_end, json_documents
from importers.lambda_tables import LambdaImporter
from importers.llama_bench import LlamaBenchImporter
from importers.llmperf import LlmPerfImporter
from importers.locust import LocustImporter
from importers.mlenergy import MlEnergyImporter
from importers.mlperf import MlperfImporter
from importers.mlperf_app import MlperfAppImporter
from importers.mlperf_mobile import MlperfMobileImporter
from importers.mlperf_summary import MlperfSummaryImporter
from importers.mlperf_tiny import MlperfTinyImporter
from importers.mlperf_tiny_summary import MlperfTinySummaryImporter
from importers.mlperf_training import MlperfTrainingImporter
from importers.mnn_benchmark import MnnBenchmarkImporter
from importers.ollama import OllamaImporter
from importers.openvino_benchmark import OpenvinoBenchmarkImporter
from importers.optimum import OptimumBenchmarkImporter
from importers.perf_analyzer import PerfAnalyzerImporter
from importers.perf_stat import PerfStatImporter
from importers.perseus import PerseusImporter
from importers.powerlogs.standalone import (
    GpuPowerCsvImporter,
    JtopImporter,
    NvidiaSmiDmonImporter,
    NvidiaSmiImporter,
    NvidiaSmiQueryImporter,
    PowermetricsImporter,
    PowerTableImporter,
    TegrastatsImporter,
    TegrastatsJsonImporter,
    UprofImporter,
)
from importers.powerlogs.summary import PowerSummaryImporter
from importers.serving_report import ServingReportImporter
from importers.sglang_bench import SglangBenchImporter
from importers.table_preamble import uncommented
from importers.table_records import Unwrapped, unwrapped
from importers.text_figures import TextFiguresImporter
from importers.tflite_benchmark import TfliteBenchmarkImporter
from importers.tgi_bench import TgiBenchImporter
from importers.tokenpowerbench import TokenPowerBenchImporter
from importers.torch_compare import TorchCompareImporter
from importers.torchtitan_log import TorchtitanLogImporter
from importers.tqdm_log import TqdmImporter
from importers.trtexec import TrtexecImporter, TrtexecTimesImporter
from importers.trtllm_bench import TrtllmBenchImporter
from importers.ultralytics_benchmark import UltralyticsBenchmarkImporter
from importers.vegeta import VegetaImporter
from importers.vllm_bench import VllmBenchImporter
from importers.vllm_offline import VllmOfflineImporter
from importers.whisper_bench import WhisperBenchImporter
from importers.wrk import WrkImporter
from importers.zeus import ZeusImporter
from joulebench.errors import NothingToImportError, ResultFileError
from joulebench.labels import SuppliedLabel, count_not_stated, current_user, not_stated_warning
from joulebench.resultfile import (
    MAX_RUNS_PER_FILE,
    LoadedResultFile,
    latencies_to_missing,
    schema,
    validate_document,
)

_TRACE_ITEMS = schema()["$defs"]["power_trace"]["properties"]
MAX_TRACE_POWER_W = float(_TRACE_ITEMS["power_w"]["items"]["maximum"])
MAX_TRACE_T_S = float(_TRACE_ITEMS["t_s"]["items"]["maximum"])

# Fixed detection order: the strictest signatures first, free text (tqdm) last.
IMPORTERS: tuple[Importer, ...] = (
    JouleBenchImporter(),
    MlperfImporter(),
    MlperfTrainingImporter(),
    MlperfAppImporter(),  # the reference app's results.json: TestScenario.<name> {took, qps, count, percentiles}
    MlperfMobileImporter(),  # the MLPerf Mobile app's result JSON: results[] of benchmark_id, performance_run
    MlperfTinyImporter(),  # EnergyRunner's results.txt ('Median energy cost is', 'Median throughput is') and .json
    MlperfTinySummaryImporter(),  # the Tiny checker's summary.csv: Result inf./sec., Power (energy) uJ/inf.
    MlperfSummaryImporter(),  # the submission checker's summary.csv: Result in each row's Units
    AiEnergyScoreImporter(),  # an optimum-benchmark report with per-repetition measures: before optimum
    OptimumBenchmarkImporter(),
    CodeCarbonImporter(),
    CarbonTrackerImporter(),  # carbontracker's 'Actual consumption' blocks, in its logs or pasted into notes
    MlEnergyImporter(),
    VllmBenchImporter(),
    VllmOfflineImporter(),
    LlmPerfImporter(),
    GenAiBenchImporter(),  # aggregated_metrics {num_concurrency, stats} + individual_request_metrics
    SglangBenchImporter(),  # JSON Lines: before the tables and logs
    LlamaBenchImporter(),  # n_prompt, n_gen, avg_ts in json/jsonl/csv, or the md table '| model | ... | t/s |'
    TrtllmBenchImporter(),  # its JSON report's keys, or the printed '= PERFORMANCE OVERVIEW'
    TrtexecImporter(),  # '&&&& RUNNING TensorRT.trtexec' and its '=== Performance summary ==='
    TrtexecTimesImporter(),  # trtexec --exportTimes: a JSON array of startH2dMs .. latencyMs records
    HailortcliImporter(),  # hailortcli benchmark's Summary (FPS (hw_only), (streaming)) or run's '> Inference result:'
    UltralyticsBenchmarkImporter(),  # benchmarks.log / `yolo benchmark`: 'Benchmarks complete for M on D at imgsz=N'
    TfliteBenchmarkImporter(),  # TFLite benchmark_model: 'Inference timings in us: ... Inference (avg)' per invocation
    WhisperBenchImporter(),  # whisper.cpp's whisper-bench: 'whisper_print_timings: decode time = ...', or its table
    MnnBenchmarkImporter(),  # MNN benchmark.out: 'Forward type:' ... '[ - ] m.mnn  max = ..ms  min = ..ms  avg = ..ms'
    TorchCompareImporter(),  # torch.utils.benchmark Compare: '[--- label ---]' ... 'Times are in milliseconds (ms).'
    BenchncnnImporter(),  # ncnn benchncnn: 'loop_count = N' ... '<model>  min = x  max = y  avg = z' rows (ms)
    OpenvinoBenchmarkImporter(),  # OpenVINO benchmark_app logs ([Step 1/11] .. Throughput: x FPS), benchmark_report.csv
    PerfStatImporter(),  # perf stat's RAPL counts: 'N Joules power/energy-pkg/' (whole, or per -I interval)
    ExecutorchImporter(),  # ExecuTorch's LLM runner: 'PyTorchObserver {json}' lines
    WrkImporter(),  # wrk: 'Running 30s test @ URL' ... 'Requests/sec:'
    VegetaImporter(),  # vegeta report: 'Requests [total, rate, throughput]' lines, or its -type=json object
    LocustImporter(),  # locust --csv: 'Type,Name,Request Count,...' (_stats) or 'Timestamp,User Count,...' (_history)
    PerfAnalyzerImporter(),  # perf_analyzer -f: 'Concurrency|Request Rate,Inferences/Second,Client Send,...' (µs)
    ServingReportImporter(),  # the printed '== Serving Benchmark Result ==' blocks of vLLM / SGLang, also in notes
    GenAiPerfImporter(),  # per-metric {unit, avg, p50..} objects, or the 'Metric,avg,...' + 'Metric,Value' CSV
    TgiBenchImporter(),  # inference-benchmarker results[].token_throughput_secs, or TGI's '| Decode (token) |' tables
    GuideLlmImporter(),  # benchmarks[].metrics with status distributions (time_to_first_token_ms)
    TokenPowerBenchImporter(),
    ZeusImporter(),
    PerseusImporter(),
    LambdaImporter(),
    HfTrainerImporter(),
    TorchtitanLogImporter(),  # 'step: N  loss: ..  memory: ..GiB(..%)  tps: N': each device's tokens/s
    DlloggerImporter(),
    DcgmImporter(),
    NvidiaSmiImporter(),
    NvidiaSmiDmonImporter(),  # '# gpu pwr ...' monitor rounds
    NvidiaSmiQueryImporter(),  # 'NVSMI LOG' reports of nvidia-smi -q: a power log, before the figures in text
    TegrastatsImporter(),
    JtopImporter(),
    TegrastatsJsonImporter(),
    GpuPowerCsvImporter(),
    UprofImporter(),
    PowermetricsImporter(),
    OllamaImporter(),  # --verbose statistics or eval_count/eval_duration columns: before the home-grown tables
    PowerSummaryImporter(),  # end-of-run power summaries (stated totals, unit-less rail means): before the tables
    PowerTableImporter(),  # a time column and power columns with units ('Timestamp (s),Power (mW)'): before tables
    ExperimentTableImporter(),  # unit-named columns of home-grown tables: after every tool's own format
    GeneralTableImporter(),  # any other results table, long table, JSON Lines or records: columns by name and unit
    TqdmImporter(),
    TextFiguresImporter(),  # 'name: value unit' figures pasted into text: last, after every format's own reader
)

POWER_LOG_FORMATS = frozenset({NvidiaSmiImporter.NAME, TegrastatsImporter.NAME, JtopImporter.NAME, DcgmImporter.NAME,
                               GpuPowerCsvImporter.NAME, TegrastatsJsonImporter.NAME, NvidiaSmiQueryImporter.NAME,
                               UprofImporter.NAME, PowermetricsImporter.NAME, NvidiaSmiDmonImporter.NAME})

__all__ = [
    "IMPORTERS",
    "Hints",
    "ImportedFile",
    "Importer",
    "JouleBenchImporter",
    "Source",
    "detect",
    "known_formats",
    "known_tools",
    "load",
    "load_source",
    "validate_imported",
]


@dataclass(frozen=True)
class ImportedFile(LoadedResultFile):
    """A validated document plus what the conversion noticed."""

    format: str = ""
    warnings: tuple[str, ...] = field(default_factory=tuple)

    @property
    def runs(self) -> list[dict[str, Any]]:
        runs: list[dict[str, Any]] = self.document.get("runs", [])
        return runs

    def missing_fields(self) -> list[str]:
        """Headline figures that no run of the file carries (labels it leaves unstated: `not_stated`)."""
        missing = []
        for key in ("throughput_sps", "j_per_sample", "energy_j", "latency_p50_ms"):
            if not any((run.get("metrics") or {}).get(key) is not None for run in self.runs):
                missing.append(key)
        return missing

    def not_stated(self) -> dict[str, int]:
        """Label -> runs that do not state it (device, mode, precision, batch size, energy boundary)."""
        return count_not_stated(self.runs)


_LINE_SAID = re.compile(r"line (\d{1,9}): (.+)", re.DOTALL)


def collapsed(warnings: list[str]) -> list[str]:
    """The warnings with those that say the same of several lines ('line 27: latency_ms: 'inf' ...') said once,
    naming the lines, where the first of them stood."""
    lines: dict[str, list[str]] = {}
    for w in warnings:
        if (m := _LINE_SAID.fullmatch(w)) is not None:
            lines.setdefault(m.group(2), []).append(m.group(1))
    out: list[str] = []
    for w in warnings:
        m = _LINE_SAID.fullmatch(w)
        said = lines.get(m.group(2), []) if m is not None else []
        if m is None or len(said) == 1:
            out.append(w)
        elif said and said[0] == m.group(1):  # the first of them: said once for all
            shown = ", ".join(said[:10]) + (f" ... ({len(said)} lines)" if len(said) > 10 else "")
            out.append(f"lines {shown}: {m.group(2)}")
    return out


def known_formats() -> list[str]:
    return [f"{imp.NAME} ({imp.DESCRIPTION})" for imp in IMPORTERS]


def detect(source: Source) -> Importer:
    """The first importer, in the fixed order, that recognises the content."""
    return detect_source(source)[0]


def _sniffs(importer: Importer, source: Source) -> bool:
    if importer.FOLDER != source.is_folder and not getattr(importer, "ALSO_FILES", False):
        return False
    try:
        return bool(importer.sniff(source))
    except ResultFileError:
        raise
    except (ValueError, KeyError, TypeError, IndexError, AttributeError, RecursionError):
        return False


_GENERIC_TEXT = ("tqdm", "text-figures")  # readers of any log's bars or figures, not of one tool's output


def detect_source(source: Source) -> tuple[Importer, Source, Unwrapped | None]:
    """(the importer, the source it reads, a note): the first importer, in the fixed order, that recognises the
    content; before the general readers take a JSON object that wraps one list of records (`{"cmd": ..., "rows":
    [...]}`), the tool readers are offered that list (`table_records.unwrapped`, one level), and a CSV under comment
    lines is offered as its table (`table_preamble.uncommented`); first of all, a text's several JSON documents of one
    kind are offered as their JSON Lines, and a console log that ends in a JSON document that document (`json_tail`);
    each with a note saying so."""
    general = next(n for n, imp in enumerate(IMPORTERS) if isinstance(imp, GeneralTableImporter))
    # a report's JSON documents, or a console log ending in its script's JSON results: read where no tool's reader
    tail = json_documents(source) or json_at_end(source)
    for n, importer in enumerate(IMPORTERS):  # but the generic ones claims the log
        if tail is not None and (n == general or importer.NAME in _GENERIC_TEXT) and _sniffs(importer, source) and (
                reader := next((imp for imp in IMPORTERS if _sniffs(imp, tail.source)), None)) is not None:
            return reader, tail.source, tail
        if n == general and (inner := unwrapped(source)) is not None:
            tool = next((imp for imp in IMPORTERS[:general] if _sniffs(imp, inner.source)), None)
            if tool is not None:
                return tool, inner.source, inner
        if n == general and (inner := uncommented(source)) is not None:  # a CSV under '#' comment lines
            reader = next((imp for imp in IMPORTERS if _sniffs(imp, inner.source)), None)
            if reader is not None:
                return reader, inner.source, inner
        if _sniffs(importer, source):
            return importer, source, None
    if tail is not None and (reader := next((imp for imp in IMPORTERS if _sniffs(imp, tail.source)), None)):
        return reader, tail.source, tail
    what = "folder" if source.is_folder else "file"
    kind = what_is(source)
    if kind:
        raise NothingToImportError(source.name, [f"(whole file): {kind}; no benchmark figure to import"])
    raise NothingToImportError(
        source.name, [f"(whole {what}): this {what} holds no benchmark figures JouleBench can read (it looks like "
                      f"{looks_like(source)}): not a format JouleBench knows; it reads the files of {known_tools()}"])


def known_tools() -> str:
    """The tools whose files are read, in one short line (the full list is `known_formats`)."""
    return tools_line([(imp.NAME, imp.TOOL) for imp in IMPORTERS])


def load_source(source: Source, hints: Hints | None = None) -> tuple[ImportedFile, str]:
    """Detect, convert and validate; raise ResultFileError (and nothing else) on bad input."""
    hints = hints or Hints()
    original = source
    importer, source, unwrap = detect_source(source)
    if (not source.is_folder and importer.NAME != JouleBenchImporter.NAME and source.text is None
            and not getattr(importer, "TOLERATES_NUL", False)):
        try:
            source.data.decode("utf-8")
            where = "contains NUL bytes"
        except UnicodeDecodeError as e:
            where = f"byte {e.start} is not UTF-8"
        raise ResultFileError(source.name, [f"(whole file): {where}; not a {importer.NAME} text file"])
    conv = Conversion(source=source, hints=hints, importer=importer)
    if unwrap is not None:
        conv.warn(unwrap.note)
    if source.encoding_note is not None:
        conv.warn(f"{source.name}: {source.encoding_note}")
    try:
        document = importer.convert(conv)
    except ResultFileError as e:
        kind = what_is(original)
        if kind:  # refused for want of any figure: say what the file is
            raise NothingToImportError(source.name, [f"(whole file): {kind}; no benchmark figure to import",
                                                     *e.problems]) from e
        raise
    except (
        ValueError,
        KeyError,
        TypeError,
        IndexError,
        AttributeError,
        OverflowError,
        RecursionError,
        ZeroDivisionError,
        PolarsError,  # a table polars cannot frame (duplicate column names from a damaged header)
    ) as e:  # a shape the importer did not expect: report, never crash
        raise ResultFileError(
            source.name, [f"(whole file): not a valid {importer.NAME} file ({type(e).__name__}: {e})"]
        ) from e
    runs_made = document.get("runs") if isinstance(document, dict) else None
    if unwrap is not None and unwrap.tags is not None:
        _tag_each(source.name, runs_made, unwrap.tags)
    if isinstance(runs_made, list) and len(runs_made) > MAX_RUNS_PER_FILE:
        raise ResultFileError(source.name, [f"(whole file): {len(runs_made):,} runs; one file holds at most "
                                            f"{MAX_RUNS_PER_FILE:,}: split it into smaller files"])
    _not_stated_to_null(document)
    validate_imported(document, source.name)
    runs = document.get("runs") or []
    reasons = {label: why for label, where in conv.unstated.items() if (why := _reason(where))}
    warning = not_stated_warning(count_not_stated(runs), len(runs), source.base_name, reasons,
                                 flags_apply=not isinstance(importer, JouleBenchImporter))
    if warning:
        conv.warnings.insert(0, warning)
    imported = ImportedFile(
        name=source.name,
        content_sha256=source.content_sha256,
        document=document,
        format=importer.NAME,
        warnings=tuple(collapsed(conv.warnings)),
        supplied=_supplied(conv, hints),
    )
    return imported, importer.NAME


def _tag_each(name: str, runs: Any, tags: tuple[str, ...]) -> None:
    """Each run of a wrapper's nested records gets its record's own labels in its tag (`table_records.Unwrapped`):
    one run per record, or the file is refused (the labels could not be told to their runs)."""
    if not isinstance(runs, list) or len(runs) != len(tags):
        raise ResultFileError(name, [f"(whole file): {len(tags)} records, each with labels that tell it apart, gave "
                                     f"{len(runs) if isinstance(runs, list) else 0} runs: the labels cannot be given "
                                     "to their runs; map the file on the Upload page"])
    for run, tag in zip(runs, tags, strict=True):
        config = run.get("config") if isinstance(run, dict) else None
        if isinstance(config, dict) and tag:
            config["tag"] = ", ".join(p for p in (config.get("tag"), tag) if p)[:200]


def _not_stated_to_null(document: Any) -> None:
    """A device the importer could not name (the placeholder of `Conversion.device`) becomes null."""
    runs = document.get("runs") if isinstance(document, dict) else None
    for run in runs if isinstance(runs, list) else []:
        device = run.get("device") if isinstance(run, dict) else None
        if isinstance(device, dict) and device.get("name") is DEVICE_NOT_STATED:
            run["device"] = None


def _reason(where: str) -> str | None:
    """Where an importer looked for a label, as a short reason: '(whole file; X)' -> 'X',
    'line 2: (X)' -> 'X', 'line 2: gpu_model' -> 'no gpu_model'; None when it says nothing."""
    text = re.sub(r"^line \d+(: )?", "", where.strip()).strip()
    if text.startswith("(whole file; ") and text.endswith(")"):
        return text[len("(whole file; "):-1].split(": pass ")[0]
    if text in ("", "(whole file)", "device", "mode"):
        return None
    if text.startswith("(") and text.endswith(")"):
        return text[1:-1]
    return f"no {text}"


def _supplied(conv: Conversion, hints: Hints) -> tuple[SuppliedLabel, ...]:
    """Labels from a folder name and from the user's hints, to record for the runs carrying them.
    (A JouleBench result file is self-describing: hints are not applied to it.)"""
    if isinstance(conv.importer, JouleBenchImporter):
        return ()
    who = current_user()
    out = [SuppliedLabel(label, value, "folder_name", who, "import") for label, value in conv.from_folder.items()]
    given = {"device": hints.device.strip() if hints.device else None, "mode": hints.mode,
             "precision": hints.precision, "batch_size": None if hints.batch_size is None else str(hints.batch_size),
             "energy_boundary": hints.boundary}
    out += [SuppliedLabel(label, value, "user", who, "import") for label, value in given.items()
            if value and label not in conv.from_folder]
    return tuple(out)


def validate_imported(document: dict[str, Any], name: str) -> None:
    """Full schema validation, with long power traces checked in bulk (numpy) instead of item by item.

    A trace an importer built holds only floats; the schema sees its first samples, and the
    rules for the whole arrays (paired lengths, finite, non-decreasing time) are checked here.
    """
    runs = document.get("runs")
    if not isinstance(runs, list) or not any(isinstance(r, dict) and r.get("power_traces") for r in runs):
        validate_document(document, name)
        return
    import numpy as np

    latencies_to_missing(document)  # on the runs themselves: the shallow copies below would lose a new flags list
    problems = []
    shallow_runs = []
    for i, run in enumerate(runs):
        traces = run.get("power_traces") if isinstance(run, dict) else None
        if not isinstance(traces, list):
            shallow_runs.append(run)
            continue
        short = []
        for j, trace in enumerate(traces):
            if not isinstance(trace, dict):
                short.append(trace)
                continue
            t, p = trace.get("t_s"), trace.get("power_w")
            if isinstance(t, list) and isinstance(p, list) and len(t) > 64:
                where = f"runs[{i}].power_traces[{j}]"
                odd = next(((key, n, x) for key, values in (("t_s", t), ("power_w", p))
                            for n, x in enumerate(values) if type(x) is not float and type(x) is not int), None)
                if odd is not None:  # "1" and true are not numbers, though numpy would convert them
                    key, n, x = odd
                    problems.append(f"{where}.{key}[{n}]: {str(x)[:20]!r} is not a number; write it without quotes")
                    continue
                try:
                    tt, pp = np.asarray(t, dtype=float), np.asarray(p, dtype=float)
                except (TypeError, ValueError):
                    problems.append(f"{where}: t_s and power_w must hold numbers only")
                    continue
                if len(tt) != len(pp):
                    problems.append(f"{where}: t_s has {len(tt)} values, power_w {len(pp)}; they must pair up")
                elif not (np.isfinite(tt).all() and np.isfinite(pp).all()):
                    problems.append(f"{where}: non-finite value")
                elif np.any(np.diff(tt) < 0):
                    problems.append(f"{where}.t_s: times must not go backwards; sort the samples")
                elif tt.min() < 0 or tt.max() > MAX_TRACE_T_S:
                    problems.append(f"{where}.t_s: {tt.min() if tt.min() < 0 else tt.max():g} s is outside 0 to "
                                    f"{MAX_TRACE_T_S:g} s")
                elif pp.min() < 0 or pp.max() > MAX_TRACE_POWER_W:
                    bad = pp.min() if pp.min() < 0 else pp.max()
                    problems.append(f"{where}.power_w: {bad:g} W is outside the physical range 0 to "
                                    f"{MAX_TRACE_POWER_W:g} W; check the unit (mW read as W?)")
                trace = {**trace, "t_s": t[:8], "power_w": p[:8]}
            short.append(trace)
        shallow_runs.append({**run, "power_traces": short})
    if problems:
        raise ResultFileError(name, problems)
    validate_document({**document, "runs": shallow_runs}, name)


def load(data: bytes, name: str, *, hints: Hints | None = None, dirs: tuple[str, ...] = ()) -> tuple[ImportedFile, str]:
    """Import the bytes of one file (any known format, gzip allowed)."""
    return load_source(Source.single(data, name, dirs), hints)
