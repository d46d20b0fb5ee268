"""Console output pasted into notes, Markdown and logs: figures written `name: value unit` or `name=value unit`.

    # DGX4 (A100-80GB)
    ### Qwen2.5-3B-Instruct
    M1  Total energy:              183155.23 J (0.050876 kWh)
    D2  Throughput:                830.82 tokens/s

    === vLLM 0.20 Qwen3.8-27B AWQ-INT4 (compressed-tensors), ctx8192, cudagraphs ===
    N=1 | wall=22.4s | gen=200 | AGG=8.9 tok/s | per-stream~8.9

A run is a section (the lines under a heading: `# ...` to `###### ...`, or a `=== title ===` banner, while a
`--- title ---` line only titles a part of one run; a figure named again starts the section's next run) or a line
of several figures (cells split by `|`, `;`, `, ` or tabs), which takes its section's headings and labels. Each
figure's field and unit come from `importers.table_fields` (its name and the unit written after its value), its
value is converted by `joulebench.units` and checked against the result schema's ranges by the general table
reader's own row reader (`general_table.GeneralTableImporter._run`), so a text reads as the table of the same
figures would. Only a value with a unit is a figure (a bare number only where its name states a label, e.g.
`Batch size: 8`); a value marked approximate (`~`) or estimated (`(estimated)`) is left out and said so; of several
figures of one field the one named a total wins, the others are named in a warning. A run needs at least two
recognised figures: a log with one `time: 5 s` line is no result.

Labels are read strictly: a heading or a `GPU:`/`Device:` line gives the device only when its text is a GPU or
Jetson name (`base.device_from_path`'s names: `A100-80GB`, `NVIDIA GeForce RTX 3090`, `Jetson AGX Orin`); a heading
gives the model when it holds exactly one model name with a parameter count (`Qwen2.5-3B-Instruct`, `gpt-oss-20b`)
and is otherwise kept as the run's tag; `N` is read as the concurrency only where the line shows it (an aggregate
rate N times its per-stream rate). Labels stated in a section apply to the sections under it. Nothing else is
guessed: what the text does not state is left not stated. Work is linear in the text: one pass over its lines,
each line cut at MAX_LINE_CHARS and every pattern anchored and bounded.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count, device_from_path
from importers.general_table import _PRECISIONS, GeneralTableImporter, is_json
from importers.table_fields import LABELS, Field, FieldError, label_field, measure_field, plain, words_of
from joulebench import units
from joulebench.errors import ResultFileError
from joulebench.resultfile import MAX_RUNS_PER_FILE

MAX_LINE_CHARS = 1_000  # a console line of figures is far shorter; a longer line is not read
MAX_CELLS = 40
MAX_SECTION_FIGURES = 400  # as many as a table's columns (general_table.MAX_KEYS); more are not one run's
MIN_FIGURES = 2  # recognised figures a run needs
APPROX_TOLERANCE = 0.05  # N x per-stream rate within 5 % of the aggregate (each printed to 2-3 digits)
# the labels a text line may state ('Batch size: 8'); a line's other label-like names (type, run, server) are not read
_TEXT_LABELS = frozenset({"model", "device", "batch_size", "precision", "quantization", "max_concurrency"})
_SPLIT = re.compile(r"\s*\|\s*|;\s+|,\s+|\t+")
_LEAD = re.compile(r"^(?:\s{0,40}(?:[-*+•>]|\d{1,3}[.)])\s+|\s{0,40}\[[^\]\n]{0,40}\]\s*)+")  # '- ', '> ', '[INFO] '
_FIGURE = re.compile(r"(?P<name>[A-Za-z][\w .()/%'+-]{0,79}?)\s{0,80}(?P<sep>[:=~])\s{0,80}"
                     r"(?P<number>[-+]?(?:\d{1,15}(?:,\d{3}){0,5}(?:\.\d{1,15})?|\.\d{1,15})(?:[eE][-+]?\d{1,3})?)"
                     r"(?P<rest>[^\n]{0,200})")
_LABEL = re.compile(r"(?P<name>[A-Za-z][\w .()/-]{0,39}?)\s{0,80}[:=]\s{0,80}(?P<value>\S[^\n]{0,199})")
_APPROX = re.compile(r"estimat|approx", re.IGNORECASE)
_MODEL_SIZE = re.compile(r"(?:^|[-_:./])\d{1,4}(?:\.\d{1,3})?[BbMm](?:$|[-_:./])")  # -3B-, -20b, :8b, -1.1B
_DEVICE_PARTS = re.compile(r"\s+-\s+|[,;()\[\]]|\s+(?:on|@|with|using)\s+")
_PER_STREAM = re.compile(r"per[ _-]?(?:stream|user|client|request|seq)")
_RATES = ("tokens_per_s", "decode_tokens_per_s", "throughput_sps", "requests_per_s")
_GENERAL = GeneralTableImporter()


@dataclass(frozen=True)
class Figure:
    """A number with its name as the text writes them, and the field `table_fields` makes of it."""

    line: int
    name: str
    value: float
    unit: units.Unit | None  # as written after the value; None: a bare number
    approximate: bool  # '~', or a remark '(estimated)': never stored
    field: Field | None  # None: not a figure JouleBench stores (why says so)
    field_unit: units.Unit | None  # the unit the value is in for that field
    why: str = ""
    error: str | None = None  # the unit contradicts the name (W as J/token): the file is refused naming it

    @property
    def metric(self) -> bool:
        return self.field is not None and self.field.section == "metrics" and not self.approximate


@dataclass(frozen=True)
class Label:
    line: int
    key: str  # a table_fields label key: model, device, batch_size, ...
    name: str  # as written ('Batch size', or 'heading' for a heading's)
    value: str


@dataclass
class Level:
    """A heading and the labels stated under it (before a heading of its level or above)."""

    depth: int  # 1-6 for '#' headings, 7 for a '=== banner ===', 0 for the text before any heading
    line: int
    heading: str | None
    labels: dict[str, Label] = field(default_factory=dict)
    figures: list[Figure] = field(default_factory=list)  # the section's one-figure lines


@dataclass
class Candidate:
    """One run: a section's figures or a line's, with the labels in force there."""

    where: str
    figures: list[Figure]
    labels: dict[str, Label]
    heading: str | None


def _figure(line: int, cell: str) -> Figure | None:
    m = _FIGURE.fullmatch(cell)
    if m is None:
        return None
    name = " ".join(m.group("name").split())
    rest = m.group("rest").strip()
    cut = min((i for i in (rest.find("("), rest.find("[")) if i >= 0), default=len(rest))
    written, remark = rest[:cut].strip(), rest[cut:]
    if written and units.find_unit(written) is None:
        return None  # '3 layers', '5 of 8': not a quantity
    try:
        q = units.parse(f"{m.group('number')} {written}".strip())
    except units.UnitError:
        return None
    if q is None:
        return None
    approximate = m.group("sep") == "~" or bool(_APPROX.search(remark))
    in_name = units.header_unit(name)[1]
    if in_name is not None and q.unit is not None and in_name.symbol != q.unit.symbol:
        return Figure(line, name, q.value, q.unit, approximate, None, None, "two units, in its name and its value")
    try:
        found, unit, why = measure_field(name, q.unit)
    except FieldError as e:
        return Figure(line, name, q.value, q.unit, approximate, None, None, error=str(e))
    return Figure(line, name, q.value, q.unit, approximate, found, unit, why)


def _label(line: int, cell: str) -> Label | None:
    m = _LABEL.fullmatch(cell)
    if m is None:
        return None
    name = " ".join(m.group("name").split())
    found = label_field(name)
    if found is None or found.key not in _TEXT_LABELS:
        return None
    value = m.group("value").strip()[:200]
    if found.key == "device" and not device_from_path((value,)):
        return None  # 'Device: cuda', 'GPU: 0': not a GPU or Jetson named
    if found.key == "precision" and plain(value).strip() not in _PRECISIONS:
        return None  # 'Precision: 93.5%' is a score
    if found.key == "max_concurrency" and not words_of(name) & {"max", "maximum"}:
        return None  # SGLang's 'Concurrency: 21.04' is the mean in flight, measured: no setting
    return Label(line, found.key, name, value)


def _model_in(heading: str) -> str | None:
    """The one model name with a parameter count a heading holds ('Qwen2.5-3B-Instruct'); None for none or several."""
    names = {t for t in re.split(r"[\s,;()\[\]]+", heading) if _MODEL_SIZE.search(t) and re.search(r"[A-Za-z]{2}", t)}
    return names.pop() if len(names) == 1 else None


def _device_in(heading: str) -> str | None:
    """A GPU or Jetson the heading names: the whole heading, a part in brackets, or one split off by ' - ', ',', ' on '
    ('DGX4 (A100-80GB)' -> 'A100-80GB', 'D4 (NVIDIA RTX 6000 Ada - 48GB)' -> 'NVIDIA RTX 6000 Ada')."""
    for part in (heading, *_DEVICE_PARTS.split(heading)):
        if part.strip() and device_from_path((part.strip()[:100],)):
            return part.strip()
    return None


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


def _clean(line: str) -> str:
    return _LEAD.sub("", line.replace("**", "").replace("`", ""), count=1).strip()


def candidates(text: str) -> list[Candidate]:
    """Every section and line of figures with at least MIN_FIGURES recognised, in the text's order."""
    stack = [Level(0, 1, None)]
    found: list[Candidate] = []

    def labels() -> dict[str, Label]:
        out: dict[str, Label] = {}
        for level in stack:
            out.update(level.labels)
        return out

    def innermost() -> str | None:
        return next((lv.heading for lv in reversed(stack) if lv.heading), None)

    def close(level: Level) -> None:
        if _recognised(level.figures) >= MIN_FIGURES:
            first, last = level.figures[0].line, level.figures[-1].line
            found.append(Candidate(f"line {first}" if first == last else f"lines {first}-{last}", level.figures,
                                   labels(), innermost()))

    for n, raw in enumerate(text.splitlines(), 1):
        if len(raw) > MAX_LINE_CHARS or not raw.strip():
            continue
        head = _heading(raw)
        if head is not None:
            depth, title = head
            while len(stack) > 1 and stack[-1].depth >= depth:
                close(stack[-1])  # with its own labels in force
                stack.pop()
            close(stack[-1])
            stack[-1].figures = []
            stack.append(_level(n, depth, title[:200]))
            continue
        line = _clean(raw)
        figures: list[Figure] = []
        stated: dict[str, Label] = {}
        for cell in _SPLIT.split(line)[:MAX_CELLS]:
            if (label := _label(n, cell.strip())) is not None:
                stated.setdefault(label.key, label)
            elif (figure := _figure(n, cell.strip())) is not None:
                figures.append(figure)
        if _recognised(figures) >= MIN_FIGURES:
            found.append(Candidate(f"line {n}", figures, {**labels(), **stated}, innermost()))
        elif figures:
            section = stack[-1]
            if {f.name.lower() for f in figures} & {f.name.lower() for f in section.figures}:
                close(section)  # the same figure again: the next block of the section ('Throughput:' twice)
                section.figures = []
            if len(section.figures) < MAX_SECTION_FIGURES:
                section.figures.extend(figures)
        stack[-1].labels.update(stated)
        if len(found) > MAX_RUNS_PER_FILE:
            break  # refused by the caller, before any run is built
    while stack:
        close(stack[-1])
        stack.pop()
    found.sort(key=lambda c: c.figures[0].line)
    return found


