-- JouleBench results store, schema version 19 (issue 28 item 5): one device, one name.
-- Every device string a file stated that is not a catalog name, and the catalog entry its runs are stored
-- under (ingest.device_names decides: rule = the same part by family, memory and form factor; added = no
-- catalog entry was that part, so it was added as its own entry, with no specs but the file's; ambiguous = it
-- could be several entries, stored under the string as it came until a person chooses; user = a person
-- chose, on the Devices page or with `joulebench device-name`). Later imports of the same string reuse it.

CREATE TABLE device_names (
    source_name  VARCHAR PRIMARY KEY,
    device_name  VARCHAR NOT NULL,
    decided_by   VARCHAR NOT NULL CHECK (decided_by IN ('rule', 'added', 'ambiguous', 'user')),
    candidates   VARCHAR[],
    reason       VARCHAR,
    decided_at   TIMESTAMPTZ NOT NULL
);

-- The string each run's file stated, for the runs stored under another name (or awaiting a choice): a
-- changed mapping re-points exactly these runs.
CREATE TABLE run_device_names (
    run_id       VARCHAR PRIMARY KEY,
    source_name  VARCHAR NOT NULL
);
