"""The power sampler's CPU cost at 10 Hz, as % of one core (target: <= 1 %).

Runs the real SensorMeter for --seconds with the sensor this machine detects (the estimate on a
machine without sensors) while the main thread sleeps, and compares the process's CPU time with
the same sleep without the sampler. Usage: python benchmarks/sampler_overhead.py [--seconds 20]
"""

from __future__ import annotations

import argparse
import time

from runner.sampler import SensorMeter
from runner.sensors import find_sensor


def cpu_during(seconds: float, meter: SensorMeter | None) -> float:
    c0 = time.process_time()
    if meter is None:
        time.sleep(seconds)
    else:
        with meter.window():
            time.sleep(seconds)
    return time.process_time() - c0


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--seconds", type=float, default=20.0)
    parser.add_argument("--hz", type=float, default=10.0)
    args = parser.parse_args()
    sensor = find_sensor("cpu")
    meter = SensorMeter(sensor, rate_hz=args.hz)
    base = cpu_during(args.seconds, None)
    used = cpu_during(args.seconds, meter)
    meter.close()
    pct = max(used - base, 0.0) / args.seconds * 100
    print(f"sensor: {sensor.describe()}, {1 / meter.period_s:g} Hz for {args.seconds:g} s")
    print(f"sampler CPU cost: {pct:.3f} % of one core ({(used - base) * 1000:.1f} ms CPU over {args.seconds:g} s; "
          f"target <= 1 %)")


if __name__ == "__main__":
    main()
