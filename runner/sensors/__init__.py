"""Power sensors behind one interface, detected in a fixed order.

    meter = detect("cuda:0")          # a PowerMeter; never None
    with meter.window() as reading:   # reading.energy_j, .boundary, .method when it closes
        ...

Order (the first that works wins; each skipped one leaves its reason in `Detection.skipped`):
1. `--power-log FILE` when given (`external`): the user asked for it;
2. NVIDIA GPU through NVML (`nvml`), for a CUDA device: boundary gpu_board, counter or sampled;
3. Jetson INA3221 rails in sysfs (`jetson`), then jtop when installed and running: jetson_module;
4. Linux RAPL powercap (`rapl`): cpu_package, counter;
5. the estimate (`estimate`): CPU utilisation x TDP, boundary and method `estimated`.
The last always works, so a machine with no sensor still records energy, labelled honestly.
"""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path

from runner.power import PowerMeter
from runner.sensors.base import Sensor, SensorError, SensorUnavailable

__all__ = ["Detection", "Sensor", "SensorError", "SensorUnavailable", "detect", "detect_meter", "find_sensor"]


@dataclass
class Detection:
    meter: PowerMeter
    skipped: list[str] = field(default_factory=list)  # "nvml: <why not>"


def _cuda_index(device: str | None) -> int | None:
    if device is None:
        return None
    if device == "cuda":
        return 0
    if device.startswith("cuda:"):
        return int(device.split(":", 1)[1])
    return None


def find_sensor(device: str | None = None, *, tdp_w: float | None = None, root: Path | str = "/",
                cpu_name: str | None = None, skipped: list[str] | None = None) -> Sensor:
    """The first sensor that works, in the fixed order; the estimate when none does."""
    from runner.sensors import estimate, jetson, nvml, rapl

    skipped = skipped if skipped is not None else []
    index = _cuda_index(device)
    attempts: list[tuple[str, type[Sensor] | None, dict]] = []
    if index is not None and not jetson.is_jetson(root):
        attempts.append(("nvml", nvml.NvmlSensor, {"index": index}))
    else:
        skipped.append("nvml: not a CUDA run on a discrete GPU")
    attempts += [("ina3221", jetson.Ina3221Sensor, {"root": root})]
    if jetson.is_jetson(root):
        attempts.append(("jtop", jetson.JtopSensor, {}))
    attempts.append(("rapl", rapl.RaplSensor, {"root": root}))
    for name, cls, kwargs in attempts:
        assert cls is not None
        try:
            return cls(**kwargs)
        except SensorError as e:
            skipped.append(f"{name}: {e}")
    if cpu_name is None:
        from runner.environment import cpu_model

        cpu_name = cpu_model()
    return estimate.EstimateSensor(tdp_w=tdp_w, cpu_name=cpu_name)


def detect_meter(device: str | None = None, *, power_log: Path | str | None = None,
                 log_boundary: str | None = None, tdp_w: float | None = None, rate_hz: float = 10.0,
                 root: Path | str = "/") -> Detection:
    """The meter for runs on `device`, with the reasons the sensors before it were skipped."""
    from runner.sampler import SensorMeter

    if power_log is not None:
        from runner.sensors.external import ExternalLogMeter

        return Detection(ExternalLogMeter(power_log, log_boundary))
    skipped: list[str] = []
    sensor = find_sensor(device, tdp_w=tdp_w, root=root, skipped=skipped)
    return Detection(SensorMeter(sensor, rate_hz=rate_hz), skipped)


def detect(device: str | None = None, *, power_log: Path | str | None = None,
           log_boundary: str | None = None, tdp_w: float | None = None, rate_hz: float = 10.0,
           root: Path | str = "/") -> PowerMeter:
    return detect_meter(device, power_log=power_log, log_boundary=log_boundary, tdp_w=tdp_w, rate_hz=rate_hz,
                        root=root).meter
