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
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from datetime import UTC, datetime
from typing import Any

import duckdb
import polars as pl
import pyarrow as pa

from db.connection import first_row, id_set, in_ids
from db.migrate import apply_migrations
from energy.grades import GRADES, NumberText, grade_aggregate_frame, grade_frame
from energy.stats import CONFIDENCE
from energy.steady import MIN_DRIFT_POINTS
from joulebench.configuration import KEY_ALWAYS, KEY_WHERE_STATED
from joulebench.metrics import AGGREGATED

# the figures aggregated per configuration (runs columns), as the metric catalogue marks them
STAT_METRICS = AGGREGATED
# the columns a configuration's key reads: every field of joulebench.configuration's key, and the origin file
_KEY_COLUMNS = (*KEY_ALWAYS, *KEY_WHERE_STATED, "origin_sha256")
# what a grade reads besides the configuration's fields (joulebench.configuration: mode, origin and boundary are among
# them)
_FACT_COLUMNS = ("status", "origin_format", "origin_tool", "duration_s", "energy_j",
                 "energy_method", "sample_period_s", "sensor_update_period_s",
                 "energy_disagreement_pct", "throttle_reasons", "gpu_clock_avg_mhz", "warmup_steady", "flags",
                 "requests_completed", "requests_failed")


def config_key(row: dict[str, Any]) -> str:
    """The configuration a run repeats, as a short stable hash of joulebench.configuration's KEY_ALWAYS fields,
    then each KEY_WHERE_STATED field the run states (plus the origin file for runs not measured here)."""
    values = [row.get(k) for k in KEY_ALWAYS]
    for extra in KEY_WHERE_STATED:  # only where stated: older keys unchanged
        if row.get(extra) is not None:
            values.append([extra, row[extra]])
    if row.get("origin_kind") != "local":
        values.append(row.get("origin_sha256"))
    return hashlib.sha256(json.dumps(values, default=str).encode()).hexdigest()[:24]


def _frame(con: duckdb.DuckDBPyConnection, sql: str) -> pl.DataFrame:
    return con.sql(sql).pl()


def _halves_drift(n: str, wide: str, first: str, second: str, mean: str) -> str:
    """energy.steady.drift_from_halves in SQL: NULL with too few samples, no time span or a mean <= 0."""
    return (f"CASE WHEN {n} >= {MIN_DRIFT_POINTS} AND {wide} AND {first} IS NOT NULL AND {second} IS NOT NULL "
            f"AND {mean} > 0 THEN ({second} - {first}) / {mean} * 100.0 END")


def drift_frame(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str] | None) -> pl.DataFrame:
    """Per run (run_id, power_drift_pct, step_time_drift_pct): `energy.steady.drift_pct` computed in the
    database (a stored trace can hold millions of samples), of the boundary's power trace (its first total
    domain), and of the step times stamped at each step's start. The same rule: sample means of the halves
    split at the middle of the time span, their difference over the overall mean, in %; at least 4 samples."""
    with id_set(con, run_ids) as ids:
        return _drift_sql(con, in_ids(ids, "p.run_id"), in_ids(ids, "run_id"))


