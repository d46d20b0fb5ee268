"""TensorFlow Lite's (LiteRT's) `benchmark_model` console output, as logged or pasted into Markdown / reST: one
inference run per invocation (several invocations in one file are several runs).

Learned from the writer: tensorflow/tensorflow tensorflow/lite/tools/benchmark/benchmark_model.cc and
benchmark_tflite_model.cc (the same under google-ai-edge/LiteRT tflite/tools/benchmark/), the `count=` line of
`Stat::OutputToStream` (tensorflow/core/util/stats_calculator.h), the parameter echo of `LOG_BENCHMARK_PARAM` /
`LOG_TOOL_PARAM` (benchmark_params.h, tool_params.h, tools/delegates/*_delegate_provider.cc):

    STARTING!                                   (TF 2.4+ prefixes lines with 'INFO: ', Android logcat 'I tflite  : ')
    Num threads: [4]  Graph: [./m.tflite]  Use gpu: [1]    the parameters set ('Use gpu : [1]' in TF 1.x)
    Loaded model ./m.tflite / The input model file size (MB): 16.9 / Initialized session in 17.187ms.
    Running benchmark for at least 1 iterations ...    then 'count=1 curr=3512391' (warm-up, us per Invoke)
    Running benchmark for at least 50 iterations ...   then the timed runs:
    count=50 first=.. curr=.. min=2727568 max=3189954 avg=2.95034e+06 std=109798 [p5=.. median=.. p95=..]
    Inference timings in us: Init: 17187, First inference: 3512391, Warmup (avg): 3.51239e+06, Inference (avg): ..
    Memory footprint delta from the start of the tool (MB): init=4.21094 overall=46.0859

(TF 1.13-2.1: `Average inference timings in us: Warmup: W, Init: I, Inference: A` or `no stats: A`; a failure ends
with `Benchmarking failed.`, kept as a failed run with the ERROR lines.) A timed run is one `Invoke()` of the model
on its input tensors: `Inference (avg)` / 1000 is latency_avg_ms. The `count=` line just before it is the same
series when its avg equals `Inference (avg)` (checked): max -> latency_max_ms, `median`/`p95` (LiteRT's
StatWithPercentiles) -> latency_p50_ms/latency_p95_ms, count -> measured_steps; min, std, p5 go in the notes. No
throughput: the tool prints none and the batch (the model's input shape) is not printed. Init, first and warm-up
times, model size and memory footprints (approximate, as the tool says: the process's max-RSS deltas) are notes.
Op-profiling tables (per operator, with their own `Timings (microseconds): count=..` total) are not runs. A run
with no timed inference (`--dry_run`: avg 0 or nan) is left out with a warning.

Configuration: the model is `Graph:` (else `--graph=` of the command shown before the output, else `Loaded
model`); the delegate (`Use gpu/nnapi/xnnpack/hexagon/CoreML: [1]`, an external delegate) is the engine
(`tflite-gpu`..., plain `tflite` the CPU path, where the runtime may apply XNNPACK itself) and, with the threads and
the options that change the result (fp16 allowances, NNAPI accelerator, `--use_xnnpack=false`, input shapes), the
tag: a GPU-delegate run and a 4-thread CPU run are never pooled. The tool names no device: it is asked for; a
document that runs it under QEMU gets a warning. LiteRT's `--result_file_path` is a binary proto without a
signature to detect: not read; the profiling CSV is per operator.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count

_NUM = r"[-+]?(?:\d{1,15}(?:\.\d{0,15})?|\.\d{1,15})(?:[eE][-+]?\d{1,3})?|-?nan|-?inf"
# 'INFO: ' (TFLITE_LOG since TF 2.4), logcat's threadtime ('08-17 21:47:49.138 29423 29423 I tflite  : ') and brief
# ('I/tflite  (29423): ') prefixes, and a quoted or indented paste
_PREFIX = re.compile(r"^[ \t>]{0,40}(?:(?:INFO|WARN|WARNING|ERROR|VERBOSE|FATAL):[ \t]{0,4}|(?:\d\d-\d\d \d\d:\d\d:\d\d"
                     r"\.\d{1,6}[ \t]{1,4}\d{1,7}[ \t]{1,4}\d{1,7}[ \t][VDIWEF][ \t]|[VDIWEF]/|\.\.\.[ \t])tflite[ \t]"
                     r"{0,8}(?:\([ \t]{0,7}\d{1,7}\))?[ \t]{0,4}:[ \t])?")
_RESULT = re.compile(rf"^Inference timings in us: Init: (?P<init>{_NUM}), First inference: (?P<first>{_NUM}), "
                     rf"Warmup \(avg\): (?P<warmup>{_NUM}), Inference \(avg\): (?P<avg>{_NUM})")
_OLD_RESULT = re.compile(rf"^Average inference timings in us: Warmup: (?P<warmup>{_NUM}), Init: (?P<init>{_NUM}), "
                         rf"(?:no stats|Inference): (?P<avg>{_NUM})")
_STAT = re.compile(r"^count=\d{1,12}(?: [a-z0-9]{1,8}=[^\s=(]{1,40}(?:\(all same\))?){0,12}\s*$")
_STAT_FIELD = re.compile(rf"([a-z0-9]{{1,8}})=({_NUM})")
_ECHO = re.compile(r"^(?P<name>[#A-Za-z][\w #/().,-]{0,80}?)\s{0,3}:\s{0,3}\[(?P<value>[^\]\n]{0,2000})\]\s*$")
_CUT = re.compile(r"^(?:[ \t]{0,40}(?:INFO: )?)(?:Running benchmark for at least \d{1,12} iterations and at least "
                  r"[-0-9.e]{1,20} seconds|Operator-wise Profiling Info for Regular Benchmark Runs:)", re.MULTILINE)
_COMMAND = re.compile(r"benchmark_model\S{0,40}(?:\s|$)")
_FLAG = re.compile(r"--(\w{1,60})=(?:\"([^\"]{0,2000})\"|'([^']{0,2000})'|(\S{0,2000}))")
_QEMU = re.compile(r"\b(?:runqemu|qemu-system-\w{1,20}|MACHINE=qemu\w{0,30})\b")
# the parameter echo's descriptions (lowercase, spaces collapsed) -> the flag names
_ECHOED = {"graph": "graph", "num threads": "num_threads", "#threads used for cpu inference": "num_threads",
           "use gpu": "use_gpu", "use nnapi": "use_nnapi", "use legacy nnapi": "use_legacy_nnapi",
           "use xnnpack": "use_xnnpack", "use hexagon": "use_hexagon", "use coreml": "use_coreml",
           "external delegate path": "external_delegate_path", "nnapi accelerator name": "nnapi_accelerator_name",
           "nnapi execution preference": "nnapi_execution_preference", "allow fp16": "allow_fp16",
           "allow fp16 in nnapi": "nnapi_allow_fp16", "allow lower precision in gpu": "gpu_precision_loss_allowed",
           "xnnpack_force_fp16": "xnnpack_force_fp16", "gpu backend": "gpu_backend",
           "input shapes": "input_layer_shape", "use caching": "use_caching", "run w/o invoking kernels": "dry_run",
           "enable running quant models in gpu": "gpu_experimental_enable_quant"}
_DELEGATES = (("use_gpu", "gpu"), ("use_nnapi", "nnapi"), ("use_legacy_nnapi", "nnapi"), ("use_hexagon", "hexagon"),
              ("use_coreml", "coreml"), ("use_xnnpack", "xnnpack"))
# options that change what is computed, for the tag (flag -> how the tag says it)
_OPTIONS = (("nnapi_accelerator_name", "NNAPI accelerator {}"), ("nnapi_execution_preference", "NNAPI {}"),
            ("allow_fp16", "fp16 allowed"), ("nnapi_allow_fp16", "NNAPI fp16 allowed"),
            ("gpu_precision_loss_allowed", "GPU lower precision allowed"), ("gpu_backend", "GPU backend {}"),
            ("xnnpack_force_fp16", "XNNPACK fp16 forced"), ("gpu_experimental_enable_quant", "GPU quant models"),
            ("use_caching", "caching"), ("input_layer_shape", "input shapes {}"), ("taskset", "taskset {}"))
NO_ENERGY = "benchmark_model measures no power or energy"
_MAX_LINES = 200_000


@dataclass
class _Invocation:
    line: int
    command: dict[str, str] = field(default_factory=dict)
    echo: dict[str, str] = field(default_factory=dict)
    loaded: str | None = None
    stats: list[tuple[int, str]] = field(default_factory=list)  # the 'count=' lines before the result
    result: dict[str, str] | None = None
    result_line: int = 0
    failed: bool = False
    errors: list[str] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)
    output: bool = False  # any of the tool's lines seen


def _true(value: str | None) -> bool:
    return (value or "").strip().lower() in ("1", "true", "yes")


def _lines(text: str) -> list[tuple[str, str]]:
    """(line as written, line without its log prefix) for the first _MAX_LINES lines."""
    return [(raw, _PREFIX.sub("", raw.rstrip(), count=1)) for raw in text.splitlines()[:_MAX_LINES]]


def _result(line: str) -> dict[str, str] | None:
    """The result line's figures as written (us), or None."""
    m = _RESULT.match(line) or _OLD_RESULT.match(line)
    return m.groupdict() if m else None


