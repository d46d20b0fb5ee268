"""Console output pasted into notes, Markdown and logs: figures written `name: value unit` or `name=value unit`.

    # DGX4 (A100-80GB)
    ### Qwen2.5-3B-Instruct
    M1  Total energy:              183155.23 J (0.050876 kWh)
    D2  Throughput:                830.82 tokens/s

    === vLLM 0.20 Qwen3.8-27B AWQ-INT4 (compressed-tensors), ctx8192, cudagraphs ===
    N=1 | wall=22.4s | gen=200 | AGG=8.9 tok/s | per-stream~8.9

    PyTorch GPU Performance:
      resnet50:
        Batch 8:
          Throughput: 486.20 FPS
          Latency: 2.06 ms

A run is a section (the lines under a heading: `# ...` to `###### ...`, or a `=== title ===` banner, while a
`--- title ---` line only titles a part of one run; a figure named again starts the section's next run), a scope
of an indented report (the lines indented under a line, one run per scope holding figures), or a line of several
figures (cells split by `|`, `;`, `, ` or tabs), which takes its section's headings and labels. Headings nest in
the style the text uses first: in a text of `=== banners ===` (a console log) a `## ...` line is text, not a
heading (a model's generated answer writes them). Each figure's field and unit come from `importers.table_fields`
(its name and the unit written after its value), its value is converted by `joulebench.units` and checked against
the result schema's ranges by the general table reader's own row reader (`general_table.GeneralTableImporter.read_row`),
so a text reads as the table of the same figures would. Only a value with a unit is a figure (a bare number only
where its name states a label, e.g. `Batch size: 8`); a value marked approximate (`~`) or estimated
(`(estimated)`) is left out and said so; of several figures of one field the one named a total wins, the others
are named in a warning. A run needs at least two recognised figures: a log with one `time: 5 s` line is no result.

Indented reports: a line with lines indented under it opens a scope for them; its text, as a header (`resnet18:`,
`Batch 8:`), gives the model when it is a known model name or a name with a parameter count and the batch size
when it reads `Batch N` / `batch size N`. Labels stated inside a scope apply only inside it; a scope that makes no
run passes the labels it states once to the scope around it (a settings block), while a label it states with
several values (progress lines 'Batch size: 1', 'Batch size: 4', ...) applies nowhere. A block about the machine
(`GPU Information:`, `Hardware specs:`, `Environment:`) holds no run: its figures describe the hardware (a memory there
is the card's size, never memory used) and the device it names applies to the section.

`go test -bench` result lines (`importers.go_bench`: `BenchmarkInference-32  99  110913774 ns/op  270.5 tokens/s`)
are each a run of their own, ns/op the latency mean and a reported metric read by its unit, or, where the unit names
what it measures (Ollama's `gen_tok/s`, `ttft_ms`, `prompt_tokens`), as a column of that name; their tag is the path of
headings above them, the benchmark's name and the flags its `go test` command gave the benchmark, so the lines of one
benchmark under one heading are repeats of one configuration. The model is read only from an Ollama benchmark case's
name (`go_bench.GoContext.model`).

Lines of known tools (`importers.text_lines`): a line naming its run before its figures (`q4km-1: 22.0 tok/s, 47.83
W decode, 2.174 J/tok`) is that run, or its section's when it names the section's title; llama.cpp's timings give
decode and prompt tokens/s; mlx-lm's verbose lines (`Prompt: 7 tokens, 6.657 tokens-per-sec`, `Generation: 256
tokens, 7.932 tokens-per-sec`, then `Peak memory: 5.990 GB`) give prompt tokens and tokens/s, output tokens and
decode tokens/s and the device memory used, and, like llama.cpp's, are their block's figures, never a run each. A
token rate that is the section's decode rate printed again (equal to its printed digits) is that decode rate, and a
J/token equal to the power over the decode rate is the decode energy per token.

Labels are read strictly: a heading or a `GPU:`/`Device:` line gives the device only when its text is a GPU or
Jetson name (`base.device_from_path`'s names: `A100-80GB`, `NVIDIA GeForce RTX 3090`, `Jetson AGX Orin`) or a
vendor's name for a part (`NVIDIA GB10`: kept as written, the catalogue maps it or not); a heading gives the model
when it holds exactly one model name with a parameter count (`Qwen2.5-3B-Instruct`, `gpt-oss-20b`) and is
otherwise kept as the run's tag, never the workload (a banner such as `=== TENSORRT BENCHMARKS ===` names no model:
the workload is left unknown); `N` is read as the concurrency only where the line shows it (an aggregate rate N
times its per-stream rate); a `Backend:`/`Engine:` line names the engine (a setting: two backends' figures are never
pooled). A `--- Prefill ---` part title gives its phase to the figures under it that name none, until prose or a
heading ends the part. Labels stated in a section apply to the sections under it. Nothing else is guessed:
what the text does not state is left not stated. Work is linear in the text: one pass over its lines, each line
cut at MAX_LINE_CHARS and every pattern anchored and bounded.
"""

