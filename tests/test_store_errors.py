"""A team store's refusals say their real cause (issue 30, defect 10): a data folder this user may not write is not
blamed on the catalog role, a read-only SQLite catalog file is not blamed on other pushers (and is not retried for
half a minute), and `--as-of -1` is not a cast error but a message with the snapshots the store holds.

The refused pushes are real `joulebench push` processes. The tests run as root on the team's machines, and root
writes anywhere: the pusher then runs without the capabilities that let root pass file permissions (setpriv), so
a folder or file without write permission refuses it as it refuses any user."""

from __future__ import annotations

import os
import subprocess
import sys
import time
from pathlib import Path

import pytest

from cli.main import main
from db.lake import LakeUrl
from db.push import push
from tests.test_push import UPLOADS, _local

JOULEBENCH = str(Path(sys.executable).with_name("joulebench"))
AS_A_USER = ["setpriv", "--bounding-set=-dac_override,-dac_read_search,-fowner", "--"] if os.geteuid() == 0 else []


def _store(bare_template: Path, tmp_path: Path) -> tuple[str, Path]:
    """A SQLite team store box-a pushed to, and box-b's file with a CodeCarbon upload (enough runs to be written
    as Parquet) waiting to be pushed."""
    url = f"ducklake:sqlite:{tmp_path / 'team.sqlite'}"
    push(_local(bare_template, tmp_path, "box-a", UPLOADS[2]), LakeUrl.parse(url), machine="box-a")
    return url, _local(bare_template, tmp_path, "box-b", UPLOADS[3])


def _push_as_a_user(url: str, local: Path) -> tuple[int, str, float]:
    start = time.monotonic()
    out = subprocess.run([*AS_A_USER, JOULEBENCH, "push", "--store", url, "--db", str(local), "--machine", "box-b"],
                         capture_output=True, text=True, timeout=120)
    return out.returncode, out.stdout + out.stderr, time.monotonic() - start


def _chmod_tree(root: Path, writable: bool) -> None:
    for path in [root, *root.rglob("*")]:
        mode = path.stat().st_mode
        path.chmod(mode | 0o200 if writable else mode & ~0o222)


def test_a_data_folder_this_user_cannot_write_is_named_not_the_role(bare_template: Path, tmp_path: Path) -> None:
    url, local = _store(bare_template, tmp_path)
    data = tmp_path / "team.files"
    _chmod_tree(data, writable=False)
    try:
        code, said, _ = _push_as_a_user(url, local)
    finally:
        _chmod_tree(data, writable=True)
    assert code == 4, said
    assert f"push: cannot write the team store's data folder {data}/" in said and "(Permission denied)" in said
    assert "give it write access to the data folder" in said
    assert "role" not in said  # was: "permission denied for its catalog; this role may only read it"


def test_a_read_only_sqlite_catalog_is_said_at_once_not_blamed_on_other_pushers(bare_template: Path,
                                                                                tmp_path: Path) -> None:
    url, local = _store(bare_template, tmp_path)
    catalog = tmp_path / "team.sqlite"
    catalog.chmod(0o444)
    try:
        code, said, seconds = _push_as_a_user(url, local)
    finally:
        catalog.chmod(0o644)
    assert code == 4, said
    assert f"the team store's catalog file {catalog} is read-only for this user (this is not another machine " \
           "pushing): give this user write access to the file and to its folder" in said
    assert "other machines pushing" not in said and "attempts" not in said  # was: 30 retries, 28 s
    assert push(local, LakeUrl.parse(url), machine="box-b").runs_pushed  # writable again: the push goes through
    print(f"refused in {seconds:.1f} s")


def test_as_of_a_negative_or_missing_snapshot_lists_the_snapshots_held(
        bare_template: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    url, _ = _store(bare_template, tmp_path)
    assert main(["db", "snapshots", "--store", url]) == 0
    newest = int(capsys.readouterr().out.splitlines()[0].rsplit(" ", 1)[1])
    assert main(["db", "info", "--store", url, "--as-of", "-1"]) == 4
    err = capsys.readouterr().err
    assert f"--as-of -1 is not a snapshot (a snapshot is 0 or more): it holds snapshots 0 to {newest}; " \
           "`joulebench db snapshots --store ...` lists them" in err
    assert "cast" not in err.lower()
    assert main(["export", str(tmp_path / "x.csv"), "--store", url, "--as-of", str(newest + 5)]) == 4
    assert f"it has no snapshot {newest + 5}: it holds snapshots 0 to {newest}" in capsys.readouterr().err
    with pytest.raises(SystemExit):
        main(["db", "info", "--store", url, "--as-of", "yesterday"])
    assert "argument --as-of: 'yesterday' is not a snapshot number (0 or more)" in capsys.readouterr().err
