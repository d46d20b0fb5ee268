"""ITL and TPOT apart (issues 26 and 29): every metric defined once (joulebench.metrics), each source's
inter-token figure stored in the column it really is, through the real importer and a real DuckDB file,
and a database of schema 13 migrated so its stored figures move.

ITL: every gap between consecutive tokens, pooled over the requests. TPOT: per request, (end-to-end -
TTFT) / (output tokens - 1). vLLM bench serve's and MLPerf's TPOT are TPOT; the runner's own, ML.ENERGY
v3's and optimum-benchmark's per-token figures are ITL.
"""

from __future__ import annotations

import ast
import json
import re
import shutil
from pathlib import Path

import duckdb
import pytest

from db import Store, migrate
from db.connection import connect
from ingest import import_file
from joulebench import metrics
from joulebench.resultfile import new_document, schema

ROOT = Path(__file__).resolve().parents[1]
FORMATS = Path(__file__).parent / "fixtures" / "formats"
MLENERGY_V3 = FORMATS / "zeus_mlenergy" / "mlenergy-v3-leaderboard-llama31-8b-lm-arena-chat.json"
VLLM = FORMATS / "vllm" / "LambdaLabsML-vllm-benchmark-2024-09-1xH100-llama3.1-8b-fp8-prompt10-len8192.json"
MLPERF = (FORMATS / "mlperf_inference/v4.1_closed_AMD/results/8xMI300X_2xEPYC-9374F/llama2-70b-99/Server"
          / "performance/run_1/mlperf_log_summary.txt")
ITL_COLS = ", ".join(m.name for m in metrics.ITL.metrics())
TPOT_COLS = ", ".join(m.name for m in metrics.TPOT.metrics())


def _stored(db: Path, where: str) -> tuple[tuple, tuple]:
    """(ITL avg..p99, TPOT avg..p99) of the one run matching `where`."""
    with Store.open_read_only(db) as store:
        row = store.query(f"SELECT {ITL_COLS}, {TPOT_COLS} FROM runs r JOIN sources s USING (source_id) "
                          f"WHERE {where}").rows()
    assert len(row) == 1, row
    return tuple(row[0][:5]), tuple(row[0][5:])


# --- one definition per metric ------------------------------------------------------------------------

def test_every_schema_metric_has_one_definition_and_the_same_meaning() -> None:
    props = schema()["$defs"]["metrics"]["properties"]
    assert set(props) == set(metrics.METRICS)  # both ways: no column without a definition, none without a column
    for name, spec in props.items():
        m = metrics.metric(name)
        assert spec["description"] == m.meaning, name
        assert m.label and m.population in metrics.Population and m.better in metrics.Better
        if name.endswith("_ms"):
            assert m.unit == "ms" and m.better is metrics.Better.LOWER, name
    assert metrics.ITL.p90.population is metrics.Population.TOKENS
    assert metrics.TPOT.p90.population is metrics.Population.REQUEST
    with pytest.raises(KeyError, match="not a JouleBench metric"):
        metrics.metric("tpot_p90")


# a piece of a metric name: a latency family's prefix, a statistic, the ms unit
_METRIC_PART = re.compile(r"(^|_)(ttft|tpot|itl|e2e|e2e_latency|latency)_|_(avg|max|p\d*)(_|$)|_ms$")


def _fstring_patterns() -> list[tuple[str, int, str, list[str]]]:
    """Every f-string in the code base that joins placeholders with text: (file, line, the f-string as a
    regex with its placeholders as wildcards, its literal parts)."""
    out = []
    for path in ROOT.rglob("*.py"):
        rel = path.relative_to(ROOT)
        if rel.parts[0].startswith(".") or "node_modules" in rel.parts:
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.JoinedStr) and any(isinstance(v, ast.FormattedValue) for v in node.values):
                parts = [re.escape(v.value) if isinstance(v, ast.Constant) else ".+" for v in node.values]
                texts = [str(v.value) for v in node.values if isinstance(v, ast.Constant)]
                out.append((str(rel), node.lineno, "".join(parts), texts))
    return out


