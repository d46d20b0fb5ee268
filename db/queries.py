"""Read queries the explorer uses; SQL stays in db/. Reads only (the catalog's edits are db.catalog_edits),
and each query is written once for both kinds of store (db.location): sources are read through the view
`store_sources` (its `shown_kind` is the kind word every page shows) and who pushed a source through
`source_pushes`, which every reading connection has."""

from __future__ import annotations

from dataclasses import dataclass

import polars as pl

from db.grading import STAT_METRICS
from db.labels import NOT_STATED_SQL, supplied_for_run
from db.store import Store
from joulebench.configuration import NAMED_BY_WORKLOAD, NAMES, OWN_COLUMNS
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


def token_devices(store: Store, most: int = 4) -> pl.DataFrame:
    """The devices with the most configurations measured in energy per output token (the LLM question the
    overview offers): device_name, configurations, and whether any is a serving point."""
    return store.query(
        "SELECT device_name, count(DISTINCT config_key) AS configurations, "
        "bool_or(load_kind IS NOT NULL OR request_rate_per_s IS NOT NULL OR max_concurrency IS NOT NULL) AS serving "
        "FROM runs WHERE status = 'ok' AND j_per_token IS NOT NULL AND device_name IS NOT NULL "
        "GROUP BY device_name ORDER BY configurations DESC, device_name LIMIT ?", [most])


def runs_for_chart(store: Store, chosen: ChartSelection) -> pl.DataFrame:
    return store.query(
        "SELECT r.run_id, r.device_name || coalesce(' (' || e.system_name || ')', '') AS device_name, "
        "r.batch_size, r.throughput_sps, r.latency_p99_ms, r.citation "
        "FROM runs r LEFT JOIN environments e USING (env_id) "
        "WHERE r.status = 'ok' AND r.throughput_sps IS NOT NULL AND r.workload = ? "
        "AND r.mode = ? AND r.precision = ? AND r.seq_len = ? AND coalesce(r.gpu_count, 1) = 1 "
        "ORDER BY r.device_name, r.batch_size",
        [chosen.workload, chosen.mode, chosen.precision, chosen.seq_len])


# every configuration field but those the run columns below state in their own way
_SETTINGS = ", ".join(f"r.{n}" for n in NAMES if n not in OWN_COLUMNS)

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
    {_SETTINGS}, r.repeat_index, r.sweep_id, r.examples, r.duration_s,
    r.throughput_sps, r.iterations_per_s, r.throughput_derivation, r.latency_p50_ms, r.latency_p90_ms,
    r.latency_p99_ms, r.mem_peak_allocated_mb, r.mem_peak_rss_mb, r.mem_used_device_mb, r.energy_j,
    r.energy_missing_reason, r.energy_boundary, r.energy_method, r.avg_power_w, r.j_per_sample,
    r.j_per_iteration, r.idle_power_w, r.net_j_per_sample, r.sample_unit, r.tokens_per_s, r.j_per_token,
    r.decode_j_per_token, r.ttft_p90_ms, r.itl_p90_ms, r.tpot_p90_ms, r.e2e_latency_p90_ms, r.requests_per_s,
    r.j_per_request, r.goodput_requests_per_s, r.goodput_requests_per_j, r.goodput_slo, r.requests_completed,
    r.requests_failed, r.prompt_tokens_mean, r.output_tokens_mean, r.latency_missing_reason, r.flags, r.citation,
    r.notes,
    s.shown_kind AS source_kind, s.file_name AS source_file, r.source_id, e.system_name, {_NOT_STATED_LIST},
    r.config_key, r.trust_grade, r.trust_reasons, c.trust_grade AS config_grade, c.trust_reasons AS config_reasons,
    CASE WHEN r.power_limit_w IS NOT NULL
         THEN 'PL ' || regexp_replace(CAST(r.power_limit_w AS VARCHAR), '[.]0$', '') || ' W'
         WHEN r.power_mode IS NOT NULL THEN 'mode ' || r.power_mode ELSE 'default' END AS power_setting