def _drift_sql(con: duckdb.DuckDBPyConnection, where_p: str, where_s: str) -> pl.DataFrame:
    return _frame(con, (
        "WITH span AS (SELECT s.* FROM (SELECT p.run_id, p.domain, (min(p.t_s) + max(p.t_s)) / 2 AS mid, "
        f"count(*) AS n, max(p.t_s) > min(p.t_s) AS wide FROM power_samples p WHERE {where_p} GROUP BY ALL) s "
        "SEMI JOIN power_traces t ON t.run_id = s.run_id AND t.domain = s.domain AND t.boundary IS NOT NULL), "
        "halves AS (SELECT p.run_id, p.domain, any_value(span.n) AS n, any_value(span.wide) AS wide, "
        "avg(p.power_w) FILTER (WHERE p.t_s <= span.mid) AS first, avg(p.power_w) FILTER (WHERE p.t_s > span.mid) "
        f"AS second, avg(p.power_w) AS mean FROM power_samples p JOIN span USING (run_id, domain) WHERE {where_p} "
        "GROUP BY ALL), "
        f"power AS (SELECT run_id, arg_min({_halves_drift('n', 'wide', 'first', 'second', 'mean')}, domain) "
        "AS power_drift_pct FROM halves GROUP BY run_id), "
        "st AS (SELECT run_id, duration_ms, coalesce(sum(duration_ms) OVER (PARTITION BY run_id "
        "ORDER BY step_index ROWS BETWEEN UNBOUNDED PRECEDING AND 1 PRECEDING), 0) AS start_ms "
        f"FROM step_times WHERE {where_s}), "
        "sspan AS (SELECT run_id, (min(start_ms) + max(start_ms)) / 2 AS mid, count(*) AS n, "
        "max(start_ms) > min(start_ms) AS wide FROM st GROUP BY ALL), "
        "shalves AS (SELECT st.run_id, any_value(sspan.n) AS n, any_value(sspan.wide) AS wide, "
        "avg(st.duration_ms) FILTER (WHERE st.start_ms <= sspan.mid) AS first, "
        "avg(st.duration_ms) FILTER (WHERE st.start_ms > sspan.mid) AS second, avg(st.duration_ms) AS mean "
        "FROM st JOIN sspan USING (run_id) GROUP BY ALL), "
        f"steps AS (SELECT run_id, {_halves_drift('n', 'wide', 'first', 'second', 'mean')} AS step_time_drift_pct "
        "FROM shalves) "
        "SELECT run_id, power.power_drift_pct, steps.step_time_drift_pct FROM power FULL JOIN steps USING (run_id)"))


_DRIFT_COLUMNS = pl.Schema({"run_id": pl.String, "power_drift_pct": pl.Float64, "step_time_drift_pct": pl.Float64})


def known_drifts(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str] | None) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Each run's drift (drift_frame's columns, one row per run): read from `run_drift` where stored, computed
    from the samples for the others; and those computed, which `store_drifts` keeps (nothing is written here:
    a read-only connection will do)."""
    try:
        with id_set(con, run_ids) as ids:
            stored = _frame(con, "SELECT d.run_id, any_value(d.power_drift_pct) AS power_drift_pct, "
                                 "any_value(d.step_time_drift_pct) AS step_time_drift_pct FROM run_drift d "
                                 f"SEMI JOIN runs r ON r.run_id = d.run_id WHERE {in_ids(ids, 'd.run_id')} "
                                 "GROUP BY d.run_id")
            missing = _frame(con, "SELECT d.run_id FROM runs d ANTI JOIN run_drift USING (run_id) "
                                  f"WHERE {in_ids(ids, 'd.run_id')}")
    except duckdb.CatalogException:  # a store migrated before schema 23 (a team store not pushed to since)
        return drift_frame(con, run_ids), pl.DataFrame(schema=_DRIFT_COLUMNS)
    if missing.is_empty():
        return stored, pl.DataFrame(schema=_DRIFT_COLUMNS)
    # most runs without one (a store from before schema 23): scanning every sample is cheaper than filtering
    # 10 M samples by 100,000 ids (0.55 s against 0.8 s); the computed drifts of stored runs are dropped below
    whole = run_ids is None and missing.height >= stored.height
    computed = drift_frame(con, None if whole else missing["run_id"].to_list())
    computed = missing.join(computed, on="run_id", how="left")  # a row for every run
    computed = computed.select(*_DRIFT_COLUMNS).cast(_DRIFT_COLUMNS)
    return pl.concat([stored.select(*_DRIFT_COLUMNS).cast(_DRIFT_COLUMNS), computed]), computed


def store_drifts(con: duckdb.DuckDBPyConnection, computed: pl.DataFrame) -> None:
    """Keep computed drifts (known_drifts) in `run_drift`, but for runs another writer stored meanwhile."""
    if computed.is_empty():
        return
    con.register("_drifts", computed.select(*_DRIFT_COLUMNS).cast(_DRIFT_COLUMNS).to_arrow())
    try:
        con.execute("INSERT INTO run_drift BY NAME SELECT * FROM _drifts ANTI JOIN run_drift USING (run_id)")
    except duckdb.CatalogException:
        pass  # a store migrated before schema 23: computed again at the next grading
    finally:
        con.unregister("_drifts")


def duckdb_numbers(con: duckdb.DuckDBPyConnection) -> NumberText:
    """energy.grades' number writer for many runs at once: DuckDB's format(), which writes ".3g" and "+.2g"
    exactly as Python's format() does (tests/test_grading_vectorised.py checks it on random numbers)."""
    def write(frame: pl.DataFrame, specs: Mapping[str, tuple[str, str]]) -> pl.DataFrame:
        columns = sorted({column for column, _ in specs.values()})
        con.register("_grade_numbers", frame.select(columns).to_arrow())
        try:
            texts = con.sql("SELECT " + ", ".join(f"format('{{:{spec}}}', \"{column}\") AS \"{out}\""
                                                  for out, (column, spec) in specs.items())
                            + " FROM _grade_numbers").pl()
        finally:
            con.unregister("_grade_numbers")
        return frame.with_columns(texts.get_columns())
    return write


