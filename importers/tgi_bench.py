"""Hugging Face serving benchmarks: text-generation-inference's `text-generation-benchmark` printout and
huggingface/inference-benchmarker's results JSON.

`text-generation-benchmark` (text-generation-inference benchmark/src/{generation,app,table}.rs) prints three
Markdown tables after its TUI closes: the parameters (`Model` is the tokenizer, `Sequence Length` the prompt
tokens, `Decode Length` the output tokens), the latencies (`Prefill`, `Decode (token)`, `Decode (total)`, one row
per batch size, in ms) and the throughputs (`Prefill`, `Decode`, tokens/secs). tabled's vertical merge leaves
a repeated Step or Batch Size cell blank. One run per batch size, an offline batch straight to the server's
shards (no HTTP, no queue): `Decode` throughput is batch x decode steps / decode time, the first token and
the prefill left out (decode tokens/s, never output tokens/s); `Prefill` throughput is prompt tokens/s;
`Decode (token)` is the decode time over the decode steps, each request's (end-to-end - first token) /
(output tokens - 1): TPOT. Its p50/p90/p99 are read off a list sorted only when the TUI showed that batch
(p90 below p50 in published files), so only the average is stored. Prefill latency is the batch's prefill
alone (no queue, not a serving TTFT): notes only.

inference-benchmarker (src/writers.rs, results.rs, requests.rs) writes `{"config", "results": [...], "system"}`;
each result `id` (warmup, throughput, constant@R) with `executor_type` ConstantVUs (`config.max_vus`
concurrent users) or ConstantArrivalRate (`config.rate` requests/s), `token_throughput_secs` = generated
tokens / duration (output tokens/s of the whole server), `request_rate` = successful requests / duration,
`*_ms` objects {p50..p99, avg} in ms: `time_to_first_token_ms` (TTFT), `e2e_latency_ms` (end-to-end),
`inter_token_latency_ms`, each request's (last token - first token) / (tokens - 1): per request, so TPOT,
never ITL. The warmup result is skipped. `config.meta` may name the engine, its version, `tp` (the GPU
count) and the device. Neither tool measures energy.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import (
    Conversion,
    Importer,
    Source,
    as_dict,
    as_list,
    check_run_count,
    clean_str,
    num,
    pos_int,
    positive,
)
from joulebench.metrics import E2E, TPOT, TTFT

NO_ENERGY_TGI = "text-generation-benchmark does not measure energy"
NO_ENERGY_IB = "inference-benchmarker does not measure energy"
_PCTS = ("avg", "p50", "p90", "p95", "p99")
_TP = re.compile(r"tensor parallel[^\n]*?(\d+)\s*gpus?", re.IGNORECASE)


def _is_ib(doc: Any) -> bool:
    results = doc.get("results") if isinstance(doc, dict) else None
    return (isinstance(results, list) and bool(results) and isinstance(results[0], dict)
            and "token_throughput_secs" in results[0] and "executor_type" in results[0])


def _is_tgi(head: str) -> bool:
    return "| Decode (token)" in head and "tokens/secs" in head and "| Step" in head


def _cells(line: str) -> list[str]:
    return [c.strip() for c in line.strip().strip("|").split("|")]


class TgiBenchImporter(Importer):
    NAME = "tgi-bench"
    TOOL = "text-generation-inference benchmark"
    DESCRIPTION = ("text-generation-benchmark's printed tables (one run per batch size) or inference-benchmarker "
                   "results JSON (one run per benchmark)")

    def sniff(self, source: Source) -> bool:
        if _is_ib(source.json):
            return True
        return _is_tgi(source.head)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        if _is_ib(doc):
            return self._benchmarker(conv, doc)
        return self._tgi(conv, conv.source.text or "")

    # --- text-generation-benchmark ------------------------------------------------------------
    def _tgi(self, conv: Conversion, text: str) -> dict[str, Any]:
        params: dict[str, str] = {}
        rows: dict[int, dict[str, tuple[int, list[str]]]] = {}  # batch -> step -> (line, cells)
        header: list[str] = []
        step, batch = "", None
        for lineno, line in enumerate(text.splitlines(), 1):
            if not line.lstrip().startswith("|") or set(line.strip()) <= {"|", "-", " ", ":"}:
                continue
            cells = _cells(line)
            if cells[:2] in (["Parameter", "Value"], ["Step", "Batch Size"]) or cells[0] == "Step":
                header, step, batch = cells, "", None
                continue
            if header[:2] == ["Parameter", "Value"] and len(cells) >= 2:
                params.setdefault(cells[0], cells[1])
                continue
            if not header or header[0] != "Step" or len(cells) < 3:
                continue
            step = cells[0] or step
            if cells[1]:
                b = pos_int(cells[1])
                if b is None:
                    raise conv.fail(f"line {lineno}: Batch Size", f"{cells[1][:30]!r} is not a whole number: "
                                    "import the tables as text-generation-benchmark printed them")
                batch = b
            if batch is None or not step:
                raise conv.fail(f"line {lineno}", "a row before any step and batch size: import the tables as "
                                "text-generation-benchmark printed them")
            table = "latency" if "p50" in header else "throughput"
            rows.setdefault(batch, {}).setdefault(f"{table} {step}", (lineno, cells))
        if not rows:
            raise conv.fail("(whole file)", "no latency or throughput table rows ('| Prefill | 1 | ... ms |')")
        check_run_count(conv, len(rows), "the batch sizes")
        model = clean_str(params.get("Model"))
        seq, dec = pos_int(params.get("Sequence Length")), pos_int(params.get("Decode Length"))
        tp = _TP.search(text)
        gpus = int(tp.group(1)) if tp and 0 < int(tp.group(1)) <= 100_000 else None
        runs = []
        for i, (batch, steps) in enumerate(sorted(rows.items())):
            def avg(name: str, unit: str, steps: dict[str, tuple[int, list[str]]] = steps) -> float | None:
                if name not in steps:
                    return None
                lineno, cells = steps[name]
                text = cells[2]
                if not text.endswith(unit):
                    raise conv.fail(f"line {lineno}: {name.split(' ', 1)[1]} Average",
                                    f"{text[:30]!r} is not in {unit}: import the tables as "
                                    "text-generation-benchmark printed them")
                return num(text[: -len(unit)].strip(), f"line {lineno}: {name.split(' ', 1)[1]} Average", conv)

            metrics: dict[str, Any] = {"energy_missing_reason": NO_ENERGY_TGI}
            metrics["decode_tokens_per_s"] = positive(avg("throughput Decode", "tokens/secs"))
            metrics["prompt_tokens_per_s"] = positive(avg("throughput Prefill", "tokens/secs"))
            if (tpot := avg("latency Decode (token)", "ms")) is not None and tpot >= 0:
                metrics[TPOT.avg.name] = tpot
            notes = [f"text-generation-benchmark, batch {batch}, straight to the shards (no HTTP server, no queue)"]
            if (prefill := avg("latency Prefill", "ms")) is not None:
                notes.append(f"prefill of the batch {prefill:g} ms (not a serving TTFT)")
            if (total := avg("latency Decode (total)", "ms")) is not None:
                notes.append(f"decode total {total:g} ms")
            notes.append("Decode (token) p50/p90/p99 not stored (read off an unsorted list unless the TUI showed it)")
            runs.append({
                "run_id": conv.run_id(i),
                "status": "ok",
                "device": conv.device(None, "gpu", where="(text-generation-benchmark names no GPU)"),
                "config": conv.generation_config(model[:200] if model else None, batch_size=batch, load_kind="batch",
                                                 gpu_count=gpus, engine="text-generation-inference",
                                                 prompt_tokens_requested=seq, output_tokens_requested=dec),
                "metrics": {k: v for k, v in metrics.items() if v is not None},
                "notes": "; ".join(notes),
            })
        return conv.document(runs)

    # --- inference-benchmarker ----------------------------------------------------------------
    def _benchmarker(self, conv: Conversion, doc: dict[str, Any]) -> dict[str, Any]:
        config = as_dict(doc.get("config"))
        meta = as_dict(config.get("meta"))
        results = as_list(doc.get("results"))
        check_run_count(conv, len(results), "the results")
        model = clean_str(config.get("model_name")) or clean_str(config.get("tokenizer"))
        engine = clean_str(meta.get("engine"))
        conv.tool_version = None
        gpus = pos_int(meta.get("tp"))
        device_name = clean_str(meta.get("device"))
        runs = []
        skipped = []
        for i, r in enumerate(results):
            where = f"results[{i}]"
            if not isinstance(r, dict):
                raise conv.fail(where, "expected a result object: import the file as inference-benchmarker wrote it")
            rid = clean_str(r.get("id")) or "?"
            if rid == "warmup":
                skipped.append(rid)
                continue
            runs.append(self._ib_run(conv, i, where, r, rid, model, engine, meta, gpus, device_name))
        if skipped:
            conv.warn("the warmup benchmark is left out (inference-benchmarker's own warm-up)")
        if not runs:
            raise conv.fail("results", "only a warmup benchmark: no measured result to import")
        return conv.document(runs)

    def _ib_run(self, conv: Conversion, i: int, where: str, r: dict[str, Any], rid: str, model: str | None,
                engine: str | None, meta: dict[str, Any], gpus: int | None, device_name: str | None) -> dict[str, Any]:
        def val(key: str) -> float | None:
            return num(r.get(key), f"{where}.{key}", conv)

        ok = val("successful_requests")
        failed = val("failed_requests")
        metrics: dict[str, Any] = {"energy_missing_reason": NO_ENERGY_IB}
        status, error = "ok", None
        if ok is not None and ok <= 0:
            status, error = "failed", f"no request succeeded ({int(failed) if failed is not None else '?'} failed)"
        else:
            metrics["tokens_per_s"] = positive(val("token_throughput_secs"))
            metrics["requests_per_s"] = positive(val("request_rate"))
            metrics["requests_completed"] = pos_int(ok)
            duration_ms = positive(val("duration_ms"))
            metrics["duration_s"] = duration_ms / 1e3 if duration_ms else None
            sent, out = positive(val("total_tokens_sent")), positive(val("total_tokens"))
            if ok:
                metrics.update(prompt_tokens_mean=sent / ok if sent else None,
                               output_tokens_mean=out / ok if out else None)
            for key, dist in (("time_to_first_token_ms", TTFT), ("e2e_latency_ms", E2E),
                              ("inter_token_latency_ms", TPOT)):
                block = as_dict(r.get(key))
                for s in _PCTS:
                    v = num(block.get(s), f"{where}.{key}.{s}", conv)
                    if v is not None and v >= 0:
                        metrics[dist.stat(s).name] = v
        metrics["requests_failed"] = int(failed) if failed is not None and failed >= 0 else None
        cfg = as_dict(r.get("config"))
        kind = clean_str(r.get("executor_type"))
        rate = positive(num(cfg.get("rate")))
        vus = pos_int(cfg.get("max_vus"))
        load: dict[str, Any] = {"load_kind": None, "request_rate_per_s": None, "max_concurrency": vus, "arrival": None}
        if kind == "ConstantArrivalRate" and rate:
            load.update(load_kind="rate", request_rate_per_s=rate, arrival="constant")
        elif kind == "ConstantVUs" and vus:
            load.update(load_kind="concurrency")
        notes = [f"inference-benchmarker {rid} ({kind or 'executor not stated'})",
                 "inter_token_latency_ms is per request (last token - first token) / (tokens - 1): stored as TPOT"]
        return {
            "run_id": conv.run_id(i),
            "status": status,
            "error": error,
            "device": conv.device(device_name, "gpu", where=f"{where} (config.meta names no device)"),
            "config": conv.generation_config(model[:200] if model else None, gpu_count=gpus,
                                             engine=engine[:200] if engine else None,
                                             engine_version=clean_str(meta.get("version")), **load),
            "metrics": {k: v for k, v in metrics.items() if v is not None},
            "notes": "; ".join(notes),
        }
