-- JouleBench results store, schema version 16 (issue 28): a configuration is what was set, never less.
--   * CodeCarbon records no workload size: each tracked run is a job of its own, tagged with its run
--     (its first 8 characters; a row without a run id by its place in the file), never pooled with
--     another as its repeat (7 jobs of 4 s to 2,348 s were one configuration "with a spread of 194 %");
--     its system energy is partly modelled by CodeCarbon (RAM power from its size, CPU power from TDP
--     without RAPL): flagged energy_partly_estimated, which energy.grades grades C.
--   * how a serving benchmark offered its load and which server ran it (load kind, concurrency, arrival,
--     burstiness, requested lengths, length distribution, engine) separate configurations
--     (db.grading.CONFIG_KEY_EXTRAS).
-- The runs whose configuration key or grade changes lose their grade here, with the aggregates of the
-- configurations they belonged to; the next read-write open grades every run again (db.store: a store
-- with ungraded runs is graded whole), which computes the new keys and their aggregates.

UPDATE runs SET
    tag = CASE WHEN regexp_matches(coalesce(notes, ''), '^CodeCarbon run [^ ?][^ ]* written')
               THEN 'CodeCarbon run ' || left(regexp_extract(notes, '^CodeCarbon run ([^ ]+) written', 1), 8)
               ELSE 'CodeCarbon row ' || CAST(TRY_CAST(split_part(run_id, ':', 3) AS BIGINT) + 1 AS VARCHAR) END,
    flags = CASE WHEN energy_j IS NOT NULL AND energy_boundary = 'system'
                      AND NOT list_contains(coalesce(flags, []::VARCHAR[]), 'energy_partly_estimated')
                 THEN list_append(coalesce(flags, []::VARCHAR[]), 'energy_partly_estimated') ELSE flags END
WHERE origin_format = 'codecarbon' AND tag IS NULL;

UPDATE runs SET trust_grade = NULL
WHERE origin_format = 'codecarbon' OR load_kind IS NOT NULL OR max_concurrency IS NOT NULL OR arrival IS NOT NULL
   OR burstiness IS NOT NULL OR prompt_tokens_requested IS NOT NULL OR output_tokens_requested IS NOT NULL
   OR length_distribution IS NOT NULL OR engine IS NOT NULL;

DELETE FROM config_stats WHERE config_key IN (SELECT config_key FROM runs WHERE trust_grade IS NULL);
DELETE FROM configurations WHERE config_key IN (SELECT config_key FROM runs WHERE trust_grade IS NULL);
