"""Read queries the explorer uses; SQL stays in db/."""

from __future__ import annotations

import contextlib
from dataclasses import dataclass

import duckdb
import polars as pl

from db.connection import damaged
from db.grading import STAT_METRICS
from db.labels import NOT_STATED_SQL, supplied_for_run
from db.store import Store
from joulebench.labels import NOT_STATED


@dataclass(frozen=True)
class ChartSelection:
    workload: str
    mode: str
    precision: str
    seq_len: int


# The Overview's headline comparison: NVIDIA's BERT-Large SQuAD inference tables, seq 384, fp16.
HEADLINE = ChartSelection(workload="bert-large-squad", mode="infer", precision="fp16", seq_len=384)


# The labels a run does not state, as a list (e.g. ['device', 'mode']); empty when it states all.
_NOT_STATED_LIST = ("list_filter([" + ", ".join(f"CASE WHEN {cond} THEN '{label}' END"
                                                for label, cond in NOT_STATED_SQL.items())
                    + "], lambda x: x IS NOT NULL) AS labels_not_stated")


def overview_counts(store: Store) -> pl.DataFrame:
    """Runs per workload and mode, with the devices that ran them (a mode or device the file did
    not state counts as 'not stated')."""
    return store.query(
        f"SELECT workload, coalesce(mode, '{NOT_STATED}') AS mode, count(*) AS runs, "
        "count(DISTINCT device_name) AS devices, count(*) FILTER (WHERE device_name IS NULL) AS device_not_stated "
        "FROM runs GROUP BY 1, 2 ORDER BY runs DESC, workload, mode")


def runs_for_chart(store: Store, chosen: ChartSelection) -> pl.DataFrame:
    return store.query(
        "SELECT r.run_id, r.device_name || coalesce(' (' || e.system_name || ')', '') AS device_name, "
        "r.batch_size, r.throughput_sps, r.latency_p99_ms, r.citation "
        "FROM runs r LEFT JOIN environments e USING (env_id) "
        "WHERE r.status = 'ok' AND r.throughput_sps IS NOT NULL AND r.workload = ? "
        "AND r.mode = ? AND r.precision = ? AND r.seq_len = ? AND coalesce(r.gpu_count, 1) = 1 "
        "ORDER BY r.device_name, r.batch_size",
        [chosen.workload, chosen.mode, chosen.precision, chosen.seq_len])


# Columns the explorer compares on; one row per run with its device and source. A label the file
# did not state is shown as 'not stated', never hidden: a device as 'not stated (<file>)', so the
# unlabelled runs of different files are not compared as one device; precision only where it
# applies (not for idle runs). `labels_not_stated` lists them; `source_id` is what to label.
_RUN_COLUMNS = f"""
    r.run_id, r.status, r.error, r.started_at,
    coalesce(r.device_name, '{NOT_STATED} (' || s.file_name || ')') AS device_name, d.kind AS device_kind,
    d.architecture, d.memory_gb, d.tdp_w, d.price_amount, d.price_currency, r.workload, r.model, r.task,
    coalesce(r.mode, '{NOT_STATED}') AS mode,
    CASE WHEN r.precision IS NULL AND r.mode IS DISTINCT FROM 'idle' THEN '{NOT_STATED}' ELSE r.precision END
        AS precision,
    r.batch_size, r.grad_accum_steps, r.seq_len, r.image_size, r.gpu_count,
    r.power_limit_w, r.power_mode, r.compile, r.repeat_index, r.tag, r.examples, r.duration_s,
    r.throughput_sps, r.iterations_per_s, r.throughput_derivation, r.latency_p50_ms, r.latency_p90_ms,
    r.latency_p99_ms, r.mem_peak_allocated_mb, r.mem_peak_rss_mb, r.mem_used_device_mb, r.energy_j,
    r.energy_missing_reason, r.energy_boundary, r.energy_method, r.avg_power_w, r.j_per_sample,
    r.j_per_iteration, r.idle_power_w, r.net_j_per_sample, r.flags, r.citation, r.notes,
    s.kind AS source_kind, s.file_name AS source_file, r.source_id, e.system_name, {_NOT_STATED_LIST},
    r.config_key, r.trust_grade, r.trust_reasons, c.trust_grade AS config_grade, c.trust_reasons AS config_reasons,
    CASE WHEN r.power_limit_w IS NOT NULL THEN 'PL ' || CAST(r.power_limit_w AS VARCHAR) || ' W'
         WHEN r.power_mode IS NOT NULL THEN 'mode ' || r.power_mode ELSE 'default' END AS power_setting
"""


def runs_table(store: Store) -> pl.DataFrame:
    return store.query(
        f"SELECT {_RUN_COLUMNS} FROM runs r LEFT JOIN devices d USING (device_name) "
        "JOIN sources s USING (source_id) LEFT JOIN environments e USING (env_id) "
        "LEFT JOIN configurations c USING (config_key) "
        "ORDER BY r.device_name, r.workload, r.batch_size")


STAT_FIELDS = ("n", "mean", "std", "cov_pct", "ci95_low", "ci95_high")
# what a configuration is, shown beside its aggregate (the same for all of its runs)
_CONFIG_COLUMNS = ("device_name", "workload", "model", "mode", "precision", "batch_size", "grad_accum_steps", "seq_len",
                   "image_size", "gpu_count", "compile", "power_limit_w", "power_mode", "tag", "energy_boundary",
                   "origin_kind", "env_id")