from __future__ import annotations

import dataclasses
import re
from dataclasses import dataclass, field
from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count, device_from_path
from importers.general_table import PRECISIONS, GeneralTableImporter, is_json
from importers.go_bench import GoContext
from importers.go_bench import result as go_result
from importers.table_fields import LABELS, Field, label_field, plain, words_of
from importers.text_lines import (
    KNOWN_MODEL,
    MAX_CELLS,
    MIN_FIGURES,
    MODEL_SIZE,
    SPLIT,
    Figure,
    figure,
    llama_cpp,
    loose,
    mlx_lm,
    recognised,
    run_line,
)
from joulebench import units
from joulebench.errors import ResultFileError
from joulebench.resultfile import MAX_RUNS_PER_FILE

__all__ = ["MAX_LINE_CHARS", "MIN_FIGURES", "Candidate", "Figure", "Label", "TextFiguresImporter", "candidates"]

MAX_LINE_CHARS = 1_000  # a console line of figures is far shorter; a longer line is not read
MAX_SECTION_FIGURES = 400  # as many as a table's columns (general_table.MAX_KEYS); more are not one run's
APPROX_TOLERANCE = 0.05  # N x per-stream rate within 5 % of the aggregate (each printed to 2-3 digits)
# the labels a text line may state ('Batch size: 8'); a line's other label-like names (type, run, server) are not read
_TEXT_LABELS = frozenset({"model", "device", "batch_size", "precision", "quantization", "max_concurrency", "engine"})
_LEAD = re.compile(r"^(?:\s{0,40}(?:[-*+•>]|\d{1,3}[.)])\s+|\s{0,40}\[[^\]\n]{0,40}\]\s*)+")  # '- ', '> ', '[INFO] '
_LABEL = re.compile(r"(?P<name>[A-Za-z][\w .()/-]{0,39}?)\s{0,80}[:=]\s{0,80}(?P<value>\S[^\n]{0,199})")
_BATCH_HEADER = re.compile(r"(?:batch(?:[ _-]?size)?|bs)\s{0,5}[=:]?\s{0,5}(?P<n>\d{1,6})", re.IGNORECASE)
_INFO_WORDS = frozenset({"information", "info", "specs", "specifications", "spec", "hardware", "environment",
                         "properties"})
_VENDOR_PART = re.compile(r"(?:NVIDIA|AMD|Intel|Apple)\s{1,3}(?=[^\n]{0,60}\d)[A-Za-z][\w .+-]{0,60}")  # NVIDIA GB10
_NOT_A_PART = re.compile(r"\b(?:cuda|driver|version|corporation|toolkit|container|runtime|smi|sdk|library)\b",
                         re.IGNORECASE)  # 'NVIDIA CUDA 12.1', 'NVIDIA driver 535': software, not a device
