"""The one pass over a text's lines that finds its runs of figures: its sections (headings, banners), the scopes of
an indented report, and lines of several figures, each with the labels in force there (`candidates`). The reader of
figures in text (`importers.text_figures`, whose docstring gives the rules) converts them into runs; the general
table reader asks it whether a text states runs of figures outside its tables (`importers.table_document`)."""

from __future__ import annotations

import re
from dataclasses import dataclass, field

from importers.device_text import device_from_path
from importers.go_bench import GoContext
from importers.go_bench import result as go_result
from importers.table_fields import PRECISIONS, plain, uncamel, words_of
from importers.table_labels import label_field
from importers.text_lines import (
    KNOWN_MODEL,
    MAX_CELLS,
    MIN_FIGURES,
    MODEL_SIZE,
    SPLIT,
    Figure,
    figure,
    key_values,
    keyed_run_line,
    llama_cpp,
    loose,
    mlx_lm,
    recognised,
    run_line,
    spaced_run_line,
)
from joulebench.resultfile import MAX_RUNS_PER_FILE

MAX_LINE_CHARS = 1_000  # a console line of figures is far shorter; a longer line is not read
MAX_SECTION_FIGURES = 400  # as many as a table's columns (general_table.MAX_KEYS); more are not one run's
# the labels a text line may state ('Batch size: 8'); a line's other label-like names (type, run, server) are not read
_TEXT_LABELS = frozenset({"model", "device", "batch_size", "precision", "quantization", "max_concurrency", "engine",
                          "request_rate_per_s"})
# a load level's number, with perf_analyzer's words after it ('Request Rate: 2.5 inference requests per seconds')
_LOAD_LEVEL = re.compile(r"(\d{1,6}(?:\.\d{1,6})?)(?:\s+[A-Za-z][A-Za-z /]{0,60})?")
_LEAD = re.compile(r"^(?:\s{0,40}(?:[-*+•>]|\d{1,3}[.)])\s+|\s{0,40}\[[^\]\n]{0,40}\]\s*)+")  # '- ', '> ', '[INFO] '
_LABEL = re.compile(r"(?P<name>[A-Za-z][\w .()/-]{0,39}?)\s{0,80}[:=]\s{0,80}(?P<value>\S[^\n]{0,199})")
_BATCH_HEADER = re.compile(r"(?:batch(?:[ _-]?size)?|bs)\s{0,5}[=:]?\s{0,5}(?P<n>\d{1,6})", re.IGNORECASE)
_INFO_WORDS = frozenset({"information", "info", "specs", "specifications", "spec", "hardware", "environment",
                         "properties"})
_VENDOR_PART = re.compile(r"(?:NVIDIA|AMD|Intel|Apple)\s{1,3}(?=[^\n]{0,60}\d)[A-Za-z][\w .+-]{0,60}")  # NVIDIA GB10
_NOT_A_PART = re.compile(r"\b(?:cuda|driver|version|corporation|toolkit|container|runtime|smi|sdk|library)\b",
                         re.IGNORECASE)  # 'NVIDIA CUDA 12.1', 'NVIDIA driver 535': software, not a device
_DEVICE_PARTS = re.compile(r"\s+-\s+|[,;()\[\]]|\s+(?:on|@|with|using)\s+")


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


_COUNTED = re.compile(r"(?:num_|n_|number_of_|cpu_|omp_|intra_op_)?(?:threads?|workers?|streams?|cores?|instances?|"
                      r"requests_in_flight)(?:_used|_count)?")  # 'CPU Threads used: 3'


def _count_setting(cell: str) -> str | None:
    """'threads = 3': a count of threads, workers or streams a run was set to ('threads 3'), for its tag."""
    m = _LABEL.fullmatch(cell)
    if m is None or not _COUNTED.fullmatch(plain(m.group("name")).strip().replace(" ", "_")):
        return None
    value = m.group("value").strip()
    return f"{m.group('name').strip()[:30]} {value}" if value.isdigit() and len(value) <= 6 else None


