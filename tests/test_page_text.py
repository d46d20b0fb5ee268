"""What a person reads on every page carries no developer leftovers (issue 17): no 'run(s)', no
'None', no '(w)', no PIDs, no microsecond times, no server paths, no '1.0x faster', no document
file names or repository paths as citations, no command-line hints."""

from __future__ import annotations

import re
import shutil
from pathlib import Path

import pytest

from cli.main import main
from decision.text import ESTIMATED_BASIS_NAMES
from ingest.service import import_file
from tests.helpers import open_page, page_texts, table_texts

FIXTURES = Path(__file__).parent / "fixtures"
LEFTOVERS = {
    "a '(s)' plural": r"\w\(s\)",
    "None": r"\bNone\b",
    "a unit in the wrong case": r"\((w|j|kwh|gb|mhz)\)",
    "a PID": r"\bPID\b",
    "a microsecond time": r"\d{2}:\d{2}:\d{2}\.\d{3,}",
    "a server path": r"(/tmp/|/home/|/work/|/root/)",
    "'1.0x faster'": r"1\.0x (faster|cheaper|fewer)",
    "a repository file": r"\b[\w-]+\.md\b",
    "a seed file name": r"\b\d{3}_[0-9a-f]{16}\.txt\b",
    "a command-line flag": r"(?<![\w-])--[a-z][a-z-]+",
}