_DEVICE_PARTS = re.compile(r"\s+-\s+|[,;()\[\]]|\s+(?:on|@|with|using)\s+")
_PER_STREAM = re.compile(r"per[ _-]?(?:stream|user|client|request|seq)")
_RATES = ("tokens_per_s", "decode_tokens_per_s", "throughput_sps", "requests_per_s")
_GENERAL = GeneralTableImporter()


@dataclass(frozen=True)
class Label:
    line: int
    key: str  # a table_fields label key: model, device, batch_size, ...
    name: str  # as written ('Batch size', or 'heading' for a heading's)
    value: str


@dataclass
class Level:
    """A heading, or a line with lines indented under it (a scope), and the labels and figures stated in it."""

    depth: int  # 1-6 for '#' headings, 7 for a '=== banner ===', 0 for the text before any heading; 8: a scope
    line: int
    heading: str | None
    labels: dict[str, Label] = field(default_factory=dict)
    figures: list[Figure] = field(default_factory=list)  # the section's (scope's) one-figure lines
    indent: int = -1  # a scope's indentation (-1: a section)
    info: bool = False  # a block about the machine: no run
    stated: dict[str, Label] = field(default_factory=dict)  # labels its lines state (not its header's)
    conflicts: set[str] = field(default_factory=set)  # labels stated with several values in it
    ran: bool = False  # it made a run


@dataclass
class Candidate:
    """One run: a section's figures or a line's, with the labels in force there."""

    where: str
    figures: list[Figure]
    labels: dict[str, Label]
    heading: str | None
    note: str | None = None  # what the notes say besides where it is (a go test line's iterations and configuration)


def _label(line: int, cell: str) -> Label | None:
    m = _LABEL.fullmatch(cell)
    if m is None:
        return None
    name = " ".join(m.group("name").split())
    found = label_field(name)
    if found is None or found.key not in _TEXT_LABELS:
        return None
    value = m.group("value").strip()[:200]
    if found.key == "device" and not (device_from_path((value,)) or (_VENDOR_PART.fullmatch(value)
                                                                    and not _NOT_A_PART.search(value))):
        return None  # 'Device: cuda', 'GPU: 0': not a GPU or Jetson named
    if found.key == "precision" and plain(value).strip() not in PRECISIONS:
        return None  # 'Precision: 93.5%' is a score
    if found.key == "max_concurrency" and not words_of(name) & {"max", "maximum"}:
        return None  # SGLang's 'Concurrency: 21.04' is the mean in flight, measured: no setting
    return Label(line, found.key, name, value)


def _model_in(heading: str) -> str | None:
    """The one model name with a parameter count a heading holds ('Qwen2.5-3B-Instruct'); None for none or several."""
    names = {t for t in re.split(r"[\s,;()\[\]]+", heading) if MODEL_SIZE.search(t) and re.search(r"[A-Za-z]{2}", t)}
    return names.pop() if len(names) == 1 else None


def _device_in(heading: str) -> str | None:
    """A GPU or Jetson the heading names: the whole heading, a part in brackets, or one split off by ' - ', ',', ' on '
    ('DGX4 (A100-80GB)' -> 'A100-80GB', 'D4 (NVIDIA RTX 6000 Ada - 48GB)' -> 'NVIDIA RTX 6000 Ada')."""
    for part in (heading, *_DEVICE_PARTS.split(heading)):
        if part.strip() and device_from_path((part.strip()[:100],)):
            return part.strip()
    return None


_PART = re.compile(r"-{2,}\s{0,5}([^-\n]{1,60}?)\s{0,5}-{2,}")  # '--- Prefill ---': a part of a run, not a heading
_PHASE_WORDS = frozenset({"prefill", "prompt", "decode", "generation"})