def _config_keys(rows: pl.DataFrame) -> pl.DataFrame:
    """run_id -> config_key, computed once per distinct set of key fields (repeats share it)."""
    fields = [c for c in _KEY_COLUMNS if c in rows.columns]
    distinct = rows.select(fields).unique(maintain_order=True)
    keyed = distinct.with_columns(pl.Series("config_key", [config_key(r) for r in distinct.iter_rows(named=True)],
                                            pl.String()))
    return rows.select("run_id", *fields).join(keyed, on=fields, how="left", nulls_equal=True).select(
        "run_id", "config_key")


# config_key in SQL: the same bytes hashed (json.dumps of the same list), for every run whose text fields are
# printable ASCII without a quote or backslash (json.dumps writes those as they are); the others (NULL here)
# get theirs from config_key in Python. DuckDB writes a DOUBLE as Python's repr does (checked on random values
# by tests/test_grading_vectorised.py), but infinities and NaN in its own words.
_PLAIN_TEXT = r"[\x20\x21\x23-\x5b\x5d-\x7e]*"


def _json_sql(column: str, kind: str) -> str:
    c = f'"{column}"'
    if kind == "VARCHAR":
        value = "'\"' || " + c + " || '\"'"
    elif kind == "BOOLEAN":
        value = f"CASE WHEN {c} THEN 'true' WHEN NOT {c} THEN 'false' END"
    elif kind in ("DOUBLE", "FLOAT"):
        value = (f"CASE WHEN isnan({c}) THEN 'NaN' WHEN {c} = 'inf'::DOUBLE THEN 'Infinity' "
                 f"WHEN {c} = '-inf'::DOUBLE THEN '-Infinity' ELSE CAST({c}::DOUBLE AS VARCHAR) END")
    elif kind in ("BIGINT", "INTEGER", "SMALLINT", "TINYINT", "HUGEINT", "UBIGINT", "UINTEGER"):
        value = f"CAST({c} AS VARCHAR)"
    else:
        raise RuntimeError(f"config_key in SQL: runs.{column} is {kind}, which it cannot write as JSON")
    return f"coalesce({value}, 'null')"


def config_key_sql(con: duckdb.DuckDBPyConnection) -> str:
    """An expression over the runs table giving config_key(row) (NULL for a row whose text needs json.dumps'
    escapes: its key comes from config_key in Python)."""
    kinds = dict(con.execute("SELECT column_name, data_type FROM duckdb_columns() WHERE table_name = 'runs' "
                             "AND database_name = current_database() AND schema_name = current_schema()").fetchall())
    items = [_json_sql(f, kinds[f]) for f in KEY_ALWAYS]
    items += [f"CASE WHEN \"{extra}\" IS NOT NULL THEN '[\"{extra}\", ' || {_json_sql(extra, kinds[extra])} || ']' END"
              for extra in KEY_WHERE_STATED]
    items.append(f"CASE WHEN origin_kind IS DISTINCT FROM 'local' THEN {_json_sql('origin_sha256', 'VARCHAR')} END")
    texts = [f for f in _KEY_COLUMNS if kinds[f] == "VARCHAR"]
    plain = " AND ".join(f"coalesce(regexp_full_match(\"{f}\", '{_PLAIN_TEXT}'), TRUE)" for f in texts)
    return (f"CASE WHEN {plain} THEN left(sha256('[' || concat_ws(', ', {', '.join(items)}) || ']'), 24) END")


