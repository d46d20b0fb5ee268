"""Reference LLM results on first start (issue 27 item 3): the published figures in sample_data/runs_llm_*.csv.

The rows parse as the seed reads them, every row cites a listed source, the figures are the source's (every
ML.ENERGY Llama-3.1-8B row against the leaderboard file itself, MLPerf rows against the LoadGen summaries,
a few rows against values read by hand), each figure sits under its own name (ITL is not TPOT, a tokens/s whose
kind the source leaves open is not output tokens/s, no energy where the source gives none), a database seeded
before these files gets them on its next open (migration 0022), and `joulebench decide` answers "Jetson AGX
Orin, an RTX-class GPU or an H100 for an 8B model at my latency target?" from a freshly seeded store.
"""

from __future__ import annotations

import csv
import json
import re
import subprocess
import sys
from pathlib import Path
from typing import Any

import pytest

import db.seed as seed
from db import Store
from tests.helpers import sample_data_without

REPO = Path(__file__).resolve().parents[1]
DATA = REPO / "sample_data"
LLM_FILES = ("runs_llm_jetson.csv", "runs_llm_mlenergy_v3.csv", "runs_llm_mlperf.csv", "runs_llm_mlperf_power.csv")
NEW_DEVICES = ("H100 SXM", "B200", "Instinct MI300X", "Jetson Orin Nano", "Jetson Orin (module not stated)")
LEADERBOARD = REPO / "tests" / "fixtures" / "reference_llm" / "mlenergy-v3-leaderboard-llama31-8b-lm-arena-chat.json"
MLPERF = REPO / "tests" / "fixtures" / "formats" / "mlperf_inference"
SHAPE_8B = "llama-3.1-8b, prompt not stated + output length not stated, engine vllm"


def rows(name: str) -> list[dict[str, str]]:
    with (DATA / name).open(newline="", encoding="utf-8") as fh:
        return list(csv.DictReader(fh))


def by_id(name: str) -> dict[str, dict[str, str]]:
    return {r["ref_id"]: r for r in rows(name)}


def documents() -> dict[str, str]:
    return {r["file"]: r["title"] for r in rows("documents.csv")}


# --- the rows parse and cite ------------------------------------------------------------------------------------


def test_the_rows_parse_as_the_seed_reads_them() -> None:
    catalog = {d["name"]: d for d in seed.devices_document(DATA / "devices.csv").document["devices"]}
    kinds = {n: d["kind"] for n, d in catalog.items()}
    for name in LLM_FILES:
        loaded = seed.runs_document(DATA / name, kinds, catalog)
        runs = loaded.document["runs"]
        assert len(runs) == len(rows(name)) and len({r["run_id"] for r in runs}) == len(runs), name
        # the document carries the catalog entries of its devices, for a database seeded before they were listed
        named = {r["device"]["name"] for r in runs}
        assert {d["name"] for d in loaded.document["devices"]} == named, name
    for device in NEW_DEVICES:
        assert device in catalog, device


def test_every_row_and_new_device_cites_a_listed_source() -> None:
    docs = documents()
    cited_rows = [(n, r) for n in LLM_FILES for r in rows(n)]
    cited_rows += [("devices.csv", r) for r in rows("devices.csv") if r["name"] in NEW_DEVICES]
    for name, r in cited_rows:
        assert r["citation"], (name, r)
        for part in r["citation"].split("; "):
            key, sep, where = part.partition(" · ")
            assert sep and where, (name, part)
            assert key in docs, f"{name}: {key!r} is not in documents.csv"


def test_each_figure_sits_under_its_own_name() -> None:
    for r in rows("runs_llm_mlenergy_v3.csv"):  # the leaderboard states ITL, never TPOT or a request latency
        assert r["itl_p90_ms"] and not r["tpot_p90_ms"] and not r["ttft_p90_ms"], r["ref_id"]
        assert r["batch_size"] == "" and r["tag"].startswith("max_num_seqs "), r["ref_id"]  # a cap, not a batch
        assert r["energy_boundary"] == "gpu_board" and r["engine"] == "vllm" and r["precision"] == "bf16"
    for r in rows("runs_llm_mlperf.csv"):  # LoadGen states TPOT per request, never ITL
        assert not r["itl_p90_ms"], r["ref_id"]
        assert bool(r["j_per_token"]) != bool(r["energy_missing_reason"]), r["ref_id"]
        if r["j_per_token"]:
            assert r["energy_boundary"] == "wall"  # the whole server's AC power, not per accelerator
    for r in rows("runs_llm_jetson.csv"):  # tokens/s of unstated kind is never output tokens/s; no power given
        assert r["throughput_unit_not_stated"] and not r["tokens_per_s"], r["ref_id"]
        assert not r["j_per_token"] and not r["avg_power_w"] and r["energy_missing_reason"], r["ref_id"]


