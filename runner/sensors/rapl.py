"""Linux RAPL through powercap sysfs: CPU package and DRAM energy counters, boundary `cpu_package`.

Zones `/sys/class/powercap/intel-rapl:N` (`name` package-N) and their `dram` subzones are read;
core/uncore subzones are inside the package and never added. The counter `energy_uj` wraps at
`max_energy_range_uj` (every few minutes at load on many CPUs: codecarbon#309 stored negative
energy from it). It is read on every sample and each step is taken modulo the range, so a wrap
adds (range - before) + after instead of a negative number. The energy includes DRAM where a
dram zone exists; the traces keep each zone apart.
"""

from __future__ import annotations

from dataclasses import dataclass
from pathlib import Path

from runner.sensors.base import Sensor, SensorError, SensorUnavailable

POWERCAP = "sys/class/powercap"
RAPL_PERIOD_S = 0.01  # RAPL updates about every 1 ms; 10 ms keeps the counter steps meaningful


@dataclass
class Zone:
    domain: str  # package-0, dram-0
    energy_file: Path
    max_range_uj: int
    last_uj: int | None = None
    total_uj: int = 0  # accumulated, wraps undone

    def read_uj(self) -> int:
        try:
            return int(self.energy_file.read_text().strip())
        except PermissionError as e:
            raise SensorUnavailable(
                f"RAPL counter {self.energy_file} is readable by root only (since Linux 5.10); "
                f"allow it with `sudo chmod a+r {self.energy_file}`") from e
        except (OSError, ValueError) as e:
            raise SensorError(f"RAPL counter {self.energy_file}: {e}") from e

    def advance(self) -> float:
        """Read the counter, add the step since the last read (modulo the range), return J."""
        now = self.read_uj()
        if self.last_uj is not None:
            step = now - self.last_uj
            if step < 0:  # the counter wrapped once since the last read
                step += self.max_range_uj + 1
            self.total_uj += step
        self.last_uj = now
        return self.total_uj / 1e6


def find_zones(root: Path | str = "/") -> list[Zone]:
    base = Path(root) / POWERCAP
    zones: list[Zone] = []
    for pkg in sorted(base.glob("intel-rapl:*")):
        if pkg.name.count(":") != 1:
            continue
        candidates = [pkg] + sorted(p for p in pkg.glob(f"{pkg.name}:*") if p.is_dir())
        index = pkg.name.split(":")[1]
        for zone in candidates:
            try:
                name = (zone / "name").read_text().strip()
                max_range = int((zone / "max_energy_range_uj").read_text().strip())
            except (OSError, ValueError):
                continue
            if name.startswith("package"):
                domain = name if "-" in name else f"package-{index}"
            elif name == "dram":
                domain = f"dram-{index}"
            else:
                continue  # core, uncore, psys: inside the package or the whole platform
            zones.append(Zone(domain, zone / "energy_uj", max_range))
    return zones


class RaplSensor(Sensor):
    NAME = "rapl"
    boundary = "cpu_package"
    energy_method = "counter"
    period_s = RAPL_PERIOD_S
    has_counter = True
    independent_power = False
    power_source = "rapl_counter"  # power derived from successive energy counter values

    def __init__(self, root: Path | str = "/") -> None:
        super().__init__()
        self.zones = find_zones(root)
        if not self.zones:
            raise SensorUnavailable("no RAPL powercap zones (/sys/class/powercap/intel-rapl:*)")
        for z in self.zones:
            z.advance()  # readable now (permission errors surface at detection)

    def domains(self) -> list[str]:
        return [z.domain for z in self.zones]

    def read_energy_j(self) -> dict[str, float]:
        return {z.domain: z.advance() for z in self.zones}
