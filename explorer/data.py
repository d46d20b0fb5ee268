"""Data functions for the pages: each opens the store read-only for its query, returns polars
frames, and is cached on the database's data version, so a run or an import made outside the
app (the CLI, another tab) shows on the next rerun.

Only `prepare()` (called by app.py on every rerun) writes: at the server's first rerun it creates,
migrates and seeds the database, and whenever files wait in the inbox or a killed sweep left
runs behind it ingests them (briefly read-write; when another process holds the database it
tries again on the next rerun).
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable, Iterator
from contextlib import contextmanager
from dataclasses import dataclass
from pathlib import Path
from typing import Any, TypeVar

import polars as pl
import streamlit as st

from db import Store, labels, queries
from db.connection import data_version
from db.lake import AS_OF_ENV_VAR, READ_ONLY_MESSAGE, STORE_ENV_VAR, LakeUrl, is_lake, lake_data_path
from db.queries import HEADLINE, overview_counts, runs_for_chart
from explorer.markdown import md
from explorer.money import CostSettings, Rates
from explorer.text import cite, cited
from ingest import housekeeping_pending, open_store
from ingest.inbox import pending
from ingest.labels import label_source, label_values
from joulebench.errors import DatabaseBusyError, DatabaseError, JouleBenchError, LabelError
from joulebench.labels import LABEL_TITLES, describe_not_stated
from joulebench.paths import resolve_db_path

T = TypeVar("T")


TEAM_STORE_REFRESH_S = 10  # a team store's pages reread it at most this often


def db_path() -> str:
    """The store the pages read: $JOULEBENCH_STORE when it is a team store (a DuckLake URL), else the
    DuckDB file."""
    store = os.environ.get(STORE_ENV_VAR)
    return store if is_lake(store) and store else str(resolve_db_path(None))


def team_store_notice(path: str) -> bool:
    """On a team store, say it is read-only here (and how runs get in); True when it is one."""
    if not is_lake(path):
        return False
    st.info(md(READ_ONLY_MESSAGE[0].upper() + READ_ONLY_MESSAGE[1:] + "."))
    return True


_SNAPSHOT = "snapshot "
_PINNED = "team_store_snapshot"  # session state: (store, snapshot) this rerun reads


def version(path: str) -> str:
    """Changes whenever the database changes (file and WAL stat; no connection). A team store is read at
    one snapshot per rerun, pinned by prepare(): every data function of a page reads the same snapshot,
    whatever a push commits meanwhile (a new one is looked for at most every TEAM_STORE_REFRESH_S)."""
    if not is_lake(path):
        return data_version(Path(path))
    pinned = st.session_state.get(_PINNED)
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
    with Store.open_team_store(path, as_of=as_of) as store:
        return store.snapshot_id or 0, store.snapshot_time()


def store_line(path: str) -> str:
    """Where the page's numbers come from, as a sentence: the database file, or the team store and the
    snapshot read (pinned with `app --as-of` for an audit, else the newest)."""
    if not is_lake(path):
        return f"Database: {md(Path(path).name)}, on the machine that runs this app."
    snapshot, at = team_snapshot(path)
    which = "pinned for an audit (`joulebench app --as-of`)" if os.environ.get(AS_OF_ENV_VAR) else "the newest"
    when = f", committed {at:%Y-%m-%d %H:%M} UTC" if at else ""
    return (f"Team store {md(LakeUrl.parse(path, lake_data_path(None)).public_url)}, read-only, as of snapshot "
            f"{snapshot}{when}: {which}. `joulebench db snapshots` lists every push by machine.")


def _open(path: str, db_version: str) -> Store:
    """The store at the version a page read: a team store at its pinned snapshot, a file as it is."""
    if is_lake(path):
        return Store.open_team_store(path, as_of=int(db_version.removeprefix(_SNAPSHOT)))
    return Store.open_read_only(path)


@st.cache_resource(show_spinner=False)
def _prepared(path: str) -> bool:
    open_store(path).close()
    return True


def prepare() -> None:
    """Create/migrate/seed once per server; ingest waiting files whenever there are some. A team store
    is only read."""
    path = db_path()
    if is_lake(path):
        try:
            snapshot, _ = team_snapshot(path)
        except JouleBenchError as e:
            st.error(md(e.format_message()))
            st.stop()
        st.session_state[_PINNED] = (path, snapshot)
        return
    try:
        _prepared(path)
        if housekeeping_pending(path):
            open_store(path).close()
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
    db_path: str
    runs: int
    devices: int
    findings: int
    inbox_pending: int
    runs_by_source_kind: pl.DataFrame
    runs_by_device: pl.DataFrame
    sources: pl.DataFrame
    workloads: pl.DataFrame
    intake: pl.DataFrame


def overview(path: str) -> Overview:
    return _overview(path, version(path))


@st.cache_data(max_entries=8, show_spinner=False)
def _overview(path: str, db_version: str) -> Overview:
    with _open(path, db_version) as store:
        info = store.info()
        workloads = overview_counts(store)
    return Overview(str(info.path), info.runs, info.devices, info.findings, len(pending(info.path)),
                    info.runs_by_source_kind, info.runs_by_device, info.sources, workloads, info.intake)


def headline_runs(path: str) -> pl.DataFrame:
    return _headline_runs(path, version(path))


@st.cache_data(max_entries=8, show_spinner=False)
def _headline_runs(path: str, db_version: str) -> pl.DataFrame:
    with _open(path, db_version) as store:
        return cited(runs_for_chart(store, HEADLINE))


def runs(path: str) -> pl.DataFrame:
    return _runs(path, version(path))


@st.cache_data(max_entries=4, show_spinner=False)
def _runs(path: str, db_version: str) -> pl.DataFrame:
    with _open(path, db_version) as store:
        return cited(queries.runs_table(store))


def configurations(path: str) -> pl.DataFrame:
    """One row per configuration: what it is, its runs, trust grade and reasons, and per figure the
    aggregate of its repeats stored at ingest (`<metric>_n`, `_mean`, `_ci95_low`, `_ci95_high`,
    `_std`, `_cov_pct`); `explorer.aggregates.stored(frame, metric)` picks one figure."""
    return _configurations(path, version(path))


@st.cache_data(max_entries=4, show_spinner=False)
def _configurations(path: str, db_version: str) -> pl.DataFrame:
    with _open(path, db_version) as store:
        return cited(queries.configurations(store))


def configuration(path: str, config_key: str) -> dict | None:
    """One configuration's row of `configurations` (None when the key is unknown)."""
    frame = _configuration(path, config_key, version(path))
    return frame.row(0, named=True) if frame.height else None


