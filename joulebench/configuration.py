"""What a measurement point is, defined once: every setting that changes a result.

A configuration is everything that was set when a figure was measured: the device and how many of it, the work
(workload, mode, precision, quantization, request lengths), the load a server was offered (rate or concurrency,
arrival process), the engine that served it, the settings a person chose on the device (batch, accumulation,
compile, power limit or mode, a tag), where the energy was measured and whose measurement it is. Runs that agree on
every field are repeats of one configuration; runs that differ in any field are never pooled, averaged or put in one
bar.

Every place that groups or compares runs derives its fields from `FIELDS` through a `View`, which names each field it
leaves out and why (`View.left_out`), so a view that ignores a field says so in the code and on the page
(`View.ignores_text`). `tests/test_configuration.py` fails when a stored run field is neither a setting here nor
listed in `NOT_SETTINGS` with the reason it does not change a result.

The stored key (`db.grading.config_key`) hashes the `KEY_ALWAYS` fields, then each `KEY_WHERE_STATED` field a run
states, in this order, so the keys of runs stored before a field existed do not change.
"""

from __future__ import annotations

from collections.abc import Mapping
from dataclasses import dataclass
from enum import StrEnum


class Role(StrEnum):
    """Which part of a measurement point a field sets."""

    DEVICE = "device"  # what ran it: the device, how many of it, its software environment
    WORK = "work"  # the work asked for: workload, mode, precision, quantization, input and output lengths
    LOAD = "load"  # how a server was offered its requests: rate or concurrency, arrival process
    ENGINE = "engine"  # the serving engine and its version
    SETTING = "setting"  # what a person sets on the device: batch, accumulation, compile, power limit or mode, tag
    BOUNDARY = "boundary"  # where the energy was measured: a wall figure is not a board figure
    ORIGIN = "origin"  # whose measurement: measured here, imported, a reference table


class Key(StrEnum):
    ALWAYS = "always"  # hashed for every run (in the key since schema 1)
    WHERE_STATED = "where stated"  # hashed only where a run states it (older keys unchanged)


@dataclass(frozen=True)
class Field:
    """One setting of a measurement point: a runs column."""

    name: str  # the runs column (a config.* field of the result file, or a column the store adds)
    role: Role
    key: Key
    label: str  # for a person
    prefix: str = ""  # how a value reads in a configuration's label: prefix + value + suffix
    suffix: str = ""
    value: type = str  # what a value is: str (a name), float (a number, its unit in the name or label), bool

    def text(self, value: object) -> str:
        """'rate 2/s', 'concurrency 4', 'prompt 64 tokens': a value of this field for a person."""
        if isinstance(value, bool):
            return self.label.lower() if value else f"no {self.label.lower()}"
        if isinstance(value, float) and value.is_integer():
            value = int(value)
        suffix = self.suffix[:-1] if value == 1 and self.suffix.startswith(" ") and self.suffix.endswith("s") \
            else self.suffix  # '1 GPU', '1 token'
        return f"{self.prefix}{value}{suffix}"


_A, _S = Key.ALWAYS, Key.WHERE_STATED
_D, _W, _L, _E, _T, _B, _O = (Role.DEVICE, Role.WORK, Role.LOAD, Role.ENGINE, Role.SETTING, Role.BOUNDARY,
                              Role.ORIGIN)

