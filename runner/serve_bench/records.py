"""A point's requests as the result file keeps them (joulebench.requests): every request sent, each marked counted
or not, so that the point's figures and the figures recomputed from its stored requests are one.

Counted are the requests the point's figures cover (runner.serve_bench.measure.population): the steady state's,
or what an overloaded point served inside it; a point without a steady state (interrupted, every request failed,
too few requests) counts every request it sent, as its figures do. Times are seconds from the point's start (the
start of its schedule), on the clock the requests were timed with.

Token counts keep the rule of joulebench.requests (the server's count where it gave one, else the client's) by
storing a server's count only where it is the count the figures use (runner.serve_bench.counts decided it): a
usage that disagreed with the stream, or prompt counts that differ from --tokenizer's, are not believed and are
not stored as the server's; the client's count is then the one kept, and the notes name both.
"""

from __future__ import annotations

from collections.abc import Iterable

import joulebench.requests as jr
from runner.serve_bench.result import RequestResult


def request(r: RequestResult, *, counted: bool, start_s: float) -> jr.Request:
    """One request as joulebench.requests records it (see the module for the counts)."""
    by_server = r.count_source == "usage"
    prompt_by_server = r.prompt_source == "usage"
    return jr.from_values(
        r.index, sent_s=r.sent_s, token_s=r.token_s,
        scheduled_s=start_s + r.planned_s if r.planned_s is not None else None,
        prompt_tokens_server=r.prompt_tokens if prompt_by_server else None,
        prompt_tokens_client=r.prompt_tokens_client if prompt_by_server else r.prompt_tokens,
        output_tokens_server=r.output_tokens if by_server else None,
        output_tokens_client=r.output_tokens_client if by_server else r.output_tokens,
        error=r.error, error_kind=r.error_kind, counted=counted, start_s=start_s)


def point_requests(results: Iterable[RequestResult], counted: set[int] | None, start_s: float) -> list[jr.Request]:
    """Every request of a point, by index; `counted`: the indices its figures cover (None: all of them)."""
    return [request(r, counted=counted is None or r.index in counted, start_s=start_s)
            for r in sorted(results, key=lambda r: r.index)]