@st.cache_data(max_entries=64, show_spinner=False)
def _configuration(path: str, config_key: str, db_version: str) -> pl.DataFrame:
    with _open(path, db_version) as store:
        return cited(queries.configurations(store, "r.config_key = ?", [config_key]))


def findings(path: str) -> pl.DataFrame:
    return _findings(path, version(path))


@st.cache_data(max_entries=4, show_spinner=False)
def _findings(path: str, db_version: str) -> pl.DataFrame:
    with _open(path, db_version) as store:
        return cited(queries.findings(store))


@dataclass(frozen=True)
class RunDetail:
    run: dict | None
    samples: pl.DataFrame
    steps: pl.DataFrame
    supplied: pl.DataFrame  # labels that did not come from the file: label, value, origin, who, when, via


def run_detail(path: str, run_id: str) -> RunDetail:
    return _run_detail(path, run_id, version(path))


@st.cache_data(max_entries=64, show_spinner=False)
def _run_detail(path: str, run_id: str, db_version: str) -> RunDetail:
    with _open(path, db_version) as store:
        run = queries.run_detail(store, run_id)
        if run is not None and run.get("citation"):
            run = {**run, "citation": cite(run["citation"])}
        return RunDetail(run, queries.power_samples(store, run_id), queries.step_times(store, run_id),
                         queries.run_labels(store, run_id))


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


def source_gaps(path: str, source_id: int) -> SourceGaps | None:
    """None when there is no such source (e.g. a queued file not ingested yet)."""
    return _source_gaps(path, source_id, version(path))


@st.cache_data(max_entries=64, show_spinner=False)
def _source_gaps(path: str, source_id: int, db_version: str) -> SourceGaps | None:
    with _open(path, db_version) as store:
        try:
            ref = labels.resolve_source(store.con, str(source_id))
        except LabelError:
            return None
        return SourceGaps(ref.source_id, ref.file_name, ref.format, ref.runs, labels.gaps(store.con, ref.source_id))


def fill_labels(path: str, source_id: int, *, device: str, device_kind: str, mode: str, precision: str,
                batch_size: int, boundary: str, via: str) -> str:
    """Apply a label form's answers (empty or 0 = not given) to every run of the source that does
    not state them; a summary of what changed. LabelError for invalid values (DatabaseError on a team store:
    Store.open refuses it)."""
    values, kind = label_values(device, device_kind, mode, precision, batch_size or None, boundary)
    report = label_source(source_id, values, kind, db=path, via=via)
    done = [f"{LABEL_TITLES[k]} = {values[k]} ({report.filled.get(k, 0)} filled"
            + (f", {report.replaced[k]} changed" if report.replaced.get(k) else "") + ")" for k in values]
    text = f"Labelled the runs of {report.source.file_name}: " + "; ".join(done) + "."
    if report.device_added:
        text += f" {values['device']} added to the device catalog as a {kind}."
    still = labels.describe_gaps(report.still_not_stated)
    return text + (f" Still not stated: {still}." if still else " Every label is now stated or supplied.")