# --- the figures are the source's -------------------------------------------------------------------------------


def test_every_mlenergy_llama_8b_row_is_the_leaderboard_file() -> None:
    source = json.loads(LEADERBOARD.read_text())
    stored = {r["ref_id"]: r for r in rows("runs_llm_mlenergy_v3.csv") if r["model"] == source["model_id"]}
    assert len(stored) == len(source["configurations"]) == 20
    for i, c in enumerate(source["configurations"]):
        ref = f"mlenergy-v3-llama31-8b-{c['gpu_model'].lower()}-x{c['num_gpus']}-seqs{c['max_num_seqs']}"
        r = stored[ref]
        assert r["citation"].endswith(f"configurations[{i}]")
        assert r["device_name"] == {"H100": "H100 SXM", "B200": "B200"}[c["gpu_model"]]
        for column, key in (("tokens_per_s", "output_throughput_tokens_per_sec"), ("avg_power_w", "avg_power_watts"),
                            ("j_per_token", "energy_per_token_joules"), ("j_per_sample", "energy_per_request_joules"),
                            ("itl_p50_ms", "median_itl_ms"), ("itl_p90_ms", "p90_itl_ms"),
                            ("itl_p95_ms", "p95_itl_ms"), ("itl_p99_ms", "p99_itl_ms")):
            assert float(r[column]) == c[key], (ref, column)
        assert int(r["gpu_count"]) == c["num_gpus"] and r["tag"] == f"max_num_seqs {c['max_num_seqs']}"


def test_figures_read_by_hand() -> None:
    ml = by_id("runs_llm_mlenergy_v3.csv")
    h100 = ml["mlenergy-v3-llama31-8b-h100-x1-seqs384"]  # read off the leaderboard JSON by eye
    assert h100["j_per_token"].startswith("0.07423") and h100["itl_p90_ms"].startswith("47.822")
    assert h100["tokens_per_s"].startswith("9248.01")
    b200 = ml["mlenergy-v3-llama31-8b-b200-x1-seqs8"]
    assert b200["tokens_per_s"].startswith("1637.26") and b200["avg_power_w"].startswith("639.39")
    qwen = ml["mlenergy-v3-qwen3-8b-b200-x1-seqs128"]
    assert qwen["j_per_token"].startswith("0.0820") and qwen["itl_p90_ms"].startswith("22.378")
    jetson = by_id("runs_llm_jetson.csv")
    assert jetson["jetsonailab-orin-nano-super-llama31-8b-mlc-int4"]["throughput_unit_not_stated"] == "19.14"
    assert jetson["jetsonailab-orin-nano-original-llama31-8b-mlc-int4"]["throughput_unit_not_stated"] == "14"
    assert jetson["jetsonailab-orin-llama31-8b-vllm-c8"]["throughput_unit_not_stated"] == "112.33"
    h200 = by_id("runs_llm_mlperf.csv")["mlperf-h200x8-maxq-llama2-70b-99-offline"]
    assert h200["gpu_count"] == "8" and 6100 < float(h200["avg_power_w"]) < 6200  # about 6.15 kW at the wall
    assert float(h200["j_per_token"]) == pytest.approx(float(h200["avg_power_w"]) / 25262.1, rel=1e-4)


