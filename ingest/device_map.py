"""Applies the device-name mapping to a document before it is written (every import path of
`ingest.service` goes through `name_devices`): each device string a run states that is not a catalog
name is looked up in the stored mapping (`db.device_names`), or decided once by `ingest.device_names` and
stored; the run is stored under the catalog entry, with the string its file stated kept in its notes and in
`run_device_names`, so the mapping is shown and a later change re-points it. An ambiguous string is
never mapped silently: its runs keep the string until a person chooses, and the import's warnings say
which entries it could be and how to choose."""

from __future__ import annotations

import dataclasses
import shlex
from dataclasses import dataclass
from typing import Any

import duckdb

import db.device_names as stored_names
from ingest.device_names import CatalogEntry, Match, match
from joulebench.resultfile import LoadedResultFile

STATED_NOTE = "device as stated in the file: "


@dataclass
class Named:
    """A document with its devices named as the catalog names them; `runs` (run_id, the string its file
    stated) for the runs stored under another name or awaiting a choice; `ambiguous` what waits for one."""

    loaded: LoadedResultFile
    runs: list[tuple[str, str]]
    ambiguous: list[Match]

    def record_runs(self, con: duckdb.DuckDBPyConnection, added_run_ids: list[str]) -> None:
        added = set(added_run_ids)
        stored_names.record_runs(con, [(r, s) for r, s in self.runs if r in added])


def choose_hint(file_name: str, m: Match) -> str:
    """What the command line says of an ambiguous string: the file, the string, the entries it could be,
    and how to choose."""
    first = m.candidates[0] if m.candidates else m.source
    return (f"{file_name}: the device {m.source!r} is not mapped to the catalog: {m.reason}. Its runs are stored "
            f"under {m.source!r} until you choose, e.g. `joulebench device-name {shlex.quote(m.source)} "
            f"{shlex.quote(first)}`, or keep it as its own device with `joulebench device-name "
            f"{shlex.quote(m.source)} {shlex.quote(m.source)}`")


def name_devices(con: duckdb.DuckDBPyConnection, loaded: LoadedResultFile, file_format: str) -> Named:
    """Decide (or look up) the catalog name of every device string of `loaded`'s runs, record new decisions
    in the caller's transaction, and return the document with its runs re-pointed."""
    runs: list[dict[str, Any]] = loaded.document.get("runs", [])
    strings = sorted({r["device"]["name"] for r in runs if r.get("device") and r["device"].get("name")})
    if not strings:
        return Named(loaded, [], [])
    entries = [CatalogEntry(n, t, m) for n, t, m in stored_names.catalog(con)]
    names = {e.name for e in entries}
    known = stored_names.stored(con, strings)
    targets: dict[str, str] = {}
    ambiguous: list[Match] = []
    for s in strings:
        if s in known:
            targets[s] = known[s].device_name
            if known[s].decided_by == "ambiguous":
                ambiguous.append(Match(s, "ambiguous", None, known[s].candidates,
                                       f"it could be {', '.join(repr(c) for c in known[s].candidates)}"))
            continue
        if s in names:
            continue  # a catalog name: nothing to map
        tdp = next((r["device"].get("tdp_w") for r in runs if r.get("device") and r["device"].get("name") == s), None)
        found = match(s, entries, tdp_w=tdp, source_format=file_format)
        target = found.device_name if found.device_name is not None else s
        stored_names.record(con, s, target, found.how, found.candidates, found.reason)
        if found.how == "ambiguous":
            ambiguous.append(found)
        if target not in names:  # a later string of this file may be the same part
            entries.append(CatalogEntry(target, tdp, None))
            names.add(target)
        targets[s] = target
    if not targets:
        return Named(loaded, [], [])
    doc = _renamed(loaded.document, targets, loaded.name)
    supplied = tuple(dataclasses.replace(label, value=targets.get(label.value, label.value))
                     if label.label == "device" else label for label in loaded.supplied)
    changes: dict[str, Any] = {"document": doc, "supplied": supplied}
    if hasattr(loaded, "warnings"):
        changes["warnings"] = (*loaded.warnings, *[choose_hint(loaded.name, m) for m in ambiguous])
    pairs = [(r["run_id"], r["device"]["name"]) for r in runs
             if r.get("device") and r["device"].get("name") in targets]
    return Named(dataclasses.replace(loaded, **changes), pairs, ambiguous)


def _renamed(doc: dict[str, Any], targets: dict[str, str], file_name: str) -> dict[str, Any]:
    runs = []
    for run in doc.get("runs", []):
        device = run.get("device")
        stated = device.get("name") if device else None
        if stated not in targets:
            runs.append(run)
            continue
        note = f"{STATED_NOTE}{stated!r}"
        device = {**device, "name": targets[stated]}
        if not device.get("notes"):  # kept only if the entry is new: a catalog entry is never overwritten
            device["notes"] = f"added from an import ({file_name}: {stated!r}); no specs but what the file stated"
        runs.append({**run, "device": device, "notes": f"{run['notes']}; {note}" if run.get("notes") else note})
    devices = [{**d, "name": targets.get(d["name"], d["name"])} for d in doc.get("devices", [])]
    return {**doc, "runs": runs, **({"devices": devices} if "devices" in doc else {})}


__all__ = ["STATED_NOTE", "Named", "choose_hint", "name_devices"]