def _ms(us: float) -> float:
    return float(f"{us / 1000:.12g}")  # 92571.2 us -> 92.5712 ms, not 92.57119999999999


class TfliteBenchmarkImporter(Importer):
    NAME = "tflite-benchmark"
    TOOL = "TensorFlow Lite benchmark_model"
    DESCRIPTION = "TensorFlow Lite / LiteRT benchmark_model output ('Inference timings in us: ... Inference (avg)')"

    def sniff(self, source: Source) -> bool:
        head = source.head
        if _CUT.search(head):  # the tool's own lines without a result yet: a cut capture, refused by convert
            return True
        if "nference timings in us" not in head and not ("benchmark_model" in head or "STARTING!" in head):
            return False
        text = head if "nference timings in us" in head else (source.text or "")
        return any(_result(line) for _, line in _lines(text) if "timings in us" in line)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        text = (conv.source.text or "").replace("\r", "")
        invocations = self._read(conv, text)
        runs = [i for i in invocations if i.failed or (i.result is not None and self._timed(conv, i))]
        if not runs:
            raise conv.fail("(whole file)", "a benchmark_model capture without an 'Inference timings in us: ... "
                            "Inference (avg)' line: the run did not finish or the capture is cut; op-profiling tables "
                            "alone are per-operator figures, not a run")
        check_run_count(conv, len(runs), "the benchmark_model runs in it")
        if (emulated := _QEMU.search(text)) is not None:
            conv.warn(f"the document runs benchmark_model under QEMU ({emulated.group(0)[:40]}): its timings are an "
                      "emulator's, not a device's")
        return conv.document([self._run(conv, i, inv) for i, inv in enumerate(runs)])

    @staticmethod
    def _read(conv: Conversion, text: str) -> list[_Invocation]:
        found: list[_Invocation] = []
        current = _Invocation(0)
        continued = False  # the previous command line ended with '\'
        for n, (raw, line) in enumerate(_lines(text), 1):
            stripped = raw.strip()
            if continued or (_COMMAND.search(stripped) and ("--" in stripped or stripped.endswith("\\"))):
                if not continued:  # a new invocation
                    found.append(current)
                    current = _Invocation(n)
                    if (m := re.search(r"taskset\s+(\S{1,40})", stripped)) is not None:
                        current.command["taskset"] = m.group(1)  # the CPUs it was pinned to
                for m in _FLAG.finditer(stripped):
                    current.command[m.group(1)] = next(g for g in m.groups()[1:] if g is not None)
                continued = stripped.endswith("\\")
                continue
            done = current.result is not None or current.failed
            if line.startswith("STARTING!") or (done and _ECHO.match(line) and line.startswith("Log parameter")):
                if done or current.output:
                    found.append(current)
                    current = _Invocation(n)
                current.output = True
                continue
            if (echo := _ECHO.match(line)) is not None:
                key = _ECHOED.get(re.sub(r"\s+", " ", echo.group("name").strip().lower()))
                if key:
                    current.echo[key], current.output = echo.group("value").strip(), True
            elif line.startswith("Loaded model "):
                current.loaded, current.output = line[len("Loaded model "):].strip()[:500], True
            elif _STAT.match(line) and current.result is None:
                current.stats.append((n, line))
            elif (result := _result(line)) is not None:
                if current.result is not None:  # a second result without a new invocation between them
                    found.append(current)
                    current = _Invocation(n, command=dict(current.command), echo=dict(current.echo))
                current.result, current.result_line, current.output = result, n, True
            elif line.startswith("Benchmarking failed"):
                current.failed, current.output = True, True
            elif raw.lstrip().startswith(("ERROR:", "FATAL:")) or line.startswith(("Failed to ", "Disallowed CPU")):
                if len(current.errors) < 4:
                    current.errors.append(line.strip()[:300])
            else:
                TfliteBenchmarkImporter._note(current, line)
        found.append(current)
        for inv in (i for i in found if i.result is None and not i.failed and (i.stats or i.output)):
            conv.warn(f"line {inv.line}: a benchmark_model invocation without an 'Inference timings' line (cut, or "
                      "op-profiling output only): left out")
        return found

    @staticmethod
    def _note(inv: _Invocation, line: str) -> None:
        for start, note in (("The input model file size (MB): ", "model file {} MB"),
                            ("Initialized session in ", "session initialised in {}"),
                            ("Memory footprint delta from the start of the tool (MB): ",
                             "memory footprint delta MB {}"),
                            ("Peak memory footprint (MB): ", "memory footprint MB {}"),
                            ("Overall peak memory footprint (MB) via periodic monitoring: ",
                             "peak memory footprint {} MB (periodic monitoring)"),
                            ("Explicitly applied ", "applied {}"), ("Though ", "{}"),
                            ("Created TensorFlow Lite XNNPACK delegate", "the runtime created its XNNPACK delegate {}"),
                            ("Replacing ", "replacing {}")):
            if line.startswith(start):
                inv.notes.append(note.format(line[len(start):].strip().rstrip(".")[:200]))
                inv.output = True
                return
        if line.startswith(("Operator-wise Profiling Info", "Profiling Info for Benchmark Initialization")):
            inv.output = True
            if not any(n.startswith("op-profiling") for n in inv.notes):
                inv.notes.append("op-profiling tables (per operator, with their own profiled-run total): not stored")

    @staticmethod
    def _timed(conv: Conversion, inv: _Invocation) -> bool:
        if inv.result is not None and float(inv.result["avg"]) > 0:
            return True
        conv.warn(f"line {inv.result_line}: Inference (avg) {inv.result and inv.result['avg']} us: no inference was "
                  "timed (a --dry_run or 0 iterations): left out")
        return False

    @staticmethod
    def _stat(conv: Conversion, inv: _Invocation, avg_us: float) -> dict[str, float] | None:
        """The timed runs' 'count=' line: the last one before the result, when its average is the result's."""
        if not inv.stats:
            return None
        n, line = inv.stats[-1]
        values = {k: float(v) for k, v in _STAT_FIELD.findall(line)}
        if "first" not in values and "curr" in values:  # 'count=1 curr=X' or 'count=N curr=X(all same)'
            values.setdefault("avg", values["curr"])
            values.setdefault("max", values["curr"])
        mean = values.get("avg")
        if mean is None or abs(mean - avg_us) > 1e-6 * max(abs(avg_us), 1.0):
            conv.warn(f"line {n}: this count= line's average is not the 'Inference (avg)' after it: its min/max "
                      "are not stored")
            return None
        return values

    def _run(self, conv: Conversion, index: int, inv: _Invocation) -> dict[str, Any]:
        where = f"line {inv.result_line or inv.line}"
        params = {**inv.command, **inv.echo}
        graph = params.get("graph") or inv.loaded
        model = re.sub(r"\.tflite$", "", (graph or "").rstrip("/").rsplit("/", 1)[-1])[:200] or None
        delegates = [name for key, name in _DELEGATES if _true(params.get(key))]
        if params.get("external_delegate_path"):
            delegates.append("external")
        delegates = list(dict.fromkeys(delegates))
        threads = params.get("num_threads")
        external = params.get("external_delegate_path", "").rsplit("/", 1)[-1][:60]
        names = {"coreml": "CoreML", "external": f"external ({external})"}
        tag = [f"{' + '.join(names.get(d, d.upper()) for d in delegates)} delegate" if delegates else "CPU"]
        if threads and threads != "-1":
            tag.append(f"{threads} threads")
        elif threads == "-1" or inv.echo:
            tag.append("default threads")  # -1 (or unset where the echo shows the parameters set): the runtime's own
        if "use_xnnpack" in params and not _true(params["use_xnnpack"]):
            tag.append("XNNPACK off")
        for key, text in _OPTIONS:
            value = params.get(key)
            if value and (("{}" in text and value.lower() not in ("0", "false")) or _true(value)):
                tag.append(text.format(value[:60]))
        metrics: dict[str, Any] = {"energy_missing_reason": NO_ENERGY}
        shown = " ".join(f"--{k}={v}" for k, v in inv.command.items() if k != "taskset")[:400]
        notes = [f"benchmark_model {shown}".strip()]
        status, error = "ok", None
        config: dict[str, Any] = {}
        if inv.result is not None:
            r = inv.result
            avg_us = float(r["avg"])
            notes.append("Inference timings (us): " + ", ".join(f"{k} {v}" for k, v in r.items() if k != "avg"))
            stat = self._stat(conv, inv, avg_us)
            if inv.failed:
                status, error = "failed", "benchmark_model ended with 'Benchmarking failed.' after its timed runs"
                notes.append(f"Inference (avg) {_ms(avg_us):g} ms of runs that returned an error: not stored")
            else:
                metrics["latency_avg_ms"] = _ms(avg_us)
                if stat is not None:
                    for key, name in (("max", "latency_max_ms"), ("median", "latency_p50_ms"),
                                      ("p95", "latency_p95_ms")):
                        if key in stat and stat[key] > 0:
                            metrics[name] = _ms(stat[key])
            if stat is not None:
                config["measured_steps"] = int(stat["count"]) if stat.get("count", 0) >= 1 else None
                notes.append("timed runs (us): " + ", ".join(f"{k}={stat[k]:.15g}" for k in
                                                             ("count", "min", "std", "p5") if k in stat))
            notes.append("latency per Invoke() of the model on its input shape (the batch is not printed)")
        else:
            status = "failed"
            error = "; ".join(inv.errors + ["Benchmarking failed."])[:2000]
        notes += inv.notes
        if delegates == [] and "use_xnnpack" not in params:
            notes.append("CPU path: the runtime may apply XNNPACK by itself (TF 2.3 and later)")
        return {
            "run_id": conv.run_id(index),
            "status": status,
            "error": error,
            "device": conv.device(None, where=f"({where}: benchmark_model names no device)"),
            "config": {
                "workload": conv.hints.workload or (model or "tflite")[:200],
                "model": model,
                "mode": "infer",
                "precision": conv.precision(None),
                "batch_size": conv.hints.batch_size,
                "engine": "tflite" + (f"-{delegates[0]}" if len(delegates) == 1 else "-multi" if delegates else ""),
                "tag": ", ".join(tag)[:200],
                **{k: v for k, v in config.items() if v is not None},
            },
            "metrics": metrics,
            "flags": [],
            "notes": "; ".join(n for n in notes if n)[:10_000],
        }
