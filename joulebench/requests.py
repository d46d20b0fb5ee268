"""Every request of a serving point: the typed record, its checks, what is kept of it, and the ONE
aggregation of a point's figures from its requests.

A request is one row: its index in the point, when it was scheduled and actually sent (s from the point's start;
None when the source has no times), TTFT (None for an answer not streamed, which has its end-to-end latency only:
a limit on TTFT or TPOT is then unknown for it, never met), its inter-token gaps (every gap, or only their exact
summary when that is all a source keeps, or none), end-to-end latency, prompt and output tokens as the server
counted them (its usage) and as the client counted them (a benchmark's tokenizer), status and error class, and
whether the point's figures count it (`counted`: serve-bench counts the requests sent in its steady state; an
imported file counts them all).

The figures come from the counted requests one way (`aggregate`), with the definitions of joulebench.metrics:
TTFT, TPOT and end-to-end latency per request, ITL every gap pooled over the requests, each the mean and the
p50/p90/p95/p99 of the pooled requests of the point (NumPy's linear interpolation, as `Percentiles.of`), never a
mean of percentiles. A request that answered with no output token (`empty`) has no TTFT: it is never a 0 ms one.

Retention (stated, bounded): a run keeps at most MAX_REQUESTS_PER_RUN requests (the first by index; its figures
are computed over all of them before the cut, and the run's notes and `request_sets` say how many there were), and
at most MAX_GAPS_PER_RUN inter-token gaps as a list; the requests past that gap budget keep their gaps' exact
summary (count, sum, min, max), with which ITL's mean stays exact and its percentiles are withheld with the reason.
A stored request takes about BYTES_PER_REQUEST bytes plus 8 per kept gap before DuckDB's compression, so a run's
requests stay under MAX_RUN_BYTES (about 25 MB) uncompressed.
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

import numpy as np

from joulebench.metrics import E2E, ITL, QUANTILES, TPOT, TTFT, Distribution, Percentiles

if TYPE_CHECKING:  # polars is imported where a frame is made: the runner writes result files without it
    import polars as pl

MAX_REQUESTS_PER_RUN = 100_000
MAX_GAPS_PER_RUN = 2_000_000
BYTES_PER_REQUEST = 100
MAX_RUN_BYTES = MAX_REQUESTS_PER_RUN * BYTES_PER_REQUEST + MAX_GAPS_PER_RUN * 8

STATUSES = ("ok", "empty", "failed", "refused", "timed_out")  # empty: answered without error, no output token
COMPLETED = ("ok", "empty")
GAPS_EVERY, GAPS_SUMMARY, GAPS_NONE = "every gap", "summary", "none"
ITL_KEPT = (GAPS_EVERY, GAPS_SUMMARY, GAPS_NONE)
FLAG_NOT_STREAMED = "requests_tokens_not_streamed"
FLAG_TRUNCATED = "requests_truncated"
AGREE_REL = 1e-6  # a stated figure within this of the requests' own agrees (the same figure summed in another order)



def frame_schema() -> dict[str, Any]:
    """The frame's columns and their polars types (db.requests stores the same, plus run_id)."""
    import polars as pl

    return {
        "request_index": pl.Int64, "scheduled_send_s": pl.Float64, "send_s": pl.Float64, "ttft_ms": pl.Float64,
        "itl_ms": pl.List(pl.Float64), "itl_kept": pl.String, "itl_count": pl.Int64, "itl_sum_ms": pl.Float64,
        "itl_min_ms": pl.Float64, "itl_max_ms": pl.Float64, "e2e_ms": pl.Float64,
        "prompt_tokens_server": pl.Int64, "prompt_tokens_client": pl.Int64, "output_tokens_server": pl.Int64,
        "output_tokens_client": pl.Int64, "status": pl.String, "error_class": pl.String, "counted": pl.Boolean,
    }


_FLOAT_FIELDS = ("scheduled_send_s", "send_s", "ttft_ms", "e2e_ms")
_TOKEN_FIELDS = ("prompt_tokens_server", "prompt_tokens_client", "output_tokens_server", "output_tokens_client")


@dataclass(frozen=True)
class GapSummary:
    """The exact summary of a request's inter-token gaps, when a source keeps no list (ms)."""

    count: int
    sum_ms: float
    min_ms: float | None
    max_ms: float | None


