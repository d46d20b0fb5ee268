"""A background power sampler and the meter that turns a sensor into measurement windows.

`Sampler` polls a read function at a fixed rate (default 10 Hz, never faster than the sensor
updates) through a `runner.clock.Clock` (on the real clock: a daemon thread with a readiness
handshake, stopped in `try/finally` by `SensorMeter.window()` and, as a last resort, by
`weakref.finalize`), stamping each sample with the clock's monotonic time and mapping it to wall
time through one (monotonic, wall) pair taken at start. It takes one sample synchronously when it
starts and one when it stops, so the samples always span the window.

`SensorMeter` is the `PowerMeter` for every sensor in `runner.sensors`: energy comes from the
sensor's counter where it has one, else from the trapezoid integral of the samples
(`energy.trapezoid_j`). Where both an independent counter and polled power exist (NVML on
Volta and newer) both are kept, and a disagreement over the limit is flagged (`energy.figures`).
Each window records which reading its power trace holds (`power_trace_source`) and the sensor's
update period as observed (`sensor_update_period_s`): by a warmup's fast `watch()` when one ran,
else from the window's own samples (then no finer than the polling).
"""

from __future__ import annotations

import contextlib
import threading
from collections.abc import Callable, Iterator

from energy import EnergyReading, PowerTrace, trapezoid_j
from energy.figures import FLAG_SHORT_WINDOW, compare_counter_and_sampled, window_is_short
from energy.steady import update_period_s
from runner.clock import REAL_CLOCK, Clock, Ticker
from runner.sensors.base import Sensor, SensorError

DEFAULT_RATE_HZ = 10.0
PROBE_PERIOD_S = 0.01  # a warmup watch polls this fast to see the sensor's own update period


class Sampler:
    """Poll `read()` every `period_s` seconds (a background thread on the real clock)."""

    def __init__(self, read: Callable[[], dict[str, float]], period_s: float, *,
                 clock: Clock = REAL_CLOCK) -> None:
        if not period_s > 0:
            raise ValueError("period_s must be positive")
        self.read = read
        self.period_s = period_s
        self.clock = clock
        self.t_s: list[float] = []  # seconds from start (monotonic)
        self.values: list[dict[str, float]] = []
        self.error: BaseException | None = None
        self.start_mono_s = 0.0
        self.start_wall_s = 0.0
        self._lock = threading.Lock()
        self._ticker: Ticker | None = None
        self._failed = False

    def wall_time_s(self, t_s: float) -> float:
        """Unix time of a sample stamped `t_s` seconds after the start."""
        return self.start_wall_s + t_s

    def _sample(self) -> bool:
        """Take one sample; False (stop polling) when the sensor failed."""
        if self._failed:
            return False
        now = self.clock.now()
        try:
            value = self.read()
        except Exception as e:  # a sensor failing mid-window: stop polling, report it when the window closes
            self.error = e
            self._failed = True
            return False
        with self._lock:
            self.t_s.append(now - self.start_mono_s)
            self.values.append(value)
        return True

    def snapshot(self) -> tuple[list[float], list[dict[str, float]]]:
        """The samples so far (a copy, safe while the thread polls)."""
        with self._lock:
            return list(self.t_s), list(self.values)

    def start(self) -> Sampler:
        if self._ticker is not None:
            raise RuntimeError("the sampler is already running")
        self.start_mono_s = self.clock.now()
        self.start_wall_s = self.clock.wall()
        self._sample()
        self._ticker = self.clock.every(self.period_s, self._sample)
        return self

    def stop(self) -> None:
        """Stop polling and take the closing sample; safe to call twice."""
        if self._ticker is None:
            return
        self._ticker.stop()
        self._ticker = None
        if self.error is None:
            self._sample()

    def __enter__(self) -> Sampler:
        return self.start()

    def __exit__(self, *exc: object) -> None:
        self.stop()


class PowerWatch:
    """Live power during a warmup: the sensor's total power so far, polled fast enough to see how
    often the sensor updates (`SensorMeter.watch`)."""

    def __init__(self, meter: SensorMeter, sampler: Sampler) -> None:
        self.meter = meter
        self.sampler = sampler

    def power_w(self) -> tuple[list[float], list[float]]:
        """(t_s, W) of the boundary's total power since the watch began."""
        t, values = self.sampler.snapshot()
        return self.meter.total_power(t, values)

    def update_period_s(self) -> float | None:
        t, values = self.sampler.snapshot()
        return self.meter.observed_period(t, values)