def _recognised(figures: list[Figure]) -> int:
    return len({f.field.key for f in figures if f.metric and f.field is not None}) + sum(1 for f in figures if f.error)


class TextFiguresImporter(Importer):
    NAME = "text-figures"
    TOOL = "figures in text"
    DESCRIPTION = ("console output pasted into a text, Markdown or log file: 'name: value unit' or 'name=value unit' "
                   "figures, a run per section or per line of several figures")

    def sniff(self, source: Source) -> bool:
        head = source.head
        return bool(head) and not is_json(source) and bool(candidates(head))

    def convert(self, conv: Conversion) -> dict[str, Any]:
        found = candidates(conv.source.text or "")
        if not found:
            raise conv.fail("(whole file)", f"no section or line with {MIN_FIGURES} figures with units "
                            "('Total energy: 5 J', 'latency=35 ms')")
        check_run_count(conv, len(found), "its sections and lines of figures")
        said = _Said()
        runs = [self._run(conv, i, c, said) for i, c in enumerate(found)]
        said.warn(conv)
        return conv.document(runs)

    def _run(self, conv: Conversion, index: int, cand: Candidate, said: _Said) -> dict[str, Any]:
        header: list[str] = []
        row: list[str] = []
        columns: dict[int, tuple[Field, units.Unit | None]] = {}
        taken: dict[str, Figure] = {}
        metrics = [f for f in cand.figures if f.metric]
        totals = [f for f in metrics if "total" in words_of(f.name)]
        for f in cand.figures:
            if f.error:
                raise conv.fail(f"line {f.line}: {f.name[:80]}", f.error)
            if f.approximate:
                said.approximate.setdefault(f.name, None)
        for f in totals + [f for f in metrics if f not in totals]:
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
        run = _GENERAL._run(conv, index, cand.where, header, row, columns)
        config = run["config"]
        if not config.get("model") and not conv.hints.workload and config.get("tag"):
            config["workload"] = config["tag"]
        run["notes"] = f"figures in text, {cand.where}" + (f", under {cand.heading!r}" if cand.heading else "")
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


@dataclass
class _Said:
    """What the conversion says once for the whole file (not once per run)."""

    read: dict[str, None] = field(default_factory=dict)
    left: dict[tuple[str, str, str], None] = field(default_factory=dict)
    unread: dict[str, str] = field(default_factory=dict)
    approximate: dict[str, None] = field(default_factory=dict)
    concurrency: list[str] = field(default_factory=list)

    def warn(self, conv: Conversion) -> None:
        for message in self.read:
            conv.warn(message)
        for name, key, by in self.left:
            conv.warn(f"{name[:80]} left out: {key} is already given by {by[:80]}")
        if self.approximate:
            conv.warn("figures the text marks approximate or estimated, not read: " + _some(list(self.approximate)))
        if self.unread:
            conv.warn("figures not read: " + _some([f"{n[:40]} ({why})" for n, why in self.unread.items()]))
        if self.concurrency:
            conv.warn("N read as the concurrency where the line's aggregate rate is N x its per-stream rate "
                      f"(within {APPROX_TOLERANCE:.0%}): line " + _some(self.concurrency))


def _some(items: list[str], shown: int = 12) -> str:
    return "; ".join(items[:shown]) + (f" and {len(items) - shown} more" if len(items) > shown else "")
