"""Ollama timings: the statistics `ollama run --verbose` prints (one block per answer, also inside a
log or a Markdown note), and tables of the API's timing fields (`eval_count`, `eval_duration`,
`prompt_eval_count`, `prompt_eval_duration`, `total_duration`, `load_duration`).

A benchmark script that keeps only the eval rate (llm_benchmark: `model_name =    mistral:7b`, `prompt = ...`,
`eval rate:            67.11 tokens/s`) is read one run per rate, but only under the model line it ran (a lone eval
rate is no result); its header's `gpu_info:` names the device when it is a GPU or Jetson name, `ollama_version:` the
version; a statistic with words before it (`Average of eval rate:`) is an average over answers, not read.

Learned from the writer (api/types.go `Metrics.Summary`): durations print as Go durations
("1m13.810328292s", "97.885315ms", "450µs"); the API's duration fields are nanoseconds. "eval rate" is
eval count / eval duration: output tokens per second while decoding, the prompt's evaluation left out,
so it is stored as decode tokens/s, never as the whole request's tokens/s; "prompt eval rate" is prompt
tokens/s. Total duration (model load included) is the window. One request per block or row; Ollama
measures no energy, and an energy column is read only with its unit in its name (energy_j, energy_mj).

A table written by a script is checked before it is read: a row whose prompt_eval_* and eval_* cells hold the same
values (one field of Ollama's response written into both the prompt's and the answer's columns), or whose eval or
prompt eval duration is longer than its total duration (milliseconds in a column named _s), is refused naming the
lines, the columns and the values, with the fix: the decode rate cannot be told from the prompt's, nor a duration
trusted. Rate columns (`eval_rate`, `eval_rate_tps`, `prompt_eval_rate_tps`) are read as the statistics' rates.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import (
    MS_PER_S,
    Conversion,
    Importer,
    Source,
    cell,
    check_run_count,
    clean_str,
    energy_metrics,
    num,
    positive,
    read_csv,
)
from importers.device_text import device_from_path
from importers.text_lines import TERMINAL
from joulebench.errors import ResultFileError
from joulebench.units import duration_s

_KEYS = ("total duration", "load duration", "prompt eval count", "prompt eval duration", "prompt eval rate",
         "eval count", "eval duration", "eval rate")
_STAT = re.compile(r"(?:^|[\s>*|-])(total duration|load duration|prompt eval count|prompt eval duration|prompt eval "
                   r"rate|eval count|eval duration|eval rate):\s+(\S+)")
_RUN = re.compile(r"ollama run\s+(?:--\S+\s+)*([A-Za-z0-9][\w.:/-]*)"
                  r"|^\s*model(?:_name)?\s*[:=]\s*([A-Za-z0-9][\w.:/-]*)\s*$")
_RATE_ONLY = re.compile(r"^[ \t]{0,40}eval rate:[ \t]+\d{1,9}(?:\.\d{1,9})?[ \t]*tokens/s[ \t]*$", re.MULTILINE)
_MODEL_LINE = re.compile(r"^[ \t]{0,40}model(?:_name)?[ \t]*[:=][ \t]*[A-Za-z0-9][\w.:/-]{0,200}[ \t]*$", re.MULTILINE)
# the device and version lines of a benchmark script's header (llm_benchmark: 'gpu_info: NVIDIA GeForce RTX 3060')
_DEVICE_LINE = re.compile(r"^\s*(?:gpu_info|gpu_name|gpu|device)\s*[:=]\s*(\S[^\n]{0,199}?)\s*$")
_VERSION_LINE = re.compile(r"^\s*ollama_version\s*[:=]\s*v?(\d{1,4}(?:\.\d{1,6}){1,3})\s*$")
_PROMPT_LINE = re.compile(r"^\s*prompt\s*[:=]\s*(\S[^\n]{0,999})$")
NO_ENERGY = "Ollama's timings hold no power or energy"
CSV_UNITS_S = {"": 1e-9, "_ns": 1e-9, "_us": 1e-6, "_ms": 1e-3, "_s": 1.0}  # the API's fields are ns
_SAID = {"eval_count": "eval count", "prompt_eval_count": "prompt eval count", "eval_s": "eval duration",
         "prompt_eval_s": "prompt eval duration", "total_s": "total duration", "load_s": "load duration",
         "eval_rate": "eval rate", "prompt_eval_rate": "prompt eval rate"}
RATE_SUFFIXES = ("", "_tps", "_tok_s", "_t_s", "_tokens_per_s", "_tokens_per_second")  # tokens/s



class OllamaImporter(Importer):
    NAME = "ollama"
    TOOL = "Ollama"
    DESCRIPTION = "Ollama --verbose statistics (text) or a table of its eval_count / eval_duration timings"

    def sniff(self, source: Source) -> bool:
        head = source.head
        if "eval rate:" in head and "eval count:" in head and "eval duration:" in head:
            return True
        if ("\x1b[" in head or re.search("[\u2800-\u28ff]", head) or "ollama" in head.lower()) and head[:1] != "{":
            text = source.text or ""  # `ollama run --verbose` captured: the statistics follow the answer
            if "eval rate:" in text and "eval count:" in text and "eval duration:" in text:
                return True
        if (model := _MODEL_LINE.search(head)) is not None and _RATE_ONLY.search(head, model.end()) is not None:
            return True  # a script's capture of the eval rate alone, each under the model it ran (llm_benchmark)
        first = head.lstrip().split("\n", 1)[0].lower()
        columns = {c.strip().strip('"') for c in first.split(",")}
        return "eval_count" in columns and any(c.startswith("eval_duration") for c in columns)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        text = conv.source.text or ""
        if ("eval count:" in text and "eval duration:" in text) or (
                (model := _MODEL_LINE.search(text)) is not None and _RATE_ONLY.search(text, model.end()) is not None):
            return conv.document(self._from_text(conv, text))
        return conv.document(self._from_csv(conv, text))

    # --- `ollama run --verbose` -----------------------------------------------------------------
    def _from_text(self, conv: Conversion, text: str) -> list[dict[str, Any]]:
        """One run per answer's statistics. A statistic with words before it on its line is a script's summary over
        answers ('Average of eval rate:'), no answer's; a block of the eval rate alone (a script that keeps only it)
        is read only under the model it ran ('model_name = mistral:7b'). The device is a header's 'gpu_info:' line
        naming a GPU or Jetson, the prompt (a 'prompt =' line) goes into the notes."""
        blocks: list[tuple[int, str | None, dict[str, tuple[int, str]], str | None, str | None]] = []
        model: str | None = None
        device: str | None = None
        prompt: str | None = None
        current: dict[str, tuple[int, str]] = {}
        start, said = 0, (model, device, prompt)  # the labels in force where a block starts are its own
        summaries: list[int] = []
        for n, raw in enumerate(text.splitlines(), 1):
            line = TERMINAL.sub("", raw) if "\x1b" in raw or "\u2800" <= max(raw, default="") else raw
            if (m := _RUN.search(line)) is not None:
                model = m.group(1) or m.group(2)
            elif (m := _DEVICE_LINE.match(line)) is not None:  # 'gpu_info: no GPU found': '', none by the file
                device = m.group(1) if device_from_path((m.group(1),)) else ""
            elif (m := _VERSION_LINE.match(line)) is not None:
                conv.tool_version = conv.tool_version or m.group(1)
            elif (m := _PROMPT_LINE.match(line)) is not None:
                prompt = " ".join(m.group(1).split())
            if (m := _STAT.search(line)) is None:
                continue
            if re.search(r"[A-Za-z]", line[:m.start(1)]):
                summaries.append(n)  # 'Average of eval rate:': over the answers above, not one answer
                continue
            key = m.group(1)
            if key in current or (key == "total duration" and current):  # the next answer's statistics
                blocks.append((start, said[0], current, said[1], said[2]))
                current = {}
            if not current:
                start, said = n, (model, device, prompt)
            current[key] = (n, m.group(2))
        if current:
            blocks.append((start, said[0], current, said[1], said[2]))
        lone = [b[0] for b in blocks if set(b[2]) == {"eval rate"} and b[1] is None]
        blocks = [b for b in blocks if ("eval count" in b[2] or "eval rate" in b[2]) and b[0] not in lone]
        if summaries:
            conv.warn(f"{self._lines(summaries)}: a statistic after other words (an average over answers) is no "
                      "answer's: not read")
        if lone:
            conv.warn(f"{self._lines(lone)}: an eval rate alone, under no model line ('model_name = ...'): not read")
        if not blocks:
            raise conv.fail("(whole file)", "no 'eval count:' / 'eval rate:' lines of ollama run --verbose (an eval "
                            "rate alone is read only under the model it ran)")
        check_run_count(conv, len(blocks), "the statistics blocks")
        runs = []
        for i, (line_no, model_name, stats, device_name, prompt_text) in enumerate(blocks):
            def count(key: str, stats: dict[str, tuple[int, str]] = stats) -> float | None:
                return num(stats[key][1], f"line {stats[key][0]} ({key})", conv) if key in stats else None

            def seconds(key: str, stats: dict[str, tuple[int, str]] = stats) -> float | None:
                if key not in stats:
                    return None
                s = duration_s(stats[key][1])
                if s is None:
                    raise conv.fail(f"line {stats[key][0]} ({key})", f"{stats[key][1][:40]!r} is not a duration "
                                    "as Ollama prints it (e.g. 1m2.5s, 97.8ms)")
                return s

            values = {"eval_count": count("eval count"), "prompt_eval_count": count("prompt eval count"),
                      "eval_s": seconds("eval duration"), "prompt_eval_s": seconds("prompt eval duration"),
                      "total_s": seconds("total duration"), "load_s": seconds("load duration"),
                      "eval_rate": count("eval rate"), "prompt_eval_rate": count("prompt eval rate")}
            run = self._run(conv, i, f"line {line_no}", model_name, values, None, device_name)
            if set(stats) == {"eval rate"}:
                run["notes"] += "; the eval rate alone (the script kept no other statistic)"
            if prompt_text:
                run["notes"] += f"; prompt: {prompt_text[:120]}"
            runs.append(run)
        return runs

    @staticmethod
    def _lines(numbers: list[int]) -> str:
        shown = ", ".join(str(n) for n in numbers[:8]) + (f" and {len(numbers) - 8} more" if len(numbers) > 8 else "")
        return f"line {shown}" if len(numbers) == 1 else f"lines {shown}"

    # --- a table of the API's fields ------------------------------------------------------------
    def _from_csv(self, conv: Conversion, text: str) -> list[dict[str, Any]]:
        header, rows = read_csv(conv, text)
        lower = [h.lower() for h in header]
        check_run_count(conv, len(rows), "the table's rows")
        durations = {base: next((base + x for x in CSV_UNITS_S if base + x in lower), None)
                     for base in ("total_duration", "load_duration", "prompt_eval_duration", "eval_duration")}
        rates = {base: next((base + x for x in RATE_SUFFIXES if base + x in lower), None)
                 for base in ("prompt_eval_rate", "eval_rate")}
        problems = _inconsistent(header, lower, rows, durations, rates)
        if problems:
            raise ResultFileError(conv.source.name, problems)

        runs = []
        for i, (line, row) in enumerate(rows):
            def val(name: str | None, line: int = line, row: list[str] = row) -> float | None:
                return (num(cell(lower, row, name), f"line {line} ({header[lower.index(name)]})", conv)
                        if name is not None and name in lower else None)

            def seconds(base: str) -> float | None:
                name = durations[base]
                v = val(name)
                return v * CSV_UNITS_S[name[len(base):]] if v is not None and name is not None else None

            values = {"eval_count": val("eval_count"), "prompt_eval_count": val("prompt_eval_count"),
                      "eval_s": seconds("eval_duration"), "prompt_eval_s": seconds("prompt_eval_duration"),
                      "total_s": seconds("total_duration"), "load_s": seconds("load_duration"),
                      "eval_rate": val(rates["eval_rate"]), "prompt_eval_rate": val(rates["prompt_eval_rate"])}
            energy = val("energy_j")
            if energy is None and (mj := val("energy_mj")) is not None:
                energy = mj / 1000.0
            runs.append(self._run(conv, i, f"line {line}", clean_str(cell(lower, row, "model")), values, energy))
        return runs

    def _run(self, conv: Conversion, index: int, where: str, model: str | None, v: dict[str, float | None],
             energy_j: float | None, device: str | None = None) -> dict[str, Any]:
        """One request's run; `device` '' where the file's header says the device and names none."""
        out, prompt = positive(v["eval_count"]), positive(v["prompt_eval_count"])
        eval_s, prompt_s = positive(v["eval_s"]), positive(v["prompt_eval_s"])
        decode = positive(v["eval_rate"]) or (out / eval_s if out and eval_s else None)
        prompt_rate = positive(v["prompt_eval_rate"]) or (prompt / prompt_s if prompt and prompt_s else None)
        if decode is None and out is None:
            found = ", ".join(f"{_SAID[k]} {x:g}" + (" s" if k.endswith("_s") else "")
                              for k, x in v.items() if x is not None) or "nothing"
            raise conv.fail(where, f"neither eval count nor eval rate: no generation figure to import (the row "
                            f"holds: {found})")
        total_s = positive(v["total_s"])
        metrics: dict[str, Any] = {
            "decode_tokens_per_s": decode, "prompt_tokens_per_s": prompt_rate,
            "output_tokens": out, "output_tokens_mean": out, "prompt_tokens_mean": prompt,
            "duration_s": total_s, "examples": 1, "sample_unit": "request", "requests_completed": 1,
        }
        flags: list[str] = []
        if energy_j is not None:
            metrics.update(energy_metrics(energy_j, examples=1, duration_s=total_s, boundary=conv.boundary(None),
                                          method="reported", what="energy column", flags=flags))
            if "energy_j" in metrics and out:
                metrics["j_per_token"] = metrics["energy_j"] / out
        else:
            metrics["energy_missing_reason"] = NO_ENERGY
        notes = ["Ollama timings of one request: eval rate = eval count / eval duration (decoding only, stored as "
                 "decode tokens/s)"]
        if v["load_s"] is not None:
            notes.append(f"load duration {v['load_s'] * MS_PER_S:.1f} ms (in the total duration)")
        if eval_s is not None:
            notes.append(f"eval duration {eval_s * MS_PER_S:.1f} ms")
        if prompt_s is not None:
            notes.append(f"prompt eval duration {prompt_s * MS_PER_S:.1f} ms")
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "flags": flags,
            "device": conv.device(device or None, "gpu", where=f"({where}: Ollama's timings do not name the device)",
                                  by_file_name=device != ""),
            "config": {
                **conv.generation_config(model),
                "engine": "ollama",
                "prompt_tokens_requested": None,
            },
            "metrics": {k: val for k, val in metrics.items() if val is not None},
            "notes": "; ".join(notes),
        }


def _inconsistent(header: list[str], lower: list[str], rows: list[tuple[int, list[str]]],
                  durations: dict[str, str | None], rates: dict[str, str | None]) -> list[str]:
    """What makes the table's timings untrustworthy, each naming its lines, columns, values and the fix: prompt
    eval columns that are copies of the eval columns, a duration longer than the request's total duration."""
    def raw(row: list[str], name: str | None) -> str:
        return (cell(lower, row, name) or "").strip() if name is not None else ""

    def shown(name: str) -> str:
        return header[lower.index(name)]

    pairs = [(p, e) for p, e in (("prompt_eval_count", "eval_count"),
                                 (durations["prompt_eval_duration"], durations["eval_duration"]),
                                 (rates["prompt_eval_rate"], rates["eval_rate"])) if p in lower and e in lower]
    copied: list[int] = []
    example = ""
    for line, row in rows:
        filled = [(p, e) for p, e in pairs if raw(row, p) or raw(row, e)]
        timing = [(p, e) for p, e in filled if "count" not in (p or "")]
        if timing and all(raw(row, p) == raw(row, e) for p, e in filled):
            copied.append(line)
            example = example or "; ".join(f"{shown(p or '')} = {shown(e or '')} = {raw(row, e)}" for p, e in filled)
    problems: list[str] = []
    if copied:
        where = f"line {copied[0]}" if len(copied) == 1 else f"lines {', '.join(str(n) for n in copied[:10])}"
        empty = [shown(c) for c in ("prompt_eval_count", "eval_count") if c in lower
                 and all(not raw(row, c) for _, row in rows)]
        problems.append(
            f"{where}: the prompt eval columns are copies of the eval columns ({example}"
            + (f"; {' and '.join(empty)} empty in every row" if empty else "") + "): one field of Ollama's response "
            "was written into both the prompt's and the answer's columns, so the decode rate cannot be told from the "
            "prompt's. Fix the script that wrote the table: take prompt_eval_count / prompt_eval_duration and "
            "eval_count / eval_duration from the response (durations in ns, or in s in a column named _s)")
    total = durations["total_duration"]
    for base in ("eval_duration", "prompt_eval_duration", "load_duration"):
        name = durations[base]
        if name is None or total is None:
            continue
        for line, row in rows:
            if base == "prompt_eval_duration" and line in copied:
                continue  # a copy of the eval duration, said above
            part, whole = num(raw(row, name)), num(raw(row, total))
            if part is not None and whole is not None and whole > 0 and part > whole * (1 + 1e-6) \
                    and name[len(base):] == total[len("total_duration"):]:
                problems.append(f"line {line}: {shown(name)} {raw(row, name)} is longer than {shown(total)} "
                                f"{raw(row, total)} of the same request, so it is not this request's duration in the "
                                "column's unit; check the unit the script wrote (ms in a column named _s?) and correct "
                                "the column or its name")
        if len(problems) > 12:
            break
    return problems
