"""Trust grades and configuration aggregates in the store, computed at ingest.

Every path that adds runs (a local sweep, an import, an upload, the inbox, a recovered sweep,
the reference seed) goes through `db.writes.ingest_loaded`, which calls `grade_runs` for the
runs it added, in the same transaction: each run gets its `trust_grade` and `trust_reasons`
(rules in `energy.grades`) and its `config_key`, and every configuration it touches gets its
aggregate recomputed from all of its runs (`energy.stats`: n, mean, sd, CoV, 95 % interval)
with the aggregate's grade. A database migrated to schema 5 is graded whole once (`Store.open`).

A configuration is what a repeat repeats: the same device and environment, workload, mode,
precision, batch, accumulation, input size, GPU count, compile, power setting in effect, tag
and energy boundary, from the same origin (local runs pool across sweeps; an imported or
reference file's runs pool within that file).
"""

from __future__ import annotations

import contextlib
import functools
import hashlib
import json
from collections.abc import Sequence
from datetime import UTC, datetime
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa

from db.migrate import apply_migrations
from energy.grades import RunFacts, grade_aggregate, grade_run
from energy.stats import aggregate
from energy.steady import drift_from_halves

CONFIG_KEY_FIELDS = ("device_name", "env_id", "workload", "mode", "precision", "batch_size", "grad_accum_steps",
                     "seq_len", "image_size", "gpu_count", "compile", "power_limit_w", "power_mode", "tag",
                     "energy_boundary", "origin_kind")
# the figures aggregated per configuration (runs columns)
STAT_METRICS = ("throughput_sps", "j_per_sample", "net_j_per_sample", "j_per_iteration", "avg_power_w",
                "energy_j", "latency_p50_ms", "latency_p99_ms", "duration_s", "tokens_per_s", "j_per_token",
                "decode_j_per_token", "ttft_p90_ms", "tpot_p90_ms")
_FACT_COLUMNS = ("status", "mode", "origin_kind", "origin_format", "origin_tool", "duration_s", "energy_j",
                 "energy_boundary", "energy_method", "sample_period_s", "sensor_update_period_s",
                 "energy_disagreement_pct", "throttle_reasons", "gpu_clock_avg_mhz", "warmup_steady", "flags")
_BATCH = 20_000  # run ids per query


def config_key(row: dict[str, Any]) -> str:
    """The configuration a run repeats, as a short stable hash of CONFIG_KEY_FIELDS (plus the origin
    file for runs not measured here)."""
    values = [row.get(k) for k in CONFIG_KEY_FIELDS]
    for extra in ("max_new_tokens", "request_rate_per_s"):  # generation runs (schema 13); older keys unchanged
        if row.get(extra) is not None:
            values.append([extra, row[extra]])
    if row.get("origin_kind") != "local":
        values.append(row.get("origin_sha256"))
    return hashlib.sha256(json.dumps(values, default=str).encode()).hexdigest()[:24]


def _in_list(run_ids: Sequence[str] | None, column: str = "run_id") -> tuple[str, list[Any]]:
    if run_ids is None:
        return "TRUE", []
    return f"{column} IN (SELECT unnest(?::VARCHAR[]))", [list(run_ids)]


def _frame(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> pl.DataFrame:
    return con.sql(sql, params=params or None).pl()


def stored_drifts(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str] | None) -> tuple[dict, dict]:
    """Per run, `energy.steady.drift_pct` computed in the database (a stored trace can hold
    millions of samples): of the boundary's power trace (its first total domain), and of the step
    times stamped at each step's start. The same rule: sample means of the halves split at the
    middle of the time span, their difference over the overall mean, in %; at least 4 samples."""
    where, params = _in_list(run_ids, "p.run_id")
    power = con.execute(
        "WITH span AS (SELECT p.run_id, p.domain, (min(p.t_s) + max(p.t_s)) / 2 AS mid, count(*) AS n, "
        "max(p.t_s) > min(p.t_s) AS wide FROM power_samples p SEMI JOIN power_traces t "
        f"ON t.run_id = p.run_id AND t.domain = p.domain AND t.boundary IS NOT NULL WHERE {where} GROUP BY ALL) "
        "SELECT p.run_id, p.domain, any_value(span.n), any_value(span.wide), "
        "avg(p.power_w) FILTER (WHERE p.t_s <= span.mid), avg(p.power_w) FILTER (WHERE p.t_s > span.mid), "
        f"avg(p.power_w) FROM power_samples p JOIN span USING (run_id, domain) WHERE {where} "
        "GROUP BY ALL ORDER BY p.run_id, p.domain", params + params).fetchall()
    where, params = _in_list(run_ids)
    steps = con.execute(
        "WITH st AS (SELECT run_id, duration_ms, coalesce(sum(duration_ms) OVER (PARTITION BY run_id "
        "ORDER BY step_index ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS start_ms "
        f"FROM step_times WHERE {where}), "
        "span AS (SELECT run_id, (min(start_ms) + max(start_ms)) / 2 AS mid, count(*) AS n, "
        "max(start_ms) > min(start_ms) AS wide FROM st GROUP BY ALL) "
        "SELECT st.run_id, any_value(span.n), any_value(span.wide), "
        "avg(st.duration_ms) FILTER (WHERE st.start_ms <= span.mid), "
        "avg(st.duration_ms) FILTER (WHERE st.start_ms > span.mid), avg(st.duration_ms) "
        "FROM st JOIN span USING (run_id) GROUP BY ALL", params).fetchall()
    power_by_run: dict[str, float | None] = {}
    for run_id, _domain, n, wide, first, second, mean in power:
        power_by_run.setdefault(run_id, drift_from_halves(n, wide, first, second, mean))  # the first domain
    step_by_run = {run_id: drift_from_halves(n, wide, first, second, mean)
                   for run_id, n, wide, first, second, mean in steps}
    return power_by_run, step_by_run


