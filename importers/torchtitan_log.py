"""torchtitan training logs: the line its metrics processor prints every `log_freq` steps, as saved from the console
or pasted into notes.

    step:  2  loss: 14.4458  grad_norm: 41.7880  memory:  8.44GiB(13.20%)  tps: 6,697  tflops: 62.15  mfu: 20.84%

Learned from the writer (torchtitan/components/metrics.py `MetricsProcessor.log`, trainer.py): `tps` is each
device's tokens per second, the tokens since the last log / (the time since it x the non-data-parallel degree), so
the run's rate is tps x the world size (every rank); older versions printed `wps` (words per second) the same way.
`memory` is the device's peak reserved memory in GiB, with its share of the device's capacity; `tflops` and `mfu`
are each device's model FLOPS and their share of the peak (no field holds them: they go in the notes). The device is
the `CUDA capacity: <name> with <n>GiB memory` line (`XPU`, `ROCM` ... alike), the model `Model <name> <flavor> size:
<n> total parameters` (or `Building <name> <flavor>`). torchtitan prints no world size of its own: it is read from a
launcher's line in the log (`world_size=24`, `WORLD_SIZE=8`, `NGPU=8`, `--nproc_per_node=8` with `--nnodes`, or
an older torchtitan's `Building 1-D device mesh with ['dp_shard'], [8]`); without one the run's rate is not known and
is not stored (said; `--gpu-count` is not guessed). The first logged step (compilation, warm-up) is left out; the rate
and the memory are over the others (the median tps, the largest memory). A step number that falls starts another run.
torchtitan measures no energy.
"""

from __future__ import annotations

import math
import re
import statistics
from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count
from importers.device_text import device_named, kind_of_device
from importers.text_lines import TERMINAL

NO_ENERGY = "torchtitan does not measure energy"
MB_PER_GIB = 1073.741824
MAX_LINES = 2_000_000
MIN_STEPS = 2  # the warm-up step and at least one more
_STEP = re.compile(
    r"\bstep:\s{0,8}(?P<step>\d{1,9})\s{1,8}loss:\s{0,8}(?P<loss>-?[\d.]{1,20}|nan|inf)\b.{0,120}?"
    r"\bmemory:\s{0,8}(?P<mem>[\d.]{1,12})\s{0,2}GiB\((?P<pct>[\d.]{1,8})%\)\s{1,8}"
    r"(?P<what>[tw]ps):\s{0,8}(?P<rate>[\d,]{1,20})"
    r"(?:\s{1,8}tflops:\s{0,8}(?P<tflops>[\d,.]{1,20}))?(?:\s{1,8}mfu:\s{0,8}(?P<mfu>[\d.]{1,10})%)?")
_CAPACITY = re.compile(r"\b(?:CUDA|XPU|ROCM|HIP|NPU|MPS|MTIA|GPU) capacity: (?P<name>[^\n]{2,120}?) with "
                       r"(?P<gib>[\d.]{1,10}) ?GiB memory")
_MODEL = re.compile(r"\bModel (?P<name>[\w.-]{1,60}) (?P<flavor>[\w.-]{1,40}) size: (?P<params>[\d,]{1,20}) total "
                    r"parameters|\bBuilding (?P<bname>[\w.-]{1,60}) (?P<bflavor>[\w.-]{1,40}) with\b")
_WORLD = (re.compile(r"(?i)\bworld[_ ]size\s{0,4}[=:]\s{0,4}(\d{1,6})\b"),
          re.compile(r"\bNGPUS?\s{0,4}[=:]\s{0,4}(\d{1,6})\b"))
_MESH = re.compile(r"Building \d-D device mesh with \[[^\]\n]{0,200}\], \[(?P<sizes>[\d, ]{1,60})\]")
_NPROC = re.compile(r"--nproc[_-]per[_-]node[= ](\d{1,4})\b")
_NNODES = re.compile(r"--nnodes[= ](\d{1,5})\b")
_CONTEXT = re.compile(r"\b(?:maximum context length|sequence length) (\d{1,7})\b")


def _is_log(source: Source) -> bool:
    head = TERMINAL.sub("", (source.text or "")[:400_000])
    return len(_STEP.findall(head)) >= MIN_STEPS


