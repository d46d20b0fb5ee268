"""One measurement, stored once: a run a file brings that another source already holds (the ML.ENERGY
leaderboard file uploaded into a store seeded with its transcribed reference rows, a result file passed
around a team and imported under another name) is the same device, the same settings and the same
figures. Stored twice it would count as two configurations, or as a repeat with no spread, which it is
not; so it is recognised here and not added again (`db.writes` counts it as a duplicate and says where
it is stored).

Same settings: every field of joulebench.configuration's SAME_MEASUREMENT view that every key hashes equal
(missing equals missing), and each field hashed only where stated equal where both copies state it (the
leaderboard's file names no engine; its site, transcribed as a reference table, says vLLM). Same figures:
every figure of FIGURES that both runs state agrees to 6 significant figures, and they share at least two, one
of them a throughput. A run measured here (`origin_kind` local) is never matched: a new local run is a new
measurement even when it reproduces an old one exactly; nor is a JouleBench result file checked (its runs
carry the runner's own ids, which `db.writes` already matches).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from typing import Any

import duckdb

from joulebench.configuration import KEY_ALWAYS, SAME_MEASUREMENT

_ALWAYS = tuple(f for f in SAME_MEASUREMENT.fields if f in KEY_ALWAYS)
_WHERE_BOTH_STATE = tuple(f for f in SAME_MEASUREMENT.fields if f not in KEY_ALWAYS)

FIGURES = ("throughput_sps", "tokens_per_s", "j_per_token", "j_per_sample", "energy_j", "avg_power_w",
           "duration_s", "latency_p50_ms", "latency_p99_ms", "itl_p90_ms", "tpot_p90_ms", "ttft_p90_ms")
THROUGHPUTS = ("throughput_sps", "tokens_per_s")
DIGITS = 6


def _rounded(value: Any) -> float | None:
    if value is None:
        return None
    x = float(value)
    if not math.isfinite(x) or x == 0:
        return x
    return round(x, DIGITS - 1 - math.floor(math.log10(abs(x))))


def same_figures(a: dict[str, Any], b: dict[str, Any]) -> bool:
    shared = [f for f in FIGURES if a.get(f) is not None and b.get(f) is not None]
    return (len(shared) >= 2 and any(f in THROUGHPUTS for f in shared)
            and all(_rounded(a[f]) == _rounded(b[f]) for f in shared))


def _same_settings(a: dict[str, Any], b: dict[str, Any]) -> bool:
    """a and b agree on every stated-only field both state (their key fields already matched)."""
    return all(a.get(f) is None or b.get(f) is None or a[f] == b[f] for f in _WHERE_BOTH_STATE)


def _flat(run: dict[str, Any]) -> dict[str, Any]:
    """A result document's run as the runs table's columns these checks read."""
    device = run.get("device") or {}
    return {"device_name": device.get("name"), **(run.get("config") or {}), **(run.get("metrics") or {})}


def already_stored(con: duckdb.DuckDBPyConnection, runs: Sequence[dict[str, Any]],
                   content_sha256: str) -> dict[str, str]:
    """run_id -> where the same measurement is stored ('ML.ENERGY leaderboard v3 (reference)'), for the
    document runs (result-file shape) that another source already holds."""
    flats = {r["run_id"]: _flat(r) for r in runs
             if (r.get("provenance") or {}).get("source_kind") != "local" and (r.get("device") or {}).get("name")}
    if not flats:
        return {}
    devices = sorted({str(f["device_name"]) for f in flats.values()})
    workloads = sorted({str(f["workload"]) for f in flats.values() if f.get("workload") is not None})
    columns = ", ".join(f"r.{c}" for c in (*SAME_MEASUREMENT.fields, *FIGURES))
    cursor = con.execute(
        f"SELECT {columns}, coalesce(s.file_name, r.origin_file_name) AS stored_in, r.origin_kind "
        "FROM runs r LEFT JOIN sources s USING (source_id) "
        "WHERE r.device_name = ANY(?) AND (r.workload = ANY(?) OR r.workload IS NULL) "
        "AND r.origin_kind <> 'local' AND coalesce(r.origin_sha256, '') <> ?",
        [devices, workloads, content_sha256])
    names = [d[0] for d in cursor.description]
    stored: dict[tuple, list[dict[str, Any]]] = {}
    for values in cursor.fetchall():
        row = dict(zip(names, values, strict=True))
        stored.setdefault(tuple(row[c] for c in _ALWAYS), []).append(row)
    found: dict[str, str] = {}
    for run_id, flat in flats.items():
        for row in stored.get(tuple(flat.get(c) for c in _ALWAYS), []):
            if _same_settings(flat, row) and same_figures(flat, row):
                found[run_id] = f"{row['stored_in']} ({row['origin_kind']})"
                break
    return found