def _fill_config_keys(rows: pl.DataFrame) -> pl.DataFrame:
    """rows with config_key (from SQL, NULL where Python must write it): the missing ones filled."""
    missing = rows.filter(pl.col("config_key").is_null())
    if missing.is_empty():
        return rows
    keyed = _config_keys(missing.drop("config_key")).rename({"config_key": "_python_key"})
    return rows.join(keyed, on="run_id", how="left").with_columns(
        config_key=pl.coalesce("config_key", "_python_key")).drop("_python_key")


REWRITE_AT = 1_000  # runs: from here on the runs table is written anew rather than updated (see _store_grades)


@dataclass(frozen=True)
class Regrading:
    """Every run's grade and configuration, and every configuration's aggregate, computed (by `compute_all`,
    which only reads: a read-only connection will do) and not yet stored (`store_all`)."""

    runs: pl.DataFrame  # run_id, trust_grade, trust_reasons, config_key
    configurations: pl.DataFrame  # the configurations table's rows
    stats: pl.DataFrame  # the config_stats table's rows
    inputs: tuple[Any, ...]  # inputs_fingerprint of the runs it was computed from
    drifts: pl.DataFrame  # the drifts computed from samples (not stored before): run_drift's rows to add


def inputs_fingerprint(con: duckdb.DuckDBPyConnection) -> tuple[Any, ...]:
    """What the grades are computed from, summed up: changes when a run is added or removed or a field that a
    grade, a configuration or an aggregate reads changes (a label). The power samples of a run never change."""
    columns = sorted({"run_id", *_KEY_COLUMNS, *_FACT_COLUMNS, *STAT_METRICS})
    row = first_row(con, f"SELECT count(*), sum(hash({', '.join(columns)})) FROM runs")
    return tuple(row) if row else ()


def _graded_rows(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str] | None,
                 extra: Sequence[str] = ()) -> tuple[pl.DataFrame, pl.DataFrame]:
    """Each run's trust_grade, trust_reasons and config_key (and the `extra` columns of runs); and the drifts
    computed from samples for it (known_drifts), to store."""
    columns = sorted({"run_id", *_KEY_COLUMNS, *_FACT_COLUMNS} | set(extra))
    try:
        key = config_key_sql(con)
    except (KeyError, RuntimeError):  # a runs table whose types this cannot write (never in a migrated store)
        key = "NULL::VARCHAR"
    with id_set(con, run_ids) as ids:
        rows = _fill_config_keys(_frame(con, f"SELECT {', '.join(columns)}, {key} AS config_key FROM runs "
                                             f"WHERE {in_ids(ids, 'run_id')}"))
    if rows.is_empty():
        return rows, pl.DataFrame(schema=_DRIFT_COLUMNS)
    drifts, computed = known_drifts(con, run_ids)
    facts = rows.join(drifts, on="run_id", how="left")
    graded = grade_frame(facts, duckdb_numbers(con)).select("run_id", "trust_grade", "trust_reasons", "config_key")
    return (graded.join(rows.select("run_id", *extra), on="run_id", how="left") if extra else graded), computed


def compute_all(con: duckdb.DuckDBPyConnection, *, fingerprint: bool = True) -> Regrading:
    """Every run graded and every configuration aggregated, in memory: nothing is written (`fingerprint`: with
    the inputs' fingerprint, for a writer that comes later to check them; inputs () without)."""
    inputs = inputs_fingerprint(con) if fingerprint else ()
    graded, drifts = _graded_rows(con, None, ("status", *STAT_METRICS))
    members = graded.sort("config_key", "run_id").select("config_key", "status", "trust_grade", *STAT_METRICS)
    configurations, stats = configuration_rows(con, members)
    return Regrading(graded.select("run_id", "trust_grade", "trust_reasons", "config_key"), configurations, stats,
                     inputs, drifts)


