"""A run's requests in the store (migration 0027): written with the run, in its transaction (db.writes), read for
the recomputation of its figures, for goodput under any SLO (decision.goodput) and for export.

The rows are those of joulebench.requests' frame plus run_id; `request_sets` says per run how many requests its
source had and how many are kept (joulebench.requests.retain states the bounds).
"""

from __future__ import annotations

from collections.abc import Sequence
from contextlib import AbstractContextManager
from typing import Any, Protocol

import duckdb
import polars as pl
import pyarrow as pa

import joulebench.requests as jr


class Store(Protocol):
    """What the readers here use of a db.store.Store (db.store imports db.writes, which writes through this module:
    a protocol, not an import, keeps the two apart)."""

    con: duckdb.DuckDBPyConnection

    def query(self, sql: str, params: list[Any] | None = None) -> pl.DataFrame: ...

    def time_limited(self) -> AbstractContextManager[None]: ...

ARROW_SCHEMA = pa.schema([
    ("run_id", pa.string()), ("request_index", pa.int64()), ("scheduled_send_s", pa.float64()),
    ("send_s", pa.float64()), ("ttft_ms", pa.float64()), ("itl_ms", pa.list_(pa.float64())),
    ("itl_kept", pa.string()), ("itl_count", pa.int64()), ("itl_sum_ms", pa.float64()), ("itl_min_ms", pa.float64()),
    ("itl_max_ms", pa.float64()), ("e2e_ms", pa.float64()), ("prompt_tokens_server", pa.int64()),
    ("prompt_tokens_client", pa.int64()), ("output_tokens_server", pa.int64()), ("output_tokens_client", pa.int64()),
    ("status", pa.string()), ("error_class", pa.string()), ("counted", pa.bool_())])
SET_SCHEMA = pa.schema([("run_id", pa.string()), ("requests_in_source", pa.int64()), ("requests_kept", pa.int64()),
                        ("retention_note", pa.string())])
COLUMNS = ", ".join(f.name for f in ARROW_SCHEMA if f.name != "run_id")


def table(run_id: str, requests: pl.DataFrame) -> pa.Table:
    """A run's rows (joulebench.requests.frame's columns) as the arrow table the requests table takes."""
    return requests.with_columns(pl.lit(run_id).alias("run_id")).select(ARROW_SCHEMA.names).to_arrow().cast(
        ARROW_SCHEMA)


def run_tables(run: dict[str, Any]) -> tuple[pa.Table, pa.Table] | None:
    """The requests and request_sets rows of a validated result file's run (None: it carries no requests)."""
    items = run.get("requests")
    if items is None:
        return None
    rows = jr.frame([jr.from_json(item) for item in items])
    total = run.get("requests_total", len(items))
    note = None if total == len(items) else (f"{total:,} requests in the source, the first {len(items):,} kept "
                                             f"(at most {jr.MAX_REQUESTS_PER_RUN:,} per run)")
    sets = pa.Table.from_pylist([{"run_id": run["run_id"], "requests_in_source": total, "requests_kept": len(items),
                                  "retention_note": note}], schema=SET_SCHEMA)
    return table(run["run_id"], rows), sets


def insert(con: duckdb.DuckDBPyConnection, requests: pa.Table, sets: pa.Table | None = None) -> None:
    """Append rows inside the caller's transaction (a benchmark, or a caller outside db.writes' batches)."""
    for name, data in (("requests", requests), ("request_sets", sets)):
        if data is None or data.num_rows == 0:
            continue
        con.register("_request_rows", data)
        try:
            con.execute(f"INSERT INTO {name} BY NAME SELECT * FROM _request_rows")
        finally:
            con.unregister("_request_rows")


_READ = (f"SELECT run_id, {COLUMNS} FROM requests WHERE run_id IN (SELECT unnest(?::VARCHAR[])) "
         "ORDER BY run_id, request_index")
# the pooled gaps the aggregation takes, flat (a list column reaches polars 5-10x slower than its values)
_GAPS = ("SELECT unnest(itl_ms) AS gap_ms FROM requests WHERE run_id = ? AND counted AND status = 'ok' "
         "AND itl_kept = 'every gap'")


