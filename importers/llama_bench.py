"""llama.cpp `llama-bench` results in every output mode: `-o json` (an array of test objects), `-o jsonl`
(one object a line), `-o csv` (a header and one quoted row a test), `-o md` (the default table), and the
md table inside a log, with the device lines ggml prints before it.

Learned from the writer (tools/llama-bench/llama-bench.cpp, `struct test` and its printers):
- each test object (or row) is one test of one configuration: `n_prompt`, `n_gen`, `n_depth` (tokens
  already in the context), `n_batch` / `n_ubatch`, `n_threads`, `n_gpu_layers`, `type_k` / `type_v` (KV
  cache), `flash_attn`, `split_mode`, ..., repeated `-r` times (`samples_ns`), with `avg_ts` = mean over the
  repetitions of (n_prompt + n_gen) / time;
- so a `pp` test (n_prompt > 0, n_gen 0) gives prompt tokens/s, a `tg` test (n_gen > 0, n_prompt 0) gives
  generated (output) tokens/s of one sequence, and a `pp+tg` test (-pg) gives prompt and generated tokens
  together per second, which is neither: it is kept in the notes only;
- `model_type` is llama.cpp's model description "<arch> <size> <file type>", e.g. "qwen2 7B Q4_K - Medium":
  its file type is the weights' quantisation (q4_K_M), not a precision; F16 / BF16 / F32 weights are;
- `gpu_info` names the GPUs (", "-joined; empty on a CPU), `backends` the ggml backends (CUDA, Vulkan, ...);
  the md table names only the backend: its GPU comes from the log lines before it (`ggml_vulkan: 0 = <name>
  (<driver>) | ...`, `ggml_cuda_init: found N CUDA devices:` then `  Device 0: <name>, compute capability`);
- the md footer `build: <commit> (<number>)` is the llama.cpp version.
llama-bench measures no energy.

llama-benchy (a llama-bench-style tool for OpenAI-compatible servers) prints the same md table with more columns
after t/s (`peak t/s`, `ttfr (ms)`, `est_ppt (ms)`, `e2e_ttft (ms)`, each `mean ± sd` over its runs): read the same
way (t/s's mean; the test and depth in the tag), with `e2e_ttft`'s mean as the mean time to first token and no engine
(the server it measured is not named in the table). Its JSON report (`--save-result`, schemas/
benchmark_report_schema.json: `benchmarks[]` of `concurrency`, `context_size`, `prompt_size`, `response_size`, each
figure `{mean, std, values}`) gives the same two tests per entry: `pp_throughput` (prefill tokens/s, all requests
together) and `tg_throughput` (generation tokens/s, all requests together; the `_req_` figures are per request and
not read), at the entry's concurrency.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import Conversion, Importer, Source, check_run_count, clean_str, num, read_csv
from importers.sglang_bench import read_jsonl

NO_ENERGY = "llama-bench does not measure energy"
REQUIRED = ("n_prompt", "n_gen", "avg_ts")
# llama-benchy (llama-bench's table for OpenAI endpoints) adds columns after t/s: peak t/s, ttfr (ms), est_ppt (ms),
# e2e_ttft (ms), each 'mean ± sd' over the runs, blank where a test has none (a tg test has no time to first token)
MD_HEADER = re.compile(r"^\s*\|\s*model\s*\|(?:.*\|)?\s*test\s*\|\s*t/s\s*\|(?:[^|]*\|){0,8}\s*$")
BENCHY_COLUMNS = ("peak t/s", "ttfr (ms)", "est_ppt (ms)", "e2e_ttft (ms)")
MD_RULE = re.compile(r"^\s*\|(\s*:?-+:?\s*\|)+\s*$")
TEST = re.compile(r"^(?:pp\s*(\d+))?(?:\+)?(?:tg\s*(\d+))?(?:\s*@\s*d(\d+))?$")
TS = re.compile(r"^([0-9.]+(?:[eE][-+]?\d+)?)(?:\s*±\s*([0-9.]+(?:[eE][-+]?\d+)?))?$")
VULKAN_DEVICE = re.compile(r"^ggml_vulkan:\s*(\d+)\s*=\s*(.+?)\s*(?:\|.*)?$")
VULKAN_FOUND = re.compile(r"^ggml_vulkan:\s*Found\s+\d+\s+Vulkan devices")
CUDA_FOUND = re.compile(r"^ggml_cuda_init:\s*found\s+\d+\s+\w+\s+devices")
CUDA_DEVICE = re.compile(r"^\s*Device\s+(\d+):\s*([^,]+),")
SHARD = re.compile(r"-\d{5}-of-\d{5}$")
HEADING = re.compile(r"^\s{0,3}(?:#{1,6}|={3,})\s+(.*?[A-Za-z].*?)\s*(?:#{1,6}|={3,})?\s*$")  # '### GPU 0 ONLY ###'
BUILD = re.compile(r"^\s*build:\s*(\S+)\s*\((\d+)\)\s*$")
# llama.cpp's file-type names (llama_model_ftype_name) -> the short name its files and tools use
FTYPE_SUFFIX = {"small": "S", "medium": "M", "large": "L", "extra small": "XS", "extra extra small": "XXS"}
FLOAT_WEIGHTS = {"f32": "fp32", "f16": "fp16", "bf16": "bf16"}
MD_COLUMNS = {"ngl": "n_gpu_layers", "threads": "n_threads", "fa": "flash_attn", "sm": "split_mode",
              "nkvo": "no_kv_offload", "dev": "devices", "ts": "tensor_split", "mmap": "use_mmap"}


def quantisation_of(model_type: str | None, filename: str | None = None) -> tuple[str | None, str | None]:
    """(quantization, precision) from llama.cpp's model description: 'llama 7B mostly Q4_0' -> ('q4_0', None),
    'qwen2 7B Q4_K - Medium' -> ('q4_K_M', None), 'llama 8B F16' -> (None, 'fp16'); else from a GGUF name."""
    text = (model_type or "").replace("mostly ", "")
    m = re.search(r"\b(I?Q\d\w*|MXFP4|NVFP4|TQ\d_\d|F16|BF16|F32)\b(?:\s*-\s*([A-Za-z ]+?)(?:\s*$|\s+\d))?", text)
    if m is None and filename:
        m = re.search(r"(?i)[-_.](I?Q\d_?[A-Z0-9_]*|MXFP4|BF16|F16|F32)(?=\.gguf$|[-.])", filename)
        if m is None:
            return None, None
        name = m.group(1)
        if name.lower() in FLOAT_WEIGHTS:
            return None, FLOAT_WEIGHTS[name.lower()]
        return name[0].lower() + name[1:] if name[0] in "Qq" else name.lower()[:2] + name[2:], None
    if m is None:
        return None, None
    base, size = m.group(1), (m.group(2) or "").strip().lower()
    if base.lower() in FLOAT_WEIGHTS:
        return None, FLOAT_WEIGHTS[base.lower()]
    if base.upper() in ("MXFP4", "NVFP4"):
        return base.lower(), None
    suffix = FTYPE_SUFFIX.get(size)
    short = base[:2].lower() + base[2:] if base.startswith("IQ") else base[0].lower() + base[1:]
    return (f"{short}_{suffix}" if suffix else short)[:200], None


def _is_test(obj: Any) -> bool:
    return isinstance(obj, dict) and all(k in obj for k in REQUIRED) and ("model_type" in obj or "build_commit" in obj)


def _is_benchy(doc: Any) -> bool:
    return (isinstance(doc, dict) and isinstance(doc.get("benchmarks"), list) and "latency_mode" in doc
            and "max_concurrency" in doc)


def _benchy_tests(conv: Conversion, doc: dict[str, Any]) -> list[tuple[str, dict[str, Any]]]:
    """llama-benchy's JSON report as test dicts: a pp and a tg test per benchmark entry that measured them."""
    conv.tool_version = conv.tool_version or clean_str(doc.get("version"))
    out: list[tuple[str, dict[str, Any]]] = []
    for i, b in enumerate(doc["benchmarks"]):
        if not isinstance(b, dict):
            raise conv.fail(f"benchmarks[{i}]", "expected a benchmark object")

        def mean(key: str, b: dict[str, Any] = b) -> tuple[Any, Any, int]:
            figure = b.get(key)
            if not isinstance(figure, dict):
                return None, None, 0
            values = figure.get("values")
            return figure.get("mean"), figure.get("std"), len(values) if isinstance(values, list) else 0

        common = {"tool": "llama-benchy", "model_filename": doc.get("model"), "concurrency": b.get("concurrency"),
                  "n_depth": b.get("context_size") or 0, "context_phase": b.get("is_context_prefill_phase") is True}
        pp, pp_sd, pp_n = mean("pp_throughput")
        if pp is not None:
            ttft = mean("e2e_ttft")[0]
            out.append((f"benchmarks[{i}].pp_throughput", {**common, "n_prompt": b.get("prompt_size"), "n_gen": 0,
                                                           "avg_ts": pp, "stddev_ts": pp_sd, "repetitions": pp_n,
                                                           "e2e_ttft_ms": ttft}))
        tg, tg_sd, tg_n = mean("tg_throughput")
        if tg is not None:
            out.append((f"benchmarks[{i}].tg_throughput", {**common, "n_prompt": 0, "n_gen": b.get("response_size"),
                                                           "avg_ts": tg, "stddev_ts": tg_sd, "repetitions": tg_n}))
    if not out:
        raise conv.fail("benchmarks", "no entry with pp_throughput or tg_throughput")
    return out