@pytest.mark.parametrize("ref_id, summary", [
    ("mlperf-h200x8-maxq-llama2-70b-99-offline",
     "v4.1_closed_NVIDIA/results/H200-SXM-141GBx8_TRT_MaxQ/llama2-70b-99/Offline/performance/run_1"),
    ("mlperf-h200x8-maxq-llama2-70b-99-server",
     "v4.1_closed_NVIDIA/results/H200-SXM-141GBx8_TRT_MaxQ/llama2-70b-99/Server/performance/run_1"),
    ("mlperf-mi300xx8-llama2-70b-99-offline",
     "v4.1_closed_AMD/results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Offline/performance/run_1"),
    ("mlperf-mi300xx8-llama2-70b-99-server",
     "v4.1_closed_AMD/results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Server/performance/run_1"),
    ("mlperf-b200x8-xe9680l-llama2-70b-99-interactive",
     "v5.1_closed_Dell/results/XE9680L_B200_SXM_180GBx8_TRT/llama2-70b-99/Interactive/performance/run_1"),
])
def test_mlperf_rows_are_the_loadgen_summaries(ref_id: str, summary: str) -> None:
    text = (MLPERF / summary / "mlperf_log_summary.txt").read_text()
    r = by_id("runs_llm_mlperf.csv")[ref_id]
    tokens = re.search(r"^(?:Completed tokens per second|Tokens per second)\s*:\s*([\d.]+)", text, re.M)
    samples = re.search(r"^(?:Completed samples per second|Samples per second)\s*:\s*([\d.]+)", text, re.M)
    assert tokens and samples
    assert r["tokens_per_s"] == tokens.group(1) and r["throughput_sps"] == samples.group(1)
    tpot = re.search(r"^99.00 percentile time to output token \(ns\)\s*:\s*(\d+)", text, re.M)
    ttft = re.search(r"^90.00 percentile first token latency \(ns\)\s*:\s*(\d+)", text, re.M)
    assert (ttft is None) == (r["ttft_p90_ms"] == ""), ref_id
    if ttft:
        assert float(r["ttft_p90_ms"]) == pytest.approx(int(ttft.group(1)) / 1e6)
    assert (tpot is None) == (r["tpot_p99_ms"] == ""), ref_id
    if tpot:
        assert float(r["tpot_p99_ms"]) == pytest.approx(int(tpot.group(1)) / 1e6)
    assert summary.split("/", 1)[1] in r["citation"]


# --- existing databases get them; Decide answers from them ------------------------------------------------------


def _old_sample_data(into: Path) -> Path:
    """sample_data as it was before the LLM rows: no runs_llm_* file, no device they added."""
    return sample_data_without(into, "runs_llm_*", set(NEW_DEVICES))


def _as_before_0022(path: Path) -> None:
    with Store.open(path) as store:  # seeded (marked so) from the old folder, then as if 0022 had not come yet
        store.con.execute("DELETE FROM schema_migrations WHERE version = 22")


