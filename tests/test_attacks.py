"""Attack reproductions from issue 17: each hostile input is refused with the field named, quickly,
and never as a traceback (F1-F5, F9)."""

from __future__ import annotations

import copy
import gzip
import json
import subprocess
import sys
import zipfile
from pathlib import Path
from typing import Any

import pytest

import importers
from ingest.service import import_bytes
from joulebench.errors import JouleBenchError, ResultFileError
from joulebench.resultfile import MAX_DOCUMENT_BYTES, MAX_RUNS_PER_FILE

FIXTURE = Path(__file__).parent / "fixtures" / "result_v1_cpu_runs.json"


@pytest.fixture(scope="module")
def native() -> dict[str, Any]:
    loaded: dict[str, Any] = json.loads(FIXTURE.read_text())
    return loaded


def _refusal(doc: dict[str, Any] | None, tmp_path: Path, raw: bytes | None = None) -> str:
    """The message of the refusal, through the whole import path (convert, validate, ingest)."""
    data = raw if raw is not None else json.dumps(doc).encode()
    with pytest.raises(ResultFileError) as e:
        import_bytes(data, "hostile.json", db=tmp_path / "t.duckdb")
    return e.value.format_message()


def test_f1_a_quoted_number_in_a_long_power_trace_is_named_by_index(native, tmp_path):
    doc = copy.deepcopy(native)
    trace = doc["runs"][0]["power_traces"][0]
    trace["t_s"] = [i * 0.1 for i in range(100)]
    trace["power_w"] = [50.0] * 100
    trace["power_w"][70] = "1"
    assert "runs[0].power_traces[0].power_w[70]: '1' is not a number" in _refusal(doc, tmp_path)


@pytest.mark.parametrize("stamp", ["0001-01-01T00:00:00+14:00", "9999-12-31T23:59:59-14:00", "1970-01-01T00:00:00"])
def test_f2_dates_outside_any_real_run_are_refused(native, tmp_path, stamp):
    doc = copy.deepcopy(native)
    doc["runs"][0]["started_at"] = stamp
    assert "runs[0].started_at" in _refusal(doc, tmp_path) and "outside 1990 to today" in _refusal(doc, tmp_path)


def test_f2_a_run_that_ends_before_it_starts_is_refused(native, tmp_path):
    doc = copy.deepcopy(native)
    doc["runs"][0]["ended_at"] = "2026-11-20T10:00:00+00:00"
    assert "runs[0].ended_at" in _refusal(doc, tmp_path) and "before started_at" in _refusal(doc, tmp_path)


@pytest.mark.parametrize("value", ["ab\x00cd", "ab\x1b[31mcd"])
def test_f2_control_characters_in_an_id_are_refused(native, tmp_path, value):
    doc = copy.deepcopy(native)
    doc["runs"][0]["run_id"] = value
    assert "runs[0].run_id: holds a control character" in _refusal(doc, tmp_path)


def test_f3_an_unpaired_surrogate_is_refused_not_a_traceback(native, tmp_path):
    raw = json.dumps(native).replace("hand-written fixture", "hand\\ud800written").encode()
    assert "runs[0].notes: holds an unpaired surrogate" in _refusal(None, tmp_path, raw)


def test_f3_surrogates_in_another_tools_file_are_refused(tmp_path):
    """A vLLM benchmark JSON (a real layout) whose model name holds an escaped lone surrogate."""
    data = {"date": "20250101-120000", "backend": "vllm", "model_id": "meta-llama/\ud800Llama-3-8B",
            "num_prompts": 100, "request_throughput": 5.0, "output_throughput": 600.0,
            "total_token_throughput": 1200.0, "mean_ttft_ms": 50.0, "median_ttft_ms": 45.0,
            "p99_ttft_ms": 120.0, "mean_tpot_ms": 10.0, "median_tpot_ms": 9.0, "p99_tpot_ms": 20.0,
            "duration": 20.0, "completed": 100, "total_input_tokens": 12800, "total_output_tokens": 12800}
    raw = json.dumps(data).encode()  # json.dumps writes the lone surrogate as the escape \ud800
    with pytest.raises(JouleBenchError, match=r"runs\[0\]\.config\.model: holds an unpaired surrogate"):
        import_bytes(raw, "vllm_bench.json", db=tmp_path / "t.duckdb")


PATHOLOGICAL = {
    "digits": b"7" * 262144, "digits and slashes": b"7/" * 131072, "spaces": b" " * 262144,
    "commas": b"," * 262144, "colons": b"1:" * 131072, "one long csv header": b"a," * 131072 + b"\n1",
    "brackets": b"[" * 262144, "dll": b"DLL " * 65536, "quotes": b'"' * 262144,
}
HANG_GUARD_S = 60  # a hang guard for all of them together, not a speed target (they take well under 1 s)
IMPORT_EACH = ("import sys, pathlib, importers\nfrom importers.archive import sources_from_path\n"
               "from joulebench.errors import JouleBenchError\n"
               "for path in sys.argv[1:]:\n    n = 0\n"
               "    for source in sources_from_path(pathlib.Path(path)):\n        n += 1\n"
               "        try: importers.load_source(source)\n        except JouleBenchError: pass\n"
               "    print(n, flush=True)\n")


