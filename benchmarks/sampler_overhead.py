"""The power sampler's CPU cost at 10 Hz, as % of one core (target: <= 1 %).

Runs the real SensorMeter for --seconds with the sensor this machine detects (the estimate on a
machine without sensors) while the main thread sleeps, and compares the process's CPU time with
the same sleep without the sampler. Usage: python benchmarks/sampler_overhead.py [--seconds 20]
(smallest: --seconds 0.5). A miss is printed beside the target (exit code 0); the whole run is
time-limited (--limit-s: the sampler's thread is the product's): past it, `FAILED: ...`, exit code 1.
"""

from __future__ import annotations

import argparse
import sys
import time
from pathlib import Path

import waits  # benchmarks/waits.py, beside this script

sys.path.insert(0, str(Path(__file__).resolve().parent.parent))

from runner.sampler import SensorMeter  # noqa: E402
from runner.sensors import find_sensor  # noqa: E402


def cpu_during(seconds: float, meter: SensorMeter | None) -> float:
    c0 = time.process_time()
    if meter is None:
        time.sleep(seconds)
    else:
        with meter.window():
            time.sleep(seconds)
    return time.process_time() - c0


def measure(seconds: float, hz: float) -> int:
    sensor = find_sensor("cpu")
    meter = SensorMeter(sensor, rate_hz=hz)
    base = cpu_during(seconds, None)
    used = cpu_during(seconds, meter)
    meter.close()
    pct = max(used - base, 0.0) / seconds * 100
    print(f"sensor: {sensor.describe()}, {1 / meter.period_s:g} Hz for {seconds:g} s")
    print(f"sampler CPU cost: {pct:.3f} % of one core ({(used - base) * 1000:.1f} ms CPU over {seconds:g} s; "
          f"target <= 1 %)")
    return 0


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--hz", type=float, default=10.0)
    waits.add_limits(parser, limit_s=600)
    args = parser.parse_args()
    return waits.main(lambda: measure(args.seconds, args.hz), args.limit_s)


if __name__ == "__main__":
    sys.exit(main())
