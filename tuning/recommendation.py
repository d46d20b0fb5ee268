"""Which power setting for the user's goal: candidates, the Pareto front, the recommendation.

Candidates are the measured settings and, where the model may predict, the settings between
them (GPU limits every 5 W; the Jetson's other power modes inside the measured range). Each goal
is a weighted sum of energy and time per unit of work, the form of Zeus's cost
(eta x energy + (1 - eta) x max power x time, ml-energy/zeus):

- energy: eta = 1, the fewest joules per sample;
- speed: eta = 0, the most samples per second;
- balanced: Zeus's eta (0.5 unless given), max power = the highest limit measured (GPUs) or the
  highest average power measured (Jetsons);
- cost: money, electricity per joule plus the device's price per second of its life
  (explorer.metrics gives these weights from the user's prices).

Measured settings whose objectives are within TIE_PCT of the best tie (a measurement's own spread is about
that): the fastest of them is recommended, and a note names the tie. A predicted setting is recommended over the
best measured one only when it beats it by more
than the model's leave-one-out error on that goal; otherwise the measured one is kept (and the
note says so). Savings and costs are stated against the highest limit measured (GPUs, usually
the default) or the fastest mode measured (Jetsons).
"""

from __future__ import annotations

import math
from collections.abc import Sequence
from dataclasses import dataclass, field

from joulebench.errors import PredictionRefusedError
from tuning.goals import Constraints, Goal
from tuning.model import Prediction, SettingModel, fit
from tuning.points import POWER_LIMIT, UNIT_RUN, Point, PowerProfile

GRID_STEP_W = 5.0
# Two measured settings whose objectives differ by less than this are a tie: a single run's spread is not known,
# and repeated 10 s windows on one sensor move by about 1-2 % (docs/trust-grades.md): a smaller difference is noise.
TIE_PCT = 1.0


@dataclass(frozen=True)
class Candidate:
    point: Point
    prediction: Prediction | None  # None: measured
    objective: float
    excluded: str | None = None  # the constraint it breaks

    @property
    def measured(self) -> bool:
        return self.prediction is None


@dataclass(frozen=True)
class Recommendation:
    profile: PowerProfile
    goal: Goal
    constraints: Constraints
    candidates: tuple[Candidate, ...]
    front: tuple[Point, ...]  # Pareto front of time vs energy (measured and predicted), by time
    best: Candidate | None
    baseline: Point
    max_power_w: float
    model: SettingModel | None
    refusal: str | None  # why nothing is predicted
    not_predicted: tuple[str, ...] = field(default_factory=tuple)  # settings outside the measured range
    notes: tuple[str, ...] = field(default_factory=tuple)

    @property
    def measured(self) -> list[Candidate]:
        return [c for c in self.candidates if c.measured]

    @property
    def predicted(self) -> list[Candidate]:
        return [c for c in self.candidates if not c.measured]

    def energy_change_pct(self) -> float | None:
        if self.best is None:
            return None
        return 100.0 * (self.best.point.j_per_unit / self.baseline.j_per_unit - 1.0)

    def throughput_change_pct(self) -> float | None:
        if self.best is None:
            return None
        return 100.0 * (self.baseline.s_per_unit / self.best.point.s_per_unit - 1.0)

    def power_change_pct(self) -> float | None:
        if self.best is None:
            return None
        return 100.0 * (self.best.point.avg_power_w / self.baseline.avg_power_w - 1.0)

    def basis(self) -> str:
        """'measured' or 'predicted, MAPE time 5.2%, power 0.8%' for the recommended setting."""
        if self.best is None or self.best.measured or self.model is None:
            return "measured"
        v = self.model.validation
        return f"predicted, leave-one-out MAPE time {v.time_mape_pct:.1f}%, power {v.power_mape_pct:.1f}%"

    def sentence(self) -> str:
        """'at 125 W: -22% J/sample, -6% throughput vs 250 W, predicted, MAPE time 3.0%, power 1.0%'."""
        if self.best is None:
            return "no setting meets the constraints: " + "; ".join(
                sorted({c.excluded for c in self.candidates if c.excluded}))
        unit = self.profile.unit_label
        label = self.best.point.label
        if label == self.baseline.label:
            return (f"at {label}: the {'highest limit' if self.profile.kind == POWER_LIMIT else 'fastest mode'} "
                    f"measured is also the best for this goal ({self.best.point.j_per_unit:.4g} J/{unit}); nothing to "
                    f"trade ({self.basis()})")
        energy, speed = self.energy_change_pct(), self.throughput_change_pct()
        assert energy is not None and speed is not None
        return (f"at {label}: {energy:+.0f}% J/{unit}, {speed:+.0f}% throughput vs {self.baseline.label}, "
                f"{self.basis()}")