"""


def runs_table(store: Store) -> pl.DataFrame:
    """Every run (_RUN_COLUMNS), ordered by its stated device, workload, batch size and run id. The order is
    made by polars after the read: DuckDB sorting the rows with all their columns took longer than the read
    itself (100,000 runs: about 1.5 s of 2.5 s on 2 cores), polars sorts them in a tenth of that."""
    frame = store.query(
        f"SELECT r.device_name AS _stated_device, {_RUN_COLUMNS} FROM runs r LEFT JOIN devices d USING (device_name) "
        "JOIN store_sources s USING (source_id) LEFT JOIN environments e USING (env_id) "
        "LEFT JOIN configurations c USING (config_key)")
    return frame.sort(["_stated_device", "workload", "batch_size", "run_id"], nulls_last=True).drop("_stated_device")


STAT_FIELDS = ("n", "mean", "std", "cov_pct", "ci95_low", "ci95_high")


def configurations(store: Store, where: str = "TRUE", params: list | None = None) -> pl.DataFrame:
    """One row per configuration with a run matching `where` (over runs r, sources s): what it is,
    its runs, its grade and reasons, and per figure n, mean, std, cov_pct, ci95_low, ci95_high
    (columns `<metric>_<field>`, e.g. j_per_sample_ci95_low), from the aggregates stored at ingest."""
    pivots = ", ".join(f"max(st.{f}) FILTER (WHERE st.metric = '{m}') AS {m}_{f}"
                       for m in STAT_METRICS for f in STAT_FIELDS)
    # what the configuration is (every field of joulebench.configuration), and the model and task its workload names
    config = ", ".join(f"any_value(r.{c}) AS {c}" for c in (*NAMES, *NAMED_BY_WORKLOAD))
    return store.query(
        f"WITH chosen AS (SELECT DISTINCT r.config_key FROM runs r JOIN store_sources s USING (source_id) "
        f"WHERE {where}), "
        f"about AS (SELECT r.config_key, {config}, any_value(r.energy_method) AS energy_method, "
        "any_value(r.citation) AS citation, any_value(s.shown_kind) AS source_kind, "
        "list(r.run_id ORDER BY r.repeat_index, r.started_at, r.run_id) AS run_ids, "
        "CASE WHEN any_value(r.power_limit_w) IS NOT NULL THEN 'PL ' || "
        "regexp_replace(CAST(any_value(r.power_limit_w) AS VARCHAR), '[.]0$', '') || ' W' "
        "WHEN any_value(r.power_mode) IS NOT NULL THEN 'mode ' || any_value(r.power_mode) ELSE 'default' "
        "END AS power_setting "
        "FROM runs r JOIN store_sources s USING (source_id) WHERE r.config_key IN (SELECT config_key FROM chosen) "
        "GROUP BY r.config_key), "
        f"stats AS (SELECT st.config_key, {pivots} FROM config_stats st "
        "WHERE st.config_key IN (SELECT config_key FROM chosen) GROUP BY st.config_key) "
        "SELECT a.*, d.kind AS device_kind, c.run_count, c.ok_run_count, c.trust_grade, c.trust_reasons, "
        "st.* EXCLUDE (config_key) "
        "FROM about a JOIN configurations c USING (config_key) LEFT JOIN devices d USING (device_name) "
        "LEFT JOIN stats st USING (config_key) "
        "ORDER BY a.device_name, a.workload, a.mode, a.precision, a.batch_size, a.config_key", params or [])


def run_detail(store: Store, run_id: str) -> dict | None:
    """One run with its device, source and environment, and which machine pushed it to the team store and
    when (`pushed_by`, `pushed_at`: None for a run read from a file)."""
    frame = store.query(
        "SELECT r.*, d.kind AS device_kind, d.architecture, d.memory_gb, d.tdp_w, s.shown_kind AS source_kind, "
        "s.file_name AS source_file, s.format AS source_format, s.content_sha256 AS source_sha256, "
        f"s.imported_at AS source_imported_at, {_NOT_STATED_LIST}, e.* EXCLUDE (env_id), "
        "p.machine AS pushed_by, p.pushed_at "
        "FROM runs r LEFT JOIN devices d USING (device_name) JOIN store_sources s USING (source_id) "
        "LEFT JOIN environments e USING (env_id) LEFT JOIN source_pushes p ON p.content_sha256 = s.content_sha256 "
        "WHERE r.run_id = ?", [run_id])
    return frame.row(0, named=True) if frame.height else None


def run_labels(store: Store, run_id: str) -> pl.DataFrame:
    """The run's labels that did not come from its file: label, value, origin, who, when, how."""
    with store.time_limited():
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
        "SELECT finding_id, metric, relation, value, subject_device, subject_desc, subject_run_id, baseline_device, "
        "baseline_desc, baseline_run_id, quote, citation FROM findings ORDER BY finding_id")


def devices(store: Store) -> pl.DataFrame:
    return store.query(
        "SELECT d.*, p.entered_at AS price_entered_at, p.entered_by AS price_entered_by, "
        "(SELECT count(*) FROM runs r WHERE r.device_name = d.device_name) AS runs "
        "FROM devices d LEFT JOIN price_entries p USING (device_name) ORDER BY d.kind, d.device_name")


def power_modes(store: Store) -> pl.DataFrame:
    return store.query("SELECT * FROM power_modes ORDER BY device_name, mode_id")


# --- power settings (issue 13): the runs a power-setting model is fitted on -----------------------