def _md_start(text: str) -> bool:
    return any(MD_HEADER.match(line) for line in text.splitlines()[:400])


class LlamaBenchImporter(Importer):
    NAME = "llama-bench"
    TOOL = "llama.cpp llama-bench"
    DESCRIPTION = ("llama.cpp llama-bench -o json / jsonl / csv / md output (also its md table inside a log), and "
                   "llama-benchy's md table")

    def sniff(self, source: Source) -> bool:
        doc = source.json
        if isinstance(doc, list):
            return bool(doc) and all(_is_test(d) for d in doc[:3])
        if isinstance(doc, dict):
            return _is_test(doc) or _is_benchy(doc)
        head = source.head
        first = head.lstrip().split("\n", 1)[0]
        if first.startswith("{"):
            rows = read_jsonl(first)
            return bool(rows) and _is_test(rows[0][1])
        header = first.replace('"', "").split(",")
        if all(k in header for k in (*REQUIRED, "model_type")):
            return True
        return _md_start(head)

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        text = conv.source.text or ""
        if _is_benchy(doc):
            tests = _benchy_tests(conv, doc)  # type: ignore[arg-type]
        elif isinstance(doc, (list, dict)):
            tests = [(f"[{i}]", t) for i, t in enumerate(doc if isinstance(doc, list) else [doc])]
        elif text.lstrip().startswith("{"):
            tests = [(f"line {n}", t) for n, t in read_jsonl(text, conv)]
        elif _md_start(text):
            tests = self._markdown(conv, text)
        else:
            tests = self._csv(conv, text)
        check_run_count(conv, len(tests), "the tests")
        runs = [self._run(conv, t, i, where) for i, (where, t) in enumerate(tests)]
        return conv.document(runs)

    # --- the four layouts, each to (where, test dict with the JSON printer's field names) -------------------
    def _csv(self, conv: Conversion, text: str) -> list[tuple[str, dict[str, Any]]]:
        header, rows = read_csv(conv, text)
        missing = [k for k in (*REQUIRED, "model_type") if k not in header]
        if missing:
            raise conv.fail("line 1", f"no {', '.join(missing)} column: not llama-bench -o csv output")
        out = []
        for line, cells in rows:
            if len(cells) != len(header):
                raise conv.fail(f"line {line}", f"{len(cells)} cells under a header of {len(header)} columns: the row "
                                "and the header do not match (a column added or lost); export the file again with "
                                "the same llama-bench build that wrote the header")
            out.append((f"line {line}", dict(zip(header, cells, strict=True))))
        return out

    def _markdown(self, conv: Conversion, text: str) -> list[tuple[str, dict[str, Any]]]:
        out: list[tuple[str, dict[str, Any]]] = []
        devices: dict[int, str] = {}
        header: list[str] | None = None
        table_start = 0
        heading = None
        for n, raw in enumerate(text.splitlines(), 1):
            line = raw.rstrip()
            if header is None and (h := HEADING.match(line)) is not None:
                heading = h.group(1)[:80]
            if VULKAN_FOUND.match(line) or CUDA_FOUND.match(line):
                devices = {}
            elif (m := VULKAN_DEVICE.match(line)) or (m := CUDA_DEVICE.match(line)):
                devices[int(m.group(1))] = re.sub(r"(\s*\([^()]*\))+$", "", m.group(2)).strip()
            if MD_HEADER.match(line):
                header = [c.strip() for c in line.strip().strip("|").split("|")]
                table_start = len(out)
                continue
            if (b := BUILD.match(line)) is not None:  # the footer of the table above
                for _, t in out[table_start:]:
                    t.update(build_commit=b.group(1), build_number=b.group(2))
                header = None
                continue
            if header is None or MD_RULE.match(line):
                continue
            if line.lstrip().startswith("|"):
                cells = [c.strip() for c in line.strip().strip("|").split("|")]
                if len(cells) != len(header):
                    raise conv.fail(f"line {n}", f"{len(cells)} cells under a table header of {len(header)} columns: "
                                    "keep llama-bench's table as it printed it")
                row = dict(zip(header, cells, strict=True))
                out.append((f"line {n}", self._md_test(conv, row, f"line {n}", dict(devices)) | {"section": heading}))
            elif line.strip():
                header = None  # the table ended
        if not out:
            raise conv.fail("(whole file)", "a llama-bench table header but no test row under it")
        if len({t["section"] for _, t in out}) == 1:  # one heading over every table: no setup of its own
            for _, t in out:
                del t["section"]
        return out

    @staticmethod
    def _md_test(conv: Conversion, row: dict[str, str], where: str, devices: dict[int, str]) -> dict[str, Any]:
        m = TEST.match(row["test"].strip())
        ts = TS.match(row["t/s"].strip())
        if m is None or not (m.group(1) or m.group(2)):
            raise conv.fail(f"{where}: test", f"{row['test'][:40]!r} is not a llama-bench test (ppN, tgN or ppN+tgN, "
                            "optionally ' @ dN')")
        if ts is None:
            raise conv.fail(f"{where}: t/s", f"{row['t/s'][:40]!r} is not 'tokens/s ± sd'")
        test: dict[str, Any] = {
            "model_type": row.get("model"), "backends": row.get("backend"),
            "n_prompt": int(m.group(1) or 0), "n_gen": int(m.group(2) or 0), "n_depth": int(m.group(3) or 0),
            "avg_ts": ts.group(1), "stddev_ts": ts.group(2),
            "gpu_info": ", ".join(devices[k] for k in sorted(devices)) if devices else None,
        }
        if any(c in row for c in BENCHY_COLUMNS):  # llama-benchy against a server: its engine is not stated
            test["tool"] = "llama-benchy"
            ttft = TS.match(row.get("e2e_ttft (ms)", "").strip())
            test["e2e_ttft_ms"] = ttft.group(1) if ttft else None
        for column, value in row.items():
            if column not in ("model", "size", "params", "backend", "test", "t/s"):
                test[MD_COLUMNS.get(column, column)] = value
        return test

    # --- one test -> one run ------------------------------------------------------------------------------
    def _run(self, conv: Conversion, t: Any, index: int, where: str) -> dict[str, Any]:
        if not isinstance(t, dict):
            raise conv.fail(where, "expected a llama-bench test object")

        def whole(key: str) -> int | None:
            v = num(t.get(key), f"{where}.{key}", conv)
            if v is not None and v != int(v):
                raise conv.fail(f"{where}.{key}", f"{t.get(key)!r} is not a whole number")
            return None if v is None else int(v)

        n_prompt, n_gen, depth = whole("n_prompt") or 0, whole("n_gen") or 0, whole("n_depth") or 0
        if n_prompt < 0 or n_gen < 0 or depth < 0 or n_prompt + n_gen == 0:
            raise conv.fail(where, f"n_prompt {t.get('n_prompt')!r} and n_gen {t.get('n_gen')!r}: one of them must be "
                            "a positive token count, as llama-bench writes them")
        avg = num(t.get("avg_ts"), f"{where}.avg_ts", conv)
        if avg is None or avg <= 0:
            raise conv.fail(f"{where}.avg_ts", f"{t.get('avg_ts')!r}: no positive tokens/s")
        sd = num(t.get("stddev_ts"))
        model_type = clean_str(t.get("model_type"))
        filename = clean_str(t.get("model_filename"))
        # a split GGUF's first file ('...-00001-of-00003.gguf'): the shard's number is not the model's name
        model = (SHARD.sub("", re.sub(r"(?i)\.gguf$", "", filename.replace("\\", "/").rsplit("/", 1)[-1]))
                 if filename else model_type)
        quantization, weights = quantisation_of(model_type, filename)
        backend = clean_str(t.get("backends"))
        gpus = [g.strip() for g in (clean_str(t.get("gpu_info")) or "").split(",") if g.strip()]
        cpu = clean_str(t.get("cpu_info"))
        on_cpu = not gpus and (backend or "CPU").upper() in ("CPU", "BLAS") and cpu is not None
        device = conv.device(gpus[0] if gpus else (cpu if on_cpu else None), "cpu" if on_cpu else "gpu",
                             where=f"{where} (gpu_info is empty and no ggml device line precedes the table)")
        kind = "pp+tg" if n_prompt and n_gen else ("pp" if n_prompt else "tg")
        name = {"pp": f"pp{n_prompt}", "tg": f"tg{n_gen}", "pp+tg": f"pp{n_prompt}+tg{n_gen}"}[kind]
        name = ("ctx_" if t.get("context_phase") else "") + name + (f" @ d{depth}" if depth else "")
        concurrency = whole("concurrency")
        settings = [(label, clean_str(t.get(key))) for label, key in (
            ("ngl", "n_gpu_layers"), ("threads", "n_threads"), ("n_batch", "n_batch"), ("n_ubatch", "n_ubatch"),
            ("fa", "flash_attn"), ("kv", "type_k"), ("sm", "split_mode"), ("ot", "tensor_buft_overrides"),
            ("n_cpu_moe", "n_cpu_moe"), ("ts", "tensor_split"), ("dev", "devices"))]
        kv = f"{clean_str(t.get('type_k')) or '?'}/{clean_str(t.get('type_v')) or '?'}" if t.get("type_k") else None
        shown = [f"{label} {kv if label == 'kv' else v}" for label, v in settings
                 if v is not None and v not in ("none", "auto", "0.00") and not (label == "n_cpu_moe" and v == "0")]
        section = clean_str(t.get("section"))  # '### GPU 1 ONLY ###' over one of a file's tables: its own setup
        tag = ", ".join([name, *shown, *([backend] if backend else []), *([section] if section else [])])
        benchy = t.get("tool") == "llama-benchy"
        metrics: dict[str, Any] = {"energy_missing_reason": NO_ENERGY.replace("llama-bench", "llama-benchy")
                                   if benchy else NO_ENERGY}
        ttft = num(t.get("e2e_ttft_ms"), f"{where}.e2e_ttft (ms)", conv) if benchy else None
        if ttft is not None:
            metrics["ttft_avg_ms"] = ttft  # the mean over the runs of the time to the first generated token
        if kind == "pp":
            metrics["prompt_tokens_per_s"] = avg
        elif kind == "tg":
            metrics["tokens_per_s"] = avg
        commit, build = clean_str(t.get("build_commit")), clean_str(t.get("build_number"))
        samples = t.get("samples_ns") if isinstance(t.get("samples_ns"), list) else [None] * (t.get("repetitions") or 0)
        tool = "llama-benchy" if benchy else "llama-bench"
        notes = [f"{tool} {name}" + (f" ({len(samples)} repetitions)" if samples else "")
                 + f": {avg:g} ± {sd or 0:g} tokens/s, "
                 + {"pp": "prompt tokens processed per second (stored as prompt tokens/s)",
                    "tg": (f"tokens generated per second by {concurrency} concurrent requests together"
                           if concurrency and concurrency > 1 else "tokens generated per second for one sequence")
                          + " (stored as output tokens/s)",
                    "pp+tg": "prompt and generated tokens together per second: neither prompt nor output tokens/s, "
                             "not stored as either"}[kind]]
        if depth:
            notes.append(f"{depth} tokens already in the context")
        if len(gpus) > 1:
            notes.append(f"{len(gpus)} devices: {', '.join(gpus)}"[:300])
        if quantization:
            notes.append(f"weights {model_type or filename} (quantisation {quantization}; precision not stated)"[:300])
        config = {
            "workload": conv.hints.workload or (model or "llama-bench")[:200], "model": model and model[:200],
            "task": "text-generation", "mode": "infer", "precision": conv.precision(weights),
            "quantization": quantization, "batch_size": conv.hints.batch_size or (None if concurrency else 1),
            "load_kind": "concurrency" if concurrency else "batch", "max_concurrency": concurrency,
            "engine": None if benchy else "llama.cpp",
            "engine_version": (f"{commit} ({build})" if commit and build else commit),
            "prompt_tokens_requested": n_prompt or None, "output_tokens_requested": n_gen or None,
            "max_new_tokens": n_gen or None, "length_distribution": "fixed",
            "gpu_count": len(gpus) or None, "tag": tag[:200],
        }
        if config["precision"] is None and quantization:
            conv.unstated.setdefault("precision", f"({where} states weights {quantization}, a quantisation, and no "
                                                  "compute dtype)")
        return {"run_id": conv.run_id(index), "status": "ok", "device": device,
                "config": {k: v for k, v in config.items() if v is not None},
                "metrics": metrics, "notes": "; ".join(notes)}

