"""Power settings not measured, predicted from those that were; which one to use for a goal.

Pure modelling (scikit-learn, polars): it imports only `energy` and `joulebench` of ours. Data
comes in as rows of `db.queries.power_setting_runs`; the explorer and the CLI present the result.

- `points`: measured settings of one device and configuration (`PowerProfile`, `Point`);
- `goals`: what to optimise (energy, speed, balanced as in Zeus, cost) and the constraints;
- `model`: time and power as functions of the power limit (GPUs) or of the power mode's
  features (Jetsons), checked by leave-one-out, refusing too few points or extrapolation;
- `recommendation`: the candidates, the Pareto front of time vs energy, and the recommended setting
  with what it saves and costs.

The names below are re-exported; those of `model` and `recommend` load scikit-learn on first use
(PEP 562), so `joulebench --help` and the goal list stay fast.
"""

from __future__ import annotations

import importlib
from typing import Any

from tuning.goals import DEFAULT_ETA, GOALS, Constraints, Goal
from tuning.points import (
    POWER_LIMIT,
    POWER_MODE,
    UNIT_RUN,
    UNIT_SAMPLE,
    UNIT_TOKEN,
    Point,
    PowerProfile,
    profile_from_rows,
    profiles_from_runs,
)

_LAZY = {
    "HeldOut": "tuning.model", "Prediction": "tuning.model", "SettingModel": "tuning.model",
    "Validation": "tuning.model", "fit": "tuning.model",
    **dict.fromkeys(("Candidate", "ModeOption", "Recommendation", "pareto_front", "recommend"),
                    "tuning.recommendation"),
}


def __getattr__(name: str) -> Any:
    if name in _LAZY:
        return getattr(importlib.import_module(_LAZY[name]), name)
    raise AttributeError(f"module 'tuning' has no attribute {name!r}")


__all__ = [
    "DEFAULT_ETA", "GOALS", "POWER_LIMIT", "POWER_MODE", "UNIT_RUN", "UNIT_SAMPLE", "UNIT_TOKEN", "Candidate",
    "Constraints",
    "Goal", "HeldOut", "ModeOption", "Point", "PowerProfile", "Prediction", "Recommendation", "SettingModel",
    "Validation", "fit", "pareto_front", "profile_from_rows", "profiles_from_runs", "recommend",
]
