"""How each configuration's token figures were measured, for comparing them like for like (issue 26):
the load (offline batch, open-loop rate or fixed concurrency, and its value), the engine, the requested
and the actual request lengths, and the serving figures the stored aggregates do not hold (requests/s,
goodput, J/request), each the mean over the configuration's ok runs. Reads only."""

from __future__ import annotations

import polars as pl

from db.store import Store

# one row per configuration: what is the same for all of its runs, then the means of its ok runs
_SQL = """
SELECT config_key,
    any_value(load_kind) AS load_kind, any_value(max_concurrency) AS max_concurrency,
    any_value(arrival) AS arrival, any_value(burstiness) AS burstiness,
    any_value(engine) AS engine, any_value(engine_version) AS engine_version,
    any_value(prompt_tokens_requested) AS prompt_tokens_requested,
    any_value(output_tokens_requested) AS output_tokens_requested,
    any_value(length_distribution) AS length_distribution, any_value(goodput_slo) AS goodput_slo,
    avg(prompt_tokens_mean) FILTER (WHERE status = 'ok') AS prompt_tokens_mean,
    avg(output_tokens_mean) FILTER (WHERE status = 'ok') AS output_tokens_mean,
    avg(requests_per_s) FILTER (WHERE status = 'ok') AS requests_per_s_mean,
    avg(goodput_requests_per_s) FILTER (WHERE status = 'ok') AS goodput_requests_per_s_mean,
    avg(j_per_request) FILTER (WHERE status = 'ok') AS j_per_request_mean,
    avg(e2e_latency_p90_ms) FILTER (WHERE status = 'ok') AS e2e_latency_p90_ms_mean,
    coalesce(bool_or(list_contains(flags, 'overloaded')) FILTER (WHERE status = 'ok'), false) AS overloaded,
    min(latency_missing_reason) FILTER (WHERE status = 'ok') AS latency_missing_reason,
    list_sort(list_distinct(list(sweep_id))) AS sweep_ids
FROM runs
WHERE j_per_token IS NOT NULL OR tokens_per_s IS NOT NULL OR load_kind IS NOT NULL
GROUP BY config_key
ORDER BY config_key
"""


def serving_configs(store: Store) -> pl.DataFrame:
    """Per configuration with token figures or a load: its load, engine, lengths and serving figures
    (`<figure>_mean` over its ok runs; `overloaded`: an ok run of it was flagged overloaded;
    `latency_missing_reason`: why an ok run of it has no latency percentiles; `sweep_ids`: the sweeps its
    runs are points of, empty when none states one)."""
    return store.query(_SQL)
