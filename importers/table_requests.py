"""Tables of one run's requests, for the general reader (`importers.general_table`): a load test's or a serving
benchmark's file with a row per request (`request_id, ttft_ms, e2e_latency_ms, completion_tokens, status`, or a
load generator's `worker, elapsed, latency_ms` rows) is one run whose requests are those rows, never a run per row.

The rows are requests when a column no field reads names them so: a request's id (`request_id`, `req_idx`,
`prompt_id`, `query_id`, `conversation_id`, ...) different on every row of a setup, or a load generator's worker
(`worker`, `client_id`, `thread`, `vu`) that each repeats on at least three rows; with nothing read but each
request's own latencies and lengths, an `ok` of True / False on every row, or a time rising row after row over
MIN_STAMPED rows (`timestamp`: a per-frame log); at least MIN_REQUESTS rows; a
latency of each request read (TTFT, end-to-end latency, or a duration); and no figure named as a statistic (`mean`,
`p99`, `avg`): those are a run's summaries. The label columns a reader reads (device, model, concurrency ...) group
the rows into runs; a request's own prompt or output length never does, unless its values repeat as a sweep's do.

Each row becomes a `joulebench.requests.Request` (its TTFT, its latency as the end-to-end latency, its output and
prompt tokens as the client counted them); a row its status column says failed, or with no latency, is a failed
request, counted. The run's figures are the requests' (`request_detail.attach`, one aggregation for every source).
A request's own rate (its tokens over its own latency) is never the run's and is not stored; the run's rates are
completed requests and output tokens over the run's window, which the rows' times give: from when the first was sent
to when the last finished. Times named as send or end times give it exactly; a bare `timestamp` or `elapsed` (sent
or finished, not said) gives it within one request's latency, used only when that is within WINDOW_TOLERANCE.
"""

from __future__ import annotations

import math
import re
import statistics
from dataclasses import dataclass
from datetime import datetime
from typing import Any

import joulebench.requests as jr
from importers.base import Conversion
from importers.request_detail import attach
from importers.table_document import has_figure
from importers.table_fields import OK_COLUMNS, Field, plain
from importers.table_records import flatten, record_list
from importers.table_rows import cell, failures, status_column
from importers.table_steps import LENGTHS, own_lengths, summarised
from joulebench import units

Rows = list[tuple[int, list[str]]]
Columns = dict[int, tuple[Field, units.Unit | None]]

MIN_REQUESTS = 5
MIN_STAMPED = 20  # a log of items told only by their times: more rows than any table of runs a person writes
WINDOW_TOLERANCE = 0.02  # a window known within 2 % (one request's latency over the run's span) gives its rates
_SUFFIX = r"[_ ]?(?:id|idx|index|no|num|number|uuid|key)"  # a bare 'prompt' or 'request' names setups as often
_REQUEST = re.compile(r"(?:request|req|prompt|query|question|conversation|conv|session|call|completion)" + _SUFFIX)
_ID = re.compile(r"id|uuid|key|index|idx")  # a bare id names a request only in a table of request times
_WORKER = re.compile(r"(?:worker|client|user|thread|vu|virtual_user)(?:" + _SUFFIX + ")?")
_SENT = re.compile(r"(?:start|started|start_time|started_at|send|sent|send_time|sent_at|request_start|t_start|"
                   r"submit_time|submitted_at|issued_at|scheduled_at|begin|begin_time)(?:_(?:s|ms|ts|time))?")
_ENDED = re.compile(r"(?:end|ended|end_time|ended_at|finish|finished|finish_time|finished_at|completed_at|done_at|"
                    r"t_end|stop|stop_time|response_received_at)(?:_(?:s|ms|ts|time))?")
_FIRST = re.compile(r"(?:first_token|first_token_time|first_token_at|t_first_token|ttft_at|first_chunk|"
                    r"first_chunk_time|first_byte|first_byte_time)(?:_(?:s|ms|ts))?")
_EITHER = re.compile(r"(?:timestamp|ts|time|elapsed|elapsed_s|wall_time|datetime|date_time|t)")
# a list of one run's requests, named so inside the object that states the run's figures
_LISTED = re.compile(r"(?i)(?:raw|raw_?results|requests|request_?(?:results|records|log|details)|per_?requests?|"
                     r"individual(?:_?(?:requests|results|responses))?|responses|calls|details)")
_LATENCIES = ("e2e_latency_avg_ms", "latency_avg_ms")
_E2E = re.compile(r"^latency_(?=(?:avg|p\d+)_ms$)")  # a run of requests: its stated latency is their end-to-end
_TIMED = ("ttft_avg_ms", *_LATENCIES)
_PER_REQUEST = {"ttft_avg_ms", *_LATENCIES, "duration_s", "output_tokens", "energy_missing_reason",
                "throughput_derivation"}
