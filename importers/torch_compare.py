"""torch.utils.benchmark's `Compare` tables, as PyTorch prints them (torch/utils/benchmark/utils/compare.py,
`Compare.print` / `Table.render`) and people paste them into notes and READMEs:

    [------------------------- NousResearch/Llama-3.2-1B -------------------------]
                                |  Inference time (1x128)  |  Compile time (1x128)
    1 threads: --------------------------------------------------------------------
          Baseline              |           18.3           |
          Full compilation      |            6.3           |        10696.4

    Times are in milliseconds (ms).

A table is one `label` (the title between the dashes); its rows are the measurements' `sub_label`s, its columns
their `description`s, under a line per thread count. Each cell is one `Measurement`'s median time of one run of the
timed statement, in the unit the footer names (its own line after the table), rounded to the measurement's
significant figures; a cell may carry `(! 12%)`, the spread (IQR / median) PyTorch flags as large. Each cell is read
as one run: its latency median, the table's title as the workload (and the model where it is a hub id, 'org/name'),
the row, the column and the thread count in the tag. A column that times a compilation ('Compile time') is no run's
latency: left out, said. Nothing else is read into a cell: the device, the precision and the batch are not printed.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count
from importers.text_lines import TERMINAL

_TITLE = re.compile(r"^\s{0,8}\[-{2,400}\s?(?P<label>[^\[\]]{0,200}?)\s?-{2,400}\]\s*$")
_THREADS = re.compile(r"^\s{0,8}(?P<n>\d{1,4}) threads?: ?-{3,}\s*$")
_FOOTER = re.compile(r"^\s{0,8}Times are in (?:\w{1,20} )?\((?P<unit>ns|us|µs|ms|s)\)\.\s*$")
_CELL = re.compile(r"^(?P<v>\d{1,15}(?:\.\d{1,15})?)(?:\s{0,4}\(!\s{0,4}(?P<spread>\d{1,4})%\))?$")
_TO_MS = {"ns": 1e-6, "us": 1e-3, "µs": 1e-3, "ms": 1.0, "s": 1e3}
_HUB_ID = re.compile(r"[\w.-]{1,100}/[\w.-]{1,200}")
_STAGES = ("compile", "compilation", "warmup", "warm-up", "load")


class Table:
    """One printed table: its title, columns and rows of cells (as printed), and the thread count of each row."""

    def __init__(self, line: int, label: str) -> None:
        self.line, self.label = line, label
        self.columns: list[str] = []
        self.rows: list[tuple[int, str, int | None, list[str]]] = []  # (line, sub_label, threads, cells)
        self.unit: str | None = None


def _tables(text: str) -> list[Table]:
    tables: list[Table] = []
    threads: int | None = None
    for n, raw in enumerate(text.splitlines()[:200_000], 1):
        line = TERMINAL.sub("", raw) if "\x1b" in raw else raw
        if (m := _TITLE.match(line)) is not None:
            tables.append(Table(n, m.group("label").strip()))
            threads = None
        elif not tables:
            continue
        elif (m := _FOOTER.match(line)) is not None:
            if tables[-1].unit is None:
                tables[-1].unit = m.group("unit")
        elif (m := _THREADS.match(line)) is not None:
            threads = int(m.group("n"))
        elif "|" in line and tables[-1].unit is None:
            cells = [c.strip() for c in line.split("|")]
            if not tables[-1].columns and not cells[0]:
                tables[-1].columns = cells[1:]
            elif tables[-1].columns:
                tables[-1].rows.append((n, cells[0], threads, cells[1:]))
    return [t for t in tables if t.columns and t.rows and t.unit]


class TorchCompareImporter(Importer):
    NAME = "torch-benchmark-compare"
    TOOL = "torch.utils.benchmark"
    DESCRIPTION = "torch.utils.benchmark's Compare tables ('[--- label ---]' ... 'Times are in milliseconds (ms).')"

    def sniff(self, source: Source) -> bool:
        text = source.head
        return "Times are in " in text and "|" in text and any(_TITLE.match(line) for line in text.splitlines())

    def convert(self, conv: Conversion) -> dict[str, Any]:
        tables = _tables(conv.source.text or "")
        runs: list[dict[str, Any]] = []
        stages: set[str] = set()
        blank = 0
        for table in tables:
            scale = _TO_MS[table.unit or "ms"]
            for n, sub_label, threads, cells in table.rows:
                for column, raw in zip(table.columns, cells, strict=False):
                    if any(word in column.lower() for word in _STAGES):
                        stages.add(column)
                        continue
                    if not raw:
                        blank += 1
                        continue
                    m = _CELL.match(raw)
                    if m is None:
                        raise conv.fail(f"line {n}: {column[:40]}", f"{raw[:30]!r} is not a time as Compare prints "
                                        "one (a number, perhaps with '(! N%)' after it)")
                    check_run_count(conv, len(runs) + 1, "its cells")
                    runs.append(self._run(conv, len(runs), table, n, sub_label, threads, column,
                                          float(m.group("v")) * scale, m.group("spread")))
        if not runs:
            raise conv.fail("(whole file)", "no Compare table with a time in a cell and its 'Times are in ...' line")
        if stages:
            conv.warn(f"columns not read: {', '.join(sorted(stages))[:200]} (a compilation or warm-up's time, not the "
                      "timed statement's)")
        if blank:
            conv.warn(f"{blank} blank cell(s): those measurements were not taken")
        return conv.document(runs)

    @staticmethod
    def _run(conv: Conversion, index: int, table: Table, line: int, sub_label: str, threads: int | None,
             column: str, median_ms: float, spread: str | None) -> dict[str, Any]:
        words = f"{table.label} {sub_label} {column}".lower()
        mode = "train" if re.search(r"\b(train|training|backward)\b", words) else "infer" if re.search(
            r"\b(inference|forward|generate|generation|predict)\b", words) else None
        model = table.label if _HUB_ID.fullmatch(table.label) else None
        tag = ", ".join(p for p in (sub_label, column, f"{threads} threads" if threads else "") if p)
        notes = [f"torch.utils.benchmark Compare table '{table.label[:80]}' (line {table.line}), line {line}: the "
                 "median of the measurement's runs"]
        if spread:
            notes.append(f"PyTorch flagged its spread: IQR {spread}% of the median")
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": conv.device(None, "gpu", where="(whole file; torch.utils.benchmark prints no device)"),
            "config": {"workload": conv.hints.workload or (table.label or "unknown")[:200], "model": model,
                       "mode": conv.hints.mode or mode, "precision": conv.precision(None),
                       "batch_size": conv.hints.batch_size, "tag": tag[:200]},
            "metrics": {"latency_p50_ms": median_ms,
                        "energy_missing_reason": "torch.utils.benchmark measures no power"},
            "notes": "; ".join(notes),
        }
