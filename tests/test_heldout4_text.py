"""Issue 39, fourth held-out set: text captures. trtexec summaries pasted into Markdown without their log prefixes
(`importers.trtexec`), an Ollama benchmark script's capture of the eval rate alone (`importers.ollama`), `go test
-bench` output under headings (`importers.go_bench`, read by `importers.text_figures`) and a banner that names no
model (`importers.text_figures`). Real files and their attribution in tests/fixtures/formats/SOURCES.md (section
"fourth held-out set"); every figure is checked against the file's own text, parsed here by hand.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import pytest

from importers import load
from importers.go_bench import benchmark_flags
from joulebench.errors import JouleBenchError
from tests.helpers import ingest_runs, readers_of_other_fixtures

FORMATS = Path(__file__).parent / "fixtures" / "formats"
YOLO = FORMATS / "trtexec" / "yolov9qat-rtx4050-trtexec-summaries-Mish_MP.md"
OLLAMA = FORMATS / "ollama" / "ollama-benchmark-llm_benchmark-linux-rtx3060-console.md"
YZMA = FORMATS / "text_figures" / "yzma-go-llama-benchmarks-multi-device-BENCHMARKS.md"
BANNER = FORMATS / "text_figures" / "mask2former-custom-tensorrt-bench-trtexec.log"
CAMPAIGN = FORMATS / "text_figures" / "jetson-llm-maxperf-energy-campaign-2026-08-12.log"


def _load(data: bytes, name: str) -> tuple[list[dict], str, str]:
    imported, fmt = load(data, name)
    return imported.runs, fmt, " | ".join(imported.warnings)


def _refused_or_not(fmt: str, data: bytes, name: str) -> bool:
    """Whether `data` is refused or read by another reader than `fmt`."""
    try:
        return load(data, name)[1] != fmt
    except JouleBenchError:
        return True


# --- trtexec summaries pasted into Markdown, without the '[date] [I]' prefixes ------------------------------------

def _summaries_by_hand() -> list[tuple[int | None, float, dict[str, float]]]:
    """(the batch of the heading above it, qps, the Latency line's statistics) of each pasted summary."""
    out = []
    batch: int | None = None
    lines = YOLO.read_text().splitlines()
    for i, line in enumerate(lines):
        if line.startswith("## Batch"):
            m = re.fullmatch(r"## Batch ?Size (\d+)", line)
            batch = int(m.group(1)) if m else None
        if line == "=== Performance summary ===":
            qps = float(re.fullmatch(r"Throughput: ([\d.]+) qps", lines[i + 1]).group(1))  # type: ignore[union-attr]
            latency = next(x for x in lines[i:] if x.startswith("Latency: "))
            stats = {k: float(v) for k, v in re.findall(r"(\w+|percentile\(\d+%\)) = ([\d.]+) ms", latency)}
            out.append((batch, qps, stats))
    return out


def test_each_pasted_trtexec_summary_is_one_run_with_every_percentile_and_the_device() -> None:
    runs, fmt, _ = _load(YOLO.read_bytes(), YOLO.name)
    expected = _summaries_by_hand()
    assert fmt == "trtexec" and len(runs) == len(expected) == 6  # six '=== Performance summary ===' blocks
    for run, (batch, qps, stats) in zip(runs, expected, strict=True):
        m = run["metrics"]
        assert run["device"]["name"] == "NVIDIA GeForce RTX 4050 Laptop GPU"  # 'Selected Device:', once at the top
        assert run["config"]["batch_size"] == batch and m["iterations_per_s"] == qps
        assert m["latency_avg_ms"] == stats["mean"] and m["latency_p50_ms"] == stats["median"]
        assert m["latency_p90_ms"] == stats["percentile(90%)"] and m["latency_p95_ms"] == stats["percentile(95%)"]
        assert m["latency_p99_ms"] == stats["percentile(99%)"] and m["latency_max_ms"] == stats["max"]
        if batch is None:
            assert "throughput_sps" not in m  # 'BatchSize Resilience' states no batch: no samples/s invented
        else:
            assert m["throughput_sps"] == pytest.approx(qps * batch)
    first = runs[0]
    assert first["metrics"]["iterations_per_s"] == 347.915 and first["metrics"]["latency_p99_ms"] == 2.87744
    assert first["metrics"]["duration_s"] == 10.0082  # 'Total Host Walltime: 10.0082 s'
    assert runs[1]["metrics"]["throughput_sps"] == pytest.approx(100.77 * 4)  # '## BatchSize 4': 100.77 qps


def test_the_headings_give_the_model_the_stated_precision_and_the_tag() -> None:
    runs, _, _ = _load(YOLO.read_bytes(), YOLO.name)
    for run in runs:
        c = run["config"]
        assert c["model"] == c["workload"] == "YOLOv9-C QAT (Mish)"
        assert c["quantization"] == "int8" and c["precision"] == "fp16"  # as trtexec's 'Precision: FP32+FP16+INT8'
        assert c["tag"].startswith("YOLOv9-C QAT (Mish) > Precision: FP32+FP16+INT8")
    assert runs[-1]["config"]["tag"].endswith("> BatchSize Resilience") and runs[-1]["config"]["batch_size"] is None
    assert len({r["config"]["tag"] for r in runs[:5]}) == 1  # the batch is its own setting, not in the tag


def _pasted(headings: str, device: str = "NVIDIA GeForce RTX 4090") -> str:
    return (f"=== Device Information ===\nSelected Device: {device}\n{headings}\n```\n=== Performance summary ===\n"
            "Throughput: 100 qps\nLatency: min = 9 ms, max = 11 ms, mean = 10 ms, median = 10 ms, "
            "percentile(99%) = 10.9 ms\nTotal Host Walltime: 3 s\n```\n")


@pytest.mark.parametrize(("headings", "precision", "quantization", "batch"), [
    ("## FP16\n## Batch Size 8", "fp16", None, 8),  # one precision alone, stated
    ("## INT8 engine", None, "int8", None),
    ("## Results FP16 and INT8\n## bs=2", None, None, 2),  # not one precision stated: none read
    ("## Batches compared", None, None, None),  # no size stated
])
def test_a_heading_gives_a_precision_or_batch_only_where_it_states_one(headings: str, precision: str | None,
                                                                       quantization: str | None,
                                                                       batch: int | None) -> None:
    [run], fmt, _ = _load(_pasted(headings).encode(), "notes.md")
    assert fmt == "trtexec" and run["config"]["batch_size"] == batch
    assert run["config"]["precision"] == precision and run["config"]["quantization"] == quantization
    assert run["config"]["workload"] == "trtexec" and run["config"]["model"] is None  # no heading names a model


def test_each_pasted_summary_keeps_the_device_stated_before_it() -> None:
    text = _pasted("# resnet50 on two cards\n## Batch Size 1") + _pasted("## Batch Size 1", "Jetson AGX Orin 64GB")
    runs, _, _ = _load(text.encode(), "two.md")
    assert [r["device"]["name"] for r in runs] == ["NVIDIA GeForce RTX 4090", "Jetson AGX Orin 64GB"]
    assert [r["config"]["batch_size"] for r in runs] == [1, 1]


def test_a_summary_without_trtexecs_lines_is_not_read_as_trtexec() -> None:
    text = "=== Performance summary ===\nThroughput: fast\nLatency: low\n"  # no qps, no 'min = ... ms'
    assert _refused_or_not("trtexec", text.encode(), "notes.md")
    no_latency = "=== Performance summary ===\nThroughput: 100 qps\n"
    assert _refused_or_not("trtexec", no_latency.encode(), "notes.md")


# --- llm_benchmark's capture: the eval rate alone, under 'model_name =' --------------------------------------------

def _rates_by_hand() -> list[tuple[str, float]]:
    out, model = [], ""
    for line in OLLAMA.read_text().splitlines():
        if m := re.fullmatch(r"model_name =\s+(\S+)", line):
            model = m.group(1)
        elif m := re.fullmatch(r"eval rate:\s+([\d.]+) tokens/s", line):
            out.append((model, float(m.group(1))))
    return out


def test_each_prompts_eval_rate_is_a_run_of_its_model_on_the_gpu_named() -> None:
    imported, fmt = load(OLLAMA.read_bytes(), OLLAMA.name)
    runs, expected = imported.runs, _rates_by_hand()
    assert fmt == "ollama" and len(runs) == len(expected) == 35  # 7 models x 5 prompts
    for run, (model, rate) in zip(runs, expected, strict=True):
        assert run["config"]["model"] == model and run["metrics"]["decode_tokens_per_s"] == rate
        assert run["device"]["name"] == "NVIDIA GeForce RTX 3060"  # 'gpu_info: NVIDIA GeForce RTX 3060'
        assert "tokens_per_s" not in run["metrics"]  # eval rate: decoding only
    assert runs[0]["config"]["model"] == "mistral:7b" and runs[0]["metrics"]["decode_tokens_per_s"] == 67.11
    assert "bake a chocolate cake" in runs[0]["notes"] and "sudoku" in runs[1]["notes"]  # each answer's own prompt
    assert runs[5]["config"]["model"] == "phi4:14b"  # the model in force where the answer's statistics start
    assert imported.document["producer"]["version"] == "0.5.7"  # 'ollama_version: 0.5.7'


def test_an_average_over_the_answers_is_no_run() -> None:
    runs, _, said = _load(OLLAMA.read_bytes(), OLLAMA.name)
    assert 66.966 not in {r["metrics"]["decode_tokens_per_s"] for r in runs}  # 'Average of eval rate: 66.966'
    assert "an average over answers" in said


def test_a_lone_eval_rate_without_its_model_is_not_enough() -> None:
    lone = b"some run\neval rate:            67.11 tokens/s\neval rate:            66.61 tokens/s\n"
    assert _refused_or_not("ollama", lone, "bench.md")
    after = b"eval rate:            67.11 tokens/s\nmodel_name =    mistral:7b\n"  # the model named only after it
    assert _refused_or_not("ollama", after, "bench.md")
    runs, _, said = _load(b"eval rate: 10.00 tokens/s\n" + OLLAMA.read_bytes(), OLLAMA.name)
    assert len(runs) == 35 and "line 1: an eval rate alone, under no model line" in said


def test_a_gpu_info_that_names_no_gpu_leaves_the_device_not_stated() -> None:
    data = OLLAMA.read_text().replace("gpu_info: NVIDIA GeForce RTX 3060", "gpu_info: no GPU found").encode()
    imported, _ = load(data, OLLAMA.name)
    assert all(r["device"] is None for r in imported.runs) and imported.not_stated()["device"] == 35


# --- go test -bench under Markdown headings ------------------------------------------------------------------------

_GO_LINE = re.compile(r"(Benchmark\w+-\d+)\s+(\d+)\s+(\d+) ns/op\s+([\d.]+) tokens/s")


def test_each_go_bench_line_is_a_run_with_its_time_per_op_and_token_rate() -> None:
    runs, fmt, said = _load(YZMA.read_bytes(), YZMA.name)
    expected = [_GO_LINE.fullmatch(line.strip()) for line in YZMA.read_text().splitlines()
                if _GO_LINE.fullmatch(line.strip())]
    assert fmt == "text-figures" and len(runs) == len(expected) == 150
    for run, m in zip(runs, expected, strict=True):
        assert m is not None
        assert run["metrics"]["latency_avg_ms"] == pytest.approx(int(m.group(3)) / 1e6)  # ns/op in ms
        assert run["metrics"]["tokens_per_s"] == float(m.group(4))
        assert m.group(1) in run["config"]["tag"] and f"{m.group(2)} iterations" in run["notes"]
    first = runs[0]
    assert first["metrics"]["tokens_per_s"] == 270.5 and first["metrics"]["latency_avg_ms"] == pytest.approx(110.913774)
    assert first["config"]["tag"] == "Benchmarks > Text model benchmarks > Linux > CPU > amd64 > BenchmarkInference-32"
    assert "cpu 13th Gen Intel(R) Core(TM) i9-13900HX" in first["notes"] and "GOMAXPROCS 32" in first["notes"]
    assert all(r["device"] is None for r in runs)  # no heading names a device (they are in prose and banners)
    assert all(r["config"]["model"] is None and r["config"]["workload"] == "unknown" for r in runs)
    assert "ns/op read as latency_avg_ms" in said


def test_repeats_of_one_benchmark_under_one_heading_are_one_configuration(tmp_path: Path,
                                                                          bare_template: Path) -> None:
    runs, _, _ = _load(YZMA.read_bytes(), YZMA.name)
    tags = Counter(r["config"]["tag"] for r in runs)
    assert len(tags) == 30 and set(tags.values()) == {5}  # -count=5 in each of 30 captures
    rocm = "Benchmarks > Text model benchmarks > Linux > ROCM > amd64 > BenchmarkInference-48 -nctx=32000 -device="
    assert tags[rocm + "rocm0"] == tags[rocm + "vulkan0"] == 5  # one heading, two backends: the command's flags
    rows = ingest_runs(tmp_path / "t.duckdb", bare_template, YZMA)
    assert len(rows) == 150 and len({r["config_key"] for r in rows}) == 30


def test_a_heading_naming_a_device_gives_the_go_runs_their_device() -> None:
    text = ("## Jetson AGX Orin\n```\n$ go test -bench . -count=2 -model=small\ngoos: linux\n"
            "BenchmarkGen-8   \t  10\t   5000000 ns/op\t  20.5 tokens/s\n"
            "BenchmarkGen-8   \t  12\t   4000000 ns/op\t  25.5 tokens/s\nPASS\n```\n")
    runs, _, _ = _load(text.encode(), "bench.md")
    assert [r["device"]["name"] for r in runs] == ["Jetson AGX Orin"] * 2
    assert [r["metrics"]["latency_avg_ms"] for r in runs] == [5.0, 4.0]
    assert runs[0]["config"]["tag"] == runs[1]["config"]["tag"] == "BenchmarkGen-8 -model=small"  # the device: its own
    assert "goos linux" in runs[0]["notes"]


def test_allocation_figures_are_named_and_not_stored() -> None:
    text = "goos: linux\nBenchmarkEncode-8   1000   1234 ns/op   256 B/op   3 allocs/op\n"
    [run], _, said = _load(text.encode(), "bench.txt")
    assert run["metrics"]["latency_avg_ms"] == pytest.approx(0.001234)
    assert "B/op (bytes allocated per iteration)" in said and "allocs/op" in said


@pytest.mark.parametrize("line", [
    "Benchmarking took 100 ns/op overall",  # prose
    "benchmarkFoo-8   10   100 ns/op   5 tokens/s",  # not 'Benchmark'
    "Benchmarkfoo-8   10   100 ns/op   5 tokens/s",  # a lower-case letter after 'Benchmark': not a benchmark's name
    "BenchmarkFoo-8   fast   100 ns/op",  # no iteration count
    "BenchmarkFoo-8   10   20.5 tokens/s   3 W",  # no ns/op
    "BenchmarkFoo-8   10   100 ns/op   extra",  # a value without a unit
])
def test_a_line_not_in_the_go_bench_shape_is_not_read(line: str) -> None:
    assert _refused_or_not("text-figures", f"goos: linux\n{line}\n".encode(), "bench.txt")


@pytest.mark.parametrize(("args", "flags"), [
    (' -benchtime=10s -count=5 -run=nada -bench . -nctx=32000 -device="CUDA0"', "-nctx=32000 -device=CUDA0"),
    (" -run none -benchtime=10s -count=5 -bench BenchmarkInference -nctx=16000", "-nctx=16000"),
    (" ./... -bench=. -benchmem -args -size 4", "-size=4"),
    (" -bench .", ""),
])
def test_the_benchmarks_own_flags_are_told_from_go_tests(args: str, flags: str) -> None:
    assert benchmark_flags(args) == flags


# --- a banner that names no model ----------------------------------------------------------------------------------

def test_a_banner_naming_no_model_is_the_tag_never_the_workload() -> None:
    [run], fmt, _ = _load(BANNER.read_bytes(), BANNER.name)
    assert fmt == "text-figures"
    assert run["config"]["tag"] == "TENSORRT BENCHMARKS" and run["config"]["workload"] == "unknown"
    assert run["config"]["model"] is None
    assert run["metrics"]["throughput_sps"] == 9.76 and run["metrics"]["duration_s"] == 51.24  # 'FPS: 9.76'
    runs, _, _ = _load(CAMPAIGN.read_bytes(), CAMPAIGN.name)  # '=== benchmarks/<run> ===': a run's path, no model
    assert all(r["config"]["workload"] == "unknown" and r["config"]["tag"].startswith("benchmarks/") for r in runs)


def test_a_banner_naming_a_model_gives_the_model_and_workload() -> None:
    [run], _, _ = _load(b"=== Qwen2.5-3B-Instruct on vLLM ===\nThroughput: 30 tokens/s\nLatency: 20 ms\n", "x.log")
    assert run["config"]["model"] == run["config"]["workload"] == "Qwen2.5-3B-Instruct"
    assert run["config"]["tag"] == "Qwen2.5-3B-Instruct on vLLM"


def test_the_changed_readers_take_no_other_formats_fixtures() -> None:
    assert readers_of_other_fixtures({"trtexec", "ollama"}, {"trtexec", "ollama"}) == []
