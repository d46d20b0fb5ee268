-- JouleBench results store, schema version 10 (issue 17): who entered a price, and when.
-- A price typed on the Devices page is the user's own value, not the published source's: one row
-- per device whose price a person entered (the latest entry), beside the catalog, which keeps the
-- result file's fields only; and each row of the edit history says who made it.

CREATE TABLE price_entries (
    device_name VARCHAR PRIMARY KEY,
    entered_at  TIMESTAMPTZ NOT NULL,
    entered_by  VARCHAR NOT NULL
);

ALTER TABLE device_edits ADD COLUMN edited_by VARCHAR;

-- Prices entered before this version: the edit history already holds when.
INSERT INTO price_entries
SELECT device_name, max(edited_at), 'you (Devices page)' FROM device_edits
WHERE column_name IN ('price_amount', 'price_currency') GROUP BY device_name;