def _world_size(text: str) -> tuple[int | None, str]:
    """(the number of ranks, where it was read) from a launcher's or an older torchtitan's line; (None, why) when the
    log states none, or states several that disagree."""
    found: set[int] = set()
    said = ""
    for pattern in _WORLD:
        for m in pattern.finditer(text):
            found.add(int(m.group(1)))
            said = said or m.group(0).strip()
    if not found and (mesh := _MESH.search(text)) is not None:
        sizes = [int(s) for s in mesh.group("sizes").replace(" ", "").split(",") if s]
        found.add(math.prod(sizes))
        said = mesh.group(0)
    if not found and (nproc := _NPROC.search(text)) is not None:
        nodes = _NNODES.search(text)
        found.add(int(nproc.group(1)) * (int(nodes.group(1)) if nodes else 1))
        said = nproc.group(0) + (f" {nodes.group(0)}" if nodes else "")
    found.discard(0)
    if len(found) == 1:
        return found.pop(), said[:80]
    return None, ("the log states world sizes that disagree " + ", ".join(map(str, sorted(found)))) if found else (
        "the log states no world size (world_size=, WORLD_SIZE=, NGPU=, --nproc_per_node)")


class TorchtitanLogImporter(Importer):
    NAME = "torchtitan"
    TOOL = "torchtitan"
    DESCRIPTION = "torchtitan's training log ('step: N  loss: ...  memory: ...GiB(..%)  tps: N  tflops: ...  mfu: ..%')"

    def sniff(self, source: Source) -> bool:
        return not source.is_folder and _is_log(source)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        text = TERMINAL.sub("", "\n".join((conv.source.text or "").splitlines()[:MAX_LINES]))
        blocks: list[list[tuple[int, re.Match[str]]]] = []
        for n, line in enumerate(text.splitlines(), 1):
            if (m := _STEP.search(line[:2000])) is None:
                continue
            if not blocks or int(m.group("step")) <= int(blocks[-1][-1][1].group("step")):
                blocks.append([])  # a step number that does not rise: the log's next run
            blocks[-1].append((n, m))
        kept = [b for b in blocks if len(b) >= MIN_STEPS]
        if not kept:
            raise conv.fail("(whole file)", "torchtitan step lines, but no run logs two steps or more: the first "
                            "logged step is the warm-up, so a run needs another step to measure")
        check_run_count(conv, len(kept), "its runs (a step number that falls starts another)")
        world, world_said = _world_size(text)
        capacity, model = _CAPACITY.search(text), _MODEL.search(text)
        device = capacity.group("name").strip() if capacity else None
        if world is None:
            conv.warn(f"tps is each device's tokens/s and {world_said}: the run's rate (tps x the world size) is not "
                      "stored")
        name = (f"{model.group('name') or model.group('bname')} {model.group('flavor') or model.group('bflavor')}"
                if model else None)
        context = _CONTEXT.search(text)
        return conv.document([self._run(conv, i, steps, device, name, world, world_said,
                                        int(context.group(1)) if context else None) for i, steps in enumerate(kept)])

    @staticmethod
    def _run(conv: Conversion, index: int, steps: list[tuple[int, re.Match[str]]], device: str | None,
             model: str | None, world: int | None, world_said: str, context: int | None) -> dict[str, Any]:
        measured = [m for _, m in steps[1:]]  # the first logged step is the warm-up
        rate = statistics.median(float(m.group("rate").replace(",", "")) for m in measured)
        unit = "words" if measured[0].group("what") == "wps" else "tokens"
        memory = max(float(m.group("mem")) for m in measured)
        metrics: dict[str, Any] = {"energy_missing_reason": NO_ENERGY, "mem_used_device_mb": memory * MB_PER_GIB}
        notes = [f"torchtitan log, steps {steps[0][1].group('step')} to {steps[-1][1].group('step')} (lines "
                 f"{steps[0][0]}-{steps[-1][0]}); step {steps[0][1].group('step')} left out as the warm-up",
                 f"median {measured[0].group('what')} {rate:,.0f} {unit}/s of each device"]
        if world is not None:
            metrics["tokens_per_s"] = rate * world
            notes.append(f"the run's rate = {rate:,.0f} x the world size {world} ({world_said})")
        tflops = [float(m.group("tflops").replace(",", "")) for m in measured if m.group("tflops")]
        mfu = [float(m.group("mfu")) for m in measured if m.group("mfu")]
        if tflops:
            notes.append(f"median {statistics.median(tflops):.4g} TFLOP/s of each device"
                         + (f", MFU {statistics.median(mfu):.3g} %" if mfu else ""))
        notes.append(f"memory: the largest peak reserved of each device, {memory:g} GiB")
        named = device_named(device) if device else None
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": conv.device(named or device, kind_of_device(named or device) if device else "gpu",
                                  where="(whole file) (no 'CUDA capacity: <device> with ..GiB memory' line)"),
            "config": {"workload": conv.hints.workload or model or "unknown", "model": model, "mode": "train",
                       "precision": conv.precision(None), "batch_size": conv.hints.batch_size, "gpu_count": world,
                       "seq_len": context},
            "metrics": metrics,
            "notes": "; ".join(notes)[:2000],
        }
