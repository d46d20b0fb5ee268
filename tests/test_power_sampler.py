"""The sampler and the integration rule against analytic power traces (error <= 0.5 %)."""

from __future__ import annotations

import math
import random
import threading
import time

import pytest

from energy import trapezoid_j, window_j
from runner.sampler import Sampler, SensorMeter
from runner.sensors.base import Sensor


def _jittered_times(duration_s: float, period_s: float, seed: int) -> list[float]:
    """Sample times at `period_s` with +-40 % jitter, first at 0 and last at `duration_s`."""
    rng = random.Random(seed)
    t, out = 0.0, [0.0]
    while True:
        t += period_s * (1 + rng.uniform(-0.4, 0.4))
        if t >= duration_s:
            break
        out.append(t)
    return out + [duration_s]


SPAN_S = 30.0  # a measured window of 30 s at 10 Hz
TRACES = {
    # name: (power(t) in W, exact energy over [0, 30] s in J)
    "constant": (lambda t: 87.5, 87.5 * 30),
    "step": (lambda t: 60.0 if t < 12.03 else 240.0, 60.0 * 12.03 + 240.0 * (30 - 12.03)),
    "ramp": (lambda t: 50.0 + 20.0 * t, 50.0 * 30 + 10.0 * 900),
    "sine": (lambda t: 150 + 50 * math.sin(t), 150 * 30 + 50 * (1 - math.cos(30.0))),
}


@pytest.mark.parametrize("name", sorted(TRACES))
@pytest.mark.parametrize("seed", [1, 2, 3])
def test_integration_of_analytic_traces_within_half_a_percent(name: str, seed: int) -> None:
    power, exact = TRACES[name]
    t = _jittered_times(SPAN_S, 0.1, seed)  # 10 Hz with +-40 % jitter, as a loaded machine delivers
    p = [power(x) for x in t]
    assert trapezoid_j(t, p) == pytest.approx(exact, rel=0.005)
    # a window strictly inside the samples: edges interpolated
    inner_exact = {"constant": 87.5 * 28.0, "ramp": 50 * 28.0 + 10.0 * (29**2 - 1)}.get(name)
    if inner_exact is not None:
        assert window_j(t, p, 1.0, 29.0) == pytest.approx(inner_exact, rel=0.005)


class _ClockSensor(Sensor):
    """A sensor whose power follows a function of the monotonic time (no hardware)."""

    NAME = "analytic"
    boundary = "system"
    period_s = 0.01

    def __init__(self, fn, counter: bool = False) -> None:  # type: ignore[no-untyped-def]
        super().__init__()
        self.fn = fn
        self.t0 = time.monotonic()
        self.has_counter = counter
        self.independent_power = not counter
        self.energy_method = "counter" if counter else "sampled"

    def domains(self) -> list[str]:
        return ["x"]

    def read_power_w(self) -> dict[str, float] | None:
        return None if self.has_counter else {"x": self.fn(time.monotonic() - self.t0)}

    def read_energy_j(self) -> dict[str, float] | None:
        if not self.has_counter:
            return None
        t = time.monotonic() - self.t0
        return {"x": 100.0 * t}  # a 100 W counter


def test_the_sampler_thread_samples_at_the_rate_and_stops() -> None:
    calls = []
    sampler = Sampler(lambda: calls.append(1) or {"p:x": 1.0}, 0.02)
    before = threading.active_count()
    with sampler:
        assert threading.active_count() == before + 1
        time.sleep(0.3)
    assert threading.active_count() == before  # stopped (try/finally in the meter, __exit__ here)
    n = len(sampler.t_s)
    assert 10 <= n <= 18  # ~0.3 / 0.02 + the two synchronous samples
    assert sampler.t_s == sorted(sampler.t_s)
    assert sampler.wall_time_s(0.0) == pytest.approx(time.time() - 0.3, abs=0.2)


def test_the_meter_stops_its_sampler_when_the_window_raises() -> None:
    meter = SensorMeter(_ClockSensor(lambda t: 10.0))
    before = threading.active_count()
    with pytest.raises(RuntimeError), meter.window() as reading:
        raise RuntimeError("workload failed")
    assert threading.active_count() == before and reading.energy_j is not None


def test_a_live_ramp_is_integrated_within_half_a_percent() -> None:
    meter = SensorMeter(_ClockSensor(lambda t: 50.0 + 400.0 * t), rate_hz=50)
    with meter.window() as reading:
        time.sleep(0.5)
    t = reading.traces[0].t_s
    # the ramp seen between the first and last sample: mean of the end powers x span (exact for a ramp)
    p = reading.traces[0].power_w
    assert reading.energy_j == pytest.approx((p[0] + p[-1]) / 2 * (t[-1] - t[0]), rel=0.005)
    assert reading.method == "sampled" and reading.duration_s == pytest.approx(t[-1] - t[0])


def test_rate_is_never_faster_than_the_sensor() -> None:
    sensor = _ClockSensor(lambda t: 1.0)
    sensor.period_s = 0.5
    assert SensorMeter(sensor, rate_hz=100).period_s == 0.5
    assert SensorMeter(_ClockSensor(lambda t: 1.0), rate_hz=10).period_s == pytest.approx(0.1)


def test_a_window_shorter_than_three_sensor_periods_is_flagged() -> None:
    sensor = _ClockSensor(lambda t: 1.0)
    sensor.period_s = 0.2
    with SensorMeter(sensor).window() as reading:
        time.sleep(0.05)
    assert "window_short_for_sensor" in reading.flags


def test_a_counter_sensor_gives_counter_energy_and_derived_power() -> None:
    meter = SensorMeter(_ClockSensor(lambda t: 0.0, counter=True), rate_hz=50)
    with meter.window() as reading:
        time.sleep(0.3)
    assert reading.method == "counter"
    assert reading.energy_j == pytest.approx(100.0 * reading.duration_s, rel=0.02)
    assert sum(reading.traces[0].power_w) / len(reading.traces[0].power_w) == pytest.approx(100.0, rel=0.05)
    assert "energy_sampled_j" not in reading.metrics  # power derived from the counter is no second opinion
