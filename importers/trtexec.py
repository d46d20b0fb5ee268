"""TensorRT `trtexec` logs: what `trtexec --onnx=... | --loadEngine=...` prints, one run per invocation.

Learned from the writer (TensorRT samples/common/sampleReporting.cpp, `printPerformanceReport` and
`printProlog`): a run opens with `&&&& RUNNING TensorRT.trtexec [TensorRT vNNNN] # trtexec <flags>` and, when it
timed inference, ends with `=== Performance summary ===`:

    Throughput: 18392 qps
    Latency: min = 0.033 ms, max = 0.88 ms, mean = 0.043 ms, median = 0.039 ms, percentile(90%) = 0.048 ms, ...
    GPU Compute Time: min = ..., mean = ..., median = ..., percentile(99%) = ...
    Total Host Walltime: 3.00005 s

(TensorRT 7 and 8.0 wrote `Host Latency` and `GPU Compute` lines with `min: X ms, ..., percentile: X ms at 99%`.)
`Latency` is H2D + GPU compute + D2H of one query, stored as the run's latency; GPU Compute Time goes into the
notes. A query is one execution of the engine: with an input batch of N (`--shapes=x:Nx...`, `--batch=N`, the
input bindings' first dimension) samples/s = qps x N. Precision: `--fp16`, `--bf16`, `--int8`, `--fp8`, `--best`
(or the `Precision:` line) are what TensorRT was *allowed* to use per layer; INT8/FP8 are stored as the
quantization. The device is the `Selected Device:` line (TensorRT 8.4 and later); trtexec measures no power.

Summaries pasted into notes are read with or without the log prefixes: each `=== Performance summary ===` is one
run, with the context stated before it (a `=== Device Information ===` block at the top applies to every summary
after it, until another summary's context states its own). The Markdown headings above a summary give what the
pasted lines lost: `Batch Size 4` / `BatchSize 4` / `bs=4` the batch (a batch heading without a size states none),
`Precision: FP32+FP16+INT8` or `FP16` the precision as trtexec's own Precision line, a heading that begins with a
model's name (`YOLOv9-C QAT (Mish)`) the model; the headings as written, but the batch, are the run's tag. A
heading of the same depth ends its sibling's scope only when it states the same label or starts a new section, so
`## Precision: FP16` holds for the `## Batch Size N` headings after it.

`trtexec --exportTimes=FILE` writes the timing trace as JSON (`exportJSONTrace`): an array with one object per
inference, `startEnqMs, endEnqMs, startH2dMs, endH2dMs, startComputeMs, endComputeMs, startD2hMs, endD2hMs` (times
in ms on the host clock) and `h2dMs, computeMs, d2hMs, latencyMs` (latency = H2D + compute + D2H); TensorRT 8.0 to
8.4 added `endToEndMs`, TensorRT 7 wrote `startInMs, endInMs, startOutMs, endOutMs, inMs, outMs` instead.
`TrtexecTimesImporter` reads it as one inference run with what the log's summary computes from the same trace:
latency mean, median and percentiles by trtexec's own rules (the median of the sorted values; percentile p the
value at n - 1 - floor((1 - p/100) n), in C float arithmetic), GPU compute time (notes), and Throughput = queries /
(last endD2hMs - first startH2dMs), the window trtexec divides by. Since TensorRT 8.5 the warm-up queries are left
out of the file; an older trace (with `endToEndMs`) may hold them, which a warning says. The trace names no device,
model, precision or batch: they come from --device, --precision and --batch-size, or are left not stated.
"""

from __future__ import annotations

import json
import math
import re
import struct
from dataclasses import dataclass
from typing import Any

from importers.base import MS_PER_S, Conversion, Importer, Source, check_run_count, clean_str, num, positive
from importers.text_lines import KNOWN_MODEL, MODEL_SIZE
from joulebench.resultfile import MAX_RUNS_PER_FILE

