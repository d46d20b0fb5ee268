"""Property tests: truncated, mutated and random inputs of every format never raise anything
but ResultFileError, with or without the labels a user may pass; what a file does not state is
null and named in one warning, never guessed; a refused file never changes the database; and
labels filled later are applied whole or not at all."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from db import Store
from importers import Hints, ImportedFile, load, load_source
from importers.archive import sources_from_bytes, sources_from_path
from importers.base import Source
from importers.describe import what_is
from joulebench.errors import LabelError, ResultFileError
from tests.test_import_variants import REFUSED_BY_DESIGN

FORMATS = Path(__file__).parent / "fixtures" / "formats"
HINTS = Hints(device="Test GPU", mode="infer")
NO_HINTS = Hints()
HEAD = 24_000  # big fixtures are cut to their head: the parsers' work is per line
SAMPLES = {
    str(p.relative_to(FORMATS)): p.read_bytes()[:HEAD]
    for p in sorted(FORMATS.rglob("*"))
    if p.is_file() and p.name != "SOURCES.md" and "mlperf" not in str(p)
}

SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))


def _check_labels(imported: ImportedFile, hints: Hints) -> None:
    """What the file does not state is null and named in the first warning; hints fill it; nothing
    else is made up (no placeholder survives, no label is recorded as supplied without a hint)."""
    counts = imported.not_stated()
    for run in imported.runs:
        device = run["device"]
        assert device is None or (type(device["name"]) is str and device["name"].strip())
    if counts:
        first = imported.warnings[0]
        assert first.startswith("not stated in the file: ")
        assert all(title in first for title in ("device", "mode") if title in counts)
    if imported.format != "joulebench-result" and hints == HINTS:
        assert "device" not in counts and "mode" not in counts  # the user's labels fill what is missing
    if hints == NO_HINTS:
        assert all(s.origin == "folder_name" for s in imported.supplied)


def _attempt(data: bytes, name: str, hints: Hints = HINTS) -> str:
    """'converted' or 'refused'; any other exception escapes and fails the test."""
    try:
        imported, _ = load(data, name, hints=hints)
    except ResultFileError as e:
        assert e.format_message().startswith(name.rsplit("/", 1)[-1][:10]) or name in e.format_message()
        return "refused"
    _check_labels(imported, hints)
    return "converted"


@pytest.mark.parametrize("name", sorted(SAMPLES))
@SETTINGS
@given(cut=st.floats(0, 1), hints=st.sampled_from([HINTS, NO_HINTS]))
def test_truncated(name: str, cut: float, hints: Hints) -> None:
    data = SAMPLES[name]
    assert _attempt(data[: int(len(data) * cut)], name, hints) in ("converted", "refused")


@pytest.mark.parametrize("name", sorted(SAMPLES))
@SETTINGS
@given(edits=st.lists(st.tuples(st.floats(0, 1), st.binary(min_size=0, max_size=4)), min_size=1, max_size=6),
       hints=st.sampled_from([HINTS, NO_HINTS]))
def test_mutated(name: str, edits: list[tuple[float, bytes]], hints: Hints) -> None:
    data = bytearray(SAMPLES[name])
    for where, blob in edits:
        i = int(len(data) * where)
        data[i : i + len(blob)] = blob
    assert _attempt(bytes(data), name, hints) in ("converted", "refused")


@pytest.mark.parametrize("name", sorted(n for n in SAMPLES if n.rsplit("/", 1)[-1] not in REFUSED_BY_DESIGN))
def test_every_sample_imports_without_any_label(name: str) -> None:
    """No real file is refused for a missing label: without hints each one imports, its gaps named
    (files refused for a true reason, such as a header without rows, are left out)."""
    assert _attempt((FORMATS / name).read_bytes(), name, NO_HINTS) == "converted"


@settings(max_examples=80, deadline=None)
@given(data=st.one_of(st.binary(max_size=600), st.text(max_size=600).map(str.encode)),
       name=st.sampled_from(["x.json", "x.csv", "x.txt", "x.log"]))
def test_what_a_file_is_never_raises(data: bytes, name: str) -> None:
    kind = what_is(Source.single(data, name))
    assert kind is None or (isinstance(kind, str) and kind)


@settings(max_examples=60, deadline=None)
@given(data=st.binary(max_size=2000), name=st.sampled_from(["x.json", "x.csv", "x.txt", "x.zip", "x.json.gz"]))
def test_random_bytes(data: bytes, name: str) -> None:
    outcome = "converted"
    try:
        for source in sources_from_bytes(data, name):
            load_source(source, HINTS)
    except ResultFileError as e:
        outcome = "refused"
        assert e.format_message()  # a message for the user, never empty
    assert outcome in ("converted", "refused")


@settings(max_examples=40, deadline=None)
@given(
    lines=st.lists(
        st.sampled_from(
            [
                "Time,02-24-2023 06:21:23.902,Watts,6.32,Volts,206.8,Amps,0.11,PF,0.27,Mark,x",
                ':::MLLOG {"key": "power_begin", "value": "02-24-2023 06:21:22.000"}',
                "Samples per second : 12",
                "Scenario : Offline",
                "garbage",
                "",
                "Result is : VALID",
                "================================================\nMLPerf Results Summary",
            ]
        ),
        max_size=12,
    )
)
def test_mlperf_folders_of_random_lines(lines: list[str]) -> None:
    root = FORMATS / "mlperf_inference" / "v3.0_NVIDIA_Orin_TRT_MaxQ_resnet50_SingleStream"
    members = ("run_1/mlperf_log_summary.txt", "run_1/spl.txt", "run_1/mlperf_log_detail.txt")
    outcomes = folder_loads_or_refuses(root, members, "\n".join(lines).encode(), "mlperf-inference")
    assert len(outcomes) == len(members)


def folder_loads_or_refuses(root: Path, members: tuple[str, ...], text: bytes, expected_format: str) -> list[str]:
    """Replace the folder's members one by one with `text`: each result is either a refusal with a
    message or a load in the folder's format with runs; the outcome of each ('loaded' or 'refused')."""
    original = sources_from_path(root)[0]
    files = {rel: original.files[rel] for rel in original.files}
    outcomes = []
    for rel in members:
        files[rel] = text
        source = Source(name=original.name, files=dict(files), dirs=original.dirs, is_folder=True)
        try:
            imported, fmt = load_source(source, HINTS)
        except ResultFileError as e:
            assert e.format_message()
            outcomes.append("refused")
        else:
            assert fmt == expected_format and imported.runs
            outcomes.append("loaded")
    return outcomes


