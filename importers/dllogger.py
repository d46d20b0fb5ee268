"""NVIDIA DeepLearningExamples dllogger output: `DLLL {json}` lines (JSON stream backend),
the same JSON without the prefix, stdout text (`DLL <time> - <step> key : value unit ...`)
and the older nvlog/raport JSON (`{"model": ..., "epoch": {...}, "iteration": {...}}`).

Throughput is the final summary figure (`training_sequences_per_second`, `train.total_ips`,
...). Precision: `amp`/`fp16` true -> fp16; otherwise unknown (fp32 and TF32 look the same).
The GPU model is not recorded: it comes from the path or --device.
"""

from __future__ import annotations

import json
import re
from datetime import UTC, datetime
from typing import Any

from importers.base import Conversion, Importer, Source, clean_str, num, pos_int, positive

_STDOUT = re.compile(r"^DLL \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d+ - (.*)$")
_PAIR = re.compile(r"([A-Za-z_][\w.]*) : (\S+)(?: (img/s|seq/s|tok/s|samples/s|s|ms))?")
_NAMESPACE = re.compile(r"(\w+)=('[^']*'|[^,()]+)")
THROUGHPUT_KEYS = (
    "training_sequences_per_second",
    "throughput_train",
    "train.total_ips",
    "total_ips",
    "train_throughput",
    "throughput",
    "inference_sequences_per_second",
    "throughput_val",
    "val.total_ips",
    "inference_throughput",
)


def _bool(value: Any) -> bool | None:
    if isinstance(value, bool):
        return value
    text = str(value).strip().strip("'").lower()
    return {"true": True, "false": False, "1": True, "0": False}.get(text)