_RUNNING = re.compile(r"&&&& RUNNING TensorRT\.trtexec(?: \[TensorRT v(\d+)\])?[^#\n]*#?\s*(?P<cmd>[^\n]*)")
_ENDED = re.compile(r"&&&& (PASSED|FAILED|WAIVED) TensorRT\.trtexec")
_PREFIX = re.compile(r"^(?:\[[^\]\n]{0,40}\]\s*){0,4}")  # '[07/02/2026-03:47:08] [I] ' and '[INFO] ' prefixes
_STAT_LINE = re.compile(r"^(Latency|Host Latency|GPU Compute Time|GPU Compute|Enqueue Time|H2D Latency|D2H Latency)"
                        r":\s*(.{1,600})$")
_STAT_EQ = re.compile(r"(min|max|mean|median|percentile\((\d{1,2}(?:\.\d+)?)%\))\s*=\s*([-+0-9.eE]{1,30})\s*ms")
_STAT_OLD = re.compile(r"(min|max|mean|median):\s*([-+0-9.eE]{1,30})\s*ms")
_PCT_OLD = re.compile(r"percentile:\s*([-+0-9.eE]{1,30})\s*ms at (\d{1,2}(?:\.\d+)?)%")
_THROUGHPUT = re.compile(r"^Throughput:\s*([-+0-9.eE]{1,30})\s*qps", re.IGNORECASE)
_WALLTIME = re.compile(r"^(?:Total Host Walltime|walltime):\s*([-+0-9.eE]{1,30})\s*s\b")
_SECTIONS = {"Host Latency": "Host Latency", "Host latency": "Host Latency", "GPU Compute": "GPU Compute",
             "Enqueue Time": "Enqueue Time"}
_STAT_OLD_LINE = re.compile(r"^(?:min|max|mean|median|percentile):\s*[-+0-9.eE]{1,30}\s*ms\b.{0,200}$")
_TRACE = re.compile(r"^Timing trace has (\d{1,15}) queries over ([-+0-9.eE]{1,30}) s")
_DEVICE = re.compile(r"^Selected Device:\s*(.{1,200})$")
_MEMORY = re.compile(r"^Device Global Memory:\s*(\d{1,9})\s*MiB")
_PRECISION = re.compile(r"^Precision:\s*([A-Za-z0-9+ ]{1,60})$")
_VERSION = re.compile(r"^TensorRT version:\s*([\d.]{1,20})")
_BINDING = re.compile(r"^Input binding for \S{1,200} with dimensions (\d{1,9})(?:x| and)")
_BATCH = re.compile(r"^Batch:\s*(\d{1,9})$")
_SHAPES = re.compile(r"--shapes=(\S{1,2000})")
_FLAG_BATCH = re.compile(r"--batch=(\d{1,9})")
_MODEL = re.compile(r"--(onnx|loadEngine|deploy|uff|model)=(\S{1,500})")
_PCTS = {"50": "p50", "90": "p90", "95": "p95", "99": "p99"}
_LEAD = r"^[ \t]{0,40}(?:\[[^\]\n]{0,40}\][ \t]*){0,4}"  # indentation and the '[date] [I] ' prefixes, if any
_SUMMARY_LINE = re.compile(_LEAD + r"=== Performance summary ===[ \t]*$", re.MULTILINE)
_QPS_LINE = re.compile(_LEAD + r"Throughput:[ \t]*[-+0-9.eE]{1,30}[ \t]*qps", re.MULTILINE)
_LATENCY_LINE = re.compile(_LEAD + r"(?:Host )?Latency:[ \t]*min[ =:]", re.MULTILINE)
# the lines of a summary's body (TensorRT 7 to 10), its remarks ('* GPU compute time is unstable') and blank lines
_BODY = re.compile(r"(?:Throughput|Latency|Host Latency|GPU Compute Time|GPU Compute|Enqueue Time|H2D Latency|"
                   r"D2H Latency|Total Host Walltime|Total GPU Compute Time|Average on)\b|\*|$")
