"""Environment capture: device, software and host, recorded on every run.

Only what describes the machine's performance is read: model names, versions, sizes, clocks,
power limit or power mode. Never serial numbers, UUIDs, host names or user names.
Every probe is best-effort: a value that cannot be read is None.
"""

from __future__ import annotations

import contextlib
import os
import platform
import re
import subprocess
from collections.abc import Iterator
from dataclasses import dataclass
from pathlib import Path
from typing import Any

import torch

from runner.devices import DeviceKind, kind_of

ARCHITECTURES = {  # CUDA compute capability (major, minor) -> architecture
    (6, 0): "Pascal", (6, 1): "Pascal", (6, 2): "Pascal", (7, 0): "Volta", (7, 2): "Volta",
    (7, 5): "Turing", (8, 0): "Ampere", (8, 6): "Ampere", (8, 7): "Ampere", (8, 9): "Ada Lovelace",
    (9, 0): "Hopper", (10, 0): "Blackwell", (10, 3): "Blackwell", (11, 0): "Blackwell",
    (12, 0): "Blackwell", (12, 1): "Blackwell",
}


@dataclass(frozen=True)
class Captured:
    device: dict[str, Any]  # result-file run.device
    environment: dict[str, Any]  # result-file run.environment
    power_limit_w: float | None = None
    power_mode: str | None = None


def _read(path: str | Path) -> str | None:
    try:
        return Path(path).read_text(errors="replace").strip().strip("\x00")
    except OSError:
        return None


def cpu_model() -> str | None:
    text = _read("/proc/cpuinfo") or ""
    for key in ("model name", "Model", "Hardware", "cpu model"):
        m = re.search(rf"^{key}\s*:\s*(.+)$", text, re.MULTILINE)
        if m:
            return re.sub(r"\s+", " ", m.group(1)).strip()
    return platform.processor() or platform.machine() or None


