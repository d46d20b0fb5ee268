"""Trust grades: the H100 evidence replayed through ingest, every path graded, each rule's edges."""

from __future__ import annotations

import json
from pathlib import Path

import duckdb
import pytest

from db import Store
from energy.grades import GRADES, Reason, RunFacts, grade_aggregate, grade_run
from energy.stats import aggregate
from ingest import import_file

H100 = Path(__file__).parent / "fixtures" / "h100"


def _import(db: Path, *names: str) -> None:
    for name in names:
        assert import_file(H100 / name, db=db).status == "imported"


def _runs(store: Store, file_name: str) -> list[dict]:
    return store.query(
        "SELECT run_id, workload, duration_s, trust_grade, trust_reasons, config_key FROM runs "
        "WHERE origin_file_name = ? AND workload != 'idle' ORDER BY started_at", [file_name]).to_dicts()


def _limiting(reasons: list[str]) -> dict[str, str]:
    """check -> cap of the reasons that are not A."""
    parsed = [Reason.parse(r) for r in reasons]
    return {r.check: r.cap for r in parsed if r.cap != "A"}


def test_short_h100_windows_grade_d_with_the_right_reasons(seeded_db: Path) -> None:
    _import(seeded_db, "repeats-short-windows.json")
    with Store.open(seeded_db) as store:
        runs = _runs(store, "repeats-short-windows.json")
        assert len(runs) == 5
        for run in runs:
            assert run["duration_s"] < 0.6 and run["trust_grade"] == "D"
            limits = _limiting(run["trust_reasons"])
            assert limits["window"] == "C"  # 3.2-5.5 updates of a sensor sampled every 0.1 s
            assert limits["steady state"] == "D"  # power rose by a third within the window
            assert limits["agreement"] == "D"  # counter and trace 37-60 % apart
            assert any("updates of a sensor" in r for r in run["trust_reasons"])
        (key,) = {r["config_key"] for r in runs}  # the five repeats are one configuration
        config = store.query("SELECT * FROM configurations WHERE config_key = ?", [key]).to_dicts()[0]
        assert (config["run_count"], config["ok_run_count"], config["trust_grade"]) == (5, 5, "D")
        caps = {(r.check, r.cap) for r in map(Reason.parse, config["trust_reasons"])}
        assert ("runs", "D") in caps and ("spread", "D") in caps and ("repeats", "A") in caps
        stats = store.query("SELECT * FROM config_stats WHERE config_key = ? AND metric = 'j_per_sample'",
                            [key]).to_dicts()[0]
        assert stats["n"] == 5 and stats["mean"] == pytest.approx(0.5789, abs=1e-4)  # README: 0.579
        assert stats["cov_pct"] > 10


def test_ten_second_h100_repeats_grade_a(seeded_db: Path) -> None:
    _import(seeded_db, "repeats-10s-windows.json")
    with Store.open(seeded_db) as store:
        runs = _runs(store, "repeats-10s-windows.json")
        assert [r["trust_grade"] for r in runs] == ["A", "A", "A"]
        assert all(_limiting(r["trust_reasons"]) == {} for r in runs)
        (key,) = {r["config_key"] for r in runs}
        config = store.query("SELECT trust_grade, trust_reasons FROM configurations WHERE config_key = ?",
                             [key]).to_dicts()[0]
        assert config["trust_grade"] == "A", config["trust_reasons"]
        stats = store.query("SELECT * FROM config_stats WHERE config_key = ? AND metric = 'j_per_sample'",
                            [key]).to_dicts()[0]
        assert stats["n"] == 3 and stats["mean"] == pytest.approx(0.643, abs=5e-4)  # README: 0.643
        assert stats["cov_pct"] < 2.0 and stats["ci95_low"] < stats["mean"] < stats["ci95_high"]


def test_short_and_long_repeats_stay_separate_configurations(seeded_db: Path) -> None:
    _import(seeded_db, "repeats-short-windows.json", "repeats-10s-windows.json")
    with Store.open(seeded_db) as store:
        keys = store.query("SELECT DISTINCT config_key, tag FROM runs WHERE workload = 'bert-large-squad' "
                           "AND origin_file_name LIKE 'repeats-%'").rows()
    assert len(keys) == 2  # tag short / long, and each imported file pools only its own runs


