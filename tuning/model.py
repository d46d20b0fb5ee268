"""Time and power of power settings not measured, from the ones that were (scikit-learn).

GPUs, by power limit P (W):
- throughput (1 / time) is a robust (Huber) regression on 100/P and (100/P)^2: below the point
  where the limit binds, clocks and so throughput fall steeply as the limit drops, and a single
  slow measurement window (a data-loader stall) must not bend the curve for its neighbours;
- average power is an ordinary least-squares quadratic in P: it follows the limit while the
  limit binds and levels off above it.

Jetsons, by power mode (the paper's regression, POMACS 2022 section 5.7), on the mode's
features from the power-mode table:
- time is linear in 1/GPU MHz, 1/memory MHz and 1/(CPU MHz x CPU cores): work over clock rate;
- average power is linear in GPU MHz, memory MHz and CPU MHz x CPU cores.

Every model is checked by leave-one-out: each measured setting that lies inside the range of the
others is predicted from the others, and the mean absolute percentage error (MAPE) of time, of
power and of energy is reported; the root-mean-square percentage error sets the band drawn
around predictions. A model is refused, with the reason, when fewer settings were measured than
it needs (its coefficients plus one, to check it), when no measured setting can be held out, and
for any setting outside the measured range (no extrapolation).
"""

from __future__ import annotations

import math
import statistics
import warnings
from collections.abc import Callable, Sequence
from dataclasses import dataclass

import numpy as np
from sklearn.base import RegressorMixin
from sklearn.exceptions import ConvergenceWarning
from sklearn.linear_model import HuberRegressor, LinearRegression
from sklearn.pipeline import Pipeline, make_pipeline
from sklearn.preprocessing import FunctionTransformer, PolynomialFeatures, StandardScaler

from joulebench.errors import PredictionRefusedError
from tuning.points import MODE_FEATURE_LABELS, MODE_FEATURES, POWER_LIMIT, Point, PowerProfile, limit_label

# Huber's epsilon: residuals beyond 1.15 scale units count linearly, not squared. Across the real Zeus
# profiles (12 power-limit profiles, 45 NSDI'23 traces) 1.15 and scikit-learn's default 1.35 give
# the same mean leave-one-out time error (3.7%); 1.15 gives less weight to a single slow window.
HUBER_EPSILON = 1.15
GPU_COEFFICIENTS = 3  # intercept + two terms, for time and for power
JETSON_COEFFICIENTS = 4  # intercept + three features


def _per_100w_inverse(x: np.ndarray) -> np.ndarray:
    return 100.0 / x


def _per_100w(x: np.ndarray) -> np.ndarray:
    return x / 100.0


def _inverse_clocks(x: np.ndarray) -> np.ndarray:
    cores, cpu, gpu, mem = x[:, 0], x[:, 1], x[:, 2], x[:, 3]
    return np.column_stack([1000.0 / gpu, 1000.0 / mem, 1000.0 / (cpu * cores)])


def _clocks(x: np.ndarray) -> np.ndarray:
    cores, cpu, gpu, mem = x[:, 0], x[:, 1], x[:, 2], x[:, 3]
    return np.column_stack([gpu / 1000.0, mem / 1000.0, cpu * cores / 1000.0])


def _gpu_throughput() -> Pipeline:
    return make_pipeline(FunctionTransformer(_per_100w_inverse), PolynomialFeatures(2, include_bias=False),
                         StandardScaler(), HuberRegressor(epsilon=HUBER_EPSILON, alpha=1e-4, max_iter=1000))


def _gpu_power() -> Pipeline:
    return make_pipeline(FunctionTransformer(_per_100w), PolynomialFeatures(2, include_bias=False),
                         StandardScaler(), LinearRegression())


def _jetson_time() -> Pipeline:
    return make_pipeline(FunctionTransformer(_inverse_clocks), StandardScaler(), LinearRegression())


def _jetson_power() -> Pipeline:
    return make_pipeline(FunctionTransformer(_clocks), StandardScaler(), LinearRegression())


@dataclass(frozen=True)
class Spec:
    """How one kind of setting is modelled."""

    name: str
    coefficients: int
    time_model: Callable[[], Pipeline]
    time_is_rate: bool  # the time model predicts throughput (1/time) rather than time
    power_model: Callable[[], Pipeline]
    feature_names: tuple[str, ...]
    description: str
    option: str  # the `joulebench run` option that measures more settings


