-- JouleBench results store, schema version 4: what the import service did on its own.
-- Files ingested from the inbox, files rejected from it (with the reason), and result files of
-- sweeps that were killed before they could import them (recovered at the next open).

CREATE SEQUENCE intake_event_id_seq START 1;

CREATE TABLE intake_log (
    event_id    INTEGER PRIMARY KEY DEFAULT nextval('intake_event_id_seq'),
    happened_at TIMESTAMPTZ NOT NULL,
    action      VARCHAR NOT NULL CHECK (action IN ('drained', 'rejected', 'recovered')),
    file_name   VARCHAR NOT NULL,
    runs_added  INTEGER NOT NULL,
    message     VARCHAR
);
