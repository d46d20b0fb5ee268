-- JouleBench results store, schema version 18 (issue 27): how a model's weights are quantised
-- (q4_K_M, int4-awq, fp8, mxfp4, nf4...) is not a precision: runs.precision keeps its CHECK (fp32, tf32,
-- fp16, bf16, fp16-weights, the compute dtype) and the quantisation a file names is its own column. It
-- separates configurations where a run states it (db.grading.CONFIG_KEY_EXTRAS): no stored run states it
-- yet, so no key changes here.

ALTER TABLE runs ADD COLUMN quantization VARCHAR;
