-- JouleBench results store, schema version 20 (issue 26 items 3 and 6): a serving point's goodput per joule
-- (requests that met the SLO per joule of the steady state's energy), and why a point's latency percentiles
-- are withheld (an overloaded point, too few requests in the steady state), kept where they would be.

ALTER TABLE runs ADD COLUMN goodput_requests_per_j DOUBLE;
ALTER TABLE runs ADD COLUMN latency_missing_reason VARCHAR;
