"""Fill what a source's file did not state, for all its runs at once, recorded as user-supplied.

One service for `joulebench label`, the Upload page's review and Run detail: the values are
checked like import flags (`importers.Hints`), the device's kind is taken from `--device-kind`
or from its name, and `db.labels` applies them in one transaction.
"""

from __future__ import annotations

import os
from typing import Any

from db.labels import LabelReport
from importers import Hints
from importers.device_text import kind_of_device
from ingest.service import open_store
from joulebench.errors import LabelError, ResultFileError
from joulebench.labels import current_user
from joulebench.ranges import RangeError, check_text


def label_values(device: str | None = None, device_kind: str | None = None, mode: str | None = None,
                 precision: str | None = None, batch_size: int | tuple[int, ...] | None = None,
                 boundary: str | None = None) -> tuple[dict[str, Any], str | None]:
    """Checked label values (label -> value, only those given) and the device's kind; LabelError
    naming every invalid value. A tuple of batch sizes gives one per run, in the file's order."""
    try:  # a name is one line of at most 200 characters, as in a result file
        device = check_text(device, "--device")
    except RangeError as e:
        raise LabelError(e.format_message()) from e
    sizes = batch_size if isinstance(batch_size, tuple) else None
    single = batch_size if not isinstance(batch_size, tuple) else None
    try:
        given = Hints(device=device or None, device_kind=device_kind or None, mode=mode or None,
                      precision=precision or None, batch_size=single, boundary=boundary or None)
        for size in sizes or ():
            Hints(batch_size=size)
    except ResultFileError as e:
        raise LabelError("; ".join(e.problems)) from e
    if given.device_kind and not given.device:
        raise LabelError("--device-kind goes with --device: it is the kind of the device named")
    values = {"device": given.device, "mode": given.mode, "precision": given.precision,
              "batch_size": sizes or given.batch_size, "energy_boundary": given.boundary}
    values = {k: v for k, v in values.items() if v is not None}
    if not values:
        raise LabelError("give at least one label: --device, --mode, --precision, --batch-size or --boundary")
    kind = given.device_kind or (kind_of_device(given.device) if given.device else None)
    return values, kind


def label_source(source: str | int, values: dict[str, Any], device_kind: str | None, *,
                 db: str | os.PathLike[str] | None = None, via: str = "cli", who: str | None = None) -> LabelReport:
    """Apply checked `values` (from `label_values`) to every run of `source` (an id or a file name
    as `joulebench db info` lists it) that does not state them. Needs the database: raises
    DatabaseBusyError when another process holds it."""
    with open_store(db) as store:
        return store.label_source(source, values, device_kind=device_kind, supplied_by=who or current_user(),
                                  via=via)


__all__ = ["LabelReport", "label_source", "label_values"]