# what a summary's context states (the prolog of the invocation it ends): a new one after a summary is the next's
_CONTEXT = (_DEVICE, _MEMORY, _PRECISION, _VERSION, _BINDING, _BATCH, _TRACE)
_MD_HEADING = re.compile(r"^(#{1,6})[ \t]+(\S[^\n]{0,199}?)[ \t#]*$")
_HEAD_BATCH = re.compile(r"(?:batch(?:[ _-]?size)?|bs)[ \t]{0,5}[=:]?[ \t]{0,5}(\d{1,6})", re.IGNORECASE)
_HEAD_BATCH_WORD = re.compile(r"(?:batch(?:[ _-]?size)?|bs)\b", re.IGNORECASE)
_DTYPES = r"(?:fp32|tf32|fp16|bf16|int8|fp8|int4)"
_HEAD_PRECISION = re.compile(rf"(?:precision[ \t]{{0,5}}[:=]?[ \t]{{0,5}})?(?P<p>{_DTYPES}(?:[ \t]{{0,3}}\+[ \t]{{0,3}}"
                             rf"{_DTYPES}){{0,4}})(?:[ \t]{{1,5}}(?:precision|mode|engine))?", re.IGNORECASE)
NO_ENERGY = "trtexec measures no power or energy"


def _stats(text: str) -> dict[str, float]:
    """{'min': ms, 'mean': ms, 'p99': ms, ...} of one statistics line (either writer's form)."""
    out: dict[str, float] = {}
    for name, pct, value in _STAT_EQ.findall(text):
        key = _PCTS.get(pct, f"p{pct}") if pct else name
        if (v := num(value)) is not None:
            out[key] = v
    for name, value in _STAT_OLD.findall(text):
        if (v := num(value)) is not None:
            out.setdefault(name, v)
    for value, pct in _PCT_OLD.findall(text):
        if (v := num(value)) is not None:
            out.setdefault(_PCTS.get(pct, f"p{pct}"), v)
    return out


def _blocks(text: str) -> list[tuple[int, list[str]]]:
    """(first line number, lines) of each trtexec invocation; a capture without a RUNNING line is one block."""
    blocks: list[tuple[int, list[str]]] = []
    current: list[str] = []
    start = 1
    for n, line in enumerate(text.splitlines(), 1):
        if "&&&& RUNNING TensorRT.trtexec" in line and any("hroughput" in x or "Precision" in x for x in current):
            blocks.append((start, current))
            current, start = [], n
        current.append(line)
    if current:
        blocks.append((start, current))
    return blocks


@dataclass(frozen=True)
class Heading:
    """A Markdown heading above a pasted summary and the label it states: 'Batch Size 4' (batch), 'Precision:
    FP32+FP16+INT8' or 'FP16' (precision, as trtexec's Precision line), a heading that begins with a model's name
    ('YOLOv9-C QAT (Mish)', 'Llama-3-8B results': model), else other (kept in the tag)."""

    depth: int
    text: str
    kind: str  # batch | precision | model | other
    value: str | None = None

    @classmethod
    def of(cls, depth: int, text: str) -> Heading:
        if (m := _HEAD_BATCH.fullmatch(text)) is not None:
            return cls(depth, text, "batch", m.group(1))
        if _HEAD_BATCH_WORD.match(text):  # 'BatchSize Resilience': about the batch, no size stated
            return cls(depth, text, "batch")
        if (m := _HEAD_PRECISION.fullmatch(text)) is not None:
            return cls(depth, text, "precision", m.group("p"))
        first = re.split(r"[\s()\[\],;:]+", text, maxsplit=1)[0]
        if KNOWN_MODEL.fullmatch(first) or (MODEL_SIZE.search(first) and re.search(r"[A-Za-z]{2}", first)):
            return cls(depth, text, "model", text)
        return cls(depth, text, "other")

    def replaces(self, older: Heading) -> bool:
        """Whether this heading ends `older`'s scope: a deeper one always; one of the same depth when it states the
        same label, or a new model or other section; a batch heading beside a precision or model heading does not
        ('## Precision: FP16' then '## Batch Size 1', '## Batch Size 4': the precision holds for each batch)."""
        if older.depth != self.depth:
            return older.depth > self.depth
        return older.kind == self.kind or older.kind == "other" or self.kind in ("model", "other")


