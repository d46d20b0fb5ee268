"""ray-project LLMPerf results: `<name>_summary.json` and `<name>_individual_responses.json`
(token_benchmark_ray.py --results-dir).

Learned from the writer (token_benchmark_ray.py, common_metrics.py, utils.LLMPerfResults):
- the summary is one flat object (`flatten_dict` of the metadata): `version` "2023-08-31", `name`,
  `model`, `mean_input_tokens` / `mean_output_tokens` (requested), `num_concurrent_requests`, then
  `results_<metric>_quantiles_p25..p99`, `_mean`, `_min`, `_max`, `_stddev` for `ttft_s`,
  `end_to_end_latency_s`, `inter_token_latency_s`, `request_output_throughput_token_per_s`,
  `number_input_tokens`, `number_output_tokens` (seconds; over the requests without an error), and
  `results_mean_output_throughput_token_per_s` (all output tokens / the whole test's wall time: the
  system's output tokens/s, despite "mean"), `results_num_completed_requests`, `results_number_errors`;
- each individual response carries `ttft_s`, `end_to_end_latency_s`, `number_output_tokens` and
  `error_code` (null when it succeeded; a failed request has zeros).
LLMPerf's `inter_token_latency_s` is per request sum(every gap, the first token's wait included) /
output tokens, i.e. about end-to-end / tokens: neither ITL (pooled gaps) nor TPOT (TTFT left out), so
it is kept in the notes only. `request_output_throughput_token_per_s` is one user's tokens/s, never the
system's. The individual responses hold no test duration, so no throughput is read from them; their
TPOT is computed per request as (end-to-end - TTFT) / (output tokens - 1), as joulebench.metrics
defines it. LLMPerf names no device and measures no energy. Wrappers that run LLMPerf at several
concurrencies save its summaries as one JSON object keyed by the run (`{"1": {summary}, "2": {summary}}`,
philschmid/llmperf-bench): each summary is one run, read as above.

The CONSOLE output of token_benchmark_ray.py (`get_token_throughput_latencies` and `metrics_summary`, unchanged from
LLMPerfV2 of 2023-12 to 2024-12 and in its forks), as saved logs (`> run.txt 2>&1`: tokenizer and Ray warnings and
tqdm bars with carriage returns first) or pasted into Markdown, holds the same figures as the summary: after
`\\Results for token benchmark for <model> queried with the <api> api.` (the backslash is a typo of the tool's) a
block per metric, its name then indented `p25 = ` .. `p99 = `, `mean = `, `min = `, `max = `, `stddev = ` (seconds
unless the name says tokens; `nan` over no request), then `Number Of Errored Requests: N` (with `Error Code
Frequency` and its dict when N > 0), `Overall Output Throughput: X` (the summary's
`results_mean_output_throughput_token_per_s`), `Number Of Completed Requests: N`, `Completed Requests Per Minute: X`.
Each section is turned into the summary's keys and read by the same mapping, so a figure means the same from either.
The console never prints the load or the lengths asked for: they are read from a `token_benchmark_ray.py` command
line captured before the section (`--num-concurrent-requests`, `--mean-input-tokens` ..., numbers only, never a shell
variable), or SambaNova's fork's `Number Of Concurrent Workers: N`, else left unstated. A summary's tail pasted
without its header is not read (said in a warning); a section without any figure is refused, naming its line.
"""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count, clean_str, num, pos_int, positive
from importers.request_detail import attach, llmperf_requests
from importers.text_lines import TERMINAL
from joulebench.metrics import E2E, TTFT

MS_PER_S = 1e3
NO_ENERGY = "LLMPerf does not measure energy"
_STATS = (("mean", "avg"), ("quantiles_p50", "p50"), ("quantiles_p90", "p90"), ("quantiles_p95", "p95"),
          ("quantiles_p99", "p99"))
_RESPONSE_KEYS = ("ttft_s", "end_to_end_latency_s", "number_output_tokens", "error_code")

