"""NVIDIA DeepLearningExamples dllogger output: `DLLL {json}` lines (JSON stream backend, with
METADATA lines declaring units), the same JSON without the prefix, stdout text
(`DLL <time> - <step> key : value unit ...`) and the older (NVLOGGER 0.2.x, 2019) column-oriented
nvlog JSON (`{"run": {gpu_info, args}, "epoch": {x, metric: [...]}, "iter": {x, metric: [[...]]}}`).

Throughput is the final summary figure: the step `[]` (printed `()` or `Summary:` on stdout), or the string
steps of inference scripts (`"avg"`, with `"90%"`, `"95%"`, `"99%"` for latency percentiles). A log without a
summary (a training run cut short) whose iterations each give a rate and their own time (FastPitch's
`train_frames/s` with `took`) gets the rate over those iterations, as the script's own epoch average computes
it: frames / time = sum(rate x took) / sum(took); the run's duration is then the iterations' time. The
duration of a run with a summary is its stated run time (`e2e_train_time`, Tacotron2's `run_time`, SSD's
`total time`). The unit comes from METADATA
(`images/s` -> images) or the metric's name (`sequences_per_second`; FastPitch `frames/s` are mel
frames); items of unknown kind are kept as "unit not stated". Precision: `amp`/`fp16` true -> fp16;
otherwise unknown (fp32 and TF32 look the same). Only the old nvlog records the GPUs (`gpu_info`,
the visible ones; the run used `args.world_size`); otherwise the GPU comes from the path or --device.
"""

from __future__ import annotations

import json
import re
import statistics
from datetime import UTC, datetime
from typing import Any

from importers.base import Conversion, Importer, Source, as_dict, as_list, clean_str, num, pos_int, positive