@dataclass(frozen=True)
class Request:
    index: int
    status: str = "ok"
    scheduled_send_s: float | None = None
    send_s: float | None = None
    ttft_ms: float | None = None
    itl_ms: tuple[float, ...] | None = None  # every gap; None: see gaps
    gaps: GapSummary | None = None  # the exact summary where the gaps themselves are not kept
    e2e_ms: float | None = None
    prompt_tokens_server: int | None = None
    prompt_tokens_client: int | None = None
    output_tokens_server: int | None = None
    output_tokens_client: int | None = None
    error_class: str | None = None
    counted: bool = True

    @property
    def itl_kept(self) -> str:
        return GAPS_EVERY if self.itl_ms is not None else GAPS_SUMMARY if self.gaps is not None else GAPS_NONE

    @property
    def output_tokens(self) -> int | None:
        """The server's count where it gave one, else the client's."""
        return self.output_tokens_server if self.output_tokens_server is not None else self.output_tokens_client

    def summary(self) -> GapSummary | None:
        if self.itl_ms is not None:
            gaps = self.itl_ms
            return GapSummary(len(gaps), float(sum(gaps)), min(gaps) if gaps else None, max(gaps) if gaps else None)
        return self.gaps

    def to_json(self) -> dict[str, Any]:
        """The result file's object (fields left out when unknown)."""
        out: dict[str, Any] = {"index": self.index, "status": self.status}
        for name in (*_FLOAT_FIELDS, *_TOKEN_FIELDS, "error_class"):
            if (value := getattr(self, name)) is not None:
                out[name] = value
        if self.itl_ms is not None:
            out["itl_ms"] = list(self.itl_ms)
        elif self.gaps is not None:
            out["itl_summary"] = {"count": self.gaps.count, "sum_ms": self.gaps.sum_ms, "min_ms": self.gaps.min_ms,
                                  "max_ms": self.gaps.max_ms}
        if not self.counted:
            out["counted"] = False
        return out


def from_json(item: dict[str, Any]) -> Request:
    """A validated result file's request object (see `problems`)."""
    summary = item.get("itl_summary")
    return Request(
        index=int(item["index"]), status=item.get("status", "ok"),
        **{k: item.get(k) for k in (*_FLOAT_FIELDS, *_TOKEN_FIELDS, "error_class")},
        itl_ms=tuple(item["itl_ms"]) if item.get("itl_ms") is not None else None,
        gaps=GapSummary(int(summary["count"]), float(summary["sum_ms"]), summary.get("min_ms"), summary.get("max_ms"))
        if summary is not None else None,
        counted=bool(item.get("counted", True)))


def from_values(index: int, *, sent_s: float, token_s: Sequence[float], scheduled_s: float | None = None,
                prompt_tokens_server: int | None = None, output_tokens_server: int | None = None,
                prompt_tokens_client: int | None = None, output_tokens_client: int | None = None,
                error: str | None = None, error_kind: str | None = None, counted: bool = True,
                start_s: float = 0.0) -> Request:
    """One request from plain values a client measured (serve-bench's RequestResult): its send and its token events'
    arrival times on one clock (s), `start_s` the point's start on that clock. No error and no token is a failure
    (`no_output`), as serve-bench counts it; an error's kind (refused, failed, timed_out) is its status."""
    if error is not None or not token_s:
        status = error_kind if error_kind in STATUSES and error_kind not in COMPLETED else "failed"
        error_class = (error_kind or "error") if error is not None else "no_output"
        return Request(index, status, _rel(scheduled_s, start_s), sent_s - start_s, error_class=error_class,
                       prompt_tokens_server=prompt_tokens_server, prompt_tokens_client=prompt_tokens_client,
                       counted=counted)
    gaps = tuple((b - a) * 1000.0 for a, b in zip(token_s, token_s[1:]))
    return Request(index, "ok", _rel(scheduled_s, start_s), sent_s - start_s,
                   ttft_ms=(token_s[0] - sent_s) * 1000.0, itl_ms=gaps, e2e_ms=(token_s[-1] - sent_s) * 1000.0,
                   prompt_tokens_server=prompt_tokens_server, prompt_tokens_client=prompt_tokens_client,
                   output_tokens_server=output_tokens_server, output_tokens_client=output_tokens_client,
                   counted=counted)


def _rel(t: float | None, start_s: float) -> float | None:
    return t - start_s if t is not None else None


# --- checks -------------------------------------------------------------------------------------------------------

def _bad_number(value: Any) -> bool:
    return isinstance(value, (int, float)) and not isinstance(value, bool) and (not math.isfinite(value) or value < 0)


