"""What Decide is asked: the inputs its page's widgets (or `joulebench decide`'s flags) set, checked, and the
page's link that reproduces them."""

from __future__ import annotations

from dataclasses import dataclass, field

import polars as pl

from decision.cost import Constraints
from decision.money import CostSettings
from decision.scope import MAX_DEVICES, Job, chosen_job, default_scope, input_sizes, scopes
from decision.token_target import Target
from tuning.goals import GOALS

MODES = ("train", "infer")
# the example on an empty Decide page: a student choosing a card for fine-tuning BERT (its link)
EXAMPLE = {"device": ["GeForce RTX 3060", "Jetson AGX Xavier"], "mode": ["train"], "kwh": ["0.3"], "years": ["3"],
           "util": ["0.5"], "currency": ["USD"]}

INTRO = ("Pick two to six candidate devices and the job. The answer comes first in sentences, then every figure "
         "with its basis (measured here, imported, reference table, stated ratio, estimate), where it was measured "
         "and its source.")
SEQ_HELP = ("Throughput and energy depend on the input size; pick one to compare every device at it. The sizes "
            "listed are those the data holds for these devices and this job.")
BEST_HELP = ("For each device with runs of this workload at several GPU power limits or Jetson power modes, take it "
             "at the setting recommended for the goal (measured, or predicted by a model checked by leave-one-out, "
             "as on the Power settings page); the others stay at their measured figures.")
GOAL_HELP = ("energy: fewest joules; speed: most throughput; balanced: Zeus's 0.5 x energy + 0.5 x max power x time; "
             "cost: electricity + hardware (needs the device's price). The power cap constraint (sidebar) applies "
             "to the average power.")
ANSWER_CAPTION = ("Single-device figures only (multi-GPU system rows are left out). Sources' ratios are used where "
                  "no pair of absolute figures exists, and labelled so; estimates say how they were made.")
ELSEWHERE = ("Measured on another machine? Export its runs there (Compare, Download the selection) or take the log "
             "of the tool that measured them, and upload the file here.")


@dataclass(frozen=True)
class DecideInputs:
    """Decide's question: 2-6 candidate devices; the job (mode, a scope 'auto' | 'model:NAME' |
    'workload:NAME', a precision or 'any', an input size or 'any'); each device at its best power setting
    for `goal` or not; the cost settings and constraints; and, for inference, the per-token question's
    model and lengths (`shape`, None: the one with the most devices) and latency `target`.
    ValueError, naming the input, for a value outside its choices."""

    devices: tuple[str, ...] = ()
    mode: str = "train"
    scope: str = "auto"
    precision: str = "any"
    seq: str = "any"
    best: bool = False
    goal: str = "energy"
    settings: CostSettings = field(default_factory=CostSettings)
    constraints: Constraints = field(default_factory=Constraints)
    shape: str | None = None
    target: Target = field(default_factory=Target)

    def __post_init__(self) -> None:
        if self.mode not in MODES:
            raise ValueError(f"mode {self.mode!r}: expected one of {', '.join(MODES)}")
        if self.goal not in GOALS:
            raise ValueError(f"goal {self.goal!r}: expected one of {', '.join(GOALS)}")
        if len(set(self.devices)) > MAX_DEVICES:
            raise ValueError(f"{len(set(self.devices))} devices: Decide compares at most {MAX_DEVICES}")
        kind, _, value = self.scope.partition(":")
        if self.scope != "auto" and (kind not in ("model", "workload") or not value):
            raise ValueError(f"job {self.scope!r}: expected 'auto', 'model:NAME' or 'workload:NAME'")
        if self.seq != "any" and not (self.seq.isdigit() and int(self.seq) > 0):
            raise ValueError(f"input size {self.seq!r}: expected 'any' or a sequence length in tokens")
        for name, limit in (("TPOT p90 limit", self.target.tpot_p90_ms), ("ITL p90 limit", self.target.itl_p90_ms),
                            ("TTFT p90 limit", self.target.ttft_p90_ms)):
            if limit is not None and not limit > 0:
                raise ValueError(f"{name} {limit:g} ms: expected a number above 0")

    def auto_scope(self, runs: pl.DataFrame) -> str | None:
        """What 'auto' stands for: the model class with rows for the most candidates in this mode."""
        return default_scope(runs, list(self.devices), self.mode)

    def job(self, runs: pl.DataFrame) -> Job:
        """The job these inputs pick ('auto' and 'any' resolved against the runs)."""
        return chosen_job(self.mode, self.scope, self.auto_scope(runs), self.precision, self.seq)

    def problems(self, runs: pl.DataFrame, catalog: pl.DataFrame) -> list[tuple[str, str]]:
        """What the data cannot use, as (input, why with the choices it offers): 'devices' not in the
        catalog, a 'scope', 'precision' or 'seq' the runs do not hold. Empty: every input applies."""
        out = []
        known = set(catalog["device_name"].to_list())
        unknown = [d for d in self.devices if d not in known]
        if unknown:
            out.append(("devices", f"{', '.join(repr(d) for d in unknown)}: not in the device catalog (the Devices "
                                   "page lists it; names are as stored, e.g. 'Tesla V100')"))
        offered = scopes(runs, self.mode)
        if self.scope != "auto" and self.scope not in offered:
            out.append(("scope", f"{self.scope!r}: no {self.mode} runs of it; choices: auto, "
                                 + (", ".join(offered) or "none")))
            return out
        precisions = sorted(runs.filter(pl.col("mode") == self.mode)["precision"].drop_nulls().unique().to_list())
        if self.precision != "any" and self.precision not in precisions:
            out.append(("precision", f"{self.precision!r}: no {self.mode} runs at it; choices: any, "
                                     + ", ".join(precisions)))
            return out
        if self.seq != "any" and not unknown:
            job = chosen_job(self.mode, self.scope, self.auto_scope(runs), self.precision)
            sizes = input_sizes(runs, list(self.devices), job)
            if int(self.seq) not in sizes:
                out.append(("seq", f"{self.seq}: these devices have no rows of this job at it; choices: any"
                                   + "".join(f", {n}" for n in sizes)))
        return out

    def to_query(self) -> dict[str, list[str]]:
        """Decide's link: what is picked, the input size, the cost settings, the constraints set, the
        best-setting goal (the per-token inputs are added by the section that shows them)."""
        query = {"device": list(self.devices), "mode": [self.mode], "job": [self.scope],
                 "precision": [self.precision], "seq": [self.seq], **self.settings.to_query(),
                 **self.constraints.to_query()}
        if self.best:
            query.update({"best": ["1"], "goal": [self.goal]})
        return query