def grade_runs(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str] | None = None) -> int:
    """Grade the given runs (None: every run), store grade, reasons and configuration key, then
    refresh the aggregates of every configuration they belong to. Runs in the caller's transaction."""
    if run_ids is not None and not run_ids:
        return 0
    if run_ids is not None and len(run_ids) > _BATCH:
        return sum(grade_runs(con, run_ids[i:i + _BATCH]) for i in range(0, len(run_ids), _BATCH))
    where, params = _in_list(run_ids)
    columns = sorted({"run_id", "origin_sha256", "max_new_tokens", "request_rate_per_s", *CONFIG_KEY_FIELDS,
                      *_FACT_COLUMNS})
    rows = _frame(con, f"SELECT {', '.join(columns)} FROM runs WHERE {where}", params)
    if rows.is_empty():
        return 0
    power_drift, step_drift = stored_drifts(con, run_ids)
    out: dict[str, list[Any]] = {"run_id": [], "config_key": [], "trust_grade": [], "trust_reasons": []}
    for row in rows.iter_rows(named=True):
        facts = RunFacts.from_fields(row, power_drift_pct=power_drift.get(row["run_id"]),
                                     step_time_drift_pct=step_drift.get(row["run_id"]))
        grade = grade_run(facts)
        out["run_id"].append(row["run_id"])
        out["config_key"].append(config_key(row))
        out["trust_grade"].append(grade.grade)
        out["trust_reasons"].append(grade.texts)
    table = pa.table({"run_id": pa.array(out["run_id"], pa.string()),
                      "config_key": pa.array(out["config_key"], pa.string()),
                      "trust_grade": pa.array(out["trust_grade"], pa.string()),
                      "trust_reasons": pa.array(out["trust_reasons"], pa.list_(pa.string()))})
    con.register("_grades", table)
    try:
        con.execute("UPDATE runs SET config_key = g.config_key, trust_grade = g.trust_grade, "
                    "trust_reasons = g.trust_reasons FROM _grades g WHERE runs.run_id = g.run_id")
    finally:
        con.unregister("_grades")
    refresh_configurations(con, sorted(set(out["config_key"])))
    return len(out["run_id"])


def refresh_configurations(con: duckdb.DuckDBPyConnection, keys: Sequence[str]) -> None:
    """Recompute the aggregate and grade of each configuration from all of its runs."""
    if not keys:
        return
    members = _frame(con, (
        f"SELECT config_key, status, trust_grade, {', '.join(STAT_METRICS)} FROM runs "
        "WHERE config_key IN (SELECT unnest(?::VARCHAR[])) ORDER BY config_key, run_id"), [list(keys)])
    now = datetime.now(UTC)
    config_rows: list[dict[str, Any]] = []
    stat_rows: list[dict[str, Any]] = []
    for (key,), group in members.partition_by("config_key", as_dict=True, maintain_order=True).items():
        ok = group.filter(pl.col("status") == "ok")
        stats = {m: aggregate(ok[m].to_list()) for m in STAT_METRICS}
        # the figure whose spread grades the energy: per sample, else per token (LLM runs), else power (idle)
        energy, label = next(((stats[m], text) for m, text in (("j_per_sample", "J/sample"), ("j_per_token", "J/token"),
                                                                ("avg_power_w", "average power")) if stats[m]),
                             (None, "J/sample"))
        throughput = stats["throughput_sps"] or stats["tokens_per_s"]
        grade = grade_aggregate(ok["trust_grade"].to_list(), group["status"].to_list(),
                                throughput=throughput, energy=energy, energy_label=label)
        config_rows.append({"config_key": key, "run_count": group.height, "ok_run_count": ok.height,
                            "trust_grade": grade.grade, "trust_reasons": grade.texts, "graded_at": now})
        for metric, agg in stats.items():
            if agg is not None:
                stat_rows.append({"config_key": key, "metric": metric, "n": agg.n, "mean": agg.mean, "std": agg.std,
                                  "cov_pct": agg.cov_pct, "ci95_low": agg.ci95_low, "ci95_high": agg.ci95_high})
    con.execute("DELETE FROM config_stats WHERE config_key IN (SELECT unnest(?::VARCHAR[]))", [list(keys)])
    con.execute("DELETE FROM configurations WHERE config_key IN (SELECT unnest(?::VARCHAR[]))", [list(keys)])
    config_schema = pa.schema([("config_key", pa.string()), ("run_count", pa.int64()), ("ok_run_count", pa.int64()),
                               ("trust_grade", pa.string()), ("trust_reasons", pa.list_(pa.string())),
                               ("graded_at", pa.timestamp("us", tz="UTC"))])
    stat_schema = pa.schema([("config_key", pa.string()), ("metric", pa.string()), ("n", pa.int64()),
                             ("mean", pa.float64()), ("std", pa.float64()), ("cov_pct", pa.float64()),
                             ("ci95_low", pa.float64()), ("ci95_high", pa.float64())])
    for table, rows, schema in (("configurations", config_rows, config_schema),
                                ("config_stats", stat_rows, stat_schema)):
        if rows:
            con.register("_config_rows", pa.Table.from_pylist(rows, schema=schema))
            try:
                con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _config_rows")
            finally:
                con.unregister("_config_rows")