_STDOUT = re.compile(r"^DLLL? \d{4}-\d{2}-\d{2} \d{2}:\d{2}:\d{2}\.\d+ - (.*)$")  # prefix DLL (or DLLL)
_PAIR = re.compile(r"([A-Za-z_][\w.]*) : (\S+)(?: (img/s|seq/s|tok/s|samples/s|s|ms))?")
_SPACED_PAIR = re.compile(r"([A-Za-z_][\w./ ]*?) : (\S+)")  # keys with spaces ('total time'), as SSD logs them
_STEPLESS = re.compile(r"^[A-Za-z_][\w.]* : \S")  # the body begins with a figure: no step printed
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
    "generator_frames/s",
    "train_frames/s",
    "frames/s",
    "train_epoch_avg_items/sec",
    "train_epoch_items/sec",
    "tacotron2_items_per_sec",
    "train_items_per_sec",
    "train.throughput",
    "waveglow_samples/s",
    "hifigan_samples/s",
    "samples/s",
)
# speech synthesis inference (FastPitch, Tacotron2) logs each stage's own throughput and latency:
# '<stage>_frames/s' or '<stage>_samples/s' with '<stage>_latency', and the end-to-end 'samples/s' with 'latency'
STAGES = ("generator", "fastpitch", "tacotron2", "waveglow", "hifigan")
# the unit of a throughput metric named without METADATA: sample unit, or None for "unit not stated"
NAME_UNITS = {"sequences_per_second": "sequence", "_ips": "image", "frames/s": "frame", "items": None}
DURATION_KEYS = ("e2e_train_time", "e2e_inference_time", "run_time", "total time", "train_time", "training_time")
# per-iteration rates an iteration's own time ('took', seconds) turns into a count: a cut-short log's throughput
ITERATION_RATES = ("train_frames/s", "train_items_per_sec", "train_samples/s", "frames/s")
ITERATION_TIMES = ("took", "train_iter_time", "iter_time")
PERCENTILE_STEPS = {"90%": "latency_p90_ms", "95%": "latency_p95_ms", "99%": "latency_p99_ms"}


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
        if re.search(r"^DLLL? \d{4}-\d{2}-\d{2} ", head, re.MULTILINE):
            return True
        first = head.split("\n", 1)[0].strip()
        if first.startswith("{") and '"step"' in first and '"data"' in first and '"elapsedtime"' in first:
            return True
        doc = source.json
        return (
            isinstance(doc, dict)
            and ("model" in doc or isinstance(doc.get("run"), dict))
            and isinstance(doc.get("epoch"), dict)
            and isinstance(doc.get("iteration", doc.get("iter")), dict)
        )

    def convert(self, conv: Conversion) -> dict[str, Any]:
        text = conv.source.text or ""
        doc = conv.source.json
        if isinstance(doc, dict) and "epoch" in doc and ("model" in doc or "run" in doc):
            return self._nvlog(conv, doc)
        if re.search(r"^DLLL? \d{4}-", text[:65536], re.MULTILINE) and "DLLL {" not in text[:4096]:
            return self._stdout(conv, text)
        return self._json_lines(conv, text)

    # --- the three shapes ----------------------------------------------------------------------
    def _json_lines(self, conv: Conversion, text: str) -> dict[str, Any]:
        params: dict[str, Any] = {}
        summary: dict[str, Any] = {}
        units: dict[str, str] = {}
        percentiles: dict[str, dict[str, Any]] = {}
        iterations: list[dict[str, Any]] = []
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
            if isinstance(entry, dict) and entry.get("type") == "METADATA":
                entry.setdefault("data", {})
            if not isinstance(entry, dict) or not isinstance(entry.get("data"), dict):
                raise conv.fail(f"line {lineno}", "dllogger entry without a 'data' object")
            ts = num(entry.get("timestamp"))
            if ts is not None:
                first_ts = ts if first_ts is None else min(first_ts, ts)
                last_ts = ts if last_ts is None else max(last_ts, ts)
            if entry.get("type") == "METADATA":
                unit = as_dict(entry.get("metadata")).get("unit")
                if isinstance(entry.get("metric"), str) and isinstance(unit, str):
                    units[entry["metric"]] = unit
                continue
            step, data = entry.get("step"), entry["data"]
            if isinstance(step, str) and step in PERCENTILE_STEPS:
                for key, value in data.items():
                    percentiles.setdefault(key, {})[PERCENTILE_STEPS[step]] = value
                continue
            if isinstance(step, str) and step in ("avg", "Summary", "summary"):
                summary.update(data)
                continue
            if step == "PARAMETER":
                for key, value in data.items():
                    if key == "Config" and isinstance(value, list) and value:
                        params.update(dict(_NAMESPACE.findall(str(value[0]))))
                    else:
                        params.setdefault(key, value)
            elif step == [] or step == "" or (isinstance(step, list) and not step):
                summary.update(data)
            elif isinstance(step, list) and len(step) >= 2 or isinstance(step, int) and not isinstance(step, bool):
                iterations.append(data)
        if not any(k in summary for k in THROUGHPUT_KEYS):
            summary.update(_over_iterations(iterations) or _over_steps(iterations, params))
        if not params and not summary:
            raise conv.fail("(whole file)", "no dllogger PARAMETER or summary entries")
        return conv.document([self._run(conv, params, part, first_ts, last_ts, units, part_percentiles, stage=stage)
                              for stage, part, part_percentiles in _stage_summaries(summary, percentiles)])

    def _stdout(self, conv: Conversion, text: str) -> dict[str, Any]:
        params: dict[str, Any] = {}
        summary: dict[str, Any] = {}
        for line in text.splitlines():
            m = _STDOUT.match(line.strip())
            if not m:
                continue
            body = m.group(1)
            if body.startswith("PARAMETER"):
                if "Namespace(" in body:  # BERT's 'PARAMETER Config : ["Namespace(do_train=True, fp16=True, ...)"]'
                    params.update({k: v.strip("'") for k, v in _NAMESPACE.findall(body.split("Namespace(", 1)[1])})
                else:
                    params.update({k: v for k, v, _ in _PAIR.findall(body)})
            elif body.startswith("Summary:") or _STEPLESS.match(body):
                # an empty step prints 'Summary:' with dllogger's default step format and nothing with
                # DeepLearningExamples' BERT format_step: 'DLL <ts> - e2e_train_time : 1.2 ...'
                summary.update({k: v for k, v, _ in _PAIR.findall(body)})
            elif body.startswith("() "):
                # the empty step as str(()) prints it (Tacotron2, WaveGlow, SSD, nnU-Net): '- () run_time : 56.5'
                summary.update({k.strip(): v for k, v in _SPACED_PAIR.findall(body[3:])})
        if not summary:
            conv.warn("no 'Summary:' line (the run may have been cut short); throughput stays missing")
        return conv.document([self._run(conv, params, summary, None, None)])

    def _nvlog(self, conv: Conversion, doc: dict[str, Any]) -> dict[str, Any]:
        run_info = as_dict(doc.get("run"))
        args = as_dict(run_info.get("args"))
        params = {k: v for k, v in doc.items() if not isinstance(v, (dict, list))}
        params.update({k: v for k, v in args.items() if not isinstance(v, (dict, list))})
        summary: dict[str, Any] = {}
        for section in ("run", "epoch", "iter", "iteration"):
            block = doc.get(section)
            if not isinstance(block, dict):
                continue
            for key, values in block.items():
                if key == "x":
                    continue
                flat = _flatten(values)
                if flat:
                    summary.setdefault(key, flat[-1])
                elif not isinstance(values, (dict, list)):
                    summary.setdefault(key, values)
        epochs = [num(v) for v in as_list(as_dict(doc.get("epoch")).get("epoch_time"))]
        if epochs and all(v is not None for v in epochs):
            summary.setdefault("e2e_train_time", sum(v for v in epochs if v is not None))
        params.setdefault("arch", doc.get("model"))
        gpu = as_dict(run_info.get("gpu_info"))
        names = [clean_str(n) for n in as_list(gpu.get("name"))]
        device_name = names[0] if names and names[0] else None
        if len({n for n in names if n}) > 1:
            conv.warn(f"gpu_info lists different GPUs ({', '.join(n for n in names if n)}); the first is used")
        mem = clean_str(as_list(gpu.get("mem"))[0]) if as_list(gpu.get("mem")) else None
        memory_gb = None
        if mem and mem.endswith("MiB") and num(mem[:-3]):
            memory_gb = (num(mem[:-3]) or 0) * 1.048576 / 1e3
        if params.get("amp_run") is not None:
            params.setdefault("amp", params.get("amp_run"))
        run = self._run(conv, params, summary, None, None, {}, {}, device_name=device_name, memory_gb=memory_gb)
        visible = pos_int(gpu.get("num"))
        if visible and not run["config"].get("gpu_count"):
            run["notes"] += f"; {visible} GPU(s) visible (gpu_info.num), the number used is not stated"
        return conv.document([run])

    # --- mapping ---------------------------------------------------------------------------------
    def _run(
        self,
        conv: Conversion,
        params: dict[str, Any],
        summary: dict[str, Any],
        first_ts: float | None,
        last_ts: float | None,
        units: dict[str, str] | None = None,
        percentiles: dict[str, dict[str, Any]] | None = None,
        device_name: str | None = None,
        memory_gb: float | None = None,
        stage: str | None = None,
    ) -> dict[str, Any]:
        units = units or {}
        throughput = None
        source_key = None
        for key in THROUGHPUT_KEYS:
            if key in summary:
                throughput = num(summary[key], f"summary {key}", conv)
                source_key = key
                break
        amp = _bool(params.get("amp", params.get("amp_run")))  # FastPitch and Tacotron2 name it amp_run
        fp16 = _bool(params.get("fp16"))
        precision = "fp16" if (amp or fp16) else None
        if "bf16" in params and _bool(params.get("bf16")):
            precision = "bf16"
        train = (
            any(
                k in summary
                for k in ("training_sequences_per_second", "train.total_ips", "throughput_train", "e2e_train_time")
            )
            or (source_key or "").startswith("train")
            or _bool(params.get("do_train"))
            or _bool(params.get("training_only"))
        )
        infer = source_key is not None and (any(w in source_key for w in ("infer", "val", *STAGES))
                                            or source_key in ("frames/s", "samples/s"))
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
        seq = pos_int(params.get("max_seq_length") or params.get("seq_length") or params.get("cfg/encoder_seq_length"))
        gpus = pos_int(params.get("n_gpu") or params.get("world_size") or params.get("num_gpus"))
        duration_key = next((k for k in DURATION_KEYS if k in summary), None)
        duration = positive(num(summary.get(duration_key))) if duration_key else None
        metrics: dict[str, Any] = {"duration_s": duration}
        if DERIVED in summary and throughput is not None:
            metrics["throughput_derivation"] = str(summary[DERIVED])[:200]
        unit = self._unit(source_key, units)
        if unit == "not stated":
            metrics["throughput_unit_not_stated"] = positive(throughput)
        else:
            metrics["throughput_sps"] = positive(throughput)
            metrics["sample_unit"] = unit if throughput is not None else None
        if throughput is None:
            conv.warn("no summary throughput in the log (a run cut short writes none); per-iteration figures are "
                      "not averaged in its place")
        latency_key = next((k for k in ("latency", "generator_latency", "avg_latency") if k in summary), None)
        lat = num(summary.get(latency_key)) if latency_key else None
        if lat is not None and lat >= 0:
            metrics["latency_avg_ms"] = lat * 1e3  # dllogger latencies are seconds
        for field, value in (percentiles or {}).get(latency_key or "latency", {}).items():
            v = num(value)
            if v is not None and v >= 0:
                metrics[field] = v * 1e3
        run: dict[str, Any] = {
            "run_id": conv.run_id(stage or 0),
            "status": "ok",
            "device": conv.device(device_name, "gpu", where="(whole file; dllogger does not record the GPU)",
                                  memory_gb=memory_gb),
            "config": {
                "workload": conv.hints.workload or model or "unknown",
                "model": model,
                "mode": mode,
                "precision": conv.precision(precision),
                "batch_size": batch,
                "grad_accum_steps": accum,
                "seq_len": seq,
                "gpu_count": gpus,
                "tag": stage,
            },
            "metrics": {k: v for k, v in metrics.items() if v is not None},
            "notes": (f"stage '{stage}': its own throughput and latency; " if stage else "")
            + (f"{summary[DERIVED]}; " if DERIVED in summary else "")
            + (f"throughput from '{source_key}' ({units.get(source_key or '', 'unit from its name')}); "
               if source_key else "") + "dllogger summary: "
            + ", ".join(f"{k}={v}" for k, v in list(summary.items())[:12] if k != DERIVED),
        }
        if first_ts is not None and last_ts is not None and last_ts > first_ts:
            run["started_at"] = datetime.fromtimestamp(first_ts, UTC).isoformat()
            run["ended_at"] = datetime.fromtimestamp(last_ts, UTC).isoformat()
        return run


    @staticmethod
    def _unit(key: str | None, units: dict[str, str]) -> str | None:
        """The sample unit of a throughput metric: its METADATA unit, else what its name says."""
        if key is None:
            return None
        declared = (units.get(key) or "").lower()
        if declared:
            for word, unit in (("img", "image"), ("image", "image"), ("seq", "sequence"), ("frame", "frame"),
                               ("sample", "sample"), ("token", "not stated")):
                if word in declared:
                    return unit
            return "not stated"
        for fragment, named in NAME_UNITS.items():
            if fragment in key:
                return named or "not stated"
        return "sample" if "sample" in key else "not stated"


