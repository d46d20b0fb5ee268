-- JouleBench results store, schema version 2: environment fields the runner records.
-- Clocks are the ceilings in effect (application clocks on GPUs, the power mode's cap on Jetsons).

ALTER TABLE environments ADD COLUMN torch_threads BIGINT;
ALTER TABLE environments ADD COLUMN cpu_max_mhz DOUBLE;
ALTER TABLE environments ADD COLUMN gpu_max_mhz DOUBLE;
ALTER TABLE environments ADD COLUMN memory_max_mhz DOUBLE;
ALTER TABLE environments ADD COLUMN compute_capability VARCHAR;