@dataclass(frozen=True)
class Headings:
    """The headings in force at a summary, outermost first."""

    stack: tuple[Heading, ...] = ()

    def _last(self, kind: str) -> Heading | None:
        return next((h for h in reversed(self.stack) if h.kind == kind), None)

    @property
    def batch(self) -> int | None:
        h = self._last("batch")
        return (int(h.value) or None) if h is not None and h.value is not None else None

    @property
    def precision(self) -> str | None:
        h = self._last("precision")
        return h.value if h is not None else None

    @property
    def model(self) -> str | None:
        h = self._last("model")
        return h.text if h is not None else None

    @property
    def tag(self) -> str | None:
        """The headings as written, but a batch size (a setting of its own)."""
        parts = [h.text for h in self.stack if h.kind != "batch" or h.value is None]
        return " > ".join(parts)[:200] if parts else None


def _headings(lines: list[str]) -> list[Headings]:
    """The Markdown headings in force at each line (one object shared until the next heading)."""
    out: list[Headings] = []
    current = Headings()
    for raw in lines:
        if raw[:1] == "#" and (m := _MD_HEADING.match(raw)) is not None:
            h = Heading.of(len(m.group(1)), m.group(2).strip())
            current = Headings((*(x for x in current.stack if not h.replaces(x)), h))
        out.append(current)
    return out


def _clean(raw: str) -> str:
    return _PREFIX.sub("", raw.strip(), count=1).strip()


def _summaries(lines: list[str]) -> list[tuple[int, list[str]]]:
    """(offset of its summary line, the lines to read) of each summary of a block. A block of one summary is read
    whole; a block of several (summaries pasted into notes one after another) gives each its own body, after the
    context stated before it: the first summary's prolog, until a context line after a summary starts the next's
    ('Selected Device' of another invocation)."""
    at = {i for i, raw in enumerate(lines) if _clean(raw) == "=== Performance summary ==="}
    if len(at) <= 1:
        return [(min(at, default=0), lines)]
    out: list[tuple[int, list[str]]] = []
    context: list[str] = []
    after_summary = False
    i = 0
    while i < len(lines):
        if i in at:
            j = i + 1
            while j < len(lines) and j not in at and _BODY.match(_clean(lines[j])):
                j += 1
            out.append((i, context + lines[i:j]))
            after_summary, i = True, j
            continue
        line = _clean(lines[i])
        if after_summary and any(p.match(line) for p in _CONTEXT):
            context, after_summary = [], False
        context.append(lines[i])
        i += 1
    return out


