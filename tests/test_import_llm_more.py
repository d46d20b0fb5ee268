"""Issue 27 items 1, 2 and 4, the readers still missing: text-generation-inference's `text-generation-benchmark`
tables and inference-benchmarker results, GuideLLM's CSV, tables whose headers carry units in any language,
a per-prompt text-to-video energy CSV's durations (issue 28 item 9) and vLLM files that state the
tensor-parallel size or a GPU energy.

Every expected figure was read off the fixture by hand (the comment names the row or key); attribution in
tests/fixtures/formats/SOURCES.md.
"""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from importers import Hints, load
from joulebench.errors import JouleBenchError, ResultFileError
from tests.helpers import ingest_runs, mutated, runs_or_refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats"
TGI = FORMATS / "tgi" / "text-generation-benchmark-llama-tokenizer-shard1.txt"
IB = FORMATS / "tgi" / "inference-benchmarker-llama3.1-8b-vllm-sweep.json"
GUIDELLM_CSV = FORMATS / "guidellm" / "benchmarks.csv"
T2V = FORMATS / "experiment_csv" / "benchlab-text2video_energy_benchmark-h100.csv"
VLLM = FORMATS / "vllm" / "LambdaLabsML-vllm-benchmark-2024-09-1xH100-llama3.1-8b-fp8-prompt10-len8192.json"
I18N = ("Modelo,GPU,Energía (J),Duración (s),TPOT (s/token),Latenz (ms),Leistung (W),Precisión (%),Énergie GPU (kJ)\n"
        "llama-3-8b,RTX 4090,1520.5,12.5,0.021,430,121.6,81.2,1.2\n")


def test_tgi_benchmark_one_run_per_batch_size_into_duckdb(tmp_path: Path, bare_template: Path) -> None:
    runs = ingest_runs(tmp_path / "tgi.duckdb", bare_template, TGI, device="NVIDIA A10G")
    assert [r["batch_size"] for r in runs] == [1, 2, 4, 8, 16, 32]  # the Batch Size column, merged cells blank
    b1, b32 = runs[0], runs[-1]
    assert b1["origin_format"] == "tgi-bench" and b1["load_kind"] == "batch"
    assert b1["decode_tokens_per_s"] == pytest.approx(32.84)  # "| Decode  | 1 | 32.84 tokens/secs"
    assert b32["decode_tokens_per_s"] == pytest.approx(848.02)  # "|  | 32 | 848.02 tokens/secs"
    assert b1["tokens_per_s"] is None  # decode alone (prefill and first token left out): never output tokens/s
    assert b32["prompt_tokens_per_s"] == pytest.approx(315.90)  # "| Prefill | ... 32 | 315.90 tokens/secs"
    assert b32["tpot_avg_ms"] == pytest.approx(37.73)  # "| Decode (token) | ... 32 | 37.73 ms"
    assert b32["tpot_p90_ms"] is None and b32["itl_avg_ms"] is None and b32["ttft_avg_ms"] is None
    assert b1["model"] == "hf-internal-testing/llama-tokenizer"  # Parameter "Model"
    assert b1["energy_j"] is None and "does not measure energy" in b1["energy_missing_reason"]
    assert "prefill of the batch 31.83 ms" in b1["notes"]


def test_tgi_benchmark_states_its_gpu_count_when_the_printout_does() -> None:
    text = "# Tensor Parallel (TP) - 4 GPUs\n" + TGI.read_text()
    f, fmt = load(text.encode(), "tgi.txt")
    assert fmt == "tgi-bench" and {r["config"]["gpu_count"] for r in f.runs} == {4}
    f, _ = load(TGI.read_bytes(), TGI.name)
    assert {r["config"]["gpu_count"] for r in f.runs} == {None}  # not stated: not invented


