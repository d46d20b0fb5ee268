-- JouleBench results store, schema version 27 (issue 38): every request of a serving point kept.
-- One row per request (joulebench/requests.py: the record, its checks, what is kept and the one aggregation):
-- its index in the point, scheduled and actual send time (s from the point's start; NULL when the source has
-- none), TTFT, the inter-token gaps (itl_ms, a list, when itl_kept = 'every gap'; only their exact summary
-- itl_count / itl_sum_ms / itl_min_ms / itl_max_ms when itl_kept = 'summary'; nothing when 'none'; the summary is
-- filled for 'every gap' too, so a limit on a request's largest gap needs no unnest), end-to-end latency, prompt
-- and output tokens as the server and as the client counted them, status (ok, empty: answered with no output
-- token, failed, refused, timed_out), error class, and whether the run's figures count it.
-- Retention: at most 100,000 requests and 2,000,000 listed gaps per run (joulebench.requests.MAX_*); what a run
-- had and kept is in request_sets. No keys (a team store's copies have none either): db.writes writes a run's
-- requests once, in the transaction that adds the run.

CREATE TABLE requests (
    run_id                VARCHAR NOT NULL,
    request_index         BIGINT NOT NULL,
    scheduled_send_s      DOUBLE,
    send_s                DOUBLE,
    ttft_ms               DOUBLE CHECK (ttft_ms >= 0),
    itl_ms                DOUBLE[],
    itl_kept              VARCHAR NOT NULL CHECK (itl_kept IN ('every gap', 'summary', 'none')),
    itl_count             BIGINT CHECK (itl_count >= 0),
    itl_sum_ms            DOUBLE CHECK (itl_sum_ms >= 0),
    itl_min_ms            DOUBLE CHECK (itl_min_ms >= 0),
    itl_max_ms            DOUBLE CHECK (itl_max_ms >= 0),
    e2e_ms                DOUBLE CHECK (e2e_ms >= 0),
    prompt_tokens_server  BIGINT CHECK (prompt_tokens_server >= 0),
    prompt_tokens_client  BIGINT CHECK (prompt_tokens_client >= 0),
    output_tokens_server  BIGINT CHECK (output_tokens_server >= 0),
    output_tokens_client  BIGINT CHECK (output_tokens_client >= 0),
    status                VARCHAR NOT NULL CHECK (status IN ('ok', 'empty', 'failed', 'refused', 'timed_out')),
    error_class           VARCHAR,
    counted               BOOLEAN NOT NULL
);

-- One row per run with requests: how many its source had, how many are kept, and what was cut (NULL: nothing).
CREATE TABLE request_sets (
    run_id            VARCHAR NOT NULL,
    requests_in_source BIGINT NOT NULL CHECK (requests_in_source >= 0),
    requests_kept     BIGINT NOT NULL CHECK (requests_kept >= 0),
    retention_note    VARCHAR
);