_RATE_UNITS = ("tokens/s", "items/s", "requests/s")
# what one request's row states: its latencies and its lengths, never a rate or an energy
_REQUEST_FIGURES = {"ttft_avg_ms", *_LATENCIES, "duration_s", "output_tokens", "prompt_tokens_mean", "tpot_avg_ms",
                    "itl_avg_ms"}
_BOOLEAN = {"true", "false"}


@dataclass(frozen=True)
class RequestRows:
    """What the rows of a table of requests say besides their figures: the column naming them, each run's request
    lines in order, the failed ones with what their status says, and the times the rows give (s)."""

    column: str
    groups: tuple[tuple[int, ...], ...]
    failed: dict[int, str]
    times: dict[int, float]
    times_are: str  # 'sent' | 'ended' | 'either' | '' (no times)
    time_column: str

    timed_from: tuple[str, ...] = ()  # the time columns a request's latencies were computed from

    @property
    def read(self) -> tuple[str, ...]:
        """The columns read as the requests' names and times."""
        return (self.column, *((self.time_column,) if self.time_column else ()), *self.timed_from)


def _name(header: str) -> str:
    return plain(header.strip()).replace(" ", "_").split(".")[-1]


def listed_requests(doc: dict[str, Any]) -> tuple[str, dict[str, Any]] | None:
    """(the list's key, the object's other members) when a JSON object states a run's figures beside the list of
    that run's requests (`{"cell": {...}, "p50_s": 0.85, "output_tps": 2010, "raw": [{latency_s, ttft_s, ...}]}`):
    the object's one list of records (`table_records.record_list`) is named for requests (`raw`, `requests`,
    `per_request`, `responses`), holds at least MIN_REQUESTS records, and the object has a figure of its own. None
    for any other object."""
    found = record_list(doc)
    if found is None or len(found[1]) < MIN_REQUESTS:
        return None
    rest = {str(k): v for k, v in doc.items() if k != found[0]}
    if not _LISTED.fullmatch(found[0]) and (_REPEATS.fullmatch(found[0]) or not _summarises(rest, found[1])):
        return None  # a list named 'runs' or 'trials' holds repeats of the setup, each a run of its own
    return (found[0], rest) if has_figure(list(flatten(rest))) else None


_REPEATS = re.compile(r"(?i)(?:runs?|trials?|repeats?|repetitions?|reps?|iterations?|iters?|rounds?)")
_STAT = re.compile(r"(?i)^(?:avg|mean|average|median|p50|p9[059]|total|sum)_|_(?:avg|mean|average|median|p50|p9[059])$")


def _summarises(rest: dict[str, Any], records: list[Any]) -> bool:
    """Whether an object states a statistic of a figure its records each give (`avg_ttft_seconds` beside records of
    `ttft_seconds`): the records are the items of the one run the object sums up, whatever its list is named."""
    keys = {str(k) for r in records[:50] if isinstance(r, dict) for k in r}
    return any(_STAT.sub("", k) in keys for k in rest if _STAT.search(k))


def _cue(header: list[str], rows: Rows, columns: Columns, timed: bool) -> tuple[int, str] | None:
    for i, h in enumerate(header):
        if i in columns and columns[i][0].key != "repeat":
            continue
        name, cells = _name(h), [cell(r, i) for _, r in rows]
        if not all(cells):
            continue
        if _REQUEST.fullmatch(name) or (timed and _ID.fullmatch(name)):
            return i, "request"
        if _WORKER.fullmatch(name) and len(cells) >= 3 * len(set(cells)):
            return i, "worker"
    return _succeeded(header, rows, columns) or _stamped(header, rows, columns)


def _succeeded(header: list[str], rows: Rows, columns: Columns) -> tuple[int, str] | None:
    """A table of one request per row that no column names: an `ok` / `success` column of True / False on every row
    beside nothing but a request's own figures (`ok, ttft_s, total_s, output_tokens, tpot_s`), with no label, rate or
    energy that a table of runs states."""
    status = status_column(columns)
    if status is None or _name(header[status]).lower() not in OK_COLUMNS or not _own_figures_only(columns, status):
        return None
    said = {cell(r, status).strip().lower() for _, r in rows}
    return (status, "succeeded") if said <= _BOOLEAN else None


