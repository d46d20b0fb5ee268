"""The local device a run uses: resolving `--device`, synchronising, peak memory.

GPU paths (CUDA events, CUDA memory statistics) are written for real GPUs and guarded by
`device.type == "cuda"`, so the CPU paths run everywhere.
"""

from __future__ import annotations

import re
from dataclasses import dataclass
from pathlib import Path
from typing import Literal

import torch

DeviceKind = Literal["gpu", "jetson", "cpu"]
MB = 1_000_000  # _mb is 10^6 bytes throughout JouleBench


def is_jetson() -> bool:
    """An NVIDIA Jetson (Tegra SoC with unified memory)."""
    if Path("/etc/nv_tegra_release").exists():
        return True
    try:
        return "jetson" in Path("/proc/device-tree/model").read_text(errors="replace").lower()
    except OSError:
        return False


def available_devices() -> list[str]:
    """Device names `--device` accepts on this machine."""
    found = ["cpu"]
    if torch.cuda.is_available():
        count = torch.cuda.device_count()
        found.append("cuda")
        found += [f"cuda:{i}" for i in range(count)]
    return found


def device_problem(spec: str) -> str | None:
    """Why `--device spec` cannot be used here, or None."""
    valid = ", ".join(available_devices())
    if not re.fullmatch(r"cpu|cuda(:\d+)?", spec):
        return f"--device: {spec!r} is not a device JouleBench runs on; valid here: {valid}"
    if spec.startswith("cuda"):
        if not torch.cuda.is_available():
            return f"--device: {spec} is not available (no CUDA device or a CPU-only torch build); valid here: {valid}"
        index = int(spec.split(":")[1]) if ":" in spec else 0
        if index >= torch.cuda.device_count():
            return f"--device: {spec} does not exist ({torch.cuda.device_count()} CUDA device(s)); valid here: {valid}"
    return None


def resolve(spec: str) -> torch.device:
    device = torch.device(spec)
    if device.type == "cuda" and device.index is None:
        device = torch.device("cuda", torch.cuda.current_device())
    return device


def kind_of(device: torch.device) -> DeviceKind:
    if device.type == "cuda":
        return "jetson" if is_jetson() else "gpu"
    return "cpu"


def synchronize(device: torch.device) -> None:
    """Wait for all queued work on the device (a no-op on CPU, where ops are synchronous)."""
    if device.type == "cuda":
        torch.cuda.synchronize(device)


# --- peak memory ------------------------------------------------------------------------------

_CLEAR_REFS = Path("/proc/self/clear_refs")
_STATUS = Path("/proc/self/status")


def _status_kb(field: str) -> int | None:
    try:
        for line in _STATUS.read_text().splitlines():
            if line.startswith(field + ":"):
                return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def reset_peak_memory(device: torch.device) -> bool:
    """Start a new peak-memory window; False when the process RSS peak cannot be reset."""
    if device.type == "cuda":
        torch.cuda.reset_peak_memory_stats(device)
    try:
        # "5" resets the kernel's resident-set high-water mark (VmHWM) of this process.
        _CLEAR_REFS.write_text("5")
        return True
    except OSError:
        return False


def peak_rss_mb() -> float | None:
    """Peak resident memory of this process since the last reset, MB."""
    kb = _status_kb("VmHWM")
    if kb is None:
        try:
            import resource

            kb = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss  # kB on Linux; lifetime peak
        except (ImportError, OSError):
            return None
    return kb * 1024 / MB


@dataclass(frozen=True)
class MemoryPeak:
    allocated_mb: float | None = None  # CUDA max allocated
    reserved_mb: float | None = None  # CUDA max reserved
    rss_mb: float | None = None  # process resident set (CPU and Jetson, where memory is shared)


def read_peak_memory(device: torch.device, kind: DeviceKind) -> MemoryPeak:
    if device.type == "cuda":
        allocated = torch.cuda.max_memory_allocated(device) / MB
        reserved = torch.cuda.max_memory_reserved(device) / MB
        rss = peak_rss_mb() if kind == "jetson" else None
        return MemoryPeak(allocated, reserved, rss)
    return MemoryPeak(rss_mb=peak_rss_mb())


def free_memory(device: torch.device) -> None:
    """Give cached memory back after a run (essential after an out-of-memory run)."""
    import gc

    gc.collect()
    _trim_heap()
    if device.type == "cuda":
        torch.cuda.empty_cache()
        torch.cuda.reset_peak_memory_stats(device)


def _trim_heap() -> None:
    """Return freed heap memory to the OS (glibc), so the next run's RSS peak starts lower."""
    import ctypes
    import ctypes.util

    try:
        ctypes.CDLL(ctypes.util.find_library("c") or "libc.so.6").malloc_trim(0)
    except (OSError, AttributeError):
        pass