def test_inference_benchmarker_into_duckdb(tmp_path: Path, bare_template: Path) -> None:
    throughput, rate = ingest_runs(tmp_path / "ib.duckdb", bare_template, IB)  # the warmup result left out
    assert rate["origin_format"] == "tgi-bench"
    assert rate["tokens_per_s"] == pytest.approx(2686.1)  # token_throughput_secs (generated tokens / duration)
    assert rate["requests_per_s"] == pytest.approx(4.01)  # request_rate
    assert rate["ttft_p90_ms"] == pytest.approx(34.1)  # time_to_first_token_ms.p90
    assert rate["e2e_latency_p99_ms"] == pytest.approx(6116.8)  # e2e_latency_ms.p99
    assert rate["tpot_avg_ms"] == pytest.approx(7.93) and rate["itl_avg_ms"] is None  # per-request: TPOT, not ITL
    assert rate["load_kind"] == "rate" and rate["request_rate_per_s"] == pytest.approx(4.0)  # ConstantArrivalRate
    assert throughput["load_kind"] == "concurrency" and throughput["max_concurrency"] == 128  # ConstantVUs, max_vus
    assert rate["gpu_count"] == 2 and rate["engine"] == "vllm" and rate["engine_version"] == "0.6.3"  # config.meta
    assert "H100" in rate["device_name"]  # config.meta.device "NVIDIA H100 80GB HBM3" (as the catalog names it)
    assert rate["output_tokens_mean"] == pytest.approx(322410 / 481)  # total_tokens / successful_requests
    assert throughput["requests_failed"] == 3 and rate["energy_j"] is None


def test_guidellm_csv_one_run_per_benchmark_like_the_json(tmp_path: Path, bare_template: Path) -> None:
    sync, rate = ingest_runs(tmp_path / "g.duckdb", bare_template, GUIDELLM_CSV)
    assert sync["origin_format"] == "guidellm"
    assert sync["load_kind"] == "concurrency" and sync["max_concurrency"] == 1  # Benchmark,Strategy "synchronous"
    assert sync["e2e_latency_avg_ms"] == pytest.approx(1611.0)  # Request Latency, Successful Sec, Mean 1.611 s
    assert rate["e2e_latency_p99_ms"] == pytest.approx(2149.0)  # Percentiles text, 10th value 2.149 s
    assert rate["ttft_p90_ms"] == pytest.approx(49.5)  # Time to First Token, Percentiles, 8th value
    assert rate["itl_avg_ms"] == pytest.approx(14.67) and rate["itl_p90_ms"] is None and rate["tpot_avg_ms"] is None
    assert rate["tokens_per_s"] == pytest.approx(508.2)  # Output Tokens/Sec Mean, never Total Tokens/Sec
    assert rate["requests_completed"] == 200  # Request Counts, Successful
    assert rate["load_kind"] is None and rate["request_rate_per_s"] is None  # the CSV keeps no rate: not invented


def test_guidellm_csv_refusal_names_the_file_the_field_and_the_fix() -> None:
    bad = re.sub(r'"\[(\d)', r'"[1, \1', GUIDELLM_CSV.read_text(), count=1)  # the first Percentiles cell
    with pytest.raises(ResultFileError, match=r"benchmarks\.csv: line 4: Request Latency Successful Sec Percentiles"
                                              r": .* is not the 11 values"):
        load(bad.encode(), "benchmarks.csv")


def test_headers_with_units_in_any_language() -> None:
    f, fmt = load(I18N.encode(), "resultados.csv")
    assert fmt == "experiment-table"
    m, c = f.runs[0]["metrics"], f.runs[0]["config"]
    assert m["energy_j"] == pytest.approx(1520.5)  # Energía (J)
    assert m["duration_s"] == pytest.approx(12.5)  # Duración (s)
    assert m["tpot_avg_ms"] == pytest.approx(21.0)  # TPOT (s/token) 0.021 s
    assert m["latency_avg_ms"] == pytest.approx(430.0)  # Latenz (ms)
    assert m["avg_power_w"] == pytest.approx(121.6)  # Leistung (W)
    assert 81.2 not in m.values() and not any("Precisi" in w and "stored" in w for w in f.warnings)  # a score
    assert c["model"] == "llama-3-8b" and f.runs[0]["device"]["name"] == "RTX 4090"
    kj = load("Modell,Énergie (kJ),Dauer (s),Genauigkeit (%)\nx,1.5,10,0.9\n".encode(), "t.csv")[0].runs[0]["metrics"]
    assert kj["energy_j"] == pytest.approx(1500.0) and kj["duration_s"] == pytest.approx(10.0)  # kJ -> J
    per = load(b"model,Energy (mJ/token),Latency (ms),duration_s\nx,350,12,4\n", "t.csv")[0].runs[0]["metrics"]
    assert per["j_per_token"] == pytest.approx(0.35)  # mJ/token -> J/token


