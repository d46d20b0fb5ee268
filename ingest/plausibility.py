"""Whether a file's figures agree with themselves and with physics, checked in the one ingest path.

Every document `ingest.service` writes (an upload, a CLI import, a queued file drained from the inbox, a killed
sweep's file recovered, a local run) passes `check` first, after conversion and validation:

- **consistency.** A stated rate or ratio is compared with the one its own counts give over the same window:
  tokens_per_s with output_tokens / duration_s, throughput_sps with examples / duration_s, requests_per_s with
  requests_completed / duration_s, j_per_token with energy_j / output_tokens, j_per_sample with energy_j /
  examples, avg_power_w with energy_j / duration_s. They may differ by `TOLERANCE_PCT` plus the rounding of
  the digits each of the three numbers is written with (a reference table's 1.2 s may be 1.15-1.25 s: 4 %).
  Beyond that the run keeps its figures with a flag naming both numbers (`inconsistent: tokens_per_s 120 vs
  output_tokens/duration_s 88 ...`), which `energy.grades` reads as grade D with the flag's own text as the
  reason. Beyond `GROSS_FACTOR` (100x) no rounding or window explains it: the whole file is refused, as every
  refusal is (all or nothing), naming the file, the run, the field, both numbers and the fix.
- **ceilings.** A figure within the result schema's range but beyond what one system can do
  (`CEILINGS`: output tokens/s, requests/s, per eight accelerators) is flagged `implausible: ...`
  and graded D the same way. An average power above the device's plausible maximum is already withheld with
  its reason where it is stored (`db.writes`, `energy.figures.implausible_power_reason`), so it is not
  flagged again here.
- **a floor.** A latency under a microsecond (`LATENCY_FLOOR_MS`) is no inference's: a unit read wrong, flagged
  `implausible: ...` the same way.

Figures of different windows are never compared: where a source says that a figure covers another window than
its duration (a flag in `OTHER_WINDOW_FLAGS`, or a format in `OTHER_WINDOW_FORMATS`: MLPerf's throughput is
LoadGen's, its duration the power analyzer's), the relations that figure is in are skipped; so are a training
run's tokens/s (the tokens processed, not output tokens), and a count of 0 or a figure not recorded.
docs/trust-grades.md ("plausibility") says why.
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any, TypeVar

from energy.grades import FLAG_IMPLAUSIBLE, FLAG_INCONSISTENT
from joulebench.errors import ResultFileError
from joulebench.metrics import E2E, LATENCY, TTFT
from joulebench.resultfile import LoadedResultFile

TOLERANCE_PCT = 5.0  # a stated figure within 5 % (plus its digits' rounding) of what its counts give: consistent
GROSS_FACTOR = 100.0  # further apart than 100x (either way): no rounding or window explains it, the file is refused
DEVICES_PER_SYSTEM = 8  # the ceilings are for one system of up to eight accelerators; more scale them

Loaded = TypeVar("Loaded", bound=LoadedResultFile)


@dataclass(frozen=True)
class Relation:
    """`stated` should equal `numerator` / `denominator` when all three cover one window."""

    stated: str
    numerator: str
    denominator: str
    unit: str


RELATIONS = (
    Relation("tokens_per_s", "output_tokens", "duration_s", "tokens/s"),
    Relation("throughput_sps", "examples", "duration_s", "samples/s"),
    Relation("requests_per_s", "requests_completed", "duration_s", "requests/s"),
    Relation("j_per_token", "energy_j", "output_tokens", "J/token"),
    Relation("j_per_sample", "energy_j", "examples", "J/sample"),
    Relation("avg_power_w", "energy_j", "duration_s", "W"),
)

# flags by which a source (or its importer) says that figures cover different windows: the figures it names are
# not compared with the counts and the duration
OTHER_WINDOW_FLAGS: dict[str, tuple[str, ...]] = {
    "throughput_window_corrected": ("tokens_per_s", "throughput_sps", "requests_per_s"),
    "avg_power_implausible": ("avg_power_w",),  # energy / time above the device's maximum: the two windows differ
}


# formats whose figures cover different windows by definition: {format: the rates not compared with duration_s}.
# MLPerf Inference: duration_s is the power analyzer's window (power_begin..power_end, which the energy covers),
# the throughputs are LoadGen's over its own performance window (v4.1 H200 x 8 Llama 2 70B Offline: 86.7
# samples/s stated, 253,440 samples over the 3,117 s power window give 81.3)
OTHER_WINDOW_FORMATS: dict[str, tuple[str, ...]] = {
    "mlperf-inference": ("throughput_sps", "tokens_per_s", "requests_per_s"),
}


@dataclass(frozen=True)
class Ceiling:
    field: str
    limit: float  # for one system (DEVICES_PER_SYSTEM accelerators or fewer)
    what: str
    inference_only: bool = False  # a training run's figure counts something else (tokens processed, not generated)


# Far above any one system measured: MLPerf Inference v5's largest single systems give about 1e5 output tokens/s
# (Llama 2 70B Offline, 8 x B200): 1e7 leaves 100x. Samples/s has no ceiling: a sample can be a user-item pair
# (Lambda's NCF training rows: 2e7 to 1.3e10 samples/s), and a training run's tokens/s counts every token
# processed (a tiny BERT on one H100 passes 1e7).
CEILINGS = (
    Ceiling("tokens_per_s", 1e7, "output tokens/s", inference_only=True),
    Ceiling("requests_per_s", 1e6, "requests/s"),
)
# A floor: no model's inference (a batch, a request or its first token) takes under a microsecond, a kernel's launch
# alone takes several; a latency below it is a unit read wrong ('Latency ns' over values in ms or µs)
LATENCY_FLOOR_MS = 1e-3
FLOORED = tuple(m.name for dist in (LATENCY, E2E, TTFT) for m in dist.metrics())  # the latencies, in ms


@dataclass(frozen=True)
class Finding:
    """One run's figure that disagrees with its counts (`derived` set) or with physics (`limit` set)."""

    run_index: int
    run_id: str
    field: str
    stated: float
    flag: str
    derived: float | None = None
    relation: Relation | None = None
    limit: float | None = None

    @property
    def gross(self) -> bool:
        """Further apart than GROSS_FACTOR: the file is refused."""
        if self.derived is None:
            return False
        return max(self.stated / self.derived, self.derived / self.stated) > GROSS_FACTOR

    def refusal(self) -> str:
        """The problem a refusal lists (the file's name is put before it): the run, the field, both numbers, the fix."""
        assert self.relation is not None and self.derived is not None
        r = self.relation
        return (f"runs[{self.run_index}] ({self.run_id}) metrics.{self.field}: states {_n(self.stated)} {r.unit}, "
                f"but its {r.numerator}/{r.denominator} gives {_n(self.derived)} {r.unit} "
                f"({_factor(self.stated, self.derived)} apart, more than the {GROSS_FACTOR:g}x no rounding or window "
                f"explains); correct {self.field}, {r.numerator} or {r.denominator} so that they describe the same "
                f"window, or leave out the one that is wrong")


