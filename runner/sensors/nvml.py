"""NVIDIA GPUs through nvidia-ml-py (`pynvml`): boundary `gpu_board`, per GPU.

The board's energy counter (`nvmlDeviceGetTotalEnergyConsumption`, mJ, Volta and newer) is the
energy figure where it exists; power is polled either way, no faster than every 50 ms, so both
are kept and compared (the counter and a power average can disagree: zeus#181). The power trace
comes from the instantaneous-power field (`nvmlDeviceGetFieldValues` with
`NVML_FI_DEV_POWER_INSTANT`, mW) where the driver provides it, else from
`nvmlDeviceGetPowerUsage` (mW), which on Ampere and newer is a one-second average that lags the
board by about a second; `metrics.power_trace_source` records which. SM / memory clocks and clock
throttle reasons are read with each sample.

Every `pynvml` call goes through `nvml_call`, which translates `pynvml.NVMLError` once, here:
no permission -> `NvmlPermissionError`, library/driver/GPU missing -> `SensorUnavailable`,
anything else -> `SensorError`. Tests patch `runner.sensors.nvml.pynvml` (autospec).
"""

from __future__ import annotations

import contextlib
import functools
from collections.abc import Callable
from typing import Any, TypeVar

from runner.sensors.base import Sensor, SensorError, SensorUnavailable

try:  # the binding is a dependency, but the library behind it (libnvidia-ml) may be absent
    import pynvml
except ImportError:  # pragma: no cover - nvidia-ml-py is installed with JouleBench
    pynvml = None  # type: ignore[assignment]

NVML_MIN_PERIOD_S = 0.05  # NVML power readings update no faster than this
T = TypeVar("T")

# throttle (clock event) reason bits -> the names recorded in metrics.throttle_reasons
THROTTLE_BITS = (
    ("nvmlClocksThrottleReasonSwPowerCap", "sw_power_cap"),
    ("nvmlClocksThrottleReasonHwSlowdown", "hw_slowdown"),
    ("nvmlClocksThrottleReasonHwThermalSlowdown", "hw_thermal"),
    ("nvmlClocksThrottleReasonSwThermalSlowdown", "sw_thermal"),
    ("nvmlClocksThrottleReasonHwPowerBrakeSlowdown", "hw_power_brake"),
    ("nvmlClocksThrottleReasonSyncBoost", "sync_boost"),
)


class NvmlPermissionError(SensorError):
    """NVML refused the call for lack of privilege (NVML_ERROR_NO_PERMISSION)."""


def _translate(e: Exception, what: str) -> SensorError:
    name = type(e).__name__
    if pynvml is not None and isinstance(e, getattr(pynvml, "NVMLError_NoPermission", ())):
        return NvmlPermissionError(f"{what}: not permitted ({e})")
    unavailable = ("NVMLError_LibraryNotFound", "NVMLError_DriverNotLoaded", "NVMLError_Uninitialized",
                   "NVMLError_NotFound", "NVMLError_GpuIsLost", "NVMLError_InvalidArgument")
    if pynvml is not None and any(isinstance(e, getattr(pynvml, n, ())) for n in unavailable):
        return SensorUnavailable(f"{what}: {e}")
    if pynvml is not None and isinstance(e, getattr(pynvml, "NVMLError_NotSupported", ())):
        return NvmlNotSupported(f"{what}: not supported on this GPU ({e})")
    return SensorError(f"{what}: {name}: {e}")


class NvmlNotSupported(SensorError):
    """The GPU does not support this query (e.g. the energy counter before Volta)."""


def nvml_call(fn: str, *args: Any, what: str | None = None) -> Any:
    """Call `pynvml.<fn>(*args)`, translating NVML errors into ours (`raise ... from e`)."""
    if pynvml is None:
        raise SensorUnavailable("nvidia-ml-py is not installed")
    try:
        out = getattr(pynvml, fn)(*args)
    except pynvml.NVMLError as e:
        raise _translate(e, what or fn) from e
    return out.decode() if isinstance(out, bytes) else out


def translated(what: str) -> Callable[[Callable[..., T]], Callable[..., T]]:
    """Decorator form of the translation for functions calling several NVML functions."""
    def wrap(fn: Callable[..., T]) -> Callable[..., T]:
        @functools.wraps(fn)
        def inner(*args: Any, **kwargs: Any) -> T:
            if pynvml is None:
                raise SensorUnavailable("nvidia-ml-py is not installed")
            try:
                return fn(*args, **kwargs)
            except pynvml.NVMLError as e:
                raise _translate(e, what) from e
        return inner
    return wrap


@translated("NVML initialisation")
def init() -> None:
    pynvml.nvmlInit()


def shutdown() -> None:
    with contextlib.suppress(Exception):
        pynvml.nvmlShutdown()


def _mean(values: list[float]) -> float | None:
    return sum(values) / len(values) if values else None


def summarize_clock_extras(samples: list[dict[str, Any]]) -> dict[str, Any]:
    """Mean/min SM clock and mean memory clock over the samples that carry them."""
    sm = [s["sm_mhz"] for s in samples if "sm_mhz" in s]
    mem = [s["mem_mhz"] for s in samples if "mem_mhz" in s]
    return {"gpu_clock_avg_mhz": _mean(sm), "gpu_clock_min_mhz": min(sm) if sm else None,
            "memory_clock_avg_mhz": _mean(mem)}


