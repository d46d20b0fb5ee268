"""A power log attached to the runs of a result file at import time (issue 6).

Pairs are built from the real logs in tests/fixtures/formats. Log times carry no zone and are
read as local time, so the run windows below are written as local times too
(`datetime(...).astimezone()`), whatever zone the tests run in. Expected energies were computed
from the log files with awk (trapezoid rule, power at the window edges interpolated linearly
between the neighbouring samples), not with JouleBench's code.
"""

from __future__ import annotations

import json
import zipfile
from datetime import datetime
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from db import Store
from importers import Hints
from importers.archive import sources_from_path
from ingest import import_source, import_with_power_log, open_store
from ingest.attach import PowerLogFile, load_pair, pair_sha256
from joulebench.errors import ResultFileError
from joulebench.paths import inbox_dir
from tests.helpers import database_held_by_another_process, release

FORMATS = Path(__file__).parent / "fixtures" / "formats"
NVIDIA_SMI = FORMATS / "nvidia_smi" / "fletcher-io-gtx1650_gpu_power.csv"  # 03:33:31.779 to 03:33:32.697
JTOP = FORMATS / "jetson" / "agentmesh-agx-orin_jtop_log.csv"  # 17:06:56 to 17:07:26, every 2-3 s
TEGRASTATS_OLD = FORMATS / "jetson" / "csc2231-jetson-nano_tegrastats.txt"  # no timestamps


def local(*parts: int) -> str:
    """An ISO time with this machine's zone: the zone the (zone-less) logs are read in."""
    return datetime(*parts).astimezone().isoformat()  # type: ignore[arg-type]


def run(run_id: str, start: str | None, end: str | None, **metrics: Any) -> dict[str, Any]:
    out: dict[str, Any] = {
        "run_id": run_id, "status": "ok",
        "device": {"name": "NVIDIA GeForce GTX 1650", "kind": "gpu"},
        "config": {"workload": "bert-base-ner", "mode": "infer", "precision": "fp16", "batch_size": 8},
        "metrics": metrics, "flags": [],
    }
    if start and end:
        out.update(started_at=start, ended_at=end)
    return out


def sweep(*runs: dict[str, Any]) -> bytes:
    return json.dumps({"format": "joulebench-result", "schema_version": 1, "created_at": "2024-10-13T04:00:00+00:00",
                       "producer": {"tool": "joulebench", "version": "0.1.0"}, "runs": list(runs)}).encode()


# run a: 03:33:32.000 to 03:33:32.500, no energy of its own
# run b: 03:33:31.900 to 03:33:32.600, a counter reading of 15.0 J
# run c: 03:40:00 to 03:40:01, after the log ends
# run d: no window
GTX_SWEEP = sweep(
    run("a", local(2024, 10, 13, 3, 33, 32), local(2024, 10, 13, 3, 33, 32, 500000),
        examples=40, optimizer_steps=0, duration_s=0.5, energy_missing_reason="no sensor on this machine"),
    run("b", local(2024, 10, 13, 3, 33, 31, 900000), local(2024, 10, 13, 3, 33, 32, 600000),
        examples=56, duration_s=0.7, energy_j=15.0, energy_boundary="gpu_board", energy_method="counter",
        j_per_sample=15.0 / 56),
    run("c", local(2024, 10, 13, 3, 40, 0), local(2024, 10, 13, 3, 40, 1), examples=8),
    run("d", None, None, examples=8),
)


def gtx_pair(**kw: Any) -> Any:
    return load_pair(GTX_SWEEP, "sweep.json", NVIDIA_SMI.read_bytes(), NVIDIA_SMI.name, **kw)[0]


