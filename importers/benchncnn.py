"""Tencent ncnn's `benchncnn` console output (Tencent/ncnn benchmark/benchncnn.cpp, src/gpu.cpp; real outputs in its
benchmark/README.md), as saved logs or pasted into Markdown pages between other shell output.

What the tool prints (benchncnn.cpp `main` and `benchmark`, 2018 to now): after the command line the user typed,
`./benchncnn [loop count] [num threads] [powersave] [gpu device] [cooling down] [(key=value)...]`, an ncnn built with
Vulkan lists its GPUs (gpu.cpp: `[0 NVIDIA GeForce RTX 3090]  queueC=2[8]  ...`, lines a device; older versions also
in CPU runs), then `loop_count = 4`, `num_threads = 4`, `powersave = 0`, `gpu_device = -1` (-1: the CPU; N: Vulkan
device N), `cooling_down = 1` (older versions print fewer of these), then a line a model,
`fprintf("%20s  min = %7.2f  max = %7.2f  avg = %7.2f")`: the fastest, slowest and mean wall time in milliseconds
(unit never written) of `loop_count` timed inferences of one input image (batch 1) after warm-up runs, with random
weights (only the .param graph is loaded). Each row is one run: latency_avg_ms = avg, latency_max_ms = max; the
minimum has no field and goes in the notes; no throughput is derived and the warm-up count (8 or 10 today, other
numbers before) is not stored. Models named `..._int8` / `...-int8` are quantised graphs of their own (quantization
int8); the precision is not stated, as ncnn's default options let fp32 graphs run in fp16 where the CPU or GPU can.
The settings go in config.tag (threads, powersave, gpu_device, cooling_down), so 1-thread and 4-thread runs are never
pooled; loop_count is measured_steps. The printed header wins over the command line (a block pasted without its
header takes the command line's numbers); a block with neither keeps its settings unstated, and a model repeated
without a header starts another invocation.

The device: for gpu_device = N the Vulkan line of device N (a software Vulkan device such as llvmpipe is a CPU; an
int8 row notes that ncnn runs layers without a Vulkan implementation on the CPU); `gpu_device = 0` without a Vulkan
line names no GPU (an ncnn built without Vulkan prints it and runs on the CPU); for those and for CPU runs only a
Markdown heading above the run that `device_text.device_named` knows as a board (a Jetson, a Raspberry Pi 4/5), never
a GPU's name; else not stated. Rows whose numbers are not as the tool prints them (`avg =   11.0`: a cut row), or
whose avg lies outside [min, max], are left out with a warning; a row glued to a code fence (`avg = 334.87```),
rows that lost their leading spaces and `...` elisions are read; blocks with identical rows stay separate
invocations, with a warning. Failure lines (`input 1 tensors while model has 2 inputs`, `Killed`) go in warnings.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count
from importers.device_text import device_named, kind_of_device

_ROW = re.compile(r"^[ \t]{0,80}(?P<name>[^\s=`]{1,200})[ \t]{1,80}min[ \t]?=[ \t]{0,20}(?P<min>[^\s`]{1,20})"
                  r"[ \t]{1,20}max[ \t]?=[ \t]{0,20}(?P<max>[^\s`]{1,20})"
                  r"[ \t]{1,20}avg[ \t]?=[ \t]{0,20}(?P<avg>[^\s`]{1,20})(?P<tail>[ \t`]{0,60})$")
_EXACT_ROW = re.compile(r"^ {0,19}\S{1,200}  min = {0,7}\d{1,9}\.\d\d  max = {0,7}\d{1,9}\.\d\d  avg = {0,7}"
                        r"\d{1,9}\.\d\d", re.MULTILINE)
_PARTIAL_ROW = re.compile(r"^[ \t]{0,80}[^\s=`]{1,200}[ \t]{1,80}min(?:[ \t]?=|[ \t]*$)")
_PRINTED = re.compile(r"\d{1,12}\.\d\d")  # %7.2f
_HEADER = re.compile(r"^[ \t]{0,80}(loop_count|num_threads|powersave|gpu_device|cooling_down)[ \t]?=[ \t]?(-?\d{1,9})"
                     r"[ \t]*$")
_COMMAND = re.compile(r"(?:^|[\s/\\>$#%])benchncnn(?:\.exe)?(?P<args>(?:[ \t]+(?:-?\d{1,9}|\$\([\w ]{1,20}\)|"
                      r"\w{1,20}=\S{0,300})){0,12})[ \t]*$")
_VULKAN = re.compile(r"^[ \t]{0,80}\[(\d{1,3}) ([^\]\n]{1,200})\][ \t]{1,10}[\w/-]{1,40}=")
_NO_VULKAN = re.compile(r"^[ \t]{0,80}no vulkan device", re.IGNORECASE)
_FAILED = re.compile(r"^[ \t]{0,80}(input \d{1,9} tensors while model has \d{1,9} inputs|unrecognized arg \S{0,200}|"
                     r"Killed|Segmentation fault[^\n]{0,100}|Aborted[^\n]{0,100}|Illegal instruction[^\n]{0,100}|"
                     r"Bus error[^\n]{0,100})[ \t]*$")
_ELIDED = re.compile(r"^[ \t]{0,80}(?:\.{3}|…)[ \t]*$")
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
_HEADING = re.compile(r"^ {0,3}(#{1,6})[ \t]+([^\n]{1,300}?)[ \t#]*$")
_INT8 = re.compile(r"(?:^|[_-])int8(?:$|[_-])", re.IGNORECASE)
_SOFTWARE_VULKAN = re.compile(r"llvmpipe|lavapipe|swiftshader", re.IGNORECASE)
_KEYS = ("loop_count", "num_threads", "powersave", "gpu_device", "cooling_down")
_NO_POWER = "benchncnn measures no power"
MAX_LINES = 200_000


@dataclass
class _Row:
    line: int
    name: str
    min_ms: float
    max_ms: float
    avg_ms: float


@dataclass
class _Invocation:
    line: int
    command: str = ""
    args: dict[str, int] = field(default_factory=dict)  # from the command line
    header: dict[str, int] = field(default_factory=dict)  # from the printed header lines
    devices: dict[int, str] = field(default_factory=dict)  # the Vulkan device lines, index -> name
    heading: str | None = None  # the Markdown heading above it, where it names a known board
    rows: list[_Row] = field(default_factory=list)
    notes: list[str] = field(default_factory=list)

    def setting(self, key: str) -> int | None:
        return self.header.get(key, self.args.get(key))


def _command_args(args: str) -> dict[str, int]:
    found: dict[str, int] = {}
    for key, token in zip(_KEYS, args.split(), strict=False):
        if re.fullmatch(r"-?\d{1,9}", token):
            found[key] = int(token)
    return found


class BenchncnnImporter(Importer):
    NAME = "benchncnn"
    TOOL = "ncnn benchncnn"
    DESCRIPTION = "Tencent ncnn's benchncnn output ('loop_count = 4' ... '<model>  min = x  max = y  avg = z' ms)"

    def sniff(self, source: Source) -> bool:
        head = source.head[:16_384]
        if re.search(r"^[ \t]{0,80}loop_count = \d{1,9}[ \t]*\r?\n[ \t]{0,80}num_threads = \d{1,9}", head,
                     re.MULTILINE):
            return True  # its printed header: a capture cut before its rows is refused with the reason
        if "benchncnn" not in head:
            return len(_EXACT_ROW.findall(head)) >= 3
        text = head if _EXACT_ROW.search(head) else (source.text or "")[:4_000_000]
        return any(_ROW.match(line) for line in text.splitlines()[:MAX_LINES] if "avg" in line)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        invocations = self._read(conv, conv.source.text or "")
        invocations = [inv for inv in invocations if inv.rows]
        if not invocations:
            raise conv.fail("(whole file)", "no benchncnn result row ('<model>  min = x  max = y  avg = z'): the "
                            "capture stops before the first model finished (with cooling_down = 1 each model waits "
                            "10 s first) or its rows are cut")
        check_run_count(conv, sum(len(inv.rows) for inv in invocations), "the benchncnn rows in it")
        seen: dict[tuple[tuple[str, float, float, float], ...], int] = {}
        for inv in invocations:
            key = tuple((r.name, r.min_ms, r.max_ms, r.avg_ms) for r in inv.rows)
            if key in seen:
                conv.warn(f"the runs from line {inv.line} repeat every row of those from line {seen[key]} "
                          "exactly (a copy-paste?): both kept as separate invocations")
            seen.setdefault(key, inv.line)
        runs = [self._run(conv, inv, row, f"{i}:{k}") for i, inv in enumerate(invocations)
                for k, row in enumerate(inv.rows)]
        return conv.document(runs)

    @staticmethod
    def _read(conv: Conversion, text: str) -> list[_Invocation]:
        markdown = conv.source.name.lower().endswith((".md", ".markdown")) or bool(
            re.search(r"^ {0,3}```", text[:4_000_000], re.MULTILINE))
        found: list[_Invocation] = []
        current: _Invocation | None = None
        pending: dict[int, str] = {}  # Vulkan lines seen outside an invocation, for the next one
        headings: dict[int, str] = {}
        in_fence = False

        def board() -> str | None:
            for level in sorted(headings, reverse=True):
                name = device_named(headings[level])
                if name and kind_of_device(name) != "gpu":
                    return name
            return None

        def start(n: int, command: bool = False) -> _Invocation:
            nonlocal pending  # Vulkan lines before a command line are another program's
            inv = _Invocation(n, devices={} if command else dict(pending), heading=board())
            pending = {}
            found.append(inv)
            return inv

        for n, raw in enumerate(text.splitlines()[:MAX_LINES], 1):
            line = raw.rstrip()
            if (m := _ROW.match(line)) is not None:
                name = m.group("name")
                if current is None or any(r.name == name for r in current.rows):
                    if current is not None:
                        conv.warn(f"line {n}: {name} again without a header: read as another invocation")
                    current = start(n)
                values = [m.group(k) for k in ("min", "max", "avg")]
                if m.group("tail").strip(" \t`") or not all(_PRINTED.fullmatch(v) for v in values):
                    conv.warn(f"line {n}: {name}: {' / '.join(values)} is not as benchncnn prints its figures "
                              "(two decimals): a cut or altered row, left out")
                    continue
                lo, hi, avg = (float(v) for v in values)
                if not lo - 0.01 <= avg <= hi + 0.01:
                    conv.warn(f"line {n}: {name}: avg {avg:g} ms lies outside min {lo:g} .. max {hi:g}: left out")
                elif avg <= 0:
                    conv.warn(f"line {n}: {name}: avg 0.00 ms is below what the tool prints: left out")
                else:
                    current.rows.append(_Row(n, name[:200], lo, hi, avg))
                continue
            if _FENCE.match(line):
                in_fence, pending = not in_fence, {}
                if current is not None and current.rows:
                    current = None
                continue
            if markdown and not in_fence and (h := _HEADING.match(line)) is not None and "benchncnn" not in line:
                level = len(h.group(1))
                headings = {k: v for k, v in headings.items() if k < level}
                headings[level] = h.group(2)
                current, pending = None, {}
                continue
            if (m := _COMMAND.search(line)) is not None:
                current = start(n, command=True)
                current.command = line.strip()[:300]
                current.args = _command_args(m.group("args"))
                continue
            if (m := _HEADER.match(line)) is not None:
                key, value = m.group(1), int(m.group(2))
                if current is None or current.rows or key in current.header:
                    current = start(n)
                current.header[key] = value
                continue
            if (m := _VULKAN.match(line)) is not None:
                index, name = int(m.group(1)), m.group(2).strip()
                if current is not None and not current.rows and not current.header:
                    current.devices.setdefault(index, name)
                else:
                    current = None
                    pending.setdefault(index, name)
                continue
            if current is None:
                continue
            if _NO_VULKAN.match(line):
                current.notes.append("the tool printed 'no vulkan device'")
            elif (m := _FAILED.match(line)) is not None:
                conv.warn(f"line {n}: benchncnn printed {m.group(1)!r}: a model after the rows above did not finish")
                current.notes.append(f"line {n}: {m.group(1)[:120]}")
            elif _ELIDED.match(line) and current.rows:
                current.notes.append(f"line {n}: the capture elides the rows after this one ('...')")
            elif _PARTIAL_ROW.match(line):
                conv.warn(f"line {n}: a cut benchncnn row ({line.strip()[:80]!r}): left out")
        return found

    @staticmethod
    def _run(conv: Conversion, inv: _Invocation, row: _Row, index: str) -> dict[str, Any]:
        where = f"line {row.line}"
        settings = {k: inv.setting(k) for k in _KEYS}
        for key in _KEYS:
            if key in inv.header and key in inv.args and inv.header[key] != inv.args[key]:
                conv.warn(f"line {inv.line}: the command line says {key} {inv.args[key]} but the tool printed "
                          f"{inv.header[key]}: the printed value taken")
        origin = "the printed header" if inv.header else "the command line" if inv.args else None
        notes = [f"benchncnn: {inv.command}" if inv.command else "benchncnn (no command line in the capture)"]
        known = ", ".join(f"{k} {v}" for k, v in settings.items() if v is not None)
        notes.append(f"settings ({origin}): {known}" if origin else "settings: not in the capture (a block pasted "
                     "without its header lines or command)")
        notes.append(f"min {row.min_ms:g} ms: the fastest of the timed inferences (no field for a minimum); "
                     "latencies are the wall time of one inference of one image after warm-up, random weights")
        notes.append("precision not stated: ncnn's default options run fp32 graphs in fp16 where the hardware "
                     "supports it")
        int8 = bool(_INT8.search(row.name))
        if int8:
            notes.append("an int8 (quantised) graph, as its name says")
        gpu = settings["gpu_device"]
        kind: str | None = "cpu"
        name: str | None = None
        if gpu is not None and gpu >= 0:
            kind = None
            name = inv.devices.get(gpu)
            if name is None:
                notes.append(f"gpu_device = {gpu} without a Vulkan device line for it: an ncnn built without Vulkan "
                             "prints the setting and runs on the CPU: no GPU named")
                name = inv.heading
            else:
                notes.append(f"on Vulkan device {gpu} ({name})")
                if int8:
                    notes.append("ncnn runs the layers that have no Vulkan implementation (the int8 ones, in most "
                                 "versions) on the CPU: this figure may be mostly the CPU's")
                if _SOFTWARE_VULKAN.search(name):
                    kind = "cpu"
                    notes.append("a software Vulkan device: it runs on the CPU")
        else:
            name = inv.heading
            if inv.devices:
                listed = ", ".join(f"[{i} {d}]" for i, d in sorted(inv.devices.items()))
                notes.append(f"Vulkan devices listed ({listed[:200]}) did not run it: "
                             f"{'gpu_device = -1' if gpu is not None else 'no gpu_device given'}, the CPU")
        if name is not None and name == inv.heading:
            kind = None  # a board's kind (a Jetson) from its name
            conv.warn(f"device {name!r} taken from the Markdown heading above line {inv.line}")
        notes.extend(inv.notes)
        tag = ", ".join(f"{v} thread{'' if v == 1 else 's'}" if k == "num_threads" else f"{k} {v}"
                        for k, v in settings.items() if v is not None and k != "loop_count")
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": conv.device(name, kind, where=f"({where}: benchncnn names no "
                                  f"{'CPU' if kind == 'cpu' else 'device'})"),
            "config": {
                "workload": conv.hints.workload or row.name,
                "model": row.name,
                "mode": "infer",
                "precision": conv.precision(None),
                "quantization": "int8" if int8 else None,
                "batch_size": 1,
                "engine": "ncnn",
                "measured_steps": settings["loop_count"],
                "tag": f"benchncnn {tag}"[:200] if tag else "benchncnn, settings not in the capture",
            },
            "metrics": {"latency_avg_ms": row.avg_ms, "latency_max_ms": row.max_ms,
                        "energy_missing_reason": _NO_POWER},
            "flags": [],
            "notes": "; ".join(notes),
        }