# nvmlValueType_t -> the member of the c_nvmlValue_t union that holds the value
_VALUE_MEMBERS = (("NVML_VALUE_TYPE_DOUBLE", "dVal"), ("NVML_VALUE_TYPE_UNSIGNED_INT", "uiVal"),
                  ("NVML_VALUE_TYPE_UNSIGNED_LONG", "ulVal"), ("NVML_VALUE_TYPE_UNSIGNED_LONG_LONG", "ullVal"),
                  ("NVML_VALUE_TYPE_SIGNED_LONG_LONG", "sllVal"), ("NVML_VALUE_TYPE_SIGNED_INT", "siVal"),
                  ("NVML_VALUE_TYPE_UNSIGNED_SHORT", "usVal"))
SOURCE_INSTANT = "nvml_instant_field"
SOURCE_AVERAGE = "nvml_power_usage"


def field_value(handle: Any, field_id: int, what: str) -> float:
    """One NVML field value as a number; SensorError when the driver does not provide it."""
    values = list(nvml_call("nvmlDeviceGetFieldValues", handle, [field_id], what=what))
    if len(values) != 1:
        raise NvmlNotSupported(f"{what}: the driver returned {len(values)} values for one field")
    value = values[0]
    if value.nvmlReturn != getattr(pynvml, "NVML_SUCCESS", 0):
        raise NvmlNotSupported(f"{what}: the driver returned NVML error {value.nvmlReturn}")
    for type_name, member in _VALUE_MEMBERS:
        if value.valueType == getattr(pynvml, type_name, None):
            return float(getattr(value.value, member))
    raise SensorError(f"{what}: unknown NVML value type {value.valueType!r}")


class NvmlSensor(Sensor):
    NAME = "nvml"
    boundary = "gpu_board"
    period_s = NVML_MIN_PERIOD_S
    power_source = SOURCE_AVERAGE

    def __init__(self, index: int = 0) -> None:
        super().__init__()
        init()
        self.index = index
        self.domain = f"gpu{index}"
        try:
            self.handle = nvml_call("nvmlDeviceGetHandleByIndex", index)
            nvml_call("nvmlDeviceGetPowerUsage", self.handle, what="GPU power reading")
        except SensorError:
            shutdown()
            raise
        try:
            nvml_call("nvmlDeviceGetTotalEnergyConsumption", self.handle)
            self.has_counter = True
            self.energy_method = "counter"
        except SensorError:  # pre-Volta: poll power and integrate
            self.has_counter = False
            self.energy_method = "sampled"
        self._instant_field: int | None = getattr(pynvml, "NVML_FI_DEV_POWER_INSTANT", None)
        try:
            if not self._read_instant_mw() > 0:
                raise NvmlNotSupported("no instantaneous power field")
            self.power_source = SOURCE_INSTANT
        except SensorError:  # older driver or GPU: the averaged reading
            self.power_source = SOURCE_AVERAGE
        self._throttle_fn = ("nvmlDeviceGetCurrentClocksEventReasons"
                             if hasattr(pynvml, "nvmlDeviceGetCurrentClocksEventReasons")
                             else "nvmlDeviceGetCurrentClocksThrottleReasons")
        self._extras_ok = True

    def domains(self) -> list[str]:
        return [self.domain]

    def _read_instant_mw(self) -> float:
        if self._instant_field is None:
            raise NvmlNotSupported("this nvidia-ml-py has no NVML_FI_DEV_POWER_INSTANT")
        return field_value(self.handle, self._instant_field, "GPU instantaneous power field")  # Units: mW

    def read_power_w(self) -> dict[str, float]:
        if self.power_source == SOURCE_INSTANT:
            mw = self._read_instant_mw()
        else:
            mw = nvml_call("nvmlDeviceGetPowerUsage", self.handle, what="GPU power reading")  # Units: mW
        return {self.domain: mw / 1000.0}

    def describe(self) -> str:
        trace = "instantaneous power field" if self.power_source == SOURCE_INSTANT else "averaged power reading"
        return f"{self.NAME} ({self.boundary}, {self.energy_method}; trace from the {trace})"

    def read_energy_j(self) -> dict[str, float] | None:
        if not self.has_counter:
            return None
        mj = nvml_call("nvmlDeviceGetTotalEnergyConsumption", self.handle, what="GPU energy counter")  # Units: mJ
        return {self.domain: mj / 1000.0}

    def read_extras(self) -> dict[str, float]:
        if not self._extras_ok:
            return {}
        try:
            return {
                "sm_mhz": float(nvml_call("nvmlDeviceGetClockInfo", self.handle, pynvml.NVML_CLOCK_SM)),
                "mem_mhz": float(nvml_call("nvmlDeviceGetClockInfo", self.handle, pynvml.NVML_CLOCK_MEM)),
                "throttle": float(nvml_call(self._throttle_fn, self.handle)),
            }
        except SensorError:  # clocks are a bonus: a GPU without them still measures energy
            self._extras_ok = False
            return {}

    def summarize_extras(self, samples: list[dict[str, Any]]) -> dict[str, Any]:
        out = summarize_clock_extras(samples)
        seen = 0
        for s in samples:
            seen |= int(s.get("throttle", 0))
        names = [name for attr, name in THROTTLE_BITS if seen & int(getattr(pynvml, attr, 0) or 0)]
        out["throttle_reasons"] = ",".join(names) or None
        return out

    def close(self) -> None:
        shutdown()