# --- the console output: every pattern anchored or led by a literal, every repeat bounded -------------------------
_HEADER = re.compile(r"\\?Results for token benchmark for (?P<model>\S[^\n]{0,300}?) queried with the "
                     r"(?P<api>[\w.-]{1,60}) api\.")
_EVIDENCE = re.compile(r"(?m)^[ \t>]{0,40}(?:ttft_s|end_to_end_latency_s|inter_token_latency_s)[ \t\r]*$"
                       r"|Overall Output Throughput: ?[-+.\d]")
_METRIC = re.compile(r"^[ \t]{0,40}([a-z][a-z0-9_]{1,80})[ \t]*$")
_STAT = re.compile(r"^[ \t]{0,40}(p\d{1,2}|mean|min|max|stddev)[ \t]{0,5}=[ \t]{0,5}(\S{1,60})[ \t]*$")
_TRAILER = re.compile(r"^[ \t>]{0,40}(Number Of Errored Requests|Overall Output Throughput|Number Of Completed "
                      r"Requests|Completed Requests Per Minute|Number Of Concurrent Workers|Launched Requests Per "
                      r"Minute):[ \t]{0,10}(\S{1,60})")
_TRAILER_KEYS = {"Number Of Errored Requests": "results_number_errors",
                 "Overall Output Throughput": "results_mean_output_throughput_token_per_s",
                 "Number Of Completed Requests": "results_num_completed_requests",
                 "Completed Requests Per Minute": "results_num_completed_requests_per_min",
                 "Number Of Concurrent Workers": "num_concurrent_requests"}  # SambaNova's fork prints its load
_KNOWN = ("inter_token_latency_s", "ttft_s", "end_to_end_latency_s", "request_output_throughput_token_per_s",
          "number_input_tokens", "number_output_tokens")
_COMMAND = re.compile(r"token_benchmark_ray\.py(?![\w.])")
_FLAG = re.compile(r"--(mean-input-tokens|stddev-input-tokens|mean-output-tokens|stddev-output-tokens|"
                   r"num-concurrent-requests|num-concurrent-workers|max-num-completed-requests)(?:=|[ \t]{1,20})"
                   r"(\"[^\"\n]{0,300}\"|'[^'\n]{0,300}'|[^\s\\]{1,300})")
_FLAG_KEYS = {"mean-input-tokens": "mean_input_tokens", "stddev-input-tokens": "stddev_input_tokens",
              "mean-output-tokens": "mean_output_tokens", "stddev-output-tokens": "stddev_output_tokens",
              "num-concurrent-requests": "num_concurrent_requests", "num-concurrent-workers": "num_concurrent_requests"}
_ERROR_CODES = re.compile(r"^[ \t]{0,40}(?:Error Code Frequency[ \t]*|\{[^\n]{0,400})$")  # the title, then a dict
_FENCE = re.compile(r"^ {0,3}(```|~~~)")
MAX_LINES = 500_000
MAX_SECTION_LINES = 2_000  # six blocks of ten lines and the totals, with room for interleaved Ray logs
SNIFF_BYTES = 4 * 2**20


def _sd(value: float | None) -> str:
    return "not stated" if value is None else f"{value:g}"


def _is_summary(doc: Any) -> bool:
    return (isinstance(doc, dict) and "results_mean_output_throughput_token_per_s" in doc
            and any(k.startswith("results_ttft_s_") for k in doc))


def _is_keyed_summaries(doc: Any) -> bool:
    return isinstance(doc, dict) and bool(doc) and all(_is_summary(v) for v in doc.values())


def _is_responses(doc: Any) -> bool:
    return (isinstance(doc, list) and bool(doc)
            and all(isinstance(d, dict) and all(k in d for k in _RESPONSE_KEYS) for d in doc[:3]))


def _is_console(source: Source) -> bool:
    if source.is_folder:
        return False
    if len(source.data) > SNIFF_BYTES:  # a long log: the summary is printed last
        text = source.head + "\n" + source.data[-65_536:].decode("utf-8", errors="replace")
    else:
        text = source.text or ""
    return _HEADER.search(text) is not None and _EVIDENCE.search(text) is not None


