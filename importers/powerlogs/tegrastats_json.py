"""Parsed tegrastats records saved as a JSON array.

Scripts that parse tegrastats lines often save them as a JSON array: one record per line with an ISO
timestamp, each rail's power in mW under its lowercased name ('vdd_gpu_soc', or '_current' and
'_average' keys), the RAM used and total in MB; or one record per rail and line ('timestamp', 'type',
'value'). Either becomes a Jetson CSV read by parse_jtop, so the rail choice, units and module offer
are those of every other Jetson log. A record's list of CPU loads is not a core count: such parsers
drop the cores tegrastats prints as 'off'.
"""

from __future__ import annotations

import csv
import io
import json
import re
from typing import Any

from importers.powerlogs.jtop import parse_jtop
from importers.powerlogs.log import GENERIC_RAIL_WORDS, KNOWN_RAILS, MODE_COLUMNS, PowerLog, PowerLogError, head_text

_RECORD_TIME_KEYS = ("timestamp", "time", "datetime", "date_time", "ts", "epoch", "unix_time")
_INSTANT_SUFFIX = re.compile(r"(?i)[_ ](?:current|curr|cur|inst|instant|now|power|power_mw|mw)$")
_AVERAGE_SUFFIX = re.compile(r"(?i)[_ ](?:average|avg|mean|max|min)$")
_INSTANT_KEYS = ("power", "cur", "curr", "current", "inst", "instant", "now")
_TEGRA_JSON_HEAD = re.compile(r'^\s*\[\s*\{[^\]]*?"(?:' + "|".join(_RECORD_TIME_KEYS) + r')"\s*:', re.I)
_LONG_KEYS = (("type", "value"), ("rail", "value"), ("rail", "power"), ("name", "value"))


def _record_rail(key: str) -> str | None:
    """The known rail a record key holds the instant power of ('vdd_gpu_soc_current' -> VDD_GPU_SOC), or None."""
    if _AVERAGE_SUFFIX.search(key):
        return None
    name = _INSTANT_SUFFIX.sub("", key).upper()
    return name if name in KNOWN_RAILS and name not in GENERIC_RAIL_WORDS else None


def tegrastats_json_head(head: str) -> bool:
    """A file's first lines open a JSON array of records with a time key and a known Jetson rail key."""
    keys = re.findall(r'"([^"]{1,60})"', head[:4000])
    return bool(_TEGRA_JSON_HEAD.match(head)) and any(_record_rail(k) for k in keys)


def _instant(value: Any) -> Any:
    """A rail's instant power from a record value: a number, {'cur': .., 'avg': ..} or [cur, avg]."""
    if isinstance(value, dict):
        value = next((value[k] for k in value if str(k).lower() in _INSTANT_KEYS), None)
    elif isinstance(value, list):
        value = value[0] if value else None
    return None if isinstance(value, bool) else value


def _wide_records(records: list[dict[str, Any]], time_key: str) -> list[dict[str, Any]]:
    """One record per time from one record per rail and time ({'timestamp', 'type': 'vdd_gpu_soc', 'value'})."""
    name_key, value_key = next((n, v) for n, v in _LONG_KEYS if n in records[0] and v in records[0])
    wide: dict[Any, dict[str, Any]] = {}
    for r in records:
        name = r.get(name_key)
        if isinstance(name, str) and _record_rail(name):
            wide.setdefault(r.get(time_key), {time_key: r.get(time_key)})[name] = r.get(value_key)
    return list(wide.values())


def tegrastats_json_records(data: bytes) -> tuple[list[dict[str, Any]], str] | None:
    """The records of a JSON array of parsed tegrastats samples (one per time) and their time key, or
    None when the file is not one: objects with a time key and a known Jetson rail as a key or a 'type'."""
    if not _TEGRA_JSON_HEAD.match(head_text(data)):
        return None
    try:
        records = json.loads(data.decode("utf-8-sig", errors="replace"))
    except (ValueError, RecursionError):
        return None
    if not isinstance(records, list) or not records or not all(isinstance(r, dict) for r in records):
        return None
    time_key = next((k for k in records[0] if k.lower() in _RECORD_TIME_KEYS), None)
    if time_key is None:
        return None
    if any(n in records[0] and v in records[0] for n, v in _LONG_KEYS):
        records = _wide_records(records, time_key)
    if not records or not any(_record_rail(k) for r in records[:50] for k in r):
        return None
    return records, time_key


def _tegrastats_json_csv(records: list[dict[str, Any]], time_key: str) -> str:
    """The records as a Jetson CSV: a time column, one column per rail (mW), 'RAM' cells like
    '11283/62841MB' and the power mode when the records name one."""
    rails: dict[str, str] = {}  # record key -> rail
    for r in records[:50]:
        for k in r:
            if k not in rails and (rail := _record_rail(k)):
                rails[k] = rail
    ram = "ram_total" in records[0]
    mode_key = next((k for k in records[0] if k.lower() in MODE_COLUMNS), None)
    out = io.StringIO()
    writer = csv.writer(out)
    writer.writerow(["timestamp", *rails.values(), *(["RAM"] if ram else []), *(["nvp model"] if mode_key else [])])
    for n, r in enumerate(records):
        when = r.get(time_key)
        if not isinstance(when, (str, int, float)) or isinstance(when, bool):
            raise PowerLogError(f"record {n + 1}: {time_key}", "missing or not a time")
        row: list[Any] = [when, *("" if (v := _instant(r.get(k))) is None else v for k in rails)]
        if ram:
            row.append(f"{r.get('ram_used', 0)}/{r['ram_total']}MB" if r.get("ram_total") is not None else "")
        if mode_key:
            row.append(r.get(mode_key, ""))
        writer.writerow(row)
    return out.getvalue()


def parse_tegrastats_json(data: bytes, boundary: str | None = None, device: str | None = None) -> PowerLog:
    """A JSON array of parsed tegrastats records (see above), read as the Jetson CSV it holds."""
    found = tegrastats_json_records(data)
    if found is None:
        raise PowerLogError("item 1", "expected a JSON array of records with a time key and Jetson rail keys "
                                      "(e.g. 'timestamp' and 'vdd_gpu_soc' in mW) or 'type'/'value' pairs")
    log = parse_jtop(_tegrastats_json_csv(*found).encode(), boundary, device)
    log.fmt = "tegrastats-json"
    log.notes = [n.replace("jetson-csv log", "parsed tegrastats records (JSON array)", 1) for n in log.notes]
    log.notes.append("rails read as mW, the unit tegrastats prints them in; '_average' keys (tegrastats' running "
                     "means) are not used")
    return log
