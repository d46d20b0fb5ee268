-- JouleBench results store, schema version 26 (issue 31): the derived tables without a primary key. configurations
-- and config_stats are computed from the runs (db.grading) and written by it alone, one row per configuration
-- and per configuration and figure by construction (a group-by), so their keys are never checked against a
-- duplicate; a team store's copies (DuckLake) have no key either. DuckDB keeps a primary key as an index that
-- every write rebuilds and every commit serialises: at 86,674 configurations and 673,231 figures, 1.0 s of the
-- 1.5 s that writing them took. The columns, NOT NULL and CHECK rules stay as they were.

CREATE TABLE _configurations_new (
    config_key     VARCHAR NOT NULL,
    run_count      BIGINT NOT NULL,
    ok_run_count   BIGINT NOT NULL,
    trust_grade    VARCHAR NOT NULL CHECK (trust_grade IN ('A', 'B', 'C', 'D')),
    trust_reasons  VARCHAR[],
    graded_at      TIMESTAMPTZ NOT NULL
);
INSERT INTO _configurations_new BY NAME SELECT * FROM configurations;
DROP TABLE configurations;
ALTER TABLE _configurations_new RENAME TO configurations;

CREATE TABLE _config_stats_new (
    config_key  VARCHAR NOT NULL,
    metric      VARCHAR NOT NULL,
    n           BIGINT NOT NULL CHECK (n >= 1),
    mean        DOUBLE NOT NULL,
    std         DOUBLE,
    cov_pct     DOUBLE,
    ci95_low    DOUBLE,
    ci95_high   DOUBLE
);
INSERT INTO _config_stats_new BY NAME SELECT * FROM config_stats;
DROP TABLE config_stats;
ALTER TABLE _config_stats_new RENAME TO config_stats;