class TrtexecImporter(Importer):
    NAME = "trtexec"
    TOOL = "TensorRT trtexec"
    DESCRIPTION = "a TensorRT trtexec log (its '=== Performance summary ===': qps, latency and GPU compute time)"

    def sniff(self, source: Source) -> bool:
        head = source.head
        if "TensorRT.trtexec" in head or ("=== Model Options ===" in head and "=== Build Options ===" in head):
            return True
        if "[I]" not in head:  # a summary pasted without its log prefixes: the lines themselves, in the first 16 KB
            return all(p.search(head) is not None for p in (_SUMMARY_LINE, _QPS_LINE, _LATENCY_LINE))
        text = source.text or ""
        return "=== Performance summary ===" in text and bool(re.search(r"Throughput: [0-9.eE+-]{1,30} qps", text))

    def convert(self, conv: Conversion) -> dict[str, Any]:
        text = (conv.source.text or "").replace("\r", "")
        blocks = [b for b in _blocks(text) if any("hroughput:" in line or "=== Performance summary" in line
                                                  for line in b[1])]  # 'throughput: X qps': TensorRT 7's
        if not blocks:
            raise conv.fail("(whole file)", "a trtexec log without a '=== Performance summary ===' (an engine build "
                            "or --skipInference run): no timing to import; run trtexec without --skipInference")
        heads = _headings(text.splitlines())
        parts = [(start + offset, part, heads[start - 1 + offset]) for start, lines in blocks
                 for offset, part in _summaries(lines)]
        check_run_count(conv, len(parts), "the trtexec runs in it")
        return conv.document([self._run(conv, i, start, lines, headings)
                              for i, (start, lines, headings) in enumerate(parts)])

    def _run(self, conv: Conversion, index: int, start: int, lines: list[str], heads: Headings) -> dict[str, Any]:
        where = f"line {start}"
        command, version = "", None
        found: dict[str, Any] = {"stats": {}}
        status, error = "ok", None
        for raw in lines:
            if (m := _RUNNING.search(raw)) is not None:
                command = m.group("cmd")
                if m.group(1) and len(m.group(1)) >= 5:  # v101600 -> 10.16.0
                    v = m.group(1)
                    version = f"{int(v[:-4])}.{int(v[-4:-2])}.{int(v[-2:])}"
                continue
            if (m := _ENDED.search(raw)) is not None:
                if m.group(1) == "FAILED":
                    status, error = "failed", "trtexec ended with &&&& FAILED"
                continue
            line = _PREFIX.sub("", raw.strip(), count=1).strip()
            self._read_line(line, found)
        conv.tool_version = found.get("version") or version or conv.tool_version
        flags = re.findall(r"--[A-Za-z0-9]{1,40}", command)
        shapes = _SHAPES.search(command)
        batch = None
        if shapes:
            firsts = {dims.split("x", 1)[0] for part in shapes.group(1).split(",") if ":" in part
                      for dims in [part.rsplit(":", 1)[1]]}
            batch = int(firsts.pop()) if len(firsts) == 1 and next(iter(firsts)).isdigit() else None
        if batch is None and (m := _FLAG_BATCH.search(command)):
            batch = int(m.group(1))
        # an implicit batch ('--batch=N', the 'Batch: N' option line): trtexec's qps and its trace's queries already
        # count samples (sampleReporting.cpp: throughput = batch x timings / walltime; the prolog's queries x batch)
        implicit = shapes is None and batch is not None or batch is None and found.get("batch") is not None
        batch = batch or found.get("batch") or found.get("binding_batch") or heads.batch or conv.hints.batch_size
        precision, quantization = self._precision(flags, found.get("precision") or heads.precision)
        model_m = _MODEL.search(command)
        model_path = model_m.group(2) if model_m else found.get("model")
        workload = (re.sub(r"\.(onnx|trt|engine|plan|uff|prototxt)$", "", (model_path or "").rsplit("/", 1)[-1])
                    or heads.model)
        qps = positive(found.get("qps"))
        stats: dict[str, dict[str, float]] = found["stats"]
        host = stats.get("Latency") or stats.get("Host Latency") or {}
        gpu = stats.get("GPU Compute Time") or stats.get("GPU Compute") or {}
        metrics: dict[str, Any] = {"energy_missing_reason": NO_ENERGY}
        notes = [f"trtexec {command[:300]}" if command else "trtexec log"]
        if qps is not None and implicit and batch:
            metrics["iterations_per_s"] = qps / batch  # engine executions per second
            metrics["throughput_sps"] = qps
            metrics["throughput_derivation"] = (f"Throughput {qps:g} qps as printed: with the implicit batch {batch}, "
                                                "trtexec counts each query's samples (batch x executions / walltime)")
        elif qps is not None:
            metrics["iterations_per_s"] = qps  # queries (engine executions) per second
            if batch:
                metrics["throughput_sps"] = qps * batch
                metrics["throughput_derivation"] = f"Throughput {qps:g} qps x batch {batch} (samples a query)"
            else:
                notes.append(f"Throughput {qps:g} qps; the samples in a query are not stated (pass --batch-size), "
                             "so no samples/s is stored")
        for key, field in (("mean", "latency_avg_ms"), ("p50", "latency_p50_ms"), ("median", "latency_p50_ms"),
                           ("p90", "latency_p90_ms"), ("p95", "latency_p95_ms"), ("p99", "latency_p99_ms"),
                           ("max", "latency_max_ms")):
            if key in host and host[key] >= 0:
                metrics.setdefault(field, host[key])
        if gpu:
            notes.append("GPU Compute Time " + ", ".join(f"{k} {v:g} ms" for k, v in gpu.items()))
        metrics["duration_s"] = positive(found.get("walltime")) or positive(found.get("trace_s"))
        if (queries := found.get("queries")) is not None and batch:
            metrics["examples"] = int(queries) * (1 if implicit else batch)
        if "Latency" not in stats and "Host Latency" not in stats and qps is None:
            raise conv.fail(where, "the performance summary holds neither Throughput nor Latency")
        notes.append("precision flags are what TensorRT may use per layer, not one dtype for every layer")
        device = conv.device(clean_str(found.get("device")), None, memory_gb=found.get("memory_gb"),
                             where=f"({where}: the log names no device; TensorRT 8.4 and later print 'Selected "
                                   "Device')")
        return {
            "run_id": conv.run_id(index),
            "status": status,
            "error": error,
            "device": device,
            "config": {
                "workload": conv.hints.workload or (workload or "trtexec")[:200],
                "model": workload,
                "mode": "infer",
                "precision": conv.precision(precision),
                "quantization": quantization,
                "batch_size": batch,
                "engine": "tensorrt",
                "engine_version": conv.tool_version,
                "tag": heads.tag,
            },
            "metrics": {k: v for k, v in metrics.items() if v is not None},
            "flags": [],
            "notes": "; ".join(notes),
        }

    @staticmethod
    def _read_line(line: str, found: dict[str, Any]) -> None:
        if line in _SECTIONS:  # TensorRT 7: 'Host Latency' alone, then its 'min: X ms (end to end Y ms)' lines
            found["section"] = _SECTIONS[line]
        elif (m := _STAT_OLD_LINE.match(line)) is not None and found.get("section"):
            found["stats"].setdefault(found["section"], {}).update(
                {k: v for k, v in _stats(m.group(0)).items() if k not in found["stats"].get(found["section"], {})})
        elif (m := _STAT_LINE.match(line)) is not None:
            found["stats"].setdefault(m.group(1), _stats(m.group(2)))
        elif (m := _THROUGHPUT.match(line)) is not None:
            found["qps"] = num(m.group(1))
        elif (m := _WALLTIME.match(line)) is not None:
            found["walltime"] = num(m.group(1))
        elif (m := _TRACE.match(line)) is not None:
            found["queries"], found["trace_s"] = int(m.group(1)), num(m.group(2))
        elif (m := _DEVICE.match(line)) is not None:
            found.setdefault("device", m.group(1).strip())
        elif (m := _MEMORY.match(line)) is not None:
            found.setdefault("memory_gb", round(int(m.group(1)) * 1.048576 / 1e3, 1))
        elif (m := _PRECISION.match(line)) is not None:
            found.setdefault("precision", m.group(1))
        elif (m := _VERSION.match(line)) is not None:
            found.setdefault("version", m.group(1))
        elif (m := _BINDING.match(line)) is not None:
            found.setdefault("binding_batch", int(m.group(1)) or None)
        elif (m := _BATCH.match(line)) is not None:
            found.setdefault("batch", int(m.group(1)) or None)
        elif line.startswith(("Model: ", "Load engine: ")) and len(line.split(": ", 1)[1]) > 0:
            found.setdefault("model", line.split(": ", 1)[1].strip()[:500])

    @staticmethod
    def _precision(flags: list[str], stated: str | None) -> tuple[str | None, str | None]:
        """(precision, quantization) from the flags, else the 'Precision:' line (FP32+FP16+INT8)."""
        words = {f.lower() for f in flags}
        allowed = {w.strip().lower() for w in (stated or "").split("+") if w.strip()}
        if "--best" in words:
            allowed |= {"fp16", "int8"}
        for flag in ("fp16", "bf16", "int8", "fp8", "int4"):
            if f"--{flag}" in words:
                allowed.add(flag)
        quantization = next((q for q in ("fp8", "int8", "int4") if q in allowed), None)
        precision: str | None = next((p for p in ("fp16", "bf16") if p in allowed), None)
        if precision is None and "fp32" in allowed:
            precision = "fp32"  # the Precision line says FP32 alone (TensorRT may still use TF32 unless --noTF32)
        return precision, quantization