def ram_gb() -> float | None:
    m = re.search(r"^MemTotal:\s*(\d+)\s*kB", _read("/proc/meminfo") or "", re.MULTILINE)
    if m:
        return round(int(m.group(1)) * 1024 / 1e9, 2)
    with contextlib.suppress(ValueError, OSError, AttributeError):
        return round(os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES") / 1e9, 2)
    return None


def cpu_max_mhz() -> float | None:
    khz = _read("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq")
    if khz and khz.isdigit():
        return int(khz) / 1000
    return None


def os_name() -> str:
    text = _read("/etc/os-release") or ""
    m = re.search(r'^PRETTY_NAME="?([^"\n]+)"?', text, re.MULTILINE)
    base = m.group(1) if m else platform.system()
    return f"{base} ({platform.system()} {platform.release()}, {platform.machine()})"


def system_name() -> str | None:
    """The host product name (e.g. 'DGX A100'); DMI's product_name only, never its serial."""
    return _read("/proc/device-tree/model") or _read("/sys/class/dmi/id/product_name") or None


def _versions() -> dict[str, Any]:
    import transformers

    cudnn = torch.backends.cudnn.version() if torch.backends.cudnn.is_available() else None
    return {
        "framework": f"PyTorch {torch.__version__}",
        "torch_version": torch.__version__,
        "transformers_version": transformers.__version__,
        "python_version": platform.python_version(),
        "cuda_version": torch.version.cuda,
        "cudnn_version": str(cudnn) if cudnn else None,
    }


def _host() -> dict[str, Any]:
    return {
        "system_name": system_name(),
        "os": os_name(),
        "cpu_model": cpu_model(),
        "cpu_count": os.cpu_count(),
        "ram_gb": ram_gb(),
        "cpu_max_mhz": cpu_max_mhz(),
        "torch_threads": torch.get_num_threads(),
    }


# --- NVIDIA GPUs: NVML, read-only, errors mean "not available" --------------------------------

@contextlib.contextmanager
def _nvml() -> Iterator[Any]:
    try:
        import pynvml

        pynvml.nvmlInit()
    except Exception:  # library missing or no driver: NVML values are simply unavailable
        yield None
        return
    try:
        yield pynvml
    finally:
        with contextlib.suppress(Exception):
            pynvml.nvmlShutdown()


def _nvml_handle(nvml: Any, device: torch.device) -> Any:
    props = torch.cuda.get_device_properties(device)
    bus = getattr(props, "pci_bus_id", None)
    if bus is not None:
        pci = f"{getattr(props, 'pci_domain_id', 0):08x}:{bus:02x}:{getattr(props, 'pci_device_id', 0):02x}.0"
        with contextlib.suppress(Exception):
            return nvml.nvmlDeviceGetHandleByPciBusId(pci)
    return nvml.nvmlDeviceGetHandleByIndex(device.index or 0)


def _nvml_facts(device: torch.device) -> dict[str, Any]:
    facts: dict[str, Any] = {}
    with _nvml() as nvml:
        if nvml is None:
            return facts

        def value(fn: str, *args: Any) -> Any:
            try:
                out = getattr(nvml, fn)(*args)
            except Exception:
                return None
            return out.decode() if isinstance(out, bytes) else out

        facts["driver_version"] = value("nvmlSystemGetDriverVersion")
        try:
            handle = _nvml_handle(nvml, device)
        except Exception:
            return facts
        limit_mw = value("nvmlDeviceGetPowerManagementLimit", handle)  # Units: mW
        tdp_mw = value("nvmlDeviceGetPowerManagementDefaultLimit", handle)  # Units: mW
        facts["power_limit_w"] = limit_mw / 1000 if limit_mw else None
        facts["tdp_w"] = tdp_mw / 1000 if tdp_mw else None
        # Application clocks are the clocks in effect under load (set with nvidia-smi -ac);
        # fall back to the maximum clocks where application clocks are not supported.
        for key, clock in (("gpu_max_mhz", "NVML_CLOCK_SM"), ("memory_max_mhz", "NVML_CLOCK_MEM")):
            clock_id = getattr(nvml, clock, None)
            facts[key] = (value("nvmlDeviceGetApplicationsClock", handle, clock_id)
                          or value("nvmlDeviceGetMaxClockInfo", handle, clock_id))
    return facts


def _driver_from_proc() -> str | None:
    m = re.search(r"Kernel Module\s+(?:for \S+\s+)?([\d.]+)", _read("/proc/driver/nvidia/version") or "")
    return m.group(1) if m else None


# --- Jetson: L4T release, nvpmodel mode, devfreq clocks ----------------------------------------

def jetson_module(root: Path | str = "/") -> str | None:
    """A Jetson's module as its device tree names it, without 'NVIDIA ' (e.g. 'Jetson Xavier NX Developer Kit');
    `root`: the file system to read (tests give a recorded tree)."""
    model = (_read(Path(root) / "proc/device-tree/model") or "").replace("NVIDIA ", "").strip()
    return model[:200] or None


def _l4t_release() -> str | None:
    m = re.search(r"R(\d+)\s*\(release\),\s*REVISION:\s*([\d.]+)", _read("/etc/nv_tegra_release") or "")
    return f"L4T R{m.group(1)}.{m.group(2)}" if m else None


def jetson_power_mode() -> str | None:
    """The nvpmodel mode in effect, e.g. '0 (MAXN)'."""
    try:
        out = subprocess.run(["nvpmodel", "-q"], capture_output=True, text=True, timeout=10).stdout
    except (OSError, subprocess.SubprocessError):
        return None
    m = re.search(r"NV Power Mode:\s*(\S+)\s*\n\s*(\d+)", out)
    return f"{m.group(2)} ({m.group(1)})" if m else None


def jetson_gpu_max_mhz() -> float | None:
    for folder in sorted(Path("/sys/class/devfreq").glob("*")):
        name = (_read(folder / "name") or "") + folder.name
        if any(tag in name for tag in ("gpu", "gv11b", "ga10b", "gp10b")):
            hz = _read(folder / "max_freq")
            if hz and hz.isdigit():
                return int(hz) / 1e6
    return None


# --- putting it together ----------------------------------------------------------------------

def capture(device: torch.device) -> Captured:
    """Device, environment, power limit and power mode for runs on `device`."""
    kind: DeviceKind = kind_of(device)
    env: dict[str, Any] = {**_versions(), **_host(), "driver_version": None, "gpu_max_mhz": None,
                           "memory_max_mhz": None, "compute_capability": None}
    power_limit = power_mode = None
    if device.type == "cuda":
        props = torch.cuda.get_device_properties(device)
        cap = (props.major, props.minor)
        env["compute_capability"] = f"{props.major}.{props.minor}"
        dev: dict[str, Any] = {"name": props.name, "kind": kind,
                               "architecture": ARCHITECTURES.get(cap),
                               "memory_gb": round(props.total_memory / 1e9, 2)}
        if kind == "jetson":
            dev["name"] = (system_name() or props.name).replace("NVIDIA ", "").strip()
            env["driver_version"] = _l4t_release()
            env["gpu_max_mhz"] = jetson_gpu_max_mhz()
            power_mode = jetson_power_mode()
        else:
            facts = _nvml_facts(device)
            env["driver_version"] = facts.get("driver_version") or _driver_from_proc()
            env["gpu_max_mhz"] = facts.get("gpu_max_mhz")
            env["memory_max_mhz"] = facts.get("memory_max_mhz")
            power_limit = facts.get("power_limit_w")
            if facts.get("tdp_w"):
                dev["tdp_w"] = facts["tdp_w"]
    else:
        dev = {"name": env["cpu_model"] or "CPU", "kind": "cpu", "memory_gb": env["ram_gb"]}
    dev = {k: v for k, v in dev.items() if v is not None}
    return Captured(device=dev, environment=env, power_limit_w=power_limit, power_mode=power_mode)


def fallback_device(spec: str) -> dict[str, Any]:
    """A device entry for a run whose environment could not be captured."""
    if spec.startswith("cuda"):
        return {"name": f"CUDA device ({spec})", "kind": "gpu"}
    return {"name": cpu_model() or "CPU", "kind": "cpu"}
