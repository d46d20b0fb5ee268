"""Synthetic bulk data for scale benchmarks (never used by the product itself).

Fills a database with N runs and M power samples whose columns and value ranges look like real
sweeps (devices from the catalog, real workload names, batch sizes, precisions, power limits),
inserted in bulk so a 10-million-sample database builds in seconds.
"""

from __future__ import annotations

from datetime import UTC, datetime

import numpy as np
import polars as pl

from db.store import Store

WORKLOADS = ["bert-large-ner", "bert-base-ner", "bert-large-squad", "bert-base-squad", "distilbert-cls",
             "gpt2", "resnet50", "vit-base"]
PRECISIONS = ["fp32", "tf32", "fp16", "bf16"]
BATCHES = [1, 2, 4, 8, 16, 32, 64]
POWER_LIMITS = [np.nan, 100.0, 125.0, 150.0, 170.0, 250.0, 300.0]


def fill(store: Store, runs: int, samples_per_run: int, seed: int = 0) -> None:
    rng = np.random.default_rng(seed)
    devices = store.query("SELECT device_name, kind, coalesce(tdp_w, 100) AS tdp_w FROM devices")
    now = datetime.now(UTC)
    source_id = store.con.execute(
        "INSERT INTO sources (kind, file_name, format, tool, content_sha256, imported_at, run_count, "
        "duplicate_run_count, finding_count) VALUES ('local', 'synthetic-scale.json', 'synthetic', "
        "'db.synthetic', ?, ?, ?, 0, 0) RETURNING source_id",
        [f"synthetic-{seed}-{runs}-{samples_per_run}", now, runs]).fetchall()[0][0]
    dev_idx = rng.integers(0, devices.height, runs)
    tdp = devices["tdp_w"].to_numpy()[dev_idx]
    batch = np.array(BATCHES)[rng.integers(0, len(BATCHES), runs)]
    throughput = rng.uniform(5, 2000, runs) * np.sqrt(batch)
    power = tdp * rng.uniform(0.4, 1.0, runs)
    duration = rng.uniform(5, 120, runs)
    examples = (throughput * duration).astype(np.int64)
    energy = power * duration
    frame = pl.DataFrame({
        "run_id": [f"syn-{seed}-{i:07d}" for i in range(runs)],
        "source_id": np.full(runs, source_id, dtype=np.int32),
        "device_name": devices["device_name"].to_numpy()[dev_idx],
        "status": np.where(rng.random(runs) < 0.03, "oom", "ok"),
        "workload": np.array(WORKLOADS)[rng.integers(0, len(WORKLOADS), runs)],
        "mode": np.where(rng.random(runs) < 0.5, "train", "infer"),
        "precision": np.array(PRECISIONS)[rng.integers(0, len(PRECISIONS), runs)],
        "batch_size": batch, "grad_accum_steps": np.ones(runs, dtype=np.int64),
        "seq_len": np.array([128, 384, 512])[rng.integers(0, 3, runs)],
        "power_limit_w": np.array(POWER_LIMITS, dtype=float)[rng.integers(0, len(POWER_LIMITS), runs)],
        "repeat_index": rng.integers(0, 3, runs), "examples": examples, "duration_s": duration,
        "throughput_sps": throughput, "latency_p50_ms": 1000 * batch / throughput,
        "latency_p99_ms": 1300 * batch / throughput, "energy_j": energy, "energy_boundary": "gpu_board",
        "energy_method": "counter", "avg_power_w": power, "j_per_sample": energy / examples,
        "idle_power_w": tdp * 0.1, "net_j_per_sample": (energy - tdp * 0.1 * duration) / examples,
        "origin_kind": "local",
    })
    frame = frame.with_columns(pl.col("power_limit_w").fill_nan(None))
    store.con.register("_syn_runs", frame.to_arrow())
    store.con.execute("INSERT INTO runs BY NAME SELECT * FROM _syn_runs")
    store.con.unregister("_syn_runs")
    ids = pl.DataFrame({"run_id": frame["run_id"], "power_w": power, "dt": duration / samples_per_run})
    store.con.register("_syn_ids", ids.to_arrow())
    store.con.execute(
        "INSERT INTO power_traces SELECT run_id, 'gpu0', 'gpu_board', 'sampled', ? FROM _syn_ids", [samples_per_run])
    store.con.execute(
        "INSERT INTO power_samples SELECT i.run_id, 'gpu0', s.k * i.dt, i.power_w * (0.9 + 0.2 * random()) "
        "FROM _syn_ids i, range(?) s(k)", [samples_per_run])
    store.con.unregister("_syn_ids")