def _stage_summaries(summary: dict[str, Any], percentiles: dict[str, dict[str, Any]]
                     ) -> list[tuple[str | None, dict[str, Any], dict[str, dict[str, Any]]]]:
    """(stage, its summary, its latency percentiles): one per stage a speech synthesis log times, each
    with its own throughput and latency, and the end-to-end one; the whole summary when there are none."""
    stages = [s for s in STAGES if f"{s}_latency" in summary]
    if not stages:
        return [(None, summary, percentiles)]
    out: list[tuple[str | None, dict[str, Any], dict[str, dict[str, Any]]]] = []
    for stage in stages:
        rates = [k for k in summary if k.startswith(stage) and k.endswith("/s")]
        rate = next((k for k in rates if "frames" in k), None) or next((k for k in rates if "samples" in k), None)
        part = {"latency": summary[f"{stage}_latency"], **({rate: summary[rate]} if rate else {})}
        out.append((stage, part, {"latency": percentiles.get(f"{stage}_latency", {})}))
    if "latency" in summary:
        part = {k: summary[k] for k in ("samples/s", "latency") if k in summary}
        out.append(("end-to-end", part, {"latency": percentiles.get("latency", {})}))
    return out


def _flatten(values: Any) -> list[Any]:
    """The numbers of a column (nested per epoch in the old nvlog: [[..], [..], []])."""
    if isinstance(values, list):
        out: list[Any] = []
        for v in values:
            out.extend(_flatten(v) if isinstance(v, list) else [v])
        return [v for v in out if isinstance(v, (int, float)) and not isinstance(v, bool)]
    return []