# In the stored key's order: the KEY_ALWAYS fields first, then the KEY_WHERE_STATED ones (db.grading).
FIELDS: tuple[Field, ...] = (
    Field("device_name", _D, _A, "Device"),
    Field("env_id", _D, _A, "Environment (driver, CUDA, torch, OS)", "env "),
    Field("workload", _W, _A, "Workload"),
    Field("mode", _W, _A, "Mode"),
    Field("precision", _W, _A, "Precision"),
    Field("batch_size", _T, _A, "Batch size", "batch ", value=float),
    Field("grad_accum_steps", _T, _A, "Gradient accumulation steps", "accumulation ", value=float),
    Field("seq_len", _W, _A, "Sequence length (tokens)", "seq ", value=float),
    Field("image_size", _W, _A, "Image size (pixels)", "image ", " px", value=float),
    Field("gpu_count", _D, _A, "GPUs per system", "", " GPUs", value=float),
    Field("compile", _T, _A, "Compiled", value=bool),
    Field("power_limit_w", _T, _A, "Power limit (W)", "PL ", " W", value=float),
    Field("power_mode", _T, _A, "Power mode", "mode "),
    Field("tag", _T, _A, "Tag", "tag "),
    Field("energy_boundary", _B, _A, "Energy measured at", "measured at "),
    Field("origin_kind", _O, _A, "Origin"),
    Field("max_new_tokens", _W, _S, "Output tokens per request", "output ", " tokens", value=float),
    Field("request_rate_per_s", _L, _S, "Requests arriving per second", "rate ", "/s", value=float),
    Field("load_kind", _L, _S, "Load offered as", "load by "),
    Field("max_concurrency", _L, _S, "Concurrency (requests in flight)", "concurrency ", value=float),
    Field("arrival", _L, _S, "Arrivals", "", " arrivals"),
    Field("burstiness", _L, _S, "Burstiness", "burstiness ", value=float),
    Field("prompt_tokens_requested", _W, _S, "Prompt tokens per request", "prompt ", " tokens", value=float),
    Field("output_tokens_requested", _W, _S, "Output tokens per request (asked)", "output ", " tokens", value=float),
    Field("length_distribution", _W, _S, "Request lengths", "lengths "),
    Field("engine", _E, _S, "Engine", "engine "),
    Field("quantization", _W, _S, "Quantization", "quantized "),
    Field("engine_version", _E, _S, "Engine version", "version "),
)
BY_NAME: dict[str, Field] = {f.name: f for f in FIELDS}
NAMES: tuple[str, ...] = tuple(f.name for f in FIELDS)
KEY_ALWAYS: tuple[str, ...] = tuple(f.name for f in FIELDS if f.key is Key.ALWAYS)
KEY_WHERE_STATED: tuple[str, ...] = tuple(f.name for f in FIELDS if f.key is Key.WHERE_STATED)
TEXT_FIELDS: frozenset[str] = frozenset(f.name for f in FIELDS if f.value is str)  # settings written as names

# Stored run fields every repeat of a configuration shares without being settings: its workload names them.
NAMED_BY_WORKLOAD: tuple[str, ...] = ("model", "task")
# Stored run fields (the result file's config.*) that are not settings, each with why it does not change a result.
NOT_SETTINGS: dict[str, str] = {
    "model": "the workload names it (a run's workload is its model and task)",
    "task": "the workload names it",
    "tf32_enabled": "follows from the precision (TF32 is on for precision tf32 only)",
    "seed": "a repeat draws other arrivals and lengths from the same distribution: repeats of one configuration",
    "warmup_steps": "how long the warm-up ran, not what was measured (the trust grade reads the window)",
    "measured_steps": "how long the window ran, not what was measured (the trust grade reads the window)",
    "repeat_index": "which repeat of the configuration a run is",
    "sweep_id": "which invocation measured the point; it links a sweep's points, each its own configuration",
    "power_limit_requested_w": "what a sweep asked for; the limit in effect (power_limit_w) is the setting",
    "power_mode_requested": "what a sweep asked for; the mode in effect (power_mode) is the setting",
    "profile": "which power-setting profile measured the run; its power setting is the configuration's",
}

# The power setting of a device: a GPU's limit or a Jetson's mode, shown as one `power_setting` ('PL 170 W', 'mode 6').
POWER_SETTING = ("power_limit_w", "power_mode")
# Fields the series of a comparison names (the device and what a person set on it), not the compared job.
SERIES_FIELDS = ("device_name", *POWER_SETTING, "tag", "origin_kind")


