"""Nothing lost, nothing poisoned (issue 9): each numbered case the attacker reproduced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from db import Store
from ingest import import_bytes, inbox, open_store
from joulebench.errors import ResultFileError
from joulebench.paths import inbox_dir
from tests.conftest import FIXTURES


def _doc(**metrics: Any) -> dict[str, Any]:
    doc = json.loads((FIXTURES / "result_v1_cpu_runs.json").read_text())
    doc["runs"] = doc["runs"][:1]
    doc["runs"][0]["metrics"].update(metrics)
    return doc


def _runs(db: Path) -> int:
    with Store.open(db) as store:
        return int(store.query("SELECT count(*) AS n FROM runs")["n"][0])


# --- 1. a queued file never blocks the database ---------------------------------------------------

def test_a_queued_file_with_a_bigint_overflow_is_rejected_and_the_database_stays_usable(seeded_db: Path) -> None:
    text = json.dumps(_doc()).replace('"examples": 20', '"examples": 1000000000000000000000000000000')
    inbox.queue(seeded_db, text.encode(), "huge.json", "upload")
    for _ in range(2):  # every later open works: the file is out of the way
        with open_store(seeded_db) as store:
            assert store.query("SELECT count(*) AS n FROM runs")["n"][0] > 150
    rejected = list((inbox_dir(seeded_db) / "rejected").glob("*.error.json"))
    reason = json.loads(rejected[0].read_text())["reason"]
    assert "runs[0].metrics.examples" in reason and "maximum" in reason
    with Store.open(seeded_db) as store:
        log = store.query("SELECT action, file_name, message FROM intake_log").row(0, named=True)
    assert log["action"] == "rejected" and log["file_name"] == "huge.json" and "examples" in log["message"]


def test_a_queued_file_that_fails_inside_the_database_is_rejected_and_the_drain_goes_on(
        seeded_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A file that passes validation but breaks at ingest (any database error it causes) moves aside;
    the next file is still ingested."""
    good = json.loads((FIXTURES / "result_v1_cpu_runs.json").read_text())
    inbox.queue(seeded_db, b'{"format": "joulebench-result", "schema_version": 1, "created_at": "2026-11-20T10:00:00Z",'
                           b' "producer": {"tool": "x"}, "devices": [{"name": "Odd", "kind": "gpu"}], "runs": []}',
                "a-odd.json", "upload")
    inbox.queue(seeded_db, json.dumps(good).encode(), "b-good.json", "upload")
    real_ingest = Store.ingest

    def ingest(self: Store, loaded: Any, source_kind: str, file_format: str | None = None) -> Any:
        if loaded.name == "a-odd.json":
            raise duckdb.ConversionException("Conversion Error: value out of range")
        return real_ingest(self, loaded, source_kind, file_format)

    monkeypatch.setattr(Store, "ingest", ingest)
    with open_store(seeded_db) as store:
        actions = store.query("SELECT action, file_name FROM intake_log ORDER BY event_id").rows()
    assert actions == [("rejected", "a-odd.json"), ("drained", "b-good.json")]
    assert inbox.pending(seeded_db) == []


# --- 6. physical ranges ------------------------------------------------------------------------

@pytest.mark.parametrize(("field", "value", "bound"), [
    ("energy_j", 1e300, "1e+300 is above the maximum 1e+13"),
    ("throughput_sps", 1.7e308, "1.7e+308 is above the maximum 1e+12"),
    ("j_per_sample", -1.0, "-1 is not above 0"),
])
def test_absurd_metrics_are_refused_naming_the_field_and_the_range(seeded_db: Path, field: str, value: float,
                                                                   bound: str) -> None:
    before = _runs(seeded_db)
    with pytest.raises(ResultFileError) as e:
        import_bytes(json.dumps(_doc(**{field: value})).encode(), "absurd.json", db=seeded_db)
    assert f"runs[0].metrics.{field}" in e.value.format_message() and bound in e.value.format_message()
    assert _runs(seeded_db) == before


@pytest.mark.parametrize(("field", "text"), [("energy_j", "1e400"), ("throughput_sps", "1.8e308")])
def test_a_number_too_large_for_a_float_is_refused_not_stored_as_infinity(seeded_db: Path, field: str,
                                                                          text: str) -> None:
    doc = json.dumps(_doc(**{field: 12345.5})).replace("12345.5", text)
    with pytest.raises(ResultFileError, match=f"{text} is too large"):
        import_bytes(doc.encode(), "inf.json", db=seeded_db)


def test_a_power_sample_over_a_megawatt_is_refused(seeded_db: Path) -> None:
    doc = _doc()
    doc["runs"][0]["power_traces"][0]["power_w"][1] = 2.5e6
    expected = r"power_traces\[0\]\.power_w\[1\]: 2\.5e\+06 is above the maximum 1e\+06"
    with pytest.raises(ResultFileError, match=expected):
        import_bytes(json.dumps(doc).encode(), "mw.json", db=seeded_db)


def test_an_importer_refuses_a_long_log_with_an_absurd_sample(seeded_db: Path) -> None:
    lines = ["timestamp, name, power.draw [W]"]
    watts = ["20.5"] * 100
    watts[70] = "2500000"
    lines += [f"2024/10/13 03:33:{i // 10:02d}.{i % 10}00, NVIDIA GeForce GTX 1650, {w} W" for i, w in enumerate(watts)]
    with pytest.raises(ResultFileError, match=r"power_w: 2\.5e\+06 W is outside the physical range 0 to 1e\+06 W"):
        import_bytes("\n".join(lines).encode(), "nvsmi.csv", db=seeded_db, hints=_infer())


def _infer() -> Any:
    from importers import Hints

    return Hints(mode="infer")


# --- 7. a damaged database file: a clear message, never a traceback -------------------------------

def _damage(path: Path, how: str) -> None:
    size = path.stat().st_size
    with open(path, "r+b") as f:
        if how == "truncated":
            f.truncate(size * 2 // 3)
        elif how == "block overwritten":
            f.seek(size // 2)
            f.write(bytes(range(256)) * 64)
        elif how == "header overwritten":
            f.write(b"not a database" * 20)
        elif how == "emptied":
            f.truncate(0)


@pytest.mark.parametrize("how", ["truncated", "block overwritten", "header overwritten", "emptied"])
@pytest.mark.parametrize("command", [["db", "info"], ["export", "out.json"], ["import", "FIXTURE"]])
def test_a_damaged_database_gives_a_clear_message(seeded_db: Path, tmp_path: Path, how: str, command: list[str],
                                                  capsys: pytest.CaptureFixture[str]) -> None:
    from cli.main import main

    _damage(seeded_db, how)
    argv = [str(FIXTURES / "result_v1_cpu_runs.json") if a == "FIXTURE" else
            str(tmp_path / a) if a.endswith(".json") else a for a in command]
    code = main([*argv, "--db", str(seeded_db)])  # any other exception fails the test with its traceback
    err = capsys.readouterr().err
    if code != 0 or how in ("header overwritten", "emptied"):  # DuckDB may not need a block that was damaged
        assert code == 4, err
        assert f"{seeded_db}: the database file is damaged or unreadable" in err and "Move it away" in err
