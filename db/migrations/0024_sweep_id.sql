-- JouleBench results store, schema version 24 (issue 26 item 3): the sweep a run is a point of. serve-bench
-- gives every run of one invocation the same id (a rate or concurrency sweep, `--rate sweep`'s probes and rates);
-- an importer sets it where the file states a sweep. A sweep's points are linked by it, not by their shared
-- source, so two sweeps of one device and model in one source stay two curves (explorer.serving_charts).
-- NULL: the run was not stated to be part of a sweep.

ALTER TABLE runs ADD COLUMN sweep_id VARCHAR;