def _heading(raw: str) -> tuple[int, str] | None:
    """(depth, text) of a Markdown heading or a '=== title ===' banner; a rule ('=====', '#####') is none."""
    text = raw.strip()
    hashes = len(text) - len(text.lstrip("#"))
    if 1 <= hashes <= 6 and text[hashes:hashes + 1] == " ":
        title = text[hashes:].strip().rstrip("#").strip()
        return (hashes, title) if title else None
    if text.startswith("==") and text.endswith("=="):  # '--- TTFT ---' titles a part of a block: no heading
        title = text.strip("=").strip()
        return (7, title) if title else None
    return None


def _level(line: int, depth: int, title: str) -> Level:
    """A heading's level with the labels its text states: the device it names, the model it names, else (or with
    them, beside other words) the heading as the run's tag. A heading naming only a device ('DGX4 (A100-80GB)') is
    the machine's, not a run's: no tag."""
    level = Level(depth, line, title)
    device, model = _device_in(title), _model_in(title)
    if device is not None:
        level.labels["device"] = Label(line, "device", "heading", device)
    if model is not None:
        level.labels["model"] = Label(line, "model", "heading", model)
    if device is not None and model is None:
        level.heading = None
    elif model != title:
        level.labels["tag"] = Label(line, "tag", "heading", title)
    return level


def _scope(line: int, indent: int, text: str) -> Level:
    """A line that may have lines indented under it: its header labels ('resnet18:' the model, 'Batch 8:' the batch
    size) and whether it opens a block about the machine ('GPU Information:')."""
    title = text[:-1].strip() if text.endswith(":") else text
    scope = Level(8, line, title[:200] or None, indent=indent)
    words = words_of(title)
    scope.info = 0 < len(words) <= 4 and bool(words & _INFO_WORDS)
    if (batch := _BATCH_HEADER.fullmatch(title)) is not None:
        scope.labels["batch_size"] = Label(line, "batch_size", title, batch.group("n"))
    elif (model := title if KNOWN_MODEL.fullmatch(title) else _model_in(title)) is not None:
        scope.labels["model"] = Label(line, "model", title, model)
    if (device := _device_in(title)) is not None and "model" not in scope.labels:
        scope.labels["device"] = Label(line, "device", title, device)
    return scope


def _clean(line: str) -> str:
    return _LEAD.sub("", line.replace("**", "").replace("`", ""), count=1).strip()