def test_no_metric_name_is_built_with_an_f_string() -> None:
    """f"{prefix}_p{q}_ms", f"ttft_{k}", f"{metric}_p90_ms": a name built from parts escapes the one
    definition; look it up in joulebench.metrics (TTFT.p90, ITL.stat("p90"), metric(name))."""
    names = list(metrics.METRICS)
    built = [f"{file}:{line}" for file, line, pattern, parts in _fstring_patterns()
             if any(_METRIC_PART.search(p) for p in parts) and any(re.fullmatch(pattern, n) for n in names)]
    assert built == [], "metric names built with f-strings: " + ", ".join(built)


# --- each source's figure in its column -------------------------------------------------------------

def test_a_runner_record_stores_pooled_gaps_as_itl_and_per_request_tpot(bare_template: Path,
                                                                        tmp_path: Path) -> None:
    """Two batches of 2 requests, 4 tokens each: one with a stall (gaps 2, 2, 16 ms), one even (3, 3, 3).
    ITL pools the 12 gaps; TPOT is one value per request: (30 - 10) / 3 and (19 - 10) / 3."""
    from energy import EnergyReading
    from runner.generation import GenerationWindows
    from runner.measure import Window
    from runner.options import RunConfig
    from runner.record import run_record

    db = tmp_path / "runner.duckdb"
    shutil.copy(bare_template, db)
    cfg = RunConfig("llm-tiny", "infer", "fp32", 2, 1, 16, "cpu", False, 0, 2, None, 0, max_new_tokens=4)
    gen = GenerationWindows(Window(2, 0.1, [40.0, 30.0], EnergyReading(energy_j=5.0, boundary="estimated",
                                                                         method="estimated")),
                            [[10.0, 12.0, 14.0, 30.0], [10.0, 13.0, 16.0, 19.0]])
    record = run_record(cfg, run_id="gen-1", status="ok", error=None, started_at="2026-01-01T00:00:00+00:00",
                        ended_at="2026-01-01T00:00:01+00:00", captured=None, tf32_enabled=None, window=gen,
                        memory=None, flags=[])
    assert record.metrics.tokens is not None and record.metrics.tokens.itl is not None
    path = tmp_path / "run.json"
    path.write_text(json.dumps(new_document([record.to_json()], producer_version="test",
                                            created_at="2026-01-01T00:00:02+00:00")))
    assert import_file(path, db=db, source_kind="local").status == "imported"
    itl, tpot = _stored(db, "r.run_id = 'gen-1'")
    gaps = sorted([2.0, 2.0, 16.0, 3.0, 3.0, 3.0] * 2)  # each gap shared by the batch's 2 requests
    assert itl[0] == pytest.approx(sum(gaps) / 12) and itl[1] == pytest.approx(3.0)
    assert itl[2] == pytest.approx(gaps[9] + 0.9 * (gaps[10] - gaps[9]))  # p90 of the pooled gaps: 16
    per_request = sorted([20 / 3] * 2 + [3.0] * 2)
    assert tpot[0] == pytest.approx(sum(per_request) / 4)
    assert tpot[2] == pytest.approx(20 / 3) and tpot[2] != pytest.approx(itl[2])  # the two never agree here
    with Store.open_read_only(db) as store:
        e2e, load_kind = store.query("SELECT e2e_latency_p50_ms, load_kind FROM runs WHERE run_id = 'gen-1'").row(0)
    assert e2e == pytest.approx((30.0 + 19.0) / 2) and load_kind == "batch"


def test_mlenergy_v3_inter_token_latencies_are_stored_as_itl(bare_template: Path, tmp_path: Path) -> None:
    db = tmp_path / "mlenergy.duckdb"
    shutil.copy(bare_template, db)
    assert import_file(MLENERGY_V3, db=db).status == "imported"
    first = json.loads(MLENERGY_V3.read_text())["configurations"][0]
    with Store.open_read_only(db) as store:
        rows = store.query(f"SELECT {ITL_COLS}, {TPOT_COLS} FROM runs ORDER BY run_id").rows()
    stored = {r[1] for r in rows}
    assert first["median_itl_ms"] in stored  # itl_p50_ms
    assert all(r[5:] == (None,) * 5 for r in rows)  # no TPOT: ML.ENERGY v3 states none


