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
Jetson name (`device_text`'s names: `A100-80GB`, `NVIDIA GeForce RTX 3090`, `Jetson AGX Orin`) or a
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

from importers.base import Conversion, Importer, Source, check_run_count
from importers.general_table import GeneralTableImporter, is_json
from importers.table_checks import with_component_sums
from importers.table_fields import Field, plain, words_of
from importers.table_labels import LABELS
from importers.text_lines import MIN_FIGURES, Figure
from importers.text_scan import MAX_LINE_CHARS, Candidate, Label, candidates, scan
from importers.text_steps import merged_steps
from joulebench import units
from joulebench.errors import ResultFileError

__all__ = ["MAX_LINE_CHARS", "MIN_FIGURES", "Candidate", "Figure", "Label", "TextFiguresImporter", "candidates"]

APPROX_TOLERANCE = 0.05  # N x per-stream rate within 5 % of the aggregate (each printed to 2-3 digits)
_PER_STREAM = re.compile(r"per[ _-]?(?:stream|user|client|request|seq)")
_RATES = ("tokens_per_s", "decode_tokens_per_s", "throughput_sps", "requests_per_s")
_GENERAL = GeneralTableImporter()


SNIFF_CHARS = 1_000_000  # how far into a text its first figures are looked for


class TextFiguresImporter(Importer):
    NAME = "text-figures"
    TOOL = "figures in text"
    DESCRIPTION = ("console output pasted into a text, Markdown or log file: 'name: value unit' or 'name=value unit' "
                   "figures, a run per section, indented scope or line of several figures")

    def sniff(self, source: Source) -> bool:
        """Figures in the text's head, or further down a log whose set-up fills its head (a training job prints
        its arguments for a thousand lines before its first iteration): the first SNIFF_CHARS of it."""
        head = source.head
        if not head or is_json(source):
            return False
        if candidates(head):
            return True
        text = source.text or ""
        return len(text) > len(head) and bool(candidates(text[:SNIFF_CHARS]))

    def convert(self, conv: Conversion) -> dict[str, Any]:
        scanned = scan(conv.source.text or "")
        found, steps = merged_steps(scanned.found, conv.source.text or "")
        if steps:
            conv.warn(f"training step lines read as one run each block ({', '.join(steps[:8])}"
                      f"{' ...' if len(steps) > 8 else ''}): the first step left out as the warm-up")
        if not found:
            raise conv.fail("(whole file)", f"no section or line with {MIN_FIGURES} figures with units "
                            "('Total energy: 5 J', 'latency=35 ms')")
        check_run_count(conv, len(found), "its sections and lines of figures")
        said = _Said()
        runs = [self._run(conv, i, c, said) for i, c in enumerate(found)]
        said.warn(conv)
        if scanned.info:
            conv.warn("figures of a block about the machine describe the hardware, not a run, and are not read: "
                      + _some([f"line {f.line}: {f.name[:40]}" + (" (the device's memory size, not memory used)"
                                                                  if f.unit is not None and f.unit.kind == "memory"
                                                                  else "") for f in scanned.info]))
        return conv.document(runs)

    def _run(self, conv: Conversion, index: int, cand: Candidate, said: _Said) -> dict[str, Any]:
        header: list[str] = []
        row: list[str] = []
        columns: dict[int, tuple[Field, units.Unit | None]] = {}
        taken: dict[str, Figure] = {}
        twins: list[tuple[int, int]] = []  # (the figure read, another of its field)
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
            header.append(f.name)
            row.append(repr(f.value))
            if key in taken:  # another figure of a field already read: its part (summed) or left out, said
                twins.append((next(i for i, (g, _) in columns.items() if g.key == key), len(header) - 1))
                continue
            taken[key] = f
            columns[len(header) - 1] = (f.field, f.field_unit)
        read = len(header)
        header, rows, twins = with_component_sums(conv, header, [(0, row)], columns, twins)
        row = rows[0][1]
        for i, (fld, unit) in sorted(columns.items()):  # a sum of parts is said by with_component_sums
            if i < read:
                said.read.setdefault(f"{header[i][:80]} read as {fld.key}" + (f" (in {unit.symbol})" if unit else ""),
                                     None)
        for first, other in twins:
            said.left.setdefault((header[other], columns[first][0].key, header[first]), None)
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
