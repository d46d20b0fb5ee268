"""Nothing lost, nothing poisoned (issue 9): each numbered case the attacker reproduced."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import duckdb
import pytest

from db import Store
from db.writes import Batch
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
    real_add = Batch.add

    def add(self: Batch, loaded: Any, **kw: Any) -> Any:
        if loaded.name == "a-odd.json":
            raise duckdb.ConversionException("Conversion Error: value out of range")
        return real_add(self, loaded, **kw)

    monkeypatch.setattr(Batch, "add", add)  # where the drain's one transaction writes each file
    with open_store(seeded_db) as store:
        actions = store.query("SELECT action, file_name FROM intake_log ORDER BY event_id").rows()
    assert actions == [("rejected", "a-odd.json"), ("drained", "b-good.json")]
    assert inbox.pending(seeded_db) == []


def test_an_unreadable_queued_file_is_set_aside_and_the_files_behind_it_drain(
        seeded_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 17, F8: one chmod 000 file in the inbox stalled every file behind it. (Tests run as
    root, who reads any file, so the refusal to read is the operating system's answer, patched.)"""
    good = json.loads((FIXTURES / "result_v1_cpu_runs.json").read_text())
    inbox.queue(seeded_db, json.dumps({**good, "runs": good["runs"][:1]}).encode(), "a-locked.json", "upload")
    inbox.queue(seeded_db, json.dumps(good).encode(), "b-good.json", "upload")
    real_read = Path.read_bytes

    def read_bytes(self: Path) -> bytes:
        if "a-locked" in self.name and "rejected" not in str(self):
            raise PermissionError(13, "Permission denied", str(self))
        return real_read(self)

    monkeypatch.setattr(Path, "read_bytes", read_bytes)
    with open_store(seeded_db) as store:
        log = store.query("SELECT action, file_name, message FROM intake_log ORDER BY event_id").rows()
    assert [(a, f) for a, f, _ in log] == [("rejected", "a-locked.json"), ("drained", "b-good.json")]
    assert "cannot be read (EACCES, permission denied)" in log[0][2] and "fix its permissions" in log[0][2]
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


# --- 8. memory: archives are read one member at a time, files sized before they are read ----------

# VmHWM, the peak of this process image: ru_maxrss carries over the forking parent's peak (a pytest
# process that imported torch reads 600+ MB before the child has done anything)
MEMORY_PROBE = """
import sys
from cli.main import main
code = main(sys.argv[1:])
hwm = next(line for line in open("/proc/self/status") if line.startswith("VmHWM:"))
print("PEAK_RSS_MB", int(hwm.split()[1]) / 1024, file=sys.stderr)
sys.exit(code)
"""


def _peak_rss_mb(args: list[str], cwd: Path) -> tuple[float, str]:
    import subprocess
    import sys

    done = subprocess.run([sys.executable, "-c", MEMORY_PROBE, *args], capture_output=True, text=True, cwd=cwd,
                          timeout=600)
    line = next(x for x in done.stderr.splitlines() if x.startswith("PEAK_RSS_MB"))
    return float(line.split()[1]), done.stdout + done.stderr


def test_a_small_zip_of_many_large_members_is_read_one_member_at_a_time(tmp_path: Path) -> None:
    import io
    import zipfile

    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w", zipfile.ZIP_DEFLATED) as zf:
        for i in range(400):  # 400 MiB unpacked from about 0.5 MB: all of it in memory was the bug
            zf.writestr(f"m{i:04d}.txt", b"x" * (1 << 20))
    assert len(buf.getvalue()) < 1_000_000
    (tmp_path / "many.zip").write_bytes(buf.getvalue())
    # the database made first, in its own process: creating and seeding it peaks near 350 MB by itself, and an
    # import opens the database before it reads the members (all of them go in one transaction)
    _peak_rss_mb(["db", "info", "--db", "m.duckdb"], tmp_path)
    peak, said = _peak_rss_mb(["import", "many.zip", "--db", "m.duckdb"], tmp_path)
    assert "400 file(s) looked at, none in a format JouleBench knows" in said
    assert peak < 350, f"peak RSS {peak:.0f} MB: members were held in memory together"


def test_a_2_gb_file_is_refused_before_it_is_read(tmp_path: Path) -> None:
    huge = tmp_path / "huge.json"
    with open(huge, "wb") as f:
        f.truncate(2 * 1024**3)  # sparse: 2 GB long, nothing on disk
    peak, said = _peak_rss_mb(["import", "huge.json", "--db", "m.duckdb"], tmp_path)
    assert "huge.json: (whole file): 2048 MiB; at most 64 MiB are read: split it into smaller files" in said
    assert peak < 350


# --- 9. security ----------------------------------------------------------------------------------

