"""Issue 30 (2): a secret never leaves the process. For every form a store URL can carry a password in
(libpq key=value, quoted with spaces; a URI's user:password@ and ?password=, %-encoded too; the environment)
and for credentials in a data path, the real commands (`app`, `push`, `db info`, `export`) run as the user
runs them, and every byte they print is searched for the secret; so is every text of the Overview and Run
detail pages with $JOULEBENCH_STORE set to that URL. The store is a PostgreSQL address nothing listens on
(127.0.0.1 port 1): a URL that got as far as attaching would fail there, and DuckDB's error echoes the URL."""

from __future__ import annotations

import os
import shutil
import signal
import subprocess
import sys
import threading
from dataclasses import dataclass, field
from pathlib import Path

import pytest

from tests.helpers import free_port, open_page, page_texts, shown, table_texts

JOULEBENCH = str(Path(sys.executable).with_name("joulebench"))
NOWHERE = "127.0.0.1:1"  # no server here: refused at once, on this machine


@dataclass(frozen=True)
class Form:
    store: str
    secret: str
    data_path: str = "{tmp}/lake-data/"
    env: dict[str, str] = field(default_factory=dict)  # extra environment (the URL may come from there)
    via_env: bool = False  # the URL in $JOULEBENCH_STORE instead of --store
    refused: bool = True  # the command must refuse it (a secret in the URL), not just keep it quiet


FORMS = {
    "uri user:password@": Form(f"ducklake:postgres:postgresql://bench:Pw-uri-71c3@{NOWHERE}/lake", "Pw-uri-71c3"),
    "postgres:// scheme": Form(f"ducklake:postgres:postgres://bench:Pw-short-2b9e@{NOWHERE}/lake", "Pw-short-2b9e"),
    "password holding @ and /": Form(f"ducklake:postgres:postgresql://bench:Pw/at@9d1@{NOWHERE}/lake", "Pw/at@9d1"),
    "uri ?password=": Form(f"ducklake:postgres:postgresql://bench@{NOWHERE}/lake?password=Pw-query-5e0a",
                           "Pw-query-5e0a"),
    "uri %-encoded ?password=": Form(f"ducklake:postgres:postgresql://bench@{NOWHERE}/lake?%70assword=Pw-enc-8f2d",
                                     "Pw-enc-8f2d"),
    "key=value quoted, spaces": Form("ducklake:postgres:dbname=lake host=127.0.0.1 port=1 "
                                     "password = 'my secret phrase'", "secret phrase"),
    "key=value sslpassword quoted": Form("ducklake:postgres:dbname=lake host=127.0.0.1 port=1 "
                                         "sslpassword='ssl secret phrase'", "ssl secret phrase"),
    "unknown catalog, quoted": Form("ducklake:bogus:password='my bogus phrase'", "bogus phrase"),
    "$JOULEBENCH_STORE uri": Form(f"ducklake:postgres:postgresql://bench:Pw-env-4a7c@{NOWHERE}/lake", "Pw-env-4a7c",
                                  via_env=True),
    "s3 data path with keys": Form("ducklake:sqlite:{tmp}/team.sqlite", "Sk-data-3c1f",
                                   data_path="s3://AKIAEXAMPLE:Sk-data-3c1f@bucket/lake/"),
    # allowed: the password where libpq reads it; nothing may print it (the app starts, the rest cannot connect)
    "PGPASSWORD, clean URL": Form(f"ducklake:postgres:postgresql://bench@{NOWHERE}/lake", "Pw-pgpass-6d2b",
                                  env={"PGPASSWORD": "Pw-pgpass-6d2b"}, refused=False),
}


def _env(form: Form, tmp: Path) -> dict[str, str]:
    env = {k: v for k, v in os.environ.items() if not k.startswith(("AWS_", "PG", "JOULEBENCH_"))}
    env.update(form.env, HF_HUB_OFFLINE="1", XDG_DATA_HOME=str(tmp / "xdg"))
    if form.via_env:
        env["JOULEBENCH_STORE"] = form.store.format(tmp=tmp)
    return env