def store_all(con: duckdb.DuckDBPyConnection, regrading: Regrading) -> int:
    """Write what compute_all computed: every run's grade and configuration, the derived tables whole. In the
    caller's transaction."""
    store_drifts(con, regrading.drifts)
    _store_grades(con, regrading.runs, everything=True)
    keys = regrading.configurations["config_key"].to_list()
    _store_configurations(con, keys, regrading.configurations, regrading.stats, everything=True)
    return regrading.runs.height


def grade_runs(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str] | None = None) -> int:
    """Grade the given runs (None: every run), store grade, reasons and configuration key, then
    refresh the aggregates of every configuration they belong to. Runs in the caller's transaction.
    Vectorised: energy.grades' rules evaluated over every run at once, the configuration keys in SQL."""
    if run_ids is not None and not run_ids:
        return 0
    if run_ids is None:
        return store_all(con, compute_all(con, fingerprint=False))
    graded, drifts = _graded_rows(con, run_ids)
    if graded.is_empty():
        return 0
    store_drifts(con, drifts)
    _store_grades(con, graded, everything=False)
    refresh_configurations(con, graded["config_key"].unique().sort().to_list())
    return graded.height


def _store_grades(con: duckdb.DuckDBPyConnection, graded: pl.DataFrame, *, everything: bool) -> None:
    """Write config_key, trust_grade, trust_reasons. DuckDB updates a list column (trust_reasons) by deleting
    and inserting each whole row, 1,400 rows/s in a runs table of 100 columns, so a DuckDB file's runs table is
    written anew, in one statement, when many runs change (100,000 runs: about a second); a few runs, and the
    team store's tables, are updated in place."""
    table = graded.to_arrow().cast(pa.schema([("run_id", pa.string()), ("trust_grade", pa.string()),
                                              ("trust_reasons", pa.list_(pa.string())),
                                              ("config_key", pa.string())]))
    con.register("_grades", table)
    many = graded.height >= REWRITE_AT
    try:
        if everything:  # a regrade of every run: only the runs whose grade changed are written (often none)
            con.register("_grades", con.sql(
                "SELECT g.* FROM _grades g JOIN runs r USING (run_id) WHERE g.config_key IS DISTINCT FROM r.config_key "
                "OR g.trust_grade IS DISTINCT FROM r.trust_grade OR g.trust_reasons IS DISTINCT FROM r.trust_reasons"
            ).to_arrow_table())  # whole: a stream would read through the connection its query holds (a deadlock)
            changed = int(con.execute("SELECT count(*) FROM _grades").fetchone()[0])  # type: ignore[index]
            if not changed:
                return
            many = changed >= REWRITE_AT
        if many and _rewritable(con):
            _rewrite(con, "runs", [
                "SELECT r.* REPLACE (coalesce(g.config_key, r.config_key) AS config_key, CASE WHEN g.run_id IS NULL "
                "THEN r.trust_grade ELSE g.trust_grade END AS trust_grade, CASE WHEN g.run_id IS NULL THEN "
                "r.trust_reasons ELSE g.trust_reasons END AS trust_reasons) FROM runs r LEFT JOIN _grades g "
                "USING (run_id) ORDER BY r.rowid"])
        else:
            con.execute("UPDATE runs SET config_key = g.config_key, trust_grade = g.trust_grade, "
                        "trust_reasons = g.trust_reasons FROM _grades g WHERE runs.run_id = g.run_id")
    finally:
        con.unregister("_grades")


def _rewritable(con: duckdb.DuckDBPyConnection) -> bool:
    """Whether the connection's tables are a DuckDB file's (not a team store's DuckLake)."""
    kind = con.execute("SELECT type FROM duckdb_databases() WHERE database_name = current_database()").fetchone()
    return bool(kind and kind[0] == "duckdb")