DERIVED = "(throughput over the iterations)"  # the summary key that says how a cut-short log's rate was derived


STEP_TIME = "train_step_timing in s"  # NeMo's time of each training step, seconds


def _over_steps(iterations: list[dict[str, Any]], params: dict[str, Any]) -> dict[str, Any]:
    """NeMo's log without a summary: sequences a second from its global batch over the median step time, the first
    step (the warm-up: compilation, caches) left out; {} unless every step gives its time and the batch is stated."""
    times = [num(d.get(STEP_TIME)) for d in iterations]
    batch = pos_int(params.get("cfg/global_batch_size"))
    if len(times) < 2 or batch is None or not all(t is not None and t > 0 for t in times):
        return {}
    steady = statistics.median(t for t in times[1:] if t is not None)
    return {"training_sequences_per_second": batch / steady, "run_time": sum(t for t in times if t is not None),
            DERIVED: f"global batch {batch} / the median '{STEP_TIME}' of steps 2-{len(times)} ({steady:.4g} s; "
                     f"step 1, {times[0]:.4g} s, left out as the warm-up): no summary in the log"}


def _over_iterations(iterations: list[dict[str, Any]]) -> dict[str, Any]:
    """A cut-short log's throughput from iterations that each give a rate and their own time: the items they
    processed (rate x time) over the time they took, as the training script's own epoch average computes it;
    {} when the iterations do not all give both."""
    for rate_key in ITERATION_RATES:
        time_key = next((t for t in ITERATION_TIMES if iterations and all(t in d for d in iterations)), None)
        if time_key is None or not iterations or not all(rate_key in d for d in iterations):
            continue
        pairs = [(num(d[rate_key]), num(d[time_key])) for d in iterations]
        if not all(r is not None and t is not None and r >= 0 and t > 0 for r, t in pairs):
            continue
        took = sum(t for _, t in pairs if t is not None)
        items = sum(r * t for r, t in pairs if r is not None and t is not None)
        return {rate_key: items / took, "run_time": took,
                DERIVED: f"{rate_key} over the {len(pairs)} logged iterations: sum({rate_key} x {time_key}) / "
                         f"sum({time_key}) = {items:,.0f} / {took:.2f} s (no summary: the run was cut short)"}
    return {}