def problems(items: Sequence[dict[str, Any]], where: str) -> list[str]:
    """What makes a result file's `requests` wrong, each naming the field and the fix (the schema checks types)."""
    out: list[str] = []
    seen: set[int] = set()
    for i, item in enumerate(items):
        at = f"{where}.requests[{i}]"
        if item["index"] in seen:
            out.append(f"{at}.index: {item['index']} appears twice; give each request of a run its own index")
        seen.add(item["index"])
        for name in ("ttft_ms", "e2e_ms"):
            if _bad_number(item.get(name)):
                out.append(f"{at}.{name}: {item[name]!r} is negative or not finite; a latency is at least 0 ms")
        gaps = item.get("itl_ms") or []
        bad = next((j for j, g in enumerate(gaps) if _bad_number(g)), None)
        if bad is not None:
            out.append(f"{at}.itl_ms[{bad}]: {gaps[bad]!r} is negative or not finite; a gap is at least 0 ms")
        if item.get("itl_ms") is not None and item.get("itl_summary") is not None:
            out.append(f"{at}: itl_ms and itl_summary are both given; give the gaps, or only their summary")
        ttft, e2e = item.get("ttft_ms"), item.get("e2e_ms")
        if ttft is not None and e2e is not None and e2e < ttft:
            out.append(f"{at}.e2e_ms: {e2e} is before ttft_ms {ttft}; the last token cannot come before the first")
        if item.get("status", "ok") == "ok" and ttft is None and e2e is None:  # not streamed: its latency only
            out.append(f"{at}.ttft_ms: missing on a request with status ok, and so is e2e_ms; an answered request "
                       "has a latency (a request with no output token is 'empty', or failed)")
        if len(out) >= 20:
            break
    return out


def not_streamed(requests: Sequence[Request]) -> list[int]:
    """Indices of ok requests that claim more than one output token but carry no gap at all (tokens claimed
    but not streamed: the source kept the gaps of the others, so these are not a chunked stream)."""
    return [r.index for r in requests
            if r.status == "ok" and (r.output_tokens or 0) > 1 and r.itl_ms is not None and not r.itl_ms]


# --- retention ---------------------------------------------------------------------------------------------------

def retain(requests: Sequence[Request]) -> tuple[list[Request], str | None]:
    """What a run keeps (module docstring): at most MAX_REQUESTS_PER_RUN requests and MAX_GAPS_PER_RUN gaps as a
    list; the note says what was cut (None when nothing)."""
    kept = sorted(requests, key=lambda r: r.index)[:MAX_REQUESTS_PER_RUN]
    out, gaps, summarised = [], 0, 0
    for r in kept:
        if r.itl_ms is not None and gaps + len(r.itl_ms) > MAX_GAPS_PER_RUN:
            r = Request(**{**r.__dict__, "itl_ms": None, "gaps": r.summary()})
            summarised += 1
        elif r.itl_ms is not None:
            gaps += len(r.itl_ms)
        out.append(r)
    notes = []
    if len(requests) > MAX_REQUESTS_PER_RUN:
        notes.append(f"{len(requests):,} requests: the first {MAX_REQUESTS_PER_RUN:,} by index are kept (the run's "
                     "figures are over all of them)")
    if summarised:
        notes.append(f"{summarised:,} requests past the {MAX_GAPS_PER_RUN:,} inter-token gaps kept per run keep only "
                     "their gaps' exact summary (count, sum, min, max)")
    return out, "; ".join(notes) or None


# --- the frame and the one aggregation ----------------------------------------------------------------------------

def frame(requests: Sequence[Request]) -> pl.DataFrame:
    """The requests as the columns db.requests stores (without run_id)."""
    import polars as pl

    summaries = [r.summary() for r in requests]
    data: dict[str, list[Any]] = {
        "request_index": [r.index for r in requests],
        **{k: [getattr(r, k) for r in requests] for k in (*_FLOAT_FIELDS, *_TOKEN_FIELDS, "status", "error_class",
                                                          "counted")},
        "itl_ms": [list(r.itl_ms) if r.itl_ms is not None else None for r in requests],
        "itl_kept": [r.itl_kept for r in requests],
        "itl_count": [s.count if s else None for s in summaries],
        "itl_sum_ms": [s.sum_ms if s else None for s in summaries],
        "itl_min_ms": [s.min_ms if s else None for s in summaries],
        "itl_max_ms": [s.max_ms if s else None for s in summaries],
    }
    return pl.DataFrame(data, schema=frame_schema())


