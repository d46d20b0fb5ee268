"""What this machine can measure, without torch: its NVIDIA GPUs (NVML), a Jetson's module (the device tree) and its
CPU (/proc/cpuinfo), each mapped to the catalog entry it is (ingest.device_names, the mapping every import uses).
Decide offers "measure it on this machine" only for a device this machine is, or one it has measured before."""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path

from ingest.device_names import CatalogEntry, match

_JETSON_MODEL = Path("/proc/device-tree/model")
_CPUINFO = Path("/proc/cpuinfo")


@functools.cache
def stated_devices() -> tuple[str, ...]:
    """The device strings this machine states: NVML's GPU names, a Jetson's model, the CPU's model name."""
    found: list[str] = []
    try:
        import pynvml

        pynvml.nvmlInit()
        try:
            for i in range(pynvml.nvmlDeviceGetCount()):
                name = pynvml.nvmlDeviceGetName(pynvml.nvmlDeviceGetHandleByIndex(i))
                found.append(name.decode() if isinstance(name, bytes) else str(name))
        finally:
            pynvml.nvmlShutdown()
    except Exception:  # no NVML library or no GPU: nothing to add (pynvml raises its own error classes)
        pass
    for path, key in ((_JETSON_MODEL, None), (_CPUINFO, "model name")):
        try:
            text = path.read_text(errors="replace")[:100_000]
        except OSError:
            continue
        if key is None:
            found.append(text.strip("\x00 \n"))
        else:
            line = next((ln for ln in text.splitlines() if ln.startswith(key)), None)
            if line is not None:
                found.append(line.split(":", 1)[1].strip())
    return tuple(dict.fromkeys(s for s in found if s))


def devices_here(catalog: Iterable[CatalogEntry], measured_here: Iterable[str]) -> set[str]:
    """The catalog entries this machine is (its stated devices mapped as an import maps them), and the devices its
    own runs were measured on."""
    entries = list(catalog)
    here = set(measured_here)
    for stated in stated_devices():
        m = match(stated, entries)
        if m.how in ("exact", "rule") and m.device_name:
            here.add(m.device_name)
    return here


def describe() -> str:
    """'this machine (NVIDIA H100 80GB HBM3; AMD EPYC 9654)' for a sentence."""
    stated = stated_devices()
    return f"this machine ({'; '.join(stated)})" if stated else "this machine"