class SensorMeter:
    """A `PowerMeter` over one `Sensor`: sampler plus counter, with the validity checks."""

    def __init__(self, sensor: Sensor, *, rate_hz: float = DEFAULT_RATE_HZ, clock: Clock = REAL_CLOCK) -> None:
        if not rate_hz > 0:
            raise ValueError("rate_hz must be positive")
        self.sensor = sensor
        self.clock = clock
        self.name = sensor.NAME
        self.boundary = sensor.boundary
        self.method = sensor.energy_method
        # never poll faster than the sensor updates (NVML: not under 50 ms)
        self.period_s = max(1.0 / rate_hz, sensor.period_s)
        self.flags: list[str] = list(sensor.flags)
        self.observed_period_s: float | None = None  # the sensor's update period, seen by a warmup watch

    @property
    def update_period_s(self) -> float:
        """How often the sensor's energy reading changes: observed when a watch saw it, else nominal."""
        return self.observed_period_s or self.sensor.period_s

    def close(self) -> None:
        self.sensor.close()

    def describe(self) -> str:
        return f"{self.sensor.describe()} at {1 / self.period_s:g} Hz"

    def _read(self, *, counter: bool = False) -> dict[str, float]:
        power = self.sensor.read_power_w()
        extras = {} if counter else self.sensor.read_extras()
        energy = self.sensor.read_energy_j() if (self.sensor.counter_is_source or counter) else None
        out: dict[str, float] = {}
        for domain, w in (power or {}).items():
            out[f"p:{domain}"] = w
        for domain, j in (energy or {}).items():
            out[f"e:{domain}"] = j
        for key, v in extras.items():
            out[f"x:{key}"] = v
        return out

    def total_power(self, t: list[float], values: list[dict[str, float]]) -> tuple[list[float], list[float]]:
        """The boundary's power (W) per sample: the sum of the total domains."""
        totals = self.sensor.total_domains()
        if not totals:
            return [], []
        series = [self._series(t, values, d) for d in totals]
        ts = series[0][0]
        if any(s[0] != ts for s in series[1:]):  # domains seen at different times: the first alone
            return series[0]
        return ts, [sum(parts) for parts in zip(*(s[1] for s in series))]

    def observed_period(self, t: list[float], values: list[dict[str, float]]) -> float | None:
        """The median time between changes of the energy reading (counter first, else power)."""
        totals = self.sensor.total_domains() or self.sensor.domains()
        if not totals:
            return None
        domain = totals[0]
        key = f"e:{domain}" if any(f"e:{domain}" in v for v in values) else f"p:{domain}"
        pairs = [(ti, v[key]) for ti, v in zip(t, values) if key in v]
        return update_period_s([p[0] for p in pairs], [p[1] for p in pairs])

    @contextlib.contextmanager
    def watch(self, probe_period_s: float = PROBE_PERIOD_S) -> Iterator[PowerWatch]:
        """Power polled every `probe_period_s` (a warmup only: faster than a window ever polls) to
        judge steady state and to observe how often the sensor updates."""
        sampler = Sampler(lambda: self._read(counter=self.sensor.has_counter), probe_period_s, clock=self.clock)
        sampler.start()
        try:
            yield PowerWatch(self, sampler)
        finally:
            sampler.stop()
            t, values = sampler.snapshot()
            period = self.observed_period(t, values)
            if period is not None:
                self.observed_period_s = period

    @contextlib.contextmanager
    def window(self) -> Iterator[EnergyReading]:
        reading = EnergyReading(boundary=self.boundary, method=self.method)
        sampler = Sampler(self._read, self.period_s, clock=self.clock)
        start_counter: dict[str, float] | None = None
        try:
            start_counter = self.sensor.read_energy_j()
            sampler.start()
            reading.started_wall_s = sampler.start_wall_s
            yield reading
        finally:
            sampler.stop()
            try:
                end_counter = self.sensor.read_energy_j() if start_counter is not None else None
            except SensorError as e:
                end_counter, sampler.error = None, e
            self._finish(reading, sampler, start_counter, end_counter)

    def _finish(self, reading: EnergyReading, sampler: Sampler, start: dict[str, float] | None,
                end: dict[str, float] | None) -> None:
        reading.flags.extend(self.flags)
        t = sampler.t_s
        duration = t[-1] - t[0] if t else 0.0
        reading.duration_s = duration
        reading.metrics["sample_period_s"] = self.period_s
        reading.metrics["power_trace_source"] = self.sensor.power_source
        # the update period seen by a fast warmup watch, else as fast as this window's polling shows
        observed = self.observed_period_s or self.observed_period(t, sampler.values)
        reading.metrics["sensor_update_period_s"] = observed
        if sampler.error is not None:
            reading.missing_reason = f"{self.name} sensor failed during the window: {sampler.error}"
            return
        totals = self.sensor.total_domains()
        traces, sampled_parts = self._traces(t, sampler.values, totals)
        reading.traces = traces
        if not totals:
            why = getattr(self.sensor, "total_missing_reason", None) or (
                f"no rail measures the whole {self.boundary} (rails: {', '.join(self.sensor.domains())}); adding "
                "rails would double-count")
            reading.missing_reason = f"{self.name}: {why}; no energy is given: use --power-log with a meter"
            return
        counter_j = None
        if start is not None and end is not None:
            counter_j = sum(end[d] - start[d] for d in totals if d in start and d in end)
        sampled_j = sum(sampled_parts) if sampled_parts and len(t) >= 2 else None
        if counter_j is not None:
            reading.energy_j = counter_j
            reading.method = self.sensor.energy_method
            if self.sensor.independent_power and sampled_j is not None:
                reading.metrics.update(compare_counter_and_sampled(counter_j, sampled_j, reading.flags))
        elif sampled_j is not None:
            reading.energy_j = sampled_j
            reading.method = "estimated" if self.sensor.energy_method == "estimated" else "sampled"
        else:
            reading.missing_reason = (f"{self.name}: fewer than 2 power samples in a {duration:.3f} s window; "
                                      "measure longer (--steps or --duration)")
        if window_is_short(duration, max(self.sensor.period_s, observed or 0.0)):
            reading.flags.append(FLAG_SHORT_WINDOW)
        reading.metrics.update(self.sensor.summarize_extras([
            {k[2:]: v for k, v in values.items() if k.startswith("x:")} for values in sampler.values]))

    def _traces(self, t: list[float], values: list[dict[str, float]],
                totals: list[str]) -> tuple[list[PowerTrace], list[float]]:
        """Per-domain traces (W) and the sampled energy of each total domain."""
        traces: list[PowerTrace] = []
        parts: list[float] = []
        method = "estimated" if self.sensor.energy_method == "estimated" else (
            "sampled" if self.sensor.independent_power or not self.sensor.has_counter else "counter")
        for domain in self.sensor.domains():
            boundary = self.boundary if domain in totals else None
            ts, ps = self._series(t, values, domain)
            if not ts:
                continue
            traces.append(PowerTrace(domain, boundary, method, ts, ps))
            if domain in totals and (self.sensor.independent_power or not self.sensor.has_counter):
                parts.append(trapezoid_j(ts, ps))
        return traces, parts

    @staticmethod
    def _series(t: list[float], values: list[dict[str, float]], domain: str) -> tuple[list[float], list[float]]:
        """Power samples of one domain: read directly, or derived from successive counter values."""
        key_p, key_e = f"p:{domain}", f"e:{domain}"
        ts: list[float] = []
        ps: list[float] = []
        if any(key_p in v for v in values):
            for ti, v in zip(t, values):
                if key_p in v:
                    ts.append(ti)
                    ps.append(v[key_p])
            return ts, ps
        prev: tuple[float, float] | None = None
        for ti, v in zip(t, values):
            if key_e not in v:
                continue
            if prev is not None and ti > prev[0]:
                ts.append((prev[0] + ti) / 2)  # mean power over the interval, stamped at its middle
                ps.append((v[key_e] - prev[1]) / (ti - prev[0]))
            prev = (ti, v[key_e])
        return ts, ps
