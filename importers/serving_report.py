"""The report vLLM's `benchmark_serving.py` / `vllm bench serve` and SGLang's `bench_serving` PRINT, as people
paste it into READMEs, notes and logs: one "===== Serving Benchmark Result =====" block per run, often several
in a file (one per request rate), with any prefix before each line (`# ` in a shell script, `> ` in a quote).

Learned from the writers (vllm benchmarks/benchmark_serving.py and vllm/benchmarks/serve.py `benchmark()`; sglang
python/sglang/bench_serving.py `benchmark()`): every line is `"{:<40} {:<10}".format(label, value)`, times in ms
(two decimals), throughputs over "Benchmark duration (s)" for the whole server. "Output token throughput" is
output tokens/s; "Total token throughput" (vLLM before 2025 "Total Token throughput", SGLang before mid-2024
"Total throughput") counts prompt and output tokens and is never stored as output; "Input token throughput" is
prompt tokens/s. "Peak output token throughput" and "Peak concurrent requests" (vLLM), "Concurrency" (SGLang: the
mean requests in flight, measured) and "Max ITL" are not settings or the run's figures: notes only. Each latency
section prints "Mean X (ms)", "Median X (ms)" and "P<q> X (ms)" for X in TTFT, TPOT ((e2e - TTFT) / (output
tokens - 1) per request), ITL (every gap between streamed chunks, pooled) and end-to-end latency ("E2EL" in
vLLM, "E2E Latency" in SGLang): each kept in its own column (joulebench.metrics); percentiles other than
p50/p90/p95/p99 and vLLM's client-queue sections go to the notes. The load: vLLM prints "Traffic request rate",
"Burstiness factor" and "Maximum request concurrency" before the block (recent versions also "Maximum request
concurrency" and "Request rate configured (RPS)" inside it), SGLang "Traffic request rate" and "Max request
concurrency" inside it; "inf" (every request at once) and "not set"/"None" are not a rate or a concurrency.
The model is taken from a `--model` / `--model-path` option or a printed `Namespace(... model='...')` before the
block. Neither tool names the GPU or measures energy: the device comes from --device, energy is missing.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count, clean_str, num, pos_int, positive
from importers.table_text import MARKDOWN_HEADING
from joulebench.metrics import E2E, ITL, TPOT, TTFT, Distribution

HEADER = "Serving Benchmark Result"
# Every pattern here stays linear on a hostile line (a run of 30,000 '=' or '-', a long gap of spaces): a match
# starts only where a run starts (the lookbehind), possessive runs never give back what they took, and a label's
# value is taken whole and stripped in Python rather than matched up to trailing spaces.
_HEADER = re.compile(r"(?<!=)=+\s*Serving Benchmark Result\s*=")
_PREFIX = re.compile(r"^[\s#>*|+/│]*")  # a comment, quote or table marker pasted before each line
_LABEL = re.compile(r"^([A-Za-z][^:]{0,80}?):\s++(\S.*)$")
_STAT_LINE = re.compile(r"^(Mean|Median|P\d+(?:\.\d+)?)\s+(TTFT|TPOT|ITL|E2EL|E2E Latency)\s+\(ms\)$")
_RULE = re.compile(r"^-{3,}+(?:.*-{3})?$")  # a section's title rule: ---Time to First Token---
_FENCE = re.compile(r"^(```|~~~|</?(td|pre|details|table)>)")
_MODEL = re.compile(r"(?:(?<![\w-])--model(?:-path)?(?:=|\s+)['\"]?([^\s'\"\\$<>{}]+)"
                    r"|(?<![\w])model='([^']+)')")
_DIST: dict[str, Distribution] = {"TTFT": TTFT, "TPOT": TPOT, "ITL": ITL, "E2EL": E2E, "E2E Latency": E2E}
_STATS = {"Mean": "avg", "Median": "p50", "P50": "p50", "P90": "p90", "P95": "p95", "P99": "p99"}
NO_ENERGY = "the printed serving benchmark report holds no power or energy"
# label -> our key; several labels per key are the tools' versions of one line
_FIELDS = {
    "Successful requests": "completed", "Failed requests": "failed", "Benchmark duration (s)": "duration_s",
    "Total input tokens": "input_tokens", "Total generated tokens": "output_tokens",
    "Request throughput (req/s)": "req_s", "Request goodput (req/s)": "goodput_req_s",
    "Output token throughput (tok/s)": "out_tok_s", "Input token throughput (tok/s)": "in_tok_s",
    "Total token throughput (tok/s)": "total_tok_s", "Total Token throughput (tok/s)": "total_tok_s",
    "Total throughput (tok/s)": "total_tok_s",
    "Traffic request rate": "rate", "Request rate configured (RPS)": "rate",
    "Maximum request concurrency": "concurrency", "Max request concurrency": "concurrency",
    "Burstiness factor": "burstiness", "Backend": "backend",
}
# printed, but neither a setting nor one of the run's figures: kept in the notes as printed
_NOTED = ("Peak output token throughput (tok/s)", "Peak concurrent requests", "Concurrency",
          "Total generated tokens (retokenized)", "Accept length", "Max ITL (ms)", "Input throughput (inputs/s)")
_ENGINES = (("sglang", "sglang"), ("vllm", "vllm"), ("lmdeploy", "lmdeploy"), ("trt", "tensorrt-llm"))


@dataclass
class _Block:
    line: int  # the header's line
    values: dict[str, tuple[int, str]] = field(default_factory=dict)  # key -> (line, value as printed)
    stats: dict[tuple[str, str], tuple[int, str]] = field(default_factory=dict)  # (metric, stat) -> (line, value)
    noted: list[str] = field(default_factory=list)
    model: str | None = None




def _strip(line: str) -> str:
    return _PREFIX.sub("", line).strip()


def _closing(lines: list[str], start: int) -> bool:
    """Whether the block starting at `start` ends with the tools' closing rule (50 '=') within 120 lines, before
    another block or a code fence."""
    for line in lines[start:start + 120]:
        text = _strip(line)
        if re.fullmatch(r"={20,}", text):
            return True
        if _HEADER.search(line) or _FENCE.match(text):
            return False
    return False


def blocks_of(text: str) -> list[_Block]:
    """Every report block, with the load lines printed before it (vLLM) and the model last named before it."""
    lines = text.splitlines()
    blocks: list[_Block] = []
    model: str | None = None
    before: dict[str, tuple[int, str]] = {}  # the load lines since the previous block
    i = 0
    while i < len(lines):
        raw = lines[i]
        for m in _MODEL.finditer(raw):
            model = m.group(1) or m.group(2)
        if not _HEADER.search(raw):
            if (found := _LABEL.match(_strip(raw))) is not None and _FIELDS.get(found.group(1)) in (
                    "rate", "concurrency", "burstiness"):
                before[_FIELDS[found.group(1)]] = (i + 1, found.group(2).strip())
            i += 1
            continue
        block = _Block(line=i + 1, model=model, values=dict(before))
        before = {}
        i += 1
        closed = _closing(lines, i)  # with its closing rule, lines that are not the report's (a fork's) are skipped
        while i < len(lines):
            text_line = _strip(lines[i])
            if _HEADER.search(lines[i]) or _FENCE.match(text_line) or re.fullmatch(r"={3,}", text_line):
                break
            if closed and _LABEL.match(text_line) is None:
                i += 1
                continue
            if text_line == "" or _RULE.match(text_line):
                after = _strip(lines[i + 1]) if i + 1 < len(lines) else ""
                if text_line == "" and _LABEL.match(after) is None and not _RULE.match(after):
                    break  # a blank line, then no more report lines: the block ended without its closing rule
                i += 1
                continue
            line_match = _LABEL.match(text_line)
            if line_match is None:
                break  # prose after a block pasted without its closing rule
            label, value = line_match.group(1).strip(), line_match.group(2).strip()
            if (s := _STAT_LINE.match(label)) is not None:
                block.stats[(s.group(2), s.group(1))] = (i + 1, value)
            elif label in _FIELDS:
                block.values[_FIELDS[label]] = (i + 1, value)
            elif label in _NOTED or label.endswith("(ms)"):
                block.noted.append(f"{label} {value}")
            i += 1
        blocks.append(block)
    return blocks


class ServingReportImporter(Importer):
    NAME = "serving-report"
    TOOL = "vLLM / SGLang serving benchmark (printed report)"
    DESCRIPTION = ("the report vLLM benchmark_serving / vllm bench serve or SGLang bench_serving prints "
                   "('===== Serving Benchmark Result =====' blocks, also pasted into notes and logs)")

    def sniff(self, source: Source) -> bool:
        text = source.head if len(source.data) > 4 * 2**20 else (source.text or "")
        return _HEADER.search(text) is not None and any(
            k in text for k in ("Successful requests:", "Output token throughput (tok/s):", "Mean TTFT (ms):",
                                "Median TTFT (ms):", "Request throughput (req/s):", "Total generated tokens:"))

    def convert(self, conv: Conversion) -> dict[str, Any]:
        blocks = blocks_of(conv.source.text or "")
        check_run_count(conv, len(blocks), "the report blocks")
        runs: list[dict[str, Any]] = []
        lines: list[int] = []  # each run's block's first line
        refused: list[tuple[int, str]] = []
        for block in blocks:
            problem = self._missing(block)
            if problem:
                refused.append((block.line, problem))
                continue
            runs.append(self._run(conv, block, len(runs)))
            lines.append(block.line)
        if not runs:
            line, problem = refused[0] if refused else (0, "no 'Serving Benchmark Result' block")
            raise conv.fail(f"line {line}" if line else "(whole file)", problem)
        for line, problem in refused:
            conv.warn(f"{conv.source.base_name}, line {line}: {problem}; that block was not imported")
        if conv.hints.device is None:
            conv.warn("the printed serving report names neither the GPU nor how many served the model: give "
                      "--device")
        return conv.document(self._kept_apart(runs, lines, conv.source.text or ""))

    @staticmethod
    def _kept_apart(runs: list[dict[str, Any]], lines: list[int], text: str) -> list[dict[str, Any]]:
        """Blocks that state the same model and load are not known to be repeats: a pasted report often differs
        by something only its prose says (a server option, a GPU). Each such block's tag names the Markdown heading
        above it ('## FP8 (2-Node Setup)') where those headings differ, else its line, so no two of them pool as
        repeats of one configuration."""
        def key(run: dict[str, Any]) -> tuple[Any, ...]:
            c = run["config"]
            return c.get("model"), c.get("tag")

        seen: dict[tuple[Any, ...], int] = {}
        for run in runs:
            seen[key(run)] = seen.get(key(run), 0) + 1
        if all(count == 1 for count in seen.values()):
            return runs  # no two blocks alike: the text's headings are not read
        headings = [(n, m.group(2)[:80]) for n, line in enumerate(text.splitlines()[:200_000], 1)
                    if line.startswith("#") and (m := MARKDOWN_HEADING.match(line)) is not None]
        above = [next((h for n, h in reversed(headings) if n < line), None) for line in lines]
        for run, line, heading in zip(runs, lines, above, strict=True):
            if seen[key(run)] > 1:
                named = heading is not None and sum(h == heading for h, r in zip(above, runs, strict=True)
                                                    if key(r) == key(run)) == 1
                run["config"]["tag"] = ", ".join(p for p in (run["config"].get("tag"),
                                                             heading if named else f"report line {line}") if p)
        return runs

    @staticmethod
    def _missing(block: _Block) -> str | None:
        """Why a block cannot be imported (None when it can)."""
        if any(note.startswith("Input throughput (inputs/s)") for note in block.noted):
            return ("an embedding (pooling) benchmark report: it holds no generated tokens; JouleBench reads the "
                    "text-generation report")
        figures = ("out_tok_s", "req_s", "duration_s", "completed")
        if not block.stats and not any(k in block.values for k in figures):
            return ("a 'Serving Benchmark Result' header without 'Output token throughput (tok/s):', 'Request "
                    "throughput (req/s):' or any 'Mean/Median/P99 ... (ms):' line under it: paste the whole block "
                    "as the tool printed it")
        return None

    def _run(self, conv: Conversion, block: _Block, index: int) -> dict[str, Any]:
        def val(key: str) -> float | None:
            if key not in block.values:
                return None
            line, text = block.values[key]
            if text.lower() in ("inf", "none", "not set", "not", "infinity"):
                return None
            return num(text.split()[0], f"line {line} ({key})", conv)

        completed, failed = val("completed"), val("failed")
        duration = positive(val("duration_s"))
        inputs, outputs = positive(val("input_tokens")), positive(val("output_tokens"))
        metrics: dict[str, Any] = {"energy_missing_reason": NO_ENERGY}
        status, error = "ok", None
        if completed is not None and completed <= 0:
            status, error = "failed", (f"no request completed ({int(failed) if failed is not None else '?'} failed)")
        else:
            reqs = positive(val("req_s"))
            metrics.update(
                duration_s=duration, examples=pos_int(completed), requests_completed=pos_int(completed),
                requests_failed=int(failed) if failed is not None and failed >= 0 else None,
                requests_per_s=reqs, throughput_sps=reqs, sample_unit="request" if reqs else None,
                tokens_per_s=positive(val("out_tok_s")), prompt_tokens_per_s=positive(val("in_tok_s")),
                output_tokens=int(outputs) if outputs else None,
                prompt_tokens_mean=inputs / completed if inputs and completed else None,
                output_tokens_mean=outputs / completed if outputs and completed else None,
                goodput_requests_per_s=positive(val("goodput_req_s")))
            for (name, stat), (line, text) in block.stats.items():
                if stat in _STATS:
                    metrics[_DIST[name].stat(_STATS[stat]).name] = num(text.split()[0],
                                                                        f"line {line} ({stat} {name} (ms))", conv)
                else:
                    block.noted.append(f"{stat} {name} (ms) {text}")
        rate = positive(val("rate"))
        concurrency = pos_int(val("concurrency"))
        burstiness = positive(val("burstiness"))
        backend = clean_str(block.values["backend"][1]) if "backend" in block.values else None
        engine = next((e for prefix, e in _ENGINES if backend and backend.startswith(prefix)), None)
        notes = [f"{'SGLang bench_serving' if backend else 'vLLM benchmark_serving / vllm bench serve'} printed "
                 f"report (block at line {block.line}"
                 + (f", {backend} backend" if backend else "") + "): figures over the benchmark's duration, the "
                 "whole server"]
        if positive(val("total_tok_s")) is not None:
            notes.append(f"total (prompt + output) token throughput {block.values['total_tok_s'][1]} tokens/s, not "
                         "stored as output")
        if "goodput_req_s" in block.values:
            notes.append("request goodput as printed; its SLO is not in the report")
        if block.noted:
            notes.append("also printed, not stored: " + ", ".join(block.noted))
        if "rate" in block.values and rate is None:
            notes.append(f"request rate {block.values['rate'][1]} (every request at once)")
        tag = ", ".join(p for p in (f"rate {rate:g}" if rate else None,
                                    f"concurrency {concurrency}" if concurrency else None) if p)
        return {
            "run_id": conv.run_id(index),
            "status": status,
            "error": error,
            "device": conv.device(None, "gpu", where=f"(line {block.line}: the printed report does not name the GPU)"),
            "config": {
                **conv.generation_config(block.model[:200] if block.model else None),
                "engine": engine,
                "load_kind": "rate" if rate else ("concurrency" if concurrency else None),
                "request_rate_per_s": rate, "max_concurrency": concurrency,
                "arrival": (None if not rate else "poisson" if burstiness in (None, 1.0) or backend else "gamma"),
                "burstiness": burstiness if rate and burstiness else None,
                "tag": tag[:200] or None,
            },
            "metrics": {k: v for k, v in metrics.items() if v is not None},
            "notes": "; ".join(notes)[:10_000],
        }