def _own_figures_only(columns: Columns, but: int | None = None) -> bool:
    """Whether a table reads nothing but a request's own figures (its latencies and lengths): no label, rate or
    energy that a table of runs states."""
    return not any(f.section != "metrics" and i != but for i, (f, _) in columns.items()) and all(
        f.key in _REQUEST_FIGURES for f, _ in columns.values() if f.section == "metrics")


def _stamped(header: list[str], rows: Rows, columns: Columns) -> tuple[int, str] | None:
    """A log of one run's items that no column names: a time on every row, rising row after row (`timestamp`,
    epoch seconds), beside nothing but each item's own figures (`latency_ms`), over MIN_STAMPED rows or more."""
    if len(rows) < MIN_STAMPED or not _own_figures_only(columns):
        return None
    at = _times(header, rows, columns)[1]
    if at is None:
        return None
    times = [t for _, r in rows if (t := _seconds(cell(r, at), header[at])) is not None]
    rising = len(times) == len(rows) and all(b >= a for a, b in zip(times, times[1:], strict=False))
    return (at, "stamped") if rising and times[-1] > times[0] else None


def _seconds(text: str, header: str) -> float | None:
    """A time cell in seconds: a number (ms where the header says so), or an ISO date-time."""
    try:
        value = float(text)
    except ValueError:
        try:
            return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp()
        except ValueError:
            return None
    if not math.isfinite(value):
        return None
    return value / 1e3 if _name(header).endswith("_ms") or value > 1e11 else value  # epoch ms: 13 digits


def _times(header: list[str], rows: Rows, columns: Columns) -> tuple[str, int | None]:
    """Which times the rows give (sent, ended, either: not said) and their column."""
    for kind, pattern in (("sent", _SENT), ("ended", _ENDED), ("either", _EITHER)):
        if (i := _time_column(header, rows, columns, pattern)) is not None:
            return kind, i
    return "", None


def names_request_times(cells: list[str]) -> bool:
    """Whether a header names a request's send time and its first-token or end time (`id,start,first_token,end`):
    a table of request times, whose latencies `timed_requests` computes."""
    names = [_name(c) for c in cells[:200]]
    return any(_SENT.fullmatch(n) for n in names) and any(_FIRST.fullmatch(n) or _ENDED.fullmatch(n) for n in names)


def _time_column(header: list[str], rows: Rows, columns: Columns, pattern: re.Pattern[str]) -> int | None:
    return next((i for i, h in enumerate(header) if i not in columns and pattern.fullmatch(_name(h)) and all(
        _seconds(cell(r, i), h) is not None for _, r in rows if cell(r, i))), None)


def timed_requests(conv: Conversion, header: list[str], rows: Rows, columns: Columns
                   ) -> tuple[list[str], Rows, Columns, bool]:
    """A table of request times only (`start, first_token, end`): each row's TTFT (first token - sent) and end-to-end
    latency (end - sent) added as columns of their own, said, and True; any other table as it is, and False."""
    if len(rows) < MIN_REQUESTS or any(f.key in (*_TIMED, "duration_s") for f, _ in columns.values()):
        return header, rows, columns, False
    sent = _time_column(header, rows, columns, _SENT)
    derived = [(name, key, i) for name, key, pattern in (("TTFT (s)", "ttft_avg_ms", _FIRST),
                                                          ("end-to-end latency (s)", "e2e_latency_avg_ms", _ENDED))
               if (i := _time_column(header, rows, columns, pattern)) is not None]
    if sent is None or not derived:
        return header, rows, columns, False
    header, columns = list(header), dict(columns)
    out: Rows = [(n, list(row)) for n, row in rows]
    for name, key, at in derived:
        columns[len(header)] = (Field(key, "ms"), units.unit("s"))
        header.append(name)
        for n, row in out:
            t0, t1 = _seconds(cell(row, sent), header[sent]), _seconds(cell(row, at), header[at])
            if t0 is not None and t1 is not None and t1 < t0:
                raise conv.fail(f"line {n}: {header[at][:40]}", f"{cell(row, at)[:30]} is before {header[sent][:40]} "
                                f"{cell(row, sent)[:30]}: a request cannot answer before it is sent")
            row.append(repr(t1 - t0) if t0 is not None and t1 is not None else "")
    conv.warn(f"{', '.join(header[at][:30] for _, _, at in derived)} read with {header[sent][:30]} as each "
              f"request's {' and '.join(name.split(' (')[0] for name, _, _ in derived)} (the time after it was sent)")
    return header, out, columns, True


