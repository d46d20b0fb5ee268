"""Data functions for the pages: each opens the store read-only for its read, returns polars frames or
typed records, and is cached on the store's data version (`reads`), so a run or an import made outside the
app (the CLI, another tab) shows on the next rerun. The store is located once (db.location): a DuckDB file
or a team store, read through the same queries; a team store is read at one snapshot per rerun, and its
reads have its time limit.

This module only reads. Writes are `prepare()`'s (called by app.py on every rerun): at the server's first
rerun it creates, migrates and seeds the database, and whenever files wait in the inbox or a killed sweep
left runs behind it ingests them, through the import service (briefly read-write; when another process holds
the database it tries again on the next rerun). What a person changes from a page goes through
`explorer.edits`.
"""

from __future__ import annotations

import functools
import os
import threading
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from typing import Any, Concatenate, ParamSpec, TypeVar

import polars as pl
import streamlit as st
from streamlit.runtime.scriptrunner import get_script_run_ctx

import db.regrade as regrade
import db.requests as db_requests
from db import Store, labels, queries
from db.connection import data_version
from db.lake import AS_OF_ENV_VAR, DATA_ENV_VAR, STORE_ENV_VAR
from db.location import as_team_store, locate
from db.queries import HEADLINE, overview_counts, runs_for_chart
from db.store_location import StoreLocation
from decision.markdown import md
from decision.money import CostSettings, Rates
from decision.text import cite, cited
from explorer import machine
from ingest import drain_inbox, housekeeping_pending, open_store, recover_killed_sweeps
from ingest.device_names import CatalogEntry
from ingest.inbox import pending
from joulebench.errors import DatabaseBusyError, DatabaseError, JouleBenchError, LabelError
from joulebench.labels import describe_not_stated
from joulebench.paths import resolve_db_path

T = TypeVar("T")
P = ParamSpec("P")


TEAM_STORE_REFRESH_S = 10  # a team store's pages reread it at most this often


def location(path: str) -> StoreLocation:
    """The store a page's `path` names (db_path()), located once per process (db.location.locate)."""
    return _located(path, os.environ.get(DATA_ENV_VAR) or None)


@functools.lru_cache(maxsize=16)
def _located(path: str, data_path: str | None) -> StoreLocation:
    return locate(path, data_path)


def db_path() -> str:
    """The store the pages read, as the name they pass to the data functions: $JOULEBENCH_STORE when it is a
    team store (a DuckLake URL), else the DuckDB file."""
    store = os.environ.get(STORE_ENV_VAR)
    try:
        if store and as_team_store(location(store)) is not None:
            return store
    except DatabaseError:
        return store or ""  # a team store's URL that cannot be used (a password in it): the page's first read says why
    return str(resolve_db_path(None))


def team_store_notice(path: str) -> bool:
    """On a store nothing but `joulebench push` writes (a team store), say so here (and how runs get in);
    True when it is one."""
    try:
        reason = location(path).read_only_reason
    except DatabaseError as e:  # a team store's URL that cannot be used: why, and nothing else on the page
        show_error(e)
        return True
    if not reason:
        return False
    st.info(md(reason[0].upper() + reason[1:] + "."))
    return True


_SNAPSHOT = "snapshot "
_PINNED = "team_store_snapshot"  # session state: (store, snapshot) this rerun reads


def version(path: str) -> str:
    """Changes whenever the database changes (file and WAL stat; no connection). A team store is read at
    one snapshot per rerun, pinned by prepare(): every data function of a page reads the same snapshot,
    whatever a push commits meanwhile (a new one is looked for at most every TEAM_STORE_REFRESH_S)."""
    store = location(path)
    if as_team_store(store) is None:
        return data_version(store.file)
    pinned = st.session_state.get(_PINNED) if get_script_run_ctx(suppress_warning=True) else None  # explorer.warm: None
    snapshot = pinned[1] if pinned and pinned[0] == path else team_snapshot(path)[0]
    return f"{_SNAPSHOT}{snapshot}"


