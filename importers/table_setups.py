"""One figure given in a column per setup (`ar_tok_s`, `k5_tok_s`; `TTFT frío`, `TTFT cacheado`; 'BF16 Tokens/sec',
'FP8 Tokens/sec'), for the general reader (`importers.general_table`): a run per setup from each row that gives it,
the setup's name (the word the columns differ in) in the tag; columns that differ in a device's or a repeat's number,
or in a statistic, are no setups. Groups of such columns naming different setups are read so only where their figures
sit in rows of their own (two tables of a text joined). Columns of one field that differ in no setup and are never
both filled in a row are one column (`coalesced`)."""

from __future__ import annotations

import re

from importers.base import Conversion
from importers.table_checks import tag_phases
from importers.table_fields import Field, FieldError, measure_field
from importers.table_labels import label_field
from importers.table_rows import MISSING_CELLS, SETUP_TAG, Columns, Rows, cell, failure_named
from joulebench import units

# tokens two column names may differ in without naming two setups: a statistic, or a device, rank or repeat number
_NOT_A_SETUP = {"mean", "avg", "average", "median", "med", "min", "max", "std", "stdev", "total", "sum", "peak",
                "first", "last", "p50", "p90", "p95", "p99",
                "batch", "effective", "overall", "actual", "nominal"}  # 'FPS', 'BATCH FPS': two estimates of one rate
# what a column measures, never a setup: 'time_s' and 'energy_infer_duration_s' are two windows of one run
_MEASURES = {"time", "duration", "elapsed", "runtime", "wall", "energy", "power", "latency", "throughput", "rate",
             "mask", "viz", "visualization", "preprocess", "postprocess", "pre", "post", "nms", "capture", "render",
             "draw", "inference", "pipeline",  # and the stages of one pipeline: 'inference_fps', 'mask_fps'
             "exec", "execution", "workload", "job"}  # two windows of one run: 'exec_time_sec', 'workload_time_sec'

_NUMBERED = re.compile(r"(?i)^(?:gpu|cuda|dev|device|node|rank|run|rep|repeat|trial|iter|socket|core|cpu)?\d+$")


def _apart(groups: dict[int, dict[str, int]], rows: Rows) -> bool:
    """Whether groups of columns naming different setups give their figures in different rows only (two tables of a
    text joined: 'BF16 Tokens/sec', 'FP8 Tokens/sec' over one's rows, 'INT8 Latency', 'FP8 Latency' over the
    other's)."""
    filled = [{n for n, row in rows if any(cell(row, c).lower() not in MISSING_CELLS for c in g.values())}
              for g in groups.values()]
    return all(not (a & b) for i, a in enumerate(filled) for b in filled[i + 1:])


def _differing(a: str, b: str) -> tuple[str, str] | None:
    """The setups two column names of one figure name: the one word they differ in ('ar_tok_s', 'k5_tok_s': 'ar',
    'k5'), or, for names in one unit that differ in more ('asus_cpu_tok_s', 'mac_metal_tok_s'; 'Raspberry Pi 4
    (TPS)', '4060Ti (TPS)'), the names before the unit; None when they differ in a statistic, or in a device's or a
    repeat's number ('gpu0_power_w', 'GPU 1 (W)')."""
    (x, ux, wx), (y, uy, wy) = units.header_unit(a), units.header_unit(b)
    named = ux is not None and ux == uy and wx.lower() == wy.lower() and bool(x.strip()) and bool(y.strip())
    ta, tb = (re.split(r"[_\s.\-/]+", x.strip()), re.split(r"[_\s.\-/]+", y.strip())) if named else (
        re.split(r"[_\s.\-/]+", a.strip()), re.split(r"[_\s.\-/]+", b.strip()))
    diff = [i for i, (p, q) in enumerate(zip(ta, tb, strict=False)) if p.lower() != q.lower()]
    if len(ta) == len(tb) and len(diff) == 1 and ta[diff[0]] and tb[diff[0]]:
        i = diff[0]
        p, q = ta[i], tb[i]
        if {p.lower(), q.lower()} & (_NOT_A_SETUP | _MEASURES):
            return None
        if _NUMBERED.match(p) or _NUMBERED.match(q):
            board = named and p.isdigit() and q.isdigit() and i > 0 and not _NUMBERED.fullmatch(ta[i - 1] + "0")
            return (x.strip(), y.strip()) if board else None  # 'Raspberry Pi 4' and '5' are two boards; GPU 0 one
        return p, q
    whole = named and diff and not {t.lower() for t in (*ta, *tb)} & _NOT_A_SETUP and not any(
        {t.lower() for t in name if t} <= _MEASURES for name in (ta, tb))  # 'avg_ttft', 'ttft_first': statistics
    return (x.strip(), y.strip()) if whole else None