def test_default_step_counts_on_the_h100_grade_low(seeded_db: Path) -> None:
    _import(seeded_db, "infer-bert-large-squad.json", "train-oom.json")
    with Store.open(seeded_db) as store:
        short = store.query("SELECT trust_grade FROM runs WHERE origin_file_name = 'infer-bert-large-squad.json' "
                            "AND workload != 'idle' AND duration_s < 3")["trust_grade"].to_list()
        oom = store.query("SELECT trust_grade, trust_reasons FROM runs WHERE status = 'oom'").to_dicts()
    assert len(short) == 14 and set(short) <= {"C", "D"}  # 14 of its 15 runs measured under 3 s
    assert oom[0]["trust_grade"] == "D" and any("ended oom" in r for r in oom[0]["trust_reasons"])


def test_every_run_and_configuration_of_every_origin_is_graded(seeded_db: Path, fixture_file: Path) -> None:
    _import(seeded_db, "repeats-10s-windows.json")
    import_file(fixture_file, db=seeded_db)  # a JouleBench file from a CPU (estimated energy)
    with Store.open(seeded_db) as store:
        missing = store.query("SELECT count(*) FROM runs WHERE trust_grade IS NULL OR config_key IS NULL").item()
        by_origin = dict(store.query("SELECT origin_kind, list(DISTINCT trust_grade ORDER BY trust_grade) "
                                     "FROM runs GROUP BY 1").rows())
        orphans = store.query("SELECT count(*) FROM runs r ANTI JOIN configurations c USING (config_key)").item()
        reference = store.query("SELECT trust_reasons FROM runs WHERE origin_kind = 'reference' LIMIT 1").item()
    assert missing == 0 and orphans == 0
    assert set(by_origin["reference"]) <= {"C", "D"}  # C at best: one figure from a table
    assert any(r.startswith("[C] origin: transcribed from a published table") for r in reference)
    assert "A" in by_origin["upload"]


def test_a_database_from_before_grades_is_graded_when_opened(seeded_db: Path) -> None:
    _import(seeded_db, "repeats-10s-windows.json")
    con = duckdb.connect(str(seeded_db))  # take away migration 5: no grade columns or tables
    con.execute("DROP TABLE config_stats; DROP TABLE configurations")
    for column in ("sensor_update_period_s", "power_trace_source", "warmup_s", "warmup_steady", "start_offset_s",
                   "config_key", "trust_grade", "trust_reasons"):
        con.execute(f"ALTER TABLE runs DROP COLUMN {column}")
    con.execute("DELETE FROM schema_migrations WHERE version = 5")
    con.close()
    with Store.open(seeded_db) as store:
        assert store.query("SELECT count(*) FROM schema_migrations WHERE version = 5").item() == 1
        assert store.query("SELECT count(*) FROM runs WHERE trust_grade IS NULL").item() == 0
        grades = store.query("SELECT trust_grade FROM runs WHERE origin_file_name = 'repeats-10s-windows.json' "
                             "AND workload != 'idle'")["trust_grade"].to_list()
        assert grades == ["A", "A", "A"]
        assert store.query("SELECT count(*) FROM configurations").item() > 0


# --- the rules, one check at a time ---------------------------------------------------------------

GOOD = dict(status="ok", mode="infer", origin_kind="local", duration_s=10.5, energy_j=4000.0,
            energy_boundary="gpu_board", energy_method="counter", sample_period_s=0.1,
            sensor_update_period_s=0.1, energy_disagreement_pct=1.0, warmup_steady=True,
            gpu_clock_avg_mhz=1980.0)


def _grade(**changes: object) -> tuple[str, dict[str, str]]:
    g = grade_run(RunFacts.from_fields({**GOOD, **changes}))
    return g.grade, _limiting(g.texts)