GPU_SPEC = Spec("power limit", GPU_COEFFICIENTS, _gpu_throughput, True, _gpu_power, ("power_limit_w",),
                "throughput: Huber regression on 100/P and (100/P)^2; power: least-squares quadratic in P",
                "--power-limit")
JETSON_SPEC = Spec("power mode", JETSON_COEFFICIENTS, _jetson_time, False, _jetson_power, MODE_FEATURES,
                   "time: linear in 1/GPU MHz, 1/memory MHz, 1/(CPU MHz x cores); power: linear in the same "
                   "clocks (the Jetson paper's regression)", "--power-mode")


@dataclass(frozen=True)
class HeldOut:
    """One leave-one-out check: a measured setting predicted from the others."""

    label: str
    s_per_unit: float
    predicted_s_per_unit: float
    avg_power_w: float
    predicted_avg_power_w: float

    @property
    def time_error_pct(self) -> float:
        return 100.0 * (self.predicted_s_per_unit - self.s_per_unit) / self.s_per_unit

    @property
    def power_error_pct(self) -> float:
        return 100.0 * (self.predicted_avg_power_w - self.avg_power_w) / self.avg_power_w

    @property
    def energy_error_pct(self) -> float:
        true = self.s_per_unit * self.avg_power_w
        return 100.0 * (self.predicted_s_per_unit * self.predicted_avg_power_w - true) / true


@dataclass(frozen=True)
class Validation:
    """Leave-one-out errors, in percent."""

    held_out: tuple[HeldOut, ...]
    not_held_out: tuple[str, ...]  # settings at the edge of the range: predicting them would extrapolate

    def _mape(self, key: Callable[[HeldOut], float]) -> float:
        return statistics.fmean(abs(key(h)) for h in self.held_out)

    def _rms(self, key: Callable[[HeldOut], float]) -> float:
        return math.sqrt(statistics.fmean(key(h) ** 2 for h in self.held_out))

    @property
    def time_mape_pct(self) -> float:
        return self._mape(lambda h: h.time_error_pct)

    @property
    def power_mape_pct(self) -> float:
        return self._mape(lambda h: h.power_error_pct)

    @property
    def energy_mape_pct(self) -> float:
        return self._mape(lambda h: h.energy_error_pct)

    @property
    def time_rms_pct(self) -> float:
        return self._rms(lambda h: h.time_error_pct)

    @property
    def power_rms_pct(self) -> float:
        return self._rms(lambda h: h.power_error_pct)

    @property
    def energy_rms_pct(self) -> float:
        return self._rms(lambda h: h.energy_error_pct)


@dataclass(frozen=True)
class Prediction:
    """A setting's predicted time and power, with the band the leave-one-out error gives."""

    point: Point  # measured=False
    time_band_pct: float
    power_band_pct: float
    energy_band_pct: float

    def s_per_unit_range(self) -> tuple[float, float]:
        t, b = self.point.s_per_unit, self.time_band_pct / 100.0
        return t * (1 - b), t * (1 + b)

    def j_per_unit_range(self) -> tuple[float, float]:
        e, b = self.point.j_per_unit, self.energy_band_pct / 100.0
        return e * (1 - b), e * (1 + b)


class _Fitted:
    """Time and power estimators fitted on some points of one spec."""

    def __init__(self, spec: Spec, points: Sequence[Point]) -> None:
        x = np.array([p.x for p in points], dtype=float)
        times = np.array([p.s_per_unit for p in points], dtype=float)
        powers = np.array([p.avg_power_w for p in points], dtype=float)
        target = 1.0 / times if spec.time_is_rate else times
        self.spec = spec
        self.time_scale = float(np.median(target))  # fit on a scale near 1, whatever the unit
        self.power_scale = float(np.median(powers))
        with warnings.catch_warnings():
            warnings.simplefilter("ignore", ConvergenceWarning)
            self.time: RegressorMixin = spec.time_model().fit(x, target / self.time_scale)
            self.power: RegressorMixin = spec.power_model().fit(x, powers / self.power_scale)

    def predict(self, x: Sequence[tuple[float, ...]]) -> tuple[np.ndarray, np.ndarray]:
        arr = np.array(x, dtype=float)
        t = np.asarray(self.time.predict(arr), dtype=float) * self.time_scale
        p = np.asarray(self.power.predict(arr), dtype=float) * self.power_scale
        return (1.0 / t if self.spec.time_is_rate else t), p


