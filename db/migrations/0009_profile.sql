-- JouleBench results store, schema version 9: power-setting profiles (issue 13).
-- A run measured by `joulebench run --profile`: one of several power settings measured in one
-- process on one built model (change, settle, measure, go on), each stored as its own run.

ALTER TABLE runs ADD COLUMN profile BOOLEAN;
