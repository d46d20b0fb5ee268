"""carbontracker's reports (lfwa/carbontracker): its console output, also pasted into notes, and its
`*_carbontracker_output.log` files. One run per "Actual consumption" block; predicted blocks are left out.

Learned from its source (carbontracker/tracker.py `_output_actual`, `_output_pred`, `_output_energy`,
`_log_components_info`; loggerutil.py `convert_to_timestring`, `Logger.output`):

    CarbonTracker: The following components were found: GPU with device(s) NVIDIA A30. CPU with device(s) cpu:0.
    CarbonTracker:
    Actual consumption for 1 epoch(s):
            Time:   8:00:33
            Energy: 2.800010 kWh
            CO2eq:  299.601022 g
            This is equivalent to:
            2.786986 km travelled by car
    CarbonTracker:
    Predicted consumption for 5 epoch(s):
            Time:   40:02:47
            ...

`Logger.output` writes "CarbonTracker: " before each message, and a log file's formatter puts "<date> <time> - "
before that; an energy message begins with a line break, so the block's first line stands alone (some copies keep it
on the prefix's line: both are read). "Actual consumption for N epoch(s):" (or "Actual consumption:" where no
prediction was asked for) is what the epochs measured so far used: one training run (mode train), its duration from
the Time line, `h:mm:ss` with the hours counted past 24 (`111:11:54`; the first releases printed Python's timedelta,
`1 day, 2:03:04.5`: both read), its energy from kWh, its epochs and CO2eq in the notes. "Predicted consumption for N
epoch(s):" is carbontracker's forecast for the whole training from the epochs measured: never a measurement, left out
and said so; a file holding only forecasts is refused saying so.

The energy boundary. carbontracker sums the energy of the components it found (NVIDIA GPUs through NVML, Intel CPU
package and DRAM through RAPL, or a CPU modelled from a TDP table where RAPL is absent; Apple Silicon through
powermetrics) and then multiplies that sum by a data-centre PUE coefficient from a survey (`total_energy_per_epoch`:
1.58, 1.55 in 1.1.x releases; its log says so, its console does not). The figure is therefore neither a GPU board's,
a CPU package's nor the host's (`system`: what its parts drew) nor a meter's (`wall`): it is the host's parts scaled by
an assumed facility overhead, and which factor was applied depends on the release, which the console does not state,
so it cannot be divided back out. Of the boundaries the result schema allows, `estimated` is the honest one (method
`reported`: the tool's own total), and no average power is derived from it (energy / time would be the scaled figure,
no power any sensor saw), the reason stored in its place.

The device is read only where the text states it: carbontracker's components line (the GPU names NVML gave; one
model, counted), else a GPU or Jetson name (`device_text`'s names) in the line that introduces the block's
fenced code in Markdown or in a heading above it ("desktop18 NVIDIA A30 GPU" names an NVIDIA A30); never guessed. The
headings and that introducing line are the run's tag: each block is a training job of its own.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count, energy_metrics, num
from importers.device_text import device_from_path, device_named

MAX_LINE_CHARS = 1_000
_NUM = r"\d{1,12}(?:\.\d{1,12})?"
_LOG_PREFIX = re.compile(r"\d{4}-\d{2}-\d{2}[ T]\d{2}:\d{2}:\d{2}(?:[.,]\d{1,6})?\s{0,5}-\s{0,5}")
_TOOL_PREFIX = re.compile(r"CarbonTracker:\s{0,20}")
_HEADER = re.compile(r"(?P<kind>Actual|Predicted) consumption(?: for (?P<epochs>\d{1,9}) epoch\(s\))?:")
_TIME = re.compile(r"Time:\s{0,20}(?:(?P<days>\d{1,6}) days?, )?(?P<h>\d{1,9}):(?P<m>\d{2}):(?P<s>\d{2}(?:\.\d{1,6})?)")
_NEGATIVE_TIME = re.compile(r"Time:\s{0,20}-")
_ENERGY = re.compile(rf"Energy:\s{{0,20}}(?P<value>{_NUM})\s{{0,5}}(?P<unit>kWh)")
_CO2 = re.compile(rf"CO2eq:\s{{0,20}}(?P<value>{_NUM})\s{{0,5}}g")
_EQUIVALENT = re.compile(rf"This is equivalent to:|{_NUM} [^\n]{{1,80}}")  # '2.786986 km travelled by car'
_COMPONENTS = re.compile(r"The following components were found:(?P<list>[^\n]{1,900})")
_COMPONENT = re.compile(r"(?P<what>[A-Z]{3}) with device\(s\) (?P<devices>.+?)\.(?=\s+[A-Z]{3} with device\(s\)|\s*$)")
_HEADING = re.compile(r"(?P<hashes>#{1,6})\s+(?P<title>\S[^\n]{0,300}?)\s*#*")
_FENCE = re.compile(r" {0,3}(?:```|~~~)")
_GPU_VENDOR = re.compile(r"(?:NVIDIA|Tesla|Quadro|GeForce|TITAN|AMD|Radeon|Instinct)\b", re.IGNORECASE)
PUE_NOTE = ("carbontracker multiplies the energy of the components it measured by a data-centre PUE coefficient "
            "(1.58; 1.55 in its 1.1.x releases): the energy is stored as boundary 'estimated', and no average power is "
            "derived from it")


@dataclass
class Block:
    """One 'Actual' or 'Predicted consumption' block and what stood around it."""

    line: int
    actual: bool
    epochs: int | None
    headings: list[str]
    caption: str | None  # the Markdown line that introduces the block's fenced code
    gpus: list[str]  # the GPU names of carbontracker's components line before it
    time: str | None = None
    duration_s: float | None = None
    negative: bool = False
    energy: str | None = None  # '2.800010 kWh'
    co2_g: str | None = None


@dataclass
class _Scan:
    headings: list[tuple[int, str]] = field(default_factory=list)
    fenced: bool = False
    prose: str | None = None  # the last line of prose outside a fence, since the last heading or fence
    caption: str | None = None
    gpus: list[str] = field(default_factory=list)
    block: Block | None = None
    blocks: list[Block] = field(default_factory=list)

    def close(self) -> None:
        if self.block is not None:
            self.blocks.append(self.block)
            self.block = None

    def line(self, n: int, raw: str) -> None:
        text = raw.strip()
        if _FENCE.match(raw):
            self.close()
            self.fenced = not self.fenced
            self.caption, self.prose = (self.prose, None) if self.fenced else (None, None)
            self.gpus = []
            return
        head = _HEADING.fullmatch(text) if not self.fenced else None
        if head is not None:
            self.close()
            depth = len(head.group("hashes"))
            self.headings = [h for h in self.headings if h[0] < depth] + [(depth, head.group("title").strip())]
            self.prose = self.caption = None
            self.gpus = []
            return
        said = text
        if (m := _LOG_PREFIX.match(said)) is not None:
            said = said[m.end():]
        tool = _TOOL_PREFIX.match(said)
        if tool is not None:
            said = said[tool.end():]
        if (m := _HEADER.fullmatch(said)) is not None:
            self.close()
            self.block = Block(n, m.group("kind") == "Actual", int(m.group("epochs")) if m.group("epochs") else None,
                               [h for _, h in self.headings], self.caption, list(self.gpus))
            return
        if self.block is not None and self._figure(said):
            return
        self.close()
        if (m := _COMPONENTS.search(said)) is not None:
            self.gpus = gpu_names(m.group("list"))
        elif said and tool is None and not self.fenced:
            self.prose = text

    def _figure(self, said: str) -> bool:
        """Take a line of the open block; whether it was one."""
        block = self.block
        assert block is not None
        if (m := _TIME.fullmatch(said)) is not None:
            block.time = said.split(":", 1)[1].strip()
            block.duration_s = (int(m.group("days") or 0) * 86400 + int(m.group("h")) * 3600 + int(m.group("m")) * 60
                                + float(m.group("s")))
        elif _NEGATIVE_TIME.match(said):
            block.time, block.negative = said.split(":", 1)[1].strip(), True
        elif (m := _ENERGY.fullmatch(said)) is not None:
            block.energy = f"{m.group('value')} {m.group('unit')}"
        elif (m := _CO2.fullmatch(said)) is not None:
            block.co2_g = m.group("value")
        elif not _EQUIVALENT.fullmatch(said) and said:
            return False
        return True


def scan(text: str) -> list[Block]:
    """Every consumption block of a text, actual and predicted, in order."""
    state = _Scan()
    for n, raw in enumerate(text.splitlines(), 1):
        if len(raw) <= MAX_LINE_CHARS:
            state.line(n, raw)
        else:
            state.close()
    state.close()
    return [b for b in state.blocks if b.energy is not None or b.time is not None]


def gpu_names(listed: str) -> list[str]:
    """The GPU names of a components line ('GPU with device(s) NVIDIA A30, NVIDIA A30. CPU with ...'): the names NVML
    gave, one per GPU; Apple Silicon's 'GPU, ANE' name no part."""
    out: list[str] = []
    for m in _COMPONENT.finditer(listed.strip()):
        if m.group("what") == "GPU":
            out += [d.strip() for d in m.group("devices").split(", ")
                    if _GPU_VENDOR.match(d.strip()) or device_from_path((d.strip()[:100],))]
    return out[:64]


