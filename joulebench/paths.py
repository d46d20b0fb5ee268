"""Where things live: the default database, the reference data, and every file kept next to
the database (one place, so no module invents its own):

    <dir>/joulebench.duckdb            the database
    <dir>/joulebench.inbox/            result files waiting for the database (rejected/ inside)
    <dir>/joulebench.sweeps/           one marker per running sweep, for recovery after a kill
    <dir>/joulebench.job.json          the run the app started
    <dir>/results/                     result files the runner writes (and the app's run logs), each
                                       with its progress beside it while it runs (x.progress.json)
    <dir>/power-restore.json           the power setting to restore, with its owner (PID)
    <dir>/jetson-clocks.conf           clocks stored by `jetson_clocks --store` before a sweep
"""

from __future__ import annotations

import os
from pathlib import Path

DB_ENV_VAR = "JOULEBENCH_DB"
DB_FILE_NAME = "joulebench.duckdb"
REPO_ROOT = Path(__file__).resolve().parent.parent
SAMPLE_DATA_DIR = REPO_ROOT / "sample_data"


def user_data_dir() -> Path:
    """The per-user data directory (XDG on Linux, the platform's convention elsewhere)."""
    if os.name == "nt":
        base = Path(os.environ.get("LOCALAPPDATA", Path.home() / "AppData" / "Local"))
    elif os.uname().sysname == "Darwin":
        base = Path.home() / "Library" / "Application Support"
    else:
        base = Path(os.environ.get("XDG_DATA_HOME") or Path.home() / ".local" / "share")
    return base / "joulebench"


def default_db_path() -> Path:
    return user_data_dir() / DB_FILE_NAME


def resolve_db_path(db: str | os.PathLike[str] | None = None) -> Path:
    """`--db` wins, then $JOULEBENCH_DB, then the per-user default."""
    if db:
        return Path(db).expanduser()
    env = os.environ.get(DB_ENV_VAR)
    if env:
        return Path(env).expanduser()
    return default_db_path()


def inbox_dir(db_path: Path) -> Path:
    """Result files wait here while another process holds the database."""
    return db_path.with_name(db_path.stem + ".inbox")


def sweeps_dir(db_path: Path) -> Path:
    """One marker per sweep in progress: what it writes, so a killed sweep's runs are recovered."""
    return db_path.with_name(db_path.stem + ".sweeps")


def job_file(db_path: Path) -> Path:
    """The run the app started (PID, result file, log)."""
    return db_path.with_name(db_path.stem + ".job.json")


def progress_file(result_file: Path) -> Path:
    """The progress the runner reports beside the result file it writes (steps done, time left):
    `x.json` -> `x.progress.json`. The app reads it; the runner never needs the app."""
    stem = result_file.name
    for suffix in (".gz", ".json"):
        stem = stem.removesuffix(suffix)
    return result_file.with_name(stem + ".progress.json")


def results_dir(db_path: Path) -> Path:
    """Result files the runner writes, and the logs of runs started from the app."""
    return db_path.parent / "results"


def power_state_file(db_path: Path) -> Path:
    """The power setting a sweep changed and must restore, with the PID that owns it."""
    return db_path.parent / "power-restore.json"


def jetson_clocks_file(db_path: Path) -> Path:
    """Where `jetson_clocks --store` keeps the clocks to restore."""
    return db_path.parent / "jetson-clocks.conf"
