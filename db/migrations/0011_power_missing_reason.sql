-- JouleBench results store, schema version 11 (issue 17): why an average power is missing.
-- energy / time above the device's plausible maximum means the energy and the time cover different
-- windows (a table's training_time beside the energy of the whole job): the energy stays, the
-- average power is stored as missing with this reason.

ALTER TABLE runs ADD COLUMN avg_power_missing_reason VARCHAR;