class CarbonTrackerImporter(Importer):
    NAME = "carbontracker"
    TOOL = "carbontracker"
    DESCRIPTION = ("carbontracker's console output or *_carbontracker_output.log: one training run per 'Actual "
                   "consumption' block (Time, Energy in kWh); predicted consumption is a forecast, never read")

    def sniff(self, source: Source) -> bool:
        text = source.text or ""
        if "consumption" not in text or "Energy:" not in text:
            return False
        return bool(scan(text))

    def convert(self, conv: Conversion) -> dict[str, Any]:
        blocks = scan(conv.source.text or "")
        actual = [b for b in blocks if b.actual]
        predicted = [b for b in blocks if not b.actual]
        if not actual:
            raise conv.fail("(whole file)", f"only carbontracker's predicted consumption ({len(predicted)} block(s), "
                            f"line {', '.join(str(b.line) for b in predicted[:8])}): a forecast for the whole training "
                            "from the epochs measured, not a measurement; no 'Actual consumption' block to import")
        check_run_count(conv, len(actual), "its 'Actual consumption' blocks")
        if predicted:
            conv.warn(f"{len(predicted)} 'Predicted consumption' block(s) (line "
                      f"{', '.join(str(b.line) for b in predicted[:12])}{' ...' if len(predicted) > 12 else ''}) are "
                      "carbontracker's forecast for the whole training, not a measurement: left out")
        conv.warn(PUE_NOTE)
        tags: dict[str, int] = {}
        runs = [self._run(conv, i, b, tags) for i, b in enumerate(actual)]
        return conv.document(runs)

    @staticmethod
    def _device(conv: Conversion, block: Block) -> tuple[dict[str, Any], int | None, str]:
        if block.gpus:
            names = sorted(set(block.gpus))
            if len(names) == 1:
                return conv.device(names[0], "gpu"), len(block.gpus), "carbontracker's components line"
            conv.warn(f"line {block.line}: carbontracker found GPUs of several models ({', '.join(names)[:200]}): "
                      "the run's device is not stated")
        stated = [("the line introducing its block", block.caption)]
        stated += [("a heading", h) for h in reversed(block.headings)]
        for where, text in stated:
            named = device_named(text) if text else None
            if text and named is not None:
                return conv.device(named, "gpu"), None, f"{where} ({text[:80]!r})"
        where = f"line {block.line}: (neither carbontracker's components line nor a heading names the GPU)"
        return conv.device(None, "gpu", where=where), None, ""

    def _run(self, conv: Conversion, index: int, block: Block, tags: dict[str, int]) -> dict[str, Any]:
        where = f"line {block.line}"
        device, gpu_count, device_from = self._device(conv, block)
        metrics: dict[str, Any] = {}
        if block.negative:
            conv.warn(f"{where}: a negative Time ({block.time}) is no duration; left out")
        elif block.duration_s is not None and block.duration_s > 0:
            metrics["duration_s"] = block.duration_s
        energy_j = num(block.energy, f"{where}: Energy", conv, unit="J") if block.energy else None
        if energy_j is not None:
            metrics.update(energy_metrics(energy_j, boundary=conv.boundary("estimated"), method="reported",
                                          what="Energy"))
            if "energy_j" in metrics:
                metrics["avg_power_missing_reason"] = ("carbontracker's energy is its components' energy times a PUE "
                                                       "coefficient: energy / time is no power a sensor saw")
        else:
            metrics["energy_missing_reason"] = "the block has no Energy line"
        caption = " ".join(block.caption.replace("`", " ").split()) if block.caption else None
        base = " > ".join([*block.headings, *([caption] if caption else [])])[:190] or "carbontracker"
        tags[base] = tags.get(base, 0) + 1
        tag = base if tags[base] == 1 else f"{base} #{tags[base]}"
        epochs = f"{block.epochs} epoch(s)" if block.epochs is not None else "the epochs monitored (not stated)"
        said = [f"carbontracker: actual consumption for {epochs}, {where}",
                f"Time {block.time}" if block.time else "no Time line",
                f"Energy {block.energy}" if block.energy else "no Energy line"]
        if block.co2_g is not None:
            said.append(f"CO2eq {block.co2_g} g")
        if device_from:
            said.append(f"device from {device_from}")
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": device,
            "config": {
                "workload": conv.hints.workload or "unknown",
                "mode": conv.mode("train"),  # carbontracker measures training epochs
                "precision": conv.precision(None),
                "batch_size": conv.hints.batch_size,
                "gpu_count": gpu_count,
                "tag": tag,
            },
            "metrics": metrics,
            "flags": [],
            "notes": "; ".join(said) + "; the energy includes carbontracker's PUE coefficient",
        }