def test_vllm_bench_serve_tpot_stays_tpot_and_its_itl_is_itl(bare_template: Path, tmp_path: Path) -> None:
    """This file streamed several tokens per chunk: ITL 51 ms, TPOT 6 ms; each in its own column."""
    db = tmp_path / "vllm.duckdb"
    shutil.copy(bare_template, db)
    assert import_file(VLLM, db=db).status == "imported"
    doc = json.loads(VLLM.read_text())
    itl, tpot = _stored(db, "s.format = 'vllm-bench'")
    assert tpot[0] == doc["mean_tpot_ms"] and tpot[1] == doc["median_tpot_ms"] and tpot[4] == doc["p99_tpot_ms"]
    assert itl[0] == doc["mean_itl_ms"] and itl[1] == doc["median_itl_ms"] and itl[4] == doc["p99_itl_ms"]
    with Store.open_read_only(db) as store:
        row = store.query("SELECT requests_completed, output_tokens_mean, prompt_tokens_mean FROM runs").row(0)
    assert row == (10, pytest.approx(442 / 10), pytest.approx(1369 / 10))


def test_mlperf_time_to_output_token_stays_tpot(bare_template: Path, tmp_path: Path) -> None:
    db = tmp_path / "mlperf.duckdb"
    shutil.copy(bare_template, db)
    assert import_file(MLPERF, db=db).status == "imported"
    itl, tpot = _stored(db, "s.format = 'mlperf-inference'")
    assert itl == (None,) * 5
    assert tpot[4] == pytest.approx(197.873909)  # 99.00 percentile time to output token (ns) / 1e6
    assert tpot[1] <= tpot[2] <= tpot[3] <= tpot[4]


# --- a database of schema 13: its figures move ---------------------------------------------------------

def _old_database(path: Path, monkeypatch: pytest.MonkeyPatch, tmp_path: Path) -> None:
    """A database migrated to 0013 as the JouleBench before this change made it, holding one run per
    source kind with its inter-token figure in tpot_*, as that JouleBench's importers and runner stored it."""
    old = tmp_path / "migrations-13"
    old.mkdir()
    for m in sorted(migrate.MIGRATIONS_DIR.glob("*.sql")):
        if int(m.name[:4]) <= 13:
            shutil.copy(m, old / m.name)
    with monkeypatch.context() as mp:
        mp.setattr(migrate, "MIGRATIONS_DIR", old)
        con = connect(path)
        migrate.apply_migrations(con)
    kinds = [  # run_id, origin kind, format, tool, tool version
        ("local-gen", "local", "joulebench-result", "joulebench", "0.1"),
        ("mlenergy-v3", "upload", "mlenergy-leaderboard", "ml.energy leaderboard", "v3"),
        ("mlenergy-v2", "upload", "mlenergy-leaderboard", "ml.energy leaderboard", "v2"),
        ("optimum", "upload", "optimum-benchmark", "optimum-benchmark", "0.5"),
        ("vllm", "upload", "vllm-bench", "vLLM benchmark_serving", None),
        ("mlperf", "upload", "mlperf-inference", "mlperf-loadgen", None),
    ]
    for i, (run_id, kind, fmt, tool, version) in enumerate(kinds):
        con.execute("INSERT INTO runs (run_id, source_id, workload, mode, status, origin_kind, origin_format, "
                    "origin_tool, origin_tool_version, config_key, tpot_avg_ms, tpot_p50_ms, tpot_p90_ms, "
                    "tpot_p95_ms, tpot_p99_ms) VALUES (?, 1, 'llm', 'infer', 'ok', ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)",
                    [run_id, kind, fmt, tool, version, f"key-{i}", 1.0 + i, 2.0 + i, 3.0 + i, 4.0 + i, 5.0 + i])
        con.execute("INSERT INTO configurations VALUES (?, 1, 1, 'D', [], now())", [f"key-{i}"])
        con.execute("INSERT INTO config_stats VALUES (?, 'tpot_p90_ms', 1, ?, NULL, NULL, NULL, NULL)",
                    [f"key-{i}", 3.0 + i])
    con.close()


