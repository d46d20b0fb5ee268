-- JouleBench results store, schema version 30 (issue 38): the serving client's own lag per point
-- (runner.serve_bench.lag). Send lag: a request's actual minus its scheduled send time over the steady state's
-- scheduled requests (p50, p99, max; NULL for a closed loop, which has no schedule). CPU: the share of the load's
-- wall time the client's event loop thread waited for a CPU while runnable, and the share it ran. A point whose
-- send lag p99 exceeds 5 % of its TTFT p50 or 10 ms is flagged client_bound (energy.grades grades it C).

ALTER TABLE runs ADD COLUMN client_send_lag_p50_ms DOUBLE;
ALTER TABLE runs ADD COLUMN client_send_lag_p99_ms DOUBLE;
ALTER TABLE runs ADD COLUMN client_send_lag_max_ms DOUBLE;
ALTER TABLE runs ADD COLUMN client_cpu_wait_pct DOUBLE;
ALTER TABLE runs ADD COLUMN client_cpu_busy_pct DOUBLE;
