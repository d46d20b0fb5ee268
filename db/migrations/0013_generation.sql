-- JouleBench results store, schema version 13 (issue 19): generation workloads measured here.
-- The output length per request (the prompt length is seq_len), the arrival rate of a serving run,
-- the output tokens of the window,
-- decode throughput, and the energy split into prefill and decode (with the reason when it is missing).

ALTER TABLE runs ADD COLUMN max_new_tokens INTEGER;
ALTER TABLE runs ADD COLUMN request_rate_per_s DOUBLE;
ALTER TABLE runs ADD COLUMN output_tokens BIGINT;
ALTER TABLE runs ADD COLUMN decode_tokens_per_s DOUBLE;
ALTER TABLE runs ADD COLUMN decode_j_per_token DOUBLE;
ALTER TABLE runs ADD COLUMN prefill_j_per_request DOUBLE;
ALTER TABLE runs ADD COLUMN energy_split_missing_reason VARCHAR;