class _Scan:
    """One pass over a text's lines: its sections (headings), the scopes of its indented lines, and its runs."""

    def __init__(self) -> None:
        self.stack = [Level(0, 1, None)]
        self.scopes: list[Level] = []  # the lines the current line is indented under, outermost first
        self.found: list[Candidate] = []
        self.info: list[Figure] = []  # figures of blocks about the machine: no run's
        self.banners: bool | None = None  # whether the text's first heading is a '=== banner ===' (a log)
        self.go = GoContext()  # the go test command and configuration lines in force
        self.after_mlx = False  # the line before was mlx-lm's Generation line (its Peak memory line follows)
        self.phase = ""  # the phase a '--- Prefill ---' part title names, for the figures under it that name none

    def labels(self, extra: tuple[Level, ...] = ()) -> dict[str, Label]:
        out: dict[str, Label] = {}
        for level in (*self.stack, *self.scopes, *extra):
            out.update(level.labels)
        return out

    def section_title(self) -> str | None:
        return next((lv.heading for lv in reversed(self.stack) if lv.heading), None)

    def titles(self, extra: tuple[Level, ...] = ()) -> str | None:
        parts = [t for t in (self.section_title(), *(lv.heading for lv in (*self.scopes, *extra))) if t]
        return " > ".join(parts)[:300] if parts else None

    def emit(self, level: Level, extra: tuple[Level, ...] = ()) -> None:
        figures = level.figures
        if recognised(figures) >= MIN_FIGURES:
            first, last = figures[0].line, figures[-1].line
            self.found.append(Candidate(f"line {first}" if first == last else f"lines {first}-{last}", figures,
                                        self.labels(extra), self.titles(extra)))
            level.ran = True

    def owner(self) -> Level:
        return self.scopes[-1] if self.scopes else self.stack[-1]

    @staticmethod
    def state(level: Level, label: Label) -> None:
        old = level.stated.get(label.key)
        if old is not None and plain(old.value) != plain(label.value):
            level.conflicts.add(label.key)
        level.stated[label.key] = level.labels[label.key] = label

    def close_scope(self) -> None:
        """A scope ends: its figures are a run (none for a block about the machine); one that made no run passes
        the labels it stated once to the scope around it."""
        scope = self.scopes.pop()
        if scope.info:
            self.info.extend(f for f in scope.figures if f.unit is not None)
        else:
            self.emit(scope, (scope,))
        if scope.info or not scope.ran:
            parent = self.owner()
            for key, label in scope.stated.items():
                if key not in scope.conflicts:
                    self.state(parent, label)

    def phased(self, n: int, cell: str) -> Figure | None:
        """A figure, read as its part's phase where its own name names none ('Throughput: 10882.9 tok/s' under
        '--- Prefill ---' is the prompt's rate, never the output rate)."""
        found = figure(n, cell)
        if found is None or not self.phase or words_of(found.name) & _PHASE_WORDS:
            return found
        return figure(n, f"{self.phase} {cell}")

    def add(self, owner: Level, figures: list[Figure]) -> None:
        if {f.name.lower() for f in figures} & {f.name.lower() for f in owner.figures}:
            self.emit(owner)  # the same figure again: the next block of the section ('Throughput:' twice)
            owner.figures = []
        if len(owner.figures) < MAX_SECTION_FIGURES:
            owner.figures.extend(figures)

    def heading(self, n: int, depth: int, title: str) -> None:
        self.go.reset()
        self.phase = ""
        while self.scopes:
            self.close_scope()
        while len(self.stack) > 1 and self.stack[-1].depth >= depth:
            self.emit(self.stack[-1])  # with its own labels in force
            self.stack.pop()
        self.emit(self.stack[-1])
        self.stack[-1].figures = []
        self.stack.append(_level(n, depth, title[:200]))

    def line(self, n: int, raw: str) -> None:
        after_mlx, self.after_mlx = self.after_mlx, False
        head = _heading(raw)
        if head is not None:
            self.banners = head[0] == 7 if self.banners is None else self.banners
            if not self.banners or head[0] == 7:  # in a log of banners a '## ...' line is text (a model's answer)
                self.heading(n, *head)
                return
        expanded = raw.expandtabs(4)
        indent = len(expanded) - len(expanded.lstrip())
        while self.scopes and self.scopes[-1].indent >= indent:
            self.close_scope()
        owner = self.owner()
        go = None if self.go.see(raw) else go_result(n, raw)
        if go is not None:  # a go test -bench result: its own run, its repeats one configuration under its headings
            path = " > ".join(lv.heading for lv in self.stack if lv.heading) or None
            labels = {**self.labels(), "tag": Label(n, "tag", "go test", self.go.tag(path, go))}
            if (model := self.go.model(go)) is not None:  # Ollama's benchmark names its -m model in each case
                labels["model"] = Label(n, "model", "go test", model)
            self.found.append(Candidate(f"line {n}", go.figures, labels, self.titles(), self.go.note(go)))
            return
        text = _clean(raw)
        if (part := _PART.fullmatch(text)) is not None:  # '--- Decode ---': the phase of the figures under it
            self.phase = next((w for w in words_of(part.group(1)) if w in _PHASE_WORDS), "")
        figures = llama_cpp(n, raw)
        if figures is None and (figures := mlx_lm(n, text, after_mlx)) is not None:
            self.after_mlx = any(f.name.startswith("Generation") for f in figures)
        tool_line = figures is not None  # a known tool's line: its figures are its block's, never a run of their own
        stated: dict[str, Label] = {}
        named: str | None = None
        if figures is None:
            figures = []
            for cell in SPLIT.split(text)[:MAX_CELLS]:
                if (label := _label(n, cell.strip())) is not None:
                    stated.setdefault(label.key, label)
                elif (found := self.phased(n, cell.strip())) is not None:
                    figures.append(found)
            if recognised(figures) < MIN_FIGURES and (run := run_line(n, text)) is not None:
                named, figures = run
            elif not figures and not stated:
                figures = loose(n, [c.strip() for c in SPLIT.split(text)[:MAX_CELLS]])
            scope = _scope(n, indent, text) if not figures and not stated else Level(8, n, None, indent=indent)
            if not figures and not stated and part is None:
                self.phase = ""  # prose: the part's figures have ended
        else:
            scope = Level(8, n, None, indent=indent)
        section = self.section_title()
        if named is not None and not (section and plain(section).split("/")[-1].strip() == plain(named)):
            tag = Label(n, "tag", "line", named)  # a line naming its own run
            self.found.append(Candidate(f"line {n}", figures, {**self.labels(), **stated, "tag": tag}, self.titles()))
        elif named is None and not tool_line and recognised(figures) >= MIN_FIGURES:
            self.found.append(Candidate(f"line {n}", figures, {**self.labels(), **stated}, self.titles()))
        elif figures:
            self.add(owner, figures)  # one figure, or a line naming its section's run: the section's
        for label in stated.values():
            self.state(owner, label)
        self.scopes.append(scope)

    def finish(self) -> None:
        while self.scopes:
            self.close_scope()
        while self.stack:
            self.emit(self.stack[-1])
            self.stack.pop()