def _n(x: float) -> str:
    return format(x, ".3g")


def _factor(a: float, b: float) -> str:
    return f"{max(a / b, b / a):.3g}x"


def _number(value: Any) -> float | None:
    """A recorded figure (finite, not a boolean), else None."""
    if isinstance(value, bool) or not isinstance(value, int | float):
        return None
    x = float(value)
    return x if math.isfinite(x) else None


def rounding(x: float) -> float:
    """The relative rounding of `x` as written: half a unit of its last significant digit over |x| (88 -> 0.57 %,
    0.15 -> 3.3 %, 1200 -> 0.0042 %: an integer's trailing zeros count, a count is exact). A float computed by
    a program has 15-17 digits: no rounding to speak of."""
    if x == 0 or not math.isfinite(x):
        return 0.0
    mantissa, _, exp = repr(float(x)).lstrip("-").partition("e")
    whole, _, fraction = mantissa.partition(".")
    fraction = fraction.rstrip("0")
    last = -len(fraction) if fraction else 0  # the power of ten of the last digit written
    return 0.5 * 10.0 ** (last + (int(exp) if exp else 0)) / abs(x)


def _other_window(flags: Iterable[str], file_format: str | None) -> set[str]:
    return {f for flag in flags for f in OTHER_WINDOW_FLAGS.get(flag, ())} | set(
        OTHER_WINDOW_FORMATS.get(file_format or "", ()))


def _applies(relation: Relation, run: Mapping[str, Any], skipped: set[str]) -> bool:
    if {relation.stated, relation.numerator, relation.denominator} & skipped:
        return False
    mode = (run.get("config") or {}).get("mode")
    # a training run's tokens/s counts the tokens processed, not output tokens generated
    return not (mode == "train" and "output_tokens" in (relation.numerator, relation.denominator)
                and relation.stated in ("tokens_per_s", "j_per_token"))


