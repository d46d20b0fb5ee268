"""Tables of one run's steps or frames, for the general reader (`importers.general_table`): a row per training
iteration (`iter_idx, iter_time_ms, imgs_per_sec`) or per frame of a video (`frame, inference_ms`) is one sample of a
run, never a run of its own.

A counter column (`step`, `iter`, `iter_idx`, `iteration`, `global_step`, `frame`, `frame_idx`, `frame_num`, ...)
whose whole numbers rise down consecutive rows, with every label the reader reads the same along them, makes those
rows one run: at least MIN_STEPS of them. As in a training log's text (`importers.text_steps`), the first row is left
out as the warm-up (a cold first frame takes 60 times the others), then a mean latency is the mean over the other
rows, a rate their median and a duration their sum. A counter that falls starts the next run. Rows whose figures
are not plain numbers are left as they are.
"""

from __future__ import annotations

import re
import statistics

from importers.base import Conversion
from importers.table_fields import Field
from joulebench import units

MIN_STEPS = 5
_COUNTER = re.compile(r"(?:global_)?(?:step|steps|iter|iters|iteration|iter_idx|iter_id|iteration_idx|epoch|frame|"
                      r"frame_idx|frame_num|frame_no|frame_id|frame_number|frame_index|image_idx|img_idx|batch_idx|"
                      r"sample_idx|"
                      r"image_index|img_index|sample_index|image_no|image_num)")
_SUMMARY = {"avg", "average", "mean", "median", "total", "sum", "summary", "all"}
# an input file's name: audio, image, video or text the model was given
_INPUT_FILE = re.compile(r"(?i)[^,\n]{1,200}\.(?:wav|mp3|flac|ogg|m4a|opus|jpe?g|png|bmp|webp|tiff?|mp4|avi|mov|mkv|"
                         r"txt)")
Rows = list[tuple[int, list[str]]]
Columns = dict[int, tuple[Field, units.Unit | None]]


# a column naming each item of one run: a sample's, an example's, an image's or a clip's id
_ITEM_ID = re.compile(r"(?:sample|example|item|image|img|doc|document|utt|utterance|audio|clip|video|input)[_ ]?"
                      r"(?:id|name|key|uuid|file|filename|path)")
LENGTHS = ("prompt_tokens_requested", "output_tokens_requested")


_STAT = re.compile(r"(?<![a-z])(?:mean|avg|average|median|p\d{1,3}(?:\.\d+)?|std|stdev|min|max|percentile)(?![a-z])")


def summarised(header: list[str], columns: Columns) -> bool:
    """Whether a figure's column is named as a statistic (`tokens_per_second_mean`, `p99_ms`): each row then
    summarises a run's repeats or requests, never is one item or request of a run."""
    return any(_STAT.search(re.sub(r"[_.\s]+", " ", header[i].lower())) for i, (f, _) in columns.items()
               if f.section == "metrics")


def own_lengths(rows: Rows, columns: Columns) -> set[int]:
    """The columns of a request's or an item's own prompt or output length: values that do not repeat as a sweep's
    do (a sweep's 128, 512, 2048 each on many rows; a dataset's prompts each its own)."""
    return {i for i, (f, _) in columns.items() if f.key in LENGTHS
            and 3 * len({_cell(r, i) for _, r in rows}) > len(rows)}


def _counter(header: list[str], columns: Columns) -> int | None:
    return next((i for i, h in enumerate(header) if _COUNTER.fullmatch(h.strip().lower().replace(" ", "_"))
                 and (i not in columns or columns[i][0].key == "repeat")), None)


def _setups(rows: Rows, columns: Columns) -> list[Rows]:
    """The rows grouped by the labels a reader reads (an item's own length none), in order of first appearance."""
    own = own_lengths(rows, columns)
    labels = [i for i, (f, _) in columns.items() if f.section != "metrics" and i not in own]
    groups: dict[tuple[str, ...], Rows] = {}
    for n, row in rows:
        groups.setdefault(tuple(_cell(row, i) for i in labels), []).append((n, row))
    return list(groups.values())


def _items(header: list[str], rows: Rows, columns: Columns) -> int | None:
    """A column no field reads whose cells are each a different input file (`file`: clip_001.wav, img_02.jpg)
    within each setup: the rows are the items each setup's run processed (`model, image, wall_s`: 9 models run on
    the same 20 images are 9 runs of 20 items)."""
    groups = _setups(rows, columns)
    if any(len(g) < 2 for g in groups):
        return None
    for i in range(len(header)):
        if i in columns:
            continue
        cells = [_cell(r, i) for _, r in rows]
        named = _ITEM_ID.fullmatch(header[i].strip().lower().replace(" ", "_")) and all(cells)
        if (named or all(_INPUT_FILE.fullmatch(c) for c in cells)) and all(
                len({_cell(r, i) for _, r in g}) == len(g) for g in groups):
            return i
    return None


def _number(text: str) -> float | None:
    try:
        return units.value_in(text, None) if text.strip() else None
    except units.UnitError:
        return None


def one_figure_column(head: str) -> bool:
    """Whether a text is one column: a figure's name over at least MIN_STEPS plain numbers (a run's samples)."""
    lines = [line.strip() for line in head.splitlines()[1:200] if line.strip()]
    if len(head) >= 16000:
        lines = lines[:-1]  # a cut head's last line may be cut
    return len(lines) >= MIN_STEPS and all(_number(line) is not None for line in lines)