_SETTING_COLUMNS = f"""
    r.run_id, d.kind AS device_kind, {", ".join(f"r.{n}" for n in NAMES)},
    r.profile, r.examples, r.duration_s, r.throughput_sps, r.tokens_per_s,
    r.energy_j, r.avg_power_w, r.j_per_sample, r.energy_method, r.source_id, s.file_name AS source_file,
    s.shown_kind AS source_kind,
    r.started_at, m.cpu_cores, m.cpu_max_mhz, m.gpu_max_mhz, m.memory_max_mhz, m.mode_name
"""


def power_setting_runs(store: Store, device: str, workload: str | None = None, mode: str | None = None,
                       precision: str | None = None, batch_size: int | None = None,
                       tag: str | None = None) -> pl.DataFrame:
    """Finished runs of `device` at a known power setting (limit or mode in effect), with the power
    mode's features from the power-mode table. Runs whose requested setting was not applied (no
    privilege, or a dry run) are left out: their setting is not the one asked for."""
    where = ["r.status = 'ok'", "r.mode <> 'idle'", "r.device_name = ?",
             "(r.power_limit_w IS NOT NULL OR r.power_mode IS NOT NULL)",
             "NOT list_contains(coalesce(r.flags, []::VARCHAR[]), 'power_setting_not_applied')"]
    params: list[object] = [device]
    for column, value in (("workload", workload), ("mode", mode), ("precision", precision),
                          ("batch_size", batch_size), ("tag", tag)):
        if value is not None:
            where.append(f"r.{column} = ?")
            params.append(value)
    return store.query(
        f"SELECT {_SETTING_COLUMNS} FROM runs r JOIN devices d USING (device_name) "
        "JOIN store_sources s USING (source_id) "
        "LEFT JOIN power_modes m ON m.device_name = r.device_name "
        "AND m.mode_id = split_part(trim(r.power_mode), ' ', 1) "
        f"WHERE {' AND '.join(where)} ORDER BY r.workload, r.mode, r.precision, r.batch_size, "
        "r.power_limit_w, r.power_mode, r.started_at", params)


def power_setting_choices(store: Store) -> pl.DataFrame:
    """Device and workload pairs with runs at a known power setting: how many settings and runs, and
    how many settings have time and power measured (`profiled`: what a profile can be built from),
    the pairs with the most profiled settings first."""
    return store.query(
        "SELECT r.device_name, d.kind AS device_kind, r.workload, "
        "count(DISTINCT coalesce(CAST(r.power_limit_w AS VARCHAR), r.power_mode)) AS settings, count(*) AS runs, "
        "count(DISTINCT coalesce(CAST(r.power_limit_w AS VARCHAR), r.power_mode)) FILTER ("
        "WHERE (r.avg_power_w > 0 OR (r.energy_j > 0 AND r.duration_s > 0)) "
        "AND (r.throughput_sps > 0 OR r.duration_s > 0)) AS profiled "
        "FROM runs r JOIN devices d USING (device_name) "
        "WHERE r.status = 'ok' AND r.mode <> 'idle' AND (r.power_limit_w IS NOT NULL OR r.power_mode IS NOT NULL) "
        "AND r.device_name IS NOT NULL AND r.workload IS NOT NULL "
        "AND NOT list_contains(coalesce(r.flags, []::VARCHAR[]), 'power_setting_not_applied') "
        "GROUP BY ALL ORDER BY profiled DESC, settings DESC, runs DESC, r.device_name, r.workload")


def device_power_modes(store: Store, device: str) -> pl.DataFrame:
    """A Jetson's power modes from the power-mode table (ids, names, CPU cores and clocks)."""
    return store.query(
        "SELECT mode_id, mode_name, cpu_cores, cpu_max_mhz, gpu_max_mhz, memory_max_mhz, power_budget_w "
        "FROM power_modes WHERE device_name = ? ORDER BY mode_id", [device])


def device_catalog_row(store: Store, device: str) -> dict | None:
    """The catalog row of one device (price, TDP, kind), or None."""
    frame = store.query("SELECT * FROM devices WHERE device_name = ?", [device])
    return frame.row(0, named=True) if frame.height else None


def device_edits(store: Store, limit: int = 200) -> pl.DataFrame:
    """The catalog's edit history, newest first."""
    return store.query("SELECT edited_at, device_name, column_name, old_value, new_value, edited_by FROM device_edits "
                       "ORDER BY edited_at DESC, edit_id DESC LIMIT ?", [limit])


def exchange_rates(store: Store) -> pl.DataFrame:
    return store.query("SELECT from_currency, to_currency, rate, rate_date, source, updated_at FROM exchange_rates "
                       "ORDER BY from_currency, to_currency")