def _label(line: int, cell: str) -> Label | None:
    m = _LABEL.fullmatch(cell)
    if m is None:
        return None
    name = " ".join(m.group("name").split())
    found = label_field(name) if uncamel(name) == name else None  # a camelCase key in text: a dump's ('vulkaninfo:
    value = m.group("value").strip()[:200]
    if found is None and words_of(name) & _SETUP_WORDS and _SETUP_VALUE.fullmatch(value):  # 'Model Size: n'
        return Label(line, "tag", name, f"{name} {value}")
    if found is None or found.key not in _TEXT_LABELS:  # deviceName = ...' lists devices, names none run)
        return None
    if found.key == "device" and not (device_from_path((value,)) or (_VENDOR_PART.fullmatch(value)
                                                                    and not _NOT_A_PART.search(value))):
        return None  # 'Device: cuda', 'GPU: 0': not a GPU or Jetson named
    if found.key == "model" and not re.search(r"[A-Za-z]", value):
        return None  # 'ProcessCoord(pipe=0, data=0, model=0): 0': a rank, no model
    if found.key == "precision" and plain(value).strip() not in PRECISIONS:
        return None  # 'Precision: 93.5%' is a score
    if found.key == "max_concurrency" and not (words_of(name) & {"max", "maximum", "request"} or value.isdigit()):
        return None  # SGLang's 'Concurrency: 21.04' is the mean in flight, measured: no setting
    if found.key in ("max_concurrency", "request_rate_per_s"):  # perf_analyzer's 'Request Rate: 2.5 inference ...'
        if (level := _LOAD_LEVEL.fullmatch(value)) is None:
            return None
        value = level.group(1)
    return Label(line, found.key, name, value)


def by_prefix(figures: list[Figure]) -> dict[str, list[Figure]]:
    """A block's figures by setup where one figure is given for each of two or more setups named by a first word
    ('Original Inference Time', 'CoreML Inference Time': setups Original and CoreML); each setup's figures are those
    its word opens, and a figure given once goes with each. {} for any other block."""
    by_key: dict[str, list[Figure]] = {}
    for f in figures:
        if f.metric and f.field is not None:
            by_key.setdefault(f.field.key, []).append(f)
    split = next((fs for fs in by_key.values() if len(fs) >= 2), None)
    if split is None:
        return {}
    names = [f.name.split(maxsplit=1) for f in split]
    if any(len(n) != 2 for n in names) or len({n[1].lower() for n in names}) != 1 or len({n[0] for n in names}) != len(
            names):
        return {}
    out: dict[str, list[Figure]] = {n[0][:40]: [] for n in names}
    for f in figures:
        first = f.name.split(maxsplit=1)[0][:40] if f.name.strip() else ""
        if first in out and " " in f.name.strip():
            out[first].append(f)
        elif f.field is not None and len(by_key.get(f.field.key, [])) > 1:
            return {}  # a figure given twice that no setup's word opens: no clean split
        else:
            for own in out.values():
                own.append(f)  # given once: every setup's
    return out


def _model_in(heading: str) -> str | None:
    """The one model name with a parameter count a heading holds ('Qwen2.5-3B-Instruct'); None for none or several."""
    names = {t for t in re.split(r"[\s,;()\[\]]+", heading) if MODEL_SIZE.search(t) and re.search(r"[A-Za-z]{2}", t)}
    return names.pop() if len(names) == 1 else None


def _device_in(heading: str) -> str | None:
    """A GPU or Jetson the heading names: the whole heading, a part in brackets, or one split off by ' - ', ',', ' on '
    ('DGX4 (A100-80GB)' -> 'A100-80GB', 'D4 (NVIDIA RTX 6000 Ada - 48GB)' -> 'NVIDIA RTX 6000 Ada')."""
    for part in (heading, *_DEVICE_PARTS.split(heading)):
        part = part.strip()
        if len(part) <= 3 and part == part.lower():
            continue  # '(t4)' beside '(t1)' .. '(t3)' is a label; the GPU is written 'T4'
        if part and device_from_path((part[:100],)):
            return part
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
    if not scope.labels and _NUMBERED_SCOPE.fullmatch(title):  # 'Level 50:', 'Concurrency 8:': a setup's name
        scope.labels["tag"] = Label(line, "tag", "scope", title[:60])
    return scope


_NUMBERED_SCOPE = re.compile(r"[A-Za-z][A-Za-z _-]{0,30}?\s*[:=]?\s*\d{1,6}")


def _clean(line: str) -> str:
    return _LEAD.sub("", _SYMBOLS.sub("", line.replace("**", "").replace("`", ""), count=1), count=1).strip()