# --- the derived tables: checked, and rebuilt from the runs when damaged ------------------------------

DERIVED_TABLES = ("configurations", "config_stats")  # computed from the runs; never the only copy of anything
_DAMAGE = ("corrupt", "checksum", "could not read", "serialization", "deserializ")


def derived_damage(con: duckdb.DuckDBPyConnection) -> str | None:
    """Why the configuration aggregates cannot be used, or None when they can: a table missing or
    unreadable (a block that fails its checksum), or out of step with the runs (a configuration of the
    runs without its row, one whose ok runs measured a figure without its aggregate). Reads every row
    of both tables (they hold one row per configuration and figure: small)."""
    figure = " OR ".join(f"isfinite({m})" for m in STAT_METRICS)
    try:
        con.execute("SELECT count(*), sum(hash(config_key, run_count, ok_run_count, trust_grade, trust_reasons, "
                    "graded_at)) FROM configurations").fetchall()
        con.execute("SELECT count(*), sum(hash(config_key, metric, n, mean, std, cov_pct, ci95_low, ci95_high)) "
                    "FROM config_stats").fetchall()
        rows = con.execute(
            "SELECT (SELECT count(*) FROM (SELECT DISTINCT config_key FROM runs WHERE config_key IS NOT NULL) r "
            "ANTI JOIN configurations c USING (config_key)), "
            f"(SELECT count(DISTINCT config_key) FROM runs WHERE status = 'ok' AND ({figure}) "
            "AND config_key NOT IN (SELECT config_key FROM config_stats))").fetchall()
    except duckdb.CatalogException as e:
        return f"a table is missing ({str(e).splitlines()[0][:200]})"
    except duckdb.Error as e:
        text = str(e).strip().splitlines()[0][:200] if str(e).strip() else type(e).__name__
        if any(w in text.lower() for w in _DAMAGE):
            return f"unreadable ({text})"
        raise
    without_row, without_stats = rows[0]
    if without_row or without_stats:
        return (f"out of step with the runs ({without_row} configuration(s) without their row, {without_stats} "
                "without their aggregates)")
    return None


@functools.cache
def _derived_ddl() -> tuple[str, ...]:
    """CREATE TABLE of each derived table as the migrations make it (from a migrated in-memory database)."""
    con = duckdb.connect()
    try:
        apply_migrations(con)
        rows = dict(con.execute("SELECT table_name, sql FROM duckdb_tables() WHERE table_name IN "
                                "(SELECT unnest(?::VARCHAR[]))", [list(DERIVED_TABLES)]).fetchall())
    finally:
        con.close()
    return tuple(rows[t] for t in DERIVED_TABLES)


def rebuild_derived(con: duckdb.DuckDBPyConnection, *, temporary: bool = False) -> int:
    """Recreate the derived tables from the runs, in one transaction: dropped (their rows, damaged or not,
    are not read) and made again as the migrations make them, then every configuration's aggregate and
    grade recomputed. `temporary`: build them as temporary tables of this connection instead, which hide
    the stored ones until it closes (to read a store that cannot be written). Returns the configurations."""
    keys = [r[0] for r in con.execute("SELECT DISTINCT config_key FROM runs WHERE config_key IS NOT NULL "
                                      "ORDER BY 1").fetchall()]
    con.execute("BEGIN TRANSACTION")
    try:
        for table, ddl in zip(DERIVED_TABLES, _derived_ddl(), strict=True):
            if temporary:
                con.execute(f"DROP TABLE IF EXISTS temp.{table}")
                con.execute(ddl.replace("CREATE TABLE", "CREATE TEMP TABLE", 1))
            else:
                con.execute(f"DROP TABLE IF EXISTS {table}")
                con.execute(ddl)
        refresh_configurations(con, keys)
        con.execute("COMMIT")
    except BaseException:
        with contextlib.suppress(duckdb.Error):
            con.execute("ROLLBACK")
        raise
    return len(keys)
