"""The MLPerf Mobile app's result file (mlcommons/mobile_app_open, the Flutter app's `ExtendedResult` JSON: `meta`,
`results`, `environment_info`, `build_info`), one result a benchmark the phone or laptop ran:

- `benchmark_id` (image_classification_v2, object_detection, stable_diffusion, ...), `loadgen_scenario`
  (SingleStream or Offline), `backend_settings` (framework, accelerator, batch size), `backend_info`;
- `performance_run`: `throughput.value` (the app's score), `measured_samples` over `measured_duration` (seconds),
  and, from app 4.0 on, `loadgen` (`query_count`, `latency_mean` and `latency90` in seconds);
- `accuracy_run`: the accuracy, no performance figure.

The app's SingleStream score is 1 / the 90th-percentile latency, not a rate anything ran at: stored is the rate
counted, samples / duration, with the latencies (mean and p90, s to ms); the score stays in the notes. An Offline
score is MLPerf's, the samples over the one query's time: stored where the query's time confirms it (within 1 %),
said otherwise. The device is the one `environment_info` names (the phone's model and its SoC, kept as written); the
batch is the backend's where it sets one (0: not set). A result with no performance run is left out, said.
"""

from __future__ import annotations

from typing import Any

from importers.base import Conversion, Importer, Source, as_dict, check_run_count, clean_str, num, positive
from importers.table_named import model_named


def _results(doc: Any) -> list[dict[str, Any]] | None:
    if not isinstance(doc, dict) or not {"results", "environment_info"} <= set(doc):
        return None
    results = doc["results"]
    if not isinstance(results, list) or not results or not all(
            isinstance(r, dict) and "benchmark_id" in r and "performance_run" in r for r in results[:50]):
        return None
    return results


def _device(environment: dict[str, Any]) -> str | None:
    """'iQOO 12 (SM8650)', 'iPad Pro 11 inch (2nd generation) Wi-Fi + Cellular (A12Z Bionic)'."""
    platform = str(environment.get("platform") or "")
    info = as_dict(as_dict(environment.get("value")).get(platform))
    model = clean_str(info.get("model_name"))
    soc = clean_str(info.get("soc_name")) or next(
        (clean_str(p.get("value")) for p in info.get("props") or [] if isinstance(p, dict) and p.get("type") ==
         "socName"), None)
    if model and soc:
        return f"{model} ({soc})"[:200]
    return model or soc


def _model(path: Any) -> str | None:
    """The model file's name without its folder and suffix ('[local:///mlperf_models/mobilenet_v4_htp.dlc]' ->
    'mobilenet_v4_htp'); None for several files (a pipeline's, Stable Diffusion's)."""
    text = (clean_str(path) or "").strip("[]")
    if not text or text.count("://") > 1 or any(sep in text for sep in (";", ", ")):
        return None
    named = model_named(text.rsplit("/", 1)[-1])
    return named[:200] if named else None


class MlperfMobileImporter(Importer):
    NAME = "mlperf-mobile"
    TOOL = "MLPerf Mobile"
    DESCRIPTION = "the MLPerf Mobile app's result JSON (results[] of benchmark_id, performance_run, environment_info)"

    def sniff(self, source: Source) -> bool:
        return _results(source.json) is not None

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        results = _results(doc) or []
        device = _device(as_dict(as_dict(doc).get("environment_info")))
        runs: list[dict[str, Any]] = []
        skipped: list[str] = []
        for i, result in enumerate(results):
            where = f"results[{i}]"
            if not isinstance(result.get("performance_run"), dict):
                skipped.append(str(result.get("benchmark_id"))[:40])
                continue
            check_run_count(conv, len(runs) + 1, "its results")
            runs.append(self._run(conv, len(runs), where, result, device))
        if skipped:
            conv.warn(f"{', '.join(skipped)[:200]}: no performance run (an accuracy run only): no run")
        if not runs:
            raise conv.fail("(whole file)", "no result with a performance run")
        return conv.document(runs)

    @staticmethod
    def _run(conv: Conversion, index: int, where: str, result: dict[str, Any], device: str | None) -> dict[str, Any]:
        perf = as_dict(result.get("performance_run"))
        loadgen = as_dict(perf.get("loadgen"))
        settings = as_dict(result.get("backend_settings"))
        scenario = str(result.get("loadgen_scenario") or "")
        score = positive(num(as_dict(perf.get("throughput")).get("value"), f"{where}: throughput", conv))
        samples = positive(num(perf.get("measured_samples"), f"{where}: measured_samples", conv))
        duration = positive(num(perf.get("measured_duration"), f"{where}: measured_duration", conv))
        mean_s = positive(num(loadgen.get("latency_mean"), f"{where}: loadgen.latency_mean", conv))
        p90_s = positive(num(loadgen.get("latency90"), f"{where}: loadgen.latency90", conv))
        notes = [f"MLPerf Mobile {result.get('benchmark_id')} ({scenario}), {where}"]
        metrics: dict[str, Any] = {"duration_s": duration, "examples": samples,
                                   "energy_missing_reason": "the MLPerf Mobile app measures no power"}
        if scenario == "Offline":
            if score and samples and mean_s and abs(samples / mean_s - score) <= 0.01 * score:
                metrics["throughput_sps"] = score
                notes.append("throughput = samples / the query's time (MLPerf's Offline result)")
            elif samples and duration:
                metrics["throughput_sps"] = samples / duration
                notes.append(f"throughput = samples / measured duration; the app's score {score} is not confirmed "
                             "by the query's time")
        else:
            if samples and duration:
                metrics["throughput_sps"] = samples / duration
            metrics["latency_avg_ms"] = mean_s * 1e3 if mean_s else None
            metrics["latency_p90_ms"] = p90_s * 1e3 if p90_s else None
            notes.append(f"throughput = samples / measured duration; the app's score {score} is 1 / the 90th "
                         "percentile latency, not a rate")
        accuracy = as_dict(as_dict(result.get("accuracy_run")).get("accuracy")).get("formatted")
        if accuracy:
            notes.append(f"accuracy {str(accuracy)[:20]}")
        batch = settings.get("batch_size")
        accelerator = " ".join(str(settings.get(k) or "") for k in ("framework", "accelerator_desc")).strip()
        return {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": conv.device(device, "cpu", where=f"({where}: environment_info names no device)"),
            "config": {"workload": conv.hints.workload or str(result.get("benchmark_id"))[:200],
                       "model": _model(settings.get("model_path")), "mode": "infer",
                       "precision": conv.precision(None),
                       "batch_size": conv.hints.batch_size or (batch if isinstance(batch, int) and batch > 0 else None),
                       "engine": clean_str(settings.get("framework")),
                       "tag": f"MLPerf Mobile {scenario}, {accelerator}".strip(", ")[:200]},
            "metrics": {k: v for k, v in metrics.items() if v is not None},
            "notes": "; ".join(notes),
        }