# pictographs opening a console's line ('⏱️  Average time: 137.4s', '🚀 Realtime factor'), with their variation
# selectors and joiners: no part of a figure's name
_SYMBOLS = re.compile("^\\s{0,40}(?:[\U0001F000-\U0001FAFF\u2190-\u2BFF\u2300-\u23FF\uFE0F\u200D]\\s*){1,6}")


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
            outer = out.get("tag")
            out.update(level.labels)
            if level.depth == 7 and outer is not None and outer.name == "heading" and "tag" in level.labels:
                # '=== Summary ===' in a code block under '### Llama 3.2 3B (on Intel CPU)': both name the run
                out["tag"] = Label(outer.line, "tag", "heading", f"{outer.value} > {level.labels['tag'].value}"[:200])
        return out

    def section_title(self) -> str | None:
        return next((lv.heading for lv in reversed(self.stack) if lv.heading), None)

    def titles(self, extra: tuple[Level, ...] = ()) -> str | None:
        parts = [t for t in (self.section_title(), *(lv.heading for lv in (*self.scopes, *extra))) if t]
        return " > ".join(parts)[:300] if parts else None

    def emit(self, level: Level, extra: tuple[Level, ...] = ()) -> None:
        figures = level.figures
        setups = by_prefix(figures)
        if setups:  # 'Original Inference Time: 0.0305 seconds' / 'CoreML Inference Time: 0.0112 seconds': two setups
            for prefix, own in setups.items():
                tag = Label(own[0].line, "tag", "prefix", prefix)
                labels = self.labels(extra)
                if "tag" in labels:
                    tag = Label(own[0].line, "tag", "prefix", f"{labels['tag'].value}, {prefix}"[:200])
                where = f"line {own[0].line}" if own[0].line == own[-1].line else f"lines {own[0].line}-{own[-1].line}"
                self.found.append(Candidate(where, own, {**labels, "tag": tag}, self.titles(extra)))
            level.ran = True
        elif recognised(figures) >= MIN_FIGURES:
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
            counts: list[str] = []
            for cell in key_values(text) or SPLIT.split(text)[:MAX_CELLS]:
                if (label := _label(n, cell.strip())) is not None:
                    stated.setdefault(label.key, label)
                elif (count := _count_setting(cell.strip())) is not None:
                    counts.append(count)
                elif (found := self.phased(n, cell.strip())) is not None:
                    figures.append(found)
            if counts:  # 'threads=3 ... fps=142.67', or 'CPU Threads used: 3' above them: the setup's
                stated.setdefault("tag", Label(n, "tag", "line", ", ".join(counts)[:200]))
            if recognised(figures) < MIN_FIGURES and (run := run_line(n, text) or spaced_run_line(n, text)
                                                      or keyed_run_line(n, text)):
                named, figures = run
            elif not figures and not stated:
                figures = loose(n, [c.strip() for c in SPLIT.split(text)[:MAX_CELLS]])
            scope = _scope(n, indent, text) if not figures and not stated else Level(8, n, None, indent=indent)
            if not figures and not stated and part is None:
                self.phase = ""  # prose: the part's figures have ended
        else:
            scope = Level(8, n, None, indent=indent)
        section = self.section_title()
        if named is not None and plain(named) in _OF_REPEATS and self.found and (self.found[-1].note or "").startswith(
                "repeat "):  # mlx_lm.benchmark's 'Averages:' after its trials: their summary, no run of its own
            figures = []
        elif named is not None and _REPEAT_NAME.fullmatch(named):  # 'run1', 'run2': repeats of one setup, no tag
            self.found.append(Candidate(f"line {n}", figures, {**self.labels(), **stated}, self.titles(),
                                        f"repeat {named[:20]}"))
        elif named is not None and not (section and plain(section).split("/")[-1].strip() == plain(named)):
            tag = Label(n, "tag", "line", named)  # a line naming its own run
            self.found.append(Candidate(f"line {n}", figures, {**self.labels(), **stated, "tag": tag}, self.titles()))
        elif named is None and not tool_line and recognised(figures) >= MIN_FIGURES:
            self.found.append(Candidate(f"line {n}", figures, {**self.labels(), **stated}, self.titles()))
        elif figures:
            self.add(owner, figures)  # one figure, or a line naming its section's run: the section's
        if owner.figures and any(k in owner.labels and plain(owner.labels[k].value) != plain(v.value)
                                 for k, v in stated.items()):  # another setup's line: the figures above are a run
            self.emit(owner)
            owner.figures = []
        for label in stated.values():
            self.state(owner, label)
        self.scopes.append(scope)

    def finish(self) -> None:
        while self.scopes:
            self.close_scope()
        while self.stack:
            self.emit(self.stack[-1])
            self.stack.pop()


# a line naming the setup of the figures under it ('Model Size: n', 'Variant: int8'): its tag
_SETUP_WORDS = {"size", "variant", "config", "configuration", "setup", "scenario", "case"}
_SETUP_VALUE = re.compile(r"[\w.+-]{1,30}")
_OF_REPEATS = {"averages", "average", "avg", "mean", "median", "summary", "total"}  # the repeats' own summary
_REPEAT_NAME = re.compile(r"(?i)(?:run|rep|repeat|trial|attempt|iter)[ _#-]?\d{1,4}")


def scan(text: str) -> _Scan:
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
    return scan(text).found


__all__ = ["MAX_LINE_CHARS", "Candidate", "Label", "Level", "candidates", "scan"]