def _rewrite(con: duckdb.DuckDBPyConnection, table: str, selects: Sequence[str]) -> None:
    """Make `table` anew from `selects` (inserted by name, in order), with its own definition (columns,
    constraints), then put it in the old one's place: in the caller's transaction. DuckDB deletes and
    updates list columns row by row with its indexes; writing the table whole takes one pass."""
    ddl = con.execute("SELECT sql FROM duckdb_tables() WHERE table_name = ? AND database_name = current_database() "
                      "AND schema_name = current_schema()", [table]).fetchone()
    head = f"CREATE TABLE {table}("
    if not ddl or not ddl[0].startswith(head):
        raise RuntimeError(f"the {table} table's definition cannot be read ({ddl})")
    con.execute(f"DROP TABLE IF EXISTS _{table}_new")
    con.execute(ddl[0].replace(head, f"CREATE TABLE _{table}_new(", 1))
    for select in selects:
        con.execute(f"INSERT INTO _{table}_new BY NAME {select}")
    con.execute(f"DROP TABLE {table}")
    con.execute(f"ALTER TABLE _{table}_new RENAME TO {table}")


def _t_quantiles(ns: pl.Series) -> pl.DataFrame:
    """Student's t critical value (energy.stats.CONFIDENCE) for each repeat count n >= 2, one value per distinct
    n: scipy's stdtrit, which scipy.stats.t.ppf (energy.stats) calls, imported alone (scipy.stats takes 0.5 s)."""
    from scipy.special import stdtrit

    distinct = ns.filter(ns >= 2).unique().sort()
    return pl.DataFrame({"n": distinct, "_t": stdtrit((distinct - 1).to_numpy(), 0.5 + CONFIDENCE / 2.0)})


def config_aggregates(members: pl.DataFrame) -> pl.DataFrame:
    """Per configuration and figure (config_key, metric, n, mean, std, cov_pct, ci95_low, ci95_high) over its
    ok runs, as energy.stats.aggregate computes them (missing and NaN values left out, an interval that would
    reach 0 withheld), for every configuration at once."""
    long = members.filter(pl.col("status") == "ok").unpivot(
        index="config_key", on=list(STAT_METRICS), variable_name="metric", value_name="x").filter(
        pl.col("x").is_not_null() & pl.col("x").cast(pl.Float64).is_finite())
    stats = long.group_by("config_key", "metric", maintain_order=True).agg(
        n=pl.len(), mean=pl.col("x").mean(), std=pl.col("x").std(ddof=1))
    stats = stats.join(_t_quantiles(stats["n"]), on="n", how="left")
    many = pl.col("n") >= 2
    half = pl.col("_t") * pl.col("std") / pl.col("n").cast(pl.Float64).sqrt()
    low, high = pl.col("mean") - half, pl.col("mean") + half
    withheld = (pl.col("mean") > 0) & (low <= 0)
    return stats.select(
        "config_key", "metric", pl.col("n").cast(pl.Int64), "mean",
        std=pl.when(many).then(pl.col("std")),
        cov_pct=pl.when(many & (pl.col("mean") != 0)).then(pl.col("std") / pl.col("mean").abs() * 100.0),
        ci95_low=pl.when(many & ~withheld).then(low), ci95_high=pl.when(many & ~withheld).then(high))


def refresh_configurations(con: duckdb.DuckDBPyConnection, keys: Sequence[str]) -> None:
    """Recompute the aggregate and grade of each configuration from all of its runs (every configuration
    at once: energy.grades' aggregate rules over a frame)."""
    if not keys:
        return
    with id_set(con, keys) as ids:
        members = _frame(con, f"SELECT config_key, status, trust_grade, {', '.join(STAT_METRICS)} FROM runs "
                              f"WHERE {in_ids(ids, 'config_key')} ORDER BY config_key, run_id")
    configurations, stats = configuration_rows(con, members)
    _store_configurations(con, keys, configurations, stats, everything=False)


_CONFIG_SCHEMA = pa.schema([("config_key", pa.string()), ("run_count", pa.int64()), ("ok_run_count", pa.int64()),
                            ("trust_grade", pa.string()), ("trust_reasons", pa.list_(pa.string())),
                            ("graded_at", pa.timestamp("us", tz="UTC"))])
_STAT_SCHEMA = pa.schema([("config_key", pa.string()), ("metric", pa.string()), ("n", pa.int64()),
                          ("mean", pa.float64()), ("std", pa.float64()), ("cov_pct", pa.float64()),
                          ("ci95_low", pa.float64()), ("ci95_high", pa.float64())])