def _inconsistent(i: int, run_id: str, relation: Relation, metrics: Mapping[str, Any]) -> Finding | None:
    stated = _number(metrics.get(relation.stated))
    numerator = _number(metrics.get(relation.numerator))
    denominator = _number(metrics.get(relation.denominator))
    if not stated or not numerator or not denominator or stated < 0 or numerator < 0 or denominator < 0:
        return None  # not recorded, or a count of 0 (some sources write 0 for "not counted")
    derived = numerator / denominator
    allowed = TOLERANCE_PCT / 100.0 + rounding(stated) + rounding(numerator) + rounding(denominator)
    apart = abs(stated - derived) / derived
    if apart <= allowed:
        return None
    flag = (f"{FLAG_INCONSISTENT}{relation.stated} {_n(stated)} vs {relation.numerator}/{relation.denominator} "
            f"{_n(derived)} ({_n(numerator)} / {_n(denominator)}): {_n(apart * 100)} % apart, over the "
            f"{_n(allowed * 100)} % its digits and {TOLERANCE_PCT:g} % allow")
    return Finding(i, run_id, relation.stated, stated, flag, derived=derived, relation=relation)


def _ceiling(i: int, run_id: str, ceiling: Ceiling, run: Mapping[str, Any]) -> Finding | None:
    stated = _number((run.get("metrics") or {}).get(ceiling.field))
    if stated is None or (ceiling.inference_only and (run.get("config") or {}).get("mode") == "train"):
        return None
    gpus = _number((run.get("config") or {}).get("gpu_count")) or 1.0
    systems = max(1.0, math.ceil(gpus / DEVICES_PER_SYSTEM))
    limit = ceiling.limit * systems
    if stated <= limit:
        return None
    per = "one system" if systems == 1 else f"{systems:g} systems of {DEVICES_PER_SYSTEM} accelerators"
    flag = (f"{FLAG_IMPLAUSIBLE}{ceiling.field} {_n(stated)} {ceiling.what} is above the {_n(limit)} that "
            f"{per} can plausibly give: a unit or a window is wrong")
    return Finding(i, run_id, ceiling.field, stated, flag, limit=limit)


def _below_floor(i: int, run_id: str, name: str, run: Mapping[str, Any]) -> Finding | None:
    """A latency under LATENCY_FLOOR_MS (0 or less is not measured, said where it is read)."""
    stated = _number((run.get("metrics") or {}).get(name))
    if stated is None or stated <= 0 or stated >= LATENCY_FLOOR_MS:
        return None
    flag = (f"{FLAG_IMPLAUSIBLE}{name} {_n(stated)} ms is below the {_n(LATENCY_FLOOR_MS)} ms no inference goes "
            "under: a unit is wrong")
    return Finding(i, run_id, name, stated, flag, limit=LATENCY_FLOOR_MS)


def findings(document: Mapping[str, Any], file_format: str | None = None) -> list[Finding]:
    """Every figure of the document's runs (of `file_format`, an importer's NAME) that disagrees with its counts or is
    beyond its ceiling."""
    found: list[Finding] = []
    for i, run in enumerate(document.get("runs") or []):
        if not isinstance(run, Mapping):
            continue
        metrics = run.get("metrics") or {}
        run_id = str(run.get("run_id") or f"run {i}")
        skipped = _other_window(run.get("flags") or (), file_format)
        for relation in RELATIONS:
            if _applies(relation, run, skipped):
                finding = _inconsistent(i, run_id, relation, metrics)
                if finding is not None:
                    found.append(finding)
        for finding in (*(_ceiling(i, run_id, c, run) for c in CEILINGS),
                        *(_below_floor(i, run_id, name, run) for name in FLOORED)):
            if finding is not None:
                found.append(finding)
    return found


def check(loaded: Loaded, file_format: str | None = None) -> Loaded:
    """The document with each finding's flag added to its run, or ResultFileError (nothing written) when a stated
    figure is more than GROSS_FACTOR from what its counts give. A document without findings is returned as is."""
    found = findings(loaded.document, file_format)
    gross = [f for f in found if f.gross]
    if gross:
        raise ResultFileError(loaded.name, [f.refusal() for f in gross])
    if not found:
        return loaded
    by_run: dict[int, list[str]] = {}
    for f in found:
        by_run.setdefault(f.run_index, []).append(f.flag)
    runs = list(loaded.document["runs"])
    for i, flags in by_run.items():
        had = list(runs[i].get("flags") or [])
        runs[i] = {**runs[i], "flags": had + [f for f in flags if f not in had]}
    return dataclasses.replace(loaded, document={**loaded.document, "runs": runs})


__all__ = ["CEILINGS", "GROSS_FACTOR", "OTHER_WINDOW_FLAGS", "OTHER_WINDOW_FORMATS", "RELATIONS", "TOLERANCE_PCT",
           "Finding", "check", "findings", "rounding"]
