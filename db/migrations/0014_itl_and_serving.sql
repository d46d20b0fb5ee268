-- JouleBench results store, schema version 14 (issues 26 and 29): token latencies as vLLM's `bench serve`
-- defines them (joulebench/metrics.py), and the figures of a serving benchmark.
--   * ITL: every gap between consecutive output tokens, pooled over the requests; TPOT from now on
--     ONLY per request, (end-to-end - TTFT) / (output tokens - 1); end-to-end latency per request.
--   * serving: requests/s, J/request, requests completed and failed, goodput and its SLO, the actual
--     mean prompt and output lengths; and how the load was offered (config).

ALTER TABLE runs ADD COLUMN itl_avg_ms DOUBLE;
ALTER TABLE runs ADD COLUMN itl_p50_ms DOUBLE;
ALTER TABLE runs ADD COLUMN itl_p90_ms DOUBLE;
ALTER TABLE runs ADD COLUMN itl_p95_ms DOUBLE;
ALTER TABLE runs ADD COLUMN itl_p99_ms DOUBLE;
ALTER TABLE runs ADD COLUMN e2e_latency_avg_ms DOUBLE;
ALTER TABLE runs ADD COLUMN e2e_latency_p50_ms DOUBLE;
ALTER TABLE runs ADD COLUMN e2e_latency_p90_ms DOUBLE;
ALTER TABLE runs ADD COLUMN e2e_latency_p95_ms DOUBLE;
ALTER TABLE runs ADD COLUMN e2e_latency_p99_ms DOUBLE;
ALTER TABLE runs ADD COLUMN requests_per_s DOUBLE;
ALTER TABLE runs ADD COLUMN j_per_request DOUBLE;
ALTER TABLE runs ADD COLUMN requests_completed BIGINT;
ALTER TABLE runs ADD COLUMN requests_failed BIGINT;
ALTER TABLE runs ADD COLUMN goodput_requests_per_s DOUBLE;
ALTER TABLE runs ADD COLUMN goodput_slo VARCHAR;
ALTER TABLE runs ADD COLUMN prompt_tokens_mean DOUBLE;
ALTER TABLE runs ADD COLUMN output_tokens_mean DOUBLE;

ALTER TABLE runs ADD COLUMN load_kind VARCHAR;
ALTER TABLE runs ADD COLUMN max_concurrency BIGINT;
ALTER TABLE runs ADD COLUMN arrival VARCHAR;
ALTER TABLE runs ADD COLUMN burstiness DOUBLE;
ALTER TABLE runs ADD COLUMN seed BIGINT;
ALTER TABLE runs ADD COLUMN engine VARCHAR;
ALTER TABLE runs ADD COLUMN engine_version VARCHAR;
ALTER TABLE runs ADD COLUMN prompt_tokens_requested DOUBLE;
ALTER TABLE runs ADD COLUMN output_tokens_requested DOUBLE;
ALTER TABLE runs ADD COLUMN length_distribution VARCHAR;

-- Every stored inter-token figure moves to the column it really is. Pooled gaps between tokens (ITL),
-- stored as tpot_* before this version:
--   * JouleBench's own generation and serving runs (origin kind local, or written by joulebench):
--     the time between consecutive tokens of each batch;
--   * ML.ENERGY v3 (median/p90/p95/p99_itl_ms: the client's inter-token latencies over every token);
--   * optimum-benchmark's per_token latency (the gap between consecutive generated tokens, every token).
-- vLLM bench serve's *_tpot_ms, MLPerf's "time to output token" and ML.ENERGY v2's "Avg TPOT" are per
-- request: they stay TPOT. The right-hand sides read the row as it was, so tpot_* is copied, then nulled.
UPDATE runs SET
    itl_avg_ms = tpot_avg_ms, itl_p50_ms = tpot_p50_ms, itl_p90_ms = tpot_p90_ms, itl_p95_ms = tpot_p95_ms,
    itl_p99_ms = tpot_p99_ms,
    tpot_avg_ms = NULL, tpot_p50_ms = NULL, tpot_p90_ms = NULL, tpot_p95_ms = NULL, tpot_p99_ms = NULL
WHERE (origin_kind = 'local' OR origin_tool = 'joulebench'
       OR (origin_format = 'mlenergy-leaderboard' AND origin_tool_version = 'v3')
       OR origin_format = 'optimum-benchmark')
  AND (tpot_avg_ms IS NOT NULL OR tpot_p50_ms IS NOT NULL OR tpot_p90_ms IS NOT NULL OR tpot_p95_ms IS NOT NULL
       OR tpot_p99_ms IS NOT NULL);

-- The aggregates of the configurations those runs belong to held the moved figure as TPOT: their rows
-- go, and the next read-write open makes them again from the runs (db.grading.derived_damage).
DELETE FROM config_stats WHERE config_key IN (SELECT config_key FROM runs WHERE itl_avg_ms IS NOT NULL
    OR itl_p50_ms IS NOT NULL OR itl_p90_ms IS NOT NULL OR itl_p95_ms IS NOT NULL OR itl_p99_ms IS NOT NULL);
DELETE FROM configurations WHERE config_key IN (SELECT config_key FROM runs WHERE itl_avg_ms IS NOT NULL
    OR itl_p50_ms IS NOT NULL OR itl_p90_ms IS NOT NULL OR itl_p95_ms IS NOT NULL OR itl_p99_ms IS NOT NULL);
