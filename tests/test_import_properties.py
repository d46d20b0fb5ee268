"""Property tests: truncated, mutated and random inputs of every format never raise anything
but ResultFileError, and a refused file never changes the database."""

from __future__ import annotations

from pathlib import Path

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from db import Store
from importers import Hints, load, load_source
from importers.archive import sources_from_bytes, sources_from_path
from importers.base import Source
from joulebench.errors import ResultFileError

FORMATS = Path(__file__).parent / "fixtures" / "formats"
HINTS = Hints(device="Test GPU", mode="infer")
HEAD = 24_000  # big fixtures are cut to their head: the parsers' work is per line
SAMPLES = {
    str(p.relative_to(FORMATS)): p.read_bytes()[:HEAD]
    for p in sorted(FORMATS.rglob("*"))
    if p.is_file() and p.name != "SOURCES.md" and "mlperf" not in str(p)
}
SETTINGS = settings(max_examples=12, deadline=None, suppress_health_check=list(HealthCheck))


def _attempt(data: bytes, name: str) -> str:
    """'converted' or 'refused'; any other exception escapes and fails the test."""
    try:
        load(data, name, hints=HINTS)
    except ResultFileError as e:
        assert e.format_message().startswith(name.rsplit("/", 1)[-1][:10]) or name in e.format_message()
        return "refused"
    return "converted"


@pytest.mark.parametrize("name", sorted(SAMPLES))
@SETTINGS
@given(cut=st.floats(0, 1))
def test_truncated(name: str, cut: float) -> None:
    data = SAMPLES[name]
    assert _attempt(data[: int(len(data) * cut)], name) in ("converted", "refused")


@pytest.mark.parametrize("name", sorted(SAMPLES))
@SETTINGS
@given(edits=st.lists(st.tuples(st.floats(0, 1), st.binary(min_size=0, max_size=4)), min_size=1, max_size=6))
def test_mutated(name: str, edits: list[tuple[float, bytes]]) -> None:
    data = bytearray(SAMPLES[name])
    for where, blob in edits:
        i = int(len(data) * where)
        data[i : i + len(blob)] = blob
    assert _attempt(bytes(data), name) in ("converted", "refused")


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
    original = sources_from_path(root)[0]
    files = {rel: original.files[rel] for rel in original.files}
    text = "\n".join(lines).encode()
    for rel in ("run_1/mlperf_log_summary.txt", "run_1/spl.txt", "run_1/mlperf_log_detail.txt"):
        files[rel] = text
        source = Source(name=original.name, files=dict(files), dirs=original.dirs, is_folder=True)
        try:
            imported, fmt = load_source(source, HINTS)
        except ResultFileError as e:
            assert e.format_message()
        else:
            assert fmt == "mlperf-inference" and imported.runs


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
    @given(name=st.sampled_from(sorted(SAMPLES)), cut=st.floats(0.05, 0.95), junk=st.binary(min_size=1, max_size=3))
    def check(name: str, cut: float, junk: bytes) -> None:
        data = SAMPLES[name]
        i = int(len(data) * cut)
        broken = data[:i] + b"\x00\xff" + junk + data[i:]
        with pytest.raises(ResultFileError):
            import_bytes(broken, name.rsplit("/", 1)[-1], db=db, hints=HINTS)
        assert counts() == before

    check()