def team_snapshot(path: str) -> tuple[int, Any]:
    """The snapshot a team store is read at: $JOULEBENCH_STORE_AS_OF (`app --as-of`), else its newest; with
    its time."""
    as_of = os.environ.get(AS_OF_ENV_VAR, "").strip()
    if as_of and not as_of.isdigit():
        raise DatabaseError(f"${AS_OF_ENV_VAR}={as_of[:40]!r}: not a snapshot number; `joulebench db snapshots` "
                            "lists them")
    return _team_snapshot(path, int(as_of) if as_of else None, int(time.time() // TEAM_STORE_REFRESH_S))


@st.cache_data(max_entries=8, show_spinner=False)
def _team_snapshot(path: str, as_of: int | None, bucket: int) -> tuple[int, Any]:
    with Store.open_reading(location(path), as_of=as_of) as store:
        return store.snapshot_id or 0, store.snapshot_time()


def store_line(path: str) -> str:
    """Where the page's numbers come from, as a sentence that starts with the store's kind word (as
    `joulebench db info` prints it): the database file, or the team store and the snapshot read (pinned with
    `app --as-of` for an audit, else the newest)."""
    store = location(path)
    kind = f"Store kind: {store.kind}. "
    if as_team_store(store) is None:
        return f"{kind}Database: {md(store.file.name)}, on the machine that runs this app."
    snapshot, at = team_snapshot(path)
    which = "pinned for an audit (`joulebench app --as-of`)" if os.environ.get(AS_OF_ENV_VAR) else "the newest"
    when = f", committed {at:%Y-%m-%d %H:%M} UTC" if at else ""
    return (f"{kind}Team store {md(store.shown)}, read-only, as of snapshot {snapshot}{when}: {which}. "
            "`joulebench db snapshots` lists every push by machine.")


def _open(path: str, db_version: str) -> Store:
    """The store at the version a page read: a team store at its pinned snapshot, a file as it is."""
    store = location(path)
    as_of = None if as_team_store(store) is None else int(db_version.removeprefix(_SNAPSHOT))
    return Store.open_reading(store, as_of=as_of)


@dataclass
class _Kept:
    version: str
    store: Store
    lock: threading.Lock  # held by the one read using it


_kept: dict[str, _Kept] = {}  # a team store's path -> its connection at the snapshot read last
_kept_lock = threading.Lock()


@contextmanager
def _reading(path: str, db_version: str) -> Iterator[Store]:
    """The store at `db_version` for one read. A file is opened and closed (cheap; an open connection would
    keep its lock from the processes that write; so would one to a team store whose catalog is a DuckDB file).
    A team store's snapshot never changes, and opening one attaches its catalog (0.5-1 s, paid by each of the
    five reads a page's first visit makes), so the connection a read opened at a snapshot is kept for the next
    reads at the same snapshot, one read at a time (a read that finds it in use opens its own); one at a newer
    snapshot replaces it, and a read that fails closes the connection it used."""
    team = as_team_store(location(path))
    if team is None or team.catalog == "duckdb":  # a DuckDB catalog file: kept open, it would refuse every push
        with _open(path, db_version) as store:
            yield store
        return
    with _kept_lock:
        kept = _kept.get(path)
        if kept is None or kept.version != db_version or not kept.lock.acquire(blocking=False):
            kept = None
    if kept is None:
        store = _open(path, db_version)
        try:
            yield store
        except BaseException:
            store.close()
            raise
        _keep(path, _Kept(db_version, store, threading.Lock()))
        return
    try:
        yield kept.store
    except BaseException:
        with _kept_lock:
            if _kept.get(path) is kept:
                del _kept[path]
        kept.store.close()
        raise
    finally:
        kept.lock.release()


def _keep(path: str, new: _Kept) -> None:
    """Keep `new` for the next reads of `path` (the connection it replaces is closed once no read uses it; `new`
    is closed instead when one at its snapshot is kept already)."""
    with _kept_lock:
        old = _kept.get(path)
        if old is not None and old.version == new.version:
            new.store.close()
            return
        _kept[path] = new
    if old is not None:
        with old.lock:
            old.store.close()


def reads(max_entries: int, *, shared: bool = False
          ) -> Callable[[Callable[Concatenate[Store, P], T]], Callable[Concatenate[str, P], T]]:
    """The one cache of the data functions: `read(store, *args)` becomes `read(path, *args)`, which opens the
    store read-only at its data version (`version`), runs `read` within the store's time limit, and keeps the
    answer (at most `max_entries`) keyed on the path, the arguments and that version. `shared`: every rerun
    gets the one answer kept, not a copy (for a large polars frame, which nothing changes in place: copying
    100,000 runs through pickle took 0.4 s to keep and 0.2 s at each rerun)."""
    def wrap(read: Callable[Concatenate[Store, P], T]) -> Callable[Concatenate[str, P], T]:
        def at_version(path: str, db_version: str, *args: Any, **kwargs: Any) -> T:
            with _reading(path, db_version) as store, store.time_limited():
                return read(store, *args, **kwargs)

        # Streamlit keys a cache on the function's module and name: one per data function
        at_version.__module__, at_version.__name__ = read.__module__, f"_{read.__name__}"
        at_version.__qualname__ = f"_{read.__qualname__}"
        cache = (st.cache_resource if shared else st.cache_data)(max_entries=max_entries, show_spinner=False)(
            at_version)

        def load(path: str, /, *args: P.args, **kwargs: P.kwargs) -> T:
            return cache(path, version(path), *args, **kwargs)

        load.__module__, load.__name__, load.__qualname__ = read.__module__, read.__name__, read.__qualname__
        load.__doc__ = read.__doc__
        return load
    return wrap


@st.cache_resource(show_spinner=False)
def _prepared(path: str) -> bool:
    """Create, migrate and seed; a regrade of many runs is left to the grader (db.regrade), started here, so
    the first page does not wait for it."""
    with Store.open(path, regrade_later=True) as store:  # ingest.open_store's work, with the regrade deferred
        if store.regrade_pending:
            regrade.start(store.path)
        recover_killed_sweeps(store)
        drain_inbox(store)
    return True


@reads(max_entries=4)
def regrade_marker(store: Store) -> tuple[str, Any] | None:
    """Why and since when this store waits for a regrade (db.regrade), if it does."""
    return regrade.marked(store.con)


def regrade_waiting(path: str) -> regrade.Pending | None:
    """The regrade a DuckDB file waits for or is under way (None when none, and for a team store, which is
    never regraded here); read through the cache (`regrade_marker`), so explorer.warm can read it first."""
    if as_team_store(location(path)) is not None:
        return None
    return regrade.described(regrade_marker(path), location(path).file)


def regrade_note(path: str) -> None:
    """While every run's grade is being recomputed, say so above the page (the page shows the grades stored
    before, or 'not graded'); nothing otherwise."""
    waiting = regrade_waiting(path)
    if waiting is None:
        return
    (st.info if waiting.running else st.warning)(md(waiting.note()), icon=":material/pending:")


def made_ready(path: str) -> None:
    """The store `path` made ready once per server (a file: created, migrated, seeded; a team store is only
    read); for explorer.warm, before any page runs."""
    if as_team_store(location(path)) is None:
        _prepared(path)


def prepare() -> None:
    """Create/migrate/seed once per server; ingest waiting files whenever there are some. A team store
    is only read: the snapshot this rerun reads is pinned."""
    try:
        path = db_path()
        if as_team_store(location(path)) is not None:
            snapshot, _ = team_snapshot(path)
            st.session_state[_PINNED] = (path, snapshot)
            return
        _prepared(path)
        if housekeeping_pending(path):
            open_store(path).close()
        regrade_note(path)
    except DatabaseBusyError:
        pass  # another process writes now; the pages read when it is done, the inbox waits
    except JouleBenchError as e:
        show_error(e)
        st.stop()


def show_error(e: JouleBenchError) -> None:
    """The project's error on a page, in the same words and the same box on every page: its message, which
    names the store and what to do (a busy database: the process that holds it), never a traceback."""
    st.error(md(e.format_message()))


@contextmanager
def errors_shown() -> Iterator[None]:
    """Around each page's run (app.py), so no page can forget it: a store that is busy (another process holds
    the database), damaged or unreadable, at whichever of the page's reads it shows, ends the page with
    show_error's message instead of Streamlit's error page (db/ turns DuckDB's errors into these)."""
    try:
        yield
    except JouleBenchError as e:
        show_error(e)


def or_stop(load: Callable[..., T], *args: Any) -> T:
    """Call a data function; on the project's own error show it (show_error) and stop the page."""
    try:
        return load(*args)
    except JouleBenchError as e:
        show_error(e)
        st.stop()
        raise  # st.stop() raises; this line only tells type checkers so


@dataclass(frozen=True)
class Overview:
    store: str  # where: 'local file PATH' / 'team store URL' (db.location: the kind word first)
    kind: str  # the store's kind word, as `joulebench db info` prints it
    runs: int
    devices: int
    findings: int
    inbox_pending: int
    runs_by_source_kind: pl.DataFrame
    runs_by_device: pl.DataFrame
    sources: pl.DataFrame
    workloads: pl.DataFrame
    intake: pl.DataFrame


@reads(max_entries=8)
def overview(store: Store) -> Overview:
    info = store.info()
    waiting = len(pending(store.path)) if as_team_store(store.location) is None else 0  # a team store: no inbox
    return Overview(store.location.describe(), store.kind, info.runs, info.devices, info.findings, waiting,
                    info.runs_by_source_kind, info.runs_by_device, info.sources, overview_counts(store), info.intake)


@reads(max_entries=8)
def token_devices(store: Store) -> pl.DataFrame:
    """The devices with the most configurations measured in J per output token (db.queries.token_devices)."""
    return queries.token_devices(store)


@reads(max_entries=8)
def headline_runs(store: Store) -> pl.DataFrame:
    return cited(runs_for_chart(store, HEADLINE))


@reads(max_entries=4, shared=True)
def runs(store: Store) -> pl.DataFrame:
    return cited(queries.runs_table(store))


@reads(max_entries=4)
def configurations(store: Store) -> pl.DataFrame:
    """One row per configuration: what it is, its runs, trust grade and reasons, and per figure the
    aggregate of its repeats stored at ingest (`<metric>_n`, `_mean`, `_ci95_low`, `_ci95_high`,
    `_std`, `_cov_pct`); `decision.aggregates.stored(frame, metric)` picks one figure."""
    return cited(queries.configurations(store))


@reads(max_entries=64)
def configuration(store: Store, config_key: str) -> dict | None:
    """One configuration's row of `configurations` (None when the key is unknown)."""
    frame = cited(queries.configurations(store, "r.config_key = ?", [config_key]))
    return frame.row(0, named=True) if frame.height else None


@reads(max_entries=4, shared=True)
def findings(store: Store) -> pl.DataFrame:
    return cited(queries.findings(store))


@dataclass(frozen=True)
class RunDetail:
    run: dict | None
    samples: pl.DataFrame
    steps: pl.DataFrame
    supplied: pl.DataFrame  # labels that did not come from the file: label, value, origin, who, when, via


@reads(max_entries=64)
def run_detail(store: Store, run_id: str) -> RunDetail:
    run = queries.run_detail(store, run_id)
    if run is not None and run.get("citation"):
        run = {**run, "citation": cite(run["citation"])}
    return RunDetail(run, queries.power_samples(store, run_id), queries.step_times(store, run_id),
                     queries.run_labels(store, run_id))


@reads(max_entries=2, shared=True)
def slo_frame(store: Store) -> pl.DataFrame:
    """Every counted request's columns that goodput holds to a limit (db.requests.slo_frame; no gap lists), kept
    once for every session (shared: 1,000,000 requests are not copied at each rerun), so a new SLO is only
    computed (decision.goodput), never read again until the store changes."""
    return db_requests.slo_frame(store)


@reads(max_entries=8, shared=True)
def requests_of(store: Store, run_id: str) -> pl.DataFrame:
    """One run's stored requests, every column with the gap lists (db.requests.read); empty when it keeps none."""
    return db_requests.read(store, [run_id])


@dataclass(frozen=True)
class SourceGaps:
    """A source and what its runs do not state."""

    source_id: int
    file_name: str
    format: str
    runs: int
    not_stated: dict[str, int]  # label -> runs that do not state it

    def describe(self) -> str:
        return describe_not_stated(self.not_stated, self.runs)


@reads(max_entries=64)
def source_gaps(store: Store, source_id: int) -> SourceGaps | None:
    """None when there is no such source (e.g. a queued file not ingested yet)."""
    try:
        ref = labels.resolve_source(store.con, str(source_id))
    except LabelError:
        return None
    return SourceGaps(ref.source_id, ref.file_name, ref.format, ref.runs, labels.gaps(store.con, ref.source_id))


@reads(max_entries=4, shared=True)
def devices(store: Store) -> tuple[pl.DataFrame, pl.DataFrame]:
    return cited(queries.devices(store)), cited(queries.power_modes(store))


def devices_here(path: str) -> set[str]:
    """The catalog entries this machine is (explorer.machine), and those its own runs were measured on."""
    catalog, _ = devices(path)
    entries = [CatalogEntry(r["device_name"], r.get("tdp_w"), r.get("memory_gb"))
               for r in catalog.select([c for c in ("device_name", "tdp_w", "memory_gb") if c in catalog.columns])
               .iter_rows(named=True)]
    mine = runs(path).filter(pl.col("source_kind") == "local")["device_name"].unique().to_list()
    return machine.devices_here(entries, mine)


def changed_rows(before: pl.DataFrame, after: pl.DataFrame) -> pl.DataFrame:
    """Rows of `after` (same order as `before`) where any cell differs, nulls compared as values."""
    if before.height != after.height:
        return after
    differs = pl.Series([False] * after.height)
    for column in after.columns:
        differs = differs | after[column].ne_missing(before[column].cast(after[column].dtype, strict=False))
    return after.filter(differs)


@reads(max_entries=4)
def device_history(store: Store) -> pl.DataFrame:
    return queries.device_edits(store)


@reads(max_entries=4, shared=True)
def exchange_rates(store: Store) -> pl.DataFrame:
    return queries.exchange_rates(store)


def rates(path: str) -> Rates:
    return Rates.from_frame(exchange_rates(path))


def currencies(path: str) -> list[str]:
    """Currencies a view can be shown in: those of the exchange rates and the catalog prices."""
    catalog, _ = devices(path)
    found = set(rates(path).currencies()) | set(catalog["price_currency"].drop_nulls().to_list()) | {"USD"}
    return sorted(found)


def selection_csv(frame: pl.DataFrame) -> bytes:
    """A selection as CSV for download: lists of text (flags, a grade's reasons, labels not stated)
    joined with '; ', other lists left out, text cells a spreadsheet would run as formulas defused."""
    from db.export import defuse_formulas

    lists = [c for c, t in frame.schema.items() if isinstance(t, pl.List)]
    texts = [c for c in lists if frame.schema[c] == pl.List(pl.String)]
    joined = frame.with_columns([pl.col(c).list.join("; ") for c in texts])
    return defuse_formulas(joined.drop([c for c in lists if c not in texts])).write_csv().encode()


def selection_document(path: str, run_ids: tuple[str, ...]) -> bytes:
    """A result file (gzip) of the given runs, for download."""
    import gzip
    import json

    from db.export import Selection, build_document

    with _open(path, version(path)) as store, store.time_limited():
        document = build_document(store, Selection(run_ids=run_ids))
    return gzip.compress(json.dumps(document).encode(), mtime=0)


# --- Power settings page (issue 13) ---------------------------------------------------------------

@reads(max_entries=4)
def power_setting_choices(store: Store) -> pl.DataFrame:
    return queries.power_setting_choices(store)


@reads(max_entries=16)
def power_settings(store: Store, device: str, workload: str) -> Any:
    """The runs of `device` and `workload` at known power settings, as profiles (explorer.power_settings.Loaded)."""
    from explorer import power_settings

    return power_settings.load(store, power_settings.Selection(device, workload))


@reads(max_entries=16)
def best_settings(store: Store, device_workloads: tuple[tuple[str, str], ...], goal: str, eta: float,
                  settings: CostSettings, max_power_w: float | None, mode: str | None,
                  precision: str | None) -> pl.DataFrame:
    """Decide's "each device at its best setting for this goal": explorer.power_settings.best_settings
    for each (device, workload), one row per device; `settings` weigh the cost goal."""
    from explorer import power_settings
    from tuning import Constraints

    frames = []
    for device, workload in device_workloads:
        frame = power_settings.best_settings(store, [device], workload, goal, eta=eta, inputs=settings,
                                             constraints=Constraints(max_power_w), mode=mode, precision=precision)
        frames.append(frame.with_columns(pl.lit(workload).alias("workload")))
    return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()