# --- trtexec --exportTimes: the timing trace as JSON --------------------------------------------------------------

_TIMES_KEYS = ('"latencyMs"', '"computeMs"', '"startComputeMs"')  # in every version of exportJSONTrace
_START_KEYS = ("startH2dMs", "startInMs")  # the first input copy of a query (TensorRT 8.0 and later; 7)
_END_KEYS = ("endD2hMs", "endOutMs")  # the last output copy
MAX_QUERIES = 50 * MAX_RUNS_PER_FILE  # a trace of 3 s at the smallest latencies is ~100,000 queries


def _f32(value: float) -> float:
    """`value` rounded to a C float, as trtexec computes its percentiles."""
    return float(struct.unpack("f", struct.pack("f", value))[0])


@dataclass(frozen=True)
class TraceStats:
    """One column of the trace summarised as trtexec prints it (ms)."""

    min_ms: float
    mean_ms: float
    p50_ms: float
    p90_ms: float
    p95_ms: float
    p99_ms: float
    max_ms: float

    @classmethod
    def of(cls, values: list[float]) -> TraceStats:
        """trtexec's rules (sampleReporting.cpp findMedian, findPercentile) over the sorted values."""
        v = sorted(values)
        n = len(v)

        def pct(p: float) -> float:  # (1 - p/100) * n in C++ float arithmetic: 90 of 100 values excludes 10, not 9
            exclude = int(_f32(_f32(1 - _f32(_f32(p) / 100)) * _f32(n)))
            return v[max(n - 1 - exclude, 0)]

        median = v[n // 2] if n % 2 else (v[n // 2 - 1] + v[n // 2]) / 2
        return cls(v[0], math.fsum(v) / n, median, pct(90), pct(95), pct(99), v[-1])

    def words(self) -> str:
        return (f"min {self.min_ms:g} ms, mean {self.mean_ms:g} ms, median {self.p50_ms:g} ms, p90 {self.p90_ms:g} ms, "
                f"p99 {self.p99_ms:g} ms, max {self.max_ms:g} ms")


@dataclass(frozen=True)
class Query:
    """One record of the trace: its window on the host clock and its times (ms)."""

    start_ms: float
    end_ms: float
    latency_ms: float
    compute_ms: float


def _arrays(text: str, limit: int = MAX_RUNS_PER_FILE) -> list[Any]:
    """The JSON documents of a text written one after another ('[...]\n[...]', as `cat a.json b.json` makes);
    [] where any part is not JSON."""
    decoder, at = json.JSONDecoder(), 0
    out: list[Any] = []
    while at < len(text) and len(out) <= limit:
        while at < len(text) and text[at].isspace():
            at += 1
        if at >= len(text):
            break
        try:
            doc, at = decoder.raw_decode(text, at)
        except ValueError:
            return []
        out.append(doc)
    return out


class TrtexecTimesImporter(Importer):
    NAME = "trtexec-times"
    TOOL = "TensorRT trtexec"
    DESCRIPTION = ("a trtexec --exportTimes JSON (one record per inference: startH2dMs .. endD2hMs, computeMs, "
                   "latencyMs), read as one inference run")

    def sniff(self, source: Source) -> bool:
        head = source.head.lstrip()
        return head[:1] == "[" and all(key in head[:4096] for key in _TIMES_KEYS)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        traces = _arrays(conv.source.text or "") if conv.source.json is None else [conv.source.json]
        if not traces or not all(isinstance(doc, list) and doc for doc in traces):
            raise conv.fail("(whole file)", "not a JSON array of trtexec timing records")
        check_run_count(conv, len(traces), "its traces")
        if len(traces) > 1:  # 'cat times_*.json >> all.json': one run each, kept apart in the tag (the batch of each
            conv.warn(f"{len(traces)} JSON arrays one after another (traces of {len(traces)} trtexec runs appended "
                      "to one file): read as a run each, told apart by their order in the tag")
        runs = [self._trace(conv, i, doc, f"trace {i + 1} of {len(traces)}" if len(traces) > 1 else None)
                for i, doc in enumerate(traces)]
        return conv.document(runs)

    def _trace(self, conv: Conversion, index: int, doc: list[Any], tag: str | None) -> dict[str, Any]:
        """One trtexec --exportTimes array: one inference run."""
        if len(doc) > MAX_QUERIES:
            raise conv.fail("(whole file)", f"{len(doc):,} records; at most {MAX_QUERIES:,} are read: split the file")
        queries = [self._query(conv, i, record) for i, record in enumerate(doc)]
        if any("endToEndMs" in r for r in doc[:1] if isinstance(r, dict)):
            conv.warn("a trace of TensorRT before 8.5 (it has endToEndMs): it may hold the warm-up queries, which "
                      "trtexec leaves out of its own summary; all records were read")
        n = len(queries)
        start = min(q.start_ms for q in queries)
        end = max(q.end_ms for q in queries)
        window_s = (end - start) / MS_PER_S
        if window_s <= 0:
            raise conv.fail("(whole file)", f"the {n} queries span no time (first start {start:g} ms, last end "
                            f"{end:g} ms); no throughput can be computed")
        latency = TraceStats.of([q.latency_ms for q in queries])
        compute = TraceStats.of([q.compute_ms for q in queries])
        qps = n / window_s
        batch = conv.hints.batch_size
        formula = (f"Throughput {qps:g} qps = {n} queries / (last endD2hMs - first startH2dMs = {window_s:g} s), as "
                   "trtexec computes it")
        conv.warn(f"trtexec timing trace: {formula}")
        metrics: dict[str, Any] = {
            "energy_missing_reason": NO_ENERGY, "iterations_per_s": qps, "duration_s": window_s,
            "latency_avg_ms": latency.mean_ms, "latency_p50_ms": latency.p50_ms, "latency_p90_ms": latency.p90_ms,
            "latency_p95_ms": latency.p95_ms, "latency_p99_ms": latency.p99_ms, "latency_max_ms": latency.max_ms,
        }
        notes = [f"trtexec --exportTimes trace of {n} queries", formula,
                 f"Latency (H2D + GPU compute + D2H) {latency.words()}", f"GPU Compute Time {compute.words()}"]
        if batch:
            metrics["throughput_sps"] = qps * batch
            metrics["throughput_derivation"] = f"Throughput {qps:g} qps x batch {batch} (samples a query, given)"
            metrics["examples"] = n * batch
        else:
            notes.append("the samples in a query are not stated (pass --batch-size), so no samples/s is stored")
        device = conv.device(None, None, where="(the exported times name no device: trtexec prints it in its log, "
                                                "'Selected Device')")
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": device,
            "config": {"workload": conv.hints.workload or "trtexec", "model": None, "mode": "infer",
                       "precision": conv.precision(None), "batch_size": batch, "engine": "tensorrt", "tag": tag},
            "metrics": metrics,
            "flags": [],
            "notes": "; ".join(notes),
        }

    @staticmethod
    def _query(conv: Conversion, index: int, record: Any) -> Query:
        where = f"record {index + 1}"
        if not isinstance(record, dict):
            raise conv.fail(where, "not an object of timing fields")

        def field(keys: tuple[str, ...]) -> float:
            key = next((k for k in keys if k in record), keys[0])
            value = record.get(key)
            if isinstance(value, bool) or not isinstance(value, (int, float)) or not math.isfinite(value):
                raise conv.fail(f"{where}: {key}", f"{str(value)[:30]!r} is not a finite number of ms")
            if value < 0:
                raise conv.fail(f"{where}: {key}", f"{value:g} ms is negative; a time in the trace cannot be")
            return float(value)

        query = Query(field(_START_KEYS), field(_END_KEYS), field(("latencyMs",)), field(("computeMs",)))
        if query.end_ms < query.start_ms:
            raise conv.fail(where, f"ends ({query.end_ms:g} ms) before it starts ({query.start_ms:g} ms)")
        return query