def percentiles(values: np.ndarray) -> Percentiles | None:
    """`Percentiles.of` for many values at once (the same definition: NumPy's linear interpolation)."""
    if values.size == 0:
        return None
    p = np.percentile(values, [QUANTILES["p50"], QUANTILES["p90"], QUANTILES["p95"], QUANTILES["p99"]])
    return Percentiles(avg=float(values.mean()), p50=float(p[0]), p90=float(p[1]), p95=float(p[2]), p99=float(p[3]))


@dataclass(frozen=True)
class Aggregate:
    metrics: dict[str, float | int]  # only the figures the requests give
    notes: list[str]


def _values(col: pl.Series) -> np.ndarray:
    return col.drop_nulls().to_numpy().astype(np.float64, copy=False)


def aggregate(requests: pl.DataFrame, gaps: pl.Series | None = None) -> Aggregate:
    """A point's figures from its counted requests (`frame`'s columns, or db.requests.read's). `gaps`: the gaps of
    its counted ok requests that keep every gap, already flat (db.requests.aggregate reads them so), in place of
    the `itl_ms` lists."""
    import polars as pl

    counted = requests.filter(pl.col("counted"))
    completed = counted.filter(pl.col("status").is_in(COMPLETED))
    ok = counted.filter(pl.col("status") == "ok")
    out: dict[str, float | int] = {"requests_completed": completed.height,
                                   "requests_failed": counted.height - completed.height}
    notes: list[str] = []
    output = pl.coalesce("output_tokens_server", "output_tokens_client")
    prompt = pl.coalesce("prompt_tokens_server", "prompt_tokens_client")
    tpot = (pl.when(output > 1).then((pl.col("e2e_ms") - pl.col("ttft_ms")) / (output - 1)).otherwise(None))
    cols = ok.select(pl.col("ttft_ms"), pl.col("e2e_ms"), tpot.alias("tpot_ms"))
    lengths = completed.select(output.alias("out"), prompt.alias("prompt"))  # an empty answer's 0 tokens count
    _put(out, TTFT, percentiles(_values(cols["ttft_ms"])))
    _put(out, E2E, percentiles(_values(cols["e2e_ms"])))
    _put(out, TPOT, percentiles(_values(cols["tpot_ms"])))
    with_gaps = ok.filter(pl.col("itl_kept") != GAPS_NONE)
    if with_gaps.height and (with_gaps["itl_kept"] == GAPS_EVERY).all():
        _put(out, ITL, percentiles(_values(gaps if gaps is not None else with_gaps["itl_ms"].explode())))
    elif with_gaps.height:
        n, total = with_gaps["itl_count"].sum(), with_gaps["itl_sum_ms"].sum()
        if n:
            out[ITL.avg.name] = float(total) / float(n)
        notes.append("ITL percentiles withheld: some requests keep only their gaps' summary (count, sum, min, max), "
                     "which gives the mean exactly but no percentile")
    if 0 < with_gaps.height < ok.height:
        notes.append(f"ITL over the {with_gaps.height} of {ok.height} ok requests whose gaps the source kept")
    if (mean := lengths["out"].drop_nulls().mean()) is not None:
        out["output_tokens_mean"] = float(mean)  # type: ignore[arg-type]
    if (mean := lengths["prompt"].drop_nulls().mean()) is not None:
        out["prompt_tokens_mean"] = float(mean)  # type: ignore[arg-type]
    return Aggregate(out, notes)


def _put(out: dict[str, float | int], dist: Distribution, values: Percentiles | None) -> None:
    if values is not None:
        out.update({k: v for k, v in dist.columns(values).items() if v is not None})


def reconcile(stated: dict[str, Any], agg: Aggregate, source: str) -> tuple[dict[str, Any], list[str]]:
    """A run's metrics with the requests' figures in place of what its source states: one way for every point
    with requests. A stated figure within AGREE_REL of the requests' is the same figure and keeps the source's
    digits; one that disagrees is replaced and named in a note with both values."""
    merged, notes = dict(stated), []
    for name, value in agg.metrics.items():
        before = stated.get(name)
        if before is not None and math.isclose(float(before), float(value), rel_tol=AGREE_REL, abs_tol=1e-9):
            continue  # the same figure (summed in another order): the source's digits stay
        if before is not None:
            notes.append(f"{name}: {source} states {before:.6g}, its requests give {value:.6g}")
        merged[name] = value
    return merged, notes
