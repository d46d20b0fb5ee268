-- JouleBench results store, schema version 26 (issue 31): config_stats without a primary key. DuckDB keeps a
-- primary key as an index that every write rebuilds and every commit serialises: at 673,231 figures (86,674
-- configurations) the (config_key, metric) index took 1.0 s of the 1.5 s that writing the derived tables took.
-- Only db.grading writes config_stats, a row per configuration and figure by construction (a group-by), and always
-- in the transaction that writes the same configurations' rows in `configurations`, which keeps its primary key:
-- two transactions that add the same configuration at once (two imports in one process) still conflict there, so
-- neither table can hold a configuration twice. A team store's copies (DuckLake) have no key. The columns, NOT NULL
-- and CHECK rules stay as they were.

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
