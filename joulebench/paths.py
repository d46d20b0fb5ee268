"""Where things live: the default database, its inbox, the reference data."""

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