def test_joulebench_runs_get_the_nvidia_smi_trace_and_energy_over_their_window() -> None:
    f = gtx_pair()
    a, b, c, d = f.runs
    ma = a["metrics"]
    # awk over the log: 44 samples from .001 to .495 inside the window; edges 19.81 W (.989/.001 both 19.81)
    # and 19.78 W (.495/.506 both 19.78); trapezoid = 9.94284 J
    assert ma["energy_j"] == pytest.approx(9.94284, abs=1e-6)
    assert ma["energy_boundary"] == "gpu_board" and ma["energy_method"] == "sampled"
    assert "energy_missing_reason" not in ma
    assert ma["j_per_sample"] == pytest.approx(9.94284 / 40, abs=1e-7)  # 40 examples
    assert ma["avg_power_w"] == pytest.approx(9.94284 / 0.5, abs=1e-5)  # over duration_s 0.5
    assert "j_per_iteration" not in ma  # inference: no optimizer steps
    assert ma["sample_period_s"] == pytest.approx(0.011, abs=1e-3)  # nvidia-smi every ~11 ms
    (trace,) = a["power_traces"]
    assert trace["domain"] == "gpu0" and trace["boundary"] == "gpu_board" and trace["method"] == "sampled"
    assert len(trace["t_s"]) == 44 and trace["t_s"][0] == pytest.approx(0.001, abs=1e-6)  # .001 - .000
    assert trace["power_w"][0] == 19.81 and trace["power_w"][-1] == 19.78
    # b keeps its counter 15.0 J; awk: 61 samples, edges 19.89 / 19.72 W, trapezoid 13.90744 J, 7.28 % apart
    mb = b["metrics"]
    assert mb["energy_j"] == 15.0 and mb["energy_method"] == "counter"
    assert mb["energy_sampled_j"] == pytest.approx(13.90744, abs=1e-5)
    assert mb["energy_counter_j"] == 15.0
    assert mb["energy_disagreement_pct"] == pytest.approx((15.0 - 13.90744) / 15.0 * 100, abs=1e-3)
    assert "energy_counter_vs_sampled_disagree" in b["flags"] and len(b["power_traces"][0]["t_s"]) == 61
    assert "power_traces" not in c and "energy_j" not in c["metrics"] and "power_traces" not in d
    assert f.warnings[0] == "power log fletcher-io-gtx1650_gpu_power.csv attached to 2 of 4 run(s)"
    assert any(w.startswith("runs[2] (c): power log not attached: the log covers") and "03:33:32.697" in w
               for w in f.warnings)
    assert any(w.startswith("runs[3] (d): power log not attached: its wall-clock window is not known")
               for w in f.warnings)
    assert f.name == "sweep.json + fletcher-io-gtx1650_gpu_power.csv" and f.format == "joulebench-result"


def test_stated_boundary_wins_and_a_different_boundary_is_not_compared() -> None:
    f = gtx_pair(boundary="system")
    a, b = f.runs[:2]
    assert a["metrics"]["energy_boundary"] == "system" and a["power_traces"][0]["boundary"] == "system"
    assert "energy_sampled_j" not in b["metrics"] and "energy_counter_vs_sampled_disagree" not in b["flags"]
    assert "13.9074 J at system" in b["notes"]
    assert any("runs[1] (b): its energy is at gpu_board, the log's at system" in w for w in f.warnings)


def codecarbon_jetson(rows: list[tuple[str, str, str]]) -> bytes:
    """The real Jetson Nano emissions.csv with (timestamp, duration, energy_consumed) replaced per row."""
    header, line = (FORMATS / "codecarbon/jetson-nano-edgeai_emissions.csv").read_text().splitlines()
    cells = line.split(",")
    out = [header]
    for n, (stamp, duration, energy) in enumerate(rows):
        cells[0], cells[4], cells[13] = stamp, duration, energy
        cells[2] = f"{cells[2][:-2]}{n:02d}"  # each row its own run_id (rows of one run_id are running totals)
        out.append(",".join(cells))
    return ("\n".join(out) + "\n").encode()