def configurations(store: Store, where: str = "TRUE", params: list | None = None) -> pl.DataFrame:
    """One row per configuration with a run matching `where` (over runs r, sources s): what it is,
    its runs, its grade and reasons, and per figure n, mean, std, cov_pct, ci95_low, ci95_high
    (columns `<metric>_<field>`, e.g. j_per_sample_ci95_low), from the aggregates stored at ingest."""
    pivots = ", ".join(f"max(st.{f}) FILTER (WHERE st.metric = '{m}') AS {m}_{f}"
                       for m in STAT_METRICS for f in STAT_FIELDS)
    config = ", ".join(f"any_value(r.{c}) AS {c}" for c in _CONFIG_COLUMNS)
    return store.query(
        f"WITH chosen AS (SELECT DISTINCT r.config_key FROM runs r JOIN sources s USING (source_id) WHERE {where}), "
        f"about AS (SELECT r.config_key, {config}, any_value(r.energy_method) AS energy_method, "
        "any_value(r.citation) AS citation, any_value(s.kind) AS source_kind, "
        "list(r.run_id ORDER BY r.repeat_index, r.started_at, r.run_id) AS run_ids, "
        "CASE WHEN any_value(r.power_limit_w) IS NOT NULL THEN 'PL ' || CAST(any_value(r.power_limit_w) AS VARCHAR) "
        "|| ' W' WHEN any_value(r.power_mode) IS NOT NULL THEN 'mode ' || any_value(r.power_mode) ELSE 'default' "
        "END AS power_setting "
        "FROM runs r JOIN sources s USING (source_id) WHERE r.config_key IN (SELECT config_key FROM chosen) "
        "GROUP BY r.config_key), "
        f"stats AS (SELECT st.config_key, {pivots} FROM config_stats st "
        "WHERE st.config_key IN (SELECT config_key FROM chosen) GROUP BY st.config_key) "
        "SELECT a.*, d.kind AS device_kind, c.run_count, c.ok_run_count, c.trust_grade, c.trust_reasons, "
        "st.* EXCLUDE (config_key) "
        "FROM about a JOIN configurations c USING (config_key) LEFT JOIN devices d USING (device_name) "
        "LEFT JOIN stats st USING (config_key) "
        "ORDER BY a.device_name, a.workload, a.mode, a.precision, a.batch_size, a.config_key", params or [])


def run_detail(store: Store, run_id: str) -> dict | None:
    frame = store.query(
        "SELECT r.*, d.kind AS device_kind, d.architecture, d.memory_gb, d.tdp_w, s.kind AS source_kind, "
        "s.file_name AS source_file, s.format AS source_format, s.content_sha256 AS source_sha256, "
        f"s.imported_at AS source_imported_at, {_NOT_STATED_LIST}, e.* EXCLUDE (env_id) "
        "FROM runs r LEFT JOIN devices d USING (device_name) JOIN sources s USING (source_id) "
        "LEFT JOIN environments e USING (env_id) WHERE r.run_id = ?", [run_id])
    return frame.row(0, named=True) if frame.height else None


def run_labels(store: Store, run_id: str) -> pl.DataFrame:
    """The run's labels that did not come from its file: label, value, origin, who, when, how."""
    return supplied_for_run(store.con, run_id)


def power_samples(store: Store, run_id: str) -> pl.DataFrame:
    return store.query(
        "SELECT p.domain, t.boundary, t.method, p.t_s, p.power_w FROM power_samples p "
        "LEFT JOIN power_traces t USING (run_id, domain) WHERE p.run_id = ? ORDER BY p.domain, p.t_s", [run_id])


def step_times(store: Store, run_id: str) -> pl.DataFrame:
    return store.query("SELECT step_index, duration_ms FROM step_times WHERE run_id = ? ORDER BY step_index",
                       [run_id])


def findings(store: Store) -> pl.DataFrame:
    return store.query(
        "SELECT finding_id, metric, relation, value, subject_device, subject_desc, baseline_device, "
        "baseline_desc, quote, citation FROM findings ORDER BY finding_id")


def devices(store: Store) -> pl.DataFrame:
    return store.query(
        "SELECT d.*, (SELECT count(*) FROM runs r WHERE r.device_name = d.device_name) AS runs "
        "FROM devices d ORDER BY d.kind, d.device_name")


def power_modes(store: Store) -> pl.DataFrame:
    return store.query("SELECT * FROM power_modes ORDER BY device_name, mode_id")


EDITABLE_DEVICE_COLUMNS = ("price_amount", "price_currency", "price_kind", "price_source", "price_date",
                           "tdp_w", "memory_gb", "notes")


def update_devices(store: Store, edits: pl.DataFrame) -> int:
    """Write user edits of catalog fields back (one transaction); returns rows changed."""
    cols = [c for c in EDITABLE_DEVICE_COLUMNS if c in edits.columns]
    if not cols or edits.is_empty():
        return 0
    assignments = ", ".join(f"{c} = e.{c}" for c in cols)
    store.con.register("_device_edits", edits.select(["device_name", *cols]).to_arrow())
    try:
        store.con.execute("BEGIN TRANSACTION")
        store.con.execute(f"UPDATE devices SET {assignments} FROM _device_edits e "
                          "WHERE devices.device_name = e.device_name")
        store.con.execute("COMMIT")
    except duckdb.Error as e:
        with contextlib.suppress(duckdb.Error):
            store.con.execute("ROLLBACK")
        raise damaged(store.path, e) from e
    finally:
        with contextlib.suppress(duckdb.Error):
            store.con.unregister("_device_edits")
    return edits.height
