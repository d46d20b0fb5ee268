-- JouleBench results store, schema version 25 (issue 27 item 3): MLPerf LLM reference results with power.
--
-- sample_data/ gains runs_llm_mlperf_power.csv (MLPerf Inference v5.1 llama3.1-8b on 8x B200, Server and
-- Offline, with the whole server's power at the wall; and MLPerf v4.1's GPT-J Offline result on a Jetson AGX
-- Orin 64GB, which has no power) and the catalog entry 'Jetson AGX Orin 64GB'. As in 0022: a database seeded
-- before them is no longer marked seeded, so the open that applies this migration (db.store.Store.open) seeds
-- what it lacks by file name, adding each new runs file once with the catalog entries of its devices (only
-- where the catalog lacks them); nothing held changes. A database made without reference data ('not seeded')
-- keeps that choice.
CREATE TABLE IF NOT EXISTS store_meta (key VARCHAR PRIMARY KEY, value VARCHAR NOT NULL, set_at TIMESTAMPTZ NOT NULL);
DELETE FROM store_meta WHERE key = 'reference_data' AND value = 'seeded';