def test_codecarbon_window_from_timestamp_and_duration_with_the_jtop_log() -> None:
    data = codecarbon_jetson([("2025-05-01T17:07:20", "15.0", ""),  # 17:07:05 to 17:07:20, no energy
                              ("2025-05-01T17:07:40", "10.0", "2.460490870277692e-06")])  # 17:07:30-40: after
    f, fmt = load_pair(data, "emissions.csv", JTOP.read_bytes(), JTOP.name,
                       hints=Hints(device="Jetson AGX Orin 64GB", mode="infer"))
    first, second = f.runs
    assert fmt == "codecarbon"
    m = first["metrics"]
    # AGX Orin (the runs' device) has no input rail: module = CPU + GPU + System columns (energy.rails).
    # awk over their sum (mW): edge 17:07:05 = 7026 + (7735 - 7026) / 3 = 7262.33 (between :04 and :07),
    # 17:07:20 = 7026 (between :19 and :21); trapezoid with :07 :09 :11 :13 :15 :17 :19 inside
    # = 14997.33 + 20982 + 27294 + 28094 + 23886 + 16966 + 14153 + 7026 = 153398.33 mW s
    assert m["energy_j"] == pytest.approx(153.398333, abs=1e-5)
    assert m["energy_boundary"] == "jetson_module" and m["energy_method"] == "sampled"
    assert m["avg_power_w"] == pytest.approx(153.398333 / 15.0, abs=1e-6)  # CodeCarbon duration 15 s
    assert [t["domain"] for t in first["power_traces"]] == ["CPU", "GPU", "System"]
    assert [len(t["t_s"]) for t in first["power_traces"]] == [7, 7, 7]
    assert first["power_traces"][2]["t_s"][0] == 2.0 and first["power_traces"][2]["power_w"][0] == pytest.approx(4.536)
    assert {t["boundary"] for t in first["power_traces"]} == {"jetson_module"}
    assert "energy_missing_reason" not in m
    # its own figure, kept: CodeCarbon on a Jetson measures nothing (no GPU seen, CPU and RAM modelled)
    assert "power_traces" not in second and second["metrics"]["energy_boundary"] == "estimated"
    assert any(w.startswith("runs[1] (codecarbon:") and "17:07:30.000 to" in w for w in f.warnings)


def test_no_run_aligned_fails_naming_the_file_and_why() -> None:
    outside = sweep(run("x", local(2024, 10, 13, 5, 0, 0), local(2024, 10, 13, 5, 0, 1)), run("y", None, None))
    with pytest.raises(ResultFileError) as e:
        load_pair(outside, "late.json", NVIDIA_SMI.read_bytes(), NVIDIA_SMI.name)
    message = e.value.format_message()
    assert message.startswith("late.json:") and "no run could be aligned" in message
    assert "runs[0] (x): the log covers" in message and "runs[1] (y): its wall-clock window is not known" in message
    # a format without windows at all (optimum-benchmark) fails the same way
    opt = FORMATS / "optimum_benchmark/tei-bge-cpu-t4host_benchmark.json"
    with pytest.raises(ResultFileError, match="(?s)no run could be aligned.*format records none"):
        load_pair(opt.read_bytes(), opt.name, NVIDIA_SMI.read_bytes(), NVIDIA_SMI.name)


def test_log_without_timestamps_is_a_clear_error() -> None:
    with pytest.raises(ResultFileError, match=r"csc2231-jetson-nano_tegrastats\.txt: .*no timestamps.*cannot be"):
        load_pair(GTX_SWEEP, "sweep.json", TEGRASTATS_OLD.read_bytes(), TEGRASTATS_OLD.name)


def test_wall_meter_csv_defaults_to_wall() -> None:
    start = datetime(2024, 10, 13, 3, 33, 32).astimezone().timestamp()
    meter = "time,watts\n" + "".join(f"{start - 1 + i},{100 + 10 * i}\n" for i in range(4))  # 100 110 120 130 W
    f = load_pair(GTX_SWEEP, "sweep.json", meter.encode(), "meter.csv")[0]
    a = f.runs[0]["metrics"]
    # window 1.0 to 1.5 s after the first sample: 110 W rising to 115 W, trapezoid 0.5 x 112.5 = 56.25 J
    assert a["energy_j"] == pytest.approx(56.25) and a["energy_boundary"] == "wall"


def test_hash_covers_both_files_and_the_pair_imports_once(tmp_path: Path) -> None:
    db = tmp_path / "j.duckdb"
    Store.open(db, seed_reference=False).close()
    report, imported = import_with_power_log(GTX_SWEEP, "sweep.json", NVIDIA_SMI.read_bytes(), NVIDIA_SMI.name, db=db)
    assert report.status == "imported" and report.runs_added == 4
    import hashlib

    result_sha = hashlib.sha256(GTX_SWEEP).hexdigest()
    assert imported.content_sha256 == pair_sha256(result_sha, NVIDIA_SMI.read_bytes()) != result_sha
    again, _ = import_with_power_log(GTX_SWEEP, "sweep.json", NVIDIA_SMI.read_bytes(), NVIDIA_SMI.name, db=db)
    assert again.status == "already_imported" and again.runs_added == 0
    alone, _ = import_source(sources_from_path_bytes(GTX_SWEEP, "sweep.json"), db=db)
    assert alone.status == "imported" and alone.runs_duplicate == 4  # another source; its runs are stored already
    with Store.open(db, seed_reference=False) as store:
        assert store.query("SELECT count(*) AS n FROM sources")["n"][0] == 2
        row = store.query("SELECT energy_j, energy_method, origin_sha256 FROM runs WHERE run_id = 'a'").row(0)
        assert row[0] == pytest.approx(9.94284, abs=1e-6) and row[1] == "sampled" and row[2] == report.content_sha256
        n = store.query("SELECT count(*) AS n FROM power_samples WHERE run_id IN ('a', 'b')")["n"][0]
        assert n == 44 + 61