def request_rows(conv: Conversion, header: list[str], rows: Rows, columns: Columns, *, timed: bool = False,
                 listed: str | None = None) -> tuple[Rows, RequestRows | None]:
    """The rows without the failed requests (kept in the record), with the column naming the requests and their
    times blanked (so no later step reads them as setups), and what they say; the rows as they are, and None, for
    any other table. `timed`: the table is one of request times (`timed_requests`), whose rows are requests even
    when only a bare `id` names them; `listed`: the key of the list of requests the rows came from
    (`listed_requests`), which names them requests when no column does."""
    figures = {i: f for i, (f, _) in columns.items() if f.section == "metrics"}
    latencies = [i for i, f in figures.items() if f.key in (*_TIMED, "duration_s")]
    found = _cue(header, rows, columns, timed) if len(rows) >= MIN_REQUESTS and latencies else None
    if found is None and listed is not None and len(rows) >= MIN_REQUESTS and latencies:
        found = (-1, "list")
    if found is None or summarised(header, columns):
        return rows, None
    cue, kind = found
    labels = [i for i, (f, _) in columns.items() if f.section != "metrics" and f.key not in ("status", "repeat")]
    own = own_lengths(rows, columns)
    sweeps = [] if kind == "list" else [i for i in labels if i not in own]  # one object's list: one run's
    groups: dict[tuple[str, ...], list[int]] = {}
    for n, row in rows:
        groups.setdefault(tuple(cell(row, i) for i in sweeps), []).append(n)
    by_line = dict(rows)
    name = f"{listed}[]" if cue < 0 else header[cue]
    if kind == "request" and any(len({cell(by_line[n], cue) for n in g}) < len(g) for g in groups.values()):
        return rows, None  # an id that repeats within a setup names no request
    status = failures(header, rows, columns)
    failed = dict(status[1]) if status is not None else {}
    times_are, at = _times(header, rows, columns)
    times = {n: t for n, row in rows if at is not None and (t := _seconds(cell(row, at), header[at])) is not None}
    blanked = [cue] + ([at] if at is not None else [])  # the list's cue (-1) blanks no column
    if kind in ("list", "succeeded", "stamped"):  # one run's requests: a column no field reads (a question, its
        blanked += [i for i in range(len(header)) if i not in columns]  # answer) is the request's, never a setup
    kept = [(n, [("" if i in blanked else c) for i, c in enumerate(row)]) for n, row in rows if n not in failed]
    who = {"request": f"{name[:30]} names each request",
           "succeeded": f"each row says whether one request succeeded ({name[:30]}) and gives its own latencies and "
                        "lengths, nothing that sets runs apart",
           "stamped": f"each row is one item, timed by {name[:30]} rising row after row, with its own latencies and "
                      "nothing that sets runs apart",
           "list": f"{name[:30]}: the object's list of the requests "
           "of the run whose figures it states"}.get(kind, f"{name[:30]} names the load generator's worker that sent "
                                                            "each")
    conv.warn(f"rows read as requests ({who}): {len(groups)} run"
              f"{'s' if len(groups) > 1 else ''} of {', '.join(str(len(g)) for g in list(groups.values())[:6])} "
              f"requests, each run's {_kinds({figures[i].key for i in latencies})} its requests' (mean and "
              "percentiles)")
    timed_from = tuple(h for i, h in enumerate(header) if timed and i not in columns and (
        _FIRST.fullmatch(_name(h)) or _ENDED.fullmatch(_name(h))))
    return kept, RequestRows(name, tuple(tuple(g) for g in groups.values()), failed, times, times_are,
                             header[at] if at is not None else "", timed_from)


def _kinds(keys: set[str]) -> str:
    """The latencies a table of requests gives, as a person reads them."""
    e2e = bool(keys - {"ttft_avg_ms"})
    if "ttft_avg_ms" in keys:
        return "TTFT, end-to-end latency and TPOT" if e2e else "TTFT"
    return "end-to-end latency (no TTFT: the answers were not streamed, or their first tokens not timed)"


def _request(index: int, run: dict[str, Any] | None, why: str | None) -> jr.Request:
    if run is None or why is not None:
        return jr.Request(index, "failed", error_class=(why or "no latency in the row")[:200])
    m, config = run["metrics"], run["config"]
    e2e = next((m[k] for k in _LATENCIES if k in m), None)
    if e2e is None and "duration_s" in m:
        e2e = m["duration_s"] * 1e3
    prompt = config.get("prompt_tokens_requested")
    if e2e is None and m.get("ttft_avg_ms") is None:
        return jr.Request(index, "failed", error_class="no latency in the row")
    return jr.Request(index, "ok", ttft_ms=m.get("ttft_avg_ms"), e2e_ms=e2e,
                      output_tokens_client=m.get("output_tokens"),
                      prompt_tokens_client=int(prompt) if prompt is not None else None)