def test_a_database_seeded_before_gets_the_llm_rows_and_devices(tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    with Store.open(path, sample_data=_old_sample_data(tmp_path)) as store:
        assert store.reference_data() == "seeded"
        store.con.execute("UPDATE devices SET notes = 'my edit' WHERE device_name = 'H200 SXM'")
        assert store.con.execute("SELECT count(*) FROM devices WHERE device_name = 'H100 SXM'").fetchone() == (0,)
    _as_before_0022(path)
    with Store.open(path) as store:  # applies 0022: the open seeds what the database lacks
        held = {r[0] for r in store.con.execute("SELECT file_name FROM sources WHERE kind = 'reference'").fetchall()}
        assert set(LLM_FILES) <= held
        assert store.con.execute("SELECT tdp_w, memory_gb FROM devices WHERE device_name = 'H100 SXM'").fetchone() \
            == (700.0, 80.0)
        assert store.con.execute("SELECT notes FROM devices WHERE device_name = 'H200 SXM'").fetchone() == ("my edit",)
        n = store.con.execute("SELECT count(*) FROM runs WHERE run_id LIKE 'ref:runs_llm_%'").fetchone()
        assert n == (sum(len(rows(f)) for f in LLM_FILES),)
        assert store.reference_data() == "seeded"
        sources = store.con.execute("SELECT count(*) FROM sources").fetchone()
    with Store.open(path) as store:  # a later open adds nothing twice
        assert store.con.execute("SELECT count(*) FROM sources").fetchone() == sources


def test_a_database_made_without_reference_data_keeps_that(tmp_path: Path) -> None:
    path = tmp_path / "bare.duckdb"
    Store.open(path, seed_reference=False).close()
    _as_before_0022(path)
    with Store.open(path) as store:
        assert store.reference_data() == "not seeded"
        assert store.con.execute("SELECT count(*) FROM runs").fetchone() == (0,)


def _decide(db: Path, *flags: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "cli", "decide", *flags, "--json", "--db", str(db)],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr
    return json.loads(done.stdout)


def test_decide_answers_the_8b_question_from_a_fresh_store(full_seeded_db: Path) -> None:
    devices = ("Jetson AGX Orin", "GeForce RTX 4090", "H100 SXM")
    flags = [f for d in devices for f in ("--device", d)]
    answer = _decide(full_seeded_db, *flags, "--mode", "infer", "--job", "model:meta-llama/Llama-3.1-8B-Instruct",
                     "--itl-p90", "50", "--shape", SHAPE_8B)["tokens"]
    assert answer["shape"] == SHAPE_8B and answer["target"] == "ITL p90 ≤ 50 ms"
    table = {row["Device"]: row for row in answer["table"]}
    h100 = table["H100 SXM"]  # ML.ENERGY's H100 at max_num_seqs 384: the fewest J/token with ITL p90 47.8 ms
    assert h100["Meets the target"] == "meets" and h100["Basis"] == "reference table"
    assert h100["Energy per output token (J)"] == pytest.approx(0.07423418180476347)
    assert h100["Inter-token latency p90 (ms)"] == pytest.approx(47.82290779403411)
    assert h100["Time per output token p90 (ms)"] is None
    assert "max_num_seqs 384" in h100["Configuration"]
    for device in ("Jetson AGX Orin", "GeForce RTX 4090"):  # no published 8B energy: said, never estimated
        assert table[device]["Meets the target"] == "not known", device
        assert table[device]["Energy per output token (J)"] is None
        assert "no runs of this model" in table[device]["Why"]
    assert any("Jetson AGX Orin: not known" in s for s in answer["sentences"])
    assert any("qwen3" in line for line in answer["left_out"])  # other models are listed as left out, not pooled
    # a TPOT limit is never met by ITL figures: the H100 is then "not known", saying why
    tpot = _decide(full_seeded_db, *flags, "--mode", "infer", "--job", "model:meta-llama/Llama-3.1-8B-Instruct",
                   "--tpot-p90", "50", "--shape", SHAPE_8B)["tokens"]
    row = {r["Device"]: r for r in tpot["table"]}["H100 SXM"]
    assert row["Meets the target"] == "not known" and "ITL" in row["Why"]


def test_uploading_the_leaderboard_file_a_fresh_install_holds_adds_nothing_twice(full_seeded_db: Path) -> None:
    """A fresh install holds the leaderboard's Llama-3.1-8B rows; a buyer who uploads the same file must not see
    each server setting twice ('best of 18 configurations' for B200's 9): the same device, settings and figures
    are one measurement (db.same_measurement), and the report says where it is stored. A file that differs in
    one figure is a different measurement and is added."""
    import json

    from ingest import import_file

    report = import_file(LEADERBOARD, db=full_seeded_db)
    assert (report.status, report.runs_added, report.runs_duplicate) == ("imported", 0, 20)
    assert "already stored from runs_llm_mlenergy_v3.csv (reference)" in report.message
    with Store.open(full_seeded_db) as store:
        n = store.query("SELECT count(*) AS n FROM runs WHERE model = 'meta-llama/Llama-3.1-8B-Instruct' "
                        "AND device_name = 'B200' AND run_id NOT LIKE 'ref:runs_llm_mlperf_power:%'")["n"][0]
    assert n == 9  # B200's nine max_num_seqs settings, once each
    doc = json.loads(LEADERBOARD.read_text())
    doc["configurations"][0]["energy_per_token_joules"] *= 2  # B200 at max_num_seqs 8: another measurement
    changed = full_seeded_db.parent / "changed.json"
    changed.write_text(json.dumps(doc))
    again = import_file(changed, db=full_seeded_db)
    assert (again.runs_added, again.runs_duplicate) == (1, 19)