def sources_from_path_bytes(data: bytes, name: str) -> Any:
    from importers import Source

    return Source.single(data, name)


def test_queued_pair_is_ingested_later_with_the_same_result(seeded_db: Path) -> None:
    data = codecarbon_jetson([("2025-05-01T17:07:20", "15.0", "")])
    source = sources_from_path_bytes(data, "emissions.csv")
    log = PowerLogFile(JTOP.read_bytes(), JTOP.name, "system")
    hints = Hints(device="Jetson AGX Orin 64GB", mode="infer")
    with database_held_by_another_process(seeded_db) as holder:
        report, imported = import_source(source, db=seeded_db, hints=hints, power_log=log)
        assert report.status == "queued"
        side = json.loads(next(inbox_dir(seeded_db).glob(".*.hints.json")).read_text())
        assert side["attach"] == {"source_name": "emissions.csv", "log_name": JTOP.name, "boundary": "system"}
        release(holder)
    with open_store(seeded_db) as store:
        assert store.query("SELECT action FROM intake_log")["action"].to_list() == ["drained"]
        row = store.query("SELECT energy_j, energy_boundary, origin_sha256, origin_file_name FROM runs "
                          "WHERE origin_format = 'codecarbon'").row(0, named=True)
        samples = store.query("SELECT count(*) AS n FROM power_samples JOIN runs USING (run_id) "
                              "WHERE origin_format = 'codecarbon'")["n"][0]
    assert row["energy_j"] == pytest.approx(153.398333, abs=1e-5) and row["energy_boundary"] == "system"  # see above
    assert row["origin_sha256"] == imported.content_sha256 and samples == 21
    assert row["origin_file_name"] == f"emissions.csv + {JTOP.name}"
    assert list(inbox_dir(seeded_db).iterdir()) == []
    again, _ = import_source(source, db=seeded_db, hints=hints, power_log=log)
    assert again.status == "already_imported"


def test_cli_power_log(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "cli.duckdb"
    result = tmp_path / "sweep.json"
    result.write_bytes(GTX_SWEEP)
    assert main(["import", str(result), "--power-log", str(NVIDIA_SMI), "--db", str(db)]) == 0
    out = capsys.readouterr().out
    assert "sweep.json + fletcher-io-gtx1650_gpu_power.csv" in out and "attached to 2 of 4 run(s)" in out
    assert "runs[3] (d): power log not attached" in out
    late = tmp_path / "late.json"
    late.write_bytes(sweep(run("x", local(2024, 10, 13, 5, 0, 0), local(2024, 10, 13, 5, 0, 1))))
    assert main(["import", str(late), "--power-log", str(NVIDIA_SMI), "--db", str(db)]) == 2
    assert "no run could be aligned" in capsys.readouterr().err
    assert main(["import", str(result), "--power-log-boundary", "wall", "--db", str(db)]) == 2


def test_cli_attach_logs_in_a_zip(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    archive = tmp_path / "bundle.zip"
    with zipfile.ZipFile(archive, "w") as zf:
        zf.writestr("gtx/sweep.json", GTX_SWEEP)
        zf.writestr("gtx/gpu_power.csv", NVIDIA_SMI.read_bytes())
    assert len(sources_from_path(archive)) == 2
    db = tmp_path / "z.duckdb"
    Store.open(db, seed_reference=False).close()
    assert main(["import", str(archive), "--attach-logs", "--db", str(db)]) == 0
    assert "bundle/gtx/sweep.json + gpu_power.csv" in capsys.readouterr().out
    with Store.open(db, seed_reference=False) as store:
        assert store.query("SELECT count(*) AS n FROM sources")["n"][0] == 1
        assert store.query("SELECT energy_method FROM runs WHERE run_id = 'a'")["energy_method"][0] == "sampled"