def _inside(x: tuple[float, ...], others: Sequence[tuple[float, ...]]) -> bool:
    """Whether every feature of x lies within the others' range (predicting it would not extrapolate)."""
    return all(min(o[i] for o in others) - 1e-9 <= value <= max(o[i] for o in others) + 1e-9
               for i, value in enumerate(x))


class SettingModel:
    """A fitted model of one profile. `predict` refuses settings outside the measured range."""

    def __init__(self, profile: PowerProfile, spec: Spec, points: tuple[Point, ...], validation: Validation) -> None:
        self.profile = profile
        self.spec = spec
        self.points = points  # the measured points it was fitted on
        self.validation = validation
        self._fitted = _Fitted(spec, points)
        xs = [p.x for p in points if p.x is not None]
        self.bounds = tuple((min(x[i] for x in xs), max(x[i] for x in xs)) for i in range(len(spec.feature_names)))

    def range_problem(self, x: tuple[float, ...]) -> str | None:
        """Why `x` lies outside the measured range (None when inside)."""
        for name, value, (lo, hi) in zip(self.spec.feature_names, x, self.bounds):
            if value < lo - 1e-9 or value > hi + 1e-9:
                what = "power limit" if name == "power_limit_w" else MODE_FEATURE_LABELS.get(name, name)
                return (f"{what} {value:g} is outside the measured range {lo:g}-{hi:g}; "
                        "the model does not extrapolate: measure it instead")
        return None

    def predict(self, x: tuple[float, ...], label: str, mode_id: str | None = None) -> Prediction:
        problem = self.range_problem(x)
        if problem:
            raise PredictionRefusedError(f"{label}: {problem}")
        (t,), (p,) = self._fitted.predict([x])
        if not (t > 0 and p > 0 and math.isfinite(t) and math.isfinite(p)):
            raise PredictionRefusedError(f"{label}: the model gives no positive time and power here")
        v = self.validation
        return Prediction(Point(label, x, float(t), float(p), measured=False, runs=0, mode_id=mode_id),
                          v.time_rms_pct, v.power_rms_pct, v.energy_rms_pct)

    def predict_limits(self, limits_w: Sequence[float]) -> list[Prediction]:
        """GPU: predictions at these power limits (those inside the measured range)."""
        return [self.predict((float(w),), limit_label(float(w))) for w in limits_w
                if self.range_problem((float(w),)) is None]


def _spec(profile: PowerProfile) -> Spec:
    return GPU_SPEC if profile.kind == POWER_LIMIT else JETSON_SPEC


def fit(profile: PowerProfile) -> SettingModel:
    """The model of a profile, checked by leave-one-out; PredictionRefusedError saying why not."""
    spec = _spec(profile)
    points = tuple(p for p in profile.points if p.x is not None)
    unknown = [p.label for p in profile.points if p.x is None]
    need = spec.coefficients + 1
    if len(points) < need:
        measured = ", ".join(p.label for p in profile.points) or "none"
        why = (f"{len(profile.points)} {spec.name}(s) measured ({measured})"
               + (f"; {', '.join(unknown)} not in the power-mode table with CPU/GPU/memory clocks" if unknown else ""))
        raise PredictionRefusedError(
            f"too few settings to predict others: {why}. The {spec.name} model has {spec.coefficients} "
            f"coefficients and needs at least {need} settings with known "
            f"{'limits' if spec is GPU_SPEC else 'features'} (one more than it has coefficients, to check it); "
            f"measure more, e.g. `joulebench run --profile {spec.option} ...`")
    held, edges = [], []
    for i, point in enumerate(points):
        assert point.x is not None
        others = points[:i] + points[i + 1:]
        if not _inside(point.x, [o.x for o in others if o.x is not None]):
            edges.append(point.label)
            continue
        (t,), (p,) = _Fitted(spec, others).predict([point.x])
        held.append(HeldOut(point.label, point.s_per_unit, float(t), point.avg_power_w, float(p)))
    if not held:
        raise PredictionRefusedError(
            f"the {spec.name} model cannot be checked: no measured setting lies inside the range of the others "
            f"({', '.join(edges)}), so none can be held out and predicted; measure a setting in between")
    return SettingModel(profile, spec, points, Validation(tuple(held), tuple(edges)))
