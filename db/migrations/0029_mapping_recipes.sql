-- JouleBench results store, schema version 29 (issue 39): a person's mapping of a table no reader knows, saved as a
-- named recipe keyed by the table's shape (importers.mapping: its kind and normalised column names, hashed), so
-- the next file of that shape is read by it. recipe_json is the recipe as `joulebench mapping export` writes it
-- (checked by importers.mapping.parse whenever it is read back). One recipe per shape and per name; a team store
-- carries them too (db.push: a machine's recipes the lake lacks, or newer than the lake's).

CREATE TABLE mapping_recipes (
    shape_key   VARCHAR PRIMARY KEY,
    name        VARCHAR NOT NULL UNIQUE,
    shape_kind  VARCHAR NOT NULL CHECK (shape_kind IN ('wide', 'long', 'records')),
    recipe_json VARCHAR NOT NULL,
    saved_at    TIMESTAMPTZ NOT NULL,
    saved_by    VARCHAR
);