@pytest.mark.parametrize(("changes", "grade", "check"), [
    ({}, "A", None),
    ({"duration_s": 0.25}, "D", "window"),  # under 3 updates
    ({"duration_s": 1.0}, "C", "window"),  # 10 updates
    ({"duration_s": 4.0}, "B", "window"),  # 40 updates
    ({"duration_s": 6.0}, "B", "window"),  # 60 updates, but under 10 s
    ({"duration_s": 10.5, "sensor_update_period_s": 0.5}, "B", "window"),  # 10 s, but 21 updates of 0.5 s
    ({"energy_disagreement_pct": 8.0}, "C", "agreement"),
    ({"energy_disagreement_pct": 30.0}, "D", "agreement"),
    ({"warmup_steady": False}, "B", "steady state"),
    ({"throttle_reasons": "sw_power_cap"}, "A", None),
    ({"throttle_reasons": "sw_power_cap,hw_thermal"}, "B", "throttling"),
    ({"energy_boundary": "estimated", "energy_method": "estimated"}, "D", "boundary"),
    ({"origin_kind": "reference"}, "C", "origin"),
    ({"origin_kind": "upload", "origin_format": "codecarbon", "origin_tool": "codecarbon"}, "B", "origin"),
    ({"origin_kind": "upload", "origin_format": "joulebench-result", "origin_tool": "joulebench"}, "A", None),
    ({"status": "oom"}, "D", "outcome"),
    ({"duration_s": None}, "C", "window"),
    ({"flags": ["net_energy_nonpositive"]}, "C", "flags"),
])
def test_each_check_caps_the_grade_where_docs_say(changes: dict, grade: str, check: str | None) -> None:
    got, limits = _grade(**changes)
    assert got == grade, limits
    assert (check in limits) if check else limits == {}


def test_steady_state_is_judged_from_the_trace_when_the_run_does_not_say() -> None:
    t = [i * 0.1 for i in range(101)]
    rising = [300 + 120 * min(1.0, x / 8) for x in t]  # still climbing for most of the window
    flat = [420.0 + (5 if i % 2 else -5) for i in range(101)]
    falling = [440 - 6 * x for x in t]  # a workload that slows down: its own behaviour, not a short warmup
    assert _grade(warmup_steady=None, trace_t_s=t, trace_power_w=rising)[1]["steady state"] in ("C", "D")
    assert _grade(warmup_steady=None, trace_t_s=t, trace_power_w=flat) == ("A", {})
    assert _grade(warmup_steady=None, trace_t_s=t, trace_power_w=falling) == ("A", {})
    # an idle baseline must be flat either way
    assert _grade(mode="idle", warmup_steady=None, trace_t_s=t, trace_power_w=falling)[0] != "A"
    assert _grade(warmup_steady=None)[1] == {"steady state": "B"}  # nothing to judge it by


def test_aggregate_grades_repeats_and_spread() -> None:
    tight = aggregate([0.640, 0.645, 0.650])
    assert grade_aggregate(["A"] * 3, ["ok"] * 3, throughput=aggregate([600, 610, 605]), energy=tight).grade == "A"
    assert grade_aggregate(["A"], ["ok"], throughput=aggregate([600]), energy=aggregate([0.64])).grade == "B"
    assert grade_aggregate(["A"] * 2, ["ok"] * 2, throughput=aggregate([600, 601]),
                           energy=aggregate([0.64, 0.641])).grade == "B"
    wide = aggregate([0.5, 0.6, 0.7])  # CoV 17 %
    assert grade_aggregate(["A"] * 3, ["ok"] * 3, throughput=None, energy=wide).grade == "D"
    assert grade_aggregate(["A", "C", "A"], ["ok"] * 3, throughput=None, energy=tight).grade == "C"
    assert grade_aggregate([], ["oom", "oom"], throughput=None, energy=None).grade == "D"
    jumpy = aggregate([436, 746, 600])  # launch-bound throughput, CoV 26 %
    assert grade_aggregate(["A"] * 3, ["ok"] * 3, throughput=jumpy, energy=tight).grade == "C"


def test_stored_reasons_round_trip() -> None:
    r = Reason("window", "C", "0.38 s is 3.8 updates: short")
    assert Reason.parse(str(r)) == r and str(r) == "[C] window: 0.38 s is 3.8 updates: short"
    assert Reason.parse("free text").cap == "A"
    assert set(GRADES) == {"A", "B", "C", "D"}


def test_the_simulated_sensor_updates_as_often_as_the_h100s() -> None:
    from tests.sim_nvml import SimulatedGpu

    periods = json.loads((H100 / "nvml-update-periods.json").read_text())
    for field in ("energy_counter", "power_usage", "field_instant", "field_average"):
        assert periods[field]["median_ms"] == pytest.approx(100, abs=1)
    from runner.clock import ManualClock

    assert SimulatedGpu(ManualClock()).update_s * 1000 == pytest.approx(periods["energy_counter"]["median_ms"],
                                                                        abs=1)


# --- where the grades show: the CLI summary and the explorer's aggregate functions -----------------

