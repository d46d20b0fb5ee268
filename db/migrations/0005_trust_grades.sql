-- JouleBench results store, schema version 5: energy-grade windows, repeats and trust grades (issue 10).
-- New result-file metrics: the sensor's observed update period, which reading the power trace holds,
-- the warmup (time, whether it reached steady state) and the window's random start offset.
-- Trust grades (A-D, docs/trust-grades.md) with their reasons, computed at ingest for every run
-- (energy/grades.py), and per configuration: the aggregate of its repeats (energy/stats.py: n, mean,
-- sd, CoV, 95 % interval by Student's t) with the aggregate's grade. `config_key` groups a
-- configuration's repeats (db/grading.py says which fields make a configuration).

ALTER TABLE runs ADD COLUMN sensor_update_period_s DOUBLE;
ALTER TABLE runs ADD COLUMN power_trace_source VARCHAR;
ALTER TABLE runs ADD COLUMN warmup_s DOUBLE;
ALTER TABLE runs ADD COLUMN warmup_steady BOOLEAN;
ALTER TABLE runs ADD COLUMN start_offset_s DOUBLE;
ALTER TABLE runs ADD COLUMN config_key VARCHAR;
ALTER TABLE runs ADD COLUMN trust_grade VARCHAR;  -- A, B, C or D (DuckDB cannot add a CHECK here)
ALTER TABLE runs ADD COLUMN trust_reasons VARCHAR[];  -- '[C] window: ...', one per check

CREATE TABLE configurations (
    config_key     VARCHAR PRIMARY KEY,
    run_count      BIGINT NOT NULL,           -- every run of the configuration, whatever its outcome
    ok_run_count   BIGINT NOT NULL,
    trust_grade    VARCHAR NOT NULL CHECK (trust_grade IN ('A', 'B', 'C', 'D')),
    trust_reasons  VARCHAR[],
    graded_at      TIMESTAMPTZ NOT NULL
);

-- One row per configuration and metric that its ok runs measured (missing values are not counted).
CREATE TABLE config_stats (
    config_key  VARCHAR NOT NULL,
    metric      VARCHAR NOT NULL,             -- a runs column, e.g. throughput_sps, j_per_sample
    n           BIGINT NOT NULL CHECK (n >= 1),
    mean        DOUBLE NOT NULL,
    std         DOUBLE,                       -- sample standard deviation; null for n = 1
    cov_pct     DOUBLE,                       -- std / mean x 100
    ci95_low    DOUBLE,                       -- mean -+ t(0.975, n - 1) x std / sqrt(n); null for n = 1
    ci95_high   DOUBLE,
    PRIMARY KEY (config_key, metric)
);
