"""A power log written as JSON Lines, one record per sample, as a few lines of Python around NVML or nvidia-smi write
it: a time and power readings (`{"t": 0.5, "power_w": 212.4}`), or a time and a list of each device's readings
(`{"timestamp": 1777062742.4, "gpus": [{"gpu_id": 0, "power_w": 71.53, ...}, ...]}`). Written out as the rows of
the CSV log `two_column` reads (a row per device and time where the record lists devices), so that one parser
reads both."""

from __future__ import annotations

import csv
import io
import json
from typing import Any

from importers.powerlogs.two_column import power_columns, time_column, two_column_header

MAX_SAMPLES = 500_000  # a second's sampling over almost six days; a longer log is cut there (and said by its span)
MAX_DEVICES = 64


def _device_list(record: dict[str, Any]) -> str | None:
    """The key of a record's list of each device's readings (objects that give a power), or None."""
    for key, value in record.items():
        if isinstance(value, list) and value and len(value) <= MAX_DEVICES and all(isinstance(v, dict) for v in value) \
                and power_columns([str(k) for k in value[0]]):
            return str(key)
    return None


def _header(record: dict[str, Any]) -> tuple[str, str | None, list[str]] | None:
    """(the time key, the device list's key or None, the reading keys) of a sample record, or None when it is not one:
    one time key, and power readings of its own or in its list of devices."""
    keys = [str(k) for k, v in record.items() if not isinstance(v, (dict, list))]
    found = time_column(keys)
    if found is None:
        return None
    listed = _device_list(record)
    readings = [k for k in keys if k != keys[found[0]]] if listed is None else [
        str(k) for k, v in record[listed][0].items() if not isinstance(v, (dict, list))]
    return (keys[found[0]], listed, readings) if power_columns(readings) else None


def is_json_power_log(head: str) -> bool:
    """Whether a file's first lines are sample records of such a log, whose rows `two_column` takes for a power log
    (no label, energy, rate or latency a table of runs has)."""
    lines = head.lstrip().split("\n")[:40]
    whole = lines[:-1] if len(lines) > 1 else lines  # the head may end inside a line
    try:
        rows = as_csv("\n".join(whole)).decode()
    except ValueError:
        return False
    return two_column_header(rows.split("\r\n", 1)[0], rows.replace("\r\n", "\n"))


def as_csv(text: str) -> bytes:
    """The log as CSV rows (the time, the device's own keys, its readings); ValueError naming the line that is not a
    sample record of the first record's shape."""
    out = io.StringIO()
    writer = csv.writer(out)
    shape = None
    for n, line in enumerate(text.splitlines()[:MAX_SAMPLES], start=1):
        if not line.strip():
            continue
        try:
            record = json.loads(line)
        except ValueError as e:
            raise ValueError(f"line {n}: not JSON ({str(e)[:60]})") from e
        if not isinstance(record, dict):
            raise ValueError(f"line {n}: not a sample record")
        if shape is None:
            shape = _header(record)
            if shape is None:
                raise ValueError(f"line {n}: no time and power readings")
            writer.writerow([shape[0], *shape[2]])
        time_key, listed, readings = shape
        devices = record.get(listed) if listed is not None else [record]
        if time_key not in record or not isinstance(devices, list):
            raise ValueError(f"line {n}: no {time_key!r}" if time_key not in record else
                             f"line {n}: no {listed!r} list")
        for device in devices[:MAX_DEVICES]:
            if isinstance(device, dict):
                writer.writerow([record[time_key], *("" if device.get(k) is None else device.get(k) for k in readings)])
    return out.getvalue().encode()