def _window(found: RequestRows, lines: tuple[int, ...], requests: list[jr.Request]) -> tuple[float | None, str]:
    """The run's window in s (first sent to last finished) from the rows' times, and how it was had."""
    timed = [(found.times[n], r.e2e_ms / 1e3) for n, r in zip(lines, requests, strict=True)
             if n in found.times and r.status == "ok" and r.e2e_ms is not None]
    if len(timed) < 2:
        return None, f"the rows give no times with their latencies ({found.time_column or 'no time column'})"
    if found.times_are == "sent":
        return max(t + e for t, e in timed) - min(t for t, _ in timed), f"{found.time_column} (sent) + latency"
    if found.times_are == "ended":
        return max(t for t, _ in timed) - min(t - e for t, e in timed), f"{found.time_column} (finished) - latency"
    span, longest = max(t for t, _ in timed) - min(t for t, _ in timed), max(e for _, e in timed)
    if span <= 0 or longest > WINDOW_TOLERANCE * span:
        return None, (f"{found.time_column} does not say whether a request was sent or finished then, and one "
                      f"request's latency ({longest:.3g} s) is more than {WINDOW_TOLERANCE:.0%} of the rows' span "
                      f"({span:.4g} s)")
    window = span + statistics.median(e for _, e in timed)
    return window, (f"the span of {found.time_column} ({span:.4g} s) plus the median latency: {found.time_column} "
                    f"does not say whether a request was sent or finished then, so the window is between {span:.4g} "
                    f"and {span + longest:.4g} s")


def as_runs(conv: Conversion, found: RequestRows, runs: list[dict[str, Any]], lines: list[int],
            stated: dict[str, Any] | None = None) -> list[dict[str, Any]]:
    """One run per group of request rows, its requests attached and its figures theirs. `stated`: the figures the
    file states of the one run (an object's own, beside its list of requests): kept where the requests give none
    (a rate over a window the requests do not record), replaced and named where they disagree."""
    by_line = dict(zip(lines, runs, strict=True))
    out: list[dict[str, Any]] = []
    dropped: set[str] = set()
    for group in found.groups:
        first = next((by_line[n] for n in group if n in by_line), None)
        if first is None:
            continue  # every request of the setup failed: said by the rows' warning, no run to hold them
        requests = [_request(i, by_line.get(n), found.failed.get(n)) for i, n in enumerate(group)]
        own = {k for n in group for k in by_line.get(n, {}).get("metrics", {})} - _PER_REQUEST
        dropped |= own
        config = {k: v for k, v in first["config"].items() if k not in LENGTHS
                  or len({by_line[n]["config"].get(k) for n in group if n in by_line}) == 1}
        window, how = _window(found, group, requests)
        completed = sum(r.status in jr.COMPLETED for r in requests)
        metrics: dict[str, Any] = {"energy_missing_reason": first["metrics"].get("energy_missing_reason"),
                                   **{_E2E.sub("e2e_latency_", k): v for k, v in (stated or {}).items()}}
        notes = [f"general table: {len(group)} rows, one per request ({found.column[:40]})"]
        if window is not None and window > 0:
            metrics.update(duration_s=window, requests_per_s=completed / window)
            tokens = [r.output_tokens for r in requests if r.status == "ok"]
            if tokens and all(t is not None for t in tokens):
                metrics["tokens_per_s"] = sum(t for t in tokens if t is not None) / window
                metrics["throughput_derivation"] = "output tokens of the completed requests / the run's window"
            notes.append(f"window {window:.4g} s: {how}")
        else:
            notes.append(f"no request rate or token rate: {how}")
        for key in sorted(own):  # kept for the reader in the notes, never as the run's figure
            values = [m[key] for n in group if isinstance(m := by_line.get(n, {}).get("metrics", {}), dict)
                      and isinstance(m.get(key), (int, float))]
            if values:
                notes.append(f"{key} of each request, not the run's: median {statistics.median(values):.4g} over "
                             f"{len(values)} requests")
        run = {**first, "run_id": conv.run_id(len(out)), "config": config,
               "metrics": {k: v for k, v in metrics.items() if v is not None}, "notes": "; ".join(notes)}
        attach(run, requests, "the table")
        out.append(run)
    if dropped:
        conv.warn(f"{', '.join(sorted(dropped))[:200]}: each request's own figure (a rate over its own latency is not "
                  "the run's): not stored; the run's rates are its requests and tokens over its window")
    return out