def test_migrating_an_old_database_moves_each_inter_token_figure(monkeypatch: pytest.MonkeyPatch,
                                                                 tmp_path: Path) -> None:
    path = tmp_path / "old.duckdb"
    _old_database(path, monkeypatch, tmp_path)
    upto14 = tmp_path / "migrations-14"  # 0014 alone: later migrations regrade (their own tests)
    upto14.mkdir()
    for m in sorted(migrate.MIGRATIONS_DIR.glob("*.sql")):
        if int(m.name[:4]) <= 14:
            shutil.copy(m, upto14 / m.name)
    monkeypatch.setattr(migrate, "MIGRATIONS_DIR", upto14)
    con = connect(path)
    assert migrate.apply_migrations(con) == [14]
    rows = {r[0]: (r[1:6], r[6:11]) for r in con.execute(
        f"SELECT run_id, {ITL_COLS}, {TPOT_COLS} FROM runs ORDER BY run_id").fetchall()}
    moved = {"local-gen": 0, "mlenergy-v3": 1, "optimum": 3}
    kept = {"mlenergy-v2": 2, "vllm": 4, "mlperf": 5}
    for run_id, i in moved.items():
        assert rows[run_id] == ((1.0 + i, 2.0 + i, 3.0 + i, 4.0 + i, 5.0 + i), (None,) * 5), run_id
    for run_id, i in kept.items():
        assert rows[run_id] == ((None,) * 5, (1.0 + i, 2.0 + i, 3.0 + i, 4.0 + i, 5.0 + i)), run_id
    # the moved runs' configurations lost their aggregates (made again at the next read-write open)
    left = {r[0] for r in con.execute("SELECT config_key FROM config_stats").fetchall()}
    assert left == {"key-2", "key-4", "key-5"}
    con.close()
    with pytest.raises(duckdb.Error):  # not migrated twice: the columns exist
        duckdb.connect(str(path)).execute((upto14 / "0014_itl_and_serving.sql").read_text())


def test_a_team_store_at_the_old_schema_moves_its_inter_token_figures(bare_template: Path, tmp_path: Path) -> None:
    """A lake pushed by JouleBench at schema 13 held ML.ENERGY v3's ITL as tpot_*, and its aggregates under
    tpot_p90_ms: the next JouleBench's first connection moves both, as migration 0014 does for a file."""
    from db.lake import LakeUrl, ensure_schema
    from db.lake import connect as lake_connect
    from db.push import push

    local = tmp_path / "box.duckdb"
    shutil.copy(bare_template, local)
    assert import_file(MLENERGY_V3, db=local).status == "imported"
    lake = LakeUrl.parse(f"ducklake:sqlite:{tmp_path / 'team.sqlite'}")
    push(local, lake, machine="box")
    con = lake_connect(lake)
    try:  # the lake as schema 13 left it: the figure in tpot_*, itl_* empty, the aggregate named tpot
        con.execute("BEGIN TRANSACTION")
        con.execute("UPDATE runs SET tpot_p90_ms = itl_p90_ms, itl_p90_ms = NULL WHERE itl_p90_ms IS NOT NULL")
        con.execute("UPDATE config_stats SET metric = 'tpot_p90_ms' WHERE metric = 'itl_p90_ms'")
        con.execute("DELETE FROM schema_migrations WHERE version > 13")
        con.execute("COMMIT")
        held = con.execute("SELECT count(*) FROM runs WHERE tpot_p90_ms IS NOT NULL").fetchone()[0]
        assert held > 0
        assert ensure_schema(con) == migrate.latest_version()
        assert con.execute("SELECT count(*) FROM runs WHERE tpot_p90_ms IS NOT NULL").fetchone()[0] == 0
        assert con.execute("SELECT count(*) FROM runs WHERE itl_p90_ms IS NOT NULL").fetchone()[0] == held
        stats = dict(con.execute("SELECT metric, count(*) FROM config_stats WHERE metric LIKE '%p90_ms' "
                                 "AND metric <> 'ttft_p90_ms' GROUP BY metric").fetchall())
        assert "tpot_p90_ms" not in stats and stats["itl_p90_ms"] > 0
    finally:
        con.close()