def pareto_front(points: Sequence[Point]) -> list[Point]:
    """Points not dominated in (time, energy) per unit, both minimised; sorted by time."""
    front: list[Point] = []
    best_energy = math.inf
    for p in sorted(points, key=lambda q: (q.s_per_unit, q.j_per_unit)):
        if p.j_per_unit < best_energy:
            front.append(p)
            best_energy = p.j_per_unit
    return front


def _baseline(profile: PowerProfile) -> Point:
    if profile.kind == POWER_LIMIT:
        return max(profile.points, key=lambda p: (p.power_limit_w or 0.0, -p.s_per_unit))
    return min(profile.points, key=lambda p: p.s_per_unit)


def _max_power_w(profile: PowerProfile) -> float:
    if profile.kind == POWER_LIMIT:
        return max(p.power_limit_w or 0.0 for p in profile.points)
    return max(p.avg_power_w for p in profile.points)


def limit_grid(model: SettingModel, step_w: float = GRID_STEP_W) -> list[float]:
    """GPU limits every `step_w` W across the measured range (the measured ones left out)."""
    (lo, hi), = model.bounds
    measured = {p.x[0] for p in model.points if p.x is not None}
    start = math.ceil(lo / step_w) * step_w
    count = int(math.floor((hi - start) / step_w + 1e-9)) + 1
    return [w for w in (start + i * step_w for i in range(max(count, 0))) if w not in measured]


@dataclass(frozen=True)
class ModeOption:
    """A Jetson power mode from the power-mode table: id, label and features."""

    mode_id: str
    label: str  # "mode 2 (15W)"
    x: tuple[float, ...] | None


def predictions(profile: PowerProfile, model: SettingModel,
                modes: Sequence[ModeOption] = ()) -> tuple[list[Prediction], list[str]]:
    """The settings the model predicts, and those it refuses (with the reason)."""
    if profile.kind == POWER_LIMIT:
        return model.predict_limits(limit_grid(model)), []
    measured = {p.mode_id for p in profile.points}
    out: list[Prediction] = []
    refused: list[str] = []
    for option in modes:
        if option.mode_id in measured:
            continue
        if option.x is None:
            refused.append(f"{option.label}: no CPU/GPU/memory clocks in the power-mode table")
            continue
        try:
            out.append(model.predict(option.x, option.label, option.mode_id))
        except PredictionRefusedError as e:
            refused.append(e.reason)
    return out, refused


def _excluded(point: Point, constraints: Constraints, unit: str) -> str | None:
    if constraints.max_power_w is not None and point.avg_power_w > constraints.max_power_w:
        return f"average power above {constraints.max_power_w:g} W"
    if constraints.min_throughput is not None and point.throughput_per_s < constraints.min_throughput:
        return f"throughput below {constraints.min_throughput:g} {unit}s/s"
    return None


