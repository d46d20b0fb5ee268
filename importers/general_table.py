"""Any table of results no tool reader claims: a wide CSV/TSV (one run a row), a long one (one figure a row:
`Type, Model, GPU, Run, Metric, Value[, Unit]`, pivoted by its metric/value/unit columns), JSON Lines and lists
of JSON records (each record flattened with its nested settings: `config.batch_size`, `metrics.ttft.p50_ms`), an
object of records keyed by name (`{"systems": {"QUIET": {...}, "NVIDIA MIG": {...}}}`: one run each, never one
record's figure standing for another's; `importers.table_records`), and the tables of a text whose figures are in
tables (Markdown pipe tables, fixed-width console tables: `importers.table_text`), read like a CSV with the headings
above them as the tag, or as the device where a heading names a known one.

Columns are recognised by name and unit (`importers.table_fields`), values converted by `joulebench.units`
(a unit in the header or in the cells: `Total Energy (Wh)`, `250 mW`), each figure checked against the result
schema's range (`joulebench.ranges`) with the file, line and column named. A column whose unit contradicts its
name (`Energy per Token (W)`) refuses the file naming it. The device, mode, precision and batch come only from
columns that state them: where none is stated the run leaves it null and the import asks for it (`joulebench
label`). A table with no figure with a unit is refused, saying which columns were seen and why none was read.

A cell written as a range (`70-85`, `171–205`) is no figure: read as not stated, said. A row whose figure cells
are all blank or a missing mark (`–`) measured nothing: it is left out, said in a warning
(a table of such rows only is refused). A numeric setting's column whose cells are names (`ctx`: tiny, 64k) is no
setting: it may tell the rows apart in the tag. A table naming its figures in a metric column and giving statistics as
columns (`Metric | Median | P95 | Mean`, a setup named on its first line only) is read as one column per figure and
statistic (`prompt tok/s median`), so a rate's median or mean is read and its percentiles never are. A text table's
unnamed first column (`| | TTFT p50 |` over `| **vLLM** | 46 ms |`) names its rows: kept in the tag beside the
headings.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import (
    Conversion,
    Importer,
    Source,
    check_run_count,
    clean_str,
    energy_metrics,
)
from importers.device_text import counted_device, device_from_path, gpu_of_system
from importers.json_text import is_json, key_value_object, twice_encoded
from importers.table_checks import (
    PHASES,
    all_tokens,
    layer_profile,
    media_lengths,
    of_a_part,
    of_phase,
    per_gpu_scaled,
    per_part_durations,
    per_token_checked,
    row_mode,
    says_training,
    shared_durations,
    states_a_mode,
    steps_of_generation,
    tag_phases,
    trains,
    whole_of_parts,
    with_component_sums,
)
from importers.table_device import COUNTED_DEVICE, PLACEMENT, counted_row, row_device
from importers.table_document import COUNTS, cells_give_figure, figure_tables, has_figure
from importers.table_fields import (
    HEADING_DEVICE,
    HEADING_TAG,
    PRECISIONS,
    Field,
    FieldError,
    measure_field,
    plain,
    setting_field,
    unitless_energy,
    words_of,
)
from importers.table_identities import NO_UNIT, head_proves_units, proven_units
from importers.table_labels import label_field, thousands_field
from importers.table_long import (
    long_columns,
    stat_columns,
    transposed_head,
)
from importers.table_named import devices_of_columns, devices_of_setups, model_in_tag, model_named, named_columns
from importers.table_order import distributions_of, gpu_device_first, grouped_reasons, total_first
from importers.table_preamble import FIGURE_CELL
from importers.table_records import (
    LIST_KEY,
    MAX_KEYS,
    flatten,
    json_records,
    nested_ambiguity,
    nested_records,
    siblings,
)
from importers.table_requests import (
    RequestRows,
    as_runs,
    names_request_times,
    request_rows,
    timed_requests,
)
from importers.table_rows import (
    MISSING_CELLS,
    WHOLE,
    backends_only,
    cell,
    failure_named,
    is_backend,
    not_number,
    relabelled,
    system_names,
    without_failed,
    without_summaries,
    without_warm_ups,
)
from importers.table_setups import coalesced, split_setups
from importers.table_source import MAP_IT, Rows, file_table
from importers.table_steps import merged_steps, one_figure_column
from importers.table_units import data_row, delimiter_of
from importers.tool_columns import tool_names, tool_units
from joulebench import units
from joulebench.configuration import TEXT_FIELDS
from joulebench.errors import ResultFileError
from joulebench.ranges import RangeError, check

# the JSON records' readers, importable from here
__all__ = ["MAP_IT", "MAX_KEYS", "GeneralTableImporter", "flatten", "is_backend", "is_json", "json_records",
           "nested_ambiguity", "nested_records", "states_a_mode", "twice_encoded"]


class GeneralTableImporter(Importer):
    NAME = "general-table"
    TOOL = "any results table"
    DESCRIPTION = ("a results table no tool reader claims: wide or long CSV/TSV, JSON Lines or JSON records, with "
                   "columns recognised by name and unit")

    def sniff(self, source: Source) -> bool:
        head = source.head
        if not head:
            return False
        if is_json(source):
            records = json_records(source)
            if records is None:  # an object whose records cannot be told apart: read, to be refused naming them
                doc = source.json
                return (isinstance(doc, dict) and nested_ambiguity(doc) is not None
                        and has_figure(list(flatten(doc))))
            return any(has_figure(tool_names(list(flatten(r)))[0]) for r in records[:5])  # the first may be a note
        if (kv := key_value_object(source)) is not None:  # 'Parameter,Value' rows: the object they flatten
            records = json_records(source, doc=kv)
            return records is not None and has_figure(list(flatten(records[0])))
        first = head.split("\n", 1)[0]
        cells = [c.strip().strip('"') for c in first.split(delimiter_of(head))]
        if len(cells) == 1 and has_figure(cells) and one_figure_column(head):  # 'latency_ms' over 500 numbers
            return True
        figured = sum(FIGURE_CELL.match(c) is not None for c in cells)  # 'loss: 10.8', 'time: 644 ms': figures
        if len(cells) >= 2 and not (figured and first.startswith("#") or figured >= 2):  # a comment's words or a
            # line of figures ('step 0, loss: 10.8, time: 644.64 ms'), no header
            if long_columns(cells) is not None or data_row(cells) or stat_columns(cells) is not None:
                return True  # a table without its header row: read, to be refused saying so; figures named in a
                # metric column with their statistics in columns ('metric, unit, median, p90')
            if has_figure(tool_names(cells)[0]) or cells_give_figure(head, delimiter_of(head)) or names_request_times(
                    cells):
                return True
            if transposed_head(head, delimiter_of(head)) or head_proves_units(head, delimiter_of(head)):
                return True
        return bool(figure_tables(source.text or ""))

    def convert(self, conv: Conversion) -> dict[str, Any]:
        header, rows, where, listed = file_table(conv)
        runs, lines, requests = self._runs(conv, header, rows, where, listed[0] if listed else None)
        if not requests:
            return conv.document(runs)
        stated = self._stated(conv, listed[1]) if listed is not None and len(requests.groups) == 1 else None
        return conv.document(as_runs(conv, requests, runs, lines, stated))

    def _stated(self, conv: Conversion, wrapper: dict[str, Any]) -> dict[str, Any] | None:
        """The figures a JSON object states of the run whose requests it lists, read as a one-record table."""
        flat = flatten(wrapper)
        header = list(flat)[:MAX_KEYS]
        try:
            runs = self._runs(conv, header, [(1, ["" if flat[k] is None else str(flat[k]) for k in header])],
                              "the object's", None)[0]
        except ResultFileError:
            return None  # no figure of its own the reader knows: the requests' figures alone
        return runs[0]["metrics"] if len(runs) == 1 else None

    def _runs(self, conv: Conversion, header: list[str], rows: Rows, where: str, listed: str | None
              ) -> tuple[list[dict[str, Any]], list[int], RequestRows | None]:
        """A table's runs, the line each came from, and its requests when its rows are one run's requests."""
        check_run_count(conv, len(rows), "its rows")
        if not rows:
            raise conv.fail("line 2", "no rows after the header")
        if (named := tool_names(header))[1] is not None:  # llama.cpp's 'predicted_per_second': the decode rate
            meant = [f"{h[:40]} as {n}" for n, h in zip(named[0], header, strict=True) if n != h]
            conv.warn(f"{named[1]}: its names read as what they mean ({', '.join(meant)[:300]})")
            header = named[0]
        if (layer := layer_profile(header, rows)) is not None:
            raise conv.fail("(whole file)", f"a per-layer profile: each row is one layer or operator of one pass "
                            f"(named in {layer[:40]}), not a run; JouleBench compares whole runs: import the tool's "
                            "own summary of the run (its mean latency or throughput, e.g. the log beside this profile)")
        rows = whole_of_parts(conv, header, rows)  # 'total' beside 'embedding', 'mlp' ... with their shares
        header, rows = coalesced(conv, media_lengths(conv, header), rows)
        columns, left, twins = self._columns(conv, header, rows)
        header, rows, twins = with_component_sums(conv, header, rows, columns, twins)
        header, rows, columns = devices_of_columns(conv, header, rows, columns, twins)
        header, rows, columns = devices_of_setups(conv, *split_setups(conv, header, rows, columns, twins))
        header, rows, columns, timed = timed_requests(conv, header, rows, columns)  # 'start, first_token, end'
        figures = [f.key for f, _ in columns.values() if f.section == "metrics"]
        if not figures:
            raise conv.fail("line 1", "no column is a figure with a unit JouleBench reads (columns: "
                            f"{', '.join(header)[:300]}); name the unit in the header, e.g. 'Energy (J)', "
                            f"'latency_ms', 'Power (mW)', or {MAP_IT}")
        unitless = [name for name, _ in left if unitless_energy(name)]
        if set(figures) <= COUNTS and unitless:  # the energy is there without its unit: map it, not leave it out
            read = [f"{header[i][:40]} as {f.key}" for i, (f, _) in columns.items()]
            raise conv.fail("line 1", f"only {' and '.join(sorted(set(figures)))} read ({', '.join(read)[:300]}), "
                            f"and {', '.join(unitless[:4])} {'names' if len(unitless) == 1 else 'name'} a power or an "
                            "energy without a unit (W or mW, J or kWh cannot be told apart), so the runs would lack "
                            f"it (not read: {grouped_reasons(left)}); name the unit in the header, e.g. 'Power (W)', "
                            f"or {MAP_IT}")
        rows = without_warm_ups(conv, header, rows, columns, where)
        rows, requests = request_rows(conv, header, rows, columns, timed=timed, listed=listed)  # one run's requests
        rows = without_summaries(conv, header, rows if requests else without_failed(conv, header, rows, columns,
                                                                                       where), columns, where)
        unmerged = rows
        rows = rows if requests else merged_steps(conv, header, rows, columns)  # a row a frame or step of one run
        columns = per_part_durations(conv, header, columns) if rows is unmerged and not requests else columns
        columns = shared_durations(conv, header, rows, columns)
        if not any(f.section == "metrics" for f, _ in columns.values()):
            raise conv.fail("line 1", "its one figure, a duration, is no run's own (" + "; ".join(
                w for w in conv.warnings if " left out: " in w)[-300:] + "); no other column is a figure with a unit "
                f"JouleBench reads; {MAP_IT}")
        header, rows, columns, tagged = relabelled(conv, header, rows, columns)
        left = [(name, why) for name, why in left if name not in tagged and name not in (requests.read if requests
                                                                                        else ())]
        if left:
            conv.warn("columns not read: " + "; ".join(f"{n} ({why})" for n, why in left[:12])
                      + (" ..." if len(left) > 12 else ""))
        runs: list[dict[str, Any]] = []
        lines: list[int] = []
        empty: list[str] = []
        for n, row in rows:  # a row whose figures are all blank or '–' measured nothing: left out, said
            run = self.read_row(conv, len(runs), f"{where} {n}", header, row, columns)
            if run is None:
                empty.append(f"{n}")
            else:
                runs.append(run)
                lines.append(n)
        if not runs:
            raise conv.fail(f"{where} {rows[0][0]}", "no figure in any row (every figure cell is blank or '-')")
        if empty:
            conv.warn(f"{where} {', '.join(empty[:10])}{' ...' if len(empty) > 10 else ''} left out: no figure in "
                      "the row (its figure cells are blank or '-')")
        return runs, lines, requests

    @staticmethod
    def _columns(conv: Conversion, header: list[str], rows: list[tuple[int, list[str]]]
                 ) -> tuple[dict[int, tuple[Field, units.Unit | None]], list[tuple[str, str]], list[tuple[int, int]]]:
        """({column index: (field, unit of its values)}, the columns not read with why, the pairs of columns giving
        one field in one unit: (the one read, the other)); each field from one column (the first)."""
        out: dict[int, tuple[Field, units.Unit | None]] = {}
        taken: dict[str, str] = {}
        left: list[tuple[str, str]] = []
        unitless: list[int] = []  # columns of no unit: their units may be proven by the rows (table_identities)
        twins: list[tuple[int, int]] = []  # (the column read, another giving its field with its unit)
        distributions = distributions_of(header)
        vocabulary, tool = tool_units(header)
        if tool is not None:
            conv.warn(f"{', '.join(vocabulary)[:120]} read in the units {tool} writes them in "
                      f"({', '.join(dict.fromkeys(vocabulary.values()))}): the table carries that tool's own names")
        for i in gpu_device_first(total_first(header), header, rows):
            name = header[i]
            label = label_field(name)
            cells = [r[i] for _, r in rows[:200] if i < len(r) and r[i].strip()]
            if name == LIST_KEY and cells and all(states_a_mode(c) for c in cells):  # lists 'inference', 'training'
                label = label_field("mode")
            if label is None and (kilo := thousands_field(name)) is not None and kilo.key not in taken:
                out[i], taken[kilo.key] = (kilo, units.UNITS["k tokens"]), name  # 'context_length_k'
                conv.warn(f"{name[:40]} read as {kilo.key} in thousands of tokens")
                continue
            if label is not None and label.key in ("gpu_count", "device") and "device" not in taken and cells and all(
                    counted_device(c) for c in cells):
                out[i] = (COUNTED_DEVICE, None)  # '2 x NVIDIA RTX 6000 Ada Generation (49140 MiB)'
                taken["device"] = name
                conv.warn(f"{name[:40]} read as the GPU count and the device ('2 x NVIDIA ...')")
                continue
            if label is not None and label.section == "config" and label.key not in TEXT_FIELDS and (
                    word := not_number([r[i] for _, r in rows if i < len(r)])) is not None:
                left.append((name[:40], f"{word[:20]!r} is no number: names setups, not a {label.key}"))
                continue
            if label is not None and label.key == "device" and plain(name).strip() == "system" and not all(
                    device_from_path((c.strip(),)) or gpu_of_system(c) for c in cells):  # 'QUIET', 'Linux'
                left.append((name[:40], "names systems, not each a device JouleBench knows"))
                continue
            if label is not None and label.key in ("device", "model") and system_names(
                    [r[i] for _, r in rows if i < len(r)]):  # 'arch': Darwin/arm64 is no model, nor a device
                left.append((name[:40], "an operating system, CPU architecture, software stack or host ('Linux', "
                                        f"'x86_64', 'macos_mlx', 'aws'), not a {label.key}"))
                continue
            if label is not None and label.key == "device" and cells and all(
                    WHOLE.fullmatch(c.strip()) or re.fullmatch(r"[0-9a-f]{16,128}", c.strip()) for c in cells):
                left.append((name[:40], "a device's index (0, 1) or a hash of it, not its name"))
                continue
            if label is not None and label.key == "device" and label.key not in taken and backends_only(
                    [r[i] for _, r in rows if i < len(r)]) and any(
                    (other := label_field(h)) is not None and other.key == "device" for h in header[i + 1:]):
                if not any(f is PLACEMENT for f, _ in out.values()):  # the first (a record's own, not the file's)
                    out[i] = (PLACEMENT, None)  # each row's: a row run on the CPU is not the named GPU's
                    conv.warn(f"{name[:40]} says where the code ran ('cuda', 'cpu'); a column beside it names the "
                              "device")
                continue
            if label is None and words_of(name) & {"gpu", "cuda"} and words_of(name) & {"used", "use", "on"} and \
                    cells and {c.strip().lower() for c in cells} <= {"true", "false"} and not any(
                    f is PLACEMENT for f, _ in out.values()):  # 'gpu_used': False is a run on the CPU
                out[i] = (PLACEMENT, None)
                conv.warn(f"{name[:40]} says whether the GPU ran each row: a row where it is False ran on the CPU")
                continue
            if label is not None and label.key == "mode" and not all(
                    states_a_mode(c) for c in cells if c.strip().lower() not in MISSING_CELLS):  # 'task_type':
                # generation, question_answering, summarization: tasks, a mode for one of them at most
                left.append((name[:40], "names tasks, not a mode (train, infer) or a phase"))
                continue
            if label is not None and label.key == "gpu_count" and plain(name).strip() == "tp" and {"fp", "fn"} <= {
                    plain(h).strip() for h in header}:  # a detector's true positives beside fp, fn
                left.append((name[:40], "a detector's true positives (beside fp and fn), not a tensor-parallel size"))
                continue
            if label is not None and label.key in ("precision", "quantization") and not_number(cells) is None and \
                    any("." in c for c in cells):  # 0.8174, never 16 (bits)
                left.append((name[:40], "a score (a model's precision or accuracy), not a numeric format"))
                continue
            if label is not None and label.key not in taken:
                out[i] = (label, None)
                taken[label.key] = name
                continue
            stated = conv.hints.unit_of(name) or vocabulary.get(name)
            carried = units.find_unit(stated) if stated else units.unit_of_cells([r[i] for _, r in rows if i < len(r)])
            if (setting := setting_field(name, carried)) is not None and "power_limit_w" not in taken:
                out[i] = setting
                taken["power_limit_w"] = name
                conv.warn(f"{name[:80]} read as the power limit set (in {setting[1].symbol})")
                continue
            try:
                field, unit, why = measure_field(name, carried)
            except FieldError as e:
                raise conv.fail(f"line 1: {name[:80]}", str(e)) from e
            if field is None:
                if why != NO_UNIT or name.strip():
                    left.append((name[:40], why))
                if why == NO_UNIT:
                    unitless.append(i)
                continue
            if field.key == "tokens_per_s" and i in distributions:
                left.append((name[:40], "a rate per request (the table gives its median or percentiles), not the "
                                        "output tokens/s of the whole run: that is output tokens / duration where "
                                        "both are given"))
                continue
            if len(rows) == 1 and field.key in taken and field.key == "duration_s" and of_a_part(
                    taken[field.key]) and not of_a_part(name):  # one run's summary: 'micro_step_time_ms' then
                # 'actual_total_wall_s' is the run's window, not a step's (rows of steps or epochs are merged later)
                first = next(j for j, (f, _) in out.items() if f.key == field.key)
                conv.warn(f"{taken[field.key][:80]} left out as duration_s: a part's time; {name[:80]} is the run's")
                del out[first], taken[field.key]
            if field.key in taken:
                first = next(j for j, (f, _) in out.items() if f.key == field.key)
                same = all(cell(r, i) == cell(r, first) for _, r in rows)
                if same:  # 'power.energy_j' and 'efficiency.energy_j' of one value: one figure written twice
                    conv.warn(f"{name[:80]} left out: the same figure as {taken[field.key][:80]}")
                    continue
                if siblings(name, taken[field.key]):  # two records flattened into one: neither stands for the other
                    raise conv.fail(f"{name[:80]}", f"{taken[field.key][:80]} and {name[:80]} both give {field.key}: "
                                    "the object holds records side by side that are not told apart, and one "
                                    f"record's figure would stand for the other's; {MAP_IT}")
                if out[first][1] == unit:
                    twins.append((first, i))
                else:
                    conv.warn(f"{name[:80]} left out: {field.key} is already given by {taken[field.key][:80]}")
                continue
            taken[field.key] = name
            out[i] = (field, unit)
            in_cells = not stated and carried is not None and units.header_unit(name)[1] is None
            conv.warn(f"{name[:80]} read as {field.key}" + (" (each cell's own unit)" if in_cells and unit and
                                                            unit.kind != "tokens" else
                                                            f" (in {unit.symbol})" if unit and unit.kind != "tokens"
                                                            else "") + (f": {why}" if why else ""))
        batch = next((i for i, (f, _) in out.items() if f.key == "batch_size"), None)
        if (proven := proven_units(header, rows, unitless, batch)) is not None:
            by_rows: dict[int, tuple[Field, units.Unit]] = {}
            for i, fu in sorted(proven[0].items(), key=lambda x: "total" not in words_of(header[x[0]])):
                if fu[0].key not in taken and all(fu[0].key != f.key for f, _ in by_rows.values()):
                    by_rows[i] = fu  # one column a field, a total before its parts
            out.update(by_rows)
            taken.update({fu[0].key: header[i] for i, fu in by_rows.items()})
            names = {header[i][:40] for i in by_rows}
            left = [(n, why) for n, why in left if n not in names]
            conv.warn(f"{', '.join(sorted(names))[:120]} read by the units the rows prove ({proven[1]}): "
                      + ", ".join(f"{header[i][:30]} in {u.symbol}" for i, (_, u) in by_rows.items())[:200])
        headings = {cell(r, header.index(HEADING_TAG)) for _, r in rows} if HEADING_TAG in header else set()
        steps_of_generation(conv, header, out, trained=any(says_training(c) for c in headings) or trains(header))
        named = named_columns(conv, header, rows, out, taken)
        return out, [(n, why) for n, why in left if n not in named], twins

    def read_row(self, conv: Conversion, index: int, where: str, header: list[str], row: list[str],
             columns: dict[int, tuple[Field, units.Unit | None]]) -> dict[str, Any] | None:
        """The row's run; None when it states no figure (every figure cell blank or a missing mark)."""
        metrics: dict[str, Any] = {}
        labels: dict[str, str] = {}
        config: dict[str, Any] = {}
        zero_times: list[str] = []
        for i, (field, unit) in columns.items():
            raw = row[i].strip() if i < len(row) else ""
            if raw.lower() in MISSING_CELLS:
                continue
            at = f"{where}: {header[i][:80]}"
            if field.section == "label":
                labels[field.key] = raw[:200]
                continue
            if field.section == "config" and unit is not None:  # a setting with a unit: the power limit
                config[field.key] = self._config_value(conv, at, field.key, raw, unit)
                continue
            if field.section == "config":
                config[field.key] = self._config_value(conv, at, field.key, raw)
                continue
            if units.is_range(raw) or units.is_ratio(raw) or units.is_estimate(raw):  # '70-85', '5.23×', '~15'
                said = "an estimate, not a measurement" if units.is_estimate(raw) else (
                    f"a {'ratio' if units.is_ratio(raw) else 'range'}, not one figure")
                conv.warn(f"{at}: {raw[:40]!r} is {said}: read as not stated")
                continue
            try:
                value = units.value_in(raw, None if unit is None else unit.symbol)  # '188 tokens': a count
            except units.UnitError as e:
                raise conv.fail(at, str(e)) from e
            if value is None and (failed := failure_named(raw)) is not None:
                conv.warn(f"{at}: {raw[:40]!r} ({failed}): no figure, read as not measured")
                continue
            if value is None:
                raise conv.fail(at, f"{raw[:40]!r} is not a number")
            stored = units.to_stored(value, unit, field.unit) if unit is not None and unit.kind != "tokens" else value
            if field.key == "output_tokens" and stored != int(stored):  # '225.5': a median or mean over runs
                conv.warn(f"{at}: {raw[:20]} tokens is no whole count: read as the mean output tokens of a request")
                metrics.setdefault("output_tokens_mean", stored)
                continue
            if field.key == "output_tokens":
                stored = int(stored)
            if stored == 0 and field.unit in ("tokens/s", "items/s"):  # a rate of 0: not measured (prompt_tps 0)
                conv.warn(f"{header[i][:80]}: 0 read as not measured (a rate of nothing) where it is 0")
                continue
            if stored == 0 and unit is not None and unit.kind == "tokens_per_energy":
                conv.warn(f"{header[i][:80]}: 0 tokens per joule read as not measured")
                continue
            if stored == 0 and field.unit in ("J", "W", "MB"):  # "0.0000" Wh, 0 MB of VRAM: not measured
                conv.warn(f"{header[i][:80]}: {raw[:20]} read as not measured where it is written (no run draws no "
                          "power or holds no memory: the figure was below the digits written, or not taken)")
                continue
            if stored == 0 and field.unit in ("ms", "s"):  # 'latency_ms' 0.0: no run or request takes no time
                zero_times.append(header[i][:80])
                continue
            try:
                checked = check("metrics", field.key, stored, label=f"{header[i][:80]} ({field.key})")
            except RangeError as e:
                if stored == 0:  # '0.0' J/token beside a rate: a figure the tool had none of, never a measured 0
                    conv.warn(f"{at}: 0 read as not measured ({field.key} cannot be 0: the tool writes 0 where "
                              "it took no figure)")
                    continue
                raise conv.fail(at, e.format_message() + "; check the unit") from e
            metrics[field.key] = checked
        counted_row(labels, config)
        per_gpu_scaled(conv, header, columns, metrics, config.get("gpu_count"))
        phase = PHASES.get(plain(labels.get("mode", "")).strip())
        if phase is not None:  # a long table of phases: the row's rate and time are its phase's, never pooled
            config["tag"] = ", ".join(p for p in (config.get("tag"), f"phase {labels['mode'][:30]}") if p)[:200]
            labels["mode"] = "infer"
            of_phase(metrics, phase)
        elif "tokens_per_s" in metrics and (named := tag_phases(config.get("tag"))):
            if len(named) > 1:  # 'Prompt 512 + Decode 128': prompt and output tokens over both phases' time
                conv.warn(f"{where}: {metrics.pop('tokens_per_s'):g} tokens/s over the prompt and the output "
                          "together (its setup names both phases): neither rate, not stored")
            else:  # 'Prompt 512', 'Decode 128': the phase the row's setup names
                of_phase(metrics, named.pop())
        if zero_times and any(v for v in metrics.values()):
            conv.warn(f"{', '.join(zero_times)}: 0 read as not measured where it is written (no run or request takes "
                      "no time: the figure was not taken)")
        elif zero_times:
            metrics.update(dict.fromkeys(zero_times, 0))  # a row of zeros only: below, a setup that did not run
        if not any(v is not None for v in metrics.values()):
            return None
        if all(v == 0 for v in metrics.values()):  # '0,0,0,0': a setup that did not run, never a run in no time
            conv.warn(f"{where} left out: every figure in it is 0 (a run that did not run)")
            return None
        if "tokens_per_s" not in metrics and metrics.get("output_tokens") and metrics.get("duration_s") and not (
                "decode_tokens_per_s" in metrics or "prompt_tokens_per_s" in metrics):  # phases timed apart: the
            # duration may hold more than the generation (a load, a warm-up), so no rate is derived over it
            metrics["tokens_per_s"] = metrics["output_tokens"] / metrics["duration_s"]
            metrics["throughput_derivation"] = "output tokens / duration, both columns of the row"
        energy = metrics.pop("energy_j", None)
        if energy and metrics.get("j_per_token") and (tokens := all_tokens(header, row)) and abs(
                energy / tokens - metrics["j_per_token"]) <= 0.01 * metrics["j_per_token"]:
            conv.warn(f"{where}: the stated {metrics.pop('j_per_token'):.4g} J/token is the energy over all "
                      f"{tokens:,.0f} tokens, the prompt's among them: not the energy per output token")
        power = metrics.get("avg_power_w")
        duration = metrics.get("duration_s")
        boundary = conv.boundary(None)
        if energy is not None:
            metrics.update(energy_metrics(energy, duration_s=duration, boundary=boundary, method="reported",
                                          what="energy column"))
            if power is not None:
                metrics["avg_power_w"] = power
        elif power is not None and duration:
            metrics.update(energy_metrics(power * duration, duration_s=duration, boundary=boundary,
                                          method="reported", what="power x duration"))
        else:
            metrics["energy_missing_reason"] = "no energy column, nor a power with a duration"
        per_token = bool(energy and metrics.get("output_tokens") and "j_per_token" not in metrics)
        if per_token:
            metrics["j_per_token"] = energy / metrics["output_tokens"]  # the run's energy over its output tokens
        derived = per_token_checked(conv, where, metrics, power / metrics["tokens_per_s"]) if (
            metrics.get("tokens_per_s") and power) else None
        if any(k in metrics for k in ("j_per_token", "j_per_sample", "j_per_request", "decode_j_per_token")):
            metrics.setdefault("energy_boundary", boundary)
            metrics.setdefault("energy_method", "reported")
        mode = row_mode(labels.get("mode"), config.get("tag"), header, [header[i] for i, (f, _) in columns.items()
                                                                          if f.section == "metrics"], metrics)
        precision = PRECISIONS.get(plain(labels.get("precision", "")).strip())
        if precision is None and (precision := PRECISIONS.get(plain(str(config.get("quantization", ""))).strip())):
            del config["quantization"]  # a 'Quantization' column's FP16: a precision, no quantization
        model = model_named(clean_str(labels.get("model"))) or model_in_tag(conv, config.get("tag"))
        stated, elsewhere = row_device(conv, labels, config)
        column = next((header[i] for i, (f, _) in columns.items() if f.key == "device"), None)
        device = conv.device(stated, None, where=f"({where}: " + (
            "the table has no device column)" if column is None else
            "no heading above its table names a device JouleBench knows)" if column == HEADING_DEVICE else
            "the device column names a backend or a setup, not a device)"), by_file_name=not elsewhere)
        notes = [f"general table {where}"] + (["J/token = the energy / the output tokens"] if per_token else []) + (
            [derived] if derived else [])
        if labels.get("repeat"):
            notes.append(f"run {labels['repeat']}")
        if labels.get("precision") and precision is None and not re.fullmatch(r"[-+.\d]+", labels["precision"]):
            config.setdefault("quantization", labels["precision"][:200])  # never a detector's precision score, 0.77
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": device,
            "config": {
                "workload": conv.hints.workload or (clean_str(labels.get("workload")) or model or "unknown")[:200],
                "model": model,
                "mode": conv.mode(mode, f"({where}: the table does not say whether it trained or inferred)"),
                "precision": conv.precision(precision),
                "batch_size": config.pop("batch_size", None) or conv.hints.batch_size,
                **{k: v for k, v in config.items() if v is not None},
            },
            "metrics": {k: v for k, v in metrics.items() if v is not None},
            "flags": [],
            "notes": "; ".join(notes),
        }

    @staticmethod
    def _config_value(conv: Conversion, at: str, key: str, raw: str, unit: units.Unit | None = None) -> Any:
        if key in TEXT_FIELDS:
            return raw[:200]
        if key == "gpu_count" and raw.strip() in ("0", "0.0"):  # 'gpus: 0': a run on the CPU, no count of GPUs
            conv.warn(f"{at}: 0 GPUs (the run used none): no GPU count stored")
            return None
        if raw.strip() in ("0", "0.0") and key in ("seq_len", "batch_size", "image_size", "prompt_tokens_requested",
                                                  "output_tokens_requested"):  # a setting no run has: not stated
            conv.warn(f"{at.split(':')[-1].strip()[:40]}: 0 is no {key.replace('_', ' ')} a run had: read as not "
                      "stated")
            return None
        try:
            counted = unit is None and (q := units.parse(raw)) is not None and q.unit == units.UNITS["tokens"]
            value = units.value_in(raw, unit.symbol if unit is not None else "tokens" if counted else
                                   "items/s" if key == "request_rate_per_s" else None)
            value = check("config", key, value * unit.factor if unit is not None and value is not None else value,
                          label=key.replace("_", " "))
        except (RangeError, units.UnitError) as e:
            msg = e.format_message() if isinstance(e, RangeError) else str(e)
            raise conv.fail(at, msg) from e
        return value

