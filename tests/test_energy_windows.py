"""Energy-grade windows against a simulated NVML (100 ms updates, 1 s averaging lag, 2 s power
rise) on a manual clock: the new defaults land within 1 % of the true J/sample, the old ones
(3 warmup steps, 30 measured steps) miss by more than 5 %. Minutes of GPU time replay in seconds.
"""

from __future__ import annotations

import contextlib
import random
from collections.abc import Iterator
from dataclasses import dataclass

import pytest
import torch

from energy import EnergyReading
from energy.stats import aggregate
from joulebench import defaults
from runner.clock import ManualClock
from runner.execute import window_plan
from runner.measure import FLAG_NOT_STEADY, FLAG_UNDER_MINIMUM, Window, WindowPlan, run_window
from runner.options import SweepOptions
from runner.sampler import SensorMeter
from runner.sensors.nvml import NvmlSensor
from tests.sim_nvml import SimulatedGpu, patched_pynvml

BATCH = 8
STEP_S = 0.0125  # bert-large-squad fp16 batch 8 on the H100: about 80 steps/s
LOAD_W = 420.0
TRUE_J_PER_SAMPLE = LOAD_W * STEP_S / BATCH  # steady state: what a buyer's sustained workload costs
OLD_DEFAULTS = WindowPlan(steps=30, warmup_steps=3)  # before issue 10: 30 steps after 3 warmup steps


class _TruthMeter:
    """The meter under test, plus the simulation's true energy over each window it opens."""

    def __init__(self, meter: SensorMeter, gpu: SimulatedGpu) -> None:
        self.meter, self.gpu = meter, gpu
        self.name, self.boundary, self.method = meter.name, meter.boundary, meter.method
        self.watch = meter.watch
        self.true_j: list[float] = []

    @property
    def update_period_s(self) -> float:
        return self.meter.update_period_s

    @contextlib.contextmanager
    def window(self) -> Iterator[EnergyReading]:
        start = self.gpu.energy_j
        with self.meter.window() as reading:
            yield reading
        self.true_j.append(self.gpu.energy_j - start)

    def close(self) -> None:
        self.meter.close()


@dataclass
class Repeat:
    window: Window
    j_per_sample: float
    true_j_per_sample: float  # the simulation's exact energy over this window / examples


def _step(gpu: SimulatedGpu, rng: random.Random, started: list[float]) -> None:
    """One step: 5 % jitter, and 30 % slower for the first second (clocks and caches warming)."""
    if not started:
        started.append(gpu.clock.now())
    slow = 0.3 if gpu.clock.now() - started[0] < 1.0 else 0.0
    gpu.step(STEP_S * (1 + slow) * (1 + rng.uniform(-0.05, 0.05)))


def measure(plan: WindowPlan | None, repeats: int, *, instant_field: bool = True, rise_s: float = 2.0,
            swing_pct: float = 0.0, seed: int = 1) -> list[Repeat]:
    """Repeats as the sweep runs them: the board idles while the model is built, then warmup and window."""
    clock = ManualClock()
    gpu = SimulatedGpu(clock, load_w=LOAD_W, rise_s=rise_s, instant_field=instant_field, seed=seed,
                       swing_pct=swing_pct)
    rng = random.Random(seed)
    out = []
    with patched_pynvml(gpu):
        meter = _TruthMeter(SensorMeter(NvmlSensor(0), rate_hz=defaults.SAMPLE_HZ, clock=clock), gpu)
        configs = SweepOptions(device="cpu").expand(sensor=True)  # the defaults a sensor-equipped sweep gets
        for i in range(repeats):
            gpu.rest(5.0)  # the model is built: the board cools to idle
            started: list[float] = []
            window = run_window(lambda started=started: _step(gpu, rng, started), torch.device("cpu"),
                                plan=plan or window_plan(configs[i], meter), meter=meter, clock=clock,
                                rng=random.Random(seed * 100 + i), sync=lambda: None)
            gpu.rest(0.0)
            examples = window.steps * BATCH
            assert window.energy.energy_j is not None
            out.append(Repeat(window, window.energy.energy_j / examples, meter.true_j[-1] / examples))
    return out


def _error_pct(value: float, truth: float) -> float:
    return (value / truth - 1.0) * 100.0