@dataclass
class _Section:
    """One printed summary as the summary file's keys (results_ttft_s_mean ...), from its header's line on."""

    line: int
    doc: dict[str, Any]
    api: str
    notes: list[str] = field(default_factory=list)
    in_totals: bool = False  # the lines after the metric blocks have begun
    figures: int = 0


def _lines(text: str) -> list[str]:
    """Each line as a terminal shows it: the text after its last carriage return (a tqdm refresh), escapes gone."""
    out = []
    for raw in text.split("\n")[:MAX_LINES]:
        line = raw.rstrip("\r").rsplit("\r", 1)[-1]
        out.append(TERMINAL.sub("", line) if "\x1b" in line or "\u2800" <= max(line, default="") else line)
    return out


def _command(conv: Conversion, lines: list[str], i: int) -> dict[str, Any]:
    """The settings a captured `token_benchmark_ray.py ...` command states (continued over lines ending '\\')."""
    text, j = lines[i], i
    while text.rstrip().endswith("\\") and j + 1 < len(lines) and j - i < 40:
        j += 1
        text = text.rstrip()[:-1] + " " + lines[j]
    found: dict[str, Any] = {}
    after = _COMMAND.search(text)
    for flag, raw in _FLAG.findall(text[after.end():] if after is not None else text):
        value = raw.strip("\"'")
        if flag == "max-num-completed-requests":
            found["max_requests"] = pos_int(value)
        else:
            number = num(value)
            if number is None or not 0 <= number <= 10**7 or number != int(number):
                conv.warn(f"line {i + 1}: --{flag} {value[:40]!r} is not a plain count (a shell variable?): not stated")
                continue
            found[_FLAG_KEYS[flag]] = int(number)
    return found


def _sections(conv: Conversion, text: str) -> list[_Section]:
    lines = _lines(text)
    sections: list[_Section] = []
    command: dict[str, Any] = {}
    timed_out = False
    current: _Section | None = None
    metric: str | None = None
    orphan: int | None = None
    for i, line in enumerate(lines):
        if (header := _HEADER.search(line)) is not None:
            doc = {k: v for k, v in command.items() if k != "max_requests"}
            current = _Section(i + 1, {"model": clean_str(header.group("model")), **doc}, header.group("api"))
            if command.get("max_requests"):
                current.notes.append(f"--max-num-completed-requests {command['max_requests']}")
            if timed_out:
                current.notes.append("LLMPerf printed 'Test timed out before all requests could be completed.'")
            sections.append(current)
            command, timed_out, metric = {}, False, None
            continue
        if current is not None and (i + 1 - current.line > MAX_SECTION_LINES or _FENCE.match(line) or (
                current.in_totals and line.strip() and not _TRAILER.match(line) and not _ERROR_CODES.match(line))):
            current = None  # the summary ended: what follows is no part of it
        if current is None:
            if _COMMAND.search(line) and "--" in line + (lines[i + 1] if i + 1 < len(lines) else ""):
                command = _command(conv, lines, i)
            elif "Test timed out before all requests could be completed" in line:
                timed_out = True
            elif _TRAILER.match(line) and orphan is None:
                orphan = i + 1
            continue
        if (stat := _STAT.match(line)) is not None and metric is not None and not current.in_totals:
            where = f"line {i + 1} ({metric} {stat.group(1)})"
            value = num(stat.group(2), where, conv)
            if metric in _KNOWN:
                name = stat.group(1)
                current.doc[f"results_{metric}_{'quantiles_' if name.startswith('p') else ''}{name}"] = value
                current.figures += 1
            elif stat.group(1) == "mean" and value is not None:
                current.notes.append(f"{metric} mean {value:.6g} (a fork's metric, not read)")
        elif (total := _TRAILER.match(line)) is not None:
            label, value = total.group(1), num(total.group(2), f"line {i + 1} ({total.group(1)})", conv)
            current.in_totals = True
            if label in _TRAILER_KEYS:
                current.doc[_TRAILER_KEYS[label]] = value
                current.figures += label != "Number Of Concurrent Workers"
            elif value is not None:
                current.notes.append(f"{label.lower()} {value:.6g}")
        elif line.strip() == "Error Code Frequency" and i + 1 < len(lines):
            current.doc["results_error_code_frequency"] = lines[i + 1].strip()[:200]
        elif (name := _METRIC.match(line)) is not None and not current.in_totals:
            metric = name.group(1)
    if orphan is not None:
        conv.warn(f"line {orphan}: LLMPerf totals without their 'Results for token benchmark for' header (a summary "
                  "pasted in part): not read")
    return sections