def test_cli_summary_aggregates_repeats_with_interval_n_and_grade() -> None:
    from runner.report import summary

    runs = [*json.loads((H100 / "repeats-short-windows.json").read_text())["runs"],
            *json.loads((H100 / "repeats-10s-windows.json").read_text())["runs"]]
    lines = summary(runs).splitlines()
    header = lines[0].split()
    rows = [line for line in lines[2:6] if "bert-large-squad" in line]
    assert len(rows) == 2  # five short repeats in one row, three 10 s repeats in another
    short, long = rows
    assert " 5  ok " in short and "0.5789 ± 0.0763" in short and short.split()[-2:] == ["D", "gpu_board"]
    assert " 3  ok " in long and "0.6430 ± 0.0289" in long and long.split()[-2:] == ["A", "gpu_board"]
    assert header[:2] == ["#", "workload"] and "grade" in header and "n" in header
    text = "\n".join(lines)
    assert "spread: J/sample varies by 11 % (CoV)" in text and "5 run(s) agreement (D)" in text


def test_explorer_aggregates_per_configuration_stored_and_computed(seeded_db: Path) -> None:
    from db import queries
    from decision.aggregates import by_configuration, ratio_statement, reason_rows, stored

    _import(seeded_db, "repeats-short-windows.json", "repeats-10s-windows.json")
    with Store.open_read_only(seeded_db) as store:
        configs = queries.configurations(store)
        runs = queries.runs_table(store)
    h100 = runs.filter(runs["device_name"] == "H100 SXM")
    points = by_configuration(h100, "j_per_sample").sort("n")
    assert points["n"].to_list() == [3, 5] and points["grade"].to_list() == ["A", "D"]
    assert points["mean"].to_list() == [pytest.approx(0.6430, abs=1e-4), pytest.approx(0.5789, abs=1e-4)]
    assert all(lo < m < hi for lo, m, hi in zip(points["ci95_low"], points["mean"], points["ci95_high"]))
    saved = stored(configs, "j_per_sample").filter(stored(configs, "j_per_sample")["device_name"]
                                                   == "H100 SXM").sort("n")
    assert saved["n"].to_list() == [3, 5] and saved["grade"].to_list() == ["A", "D"]
    assert saved["ci95_low"].to_list() == pytest.approx(points["ci95_low"].to_list())  # one module, same numbers
    assert "throughput_sps_mean" not in saved.columns and "mean" in saved.columns
    assert reason_rows(saved["reasons"][1])[0]["Best grade it allows"] == "D"
    long_runs, short_runs = points["run_ids"][0], points["run_ids"][1]
    values = dict(zip(h100["run_id"], h100["j_per_sample"]))
    text, r = ratio_statement("10 s windows", [values[i] for i in long_runs], "30-step windows",
                              [values[i] for i in short_runs], what="the energy per example of",
                              higher_is_better=False)
    assert r is not None and r.low is not None and text.startswith("10 s windows")
    assert ("within the noise" in text) == r.within_noise


def test_the_store_computes_the_same_drift_in_sql_as_the_runner_in_numpy(seeded_db: Path) -> None:
    from db.grading import drift_frame
    from energy.steady import drift_pct

    _import(seeded_db, "repeats-short-windows.json", "repeats-10s-windows.json")
    runs = [r for name in ("repeats-short-windows.json", "repeats-10s-windows.json")
            for r in json.loads((H100 / name).read_text())["runs"]]
    with Store.open(seeded_db) as store:
        frame = drift_frame(store.con, [r["run_id"] for r in runs])  # the runs named: filtered in the database
    power = {r["run_id"]: r["power_drift_pct"] for r in frame.iter_rows(named=True) if r["power_drift_pct"] is not None}
    steps = {r["run_id"]: r["step_time_drift_pct"] for r in frame.iter_rows(named=True)
             if r["step_time_drift_pct"] is not None}
    for run in runs:
        trace = next(t for t in run["power_traces"] if t["boundary"])
        assert power[run["run_id"]] == pytest.approx(drift_pct(trace["t_s"], trace["power_w"]), abs=1e-9)
        ms = run.get("step_times_ms") or []
        starts = [sum(ms[:i]) / 1000 for i in range(len(ms))]
        expected = drift_pct(starts, ms) if ms else None
        assert steps.get(run["run_id"]) == (pytest.approx(expected, abs=1e-9) if expected is not None else None)
