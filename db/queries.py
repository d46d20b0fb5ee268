"""Read queries the explorer uses; SQL stays in db/."""

from __future__ import annotations

import polars as pl

from db.store import Store

# The Overview's headline comparison: NVIDIA's BERT-Large SQuAD inference tables, seq 384, fp16.
HEADLINE = {"workload": "bert-large-squad", "mode": "infer", "precision": "fp16", "seq_len": 384}


def overview_counts(store: Store) -> pl.DataFrame:
    """Runs per workload and mode, with the devices that ran them."""
    return store.query(
        "SELECT workload, mode, count(*) AS runs, count(DISTINCT device_name) AS devices "
        "FROM runs GROUP BY 1, 2 ORDER BY runs DESC, workload, mode")


def runs_for_chart(store: Store, *, workload: str, mode: str, precision: str, seq_len: int) -> pl.DataFrame:
    return store.query(
        "SELECT r.run_id, r.device_name, r.batch_size, r.throughput_sps, r.latency_p99_ms, r.citation "
        "FROM runs r WHERE r.status = 'ok' AND r.throughput_sps IS NOT NULL AND r.workload = ? "
        "AND r.mode = ? AND r.precision = ? AND r.seq_len = ? AND coalesce(r.gpu_count, 1) = 1 "
        "ORDER BY r.device_name, r.batch_size",
        [workload, mode, precision, seq_len])
