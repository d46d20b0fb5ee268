"""Labels a result file may leave unstated, and the record of who supplied them later.

A file that does not say which device ran it, whether it trained or inferred, its precision,
its batch size, or where its energy was measured is imported anyway: the label is stored as
"not stated" (null) and the import warns, naming every missing label in one message. A person
fills the gaps later, for a whole source at once (`joulebench label`, the app's Upload review and
Run detail); each label that did not come from the file's content is recorded with its origin
(`user`, or `folder_name` when read from the folder the file sat in), who supplied it and how.

One definition of "not stated" for documents (here) and for the database (`db.labels`, same
rules in SQL):

    device           the run has no device (null)
    mode             config.mode is null
    precision        config.precision is null, unless the run is idle
    batch_size       config.batch_size is null, unless the run is idle
    energy_boundary  the run has an energy figure but not where it was measured
"""

from __future__ import annotations

import getpass
import shlex
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

LABELS = ("device", "mode", "precision", "batch_size", "energy_boundary")
LABEL_TITLES = {"device": "device", "mode": "mode", "precision": "precision", "batch_size": "batch size",
                "energy_boundary": "energy boundary"}
LABEL_FLAGS = {"device": "--device NAME", "mode": "--mode train|infer|idle", "precision": "--precision P",
               "batch_size": "--batch-size N", "energy_boundary": "--boundary B"}
ORIGINS = ("user", "folder_name")  # file-stated labels have no record
VIA = ("import", "cli", "upload_page", "run_detail_page")
NOT_STATED = "not stated"
ENERGY_FIGURES = ("energy_j", "j_per_sample", "j_per_iteration", "avg_power_w")


@dataclass(frozen=True)
class SuppliedLabel:
    """One label that did not come from a file's content: what, its value (as text), where it came
    from (`user` or `folder_name`), who supplied it and through which way in (`VIA`)."""

    label: str
    value: str
    origin: str
    supplied_by: str
    via: str

    def __post_init__(self) -> None:
        if self.label not in LABELS or self.origin not in ORIGINS or self.via not in VIA:
            raise ValueError(f"not a label record: {self}")


def run_not_stated(run: Mapping[str, Any]) -> list[str]:
    """The labels (in LABELS order) a result-file run leaves unstated."""
    config = run.get("config") or {}
    metrics = run.get("metrics") or {}
    idle = config.get("mode") == "idle"
    missing = []
    if run.get("device") is None:
        missing.append("device")
    if config.get("mode") is None:
        missing.append("mode")
    if config.get("precision") is None and not idle:
        missing.append("precision")
    if config.get("batch_size") is None and not idle:
        missing.append("batch_size")
    if any(metrics.get(k) is not None for k in ENERGY_FIGURES) and metrics.get("energy_boundary") is None:
        missing.append("energy_boundary")
    return missing


def run_label_value(run: Mapping[str, Any], label: str) -> str | None:
    """A result-file run's value of a label, as text (how `run_labels` stores it)."""
    if label == "device":
        device = run.get("device")
        return device.get("name") if isinstance(device, Mapping) else None
    section = run.get("metrics") if label == "energy_boundary" else run.get("config")
    value = (section or {}).get(label)
    return None if value is None else str(value)


def count_not_stated(runs: Iterable[Mapping[str, Any]]) -> dict[str, int]:
    """Runs lacking each label, for the labels some run lacks (LABELS order)."""
    counts = dict.fromkeys(LABELS, 0)
    for run in runs:
        for label in run_not_stated(run):
            counts[label] += 1
    return {k: v for k, v in counts.items() if v}


def describe_not_stated(counts: Mapping[str, int], runs: int, reasons: Mapping[str, str] | None = None) -> str:
    """'device (all 3 runs; the Trainer does not record the device), precision (1 of 3 runs)'."""
    parts = []
    for label, n in counts.items():
        scope = (f"all {runs} runs" if runs > 1 else "its run") if n == runs else f"{n} of {runs} runs"
        reason = (reasons or {}).get(label)
        parts.append(f"{LABEL_TITLES[label]} ({scope}{'; ' + reason if reason else ''})")
    return ", ".join(parts)


def not_stated_warning(counts: Mapping[str, int], runs: int, file_name: str = "<file>",
                       reasons: Mapping[str, str] | None = None, flags_apply: bool = True) -> str | None:
    """One message naming every label the file leaves unstated (with why, where the importer
    knows), and the way to fill them (`flags_apply`: import flags would fill them too; not so
    for a JouleBench result file, which is taken as it is)."""
    if not counts:
        return None
    flags = " ".join(LABEL_FLAGS[k] for k in counts)
    return (f"not stated in the file: {describe_not_stated(counts, runs, reasons)}; imported as 'not stated'. "
            f"Fill them for the whole file with `joulebench label {shlex.quote(file_name)} {flags}` "
            "(or on the app's Upload page / Run detail)" + (", or pass them as flags when importing"
                                                              if flags_apply else ""))


def current_user() -> str:
    """Who supplies a label: the operating-system account running JouleBench (stored in the
    database only; never written into result files)."""
    try:
        return getpass.getuser() or "unknown user"
    except (KeyError, OSError):  # no passwd entry / no login name (containers)
        return "unknown user"