@dataclass(frozen=True)
class View:
    """A way of grouping runs: every field of FIELDS but those it names, each with why."""

    name: str
    left_out: Mapping[str, str]

    def __post_init__(self) -> None:
        unknown = sorted(set(self.left_out) - set(NAMES))
        if unknown:
            raise ValueError(f"view {self.name!r} leaves out {unknown}, which are not configuration fields")

    @property
    def fields(self) -> tuple[str, ...]:
        return tuple(n for n in NAMES if n not in self.left_out)

    def ignores_text(self) -> str:
        """'Not told apart here: Environment (driver, CUDA, torch, OS): the software versions of each side.' ('' when
        the view tells every field apart)."""
        if not self.left_out:
            return ""
        return "Not told apart here: " + "; ".join(f"{BY_NAME[n].label}: {why}" for n, why in self.left_out.items()) \
            + "."


_SERIES_WHY = "named in the series (the colour), not in the configuration"

# The stored key: every field (plus the source file for runs not measured here).
STORED_KEY = View("stored key", {})
# Compare: a bar is one series (device, power setting, tag, origin) on one configuration (the rest, each field
# that varies named on the axis); the stored key keeps apart what the label does not (db.grading).
COMPARE = View("Compare's configuration", {
    "device_name": _SERIES_WHY, "power_limit_w": _SERIES_WHY, "power_mode": _SERIES_WHY, "tag": _SERIES_WHY,
    "origin_kind": _SERIES_WHY,
    "env_id": "a series whose configuration holds runs of several environments names their source file",
    "energy_boundary": "each bar names where its energy was measured, and a mix of boundaries is warned of",
})
# Like for like (Decide, Compare's ratios): both devices ran the same job at the same load on as many GPUs; each
# device is taken at its best of the settings a person chooses (SETTING fields).
LIKE_FOR_LIKE = View("like for like", {
    "device_name": "what is compared",
    "env_id": "each side runs its own software; the versions are on Run detail",
    "origin_kind": "a figure measured here is compared with an imported one; the basis is said beside the ratio",
    "engine_version": "each side runs its engine's version; the engine itself must match",
})
# Tuning: a power profile is one configuration at several power settings.
POWER_PROFILE = View("power profile", {
    "power_limit_w": "what the profile varies", "power_mode": "what the profile varies",
    "env_id": "a profile's runs are one device's; the environment is on Run detail",
    "origin_kind": "a profile is fitted to one device's runs whatever their origin",
    "tag": "a label of the person's, not a setting",
    "energy_boundary": "each run of a profile is measured the same way on one device",
})
# One measurement brought twice (db.same_measurement): a file and a reference table's transcription of it, or one
# result file imported under two names, are the same configuration wherever it came from.
SAME_MEASUREMENT = View("same measurement", {
    "env_id": "one copy may state the software environment and another not; the figures agreeing decides",
    "origin_kind": "the same measurement arrives as a reference row, an imported file or a team's copy",
    "energy_boundary": "a transcription may leave out where the energy was measured; the figures agreeing decides",
})
VIEWS = (STORED_KEY, COMPARE, LIKE_FOR_LIKE, POWER_PROFILE, SAME_MEASUREMENT)

SETTINGS_OF_A_DEVICE: tuple[str, ...] = tuple(f.name for f in FIELDS if f.role is Role.SETTING)
# the work every table and sentence names in words of its own (its workload, mode and precision), and with the device
# and where the energy was measured the fields shown in columns of their own: `label_parts` describes the others
WORK_NAMED: tuple[str, ...] = ("workload", "mode", "precision")
OWN_COLUMNS: tuple[str, ...] = ("device_name", *WORK_NAMED, "energy_boundary")


def label_parts(row: Mapping[str, object], fields: tuple[str, ...]) -> list[str]:
    """The stated values of `fields` in `row`, each as a person reads it."""
    return [BY_NAME[f].text(row[f]) for f in fields if row.get(f) is not None]