def test_refused_files_never_change_the_database(tmp_path: Path) -> None:
    from ingest import import_bytes

    db = tmp_path / "p.duckdb"
    Store.open(db, seed_reference=False).close()

    def counts() -> tuple[int, ...]:
        with Store.open(db, seed_reference=False) as store:
            return tuple(
                store.query(f"SELECT count(*) AS n FROM {t}")["n"][0]
                for t in ("sources", "runs", "devices", "power_samples", "environments")
            )

    before = counts()

    @settings(max_examples=15, deadline=None, suppress_health_check=list(HealthCheck))
    @given(name=st.sampled_from(sorted(SAMPLES)), cut=st.floats(0.05, 0.95), junk=st.binary(min_size=1, max_size=3),
           hints=st.sampled_from([HINTS, NO_HINTS]))
    def check(name: str, cut: float, junk: bytes, hints: Hints) -> None:
        data = SAMPLES[name]
        i = int(len(data) * cut)
        broken = data[:i] + b"\x00\xff" + junk + data[i:]
        with pytest.raises(ResultFileError):
            import_bytes(broken, name.rsplit("/", 1)[-1], db=db, hints=hints)
        assert counts() == before

    check()


def test_labels_apply_whole_or_not_at_all(tmp_path: Path) -> None:
    """Any label values, valid or not, for an existing source or not: either a LabelError that changes
    nothing, or every run of the source that did not state the label now carries it, recorded."""
    from ingest import import_bytes
    from ingest.labels import label_source, label_values

    db = tmp_path / "l.duckdb"
    Store.open(db, seed_reference=False).close()
    name = "codecarbon/jetson-nano-edgeai_emissions.csv"
    sid = import_bytes(SAMPLES[name], "emissions.csv", db=db).source_id

    def snapshot() -> tuple[object, ...]:
        with Store.open(db, seed_reference=False) as store:
            return tuple(store.query(f"SELECT * FROM {t} ORDER BY ALL").rows()
                         for t in ("runs", "devices", "run_labels", "power_traces"))

    @settings(max_examples=30, deadline=None, suppress_health_check=list(HealthCheck))
    @given(device=st.one_of(st.none(), st.text(max_size=240)),
           kind=st.sampled_from([None, "", "gpu", "jetson", "cpu", "tpu"]),
           mode=st.sampled_from([None, "", "train", "infer", "idle", "predict"]),
           precision=st.sampled_from([None, "fp16", "int8"]),
           batch=st.one_of(st.none(), st.integers(-3, 2**40)),
           boundary=st.sampled_from([None, "wall", "moon"]),
           source=st.sampled_from([str(sid), "emissions.csv", "missing.csv", "0"]))
    def check(device: str | None, kind: str | None, mode: str | None, precision: str | None, batch: int | None,
              boundary: str | None, source: str) -> None:
        before = snapshot()
        try:
            values, device_kind = label_values(device, kind, mode, precision, batch, boundary)
            report = label_source(source, values, device_kind, db=db)
        except LabelError as e:
            assert e.format_message()
            assert snapshot() == before
            return
        assert report.source.source_id == sid
        with Store.open(db, seed_reference=False) as store:
            from db.labels import gaps

            left = gaps(store.con, sid)
            runs = store.query("SELECT * FROM runs WHERE source_id = ?", [sid]).rows(named=True)
        for label, value in values.items():
            if label in ("precision", "batch_size") and all(r["mode"] == "idle" for r in runs):
                continue  # an idle run takes neither
            if label == "energy_boundary":
                continue  # the run's energy has its boundary from the file (system)
            column = {"device": "device_name"}.get(label, label)
            assert label not in left and all(r[column] == value for r in runs), (label, value)

    check()
