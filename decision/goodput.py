"""Goodput under any SLO, after the fact: the limits a person types (TTFT, ITL, TPOT, end-to-end latency), held
to every stored request of every serving point (DistServe's goodput: requests per second meeting every limit).

Per point with requests: good requests/s (the good counted requests over the run's window, `duration_s`), good
requests per joule (over the window's `energy_j`) and the share of its completed requests meeting all limits, each
labelled with the limits. Each request is held to each limit: TTFT and end-to-end latency as measured; TPOT as
(end-to-end - TTFT) / (output tokens - 1), vacuous for a request of at most one output token (vLLM's and serve-bench's
rule); ITL through the request's longest gap (every gap within the limit), vacuous without a gap. A request whose
value a limit needs is unknown (a file without end-to-end times) makes the point's goodput "not known", with the
count. A limit written at a percentile (`ttft_p90<=500ms`) also says whether the point attains it (at least 90 % of
its completed requests within 500 ms).

A point without requests is answered from its stored figures only where they answer exactly: its stored goodput when
its `goodput_slo` is the same SLO, and whether a percentile limit is attained when it stores that percentile;
otherwise "not known" with the reason. All of it is polars over whole columns: no Python loop per request.
"""

from __future__ import annotations

import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

import polars as pl

from decision.markdown import md
from decision.text import sig
from joulebench.configuration import BY_NAME, label_parts
from joulebench.metrics import KIND_FIELDS, RunKind, label, run_kind
from joulebench.slo import METRICS, PERCENTILES, Limit, Slo, SloError, limit_range, parse_slo


def slo_of(limits_ms: Mapping[str, float | None], percentile: int | None = None) -> Slo | None:
    """The SLO of typed limits (metric -> ms; None or 0: no limit), each stated at `percentile` when one is
    given (the share of requests it must hold for; each request is held to every limit either way); None when
    no limit is given. SloError naming the limit outside its range."""
    if percentile is not None and percentile not in PERCENTILES:
        raise SloError(f"SLO: p{percentile} is not one of {', '.join(f'p{p}' for p in PERCENTILES)}")
    limits = []
    for metric in METRICS:
        value = limits_ms.get(metric)
        if value is None or value == 0:
            continue
        if not limit_range(metric).contains(float(value)):
            raise SloError(f"SLO: {METRICS[metric].title} limit {value:g} ms: enter {limit_range(metric).describe()} "
                           "ms (0: no limit)")
        limits.append(Limit(metric, float(value), percentile))
    return Slo(tuple(limits)) if limits else None


def _held(limit: Limit) -> pl.Expr:
    """True / False per request for one limit; null where the request lacks what the limit needs."""
    few = pl.col("output_tokens") <= 1
    if limit.metric == "ttft":
        return pl.col("ttft_ms") <= limit.limit_ms
    if limit.metric == "e2e":
        return pl.col("e2e_ms") <= limit.limit_ms
    if limit.metric == "tpot":
        tpot = (pl.col("e2e_ms") - pl.col("ttft_ms")) / (pl.col("output_tokens") - 1)
        return pl.when(few).then(pl.lit(True)).otherwise(tpot <= limit.limit_ms)
    longest = pl.when(pl.col("itl_kept") == "none").then(None).otherwise(pl.col("itl_max_ms"))
    no_gap = (pl.col("itl_kept") != "none") & pl.col("itl_max_ms").is_null()
    return pl.when(few | no_gap).then(pl.lit(True)).otherwise(longest <= limit.limit_ms)


def goodput(requests: pl.DataFrame, runs: pl.DataFrame, slo: Slo) -> pl.DataFrame:
    """One row per run of `runs` (run_id, duration_s, energy_j, goodput_slo, goodput_requests_per_s,
    goodput_requests_per_j and the stored percentile columns, where it has them): slo, basis ('requests' or 'stored
    figures'), requests_completed, requests_good, share_good, good_requests_per_s, good_requests_per_j, known,
    reason, and attained_<metric>_p<N> for each limit stated at a percentile. `requests`: db.requests.slo_frame."""
    return from_counts(per_run(requests, slo), runs, slo)


def from_counts(counted: pl.DataFrame, runs: pl.DataFrame, slo: Slo) -> pl.DataFrame:
    """`goodput` from `per_run`'s counts (one row per run of `runs`)."""
    with_requests = set(counted["run_id"].to_list())
    frame = runs.join(counted, on="run_id", how="left")
    return _frame([_row(r, slo, r["run_id"] in with_requests) for r in frame.iter_rows(named=True)], slo)