def _zero(cell_text: str) -> bool:
    try:
        return units.value_in(cell_text.strip(), None) == 0
    except units.UnitError:
        return False


_COMPARED = re.compile(r"(?i)Δ|delta|diff|difference|change|gain|speedup|improvement|uplift|vs\.?")


def split_setups(conv: Conversion, header: list[str], rows: Rows, columns: Columns, twins: list[tuple[int, int]]
                 ) -> tuple[list[str], Rows, Columns, list[str]]:
    """A table that gives one figure in a column per setup ('ar_tok_s', 'k5_tok_s'; 'vllm_ms', 'sglang_ms'): each row
    read as one run per setup, the setup's name (the word the columns differ in) added to the tag; the setups' names.
    Columns of one field that differ otherwise (a device's number, a statistic) are left out, said, as before."""
    groups: dict[int, dict[str, int]] = {}  # the column read -> {setup: its column}
    loose: list[tuple[int, int]] = []
    by_first: dict[int, list[int]] = {}
    for first, other in twins:
        by_first.setdefault(first, []).append(other)
    for first, others in by_first.items():
        # memory after loading, at the end; one JSON record's sections ('power.energy_j',
        # 'transient.energy_integrated_j'), never a model's 'OPT-6.7B': one run's, no setups
        if columns[first][0].key.startswith("mem_") or re.search(r"[A-Za-z_]\.[A-Za-z_]", header[first]):
            loose += [(first, other) for other in others]
            continue
        pairs = [(other, _differing(header[first], header[other])) for other in others]
        loose += [(first, other) for other, words in pairs if words is None]
        named = [(other, words) for other, words in pairs if words is not None]
        group: dict[str, int] = {}
        if len({words[0] for _, words in named}) > 1:  # 'asus_cpu', 'mac_cpu', 'asus_vulkan': each whole name
            wholes = [units.header_unit(header[c])[0].strip() for c in (first, *(o for o, _ in named))]
            shared = set.intersection(*(set(w.split()) for w in wholes))  # 'BentoML Throughput', 'Ray Serve
            wholes = [" ".join(t for t in w.split() if t not in shared) or w for w in wholes]  # Throughput': a setup
            named = [(other, (wholes[0], whole)) for (other, _), whole in zip(named, wholes[1:], strict=True)]
        for other, words in named:
            if _COMPARED.fullmatch(words[1].strip()):  # 'Δ tok/s' beside 'AR tok/s', 'DFlash tok/s': a difference
                conv.warn(f"{header[other][:80]} left out: a difference between setups ({words[1][:20]}), not a "
                          "run's figure")
                continue
            if group and group.get(words[0]) != first or words[1] in group:
                loose.append((first, other))
                continue
            group[words[0]], group[words[1]] = first, other
        groups[first] = group
    groups = {first: g for first, g in groups.items() if g}
    setups = {tuple(g) for g in groups.values()}
    if len(setups) > 1 and not _apart(groups, rows):  # setups of its own a group may have only in rows of its own
        loose += [(first, other) for first, g in groups.items() for other in g.values() if other != first]
        groups = {}
    for first, other in loose:
        conv.warn(f"{header[other][:80]} left out: {columns[first][0].key} is already given by {header[first][:80]}")
    if not groups:
        return header, rows, columns, []
    names = list(dict.fromkeys(name for g in groups.values() for name in g))
    tag = next((i for i, (f, _) in columns.items() if f.key == "tag"), None)
    if tag is None:
        header, tag = [*header, SETUP_TAG], len(header)
        columns = {**columns, tag: (Field("tag", None, "config"), None)}
    split: Rows = []
    giving = 0
    for n, row in rows:  # a row gets a run for each setup it gives a figure for; one giving none stays as it is
        stated: list[str | None] = []
        for setup in names:  # a setup whose cells say it failed ('OOM') gets no run, said
            cells_of = [cell(row, g[setup]) for g in groups.values() if setup in g]
            failed = [(c, why) for c in cells_of if (why := failure_named(c)) is not None]
            if failed and all(c.lower() in MISSING_CELLS or failure_named(c) for c in cells_of):
                conv.warn(f"line {n}: {setup[:40]} {failed[0][0][:20]!r} ({failed[0][1]}): no run of that setup")
            elif any(c.lower() not in MISSING_CELLS and not _zero(c) for c in cells_of):  # '0.00': not measured
                stated.append(setup)
            elif any(_zero(c) for c in cells_of):
                conv.warn(f"line {n}: {setup[:40]}: every figure 0 (not measured): no run of that setup")
        giving += bool(stated)
        for name in stated or [None]:
            cells = [*row, *[""] * (len(header) - len(row))]
            for first, group in groups.items():
                cells[first] = cell(row, group[name]) if name is not None and name in group else ""
            cells[tag] = ", ".join(p for p in (cell(row, tag), name) if p)[:200]
            split.append((n, cells))
    shown = ", ".join(header[c] for g in groups.values() for c in g.values())
    conv.warn(f"{shown[:160]}: one figure per setup ({', '.join(names)[:80]}); the {giving} row(s) giving them read "
              "as one run per setup they give (the setup in the tag)")
    return header, split, columns, names