def _scan(text: str) -> _Scan:
    scan = _Scan()
    for n, raw in enumerate(text.splitlines(), 1):
        if len(raw) > MAX_LINE_CHARS or not raw.strip():
            continue
        scan.line(n, raw)
        if len(scan.found) > MAX_RUNS_PER_FILE:
            break  # refused by the caller, before any run is built
    scan.finish()
    scan.found.sort(key=lambda c: c.figures[0].line)
    return scan


def candidates(text: str) -> list[Candidate]:
    """Every section, scope and line of figures with at least MIN_FIGURES recognised, in the text's order."""
    return _scan(text).found


class TextFiguresImporter(Importer):
    NAME = "text-figures"
    TOOL = "figures in text"
    DESCRIPTION = ("console output pasted into a text, Markdown or log file: 'name: value unit' or 'name=value unit' "
                   "figures, a run per section, indented scope or line of several figures")

    def sniff(self, source: Source) -> bool:
        head = source.head
        return bool(head) and not is_json(source) and bool(candidates(head))

    def convert(self, conv: Conversion) -> dict[str, Any]:
        scan = _scan(conv.source.text or "")
        found = scan.found
        if not found:
            raise conv.fail("(whole file)", f"no section or line with {MIN_FIGURES} figures with units "
                            "('Total energy: 5 J', 'latency=35 ms')")
        check_run_count(conv, len(found), "its sections and lines of figures")
        said = _Said()
        runs = [self._run(conv, i, c, said) for i, c in enumerate(found)]
        said.warn(conv)
        if scan.info:
            conv.warn("figures of a block about the machine describe the hardware, not a run, and are not read: "
                      + _some([f"line {f.line}: {f.name[:40]}" + (" (the device's memory size, not memory used)"
                                                                  if f.unit is not None and f.unit.kind == "memory"
                                                                  else "") for f in scan.info]))
        return conv.document(runs)

    def _run(self, conv: Conversion, index: int, cand: Candidate, said: _Said) -> dict[str, Any]:
        header: list[str] = []
        row: list[str] = []
        columns: dict[int, tuple[Field, units.Unit | None]] = {}
        taken: dict[str, Figure] = {}
        metrics = [_output_rate(conv, f, cand.figures) if f.field and f.field.key == "tokens_per_s" else f
                   for f in cand.figures if f.metric]
        totals = [f for f in metrics if "total" in words_of(f.name)]
        for f in cand.figures:
            if f.error:
                raise conv.fail(f"line {f.line}: {f.name[:80]}", f.error)
            if f.approximate:
                said.approximate.setdefault(f.name, None)
        for f in _decode_printed_again(totals + [f for f in metrics if f not in totals], said):
            if f.field is None:
                continue
            key = f.field.key
            if key in taken:
                said.left.setdefault((f.name, key, taken[key].name), None)
                continue
            taken[key] = f
            header.append(f.name)
            row.append(repr(f.value))
            columns[len(header) - 1] = (f.field, f.field_unit)
            said.read.setdefault(f"{f.name[:80]} read as {key}" + (f" (in {f.field_unit.symbol})"
                                                                   if f.field_unit else ""), None)
        for f in cand.figures:
            if f.field is None and not f.approximate:
                said.unread.setdefault(f.name, f.why)
        labels = dict(cand.labels)
        concurrency = self._concurrency(cand.figures, said)
        if concurrency is not None:
            labels["max_concurrency"] = concurrency
        for key, label in labels.items():
            target = LABELS[key]
            if target.section == "config" and key != "tag":
                try:
                    _GENERAL._config_value(conv, f"line {label.line}: {label.name}", target.key, label.value)
                except ResultFileError as e:
                    conv.warn(f"{e.problems[0]}; left out")
                    continue
            header.append(key)
            row.append(label.value)
            columns[len(header) - 1] = (target, None)
        if "device" not in labels:
            conv.unstated.setdefault("device", "(the text names no GPU or Jetson JouleBench recognises)")
        conv.unstated.setdefault("mode", "(the text does not say whether it trained or inferred)")
        run = _GENERAL.read_row(conv, index, cand.where, header, row, columns)
        if run is None:  # every figure a rate of 0: nothing measured
            raise conv.fail(cand.where, "no figure in this run")
        run["notes"] = (f"figures in text, {cand.where}" + (f", under {cand.heading!r}" if cand.heading else "")
                        + (f"; {cand.note}" if cand.note else ""))
        return run

    @staticmethod
    def _concurrency(figures: list[Figure], said: _Said) -> Label | None:
        """N as the concurrency where the line shows it: its aggregate rate is N x its per-stream rate."""
        n = next((f for f in figures if f.name in ("N", "n") and f.unit is None and f.value.is_integer()
                  and f.value >= 1), None)
        per = next((f for f in figures if _PER_STREAM.search(plain(f.name))), None)
        total = next((f for f in figures if f.metric and f.field is not None and f.field.key in _RATES), None)
        if n is None or per is None or total is None or per.value <= 0:
            return None
        per_value = per.value
        if per.unit is not None and total.unit is not None:
            if per.unit.kind != total.unit.kind:
                return None
            per_value = per.unit.to(total.unit, per.value)
        if abs(total.value / per_value - n.value) > APPROX_TOLERANCE * n.value:
            return None
        said.concurrency.append(f"{n.line} ({total.value:g} = {int(n.value)} x {per_value:g})")
        return Label(n.line, "max_concurrency", n.name, str(int(n.value)))