def _frame(rows: list[dict[str, object]], slo: Slo) -> pl.DataFrame:
    schema: dict[str, pl.DataType | type[pl.DataType]] = {
        "run_id": pl.String, "slo": pl.String, "basis": pl.String, "requests_completed": pl.Int64,
        "requests_good": pl.Int64, "share_good": pl.Float64, "good_requests_per_s": pl.Float64,
        "good_requests_per_j": pl.Float64, "known": pl.Boolean, "reason": pl.String,
        **{f"attained_{x.metric}_p{x.percentile}": pl.Boolean for x in slo.limits if x.percentile}}
    return pl.DataFrame(rows, schema=schema, orient="row") if rows else pl.DataFrame(schema=schema)


def per_run(requests: pl.DataFrame, slo: Slo) -> pl.DataFrame:
    """One row per run with requests, in one pass over them (no filtered copy): requests_completed, requests_good,
    requests_unknown (completed requests lacking a value a limit needs) and, per limit, the share of the completed
    requests within it (`_share<i>`)."""
    done = pl.col("status").is_in(["ok", "empty"])
    ok = pl.col("status") == "ok"
    held = [pl.when(ok).then(_held(x)).otherwise(pl.lit(False)) for x in slo.limits]  # empty, failed: not good
    good = pl.all_horizontal(held).fill_null(False)
    unknown = pl.any_horizontal([h.is_null() for h in held])  # null only on ok requests, all completed
    aggs = [done.sum().alias("requests_completed"), good.sum().alias("requests_good"),
            unknown.sum().alias("requests_unknown")]
    aggs += [((h.fill_null(False) & done).sum() / done.sum()).alias(f"_share{i}") for i, h in enumerate(held)]
    if not requests.height:
        return pl.DataFrame(schema={"run_id": pl.String, "requests_completed": pl.UInt32, "requests_good": pl.UInt32,
                                    "requests_unknown": pl.UInt32, **{f"_share{i}": pl.Float64
                                                                      for i in range(len(slo.limits))}})
    return requests.group_by("run_id").agg(aggs)


def _row(r: dict[str, object], slo: Slo, has_requests: bool) -> dict[str, object]:
    """One run's answer (one per point, not per request)."""
    out: dict[str, object] = {"run_id": r["run_id"], "slo": slo.text(), "requests_completed": None,
                              "requests_good": None, "share_good": None, "good_requests_per_s": None,
                              "good_requests_per_j": None, "known": False, "reason": None}
    attained = {f"attained_{x.metric}_p{x.percentile}": None for x in slo.limits if x.percentile}
    out.update(attained)
    duration, energy = _num(r.get("duration_s")), _num(r.get("energy_j"))
    if has_requests:
        out["basis"] = "requests"
        n, good, unknown = int(r["requests_completed"] or 0), int(r["requests_good"] or 0), int(  # type: ignore[call-overload]
            r["requests_unknown"] or 0)  # type: ignore[call-overload]
        out["requests_completed"] = n
        for i, x in enumerate(slo.limits):
            share = _num(r.get(f"_share{i}"))
            if x.percentile and share is not None and not unknown:
                out[f"attained_{x.metric}_p{x.percentile}"] = share >= x.percentile / 100.0
        if unknown:
            out["reason"] = (f"not known: {unknown} of {n} completed requests lack a value a limit needs (the file "
                             "keeps no end-to-end time, gaps or output count for them)")
            return out
        if not n:
            out["reason"] = "not known: no request of this point completed"
            return out
        out.update(requests_good=good, share_good=good / n, known=True,
                   good_requests_per_s=good / duration if duration else None,
                   good_requests_per_j=good / energy if energy else None)
        missing = [w for w, v in (("good requests/s: the point has no window duration", duration),
                                  ("good requests/J: the point has no energy", energy)) if not v]
        if missing:
            out["reason"] = "not known: " + "; ".join(missing)
        return out
    out["basis"] = "stored figures"
    for x in slo.limits:
        if x.percentile:
            stored = _num(r.get(METRICS[x.metric].stat(f"p{x.percentile}").name))
            if stored is not None:
                out[f"attained_{x.metric}_p{x.percentile}"] = stored <= x.limit_ms
    if _same_slo(r.get("goodput_slo"), slo):
        per_s = _num(r.get("goodput_requests_per_s"))
        out.update(good_requests_per_s=per_s, good_requests_per_j=_num(r.get("goodput_requests_per_j")),
                   known=per_s is not None, reason="its stored goodput, measured under this same SLO")
        return out
    out["reason"] = ("not known: this point keeps no requests; its stored percentiles can only say whether a limit "
                     "stated at one of them (e.g. ttft_p90<=500ms) is attained, not how many requests met every limit")
    return out