def _store_args(form: Form, tmp: Path) -> list[str]:
    return ([] if form.via_env else ["--store", form.store.format(tmp=tmp)]) + \
        ["--data-path", form.data_path.format(tmp=tmp)]


def _app_output(args: list[str], env: dict[str, str]) -> tuple[int | None, str]:
    """`joulebench app ...` until its first line (the refusal, or the line saying where it serves), then
    stopped by its PID; its exit code (None when it was serving) and all it printed."""
    proc = subprocess.Popen([JOULEBENCH, "app", "--port", str(free_port()), *args], env=env, text=True,
                            stdout=subprocess.PIPE, stderr=subprocess.STDOUT, start_new_session=True)
    watchdog = threading.Timer(60, lambda: os.killpg(proc.pid, signal.SIGKILL))
    watchdog.start()
    try:
        assert proc.stdout is not None
        first = proc.stdout.readline()
        serving = first.startswith("JouleBench explorer at")
        if serving:
            os.killpg(proc.pid, signal.SIGTERM)  # this test's process (and, before issue 30, its child)
        rest, _ = proc.communicate(timeout=120)
        return None if serving else proc.returncode, first + rest
    finally:
        watchdog.cancel()
        if proc.poll() is None:
            os.killpg(proc.pid, signal.SIGKILL)
            proc.wait()


@pytest.mark.parametrize("name", list(FORMS))
def test_no_command_prints_a_password(name: str, bare_template: Path, tmp_path: Path) -> None:
    form = FORMS[name]
    env = _env(form, tmp_path)
    store = _store_args(form, tmp_path)
    local = tmp_path / "runner.duckdb"
    shutil.copy(bare_template, local)
    commands = {"push": ["push", *store, "--db", str(local)], "db info": ["db", "info", *store],
                "export": ["export", str(tmp_path / "out.json"), *store]}
    running = {what: subprocess.Popen([JOULEBENCH, *argv], env=env, text=True, stdout=subprocess.PIPE,
                                      stderr=subprocess.PIPE) for what, argv in commands.items()}
    outputs: dict[str, tuple[int | None, str]] = {"app": _app_output(store, env)}
    for what, proc in running.items():
        try:
            out, err = proc.communicate(timeout=120)
        finally:
            if proc.poll() is None:
                proc.kill()
                proc.wait()
        outputs[what] = (proc.returncode, out + err)
    for what, (code, text) in outputs.items():
        assert form.secret not in text, f"`joulebench {what}` printed the secret: {text[-2000:]}"
        if form.refused:
            assert code == 4 and ("holds a password: put it in PGPASSWORD or in ~/.pgpass" in text
                                  or "the data path holds credentials" in text), f"{what}: {code} {text[-800:]}"
    if not form.refused:
        assert outputs["app"][0] is None and "JouleBench explorer at" in outputs["app"][1]  # it started


@pytest.mark.parametrize("name", [n for n, f in FORMS.items() if f.refused])
def test_no_page_shows_a_password(name: str, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    import streamlit as st

    form = FORMS[name]
    monkeypatch.setenv("JOULEBENCH_STORE", form.store.format(tmp=tmp_path))
    monkeypatch.setenv("JOULEBENCH_LAKE_DATA", form.data_path.format(tmp=tmp_path))
    for page in ("overview", "run_detail"):
        st.cache_data.clear()
        st.cache_resource.clear()
        at = open_page(page, {})
        texts = [shown(t) for t in page_texts(at)] + table_texts(at) + [str(e.value) for e in at.exception]
        assert not any(form.secret in t for t in texts), f"{page} shows the secret: {texts}"
        assert any("holds a password: put it in PGPASSWORD" in shown(e.value)
                   or "the data path holds credentials" in shown(e.value) for e in at.error), texts