def _faster_of_tied(best: Candidate, measured: Sequence[Candidate], unit: str) -> tuple[Candidate, list[str]]:
    """The fastest of the measured settings that tie with `best` for the goal (within TIE_PCT), and a note
    naming the tie; `best` alone and no note when none ties with it."""
    tied = [c for c in measured if c.objective <= best.objective * (1.0 + TIE_PCT / 100.0)]
    if len(tied) < 2:
        return best, []
    fastest = min(tied, key=lambda c: (c.point.s_per_unit, c.objective))
    others = ", ".join(f"{c.point.label} ({c.point.j_per_unit:,.1f} J/{unit}, {c.point.throughput_per_s:.4g} "
                       f"{unit}s/s)" for c in sorted(tied, key=lambda c: c.point.s_per_unit))
    return fastest, [
        f"{len(tied)} settings tie for this goal, within {TIE_PCT:g} % of each other (less than a measurement's "
        f"own spread): {others}; the fastest of them, {fastest.point.label}, is recommended"
        + (f" rather than {best.point.label}, {100 * (fastest.objective / best.objective - 1):.2g} % behind "
           "on the goal" if fastest is not best else "")]


def recommend(profile: PowerProfile, goal: Goal, constraints: Constraints | None = None,
              modes: Sequence[ModeOption] = ()) -> Recommendation:
    """Measured and predicted settings, the Pareto front and the best setting for `goal`."""
    if not profile.points:
        raise PredictionRefusedError(f"{profile.device}, {profile.describe()}: no setting with time and power "
                                     f"measured ({'; '.join(profile.left_out) or 'no runs'})")
    constraints = constraints or Constraints()
    if constraints.min_throughput is not None and profile.unit == UNIT_RUN:
        raise PredictionRefusedError(
            "--min-throughput needs samples per second, and these runs do not record how many samples they "
            "processed (each run is one window of equal work); leave the constraint out")
    baseline = _baseline(profile)
    max_power = _max_power_w(profile)
    a, b = goal.weights(max_power)
    model: SettingModel | None = None
    refusal: str | None = None
    predicted: list[Prediction] = []
    refused: list[str] = []
    try:
        model = fit(profile)
        predicted, refused = predictions(profile, model, modes)
    except PredictionRefusedError as e:
        refusal = e.reason

    def objective(p: Point) -> float:
        return a * p.j_per_unit + b * p.s_per_unit

    candidates = [Candidate(p, None, objective(p), _excluded(p, constraints, profile.unit_label))
                  for p in profile.points]
    candidates += [Candidate(q.point, q, objective(q.point), _excluded(q.point, constraints, profile.unit_label))
                   for q in predicted]
    notes: list[str] = []
    eligible_measured = [c for c in candidates if c.measured and c.excluded is None]
    eligible_predicted = [c for c in candidates if not c.measured and c.excluded is None]
    best = min(eligible_measured, key=lambda c: c.objective, default=None)
    if best is not None:
        best, tie = _faster_of_tied(best, eligible_measured, profile.unit_label)
        notes.extend(tie)
    challenger = min(eligible_predicted, key=lambda c: c.objective, default=None)
    if challenger is not None and challenger.prediction is not None:
        q = challenger.prediction
        p = challenger.point
        # the objective's own error: the energy and time bands weighted as the goal weighs them
        error = ((a * p.j_per_unit * q.energy_band_pct + b * p.s_per_unit * q.time_band_pct)
                 / max(challenger.objective, 1e-300) / 100.0)
        if best is None:
            best = challenger
            notes.append("no measured setting meets the constraints; the recommendation is predicted")
        elif challenger.objective * (1.0 + error) < best.objective:
            best = challenger
        elif challenger.objective < best.objective:
            gain = 100 * (1 - challenger.objective / best.objective)
            shown = f"{gain:.1f}%" if gain >= 0.1 else "less than 0.1%"
            notes.append(f"{p.label} is predicted {shown} better for this goal, within the model's error "
                         f"({100 * error:.1f}%): keeping the measured {best.point.label}; measure {p.label} to "
                         "settle it")
    front = pareto_front([c.point for c in candidates])
    return Recommendation(profile, goal, constraints, tuple(candidates), tuple(front), best, baseline, max_power,
                          model, refusal, tuple(refused), tuple(notes))