def _output_rate(conv: Conversion, rate: Figure, figures: list[Figure]) -> Figure:
    """The output tokens/s: a stated token rate that is the total tokens (prompt and output) over the duration, where
    the text gives both counts, is replaced by the output tokens over the duration, and said."""
    def one(test: Any) -> Figure | None:
        found = [f for f in figures if test(f)]
        return found[0] if len(found) == 1 else None

    duration = one(lambda f: f.field is not None and f.field.key == "duration_s" and f.metric)
    output = one(lambda f: f.field is not None and f.field.key == "output_tokens" and f.metric)
    total = one(lambda f: f.field is None and words_of(f.name) == {"total", "tokens"})
    if duration is None or output is None or total is None or duration.value <= 0:
        return rate
    slack = 0.5 * 10 ** -(rate.decimals or 0) + rate.value * 1e-3  # its printed digits, and the others' rounding
    off_total, off_output = (abs(n.value / duration.value - rate.value) for n in (total, output))
    if off_total > slack or off_output <= slack:
        return rate
    value = output.value / duration.value
    conv.warn(f"{rate.name} {rate.value:g} tokens/s is {total.name} ({total.value:,.0f}) / {duration.name} "
              f"({duration.value:g} s): prompt and output tokens together; output tokens/s stored as {output.name} "
              f"({output.value:,.0f}) / {duration.name} = {value:.4g}")
    return dataclasses.replace(rate, value=value, field_unit=units.UNITS["tokens/s"], decimals=None)