def configuration_rows(con: duckdb.DuckDBPyConnection, members: pl.DataFrame) -> tuple[pl.DataFrame, pl.DataFrame]:
    """The configurations and config_stats rows of the configurations of `members` (config_key, status,
    trust_grade and STAT_METRICS of every run of each, ordered by config_key and run_id)."""
    stats = config_aggregates(members)
    ok = pl.col("status") == "ok"
    facts = members.group_by("config_key", maintain_order=True).agg(
        run_count=pl.len(), ok_run_count=ok.sum(),
        failed_kinds=pl.col("status").filter(~ok).unique().sort(),
        **{f"graded_{g}": (ok & (pl.col("trust_grade") == g)).sum() for g in GRADES})
    # the figure whose spread grades the energy: per sample, else per token (LLM runs), else power (idle)
    for prefix, figures in (("energy", (("j_per_sample", "J/sample"), ("j_per_token", "J/token"),
                                        ("avg_power_w", "average power"))),
                            ("throughput", (("throughput_sps", None), ("tokens_per_s", None)))):
        chosen = (stats.filter(pl.col("metric").is_in([m for m, _ in figures]))
                  .with_columns(_rank=pl.col("metric").replace_strict({m: i for i, (m, _) in enumerate(figures)}))
                  .sort("config_key", "_rank").unique("config_key", keep="first"))
        label = pl.col("metric").replace_strict({m: text for m, text in figures}, return_dtype=pl.String)
        facts = facts.join(chosen.select("config_key", pl.col("n").alias(f"{prefix}_n"),
                                         pl.col("cov_pct").alias(f"{prefix}_cov_pct"),
                                         *([label.alias("energy_label")] if prefix == "energy" else [])),
                           on="config_key", how="left")
    facts = facts.with_columns(pl.col("energy_label").fill_null("J/sample"))
    graded = grade_aggregate_frame(facts, duckdb_numbers(con)).select(
        "config_key", "run_count", "ok_run_count", "trust_grade", "trust_reasons",
        graded_at=pl.lit(datetime.now(UTC), pl.Datetime("us", "UTC")))
    return graded, stats


def _store_configurations(con: duckdb.DuckDBPyConnection, keys: Sequence[str], configurations: pl.DataFrame,
                          stats: pl.DataFrame, *, everything: bool) -> None:
    """Replace the rows of configurations `keys` in both derived tables (`everything`: the tables whole)."""
    con.register("_config_keys", pa.table({"config_key": pa.array(list(keys), pa.string())}))
    try:
        for table, rows, schema in (("configurations", configurations, _CONFIG_SCHEMA),
                                    ("config_stats", stats, _STAT_SCHEMA)):
            con.register("_config_rows", rows.to_arrow().cast(schema))
            try:
                if everything and _unchanged(con, table):
                    continue  # a regrade that changed nothing here writes nothing (graded_at: when it last changed)
                if (everything or len(keys) >= REWRITE_AT) and _rewritable(con):
                    _rewrite(con, table, ["SELECT * FROM _config_rows"] if everything else
                             [f"SELECT * FROM {table} ANTI JOIN _config_keys USING (config_key)",
                              "SELECT * FROM _config_rows"])
                else:
                    if everything:
                        con.execute(f"DELETE FROM {table}")
                    else:
                        con.execute(f"DELETE FROM {table} WHERE config_key IN (SELECT config_key FROM _config_keys)")
                    con.execute(f"INSERT INTO {table} BY NAME SELECT * FROM _config_rows")
            finally:
                con.unregister("_config_rows")
    finally:
        con.unregister("_config_keys")


def _unchanged(con: duckdb.DuckDBPyConnection, table: str) -> bool:
    """Whether `table` holds exactly the rows of _config_rows (graded_at aside): nothing to write."""
    columns = "* EXCLUDE (graded_at)" if table == "configurations" else "*"
    row = con.execute(f"SELECT (SELECT count(*) FROM {table}) = (SELECT count(*) FROM _config_rows) AND NOT EXISTS "
                      f"(SELECT {columns} FROM _config_rows EXCEPT ALL SELECT {columns} FROM {table})").fetchone()
    return bool(row and row[0])


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