def devices(path: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    return _devices(path, version(path))


@st.cache_data(max_entries=4, show_spinner=False)
def _devices(path: str, db_version: str) -> tuple[pl.DataFrame, pl.DataFrame]:
    with _open(path, db_version) as store:
        return cited(queries.devices(store)), cited(queries.power_modes(store))


def changed_rows(before: pl.DataFrame, after: pl.DataFrame) -> pl.DataFrame:
    """Rows of `after` (same order as `before`) where any cell differs, nulls compared as values."""
    if before.height != after.height:
        return after
    differs = pl.Series([False] * after.height)
    for column in after.columns:
        differs = differs | after[column].ne_missing(before[column].cast(after[column].dtype, strict=False))
    return after.filter(differs)


def save_device_edits(path: str, edits: pl.DataFrame) -> int:
    """Validated (InvalidEditError names every problem, nothing saved) and recorded in the history."""
    with Store.open(path) as store:
        return queries.update_devices(store, cited(edits, back=True))  # the stored citations, not the titles


def device_history(path: str) -> pl.DataFrame:
    return _device_history(path, version(path))


@st.cache_data(max_entries=4, show_spinner=False)
def _device_history(path: str, db_version: str) -> pl.DataFrame:
    with _open(path, db_version) as store:
        return queries.device_edits(store)


def exchange_rates(path: str) -> pl.DataFrame:
    return _exchange_rates(path, version(path))


@st.cache_data(max_entries=4, show_spinner=False)
def _exchange_rates(path: str, db_version: str) -> pl.DataFrame:
    with _open(path, db_version) as store:
        return queries.exchange_rates(store)


def rates(path: str) -> Rates:
    return Rates.from_frame(exchange_rates(path))


def save_exchange_rates(path: str, table: pl.DataFrame) -> int:
    with Store.open(path) as store:
        return queries.replace_exchange_rates(store, table)


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

    with _open(path, version(path)) as store:
        document = build_document(store, Selection(run_ids=run_ids))
    return gzip.compress(json.dumps(document).encode(), mtime=0)


# --- Power settings page (issue 13) ---------------------------------------------------------------

def power_setting_choices(path: str) -> pl.DataFrame:
    return _power_setting_choices(path, version(path))


@st.cache_data(max_entries=4, show_spinner=False)
def _power_setting_choices(path: str, db_version: str) -> pl.DataFrame:
    with _open(path, db_version) as store:
        return queries.power_setting_choices(store)


def power_settings(path: str, device: str, workload: str) -> Any:
    """The runs of `device` and `workload` at known power settings, as profiles (explorer.power_settings.Loaded)."""
    return _power_settings(path, device, workload, version(path))


@st.cache_data(max_entries=16, show_spinner=False)
def _power_settings(path: str, device: str, workload: str, db_version: str) -> Any:
    from explorer import power_settings

    with _open(path, db_version) as store:
        return power_settings.load(store, power_settings.Selection(device, workload))


def best_settings(path: str, device_workloads: tuple[tuple[str, str], ...], goal: str, eta: float,
                  settings: CostSettings, max_power_w: float | None, mode: str | None,
                  precision: str | None) -> pl.DataFrame:
    """Decide's "each device at its best setting for this goal": explorer.power_settings.best_settings
    for each (device, workload), one row per device; `settings` weigh the cost goal."""
    return _best_settings(path, device_workloads, goal, eta, settings, max_power_w, mode, precision, version(path))


@st.cache_data(max_entries=16, show_spinner=False)
def _best_settings(path: str, device_workloads: tuple[tuple[str, str], ...], goal: str, eta: float,
                   settings: CostSettings, max_power_w: float | None, mode: str | None,
                   precision: str | None, db_version: str) -> pl.DataFrame:
    from explorer import power_settings
    from tuning import Constraints

    frames = []
    with _open(path, db_version) as store:
        for device, workload in device_workloads:
            frame = power_settings.best_settings(store, [device], workload, goal, eta=eta, inputs=settings,
                                                 constraints=Constraints(max_power_w), mode=mode,
                                                 precision=precision)
            frames.append(frame.with_columns(pl.lit(workload).alias("workload")))
    return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()