def _decode_printed_again(ordered: list[Figure], said: _Said) -> list[Figure]:
    """A run's figures with the decode rate printed again read as it: a tokens/s equal, to its printed digits, to the
    decode rate the run states is that rate (not the whole request's tokens/s), and a J/token equal to the power
    over that rate (within their printed digits) is the decode energy per decoded token."""
    first: dict[str, Figure] = {}
    for f in ordered:
        if f.field is not None:
            first.setdefault(f.field.key, f)
    decode = first.get("decode_tokens_per_s")
    if decode is None or decode.base <= 0:
        return ordered
    out: list[Figure] = []
    for f in ordered:
        if f.field is not None and f.field.key == "tokens_per_s" and abs(f.base - decode.base) <= f.half_unit():
            said.decode.setdefault(f"{f.name[:40]} is {decode.name[:40]}", None)
            continue
        out.append(f)
    power = first.get("avg_power_w")
    if power is None or "decode_j_per_token" in first:
        return out
    for i, f in enumerate(out):
        if f.field is None or f.field.key != "j_per_token" or "tokens_per_s" in {g.field.key for g in out if g.field}:
            continue
        ratio = power.base / decode.base
        slack = f.half_unit() + ratio * (power.half_unit() / power.base + decode.half_unit() / decode.base)
        if abs(f.base - ratio) <= slack:
            out[i] = dataclasses.replace(f, field=Field("decode_j_per_token", "J/token"))
            said.decode.setdefault(f"{f.name[:40]} = {power.name[:40]} / {decode.name[:40]}: decode J/token", None)
    return out


@dataclass
class _Said:
    """What the conversion says once for the whole file (not once per run)."""

    read: dict[str, None] = field(default_factory=dict)
    left: dict[tuple[str, str, str], None] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)
    approximate: dict[str, None] = field(default_factory=dict)
    concurrency: list[str] = field(default_factory=list)
    decode: dict[str, None] = field(default_factory=dict)

    def warn(self, conv: Conversion) -> None:
        for message in self.read:
            conv.warn(message)
        for name, key, by in self.left:
            conv.warn(f"{name[:80]} left out: {key} is already given by {by[:80]}")
        if self.decode:
            conv.warn("the decode rate printed again, read as decoding: " + _some(list(self.decode), 4))
        if self.approximate:
            conv.warn("figures the text marks approximate or estimated, not read: " + _some(list(self.approximate)))
        if self.unread:
            conv.warn("figures not read: " + _some([f"{n[:40]} ({why})" for n, why in self.unread.items()]))
        if self.concurrency:
            conv.warn("N read as the concurrency where the line's aggregate rate is N x its per-stream rate "
                      f"(within {APPROX_TOLERANCE:.0%}): line " + _some(self.concurrency))


def _some(items: list[str], shown: int = 12) -> str:
    return "; ".join(items[:shown]) + (f" and {len(items) - shown} more" if len(items) > shown else "")