def _import_each_in_a_child(paths: list[Path]) -> list[int]:
    """Import every source of each path as the CLI does, in a child process, so a regression to
    quadratic time fails at the hang guard instead of hanging the suite; the sources per path."""
    done = subprocess.run([sys.executable, "-c", IMPORT_EACH, *map(str, paths)], capture_output=True, text=True,
                          timeout=HANG_GUARD_S)
    assert done.returncode == 0, done.stderr
    return [int(n) for n in done.stdout.split()]


def test_f4_detection_is_linear_on_256_kib_of_pathological_text(tmp_path):
    """64 KiB of the digit 7 took 30 s in the tqdm pattern (quadratic backtracking) and froze the
    app; every pattern now meets each input once. Run in a child so a regression fails, not hangs."""
    for name, data in PATHOLOGICAL.items():
        (tmp_path / f"{name.replace(' ', '_')}.txt").write_bytes(data)
    assert _import_each_in_a_child(sorted(tmp_path.glob("*.txt"))) == [1] * len(PATHOLOGICAL)


def _refused_quickly(data: bytes, name: str) -> str:
    with pytest.raises(ResultFileError) as e:
        importers.load(data, name)
    return e.value.format_message()


def test_f5_a_table_of_ten_thousand_columns_is_refused_before_it_makes_runs():
    """The tester's 490 KB table of 10,000 columns made 160,182 runs in 178 s at 1.57 GB."""
    header = "name_gpu,num_gpu,watt,price," + ",".join(f"task_{i}" for i in range(10_000))
    rows = "\n".join(f"GPU {r},1.0,300.0,1000.0," + ",".join("12.5" for _ in range(10_000)) for r in range(16))
    message = _refused_quickly(f"{header}\n{rows}".encode(), "pytorch-train-throughput-fp16.csv")
    assert "10,004 columns; at most 1,000" in message


def test_f5_a_file_of_more_runs_than_one_file_holds_is_refused_before_validation():
    rows = "\n".join(f"m{r},{r % 64 + 1},{r + 1}.0,{r + 2}.0,1.0" for r in range(MAX_RUNS_PER_FILE + 1))
    data = f"model,batch_size,throughput_sps,energy_j,duration_s\n{rows}".encode()
    assert f"make {MAX_RUNS_PER_FILE + 1:,} runs; one file holds at most" in _refused_quickly(data, "table.csv")


def test_f5_a_gzip_that_unpacks_past_the_cap_is_refused_without_unpacking_it_all():
    bomb = gzip.compress(b"[" + b"1.5," * (MAX_DOCUMENT_BYTES // 4 + 1) + b"1]", compresslevel=9)
    assert len(bomb) < 1_000_000
    assert f"more than {MAX_DOCUMENT_BYTES // 2**20} MiB" in _refused_quickly(bomb, "bomb.json.gz")


def test_f9_a_zip_of_ten_thousand_members_is_read_in_linear_time(tmp_path):
    """Each member reopened the archive (its directory parsed again): 10,000 one-byte members ran
    past 600 s. The CLI's path (sources from the zip, each imported or skipped) in a child, with a
    hang guard."""
    archive = tmp_path / "many.zip"
    with zipfile.ZipFile(archive, "w") as z:
        for i in range(10_000):
            z.writestr(f"f{i}.txt", b"1")
    assert _import_each_in_a_child([archive]) == [10_000]


def test_a_damaged_multi_gpu_nvidia_smi_header_is_refused_not_a_polars_traceback():
    """Found by the property tests: one byte changed in a real 8-GPU nvidia-smi log made two columns
    of one name, and polars' DuplicateError escaped the importer."""
    path = (Path(__file__).parent / "fixtures" / "formats" / "nvidia_smi"
            / "gpu_glasses-8xH100-iso8601-offset-multigpu.csv")
    data = bytearray(path.read_bytes())
    at = int(0.031182981483974366 * len(data))
    data[at:at + 1] = b"\x01"
    with pytest.raises(ResultFileError, match="not a valid nvidia-smi file"):
        importers.load(bytes(data), path.name, hints=importers.Hints(device="Test GPU"))


def test_a_long_text_of_near_table_lines_is_searched_for_console_tables_in_bounded_time() -> None:
    """A 2 MB file of thousands of header-like lines over rows of figures (a fuzzed CSV whose rows were exploded)
    took 52 s in the console-table search, each candidate header scanning every line below it; the search now visits
    at most table_text.GAP_BUDGET lines over the whole text, and asks for two rows of figures by a count that stops
    at two."""
    import time

    from importers.table_text import text_tables

    # 12,000 lines, no blank line: every other line a header candidate whose rows shift, so that none is a table
    text = "\n".join(f"alpha beta gamma delta\n{' ' * (k % 23)}1.5 2.5 3.5 4.5" for k in range(6_000))
    start = time.perf_counter()
    assert text_tables(text)[0] == []
    assert time.perf_counter() - start < 10.0  # 148 s before the bound; a hang guard, not a speed target