def _same_slo(stored: object, slo: Slo) -> bool:
    """Whether a run's stored goodput_slo is this SLO (serve-bench writes e2e as e2e_latency)."""
    if not isinstance(stored, str) or not stored.strip():
        return False
    try:
        return set(parse_slo(stored).limits) == set(slo.limits)
    except SloError:
        return False


def _num(value: object) -> float | None:
    if isinstance(value, (int, float)) and not isinstance(value, bool) and math.isfinite(value):
        return float(value)
    return None


# --- every serving point of a selection, answered and laid out for a person (Decide, Compare, `decide --json`) ------

# what names a serving point beside its device, each as joulebench.configuration reads it
POINT_FIELDS = ("workload", "request_rate_per_s", "max_concurrency", "engine", "power_limit_w", "power_mode", "tag")
_STORED = ("duration_s", "energy_j", "goodput_slo", "goodput_requests_per_s", "goodput_requests_per_j",
           *(d.stat(p).name for d in METRICS.values() for p in ("p50", "p90", "p95", "p99")))
BASIS_REQUESTS, BASIS_STORED = "requests", "stored figures"
# the table's goodput columns: the catalogue's labels, said to be under the person's limits
PER_S_COLUMN = f"{label('goodput_requests_per_s')}, your limits"
PER_J_COLUMN = f"{label('goodput_requests_per_j')}, your limits"
GOOD_COLUMN, COMPLETED_COLUMN = "Requests meeting every limit", label("requests_completed")
SHARE_COLUMN = "Share meeting every limit (%)"


def serving_points(runs: pl.DataFrame, with_requests: Iterable[str]) -> pl.DataFrame:
    """The rows of `runs` that are serving points: those with stored requests (`with_requests`: their run ids),
    those a load or an engine makes one (joulebench.metrics.run_kind, read once per distinct configuration, not per
    run) and those that store a goodput."""
    ids = pl.Series("run_id", list(with_requests), dtype=pl.String)
    kind_cols = [c for c in KIND_FIELDS if c in runs.columns]
    combos = runs.select(kind_cols).unique() if kind_cols else pl.DataFrame()
    marks = [run_kind(row) is RunKind.SERVING for row in combos.iter_rows(named=True)]
    if kind_cols:
        tagged = runs.join(combos.with_columns(pl.Series("_serving", marks, dtype=pl.Boolean)), on=kind_cols,
                           how="left", nulls_equal=True)
    else:
        tagged = runs.with_columns(pl.lit(False).alias("_serving"))
    stored = (pl.col("goodput_requests_per_s").is_not_null() if "goodput_requests_per_s" in runs.columns
              else pl.lit(False))
    return tagged.filter(pl.col("run_id").is_in(ids.implode()) | pl.col("_serving").fill_null(False) | stored
                         ).drop("_serving")


