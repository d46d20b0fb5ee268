-- JouleBench results store, schema version 28 (issue 37): one definition of a measurement point
-- (joulebench.configuration) and of the figures aggregated per configuration (joulebench.metrics.AGGREGATED).
--   * the serving engine's version separates configurations where a run states it (db.grading.CONFIG_KEY_EXTRAS);
--   * a serving point's energy per request, goodput (requests/s and per joule), requests/s and end-to-end latency
--     p90 get an interval and a grade per configuration, like every other aggregated figure;
--   * a serving point is graded on the requests its figures rest on and those that failed (energy.grades, check
--     "requests").
-- The serving runs lose their grade here, with the aggregates of the configurations they belonged to; the next
-- read-write open grades every ungraded run again (db.store), which computes the new keys and aggregates.

UPDATE runs SET trust_grade = NULL
WHERE engine_version IS NOT NULL OR j_per_request IS NOT NULL OR goodput_requests_per_j IS NOT NULL
   OR goodput_requests_per_s IS NOT NULL OR requests_per_s IS NOT NULL OR e2e_latency_p90_ms IS NOT NULL
   OR requests_completed IS NOT NULL OR requests_failed IS NOT NULL;

DELETE FROM config_stats WHERE config_key IN (SELECT config_key FROM runs WHERE trust_grade IS NULL);
DELETE FROM configurations WHERE config_key IN (SELECT config_key FROM runs WHERE trust_grade IS NULL);
