from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# Under pytest-xdist (`make test` runs two workers on a 2-core machine) each worker, and every process it starts,
# gets one thread of OpenMP and BLAS: their default, a thread per core in each worker, spins against the other
# worker's threads (test_tuning's leave-one-out took 150 s beside a busy worker instead of 10 s). Set here,
# before numpy, scikit-learn or torch is imported; the serial run keeps the defaults.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _threads in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_threads, "1")

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parent.parent
OUTPUT = REPO / "test-output"


# Run alone after the rest (`make test` runs the rest on two workers): their assertions are about time
# (queueing ratios, energy windows a coarse sensor must resolve, kills at random moments, a server under
# several sessions), which a second worker's load on a 2-core machine would decide instead of the code.
SERIAL_FILES = frozenset({"test_generation.py", "test_profile_loop.py", "test_browser_live.py",
                          "test_concurrency.py", "test_db_birth.py"})


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SERIAL_FILES:
            item.add_marker(pytest.mark.serial)


@pytest.fixture(autouse=True)
def _isolated_default_db(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may touch the user's real default database."""
    home = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    monkeypatch.delenv("JOULEBENCH_DB", raising=False)


@pytest.fixture
def fixture_file() -> Path:
    return FIXTURES / "result_v1_cpu_runs.json"


@pytest.fixture(scope="session")
def seeded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database seeded with the reference data of the design sources, without the public LLM results
    (sample_data/runs_llm_*.csv): the tests that import the ML.ENERGY leaderboard file check its reader and
    what the pages make of it, which the same figures already stored as reference rows would turn into a
    duplicate (db.same_measurement). `full_seeded_db` is a fresh install's database, with every file."""
    from db import Store
    from joulebench.paths import SAMPLE_DATA_DIR

    folder = tmp_path_factory.mktemp("sample_data")
    for item in SAMPLE_DATA_DIR.iterdir():
        if item.is_file() and not item.name.startswith("runs_llm_"):
            shutil.copy(item, folder / item.name)
    path = tmp_path_factory.mktemp("seeded") / "template.duckdb"
    Store.open(path, sample_data=folder).close()
    return path


@pytest.fixture(scope="session")
def full_seeded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from db import Store

    path = tmp_path_factory.mktemp("full") / "template.duckdb"
    Store.open(path).close()
    return path


@pytest.fixture
def full_seeded_db(full_seeded_template: Path, tmp_path: Path) -> Path:
    """A fresh copy of the database a fresh install makes: every reference file, the LLM results included."""
    path = tmp_path / "full.duckdb"
    shutil.copy(full_seeded_template, path)
    return path


@pytest.fixture(scope="session")
def bare_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated database without the reference data: a runner's file for tests where the reference sources
    would only make each push longer."""
    from db import Store

    path = tmp_path_factory.mktemp("bare") / "template.duckdb"
    Store.open(path, seed_reference=False).close()
    return path


@pytest.fixture
def seeded_db(seeded_template: Path, tmp_path: Path) -> Path:
    """A fresh copy of a database seeded with the reference data."""
    path = tmp_path / "seeded.duckdb"
    shutil.copy(seeded_template, path)
    return path


@pytest.fixture
def db(seeded_db: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A seeded database the app's pages open (JOULEBENCH_DB), with Streamlit's caches cleared."""
    monkeypatch.setenv("JOULEBENCH_DB", str(seeded_db))
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    return seeded_db


@pytest.fixture(scope="session")
def output_dir() -> Path:
    OUTPUT.mkdir(exist_ok=True)
    return OUTPUT
