"""The fallback when no sensor exists: CPU utilisation x TDP, labelled boundary and method `estimated`.

Power = TDP x (busy CPU time / elapsed CPU time of all cores), busy and total from /proc/stat
(user + nice + system + irq + softirq + steal over everything but idle and iowait). It is kept
as a cumulative counter (J = TDP x busy core-seconds / cores) so a window's energy needs only
the two ends. TDP comes from `--tdp-w`, else the device catalog (sample_data/devices.csv) by
the CPU's model name, else an assumption of DEFAULT_W_PER_CORE per logical core, flagged
`tdp_assumed`. It is an estimate of the CPU's draw, not a measurement: every figure says so.
"""

from __future__ import annotations

import csv
import os
import time
from pathlib import Path

from joulebench.paths import REPO_ROOT
from runner.sensors.base import Sensor, SensorError

DEFAULT_W_PER_CORE = 10.0
CATALOG = REPO_ROOT / "sample_data" / "devices.csv"


def catalog_tdp_w(cpu_name: str | None, catalog: Path = CATALOG) -> float | None:
    """The catalog's TDP for a CPU whose name matches the catalog name (case-insensitive), or None."""
    if not cpu_name:
        return None
    try:
        with catalog.open(newline="") as f:
            for row in csv.DictReader(f):
                name = (row.get("name") or "").strip().lower()
                if row.get("kind") == "cpu" and name and name in cpu_name.lower() and row.get("tdp_w"):
                    return float(row["tdp_w"])
    except (OSError, ValueError):
        return None
    return None


def read_proc_stat(path: Path | str = "/proc/stat") -> tuple[float, float] | None:
    """(busy, total) jiffies of all CPUs from /proc/stat's first line, or None where it is absent."""
    try:
        with open(path) as f:
            fields = f.readline().split()
    except OSError:
        return None
    if not fields or fields[0] != "cpu":
        return None
    values = [float(v) for v in fields[1:9]]  # user nice system idle iowait irq softirq steal
    total = sum(values)
    busy = total - values[3] - values[4]
    return busy, total


class EstimateSensor(Sensor):
    NAME = "estimate"
    boundary = "estimated"
    energy_method = "estimated"
    period_s = 0.1  # /proc/stat moves in 10 ms jiffies; finer sampling only adds noise
    has_counter = True
    independent_power = False
    power_source = "estimated"  # utilisation x TDP, derived from the cumulative estimate

    def __init__(self, tdp_w: float | None = None, cpu_name: str | None = None,
                 proc_stat: Path | str = "/proc/stat") -> None:
        super().__init__()
        self.cores = os.cpu_count() or 1
        self.proc_stat = proc_stat
        tdp = tdp_w or catalog_tdp_w(cpu_name)
        if tdp is None:
            tdp = DEFAULT_W_PER_CORE * self.cores
            self.flags.append("tdp_assumed")
        if not tdp > 0:
            raise SensorError(f"--tdp-w: {tdp} is not a positive number of watts")
        self.tdp_w = tdp
        self._use_proc = read_proc_stat(proc_stat) is not None
        self._last: tuple[float, float] | None = None
        self._energy_j = 0.0
        self._cpu0 = time.process_time()

    def domains(self) -> list[str]:
        return ["cpu"]

    def read_energy_j(self) -> dict[str, float]:
        if self._use_proc:
            now = read_proc_stat(self.proc_stat)
            if now is None:
                raise SensorError("/proc/stat became unreadable")
            if self._last is not None and now[1] > self._last[1]:
                busy_fraction = (now[0] - self._last[0]) / (now[1] - self._last[1])
                wall_s = (now[1] - self._last[1]) / self.cores / os.sysconf("SC_CLK_TCK")
                self._energy_j += self.tdp_w * min(max(busy_fraction, 0.0), 1.0) * wall_s
            self._last = now
            return {"cpu": self._energy_j}
        # no /proc/stat (not Linux): this process's CPU time only
        return {"cpu": self.tdp_w * (time.process_time() - self._cpu0) / self.cores}

    def describe(self) -> str:
        return f"estimate (CPU utilisation x {self.tdp_w:g} W TDP; boundary estimated)"
