-- JouleBench results store, schema version 12 (issue 18): the p90 and p95 of time to first token
-- and of time per output token (inter-token latency). ML.ENERGY v3 and vLLM state them; they were
-- stored as request latency percentiles before, which they are not.

ALTER TABLE runs ADD COLUMN ttft_p90_ms DOUBLE;
ALTER TABLE runs ADD COLUMN ttft_p95_ms DOUBLE;
ALTER TABLE runs ADD COLUMN tpot_p90_ms DOUBLE;
ALTER TABLE runs ADD COLUMN tpot_p95_ms DOUBLE;
