"""Bounds on everything a person types or a file carries (issue 30, defects 7, 8 and 10): text fields
(length, control characters), the runner's options, latencies that are not measurements, prices; and the
one table helper that bounds what a page sends to the browser."""

from __future__ import annotations

import json
import shutil
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from cli.main import main
from db import Store
from joulebench.errors import ResultFileError
from joulebench.ranges import RangeError, check, check_text, check_text_field
from joulebench.resultfile import load_result_bytes
from joulebench.text import shown, table

FIXTURE = Path(__file__).parent / "fixtures" / "result_v1_cpu_runs.json"
FORMATS = Path(__file__).parent / "fixtures" / "formats"


def _document(**changes: Any) -> dict[str, Any]:
    doc: dict[str, Any] = json.loads(FIXTURE.read_text())
    run = doc["runs"][0]
    for path, value in changes.items():
        where = run
        *parents, key = path.split("__")
        for p in parents:
            where = where[p]
        where[key] = value
    return doc


# --- defect 7: text in a file ------------------------------------------------------------------------

def test_a_file_with_a_5_mb_tag_is_refused_naming_the_file_field_limit_and_fix(
        seeded_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    path = tmp_path / "big-tag.json"
    path.write_text(json.dumps(_document(config__tag="x" * 5_000_000, notes="y" * 10_000_000)))
    with Store.open_read_only(seeded_db) as store:
        before = store.query("SELECT count(*) FROM sources").item()
    assert main(["import", str(path), "--db", str(seeded_db)]) == 2
    said = capsys.readouterr()
    text = said.out + said.err
    assert ("big-tag.json: runs[0].config.tag: 5,000,000 characters, over the limit of 200 for a name or label; "
            "give a short name") in text
    assert "big-tag.json: runs[0].notes: 10,000,000 characters, over the limit of 10,000 for free text" in text
    assert len(text) < 2_000  # the value itself is never echoed
    with Store.open_read_only(seeded_db) as store:
        assert store.query("SELECT count(*) FROM sources").item() == before  # nothing half-written


@pytest.mark.parametrize(("change", "said"), [
    ({"device__name": "RTX\n3090"}, "runs[0].device.name: holds a line break or tab (U+000A at position 4); a name "
                                    "is one line"),
    ({"config__tag": "a\x1b[2Jb"}, "runs[0].config.tag: holds a control character (U+001B at position 2)"),
    ({"config__workload": "w" * 201}, "runs[0].config.workload: 201 characters, over the limit of 200"),
    ({"environment__system_name": "s" * 201}, "runs[0].environment.system_name: 201 characters, over the limit of 200"),
    ({"notes": "n" * 10_001}, "runs[0].notes: 10,001 characters, over the limit of 10,000"),
    ({"error": "e\x00"}, "runs[0].error: holds a control character (U+0000"),
])
def test_names_are_one_short_line_and_free_text_is_bounded(change: dict[str, Any], said: str) -> None:
    with pytest.raises(ResultFileError) as e:
        load_result_bytes(json.dumps(_document(**change)).encode(), "mine.json")
    assert said in e.value.format_message()


def test_notes_may_hold_line_breaks_and_tabs_and_a_name_of_200_characters_passes() -> None:
    doc = _document(notes="first line\nsecond\tline\r\n", config__tag="t" * 200, device__name="d" * 200)
    loaded = load_result_bytes(json.dumps(doc).encode(), "mine.json")
    assert loaded.document["runs"][0]["notes"].startswith("first line\n")


def test_an_enum_field_holding_megabytes_is_refused_without_echoing_it() -> None:
    with pytest.raises(ResultFileError) as e:
        load_result_bytes(json.dumps(_document(config__precision="p" * 3_000_000)).encode(), "mine.json")
    message = e.value.format_message()
    assert "runs[0].config.precision" in message and "(3,000,000 characters)" in message and len(message) < 2_000


# --- defect 7: a table never sends more than a few MB ------------------------------------------------

def _sent_bytes(frame_code: str) -> tuple[int, list[Any]]:
    """The size of the element Streamlit sends for `st.dataframe(styled(frame))` (its protobuf message, as it
    goes over the websocket), run by Streamlit's own script runner, and the values shown in the first column."""
    from streamlit.testing.v1 import AppTest

    script = ("import polars as pl\nimport streamlit as st\nfrom explorer.tables import styled\n"
              f"frame = {frame_code}\nst.dataframe(styled(frame), hide_index=True)\n")
    at = AppTest.from_string(script, default_timeout=120).run()
    assert not at.exception, at.exception
    element = at.dataframe[0]
    return element.proto.ByteSize(), list(element.value.iloc[:, 0])


def test_a_table_cuts_long_text_cells_and_sends_a_few_kilobytes() -> None:
    size, first = _sent_bytes('pl.DataFrame({"Tag": ["x" * 5_000_000] * 3, "Notes": ["y" * 10_000_000] * 3, '
                              '"Runs": [1, 2, 3]})')
    assert size < 64_000  # 45 MB of text before the cut
    assert first[0] == "x" * 199 + "…"


def test_a_table_of_many_rows_stays_under_its_byte_budget_and_says_so() -> None:
    from explorer.tables import MAX_TABLE_BYTES, bounded

    frame = pl.DataFrame({"Device": [f"device {i} " + "d" * 150 for i in range(60_000)],
                          "Power (W)": [float(i) for i in range(60_000)]})
    kept, note = bounded(frame)
    assert 0 < kept.height < frame.height and note is not None and f"of {frame.height:,} rows" in note
    size, _ = _sent_bytes('pl.DataFrame({"Device": [f"device {i} " + "d" * 150 for i in range(60_000)], '
                          '"Power (W)": [float(i) for i in range(60_000)]})')
    assert size <= MAX_TABLE_BYTES * 1.1


def test_link_cells_are_not_cut_and_short_tables_are_untouched() -> None:
    from explorer.tables import bounded

    link = "/run_detail?run_id=" + "r" * 200
    frame = pl.DataFrame({"Run": [link], "Tag": ["short"], "n": [1]})
    kept, note = bounded(frame)
    assert kept.equals(frame) and note is None


# --- defect 8: every runner option has a range, checked before anything is allocated -----------------

def test_a_billion_repeats_is_refused_fast_in_bounded_memory(tmp_path: Path) -> None:
    """Measured in a child of a child, so the memory is this command's alone (before: 16 GB in 30 s)."""
    probe = ("import resource, subprocess, sys, time\n"
             "t = time.monotonic()\n"
             "done = subprocess.run(sys.argv[1:], capture_output=True, text=True, timeout=120)\n"
             "print(done.returncode, time.monotonic() - t, resource.getrusage(resource.RUSAGE_CHILDREN).ru_maxrss)\n"
             "print(done.stderr)\n")
    cmd = [sys.executable, "-c", probe, sys.executable, "-m", "cli", "run", "--check", "--device", "cpu",
           "--repeats", "1000000000", "--db", str(tmp_path / "never.duckdb")]
    out = subprocess.run(cmd, capture_output=True, text=True, timeout=180, cwd=Path(__file__).parent.parent).stdout
    code, seconds, rss_kb = out.splitlines()[0].split()
    assert int(code) == 2, out
    assert "--repeats: 1000000000 is not valid; expected a whole number of at least 1 and at most 1,000" in out
    assert float(seconds) < 60 and int(rss_kb) < 1_500_000  # torch imported, nothing expanded: about 300 MB
    assert not (tmp_path / "never.duckdb").exists()


BAD_OPTIONS = [
    (["--batch-size", "10000000"], "--batch-size: 10000000 is not valid; expected a whole number of at least 1 and "
                                   "at most 65,536 (no device holds a larger batch"),
    (["--workload", "llm-tiny", "--request-rate", "1e-9"],
     "--request-rate: 1e-09 is not valid; expected a number of at least 0.001 and at most 1,000,000 (requests per "
     "second: at a lower rate the first request may not come for hours)"),
    (["--workload", "llm-tiny", "--request-rate", "0.001", "--batch-size", "256"],
     "--request-rate 0.001 with 256 requests per run (--batch-size): they would take about 71 h to arrive"),
    (["--workload", "llm-tiny", "--request-rate", "100000", "--duration", "86400"],
     "a serving run would send 8,640,000,000 requests; one run sends at most 1,000,000"),
    (["--workload", "llm-tiny", "--max-new-tokens", "1000000"], "--max-new-tokens: 1000000 is not valid"),
    (["--steps", "100000000"], "--steps: 100000000 is not valid; expected a whole number of at least 1 and at most "
                               "1,000,000 (each step's time is kept"),
    (["--warmup", "10000000000"], "--warmup: 10000000000 is not valid"),
    (["--repeats", "5000"], "--repeats: 5000 is not valid"),
    (["--duration", "1e9"], "--duration: 1000000000 is not valid; expected a number above 0 and at most 86,400"),
    (["--duration", "nan"], "--duration: nan is not valid"),
    (["--min-window", "1e7"], "--min-window: 10000000.0 is not valid"),
    (["--grad-accum", "100000", "--mode", "train"], "--grad-accum: 100000 is not valid"),
    (["--seq-len", "100000000"], "--seq-len: 100000000 is not valid"),
    (["--workload", "resnet50", "--image-size", "1000000"], "--image-size: 1000000 is not valid"),
    (["--idle-seconds", "1e6"], "--idle-seconds: 1000000 is not valid"),
    (["--settle", "1e6"], "--settle: 1000000 is not valid"),
    (["--sample-hz", "1e9"], "--sample-hz: 1000000000 is not valid; expected a number of at least 0.01 and at most "
                             "1,000 (no power sensor updates faster than 1 kHz)"),
    (["--tdp-w", "1e-320"], "--tdp-w: 9.99989e-321 is not valid; expected a number of at least 0.1"),
    (["--power-limit", "1e-320", "--power-dry-run"],
     "--power-limit: 9.99989e-321 is not valid; expected a number of at least 1"),
    (["--tag", "a\x1b[2Jb"], "--tag: holds a control character (U+001B at position 2)"),
    (["--tag", "t" * 100_000], "--tag: 100,000 characters, over the limit of 200"),
    (["--batch-size", ",".join(map(str, range(1, 41))), "--seq-len", "8,16,32,64,128", "--repeats", "101"],
     "this sweep would make 20,200 runs; one sweep makes at most 20,000"),
    (["--workload", "w" * 100_000], "--workload: unknown workload '" + "w" * 40 + "'... (100,000 characters)"),
]


@pytest.mark.parametrize(("argv", "said"), BAD_OPTIONS, ids=[" ".join(a)[:40] for a, _ in BAD_OPTIONS])
def test_every_run_option_is_bounded_with_the_option_range_and_why(
        argv: list[str], said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import time

    start = time.monotonic()
    assert main(["run", "--check", "--device", "cpu", *argv, "--db", str(tmp_path / "never.duckdb")]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err) < 3_000
    assert time.monotonic() - start < 10
    assert list(tmp_path.iterdir()) == []  # nothing ran, nothing was written


def test_ranges_in_the_middle_still_plan_and_the_form_sees_the_same_messages(
        tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    from explorer.jobs import in_form_words

    argv = ["run", "--check", "--device", "cpu", "--workload", "llm-tiny", "--request-rate", "0.5,2",
            "--repeats", "3", "--batch-size", "1,4", "--db", str(tmp_path / "x.duckdb")]
    assert main(argv) == 0
    assert json.loads(capsys.readouterr().out)["measured_runs"] == 12
    assert in_form_words("--repeats: 5000 is not valid") == "Repeats: 5000 is not valid"


def test_a_long_list_of_values_is_parsed_in_linear_time(tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    import time

    start = time.monotonic()
    values = ",".join(str(i) for i in range(1, 200_001))
    assert main(["run", "--check", "--device", "cpu", "--batch-size", values, "--db", str(tmp_path / "n.db")]) == 2
    err = capsys.readouterr().err
    assert "--batch-size: 65537 is not valid" in err and len(err) < 3_000
    assert time.monotonic() - start < 10


# --- defect 10: machine and device names, db snapshots ------------------------------------------------

@pytest.mark.parametrize(("name", "said"), [
    ("lab\x1b[31m-3090", "--machine: holds a control character (U+001B at position 4)"),
    ("m" * 100_000, "--machine: 100,000 characters, over the limit of 200"),
    ("two\nlines", "--machine: holds a line break or tab"),
])
def test_push_refuses_a_machine_name_before_anything_is_opened(
        name: str, said: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url = f"ducklake:sqlite:{tmp_path / 'team.sqlite'}"
    assert main(["push", "--store", url, "--db", str(tmp_path / "local.duckdb"), "--machine", name]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err) < 1_000
    assert list(tmp_path.iterdir()) == []  # neither the local file nor the team store was touched


@pytest.mark.parametrize(("device", "said"), [
    ("RTX\x003090", "--device: holds a control character (U+0000 at position 4)"),
    ("d" * 100_000, "--device: 100,000 characters, over the limit of 200"),
])
def test_label_refuses_a_device_name_with_control_characters_or_100k_characters(
        device: str, said: str, seeded_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    tegra = FORMATS / "jetson" / "LLM_PIPELINE-agx-orin-tegrastats-records-source.log"
    assert main(["import", str(tegra), "--db", str(seeded_db)]) == 0
    capsys.readouterr()
    assert main(["label", tegra.name, "--device", device, "--db", str(seeded_db)]) == 2
    err = capsys.readouterr().err
    assert said in err and len(err) < 1_000
    with Store.open_read_only(seeded_db) as store:
        names = store.query("SELECT DISTINCT r.device_name FROM runs r JOIN sources s USING (source_id) "
                            "WHERE s.file_name LIKE '%tegrastats%'")["device_name"].to_list()
    assert device not in names and all(n is None or len(n) <= 200 for n in names)


def test_db_snapshots_prints_a_stored_machine_name_safely(bare_template: Path, tmp_path: Path,
                                                          monkeypatch: pytest.MonkeyPatch,
                                                          capsys: pytest.CaptureFixture[str]) -> None:
    """A push from before the bounds may have stored any machine name: it prints escaped and cut."""
    import db.push as push_module
    from db.lake import LakeUrl
    from ingest import import_file

    local = tmp_path / "box.duckdb"
    shutil.copy(bare_template, local)
    assert import_file(FORMATS / "jetson" / "LLM_PIPELINE-agx-orin-tegrastats-records-source.log",
                       db=local).status == "imported"
    url = f"ducklake:sqlite:{tmp_path / 'team.sqlite'}"
    hostile = "\x1b]0;owned\x07\x1b[2J" + "m" * 100_000
    monkeypatch.setattr(push_module, "machine_name", lambda machine: machine)  # as an older version stored it
    push_module.push(local, LakeUrl.parse(url), machine=hostile)
    assert main(["db", "snapshots", "--store", url]) == 0
    out = capsys.readouterr().out
    assert "\x1b" not in out and "\x07" not in out and len(out) < 5_000
    assert "\\x1b]0;owned\\x07\\x1b[2J" + "m" * 20 in out and "…" in out


def test_text_helpers_refuse_and_escape() -> None:
    assert check_text("  lab-3090 ", "--machine") == "lab-3090" and check_text("  ", "--machine") is None
    with pytest.raises(RangeError, match="^notes: 10,001 characters"):
        check_text("n" * 10_001, "notes", max_chars=10_000, multiline=True)
    assert check_text("a\nb\tc", "notes", max_chars=10_000, multiline=True) == "a\nb\tc"
    assert shown("a\x1bb\nc") == "a\\x1bb\\nc" and shown("x" * 300, 10) == "x" * 10 + "…"
    assert "\x1b" not in table(("name",), [("bad\x1b[2Jname",)])
    assert check_text_field("catalog_device", "notes", " a\nb ") == "a\nb"  # the Devices page's text columns
    with pytest.raises(RangeError, match="^vendor: holds a line break"):
        check_text_field("catalog_device", "vendor", "a\nb")


# --- defect 10: a latency of zero is a failed measurement ---------------------------------------------

def test_a_zero_or_negative_latency_is_stored_as_missing_with_a_flag(seeded_db: Path, tmp_path: Path) -> None:
    from ingest import import_file

    doc = _document(metrics__latency_p50_ms=0, metrics__latency_p99_ms=-3.0)
    doc["runs"][0]["power_traces"] = [{"domain": "package-0", "t_s": [i / 10 for i in range(100)],
                                       "power_w": [20.0] * 100}]  # the importers' validation copies such runs
    del doc["runs"][0]["flags"]
    path = tmp_path / "zero-latency.json"
    path.write_text(json.dumps(doc))
    vllm = tmp_path / "vllm-bench.json"
    vllm.write_text(json.dumps({"backend": "vllm", "model_id": "m", "num_prompts": 10, "completed": 10,
                                "duration": 5.0, "request_throughput": 2.0, "output_throughput": 100.0,
                                "mean_ttft_ms": 0.0, "median_ttft_ms": 0.0, "p99_ttft_ms": 0.0,
                                "mean_tpot_ms": 0.0, "median_tpot_ms": 9.0, "p99_tpot_ms": 12.0}))
    assert import_file(path, db=seeded_db).status == "imported"
    assert import_file(vllm, db=seeded_db).status == "imported"
    with Store.open_read_only(seeded_db) as store:
        ours = store.query("SELECT latency_p50_ms, latency_p99_ms, latency_p90_ms, flags FROM runs "
                           f"WHERE run_id = '{doc['runs'][0]['run_id']}'").row(0)
        theirs = store.query("SELECT ttft_avg_ms, ttft_p50_ms, tpot_p50_ms, tpot_avg_ms, flags FROM runs r "
                             "JOIN sources s USING (source_id) WHERE s.file_name LIKE '%vllm-bench.json'").row(0)
    assert ours[:2] == (None, None) and ours[2] > 0 and "latency_nonpositive" in ours[3]
    assert theirs[:4] == (None, None, 9.0, None) and {"ttft_nonpositive", "tpot_nonpositive"} <= set(theirs[4])


# --- defect 10: prices and rates have real bounds ----------------------------------------------------

@pytest.mark.parametrize(("definition", "field", "raw"), [
    ("catalog_device", "price_amount", "1e-320"),
    ("catalog_device", "price_amount", "0.001"),
    ("catalog_device", "price_amount", "1e13"),
    ("exchange_rate", "rate", "1e-320"),
])
def test_a_subnormal_or_absurd_price_or_rate_is_refused(definition: str, field: str, raw: str) -> None:
    with pytest.raises(RangeError, match="is outside its range"):
        check(definition, field, raw, label="price")


def test_prices_a_real_user_enters_pass_and_a_file_price_of_1e_320_is_refused() -> None:
    assert check("catalog_device", "price_amount", "0.01") == 0.01
    assert check("catalog_device", "price_amount", "2,500,000,000") == 2.5e9  # an H100 system in a weak currency
    doc = {"format": "joulebench-result", "schema_version": 1, "runs": [],
           "devices": [{"name": "X", "kind": "gpu", "price_amount": 1e-320, "price_currency": "USD"}]}
    with pytest.raises(ResultFileError, match=r"devices\[0\].price_amount: 9.99989e-321 is below the minimum 0.01"):
        load_result_bytes(json.dumps(doc).encode(), "prices.json")