def test_a_score_column_alone_is_no_measurement() -> None:
    with pytest.raises(JouleBenchError):
        load("Modelo,Precisión (%),Exactitud (score)\nx,81.2,0.9\n".encode(), "scores.csv")


def test_text_to_video_per_prompt_durations(tmp_path: Path, bare_template: Path) -> None:
    runs = ingest_runs(tmp_path / "t2v.duckdb", bare_template, T2V, units=(("energy_generate_gpu", "kWh"),),
                       mode="infer")
    assert len(runs) == 30  # one row per prompt and model
    first = runs[0]  # AnimateDiff, "A cyberpunk hacker ...": duration_generate 0.687964916229248 s
    assert first["duration_s"] == pytest.approx(0.687964916229248)
    assert runs[10]["duration_s"] == pytest.approx(52.15778107643128)  # CogVideoX-2b, first prompt
    assert first["energy_j"] == pytest.approx(0.0001106414218464 * 3.6e6)  # energy_generate_gpu, kWh as stated
    assert first["gpu_count"] == 1 and "cyberpunk hacker" in first["notes"]


def test_vllm_tensor_parallel_and_gpu_energy_where_stated() -> None:
    doc = json.loads(VLLM.read_bytes())
    f, _ = load(json.dumps(doc).encode(), VLLM.name)
    assert f.runs[0]["config"]["gpu_count"] is None and "energy_j" not in f.runs[0]["metrics"]  # not stated
    doc.update(tensor_parallel_size=4, gpu_energy_mj=1_082_567.0)  # 1,082,567 mJ over duration 1.0826 s
    f, _ = load(json.dumps(doc).encode(), VLLM.name)
    run = f.runs[0]
    assert run["config"]["gpu_count"] == 4
    assert run["metrics"]["energy_j"] == pytest.approx(1082.567)  # mJ -> J
    # energy / output tokens (output_throughput x duration = total_output_tokens 442)
    assert run["metrics"]["j_per_token"] == pytest.approx(1082.567 / 442, rel=1e-6)


SEEDS = [(p.name, p.read_bytes()[:16384]) for p in (TGI, IB, GUIDELLM_CSV, T2V)] + [("i18n.csv", I18N.encode())]


@settings(max_examples=150, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(seed=st.sampled_from(SEEDS), cut=st.floats(0, 1), at=st.floats(0, 1),
       junk=st.sampled_from([b"NaN", b"-5", b"1e400", b'"x"', b"\n", b",", b"null", b"|", b"| |", b"ms", b"[",
                             b"(J)", b"tokens/secs", b"N/A"]))
def test_mutated_inputs_import_or_refuse_naming_the_file(seed: tuple[str, bytes], cut: float, at: float,
                                                         junk: bytes) -> None:
    name, data = seed
    for run in runs_or_refusal(mutated(data, cut, at, junk), name, hints=Hints()):
        assert all(not isinstance(v, float) or v == v for v in run["metrics"].values())


def test_guidellm_median_is_p50_where_its_percentiles_leave_it_out() -> None:
    """GuideLLM states a distribution's median apart from its percentiles; a file whose percentiles lack p50 keeps
    its TTFT p50 (issue 39: the median was not stored)."""
    doc = json.loads((FORMATS / "guidellm" / "benchmarks.json").read_text())
    ttft = doc["benchmarks"][0]["metrics"]["time_to_first_token_ms"]["successful"]
    ttft["percentiles"].pop("p50")
    ttft["median"] = 23.5
    f, _ = load(json.dumps(doc).encode(), "benchmarks.json")
    assert f.document["runs"][0]["metrics"]["ttft_p50_ms"] == pytest.approx(23.5)


def test_a_vllm_file_names_its_engine_where_its_backend_is_one() -> None:
    """vLLM's client names the API it spoke: 'vllm' is the engine (issue 37: such a file had no engine); the
    generic OpenAI-compatible backends could be any engine and leave it not stated."""
    f, _ = load(VLLM.read_bytes(), VLLM.name)
    assert {r["config"]["engine"] for r in f.document["runs"]} == {"vllm"}
    openai = FORMATS / "vllm" / "er0080-vllm-sweep-v0.25.1-max_num_seqs=8-run=1.json"
    f, _ = load(openai.read_bytes(), openai.name)
    assert {r["config"].get("engine") for r in f.document["runs"]} == {None}
