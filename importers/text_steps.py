"""Training step logs in text: lines that each report one step of a run, read as that run.

    step 0, loss: 10.8263, time: 644.64 ms, tokens/sec: 1588.47
    step 1, loss: 10.5555, time: 101.84 ms, tokens/sec: 10054.87
    ...

A line of figures is a run of its own in `importers.text_scan`; a line that names its step ('step 12', 'iter 12',
'global_step=12') is one step of a training run. Consecutive step lines under one heading, with the same labels and
the same figures, whose step numbers rise, are one run: a step number that falls, or another line of figures between
them, starts the next. At least MIN_STEPS lines make a run; fewer stay lines of their own.

The run's figures (the convention of training logs, nanoGPT's and torchtitan's among them): the first step is left out
as the warm-up (compilation, caches; 45 s where the others take 0.1 s), then a mean latency is the mean over the
steps, a rate or a loss their median, and the run's duration the sum of the step times. A loss among the figures
says the run trained.
"""

from __future__ import annotations

import dataclasses
import re

from importers.table_steps import run_value
from importers.text_lines import Figure
from importers.text_scan import Candidate, Label

MIN_STEPS = 5
_STEP = re.compile(r"(?i)(?:^|[\s|,;:\[(/])(?:global[_ ]?)?(?:step|iter|iteration)\s*[:=#]?\s*(\d{1,9})\b")
_LINE = re.compile(r"line (\d+)")
_LOSS = re.compile(r"(?i)\bloss\b")


def _step_of(cand: Candidate, lines: list[str]) -> int | None:
    m = _LINE.fullmatch(cand.where)
    if m is None or not cand.figures:
        return None
    n = int(m.group(1))
    step = _STEP.search(lines[n - 1][:400]) if 0 < n <= len(lines) else None
    return int(step.group(1)) if step else None


def _shape(cand: Candidate) -> tuple[object, ...]:
    """What a step line reads: its heading, labels and the figures JouleBench stores (a loss or a learning rate,
    which it does not, may be missing from a line)."""
    return (cand.heading, tuple(sorted((k, v.value) for k, v in cand.labels.items())),
            tuple(f.name for f in cand.figures if f.field is not None))


_RUNNING = re.compile(r"(?i)avg|mean|average|running")


def _clocked(first: Candidate, measured: list[Candidate]) -> bool:
    """Whether the step lines carry a clock: a duration that rises at every step (`train_time:40.6s`, 42.7s, ...)."""
    for fig in first.figures:
        if fig.field is not None and fig.field.key == "duration_s":
            values = [next(f.value for f in c.figures if f.name == fig.name) for c in measured]
            if len(values) >= 3 and all(b > a for a, b in zip(values, values[1:], strict=False)):
                return True
    return False


def _merged(block: list[Candidate], steps: list[int]) -> Candidate:
    measured = block[1:]  # the first step is the warm-up
    figures: list[Figure] = []
    running = False
    for first in block[0].figures:
        if first.field is None:
            continue
        values = [next(f.value for f in c.figures if f.name == first.name) for c in measured]
        if first.field.key.endswith("_avg_ms") and _RUNNING.search(first.name) and _clocked(block[0], measured):
            running = True  # 'step_avg' beside a clock ('train_time' rising): the mean so far; the last is the run's
            figures.append(dataclasses.replace(first, value=values[-1], decimals=None))
            continue
        figures.append(dataclasses.replace(first, value=run_value(values, first.field.key), decimals=None))
    labels = dict(block[0].labels)
    labels.setdefault("tag", Label(block[0].figures[0].line, "tag", "steps", f"steps from {block[0].where}"))
    losses = [f for c in block for f in c.figures if _LOSS.search(f.name)]
    if losses and "mode" not in labels:
        labels["mode"] = Label(losses[0].line, "mode", losses[0].name, "train")
    lines = f"lines {block[0].where[5:]}-{block[-1].where[5:]}"
    note = (f"{len(block)} training steps ({steps[0]} to {steps[-1]}) read as one run: step {steps[0]} left out as "
            f"the warm-up, then mean latencies the mean over the other {len(measured)} steps, rates their median and "
            "the duration the sum of their step times" + (
                "; a running average written beside a clock (its mean so far) is the last step's" if running else ""))
    return Candidate(lines, figures, labels, block[0].heading, note)


def merged_steps(found: list[Candidate], text: str) -> tuple[list[Candidate], list[str]]:
    """The candidates with each block of step lines merged into one run, and what was merged, for a warning."""
    if len(found) < MIN_STEPS:
        return found, []
    lines = text.splitlines()
    out: list[Candidate] = []
    said: list[str] = []
    i = 0
    while i < len(found):
        step = _step_of(found[i], lines)
        j, steps = i + 1, [] if step is None else [step]
        while steps and j < len(found) and _shape(found[j]) == _shape(found[i]):
            nxt = _step_of(found[j], lines)
            if nxt is None or nxt <= steps[-1]:
                break
            steps.append(nxt)
            j += 1
        if len(steps) >= MIN_STEPS:
            merged = _merged(found[i:j], steps)
            out.append(merged)
            said.append(merged.where)
            i = j
        else:
            out.append(found[i])
            i += 1
    return out, said