class LlmPerfImporter(Importer):
    NAME = "llmperf"
    TOOL = "LLMPerf"
    DESCRIPTION = ("ray-project LLMPerf *_summary.json or *_individual_responses.json, or the summary "
                   "token_benchmark_ray.py prints ('Results for token benchmark for ...')")

    def sniff(self, source: Source) -> bool:
        doc = source.json
        if doc is not None:
            return _is_summary(doc) or _is_responses(doc) or _is_keyed_summaries(doc)
        return _is_console(source)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        if doc is None:
            runs = self._console(conv)
        elif _is_keyed_summaries(doc) and not _is_summary(doc):
            check_run_count(conv, len(doc), "the summaries")
            runs = [self._summary(conv, summary, i, f"[{str(key)[:40]!r}]")
                    for i, (key, summary) in enumerate(doc.items())]
        else:
            runs = [self._summary(conv, doc) if isinstance(doc, dict) else self._responses(conv, doc)]
        if conv.hints.device is None:
            conv.warn("LLMPerf's files name neither the GPU nor the serving engine (it measures an endpoint)")
        return conv.document(runs)

    def _console(self, conv: Conversion) -> list[dict[str, Any]]:
        sections = _sections(conv, conv.source.text or "")
        check_run_count(conv, len(sections), "the 'Results for token benchmark' sections")
        kept = [s for s in sections if s.figures]
        for s in sections:
            if not s.figures:
                message = ("'Results for token benchmark for' is followed by no metric block ('ttft_s' and its "
                           "'p50 = ' lines) and no 'Overall Output Throughput:' line: paste the whole summary")
                if not kept:
                    raise conv.fail(f"line {s.line}", message)
                conv.warn(f"line {s.line}: {message}; that section was not imported")
        if not kept:
            raise conv.fail("(whole file)", "no 'Results for token benchmark for ... api.' line: not LLMPerf's summary")
        runs = []
        for index, s in enumerate(kept):
            concurrency = pos_int(s.doc.get("num_concurrent_requests"))
            lead = (f"LLMPerf console summary (line {s.line}, queried with the {s.api[:60]} api), "
                    + (f"{concurrency} concurrent requests" if concurrency else "concurrency not in the text"))
            runs.append(self._summary(conv, s.doc, index, lead=lead, extra=s.notes, where=f"line {s.line}"))
        if len({(r["config"].get("model"), r["config"].get("max_concurrency")) for r in runs}) < len(runs):
            for run, s in zip(runs, kept):  # sections alike in what they state are not known to be repeats
                run["config"]["tag"] = f"section at line {s.line}"
        return runs

    def _base(self, conv: Conversion, model: str | None, config: dict[str, Any], where: str,
              index: int = 0) -> dict[str, Any]:
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": conv.device(None, "gpu", where=f"{where} (LLMPerf measures an endpoint; it names no GPU)"),
            "config": conv.generation_config(model, **config),
        }

    def _summary(self, conv: Conversion, doc: dict[str, Any], index: int = 0, where: str = "",
                 lead: str | None = None, extra: list[str] | None = None) -> dict[str, Any]:
        def val(key: str) -> float | None:
            return num(doc.get(key), f"{where}{'.' if where else ''}{key}", conv)
        metrics: dict[str, Any] = {"energy_missing_reason": NO_ENERGY}
        for dist, stem in ((TTFT, "ttft_s"), (E2E, "end_to_end_latency_s")):
            for suffix, stat in _STATS:
                v = val(f"results_{stem}_{suffix}")
                if v is not None and v >= 0:
                    metrics[dist.stat(stat).name] = v * MS_PER_S
        completed, errors = val("results_num_completed_requests"), val("results_number_errors")
        metrics["tokens_per_s"] = positive(val("results_mean_output_throughput_token_per_s"))
        per_min = positive(val("results_num_completed_requests_per_min"))
        metrics["requests_per_s"] = per_min / 60 if per_min else None
        metrics["requests_completed"] = pos_int(completed)
        metrics["requests_failed"] = int(errors) if errors is not None and errors >= 0 else None
        metrics["prompt_tokens_mean"] = positive(val("results_number_input_tokens_mean"))
        metrics["output_tokens_mean"] = positive(val("results_number_output_tokens_mean"))
        status, error = "ok", None
        if completed is not None and completed <= 0:
            status, error = "failed", f"no request completed ({int(errors) if errors is not None else '?'} failed)"
            metrics = {"energy_missing_reason": NO_ENERGY, "requests_failed": metrics["requests_failed"]}
        concurrency = pos_int(doc.get("num_concurrent_requests"))
        inputs, outputs = positive(val("mean_input_tokens")), positive(val("mean_output_tokens"))
        sd_in, sd_out = num(doc.get("stddev_input_tokens")), num(doc.get("stddev_output_tokens"))
        config = {"load_kind": "concurrency" if concurrency else None, "max_concurrency": concurrency,
                  "prompt_tokens_requested": inputs, "output_tokens_requested": outputs,
                  "length_distribution": (f"normal: prompt mean {inputs:g} sd {_sd(sd_in)}, output mean {outputs:g} "
                                          f"sd {_sd(sd_out)}" if inputs and outputs else None),
                  "tag": clean_str(doc.get("framework")) and f"endpoint {clean_str(doc.get('framework'))}"[:200]}
        run = self._base(conv, clean_str(doc.get("model")), config, where or "(whole file)", index)
        itl = val("results_inter_token_latency_s_mean")
        notes = [lead or f"LLMPerf summary (results version {clean_str(doc.get('version')) or '?'}), "
                 f"{concurrency or '?'} concurrent requests", *(extra or ())]
        if itl is not None:
            notes.append(f"LLMPerf's inter_token_latency_s mean {itl * MS_PER_S:.3g} ms is end-to-end / output tokens "
                         "(the first token's wait included): not stored as ITL or TPOT")
        if (user := val("results_request_output_throughput_token_per_s_mean")) is not None:
            notes.append(f"per-user output {user:.4g} tokens/s (one request's rate, not the system's)")
        if (codes := clean_str(doc.get("results_error_code_frequency"))) not in (None, "{}"):
            notes.append(f"error codes {codes[:200]}")
        run.update(status=status, error=error, notes="; ".join(notes),
                   metrics={k: v for k, v in metrics.items() if v is not None})
        return run

    def _responses(self, conv: Conversion, doc: list[Any]) -> dict[str, Any]:
        check_run_count(conv, 1, "the responses")
        requests = llmperf_requests(conv, doc)  # every response kept as a request (issue 38)
        failed = sum(1 for r in requests if r.status == "failed")
        run = self._base(conv, None, {}, "(whole file)")
        run.update(status="ok", metrics={"energy_missing_reason": NO_ENERGY},
                   notes=(f"LLMPerf individual responses: {len(doc)} requests, {failed} with an error (left out of "
                          "the latencies); percentiles computed here over the successful requests; TPOT per request "
                          "= (end-to-end - TTFT) / (output tokens - 1); no throughput (the file holds no test "
                          "duration)"))
        if failed == len(requests):
            run.update(status="failed", error=f"no request completed ({failed} failed)")
            run["metrics"]["requests_failed"] = failed
            return run
        attach(run, requests, "LLMPerf")
        return run