def _frame(con: duckdb.DuckDBPyConnection, sql: str, params: list[Any]) -> pl.DataFrame:
    """A query's rows through Arrow (DuckDB's `.pl()` converts list columns row by row)."""
    result = con.execute(sql, params).arrow()
    table = result.read_all() if isinstance(result, pa.RecordBatchReader) else result
    return pl.DataFrame(pl.from_arrow(table))


def read(store: Store, run_ids: Sequence[str]) -> pl.DataFrame:
    """The requests of these runs, every column, by run and index."""
    with store.time_limited():
        return _frame(store.con, _READ, [list(run_ids)])


def read_con(con: duckdb.DuckDBPyConnection, run_ids: Sequence[str]) -> pl.DataFrame:
    """`read` on a bare connection (a benchmark's, a test's)."""
    return _frame(con, _READ, [list(run_ids)])


def aggregate(con: duckdb.DuckDBPyConnection, run_id: str) -> jr.Aggregate:
    """One run's figures from its stored requests (joulebench.requests.aggregate), its gaps read flat."""
    rows = _frame(con, f"SELECT {COLUMNS.replace('itl_ms, ', '')} FROM requests WHERE run_id = ?", [run_id])
    return jr.aggregate(rows, gaps=_frame(con, _GAPS, [run_id])["gap_ms"])


def runs_with_requests(store: Store) -> pl.DataFrame:
    """Every run with stored requests: run_id, requests_in_source, requests_kept, retention_note."""
    return store.query("SELECT run_id, requests_in_source, requests_kept, retention_note FROM request_sets "
                       "ORDER BY run_id")


# What a limit on a request needs, one row per counted request; no gap list is read (itl_max_ms is its largest gap).
_SLO_SQL = ("SELECT run_id, status, ttft_ms, itl_max_ms, itl_kept, e2e_ms, "
            "coalesce(output_tokens_server, output_tokens_client) AS output_tokens FROM requests WHERE counted")


def slo_frame(store: Store, run_ids: Sequence[str] | None = None) -> pl.DataFrame:
    """The columns decision.goodput holds each request to (every run with requests, or these)."""
    if run_ids is None:
        return store.query(_SLO_SQL)
    return store.query(f"{_SLO_SQL} AND run_id IN (SELECT unnest(?::VARCHAR[]))", [list(run_ids)])


def slo_frame_con(con: duckdb.DuckDBPyConnection) -> pl.DataFrame:
    """`slo_frame` of every run, on a bare connection (a benchmark's)."""
    return con.sql(_SLO_SQL).pl()


def export_items(store: Store, run_ids: Sequence[str]) -> tuple[dict[str, list[dict[str, Any]]], dict[str, int]]:
    """Per run, its requests as the result file's objects, and how many its source had (for `requests_total`)."""
    rows = read(store, run_ids)
    totals = dict(store.query("SELECT run_id, requests_in_source FROM request_sets WHERE run_id IN "
                              "(SELECT unnest(?::VARCHAR[]))", [list(run_ids)]).iter_rows())
    out: dict[str, list[dict[str, Any]]] = {}
    for row in rows.iter_rows(named=True):
        summary = (jr.GapSummary(row["itl_count"], row["itl_sum_ms"], row["itl_min_ms"], row["itl_max_ms"])
                   if row["itl_kept"] == jr.GAPS_SUMMARY else None)
        request = jr.Request(
            index=row["request_index"], status=row["status"], scheduled_send_s=row["scheduled_send_s"],
            send_s=row["send_s"], ttft_ms=row["ttft_ms"],
            itl_ms=tuple(row["itl_ms"]) if row["itl_kept"] == jr.GAPS_EVERY else None, gaps=summary,
            e2e_ms=row["e2e_ms"], prompt_tokens_server=row["prompt_tokens_server"],
            prompt_tokens_client=row["prompt_tokens_client"], output_tokens_server=row["output_tokens_server"],
            output_tokens_client=row["output_tokens_client"], error_class=row["error_class"], counted=row["counted"])
        out.setdefault(row["run_id"], []).append(request.to_json())
    return out, {k: int(v) for k, v in totals.items()}


def flat(store: Store, run_ids: Sequence[str]) -> pl.DataFrame:
    """The requests as a flat table (export's <stem>_requests): the gap list as text, ';'-separated."""
    rows = read(store, run_ids)
    return rows.with_columns(pl.col("itl_ms").cast(pl.List(pl.String)).list.join(";"))
