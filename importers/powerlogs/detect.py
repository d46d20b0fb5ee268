"""Which power-log format a file is, from its first lines, and reading it with that format's parser."""

from __future__ import annotations

from typing import Any

from importers.powerlogs.dcgm import dcgm_kind, parse_dcgm
from importers.powerlogs.gpu_power_csv import gpu_power_header, parse_gpu_power_csv
from importers.powerlogs.jtop import jetson_csv_header, parse_jtop
from importers.powerlogs.log import PowerLog, head_text
from importers.powerlogs.meter import parse_meter_csv
from importers.powerlogs.nvidia_smi import noheader_columns, parse_nvidia_smi
from importers.powerlogs.nvidia_smi_dmon import is_dmon, parse_nvidia_smi_dmon
from importers.powerlogs.nvidia_smi_query import is_query_log, parse_nvidia_smi_query
from importers.powerlogs.powermetrics import is_powermetrics, parse_powermetrics
from importers.powerlogs.tegrastats import is_tegrastats_line, parse_tegrastats
from importers.powerlogs.tegrastats_json import parse_tegrastats_json, tegrastats_json_head
from importers.powerlogs.uprof import is_uprof, parse_uprof


def sniff(head: str) -> str | None:
    """The log format of a file from its first lines, or None."""
    if dcgm_kind(head):
        return "dcgm"
    if is_dmon(head):
        return "nvidia-smi-dmon"
    if is_uprof(head):
        return "amd-uprof"
    if is_powermetrics(head):
        return "powermetrics"
    first = head.split("\n", 1)[0].lower()
    if ("power.draw" in first and "," in first) or ("," in first and noheader_columns(head) is not None):
        return "nvidia-smi"  # with its header, or written with --format=csv,noheader
    if is_query_log(head):
        return "nvidia-smi-q"
    lines = [line for line in head.splitlines()[:8] if line.strip()]
    tegra = [line for line in lines if is_tegrastats_line(line)]
    if tegra and len(tegra) >= min(2, len(lines)) and len(lines) - len(tegra) <= 3:
        return "tegrastats"
    if jetson_csv_header(head.rsplit("\n", 1)[0] if len(head) >= 16000 else head) is not None:
        return "jtop"
    if gpu_power_header(first):
        return "gpu-power-csv"
    if tegrastats_json_head(head):
        return "tegrastats-json"
    return None


def read_power_log(data: bytes, boundary: str | None = None, device: str | None = None) -> PowerLog:
    """Any supported log: nvidia-smi (CSV, -q reports, dmon), tegrastats, jtop / Jetson CSV, DCGM, else a meter's CSV.
    `device` (the device the runs used) names a Jetson board whose rails a hand-rolled log does not."""
    head = head_text(data)
    fmt = sniff(head)
    if fmt is None:
        return parse_meter_csv(data, boundary)
    parse = PARSERS[fmt]
    return parse(data, boundary, device) if fmt in JETSON_FORMATS else parse(data, boundary)


PARSERS: dict[str, Any] = {"amd-uprof": parse_uprof, "powermetrics": parse_powermetrics, "nvidia-smi": parse_nvidia_smi,
                           "nvidia-smi-dmon": parse_nvidia_smi_dmon,
                           "nvidia-smi-q": parse_nvidia_smi_query, "tegrastats": parse_tegrastats, "jtop": parse_jtop,
                           "dcgm": parse_dcgm, "gpu-power-csv": parse_gpu_power_csv,
                           "tegrastats-json": parse_tegrastats_json}
JETSON_FORMATS = ("tegrastats", "jtop", "tegrastats-json")
