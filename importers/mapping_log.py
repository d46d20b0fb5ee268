"""A power log mapped by a person: a table of a time column and a power column whose names no reader knows
(`Set_id;Time;Line 6;Sum`, a meter's channels in mW with no unit written).

The recipe maps one column to the time of each sample and one to its power, each with its unit. `as_log` rewrites
the table as the two-column log `importers.powerlogs.two_column` reads (`time (s),power (mW)`), so the energy, the
duration and the checks on samples (negative readings, several devices) are that reader's, as for a log whose
headers say it. A log's recipe maps nothing else: its rows are samples of one window, never runs; the device is
given at the import, as for any power log.
"""

from __future__ import annotations

import csv
import io

TIME = "log_time"
POWER = "log_power"
LOG_FIELDS = (  # (key, title, units kind, header written for the power-log reader)
    (TIME, "Time of a power sample (a power log)", "time", "time"),
    (POWER, "Power sample (a power log)", "power", "power"),
)
SHOWN = ("energy_j", "duration_s", "avg_power_w")  # what a mapped log's preview shows


def is_log(fields: list[str | None]) -> bool:
    """Whether a recipe's mapped fields make a power log."""
    return any(f in (TIME, POWER) for f in fields)


def problems(columns: list[tuple[str, str | None]], labels: list[str]) -> list[str]:
    """Why a power log's mapping cannot be used: one time and one power column, and nothing else mapped or given."""
    out = []
    fields = [f for _, f in columns]
    for key, title, _, _ in LOG_FIELDS:
        if fields.count(key) != 1:
            out.append(f"columns: a power log needs one column mapped to {title} (it has {fields.count(key)})")
    others = [c for c, f in columns if f not in (TIME, POWER)]
    if others:
        out.append(f"columns {', '.join(repr(c[:60]) for c in others[:5])}: a power log's rows are samples of one "
                   "window, not runs; leave the other columns out")
    if labels:
        out.append(f"labels {', '.join(labels)}: a power log's device and mode are given at the import, not by "
                   "the mapping")
    return out


def rewritten(name: str, header: list[str], rows: list[list[str]], picked: list[tuple[int, str, str]]
              ) -> tuple[bytes, str, dict[str, str]]:
    """(the table as a two-column log, `time (<unit>),power (<unit>)` over its cells as written; what the import
    says of it; the log's headers back to the table's columns), from the mapped (column index, field, unit)."""
    at = {f: (i, unit) for i, f, unit in picked}
    written = {TIME: f"time ({at[TIME][1]})", POWER: f"power ({at[POWER][1]})"}
    out = io.StringIO()
    writer = csv.writer(out, lineterminator="\n")
    writer.writerow([written[TIME], written[POWER]])
    for cells in rows:
        writer.writerow([_cell(cells, at[TIME][0]), _cell(cells, at[POWER][0])])
    titles = {key: title for key, title, _, _ in LOG_FIELDS}
    said = f"read by the saved mapping {name!r} as a power log: " + "; ".join(
        f"{header[i][:40]} as {titles[f]} ({unit})" for i, f, unit in picked)
    return out.getvalue().encode(), said[:600], {written[f]: f"column {header[i][:80]!r}" for i, f, _ in picked}


def _cell(cells: list[str], i: int) -> str:
    return cells[i].strip() if i < len(cells) else ""


__all__ = ["LOG_FIELDS", "POWER", "SHOWN", "TIME", "is_log", "problems", "rewritten"]
