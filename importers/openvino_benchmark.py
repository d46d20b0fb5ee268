"""OpenVINO's `benchmark_app`: its console log and its `-report_type` statistics report (benchmark_report.csv).

Learned from the writers (openvinotoolkit/openvino: the Python tool tools/benchmark_tool/openvino/tools/benchmark/
main.py, benchmark.py, utils/utils.py, utils/statistics_report.py; the C++ sample samples/cpp/benchmark_app/main.cpp,
statistics_report.cpp and samples/common csv_dumper.hpp), 2021 to 2025 releases:

- a log runs `[Step 1/11] Parsing and validating input arguments` to `[Step 11/11] Dumping statistics report`, then
  `Execution Devices:['CPU']` (Python) or `Execution Devices: [ GPU.1 ]` / `NPU.3720` (C++, plugins), `Count: N
  iterations`, `Duration: x ms`, `Latency:` with `Median` (or `N percentile` under -latency_percentile), `Average`,
  `Min`, `Max` (releases before 2022 print one `Latency: x ms`, the percentile), and `Throughput: y FPS`. A file may
  hold several logs pasted one after another (in Markdown code fences, with prose and hand-made tables around):
  each `[Step 1/..]` opens a run, which ends at its Throughput line; nothing outside the logs is read.
- the report (`-report_type no_counters|average_counters|detailed_counters`) is `key;value` lines under `Command
  line parameters`, `Configuration setup` and `Execution results` (`throughput`, `latency (ms)` or `Median latency
  (ms)`, `avg latency`, `total number of iterations`, ...). The per-layer counters reports (`layerName;execStatus;..`)
  hold no run figures and are refused; the Python `-json_stats` writer is broken (json.dump(file, data)), not read.

What a run stores: Throughput FPS as samples/s (frames: the batch items; async or C++ the tool computes iterations x
batch / duration; Python's sync API prints batch x 1000 / median latency instead, so there the stored rate is
iterations x batch / duration and the printed FPS goes to the notes); Median (or p90/p95/p99), Average and Max as the
latency of one infer request (one batch), measured while N requests were in flight (`N inference requests` of step
10: async keeps N in flight, so latency is not 1 / throughput; N is the run's max_concurrency and is in the tag);
Duration as the run's window, Count as iterations/s. Min, the model read, reshape and compile times and the first
inference are set-up costs or extremes: notes. The device is `Execution Devices` (CPU, GPU.0, NPU.3720 are device
kinds and ids, never product names): kept in the tag, so CPU, GPU and NPU runs are never pooled; the device itself is
a product name the log states (`Full device name: ...`, `FULL_DEVICE_NAME: ...`), else not stated (text outside the
log, a system-information listing or another tool's output, is not the benchmark's). The precision is the compiled
model's INFERENCE_PRECISION_HINT (f32 -> fp32, f16 -> fp16, bf16), else not stated; the model is `-m`'s file name.
benchmark_app measures no power. A log that stopped with `[ ERROR ]` or was cut before its Throughput line gives no
run (a warning names it; a file with nothing else is refused, quoting the error).
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from importers.base import MS_PER_S, Conversion, Importer, Source, check_run_count, num
from importers.text_lines import TERMINAL

_NUM = r"(\d{1,12}(?:\.\d{1,9})?)"
_PREFIX = re.compile(r"^\[ ?(INFO|WARNING|WARN|ERROR|DEBUG) ?\] ?")
_STEP = re.compile(r"^\[Step (\d{1,2})/(\d{1,2})\] ?([^\n]{0,400})")
_STEP1 = re.compile(r"^[ \t>]{0,12}\[Step 1/11\] Parsing and validating input arguments", re.MULTILINE)
_STEP_LATE = re.compile(r"^[ \t>]{0,12}\[Step (?:10|11)/11\] (?:Measuring performance|Dumping statistics)", re.M)
_COMMAND = re.compile(r"\bbenchmark_app(?:\.exe|\.py)?\s+(?P<args>-[^\n]{0,1500})")
_CSV_HEAD = re.compile(r"(?:Command line parameters|Configuration setup);?\s*$", re.MULTILINE)
_LAYERS_HEAD = "layerName;execStatus;layerType;execType"
_SETUP = {"read model": "read model", "read network": "read model", "reshape model": "reshape model",
          "compile model": "compile model", "load network": "compile model", "import model": "import model",
          "first inference": "first inference"}
_TOOK = re.compile(r"^(Read model|Read network|Reshape model|Compile model|Load network|Import model|First inference)"
                   r" took " + _NUM + r" ms")
_LAT = re.compile(r"^(Median|Average|Min|Max|(\d{1,3}) percentile):\s*" + _NUM + r"\s*ms")
_PCT_FIELD = {"50": "latency_p50_ms", "90": "latency_p90_ms", "95": "latency_p95_ms", "99": "latency_p99_ms"}
_PRECISIONS = {"f32": "fp32", "float32": "fp32", "f16": "fp16", "float16": "fp16", "bf16": "bf16", "bfloat16": "bf16"}
_SECTIONS = ("command line parameters", "configuration setup", "execution results", "group latencies")
_CSV_KEYS = {"total execution time (ms)": "duration_ms", "total number of iterations": "count", "throughput": "fps",
             "batch size": "batch", "number of parallel infer requests": "nireq", "latency (ms)": "50",
             "median latency (ms)": "50", "avg latency": "avg", "average latency (ms)": "avg", "min latency": "min",
             "min latency (ms)": "min", "max latency": "max", "max latency (ms)": "max"}
NO_ENERGY = "benchmark_app measures no power or energy"


@dataclass
class _Run:
    line: int
    command: str = ""
    version: str | None = None
    devices: str | None = None  # Execution Devices, else -d / Device info
    full_name: str | None = None
    batch: int | None = None
    nireq: int | None = None
    api: str | None = None
    hint: str | None = None
    hint_explicit: bool | None = None
    precision: str | None = None
    count: int | None = None
    duration_ms: float | None = None
    fps: float | None = None
    latency: dict[str, float] = field(default_factory=dict)
    setup: dict[str, float] = field(default_factory=dict)
    extra: list[str] = field(default_factory=list)
    error: str | None = None
    steps: int = 0


def _flag(command: str, *names: str) -> str | None:
    for name in names:
        if (m := re.search(rf"(?:^|\s){re.escape(name)}(?:\s+|=)(\"[^\"]{{1,400}}\"|\S{{1,400}})", command)):
            return m.group(1).strip('"')
    return None


def _devices(text: str) -> str | None:
    found = re.findall(r"[A-Z][A-Z0-9_]{1,20}(?:\.[A-Za-z0-9_]{1,20})?(?:\(\d{1,4}\))?", text)
    return ",".join(dict.fromkeys(found))[:120] or None


def _precision(text: str) -> str | None:
    m = re.search(r"\b(bfloat16|float16|float32|bf16|f16|f32)\b", text)
    return _PRECISIONS[m.group(1)] if m else None


class OpenvinoBenchmarkImporter(Importer):
    NAME = "openvino-benchmark"
    TOOL = "OpenVINO benchmark_app"
    DESCRIPTION = ("OpenVINO benchmark_app's console log ([Step 1/11] .. Throughput: x FPS, several logs per file) or "
                   "its -report_type benchmark_report.csv")

    def sniff(self, source: Source) -> bool:
        head = source.head
        start = head.lstrip()[:200]
        if start.startswith(_LAYERS_HEAD) or (_CSV_HEAD.match(start) and "Execution results" in head):
            return True
        if "[Step 1/11]" not in head and "benchmark_app" not in head:
            return False
        text = head if "[Step 11/11]" in head else (source.text or "")[:4_000_000]
        return bool(_STEP1.search(text) and _STEP_LATE.search(text))

    def convert(self, conv: Conversion) -> dict[str, Any]:
        text = (conv.source.text or "").replace("\r\n", "\n")
        start = text.lstrip()[:200]
        if start.startswith(_LAYERS_HEAD):
            raise conv.fail("line 1", "a benchmark_app per-layer performance counters report (layerName;execStatus;"
                            "...): times of each layer, no run's throughput or latency; import benchmark_report.csv "
                            "or the console log")
        runs = [self._csv(conv, text)] if _CSV_HEAD.match(start) else self._logs(text)
        done = []
        for r in runs:
            if r.fps is not None:
                done.append(r)
            elif r.error:
                conv.warn(f"line {r.line}: benchmark_app stopped with an error before its statistics report "
                          f"({r.error}): that run is left out")
            else:
                conv.warn(f"line {r.line}: a benchmark_app log cut before its Throughput line (last step read: "
                          f"{r.steps}/11): that run is left out")
        if not done:
            why = next((f"line {r.line}: benchmark_app stopped with an error ({r.error})" for r in runs if r.error),
                       None)
            raise conv.fail(why or "(whole file)", "no benchmark_app log here reached its statistics report "
                            "([Step 11/11] ... Throughput: x FPS); no figures to import" if why else
                            "a benchmark_app log cut before its statistics report ([Step 11/11] ... Throughput: x FPS):"
                            " no figures to import; capture the whole output")
        check_run_count(conv, len(done), "the benchmark_app logs in it")
        return conv.document([self._run(conv, i, r) for i, r in enumerate(done)])

    @staticmethod
    def _logs(text: str) -> list[_Run]:
        runs: list[_Run] = []
        command = ""
        r: _Run | None = None
        in_latency = device_info = False
        for n, raw in enumerate(text.split("\n")[:500_000], 1):
            line = TERMINAL.sub("", raw).strip().lstrip(">").strip() if "\x1b" in raw or ">" in raw[:4] else raw.strip()
            if (m := _STEP.match(line)) is not None:
                if m.group(1) == "1":
                    r = _Run(n, command=command[:500])
                    runs.append(r)
                    command, in_latency = "", False
                if r is not None:
                    r.steps = int(m.group(1))
                    device_info = False
                    if r.steps == 10 and (s := re.search(r"Start inference (a?sync)\w*", m.group(3))):
                        r.api = s.group(1)
                        found = re.search(r"(\d{1,6}) inference requests", m.group(3))
                        r.nireq = int(found.group(1)) if found else 1 if r.api == "sync" else None
                continue
            if r is None or r.fps is not None:  # outside a log: a command line may name the next one's settings
                if (m := _COMMAND.search(line)) is not None:
                    command = "benchmark_app " + m.group("args").strip()
                continue
            tag = _PREFIX.match(line)
            body = line[tag.end():] if tag else line
            if tag and tag.group(1) == "ERROR" and r.error is None:
                r.error, r.line = body.strip()[:300] or "error", n
                continue
            if r.error and r.error.endswith(":") and body.strip() and not body.startswith("Exception from"):
                r.error = f"{r.error} {body.strip()}"[:300]  # the chain of 'Exception from' places, then the cause
            indent = len(body) - len(body.lstrip())  # step 8 prints the model's properties at 2, a device's at 4
            body = body.strip()
            top = r.steps == 8 and indent <= 3
            if (m := re.match(r"Build \.{3,} ?(\S{1,80})", body)) and r.version is None:
                r.version = m.group(1)
            elif body == "Device info:":
                device_info = True
            elif device_info and re.fullmatch(r"[A-Z][A-Z0-9_.]{1,30}", body) and r.devices is None:
                r.devices = body
            elif (m := re.match(r"(?:Full device name|FULL_DEVICE_NAME)\s*:\s*(\S[^\n]{1,200})", body)):
                r.full_name = r.full_name or m.group(1).strip()
            elif (m := re.search(r"performance hint will be set to (?:PerformanceMode\.)?(\w{1,40})", body)):
                r.hint, r.hint_explicit = r.hint or m.group(1), False
            elif (m := _TOOK.match(body)) is not None:
                r.setup.setdefault(_SETUP[m.group(1).lower()], float(m.group(2)))
            elif (m := re.match(r"(?:Model|Network) batch size:\s*(\d{1,6})", body)) and r.batch is None:
                r.batch = int(m.group(1)) or None
            elif (m := re.match(r"PERFORMANCE_HINT:\s*(?:PerformanceMode\.)?(\w{1,40})", body)) and top:
                r.hint = r.hint or m.group(1)
            elif body.startswith("INFERENCE_PRECISION_HINT:") and top and r.precision is None:
                r.precision = _precision(body)
                hint = body.split(":", 1)[1].strip()
                r.extra.append(f"inference precision hint {hint.removeprefix('<Type: ').strip(chr(39) + '>')[:40]}")
            elif (m := re.match(r"(NUM_STREAMS|INFERENCE_NUM_THREADS):\s*(\d{1,6})$", body)) and top:
                r.extra.append(f"{m.group(1)} {m.group(2)}")
            elif body.startswith("EXECUTION_DEVICES:") and top:
                r.devices = _devices(body.split(":", 1)[1]) or r.devices
            elif body.startswith(("Benchmarking in inference only", "Benchmarking in full")):
                r.extra.append(body.split("(")[0].strip())
            elif body.startswith("Execution Devices:"):
                r.devices = _devices(body.split(":", 1)[1]) or r.devices
            elif (m := re.match(r"Count:\s*(\d{1,15}) iterations", body)) is not None:
                r.count = int(m.group(1))
            elif (m := re.match(r"Duration:\s*" + _NUM + r"\s*ms", body)) is not None:
                r.duration_ms = float(m.group(1))
            elif body.startswith("Latency for each data shape group"):
                in_latency = False  # per-shape groups' latencies: the run's are the general ones before
            elif (m := re.match(r"Latency:\s*(?:" + _NUM + r"\s*ms)?$", body)) is not None:
                in_latency = m.group(1) is None
                if m.group(1) is not None:  # before 2022: one line, the -latency_percentile percentile
                    r.latency[_flag(r.command, "-latency_percentile", "--latency_percentile") or "50"] = float(
                        m.group(1))
            elif in_latency and (m := _LAT.match(body)) is not None:
                key = m.group(2) or {"Median": "50", "Average": "avg", "Min": "min", "Max": "max"}[m.group(1)]
                r.latency.setdefault(key, float(m.group(3)))
            elif (m := re.match(r"Throughput:\s*" + _NUM + r"\s*FPS", body)) is not None:
                r.fps = float(m.group(1))
        return runs

    @staticmethod
    def _csv(conv: Conversion, text: str) -> _Run:
        """The statistics report: `key;value` lines in sections (the C++ writer ends every cell with ';')."""
        r, cmd, section = _Run(1, steps=11), {}, ""
        for n, raw in enumerate(text.split("\n")[:10_000], 1):
            cells = [c.strip() for c in raw.split(";")]
            while cells and not cells[-1]:
                cells.pop()
            if len(cells) == 1 and cells[0].lower() in _SECTIONS:
                section = cells[0].lower()
                continue
            if len(cells) < 2 or section == "group latencies":  # per data-shape groups: not the run's figures
                continue
            key, value = cells[0].lower(), cells[1]
            if section == "command line parameters":
                cmd[key.lstrip("-")] = value
            elif key == "target device":
                r.devices = _devices(value)
            elif key == "api":
                r.api = value.lower()
            elif key == "error":
                r.error = value[:300]
            pct = re.fullmatch(r"latency \((\d{1,3}) percentile\) \(ms\)", key)
            setup = re.fullmatch(r"(read model|reshape model|compile model|import model|first inference) time \(ms\)",
                                 key)
            slot = _CSV_KEYS.get(key) or (pct.group(1) if pct else "setup" if setup else None)
            read = slot is not None and (section == "execution results" or slot in ("batch", "nireq"))
            x = num(value, f"line {n}: {cells[0][:60]}", conv) if read else None
            if slot is None or x is None:
                continue
            if slot in ("duration_ms", "count", "fps", "batch", "nireq"):
                setattr(r, slot, x if slot in ("duration_ms", "fps") else int(x) or None)
            elif setup is not None:
                r.setup[setup.group(1)] = x
            else:
                r.latency.setdefault(slot, x)
        r.command = "benchmark_app " + " ".join(f"-{k} {v}" for k, v in cmd.items())[:480] if cmd else ""
        r.devices = r.devices or _devices(cmd.get("d", ""))
        return r

    @staticmethod
    def _run(conv: Conversion, index: int, r: _Run) -> dict[str, Any]:
        where = f"line {r.line}"
        model_path = _flag(r.command, "-m", "--path_to_model", "-path_to_model")
        model = re.sub(r"\.(xml|onnx|blob|pdmodel|tflite|pb)$", "", re.split(r"[\\/]", model_path)[-1]) if (
            model_path) else None
        devices = r.devices or _devices(_flag(r.command, "-d", "--target_device") or "")
        if not devices and r.command:
            devices = "CPU"  # the command line is here and sets no -d: the tool's default
        batch = r.batch or (int(b) if (b := _flag(r.command, "-b", "--batch_size")) and b.isdigit() else None)
        batch = batch or conv.hints.batch_size
        flag_hint = _flag(r.command, "-hint", "--perf_hint")
        if r.hint_explicit is None and r.hint and r.command:
            r.hint_explicit = flag_hint is not None
        if r.hint is None and flag_hint and flag_hint.lower() != "none":
            r.hint = {"tput": "THROUGHPUT", "ctput": "CUMULATIVE_THROUGHPUT"}.get(flag_hint.lower(), flag_hint.upper())
        notes = [f"benchmark_app: {r.command[:300]}" if r.command else "benchmark_app"]
        metrics: dict[str, Any] = {"energy_missing_reason": NO_ENERGY, "sample_unit": "frame"}
        duration_s = r.duration_ms / MS_PER_S if r.duration_ms else None
        fps = r.fps if r.fps and r.fps > 0 else None
        if (r.api == "sync" or fps is None) and r.count and duration_s and batch:  # sync: Python prints 1000 / median
            fps = r.count * batch / duration_s
            metrics["throughput_derivation"] = (f"{r.count} iterations x batch {batch} / {duration_s:g} s (reported: "
                                                f"{r.fps:g} FPS, in the Python tool's sync API batch x 1000 / median "
                                                "latency)")
        if fps is None:
            raise conv.fail(f"{where}: Throughput", f"{r.fps:g} FPS without the iterations, duration and batch to "
                            "compute it: a finished benchmark has frames per second")
        metrics["throughput_sps"] = fps
        if duration_s:
            metrics["duration_s"] = duration_s
            if r.count:
                metrics["iterations_per_s"] = r.count / duration_s
        if r.count and batch:
            metrics["examples"] = r.count * batch
        lat = r.latency
        for key, value in lat.items():
            name = {"avg": "latency_avg_ms", "max": "latency_max_ms"}.get(key) or _PCT_FIELD.get(key)
            if name:
                metrics[name] = value
            elif key != "min":
                notes.append(f"latency {key} percentile {value:g} ms")
        if "min" in lat:
            notes.append(f"Min latency {lat['min']:g} ms")
        nireq = r.nireq
        if lat:
            notes.append(f"latency is one infer request's (one batch of {batch or '?'}) with {nireq or '?'} request(s)"
                         " in flight" + (": not 1 / throughput" if (nireq or 0) > 1 else ""))
        if r.setup:
            notes.append("set-up, not inference: " + ", ".join(f"{k} {v:g} ms" for k, v in r.setup.items()))
        if r.hint:
            notes.append(f"performance hint {r.hint}" + ("" if r.hint_explicit is not False else
                                                         " (not set on the command line: the tool's default)"))
        notes += r.extra
        if devices:
            notes.append(f"execution device {devices}: a device kind and id, not a product name")
        parts = [f"execution device {devices}" if devices else None,
                 f"{nireq} infer request{'s' if nireq != 1 else ''}" if nireq else None,
                 f"hint {r.hint}" if r.hint else None, f"{r.api} API" if r.api == "sync" else None]
        kind = "cpu" if (devices or "").startswith("CPU") else "gpu" if (devices or "").startswith("GPU") else None
        device = conv.device(r.full_name, kind, where=f"({where}: benchmark_app names the execution device "
                                                       f"{devices or 'not at all'}, a kind, not a product)")
        version = re.match(r"\d{4}\.\d{1,2}(?:\.\d{1,3})?", r.version or "")
        conv.tool_version = version.group() if version else conv.tool_version
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": device,
            "config": {
                "workload": conv.hints.workload or (model or "benchmark_app")[:200],
                "model": model[:200] if model else None,
                "mode": "infer",
                "precision": conv.precision(r.precision),
                "batch_size": batch,
                "engine": "openvino",
                "engine_version": version.group() if version else None,
                "load_kind": "concurrency" if nireq else None,
                "max_concurrency": nireq,
                "tag": "; ".join(p for p in parts if p)[:200] or None,
            },
            "metrics": metrics,
            "flags": [],
            "notes": "; ".join(notes),
        }