@dataclass(frozen=True)
class GoodputAnswer:
    """Goodput under `slo` for every serving point of a selection: `points` holds goodput()'s columns with each
    point's device and description (`point`), best first (good requests per joule, then per second; not known
    last)."""

    slo: Slo
    points: pl.DataFrame

    @property
    def counted(self) -> int:
        """Points answered from their requests."""
        return int((self.points["basis"] == BASIS_REQUESTS).sum()) if self.points.height else 0

    @property
    def without_requests(self) -> int:
        return self.points.height - self.counted

    def table(self) -> pl.DataFrame:
        """The points for a person: device, point, basis, counts, share, goodput (per s, per J) under the
        limits, each percentile limit held or not, and why a figure is not known."""
        p = self.points
        basis = (pl.when(pl.col("basis") == BASIS_REQUESTS)
                 .then(pl.lit("its ") + pl.col("requests_completed").cast(pl.String) + pl.lit(" completed requests"))
                 .otherwise(pl.lit("its stored figures (no requests kept)")))
        cols = [pl.col("device_name").fill_null("not stated").alias("Device"), pl.col("point").alias("Serving point"),
                basis.alias("Basis"), pl.col("requests_good").alias(GOOD_COLUMN),
                pl.col("requests_completed").alias(COMPLETED_COLUMN),
                (pl.col("share_good") * 100.0).alias(SHARE_COLUMN),
                pl.col("good_requests_per_s").alias(PER_S_COLUMN), pl.col("good_requests_per_j").alias(PER_J_COLUMN)]
        for x in self.slo.limits:
            if x.percentile:
                held = pl.col(f"attained_{x.metric}_p{x.percentile}")
                name = f"{METRICS[x.metric].title} p{x.percentile} ≤ {x.limit_ms:g} ms held"
                cols.append(pl.when(held.is_null()).then(pl.lit("not known")).when(held).then(pl.lit("yes"))
                            .otherwise(pl.lit("no")).alias(name))
        cols += [pl.col("reason").fill_null("").alias("Why not known, or the basis"), pl.col("run_id").alias("Run")]
        return p.select(cols) if p.height else pl.DataFrame(schema={c.meta.output_name(): pl.String for c in cols})

    def sentences(self, limit: int = 5) -> list[str]:
        """Markdown, one per point counted from its requests (best first, at most `limit`): '**H100 SXM**, llama ·
        rate 4/s: 52 of 57 requests met every limit (91.2 %): 26 requests/s, 0.0867 requests/J.' Names escaped."""
        out = []
        counted = self.points.filter(pl.col("basis") == BASIS_REQUESTS)
        for r in counted.head(limit).iter_rows(named=True):
            head = f"**{md(r['device_name'] or 'device not stated')}**, {md(r['point'])}"
            if r["requests_good"] is None:
                out.append(f"{head}: {md(r['reason'] or 'not known')}.")
                continue
            per_s = (f"{sig(r['good_requests_per_s'], 3)} requests/s" if r["good_requests_per_s"] is not None
                     else "requests/s not known (no window duration)")
            per_j = (f"{sig(r['good_requests_per_j'], 3)} requests/J" if r["good_requests_per_j"] is not None
                     else "requests/J not known (no energy measured)")
            out.append(f"{head}: {r['requests_good']:,} of {r['requests_completed']:,} requests met every limit "
                       f"({sig(100.0 * r['share_good'], 3)} %): {per_s}, {per_j}.")
        if counted.height > limit:
            out.append(f"{counted.height - limit:,} more in the table below.")
        return out

    def to_dict(self) -> dict[str, Any]:
        """JSON-ready: the SLO (as written and for a person) and each point's goodput with its basis."""
        keep = ["run_id", "device_name", "point", "basis", "requests_completed", "requests_good", "share_good",
                "good_requests_per_s", "good_requests_per_j", "known", "reason",
                *(c for c in self.points.columns if c.startswith("attained_"))]
        return {"slo": self.slo.text(), "limits": self.slo.label(),
                "units": {"good_requests_per_s": "requests/s", "good_requests_per_j": "requests/J",
                          "share_good": "fraction of completed requests"},
                "points_with_requests": self.counted, "points_without_requests": self.without_requests,
                "points": self.points.select([c for c in keep if c in self.points.columns]).to_dicts()}


def answer(runs: pl.DataFrame, requests: pl.DataFrame, slo: Slo) -> GoodputAnswer:
    """Goodput under `slo` for the serving points among `runs` (a runs frame: db.queries.runs_table's columns),
    from `requests` (db.requests.slo_frame: every run's, or these runs'; only the points' rows are held to the
    limits)."""
    counted = per_run(requests, slo)  # every run's counts in one pass: cheaper than a filtered copy of the requests
    points = serving_points(runs, counted["run_id"])
    result = from_counts(counted, points.select("run_id", *(c for c in _STORED if c in points.columns)), slo)
    described = points.select("run_id", "device_name").with_columns(point_texts(points))
    frame = described.join(result, on="run_id", how="left").sort(
        ["known", "good_requests_per_j", "good_requests_per_s", "device_name", "run_id"],
        descending=[True, True, True, False, False], nulls_last=True)
    return GoodputAnswer(slo, frame)


def point_texts(runs: pl.DataFrame) -> pl.Series:
    """'llama-8b · rate 4/s · engine vllm' per run: the stated values of POINT_FIELDS, as a person reads each
    (joulebench.configuration), read once per distinct combination."""
    fields = [f for f in POINT_FIELDS if f in runs.columns and f in BY_NAME]
    combos = runs.select(fields).unique()
    texts = [" · ".join(label_parts(row, tuple(fields))) or "no load stated" for row in combos.iter_rows(named=True)]
    mapping = combos.with_columns(pl.Series("_text", texts, dtype=pl.String))
    joined = runs.select(fields).with_row_index("_i").join(mapping, on=fields, how="left", nulls_equal=True)
    return joined.sort("_i")["_text"].alias("point")
