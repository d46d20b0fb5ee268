-- JouleBench results store, schema version 10 (issue 17): who entered a price, and when.
-- A price typed on the Devices page is the user's own value, not the published source's: the
-- catalog row keeps when and through what it was entered (null for a price from the shipped
-- catalog), and each row of the edit history says who made it.

ALTER TABLE devices ADD COLUMN price_entered_at TIMESTAMPTZ;
ALTER TABLE devices ADD COLUMN price_entered_by VARCHAR;
ALTER TABLE device_edits ADD COLUMN edited_by VARCHAR;