def merged_steps(conv: Conversion, header: list[str], rows: Rows, columns: Columns) -> Rows:
    """The rows with each block of one run's steps or frames merged into one row (said); any other table as it is."""
    if len(header) == 1 and len(rows) >= MIN_STEPS and columns.get(0, (None,))[0] is not None and (
            merged := _merged(rows, [0], columns, -1, warm_up=False)) is not None:
        conv.warn(f"the {len(rows)} values of {header[0][:40]}, the table's one column, read as the samples of one "
                  "run: a mean latency their mean, a rate their median and a duration their sum")
        return [merged]
    if len(rows) >= MIN_STEPS and (item := _items(header, rows, columns)) is not None:
        return _merged_items(conv, header, rows, columns, item)
    counter = _counter(header, columns)
    if counter is None or len(rows) < MIN_STEPS:
        return rows
    figures = [i for i, (f, _) in columns.items() if f.section == "metrics"]
    labels = [i for i, (f, _) in columns.items() if f.section != "metrics" and i != counter]
    out: Rows = []
    said: list[str] = []
    i = 0
    while i < len(rows):
        j = i + 1
        while j < len(rows) and _rises(rows[j - 1][1], rows[j][1], counter) and all(
                _cell(rows[j][1], c) == _cell(rows[i][1], c) for c in labels):
            j += 1
        block = rows[i:j]
        merged = _merged(block, figures, columns, counter) if j - i >= MIN_STEPS and _rises(
            rows[i][1], rows[i][1], counter, first=True) else None
        if merged is None:
            out.append(rows[i])
            i += 1
            continue
        out.append(merged)
        said.append(f"lines {block[0][0]}-{block[-1][0]}")
        i = j
        if i < len(rows) and _cell(rows[i][1], counter).lower() in _SUMMARY:  # the table's own mean of those rows
            said.append(f"line {rows[i][0]} ({_cell(rows[i][1], counter)[:10]!r}: their summary) left out")
            i += 1
    if said:
        conv.warn(f"rows read as the {header[counter][:30]}s of one run ({', '.join(said[:6])}"
                  f"{' ...' if len(said) > 6 else ''}): the first left out as the warm-up, then each mean latency the "
                  "mean over the others, each rate their median and a duration their sum")
    return out


def _merged_items(conv: Conversion, header: list[str], rows: Rows, columns: Columns, item: int) -> Rows:
    """Each setup's items, one row each, as that setup's run: when every figure is a plain number (else the rows
    as they are)."""
    own = own_lengths(rows, columns)
    if summarised(header, columns):
        return rows
    figures = [i for i, (f, _) in columns.items() if f.section == "metrics"]
    out: Rows = []
    groups = _setups(rows, columns)
    for group in groups:
        merged = _merged(group, figures, columns, item, warm_up=False)  # each item a different input: no warm-up
        if merged is None:
            return rows
        for i in own:  # each item's own length: the run states none of its own
            merged[1][i] = ""
        out.append((group[0][0], merged[1]))
    sizes = [str(len(g)) for g in groups]
    runs = f"the items of {len(out)} runs ({', '.join(sizes[:6])}{' ...' if len(sizes) > 6 else ''} rows" if len(
        out) > 1 else f"the items of one run (lines {rows[0][0]}-{rows[-1][0]}"
    conv.warn(f"rows read as {runs}: each a different {header[item][:30] or 'input'}): each mean latency the mean "
              "over them, each rate their median and a duration their sum" + (
                  f"; {', '.join(header[i][:30] for i in sorted(own))} each item's own, not a setting of the run"
                  if own else ""))
    return out


def run_value(values: list[float], key: str) -> float:
    """One run's figure from its steps' values (the warm-up already left out): a duration their sum (the run's
    measured window), a mean ('latency_avg_ms': the mean per-step latency, as joulebench.metrics defines it) their
    mean, any other figure their median. The rule of both step readers (this and `text_steps`). A duration that
    rises at every step is a clock written at each ('train_time:40.6s', 42.7s, 44.7s: the time since the start), so
    the window is its rise over the steps, plus one step's (the first step's own time)."""
    if key.endswith("_avg_ms"):
        return statistics.fmean(values)
    if key != "duration_s":
        return statistics.median(values)
    rises = [b - a for a, b in zip(values, values[1:], strict=False)]
    if len(values) >= 3 and all(r > 0 for r in rises):
        return values[-1] - values[0] + statistics.median(rises)
    return sum(values)


def _cell(row: list[str], i: int) -> str:
    return row[i].strip() if i < len(row) else ""


def _rises(before: list[str], after: list[str], counter: int, *, first: bool = False) -> bool:
    a, b = _cell(before, counter), _cell(after, counter)
    if not (a.isdigit() and b.isdigit()):
        return False
    return first or int(b) > int(a)


def _merged(block: Rows, figures: list[int], columns: Columns, counter: int, *, warm_up: bool = True
            ) -> tuple[int, list[str]] | None:
    measured = block[1:] if warm_up else block
    row = list(block[0][1])
    for i in figures:
        values = [_number(_cell(r, i)) for _, r in measured]
        numbers = [v for v in values if v is not None]
        if len(numbers) != len(values):
            return None  # a blank, a word or a unit among its numbers: left as rows
        value = run_value(numbers, columns[i][0].key)
        while len(row) <= i:
            row.append("")
        row[i] = repr(value)
    if counter >= 0:
        row[counter] = ""
    return block[0][0], row