def test_csv_exports_neutralise_formula_prefixes(seeded_db: Path, tmp_path: Path) -> None:
    from db.export import Selection, write_tables

    doc = _doc()
    doc["runs"][0]["device"]["name"] = "=cmd|' /C calc'!A0"
    doc["runs"][0]["notes"] = "@SUM(A1:A9)"
    import_bytes(json.dumps(doc).encode(), "formula.json", db=seeded_db)
    with Store.open(seeded_db) as store:
        written = write_tables(store, tmp_path / "out.csv", Selection(run_ids=(doc["runs"][0]["run_id"],)))
    text = written[0].read_text()
    assert "'=cmd|' /C calc'!A0" in text and "'@SUM(A1:A9)" in text
    assert ",=cmd" not in text and ",@SUM" not in text


def test_the_app_asks_for_the_password_when_one_is_set(seeded_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("JOULEBENCH_DB", str(seeded_db))
    monkeypatch.setenv("JOULEBENCH_APP_PASSWORD", "s3cret correct horse")
    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(FIXTURES.parent.parent / "app.py"), default_timeout=60).run()
    assert not at.exception and not at.metric  # nothing of the database shown
    at.text_input(key="joulebench_password").set_value("guess")
    at.button[0].click().run()
    assert at.error[0].value == "Wrong password." and not at.metric
    at.text_input(key="joulebench_password").set_value("s3cret correct horse")
    at.button[0].click().run()
    assert not at.exception and any(m.label == "Runs" for m in at.metric)


def test_wrong_passwords_slow_down_then_lock_out_the_address() -> None:
    """Issue 17: a password-protected app allowed 226 wrong guesses in 20 s."""
    from explorer.access import Throttle

    now = [0.0]
    t = Throttle(clock=lambda: now[0])
    waits = []
    for _ in range(Throttle.LOCKOUT_FAILURES):
        assert t.wait_s("10.0.0.9") == 0  # each guess is made only once the wait is over
        t.failed("10.0.0.9")
        waits.append(t.wait_s("10.0.0.9"))
        now[0] += waits[-1]
    assert waits[:2] == [0, 0] and waits[2:6] == [1, 2, 4, 8] and waits[-1] == Throttle.LOCKOUT_S
    guesses_in_20_s = sum(1 for i in range(len(waits)) if sum(waits[:i]) <= 20)
    assert guesses_in_20_s == 7  # was 226
    assert t.wait_s("10.0.0.10") == 0  # another address is not held up
    now[0] += Throttle.LOCKOUT_S
    t.succeeded("10.0.0.9")
    assert t.wait_s("10.0.0.9") == 0


def test_the_sign_in_form_refuses_guesses_while_the_address_waits(seeded_db: Path,
                                                                  monkeypatch: pytest.MonkeyPatch) -> None:
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    from explorer import access

    monkeypatch.setattr(access, "THROTTLE", access.Throttle())
    monkeypatch.setenv("JOULEBENCH_DB", str(seeded_db))
    monkeypatch.setenv("JOULEBENCH_APP_PASSWORD", "s3cret correct horse")
    st.cache_data.clear()
    at = AppTest.from_file(str(FIXTURES.parent.parent / "app.py"), default_timeout=60).run()
    for _ in range(3):
        at.text_input(key="joulebench_password").set_value("guess")
        at.button[0].click().run()
    assert at.error[0].value.startswith("Wrong password. Try again in 1 s")
    at.text_input(key="joulebench_password").set_value("s3cret correct horse")  # even the right one waits
    at.button[0].click().run()
    assert at.error[0].value.startswith("Too many wrong passwords from this address: try again in")
    assert not at.metric


def test_host_names_allowed() -> None:
    from explorer.access import host_allowed, host_name

    assert host_name("Example.org:8501") == "example.org" and host_name("[::1]:8501") == "[::1]"
    assert host_allowed("localhost:8501") and host_allowed("127.0.0.1:8501") and host_allowed("[::1]:8501")
    assert not host_allowed("evil.example:8501")


@pytest.mark.parametrize(("duckdb_says", "expected", "not_said"), [
    ('IO Error: Could not write file "/data/jb.duckdb.wal": No space left on device', "the disk is full", "damaged"),
    ('IO Error: Cannot open file "/data/jb.duckdb": Permission denied', "permission denied", "damaged"),
    ('IO Error: Cannot open file "/data/jb.duckdb": Read-only file system', "permission denied", "damaged"),
    ("Invalid Input Error: Resource In Use Error: connection has an unfinished result", "not known to be damaged",
     "Move it away"),
    ('IO Error: The file "/data/jb.duckdb" exists, but it is not a valid DuckDB database file!',
     "damaged or unreadable", "disk is full"),
])
def test_a_database_failure_names_its_real_cause(tmp_path: Path, monkeypatch: pytest.MonkeyPatch,
                                                 duckdb_says: str, expected: str, not_said: str) -> None:
    """Issue 17, F7: a full disk or a permission was reported as 'damaged... move it away'."""
    import duckdb

    from db.connection import connect
    from joulebench.errors import DatabaseError

    def refuse(*args: object, **kwargs: object) -> None:
        raise duckdb.IOException(duckdb_says)

    monkeypatch.setattr(duckdb, "connect", refuse)
    with pytest.raises(DatabaseError) as e:
        connect(tmp_path / "jb.duckdb")
    assert expected in e.value.format_message() and not_said not in e.value.format_message()
