-- JouleBench results store, schema version 6: labels a file does not state, and corrected figures.
--
-- A run whose file does not say which device ran it, or whether it trained or inferred, is
-- imported with device_name / mode NULL ("not stated") instead of being refused. precision and
-- batch_size were nullable already. A person fills what is missing later, for a whole source at
-- once (`joulebench label`, the Upload page's review, Run detail); run_labels records each label
-- that did not come from the file's content: who supplied it, when, and how.
ALTER TABLE runs ALTER COLUMN device_name DROP NOT NULL;
ALTER TABLE runs ALTER COLUMN mode DROP NOT NULL;

-- A figure stored corrected keeps the value the source printed (reference data: the V100 SQuAD
-- weak-scaling columns, printed under each other's header). NULL where the two agree.
-- (DuckDB cannot add a column with a CHECK; the result-file schema requires it to be positive.)
ALTER TABLE runs ADD COLUMN weak_scaling_as_printed DOUBLE;

-- One row per run and label not stated by the file's content. origin 'user': given by a person
-- (import flags such as --device, `joulebench label`, the app's forms); 'folder_name': read from
-- the name of the folder the file sat in. A later label replaces a user-supplied one; a value
-- the file states has no row here and is never overwritten.
CREATE TABLE run_labels (
    run_id       VARCHAR NOT NULL,
    label        VARCHAR NOT NULL CHECK (label IN ('device', 'mode', 'precision', 'batch_size', 'energy_boundary')),
    value        VARCHAR NOT NULL,
    origin       VARCHAR NOT NULL CHECK (origin IN ('user', 'folder_name')),
    supplied_by  VARCHAR NOT NULL,
    supplied_at  TIMESTAMPTZ NOT NULL,
    via          VARCHAR NOT NULL CHECK (via IN ('import', 'cli', 'upload_page', 'run_detail_page')),
    PRIMARY KEY (run_id, label)
);
