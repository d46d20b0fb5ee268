-- JouleBench results store, schema version 23 (issue 31): each run's drift, computed once. A run's power samples
-- and step times never change once stored, so the drift of its power trace and of its step times
-- (energy.steady.drift_pct, computed in SQL by db.grading.drift_frame) is stored when the run is first graded,
-- and a regrade of every run (a migration, a changed rule) reads it here instead of scanning every sample again
-- (100,000 runs / 10 M samples: about half of a regrade). A row says its run's drift was computed: a NULL
-- figure in it means the run has too few samples for one, not that it is unknown. A run without a row has its
-- drift computed at its next grading.

CREATE TABLE run_drift (run_id VARCHAR NOT NULL, power_drift_pct DOUBLE, step_time_drift_pct DOUBLE);
