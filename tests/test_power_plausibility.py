"""An average power derived from mismatched windows is missing with its reason (issue 17, item 8):
0.033 Wh over a 0.01 s 'training_time' showed 11,903 W for a CPU."""

from __future__ import annotations

from pathlib import Path

import duckdb
import pytest

from energy.figures import implausible_power_reason
from explorer.detail import sections
from ingest.service import import_bytes

TABLE = (b"model,device,energy_wh,duration_s,throughput_sps\n"
         b"bert-tiny,cpu,0.033,0.01,500\nbert-tiny,cpu,0.033,60,500\n")


def test_an_upload_whose_time_does_not_cover_its_energy_keeps_the_energy_not_the_power(tmp_path: Path):
    db = tmp_path / "t.duckdb"
    report = import_bytes(TABLE, "per_model_energy.csv", db=db)
    assert report.runs_added == 2
    with duckdb.connect(str(db), read_only=True) as con:
        cur = con.execute("SELECT * FROM runs WHERE source_id = ? ORDER BY duration_s", [report.source_id])
        names = [d[0] for d in cur.description]
        rows = [dict(zip(names, r)) for r in cur.fetchall()]
    fit, whole = rows
    assert fit["energy_j"] == pytest.approx(118.8) and fit["avg_power_w"] is None
    assert "avg_power_implausible" in fit["flags"]
    assert fit["avg_power_missing_reason"].startswith("energy / time gives 11,880 W, above the device's plausible")
    assert whole["avg_power_w"] == pytest.approx(118.8 / 60) and whole["avg_power_missing_reason"] is None
    shown = sections(fit)["Energy"]
    assert any(v.startswith("not measured: energy / time gives 11,880 W") for v in shown.values())


def test_the_bound_is_the_tdp_for_the_device_itself_and_wider_for_a_whole_system():
    assert implausible_power_reason(120.0, tdp_w=70.0, gpu_count=1, boundary="gpu_board") is not None  # T4: 105 W
    assert implausible_power_reason(100.0, tdp_w=70.0, gpu_count=1, boundary="gpu_board") is None
    assert implausible_power_reason(400.0, tdp_w=170.0, gpu_count=1, boundary="wall") is None  # a desktop at the wall
    assert implausible_power_reason(5000.0, tdp_w=700.0, gpu_count=8, boundary="gpu_board") is None  # 8 x H100
    assert "1,500 W per device x 2 devices" in (implausible_power_reason(3100.0, tdp_w=None, gpu_count=2,
                                                                         boundary="system") or "")


def test_a_training_time_beside_an_energy_gives_no_power(tmp_path: Path):
    """Issue 18, item 2a: the table does not say its energy covers only the training, so energy /
    training_time is not an average power, plausible or not."""
    table = TABLE.replace(b"duration_s", b"training_time_s")
    report = import_bytes(table, "per_model_energy.csv", db=tmp_path / "t.duckdb")
    with duckdb.connect(str(tmp_path / "t.duckdb"), read_only=True) as con:
        rows = con.execute("SELECT energy_j, duration_s, avg_power_w, avg_power_missing_reason FROM runs "
                           "WHERE source_id = ? ORDER BY duration_s", [report.source_id]).fetchall()
    for energy, _duration, power, reason in rows:
        assert energy == pytest.approx(118.8) and power is None
        assert reason.startswith("training_time_s times the training only")
    assert [r[1] for r in rows] == [0.01, 60.0]  # the training time is kept as the run's duration
