"""A store is a type (issue 29 item 1): a DuckDB file and a team store are located once (db.location), read
through the same queries, and every command and page says the same kind word; a team store's queries have a
time limit with a message that names the store and what to do."""

from __future__ import annotations

import ast
import time
from pathlib import Path
from typing import Any

import pytest

from cli.main import main
from db import Store
from db.lake import LakeUrl
from db.push import push
from db.store_location import QUERY_LIMIT_ENV
from ingest.service import import_file
from joulebench.errors import DatabaseError
from joulebench.paths import REPO_ROOT
from tests.helpers import shown
from tests.test_push import FORMATS, UPLOADS, _local


def _info_kinds(out: str) -> tuple[str, set[str]]:
    """`db info`'s store kind line and the kinds of its 'runs per source kind' table."""
    kind = next(line.split(":", 1)[1].split()[0] for line in out.splitlines() if line.startswith("store kind:"))
    table = out.split("runs per source kind\n", 1)[1].split("\n\n", 1)[0].splitlines()
    return kind, {line.split()[0] for line in table[2:] if line.strip()}


def _overview_kinds() -> tuple[str, set[str]]:
    """The Overview page's store kind (its caption) and the kinds of its 'Runs by source' table."""
    import streamlit as st
    from streamlit.testing.v1 import AppTest

    st.cache_data.clear()
    st.cache_resource.clear()
    at = AppTest.from_file(str(REPO_ROOT / "app.py"), default_timeout=120).run()
    assert not at.exception and not at.error, ([e.value for e in at.exception], [e.value for e in at.error])
    caption = next(shown(c.value) for c in at.caption if "Store kind: " in shown(c.value))
    frames = [getattr(f.value, "data", f.value) for f in at.dataframe]
    by_source = next(f for f in frames if "Source" in f.columns)
    return caption.split("Store kind: ", 1)[1].split(".")[0], set(by_source["Source"].astype(str))


def test_every_command_and_page_says_the_same_kind_of_store(bare_template: Path, tmp_path: Path,
                                                             monkeypatch: pytest.MonkeyPatch,
                                                             capsys: pytest.CaptureFixture[str]) -> None:
    """A runner's own runs ('local' where they were measured) and an upload, in its file and pushed to a team
    store: `db info` on the file and the Overview of the file say 'local'; `db info --store` and the Overview of
    the team store say 'team' (db info said 'local' there while the explorer's tables said 'team')."""
    local = _local(bare_template, tmp_path, "box-a", UPLOADS[2])
    assert import_file(FORMATS.parent / "result_v1_cpu_runs.json", db=local, source_kind="local").status == "imported"
    url = f"ducklake:sqlite:{tmp_path / 'team.sqlite'}"
    push(local, LakeUrl.parse(url), machine="box-a")

    assert main(["db", "info", "--db", str(local)]) == 0
    assert _info_kinds(capsys.readouterr().out) == ("local", {"local", "upload"})
    monkeypatch.setenv("JOULEBENCH_DB", str(local))
    monkeypatch.delenv("JOULEBENCH_STORE", raising=False)
    assert _overview_kinds() == ("local", {"local", "upload"})

    assert main(["db", "info", "--store", url]) == 0
    assert _info_kinds(capsys.readouterr().out) == ("team", {"team", "upload"})
    monkeypatch.setenv("JOULEBENCH_STORE", url)
    monkeypatch.setenv("JOULEBENCH_DB", str(tmp_path / "never-created.duckdb"))
    assert _overview_kinds() == ("team", {"team", "upload"})
    assert not (tmp_path / "never-created.duckdb").exists()


SLOW = "SELECT sum(a.range * b.range) FROM range(200000) a, range(200000) b"  # minutes of work


def test_a_slow_query_on_a_team_store_stops_at_the_limit_with_a_clear_message(
        bare_template: Path, tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """A team store is across a network: a query past $JOULEBENCH_STORE_QUERY_LIMIT_S is stopped, and the
    message names the store (its URL as shown) and what to do; the store stays usable. A file's queries have
    no limit; a limit that is not a number is refused, naming the variable."""
    url = f"ducklake:sqlite:{tmp_path / 'team.sqlite'}"
    push(_local(bare_template, tmp_path, "box-a", UPLOADS[2]), LakeUrl.parse(url), machine="box-a")
    monkeypatch.setenv(QUERY_LIMIT_ENV, "0.5")
    with Store.open_team_store(url) as store:
        start = time.monotonic()
        with pytest.raises(DatabaseError) as raised:
            store.query(SLOW)
        assert time.monotonic() - start < 15
        message = raised.value.format_message()
        assert f"team store {url}: a query took longer than 0.5 s and was stopped" in message
        assert QUERY_LIMIT_ENV in message and "out of reach" in message
        assert store.query("SELECT count(*) AS n FROM runs").item() == 1  # the next query runs
        time.sleep(0.7)  # past the limit: no interrupt is left over for a later query
        assert store.query("SELECT count(*) AS n FROM sources").item() >= 1
    with Store.open_read_only(_local(bare_template, tmp_path, "box-b", None)) as store:
        assert store.location.query_limit_s() is None
    monkeypatch.setenv(QUERY_LIMIT_ENV, "soon")
    with pytest.raises(DatabaseError, match=QUERY_LIMIT_ENV), Store.open_team_store(url) as store:
        store.query("SELECT 1")


def _calls(tree: ast.AST) -> list[ast.Call]:
    return [node for node in ast.walk(tree) if isinstance(node, ast.Call)]


def _text(node: Any) -> str:
    return node.value if isinstance(node, ast.Constant) and isinstance(node.value, str) else ""


def test_queries_are_written_once_and_a_store_name_is_read_once() -> None:
    """No query is made for one kind of store by replacing its text (db/ held `.replace("s.kind AS
    source_kind", ...)`); db/queries.py only reads (no INSERT, UPDATE, DELETE or transaction); a team store's
    URL is parsed in one place (db.location.locate) outside the tests and benchmarks."""
    sql_words = ("SELECT", "FROM", "JOIN", " AS ", "WHERE", "kind")
    for path in sorted((REPO_ROOT / "db").glob("*.py")):
        for call in _calls(ast.parse(path.read_text())):
            if isinstance(call.func, ast.Attribute) and call.func.attr == "replace":
                texts = [_text(a) for a in call.args]
                assert not any(w in t for t in texts for w in sql_words), f"{path.name}:{call.lineno}: SQL replaced"
    queries = (REPO_ROOT / "db" / "queries.py").read_text()
    for word in ("INSERT ", "UPDATE ", "DELETE ", "BEGIN TRANSACTION", "snapshot_id"):
        assert word not in queries, word
    parsed = []
    for folder in ("db", "ingest", "explorer", "cli", "pages", "runner"):
        for path in sorted((REPO_ROOT / folder).rglob("*.py")):
            for call in _calls(ast.parse(path.read_text())):
                func = call.func
                if isinstance(func, ast.Attribute) and func.attr == "parse" and \
                        isinstance(func.value, ast.Name) and func.value.id in ("LakeUrl", "TeamStore"):
                    parsed.append(f"{path.relative_to(REPO_ROOT)}:{call.lineno}")
    assert [p.split(":")[0] for p in parsed] == ["db/location.py"], parsed
