"""What a person changes from a page: the labels a file did not state (Upload review, Run detail), the
catalog's fields and prices and the exchange rates (Devices). Each goes through the write API below the
explorer (the import service's labels, db.catalog_edits), checked and written whole or refused whole; a team
store refuses them (Store.open: only `joulebench push` writes it). `explorer.data` only reads."""

from __future__ import annotations

import polars as pl

import db.catalog_edits as catalog_edits
import db.device_names as device_names
from db import Store, labels
from decision.text import cited
from ingest.labels import label_source, label_values
from joulebench.labels import LABEL_TITLES


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


def save_device_edits(path: str, edits: pl.DataFrame) -> int:
    """Validated (InvalidEditError names every problem, nothing saved) and recorded in the history."""
    with Store.open(path) as store:
        return catalog_edits.update_devices(store, cited(edits, back=True))  # the stored citations, not the titles


def save_exchange_rates(path: str, table: pl.DataFrame) -> int:
    with Store.open(path) as store:
        return catalog_edits.replace_exchange_rates(store, table)


def save_device_name(path: str, source_name: str, device_name: str) -> str:
    """Map a device string met in imports to a catalog entry (or keep it as its own): its runs are re-pointed
    and regraded in one transaction (db.device_names.change); what changed, for a person."""
    with Store.open(path) as store:
        done = device_names.change(store, source_name, device_name)
    text = (f"{done.source_name!r} is now stored as {done.after!r}: {done.runs} run(s) re-pointed"
            if done.after != done.before else f"{done.source_name!r} stays {done.after!r}, now as you chose")
    return text + (f"; {done.before!r}, added by an import and now unused, left the catalog." if done.removed
                   else ".")