@pytest.fixture(scope="module")
def text_db(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    path = tmp_path_factory.mktemp("text") / "text.duckdb"
    shutil.copy(seeded_template, path)
    report = import_file(FIXTURES / "result_v1_cpu_runs.json", db=path)
    assert main(["import", str(FIXTURES / "formats" / "zeus_mlenergy" / "zeus-plo-profile-v100-bert.csv"),
                 "--device", "Tesla V100", "--workload", "bert-base-uncased", "--db", str(path)]) == 0
    return path, report.run_ids[0]


@pytest.mark.parametrize("page", ["overview", "compare", "run_detail", "new_run", "upload", "cost",
                                  "power_settings", "devices", "decide"])
def test_no_developer_leftovers_on_any_page(text_db: tuple[Path, str], page: str,
                                            monkeypatch: pytest.MonkeyPatch) -> None:
    path, run_id = text_db
    monkeypatch.setenv("JOULEBENCH_DB", str(path))
    at = open_page(page, {"run_detail": {"run_id": run_id},
                          "decide": {"device": ["GeForce RTX 3060", "Jetson AGX Xavier"], "mode": "train"}
                          }.get(page, {}))
    shown = [t.replace("\\", "") for t in page_texts(at)] + table_texts(at)
    found = [f"{what}: ...{t[max(0, m.start() - 60):m.end() + 30]}..." for t in shown
             for what, pattern in LEFTOVERS.items() for m in re.finditer(pattern, t)]
    assert not found, "\n".join(found[:10])


# --- issue 28 item 8: words a buyer reads --------------------------------------------------------------

def shown_cells(at) -> list[str]:  # type: ignore[no-untyped-def]
    """Every table as the browser draws it, one line per row: a styled table's display values (what
    `explorer.tables.styled` wrote: 'not measured', 'not stated'), a plain table's cells with a missing value
    as the 'None' Streamlit draws for it."""
    import pyarrow as pa

    lines = []
    for frame in at.dataframe:
        arrow = frame.proto.arrow_data
        styled = arrow.styler.display_values if arrow.HasField("styler") else b""
        table = pa.ipc.open_stream(styled or arrow.data).read_all().to_pylist()
        lines += [" | ".join("None" if v is None or v != v else str(v) for v in row.values()) for row in table[:200]]
    return lines


@pytest.fixture(scope="module")
def gaps_db(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str]:
    """Runs measured here whose energy is an estimate (a CPU), and a power log that states no device, mode,
    precision or batch: the pages with their gaps and estimates showing."""
    path = tmp_path_factory.mktemp("gaps") / "gaps.duckdb"
    shutil.copy(seeded_template, path)
    import_file(FIXTURES / "result_v1_cpu_runs.json", db=path, source_kind="local")
    import_file(FIXTURES / "formats" / "codecarbon" / "lightspec-a100sxm4_emissions.csv", db=path)
    log = import_file(FIXTURES / "formats" / "jetson" / "agentmesh-agx-orin_jtop_log.csv", db=path)
    return path, log.run_ids[0]


@pytest.mark.parametrize("page", ["compare", "run_detail", "cost", "decide", "overview"])
def test_no_none_or_flag_in_what_a_page_draws(gaps_db: tuple[Path, str], page: str,
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """The tables as drawn (display values, not the data behind them) and the text, on a store with gaps."""
    path, run_id = gaps_db
    monkeypatch.setenv("JOULEBENCH_DB", str(path))
    at = open_page(page, {"run_detail": {"run_id": run_id}, "compare": {"metric": "j_per_sample"}}.get(page, {}))
    shown = [t.replace("\\", "") for t in page_texts(at)] + shown_cells(at)
    found = [f"{what}: ...{t[max(0, m.start() - 60):m.end() + 30]}..." for t in shown
             for what, pattern in {**LEFTOVERS, "nan": r"\bnan\b"}.items() for m in re.finditer(pattern, t)]
    assert not found, "\n".join(found[:10])


def test_an_empty_label_form_says_what_to_do_in_the_page_words(gaps_db: tuple[Path, str],
                                                               monkeypatch: pytest.MonkeyPatch) -> None:
    """Saving Run detail's label form with nothing in it said 'give at least one label: --device, --mode ...'."""
    path, run_id = gaps_db
    monkeypatch.setenv("JOULEBENCH_DB", str(path))
    at = open_page("run_detail", {"run_id": run_id})
    next(b for b in at.button if b.label == "Save labels").click().run()
    said = " ".join(e.value for e in at.error)
    assert "Give at least one of the labels above" in said
    assert not re.search(LEFTOVERS["a command-line flag"], said), said
    at.text_input(key="label_run_source_device").set_value("x" * 201)  # too long: checked as the CLI checks it
    at.checkbox(key="label_run_source_new").check()
    next(b for b in at.button if b.label == "Save labels").click().run()
    said = " ".join(e.value for e in at.error)
    assert "Device" in said and not re.search(LEFTOVERS["a command-line flag"], said), said


def test_a_run_whose_energy_is_estimated_is_never_called_measured_in_compare(
        gaps_db: tuple[Path, str], monkeypatch: pytest.MonkeyPatch) -> None:
    """Compare's Basis said 'measured here' for a CPU run whose energy is utilisation x TDP (Run detail said
    'estimated'): the table and the runs list say so for it, and not for the GPU run of the same file."""
    path, _ = gaps_db
    monkeypatch.setenv("JOULEBENCH_DB", str(path))
    at = open_page("compare", {"metric": "j_per_sample", "device": ["Intel Xeon (2 vCPU)", "GeForce RTX 3060"]})
    rows = shown_cells(at)
    xeon = [r.split(" | ") for r in rows if r.startswith("Intel Xeon (2 vCPU)") or " | Intel Xeon (2 vCPU)" in r]
    assert sum(cells.count(ESTIMATED_BASIS_NAMES["local"]) for cells in xeon) >= 2, xeon  # both tables
    assert not any("measured here" in cells for cells in xeon), xeon
    assert any("GeForce RTX 3060" in r and " | measured here | " in r for r in rows), rows[:6]


def test_counts_never_contradict_themselves() -> None:
    """'Cancelled: 2 runs recorded (1 measured, 1 idle baseline, 1 interrupted)' counted the interrupted run
    twice: the parts in brackets add up to the total, and an interruption is said of its kind."""
    from explorer.jobs import Job, JobStatus

    job = Job(1, "2026-01-01T00:00:00Z", 2, "out.json", "out.log")
    stopped, ok = {"status": "interrupted"}, {"status": "ok"}
    for runs, idle in (([stopped], [ok]), ([ok, ok], [ok]), ([], [stopped]), ([stopped, ok, stopped], [])):
        said = JobStatus(job, False, runs, [], {}, idle).recorded()
        total = int(said.split()[0])
        parts = re.search(r"\(([^)]*)\)", said)
        assert parts and sum(int(p.split()[0]) for p in parts.group(1).split(", ")) == total, said
    assert JobStatus(job, False, [stopped], [], {}, [ok]).recorded() == \
        "2 runs recorded (1 measured, 1 idle baseline); the measured run was interrupted"


def test_many_low_grade_ratios_are_grouped_and_settings_are_not_called_devices() -> None:
    """Compare's low-grade warning listed ~150 pairs in one paragraph; 'the best 12 of 19 devices' counted the
    server settings of 2 devices."""
    import polars as pl

    from explorer import compare, compare_ratios

    devices = [f"GPU {i}" for i in range(18)]
    pairs = [(a, b) for i, a in enumerate(devices) for b in devices[i + 1:]]  # 153 pairs
    ratios = pl.DataFrame({"A": [a for a, _ in pairs], "B": [b for _, b in pairs],
                           "Trust grade": ["D" if i % 5 else "C" for i in range(len(pairs))]})
    note = compare_ratios.low_grade_note(ratios)
    assert note is not None and "153 of the 153 ratios" in note
    assert note.count("vs") == 0 and len(note.splitlines()) < 10  # grouped by grade, not pair by pair
    assert "and 10 more" in note  # each grade names its first devices, then how many more

    bars = pl.DataFrame({"series": [f"{d} · max_num_seqs {n}" for d in ("B200", "H100") for n in range(10)],
                         "device_name": [d for d in ("B200", "H100") for _ in range(10)],
                         "config": ["a"] * 20, "value": [float(i) for i in range(20)]})
    _, cut = compare.readable_bars(bars, True, False)
    assert cut is not None and "20 devices" not in cut and "of 20 series (2 devices" in cut, cut


# --- every page on a store with the hard cases (issue 28 item 8) ---------------------------------------------

PYTHON_VALUES = {**LEFTOVERS, "nan": r"\bnan\b", "a Python bool": r"(?<![=\w])(True|False)\b",
                 "an empty list or dict": r"(?<!\w)(\[\]|\{\})(?!\w)"}
MLENERGY = FIXTURES / "formats" / "zeus_mlenergy" / "mlenergy-v3-leaderboard-llama31-8b-lm-arena-chat.json"


def contradictory_counts(texts: list[str]) -> list[str]:
    """'2 runs recorded (1 measured, 1 idle baseline, 1 interrupted)': parts in brackets that do not add up to
    the count before them; 'the best 12 of 19 devices' where fewer devices are named."""
    found = []
    for t in texts:
        for m in re.finditer(r"\b(\d+) runs? recorded \(([^)]*)\)", t):
            parts = [int(p.split()[0]) for p in m.group(2).split(", ") if p.split() and p.split()[0].isdigit()]
            if parts and sum(parts) != int(m.group(1)):
                found.append(f"counts that do not add up: {m.group(0)}")
        for m in re.finditer(r"\bthe best (\d+) of (\d+) devices\b", t):
            if int(m.group(1)) > int(m.group(2)):
                found.append(f"more shown than there are: {m.group(0)}")
    return found


@pytest.fixture(scope="module")
def hard_db(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, str, list[str]]:
    """Imported ML.ENERGY (20 server settings of 2 GPUs, no batch, no price), CodeCarbon (jobs partly modelled)
    and a run cancelled part way (status interrupted, beside its measured and idle runs)."""
    import json

    from db import Store, queries

    folder = tmp_path_factory.mktemp("hard")
    path = folder / "hard.duckdb"
    shutil.copy(seeded_template, path)
    doc = json.loads((FIXTURES / "result_v1_cpu_runs.json").read_text())
    cancelled = json.loads(json.dumps(doc["runs"][0]))
    cancelled.update(run_id="cancelled-part-way", status="interrupted", error="stopped by the user (Cancel)")
    doc["runs"].append(cancelled)
    (folder / "cancelled.json").write_text(json.dumps(doc))
    assert import_file(folder / "cancelled.json", db=path, source_kind="local").status == "imported"
    import_file(FIXTURES / "formats" / "codecarbon" / "lightspec-a100sxm4_emissions.csv", db=path)
    mlenergy = import_file(MLENERGY, db=path)
    with Store.open_reading(path) as store:
        runs = queries.runs_table(store)
    mine = runs.filter(runs["run_id"].is_in(mlenergy.run_ids))
    b200 = mine.filter(mine["tag"] == "max_num_seqs 2048")["device_name"][0]  # only the B200 ran 2048
    return path, "cancelled-part-way", [b200, mine.filter(mine["device_name"] != b200)["device_name"][0]]


@pytest.mark.parametrize("page", ["overview", "compare", "run_detail", "new_run", "upload", "cost",
                                  "power_settings", "devices", "decide"])
def test_every_page_on_the_hard_cases_shows_no_flag_python_value_or_contradictory_count(
        hard_db: tuple[Path, str, list[str]], page: str, monkeypatch: pytest.MonkeyPatch) -> None:
    path, cancelled, gpus = hard_db
    monkeypatch.setenv("JOULEBENCH_DB", str(path))
    at = open_page(page, {"run_detail": {"run_id": cancelled},
                          "cost": {"workload": "meta-llama/Llama-3.1-8B-Instruct:lm-arena-chat", "mode": "infer"},
                          "compare": {"metric": "cost"},
                          "decide": {"device": gpus, "mode": "infer"}}.get(page, {}))
    shown = [t.replace("\\", "") for t in page_texts(at)] + shown_cells(at)
    found = [f"{what}: ...{t[max(0, m.start() - 60):m.end() + 30]}..." for t in shown
             for what, pattern in PYTHON_VALUES.items() for m in re.finditer(pattern, t)]
    found += contradictory_counts(shown)
    assert not found, "\n".join(found[:10])


def test_pages_that_compute_show_that_they_are_working() -> None:
    """A visible working state while a page computes (Streamlit's spinner), on the pages with a chart or a
    costed answer."""
    pages = Path(__file__).resolve().parent.parent / "pages"
    for name in ("compare", "cost", "decide"):
        source = (pages / f"{name}.py").read_text()
        assert "st.spinner(" in source or "st.status(" in source, name
