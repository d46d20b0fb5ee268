"""`--gpus 0,1`: the power of the devices the server runs on, read on the clock the requests are timed on.

- NVIDIA GPUs (NVML): one GPU is `runner.sensors.nvml.NvmlSensor`; several are one `GpuSet`, a sensor
  whose domains are the GPUs (gpu0, gpu1: each GPU's power trace kept) and whose energy is their sum,
  the device-energy figure of the server (boundary gpu_board; counter when every GPU has one). The
  sampler (`runner.sampler.SensorMeter`) reads them all in one sample, on `runner.clock.REAL_CLOCK`.
- A Jetson: `--gpus 0` is its one integrated GPU, measured as the module's power (the INA3221 input rail,
  or jtop): `runner.sensors.find_sensor` on the Jetson, as `joulebench run` does.
- The CPU: no `--gpus`; `--device cpu` (RAPL, else the labelled estimate).
A GPU index that does not exist, or no NVIDIA GPU to read, is a ServeBenchError before anything is sent.
"""

from __future__ import annotations

from pathlib import Path
from typing import Any

from runner.sensors.base import Sensor, SensorError
from runner.serve_bench.options import ServeBenchError

MAX_GPUS = 64


def parse_gpus(text: str) -> list[int]:
    """'0,1' -> [0, 1]; ServeBenchError naming the item that is not a GPU index."""
    out: list[int] = []
    for item in str(text).split(","):
        item = item.strip()
        if not item.isdigit() or int(item) >= MAX_GPUS:
            raise ServeBenchError(f"--gpus: {item[:40]!r} is not a GPU index; write the indices nvidia-smi shows, "
                                  "e.g. 0 or 0,1")
        if int(item) in out:
            raise ServeBenchError(f"--gpus: GPU {item} is given twice")
        out.append(int(item))
    return out


class GpuSet(Sensor):
    """Several NVIDIA GPUs as one boundary: each GPU its own domain, the energy their sum."""

    NAME = "nvml"
    boundary = "gpu_board"

    def __init__(self, sensors: list[Sensor]) -> None:
        super().__init__()
        self.sensors = sensors
        self.period_s = max(s.period_s for s in sensors)
        self.has_counter = all(s.has_counter for s in sensors)
        self.energy_method = "counter" if self.has_counter else "sampled"
        sources = {s.power_source for s in sensors}
        self.power_source = sources.pop() if len(sources) == 1 else sensors[0].power_source
        for s in sensors:
            self.flags.extend(f for f in s.flags if f not in self.flags)

    def domains(self) -> list[str]:
        return [d for s in self.sensors for d in s.domains()]

    def read_power_w(self) -> dict[str, float] | None:
        out: dict[str, float] = {}
        for s in self.sensors:
            out.update(s.read_power_w() or {})
        return out

    def read_energy_j(self) -> dict[str, float] | None:
        if not self.has_counter:
            return None
        out: dict[str, float] = {}
        for s in self.sensors:
            out.update(s.read_energy_j() or {})
        return out

    def read_extras(self) -> dict[str, float]:  # clocks and throttle reasons: the first GPU's
        return self.sensors[0].read_extras()

    def summarize_extras(self, samples: list[dict[str, Any]]) -> dict[str, Any]:
        return self.sensors[0].summarize_extras(samples)

    def describe(self) -> str:
        return f"{self.NAME} ({self.boundary}, {self.energy_method}; {len(self.sensors)} GPUs summed: " \
               f"{', '.join(self.domains())})"

    def close(self) -> None:
        for s in self.sensors:
            s.close()


def open_gpus(indices: list[int], *, root: Path | str = "/") -> Sensor:
    """The sensor of the GPUs `indices`; ServeBenchError for an index that does not exist or no GPU to read."""
    from runner.sensors import find_sensor, jetson, nvml

    if jetson.is_jetson(root):
        if indices != [0]:
            raise ServeBenchError(f"--gpus: a Jetson has one GPU, 0 (given: {','.join(map(str, indices))}); its "
                                  "module power is measured")
        skipped: list[str] = []
        sensor = find_sensor("cuda", root=root, skipped=skipped)
        if sensor.boundary != "jetson_module":
            sensor.close()
            raise ServeBenchError("--gpus 0: this Jetson's module power cannot be read (" + "; ".join(skipped)
                                  + "); give --power-log with a tegrastats log")
        return sensor
    try:
        nvml.init()
        try:
            count = int(nvml.nvml_call("nvmlDeviceGetCount", what="GPU count"))
        finally:
            nvml.shutdown()
    except SensorError as e:
        raise ServeBenchError(f"--gpus: no NVIDIA GPU can be read on this machine ({e}); measure the CPU with "
                              "--device cpu, or give --power-log with the server's power log") from None
    missing = [i for i in indices if i >= count]
    if missing:
        have = f"indices 0-{count - 1}" if count > 1 else ("index 0" if count == 1 else "none")
        raise ServeBenchError(f"--gpus: GPU {missing[0]} does not exist: this machine has {count} NVIDIA GPU(s) "
                              f"({have}); give the indices nvidia-smi shows")
    sensors: list[Sensor] = []
    try:
        for i in indices:
            sensors.append(nvml.NvmlSensor(i))
    except SensorError as e:
        for s in sensors:
            s.close()
        raise ServeBenchError(f"--gpus: GPU {i} cannot be read: {e}") from None
    return sensors[0] if len(sensors) == 1 else GpuSet(sensors)


def gpu_name(index: int) -> str | None:
    """The GPU's name as NVML gives it (for a client whose torch has no CUDA), or None."""
    from runner.sensors import nvml

    try:
        nvml.init()
        try:
            name = nvml.nvml_call("nvmlDeviceGetName", nvml.nvml_call("nvmlDeviceGetHandleByIndex", index))
        finally:
            nvml.shutdown()
    except SensorError:
        return None
    return (name.decode() if isinstance(name, bytes) else str(name)).replace("NVIDIA ", "").strip() or None
