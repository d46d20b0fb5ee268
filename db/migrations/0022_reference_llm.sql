-- JouleBench results store, schema version 22 (issue 27 item 3): reference LLM results on first start.
--
-- sample_data/ gains published LLM serving figures (runs_llm_mlenergy_v3.csv, runs_llm_mlperf.csv,
-- runs_llm_jetson.csv) and the catalog entries their devices need. A new database is seeded with them
-- after its migrations. A database seeded before them holds the older reference files only, and an
-- open never re-seeds a database marked seeded: this migration takes that mark away, so the open that
-- applies it (db.store.Store.open) seeds what the database lacks. Store.seed adds only the reference
-- files it does not hold (by file name), so nothing held is added twice and no stored run, label or
-- catalog edit changes; each new runs file carries the catalog entries of the devices it names, which
-- the ingest adds only where the catalog lacks them. A database made without reference data
-- ('not seeded') keeps that choice. store_meta is created here as Store.mark_reference_data creates it
-- (a new database has none yet while it is migrated).
CREATE TABLE IF NOT EXISTS store_meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL, set_at TIMESTAMPTZ NOT NULL);
DELETE FROM store_meta WHERE key = 'reference_data' AND value = 'seeded';
