"""Issue 28 items 1-4 on real files: configurations never pooled, grades that say what was measured."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from cli.main import main
from db import Store, queries
from decision import decide as decide_mod
from decision.cost import Constraints
from decision.money import CostSettings, Rates
from decision.scope import Job

FORMATS = Path(__file__).parent / "fixtures" / "formats"
MLENERGY = FORMATS / "zeus_mlenergy" / "mlenergy-v3-leaderboard-llama31-8b-lm-arena-chat.json"


def _import(db: Path, path: Path, *extra: str) -> None:
    assert main(["import", str(path), "--db", str(db), *extra]) == 0


def test_mlenergy_servers_settings_are_compared_at_each_devices_best_never_pooled(bare_template: Path,
                                                                                   tmp_path: Path) -> None:
    """B200's 9 and H100's 11 max_num_seqs settings were pooled into 1.06x 'within the noise': each is a
    configuration of its own, and Decide compares each device at its best, naming the settings."""
    db = tmp_path / "s.duckdb"
    db.write_bytes(bare_template.read_bytes())
    _import(db, MLENERGY)
    with Store.open(db) as store:
        runs = queries.runs_table(store)
    assert runs["config_key"].n_unique() == 20  # 9 + 11 server settings, none pooled
    doc = json.loads(MLENERGY.read_text())["configurations"]
    by = {(c["gpu_model"], c["max_num_seqs"]): c for c in doc}
    b200 = by[("B200", 2048)]["output_throughput_tokens_per_sec"] / by[("B200", 2048)]["avg_output_len"]  # 37.41
    h100 = by[("H100", 512)]["output_throughput_tokens_per_sec"] / by[("H100", 512)]["avg_output_len"]  # 24.72
    assert max(c["output_throughput_tokens_per_sec"] / c["avg_output_len"] for c in doc if c["gpu_model"] == "H100") \
        == pytest.approx(h100)
    with Store.open_reading(db) as store:
        findings, catalog, modes = queries.findings(store), queries.devices(store), queries.power_modes(store)
    answer = decide_mod.decide(runs, findings, catalog, modes, Rates([]), ["B200", "H100 SXM"],
                               Job("infer", workload="meta-llama/Llama-3.1-8B-Instruct:lm-arena-chat"),
                               CostSettings(), Constraints())
    (speed,) = answer.speed[("B200", "H100 SXM")]
    assert speed.winner == "B200" and speed.factor == pytest.approx(b200 / h100)  # 1.51x, not 1.06x
    assert "B200 at max_num_seqs 2048 (its best of 9 configurations measured)" in speed.detail
    assert "H100 SXM at max_num_seqs 512 (its best of 11 configurations measured)" in speed.detail
    (energy,) = answer.energy[("B200", "H100 SXM")]
    j_b200, j_h100 = by[("B200", 2048)]["energy_per_request_joules"], by[("H100", 512)]["energy_per_request_joules"]
    assert energy.winner == "B200" and energy.factor == pytest.approx(j_h100 / j_b200)  # 27.84 / 18.47 = 1.51x
    assert speed.within_noise is None  # single runs: no interval, never "within the noise" from pooled settings


@pytest.mark.parametrize(("name", "jobs"), [("lightspec-a100sxm4_emissions.csv", 7),
                                            ("aira-llamafactory-emissions-2.8.3+3.0.7-8xH800-gpucount2.csv", None)])
def test_codecarbon_jobs_never_pool_and_are_graded_partly_estimated(bare_template: Path, tmp_path: Path,
                                                                     name: str, jobs: int | None) -> None:
    """Each tracked run is a job of its own (4 s to 2,348 s were 7 'repeats' with a 194 % spread), and its
    system energy, partly modelled by CodeCarbon (RAM from its size, CPU from TDP), is graded C, not B."""
    db = tmp_path / "c.duckdb"
    db.write_bytes(bare_template.read_bytes())
    _import(db, FORMATS / "codecarbon" / name, "--mode", "train")
    with Store.open(db) as store:
        runs = queries.runs_table(store)
        configs = store.con.execute("SELECT run_count FROM configurations").fetchall()
    assert runs.height == runs["config_key"].n_unique() and {c[0] for c in configs} == {1}
    if jobs:
        assert runs.height == jobs
    assert set(runs["trust_grade"].to_list()) == {"C"}
    reasons = [r for rs in runs["trust_reasons"].to_list() for r in rs if r.startswith("[C] boundary")]
    assert len(reasons) == runs.height and all("partly estimated" in r for r in reasons)
    assert all("energy_partly_estimated" in f for f in runs["flags"].to_list())
