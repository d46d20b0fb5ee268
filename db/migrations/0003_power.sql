-- JouleBench results store, schema version 3: power and energy fields the runner records (issue 4).
-- Requested vs in-effect power settings, both energy figures where a counter and polled power exist,
-- the sampling period, the idle share of the energy, and clocks / throttle reasons seen in the window.

ALTER TABLE runs ADD COLUMN power_limit_requested_w DOUBLE;
ALTER TABLE runs ADD COLUMN power_mode_requested VARCHAR;
ALTER TABLE runs ADD COLUMN energy_counter_j DOUBLE;
ALTER TABLE runs ADD COLUMN energy_sampled_j DOUBLE;
ALTER TABLE runs ADD COLUMN energy_disagreement_pct DOUBLE;
ALTER TABLE runs ADD COLUMN sample_period_s DOUBLE;
ALTER TABLE runs ADD COLUMN idle_energy_j DOUBLE;
ALTER TABLE runs ADD COLUMN gpu_clock_avg_mhz DOUBLE;
ALTER TABLE runs ADD COLUMN gpu_clock_min_mhz DOUBLE;
ALTER TABLE runs ADD COLUMN memory_clock_avg_mhz DOUBLE;
ALTER TABLE runs ADD COLUMN throttle_reasons VARCHAR;