@pytest.mark.parametrize("instant_field", [True, False], ids=["instant-field", "averaged-reading"])
def test_new_defaults_within_1pct_of_the_true_energy_old_defaults_miss_by_over_5pct(instant_field: bool) -> None:
    configs = SweepOptions(device="cpu").expand(sensor=True)
    assert len(configs) == defaults.SENSOR_REPEATS == 3  # repeats by default on a sensor
    assert configs[0].warmup_steps is None and configs[0].steps is None and configs[0].min_window_s == 10.0

    new = measure(None, len(configs), instant_field=instant_field)
    for r in new:
        assert r.window.duration_s >= defaults.MIN_WINDOW_S and r.window.warmup.steady is True
        assert abs(_error_pct(r.j_per_sample, TRUE_J_PER_SAMPLE)) < 1.0
        assert abs(_error_pct(r.j_per_sample, r.true_j_per_sample)) < 1.0
        assert r.window.flags == [] and r.window.energy.flags == []
    agg = aggregate([r.j_per_sample for r in new])
    assert agg is not None and agg.n == 3
    assert abs(_error_pct(agg.mean, TRUE_J_PER_SAMPLE)) < 1.0
    assert agg.cov_pct is not None and agg.cov_pct <= 2.0  # the "repeats CoV <= 2 %"
    assert agg.ci95_low is not None and agg.ci95_high is not None
    assert agg.ci95_low <= TRUE_J_PER_SAMPLE <= agg.ci95_high

    old = measure(OLD_DEFAULTS, 3, instant_field=instant_field)
    for r in old:
        assert _error_pct(r.j_per_sample, TRUE_J_PER_SAMPLE) < -5.0  # the window sits on the power rise
        assert r.window.duration_s < 1.0


def test_the_window_records_the_sensor_it_saw() -> None:
    (instant,) = measure(None, 1)
    m = instant.window.energy.metrics
    assert m["power_trace_source"] == "nvml_instant_field"
    assert m["sensor_update_period_s"] == pytest.approx(0.1, abs=0.002)  # observed, not NVML's nominal 50 ms
    assert m["energy_disagreement_pct"] < 5.0  # counter and instantaneous trace agree over a steady 10 s
    (averaged,) = measure(None, 1, instant_field=False)
    assert averaged.window.energy.metrics["power_trace_source"] == "nvml_power_usage"


def test_repeats_start_at_different_offsets_within_one_sensor_period() -> None:
    offsets = [r.window.warmup.start_offset_s for r in measure(None, 3)]
    assert all(o is not None and 0.0 <= o < 0.1 for o in offsets)
    assert len(set(offsets)) == 3


def test_a_window_under_the_minimum_is_flagged_and_steps_still_work() -> None:
    (r,) = measure(WindowPlan(steps=30, min_window_s=defaults.MIN_WINDOW_S, warmup_steps=3), 1)
    assert r.window.steps == 30 and FLAG_UNDER_MINIMUM in r.window.flags
    (d,) = measure(WindowPlan(duration_s=2.0, min_window_s=defaults.MIN_WINDOW_S, warmup_steps=None), 1)
    assert 2.0 <= d.window.duration_s < 2.1 and FLAG_UNDER_MINIMUM in d.window.flags


def test_a_warmup_that_never_settles_stops_at_its_cap_and_is_flagged() -> None:
    (r,) = measure(None, 1, swing_pct=15.0)  # power swinging +-15 % every 4 s: never steady
    assert r.window.warmup.steady is False and FLAG_NOT_STEADY in r.window.flags
    assert defaults.WARMUP_MAX_S <= r.window.warmup.duration_s < defaults.WARMUP_MAX_S + 1.0


def test_the_estimate_only_path_keeps_short_defaults() -> None:
    opts = SweepOptions(device="cpu")
    assert opts.window_settings(sensor=False) == (defaults.STEPS, 0.0, defaults.WARMUP_STEPS, defaults.REPEATS)
    (cfg,) = opts.expand(sensor=False)
    assert (cfg.steps, cfg.warmup_steps, cfg.min_window_s) == (20, 3, 0.0)
    # explicit choices win on either path
    chosen = SweepOptions(device="cpu", warmup="auto", min_window_s=2.0, repeats=2)
    assert chosen.window_settings(sensor=False) == (None, 2.0, None, 2)
    assert SweepOptions(device="cpu", steps=7, warmup=0).window_settings(sensor=True) == (7, 10.0, 0, 3)


def test_the_manual_clock_fires_tickers_at_their_times_in_order() -> None:
    clock = ManualClock()
    seen: list[tuple[str, float]] = []
    fast = clock.every(0.25, lambda: seen.append(("fast", clock.now())) or True)
    clock.every(0.4, lambda: seen.append(("slow", clock.now())) or len(seen) < 4)
    clock.advance(1.0)
    fast.stop()
    clock.advance(1.0)
    assert seen == [("fast", 0.25), ("slow", 0.4), ("fast", 0.5), ("fast", 0.75), ("slow", 0.8), ("fast", 1.0)]


def test_progress_on_a_terminal_names_the_minimum_window() -> None:
    import io

    from runner.report import Progress

    class Tty(io.StringIO):
        def isatty(self) -> bool:
            return True

    stream = Tty()
    (cfg,) = SweepOptions(device="cpu", repeats=1).expand(sensor=True)
    callback = Progress(1, stream).step_callback(cfg)
    assert callback is not None
    callback(12)
    assert "measured step 12 (window of at least 10 s)" in stream.getvalue()