class DlloggerImporter(Importer):
    NAME = "dllogger"
    TOOL = "NVIDIA dllogger"
    DESCRIPTION = "NVIDIA DeepLearningExamples dllogger: DLLL JSON lines, stdout text, nvlog JSON"

    def sniff(self, source: Source) -> bool:
        head = source.head
        if head.startswith("DLLL {") or "\nDLLL {" in head:
            return True
        if re.search(r"^DLL \d{4}-\d{2}-\d{2} ", head, re.MULTILINE):
            return True
        first = head.split("\n", 1)[0].strip()
        if first.startswith("{") and '"step"' in first and '"data"' in first and '"elapsedtime"' in first:
            return True
        doc = source.json
        return (
            isinstance(doc, dict)
            and "model" in doc
            and isinstance(doc.get("epoch"), dict)
            and isinstance(doc.get("iteration", doc.get("iter")), dict)
        )

    def convert(self, conv: Conversion) -> dict[str, Any]:
        text = conv.source.text or ""
        doc = conv.source.json
        if isinstance(doc, dict) and "epoch" in doc and "model" in doc:
            return self._nvlog(conv, doc)
        if re.search(r"^DLL \d{4}-", text[:65536], re.MULTILINE) and "DLLL {" not in text[:4096]:
            return self._stdout(conv, text)
        return self._json_lines(conv, text)

    # --- the three shapes ----------------------------------------------------------------------
    def _json_lines(self, conv: Conversion, text: str) -> dict[str, Any]:
        params: dict[str, Any] = {}
        summary: dict[str, Any] = {}
        first_ts = last_ts = None
        for lineno, line in enumerate(text.splitlines(), 1):
            line = line.strip()
            if not line:
                continue
            payload = line[5:] if line.startswith("DLLL ") else line
            if not payload.startswith("{"):
                continue
            try:
                entry = json.loads(payload)
            except (ValueError, RecursionError) as e:
                raise conv.fail(f"line {lineno}", f"dllogger entry is not valid JSON ({e})") from e
            if not isinstance(entry, dict) or not isinstance(entry.get("data"), dict):
                raise conv.fail(f"line {lineno}", "dllogger entry without a 'data' object")
            ts = num(entry.get("timestamp"))
            if ts is not None:
                first_ts = ts if first_ts is None else min(first_ts, ts)
                last_ts = ts if last_ts is None else max(last_ts, ts)
            step, data = entry.get("step"), entry["data"]
            if step == "PARAMETER":
                for key, value in data.items():
                    if key == "Config" and isinstance(value, list) and value:
                        params.update(dict(_NAMESPACE.findall(str(value[0]))))
                    else:
                        params.setdefault(key, value)
            elif step == [] or step == "" or (isinstance(step, list) and not step):
                summary.update(data)
        if not params and not summary:
            raise conv.fail("(whole file)", "no dllogger PARAMETER or summary entries")
        return conv.document([self._run(conv, params, summary, first_ts, last_ts)])

    def _stdout(self, conv: Conversion, text: str) -> dict[str, Any]:
        params: dict[str, Any] = {}
        summary: dict[str, Any] = {}
        for line in text.splitlines():
            m = _STDOUT.match(line.strip())
            if not m:
                continue
            body = m.group(1)
            if body.startswith("PARAMETER"):
                params.update({k: v for k, v, _ in _PAIR.findall(body)})
            elif body.startswith("Summary:"):
                summary.update({k: v for k, v, _ in _PAIR.findall(body)})
        if not summary:
            conv.warn("no 'Summary:' line (the run may have been cut short); throughput stays missing")
        return conv.document([self._run(conv, params, summary, None, None)])

    def _nvlog(self, conv: Conversion, doc: dict[str, Any]) -> dict[str, Any]:
        params = {k: v for k, v in doc.items() if not isinstance(v, (dict, list))}
        summary: dict[str, Any] = {}
        for section in ("run", "epoch"):
            block = doc.get(section)
            if isinstance(block, dict):
                for key, values in block.items():
                    if isinstance(values, list) and values:
                        summary.setdefault(key, values[-1])
                    elif not isinstance(values, (dict, list)):
                        summary.setdefault(key, values)
        params.setdefault("arch", doc.get("model"))
        return conv.document([self._run(conv, params, summary, None, None)])

    # --- mapping ---------------------------------------------------------------------------------
    def _run(
        self,
        conv: Conversion,
        params: dict[str, Any],
        summary: dict[str, Any],
        first_ts: float | None,
        last_ts: float | None,
    ) -> dict[str, Any]:
        throughput = None
        source_key = None
        for key in THROUGHPUT_KEYS:
            if key in summary:
                throughput = num(summary[key], f"summary {key}", conv)
                source_key = key
                break
        amp = _bool(params.get("amp"))
        fp16 = _bool(params.get("fp16"))
        precision = "fp16" if (amp or fp16) else None
        if "bf16" in params and _bool(params.get("bf16")):
            precision = "bf16"
        train = (
            any(
                k in summary
                for k in ("training_sequences_per_second", "train.total_ips", "throughput_train", "e2e_train_time")
            )
            or _bool(params.get("do_train"))
            or _bool(params.get("training_only"))
        )
        infer = source_key is not None and ("infer" in source_key or "val" in source_key)
        mode = conv.mode("infer" if infer and not train else ("train" if train else None))
        model = clean_str(
            params.get("bert_model") or params.get("arch") or params.get("model_name") or params.get("model")
        )
        model = model.strip("'") if model else None
        batch = (
            pos_int(params.get("batch_size_per_gpu"))
            or pos_int(params.get("batch_size"))
            or pos_int(params.get("train_batch_size"))
            or conv.hints.batch_size
        )
        accum = pos_int(params.get("gradient_accumulation_steps"))
        seq = pos_int(params.get("max_seq_length") or params.get("seq_length"))
        gpus = pos_int(params.get("n_gpu") or params.get("world_size") or params.get("num_gpus"))
        duration = positive(num(summary.get("e2e_train_time") or summary.get("e2e_inference_time")))
        metrics: dict[str, Any] = {"throughput_sps": positive(throughput), "duration_s": duration}
        if throughput is None:
            conv.warn("no summary throughput in the log")
        run: dict[str, Any] = {
            "run_id": conv.run_id(0),
            "status": "ok",
            "device": conv.device(None, "gpu", where="(whole file; dllogger does not record the GPU)"),
            "config": {
                "workload": conv.hints.workload or model or "unknown",
                "model": model,
                "mode": mode,
                "precision": conv.precision(precision),
                "batch_size": batch,
                "grad_accum_steps": accum,
                "seq_len": seq,
                "gpu_count": gpus,
            },
            "metrics": metrics,
            "notes": "dllogger summary: " + ", ".join(f"{k}={v}" for k, v in list(summary.items())[:12]),
        }
        if first_ts is not None and last_ts is not None and last_ts > first_ts:
            run["started_at"] = datetime.fromtimestamp(first_ts, UTC).isoformat()
            run["ended_at"] = datetime.fromtimestamp(last_ts, UTC).isoformat()
        return run