_PHASE_WORDS = re.compile(r"(?i)\b(?:prefill|prompt|decode|decoding|generation)\b")


def coalesced(conv: Conversion, header: list[str], rows: Rows) -> tuple[list[str], Rows]:
    """Columns of one label, or of one figure in one unit, that no row fills twice are one column, each row's value
    from whichever it fills: records of two shapes flattened into one table ('models.<name>.model' in one,
    'model.model_name' in the other), or a single request's rate in one column and a batch's in another
    ('speed_tok_s', 'throughput_tok_s'). Never two setups' columns ('vllm_ms', 'sglang_ms'): those stay apart.
    Columns that overlap stay as they are (the reader takes the first and says so)."""
    by_key: dict[object, list[int]] = {}
    for i, name in enumerate(header):
        if (field := label_field(name)) is not None:
            if field.key not in ("tag", "repeat", "status"):
                by_key.setdefault(field.key, []).append(i)
            continue
        try:
            figure, unit, _ = measure_field(name)
        except FieldError:
            continue
        if figure is not None and unit is not None:
            by_key.setdefault((figure.key, unit.symbol), []).append(i)
    merged: dict[int, int] = {}  # a column -> the column it joins
    for key, cols in by_key.items():
        cols = [c for c in cols if isinstance(key, str) or c == cols[0]
                or ((_differing(header[cols[0]], header[c]) is None  # 'Prefill pp520 (tok/s)' is 'pp520 (tok/s)'
                     or _PHASE_WORDS.sub("", header[cols[0]]).split() == _PHASE_WORDS.sub("", header[c]).split())
                    and tag_phases(header[cols[0]]) == tag_phases(header[c]))]  # never a bare 'tok/s
        if len(cols) > 1 and not any(sum(bool(cell(r, i)) for i in cols) > 1 for _, r in rows):
            merged.update({i: cols[0] for i in cols[1:]})
    if not merged:
        return header, rows
    out: Rows = []
    for n, row in rows:
        row = list(row)
        for i, into in merged.items():
            if cell(row, i) and into < len(row):
                row[into] = row[i]
        out.append((n, [c for i, c in enumerate(row) if i not in merged]))
    conv.warn("; ".join(f"{header[i][:60]} read with {header[into][:60]} (no row gives both: one column)"
                        for i, into in merged.items())[:400])
    return [h for i, h in enumerate(header) if i not in merged], out
