-- JouleBench results store, schema version 7: units stored honestly (issue 11).
-- sample_unit says what one sample of throughput_sps / examples / j_per_sample is (image,
-- sequence, request, video, frame); token metrics for LLM runs (tokens per second, joules per
-- token, time to first token, time per output token); and a throughput whose unit the file does
-- not state, kept apart from every per-second column whose unit is known.

ALTER TABLE runs ADD COLUMN sample_unit VARCHAR;
ALTER TABLE runs ADD COLUMN tokens_per_s DOUBLE;
ALTER TABLE runs ADD COLUMN prompt_tokens_per_s DOUBLE;
ALTER TABLE runs ADD COLUMN j_per_token DOUBLE;
ALTER TABLE runs ADD COLUMN ttft_avg_ms DOUBLE;
ALTER TABLE runs ADD COLUMN ttft_p50_ms DOUBLE;
ALTER TABLE runs ADD COLUMN ttft_p99_ms DOUBLE;
ALTER TABLE runs ADD COLUMN tpot_avg_ms DOUBLE;
ALTER TABLE runs ADD COLUMN tpot_p50_ms DOUBLE;
ALTER TABLE runs ADD COLUMN tpot_p99_ms DOUBLE;
ALTER TABLE runs ADD COLUMN throughput_unit_not_stated DOUBLE;
