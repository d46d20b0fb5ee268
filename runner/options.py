"""Run options: parsing comma lists, validating everything before anything runs, expanding a sweep.

Every problem is collected and reported at once through `RunConfigError`, each line naming the
option and the valid values.
"""

from __future__ import annotations

import itertools
import math
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import TYPE_CHECKING, Any, Literal, TypeVar

import runner.workloads as workloads
from joulebench import defaults
from joulebench.errors import RunConfigError
from joulebench.ranges import MAX_RUNS_PER_SWEEP, MAX_WINDOW_S, RangeError, check_text, option_problem
from joulebench.vocab import BOUNDARIES, RUN_MODES

if TYPE_CHECKING:
    from runner.control import PowerControl


T = TypeVar("T")
# A serving run keeps every request's arrival, TTFT and latency: a million requests is under 100 MB.
MAX_SERVING_REQUESTS = 1_000_000


def serving_requests(rate_per_s: float, batch_size: int, *, steps: int | None, duration_s: float | None,
                     min_window_s: float) -> int:
    """How many requests a serving run sends: --duration's worth at the rate, or --steps full batches'
    worth, or the minimum window's (at least one second's, and at least one full batch)."""
    if duration_s is not None:
        return max(batch_size, math.ceil(rate_per_s * duration_s))
    if steps is not None:
        return steps * batch_size
    return max(batch_size, math.ceil(rate_per_s * max(min_window_s, 1.0)))


def split_list(option: str, text: str | None, convert: Callable[[str], T], what: str,
               problems: list[str]) -> list[T] | None:
    """'2,4,8' -> [2, 4, 8]; a value that does not convert adds a problem. None stays None."""
    if text is None:
        return None
    values: dict[T, None] = {}  # in order, each once (a dict: a list's `in` is quadratic on a long list)
    bad = 0
    for item in (part.strip() for part in str(text).split(",")):
        if bad >= 5:  # a list of a million bad values is told in a few lines
            problems.append(f"{option}: more values that are not valid; expected {what}")
            break
        if not item:
            bad += 1
            problems.append(f"{option}: empty value in {_short(str(text))}; write a comma-separated list like {what}")
            continue
        try:
            value = convert(item)
        except ValueError:
            bad += 1
            problems.append(f"{option}: {_short(item)} is not valid; expected {what}")
            continue
        values[value] = None
    return list(values)


@dataclass(frozen=True)
class RunConfig:
    """One configuration to measure (one run)."""

    workload: str
    mode: str
    precision: str
    batch_size: int
    grad_accum_steps: int
    size: int  # sequence length for text workloads, image side for image workloads
    device: str
    compile: bool
    warmup_steps: int | None  # None: until power and step time are steady (runner.measure)
    steps: int | None
    duration_s: float | None
    repeat_index: int
    tag: str | None = None
    min_window_s: float = 0.0  # without steps or duration: measure this long; shorter windows are flagged
    max_new_tokens: int | None = None  # generation workloads: output tokens per request (size is the prompt)
    request_rate_per_s: float | None = None  # serving: Poisson arrivals at this rate; batch_size the most at once

    @property
    def examples_per_step(self) -> int:
        """m x n examples per optimizer step in training; n per batch in inference."""
        return self.batch_size * (self.grad_accum_steps if self.mode == "train" else 1)

    def label(self) -> str:
        spec = workloads.get(self.workload)
        size = f"seq {self.size}" if spec.input_kind == "text" else f"image {self.size}"
        if self.max_new_tokens is not None:
            size = f"prompt {self.size} + {self.max_new_tokens} new tokens"
        if self.request_rate_per_s is not None:
            size += f", {self.request_rate_per_s:g} requests/s"
        batch = f"{self.grad_accum_steps}x{self.batch_size}" if self.grad_accum_steps > 1 else f"{self.batch_size}"
        rep = f" repeat {self.repeat_index}" if self.repeat_index else ""
        return f"{self.workload} {self.mode} {self.precision} batch {batch} {size}{rep}"

    def config_dict(self, *, tf32_enabled: bool | None, power_limit_w: float | None = None,
                    power_mode: str | None = None, measured_steps: int | None = None,
                    warmup_steps: int | None = None, requested: dict[str, Any] | None = None) -> dict[str, Any]:
        """The result file's `config` object for this run."""
        spec = workloads.get(self.workload)
        text = spec.input_kind == "text"
        out: dict[str, Any] = {
            "workload": self.workload, "model": spec.model, "task": spec.task, "mode": self.mode,
            "precision": self.precision, "tf32_enabled": tf32_enabled, "batch_size": self.batch_size,
            "grad_accum_steps": self.grad_accum_steps, "seq_len": self.size if text else None,
            "max_new_tokens": self.max_new_tokens, "request_rate_per_s": self.request_rate_per_s,
            "image_size": None if text else self.size, "gpu_count": 1 if self.device.startswith("cuda") else None,
            "power_limit_w": power_limit_w, "power_mode": power_mode, "compile": self.compile,
            "warmup_steps": warmup_steps if warmup_steps is not None else self.warmup_steps,
            "measured_steps": measured_steps,
            "repeat_index": self.repeat_index, "tag": self.tag, **(requested or {}),
        }
        return {k: v for k, v in out.items() if v is not None}


@dataclass
class SweepOptions:
    """What `joulebench run` was asked to do. Lists make a sweep: one run per combination."""

    workloads: list[str] = field(default_factory=lambda: ["bert-tiny"])
    modes: list[str] = field(default_factory=lambda: ["infer"])
    precisions: list[str] = field(default_factory=lambda: ["fp32"])
    batch_sizes: list[int] = field(default_factory=lambda: [8])
    grad_accum: list[int] = field(default_factory=lambda: [1])
    seq_lens: list[int] | None = None  # None: each workload's default
    max_new_tokens: list[int] | None = None  # generation workloads: None: each workload's default
    request_rates: list[float] | None = None  # serving: Poisson arrival rates, requests/s (runner.serving)
    image_sizes: list[int] | None = None
    compile: bool = False
    # None: the default for the meter (steady-state warmup on a sensor, WARMUP_STEPS without);
    # "auto": until power and step time are steady; a number: that many steps
    warmup: int | Literal["auto"] | None = None
    steps: int | None = None  # exactly this many measured steps
    duration_s: float | None = None  # exactly this long
    # without steps or duration: measure at least this long (None: MIN_WINDOW_S on a sensor; without
    # one, STEPS steps); with them, a shorter window is flagged
    min_window_s: float | None = None
    repeats: int | None = None  # None: SENSOR_REPEATS on a sensor, REPEATS without
    device: str | None = None  # None: cuda when available, else cpu
    db: str | None = None
    out: Path | None = None
    tag: str | None = None
    # power and energy (issue 4)
    power_limits_w: list[float] | None = None  # GPU power limits to sweep, W
    power_modes: list[str] | None = None  # Jetson nvpmodel mode ids to sweep
    jetson_clocks: bool = False  # run jetson_clocks after each power mode (restored at the end)
    settle_s: float = defaults.SETTLE_S
    idle: bool = True  # an idle baseline at each power setting before its runs
    idle_s: float = defaults.IDLE_S
    power_log: Path | None = None  # an external power log aligned to each window
    power_log_boundary: str | None = None
    tdp_w: float | None = None  # for the estimate when no sensor exists
    sample_hz: float = defaults.SAMPLE_HZ
    # power-setting profiles (issue 13)
    profile: bool = False  # every setting measured in one process on one built model (runner.profile)
    power_dry_run: bool = False  # record the settings it would apply, change nothing (runner.control)

    def power_values(self) -> list[float] | list[str] | None:
        return self.power_limits_w or self.power_modes or None

    def resolved_device(self) -> str:
        if self.device:
            return self.device
        import torch

        return "cuda" if torch.cuda.is_available() else "cpu"

    def validate(self) -> None:
        """Raise RunConfigError listing every problem; return when the sweep can run."""
        problems = list(self._problems())
        if problems:
            raise RunConfigError(problems)

    def _problems(self) -> list[str]:
        import torch

        import runner.devices as devices
        import runner.precision as precision

        problems: list[str] = []
        known = workloads.names()
        for name in self.workloads:
            if name not in known:
                problems.append(f"--workload: unknown workload {_short(name)}; valid: {', '.join(known)}")
        for mode in self.modes:
            if mode not in RUN_MODES:
                problems.append(f"--mode: {_short(mode)} is not a mode; valid: {', '.join(RUN_MODES)}")
        problems += self._bound_problems()
        if not self.workloads or not self.modes or not self.precisions or not self.batch_sizes:
            problems.append("--workload, --mode, --precision and --batch-size each need at least one value")
        if any(m > 1 for m in self.grad_accum) and "infer" in self.modes:
            accum = ",".join(map(str, self.grad_accum))
            problems.append(f"--grad-accum: {accum} applies to --mode train only; gradient accumulation has "
                            "no meaning for inference (drop --grad-accum or use --mode train)")
        if self.warmup != "auto" and self.warmup is not None and not isinstance(self.warmup, int):
            problems.append(f"--warmup: {self.warmup!r} is not valid; expected auto or 0 or more steps")
        if self.steps is not None and self.duration_s is not None:
            problems.append("--steps and --duration: give one of them, not both")
        problems += self._size_problems([n for n in self.workloads if n in known])
        problems += self._generation_problems([n for n in self.workloads if n in known])
        problems += self._power_problems()
        if not problems:  # counted, not expanded: a sweep of a billion runs is refused in microseconds
            runs = self.run_count()
            if runs > MAX_RUNS_PER_SWEEP:
                problems.append(f"this sweep would make {runs:,} runs; one sweep makes at most {MAX_RUNS_PER_SWEEP:,} "
                                "(its result file must import): split it, or use fewer --repeats or shorter lists")

        device_text = self.resolved_device()
        bad_device = devices.device_problem(device_text)
        if bad_device:
            problems.append(bad_device)
        else:
            device = torch.device(device_text)
            for p in self.precisions:
                for mode in (m for m in self.modes if m in RUN_MODES):
                    msg = precision.problem(p, mode, device)
                    if msg and msg not in problems:
                        problems.append(msg)
        return problems

    def _bound_problems(self) -> list[str]:
        """Every number and text option against its range (joulebench.ranges.RUN_OPTIONS), before
        anything is built or allocated: each message names the option, the range and why."""
        problems: list[str] = []
        numbers: list[tuple[str, list[Any] | None]] = [
            ("--batch-size", self.batch_sizes), ("--grad-accum", self.grad_accum), ("--seq-len", self.seq_lens),
            ("--image-size", self.image_sizes), ("--max-new-tokens", self.max_new_tokens),
            ("--request-rate", self.request_rates), ("--steps", [self.steps]),
            ("--warmup", [self.warmup] if isinstance(self.warmup, int) else None),
            ("--repeats", [self.repeats]), ("--duration", [self.duration_s])]
        for option, values in numbers:
            bad = [msg for v in values or [] if (msg := option_problem(option, v))]
            if bad:  # the first, and how many more: a list of a million values is told in one line
                problems.append(bad[0] + (f"; and {len(bad) - 1:,} more {option} value(s)" if len(bad) > 1 else ""))
        if self.min_window_s is not None:
            msg = option_problem("--min-window", self.min_window_s, shown=str(self.min_window_s))
            problems += [msg] if msg else []
        for option, text in (("--tag", [self.tag]), ("--power-mode", self.power_modes or [])):
            for value in text:
                try:
                    check_text(value, option)
                except RangeError as e:
                    problems.append(e.format_message())
        return problems

    def run_count(self, repeats: int | None = None) -> int:
        """How many runs `expand` would make with `repeats` (default: --repeats, else the fewest a meter
        gets), one per power setting, counted without making them."""
        repeats = repeats or self.repeats or min(defaults.SENSOR_REPEATS, defaults.REPEATS)
        total = 0
        for name in self.workloads:
            spec = workloads.get(name)
            sizes = len((self.seq_lens if spec.input_kind == "text" else self.image_sizes) or [None])
            news = len(self.max_new_tokens or [None]) if spec.generates else 1
            rates = len(self.request_rates or [None]) if spec.generates else 1
            for mode in self.modes:
                accums = len(self.grad_accum) if mode == "train" else 1
                total += len(self.precisions) * len(self.batch_sizes) * sizes * news * rates * accums
        return total * repeats * len(self.power_values() or [None])

    def _power_problems(self) -> list[str]:
        """Everything about power options that can be checked without touching a setting."""
        problems: list[str] = []
        if self.power_limits_w and self.power_modes:
            problems.append("--power-limit and --power-mode: give one of them (a GPU has limits, a Jetson has modes)")
        bad = [msg for w in self.power_limits_w or [] if (msg := option_problem("--power-limit", w))]
        if bad:
            problems.append(bad[0] + (f"; and {len(bad) - 1:,} more --power-limit value(s)" if len(bad) > 1 else ""))
        for option, value in (("--settle", self.settle_s), ("--idle-seconds", self.idle_s if self.idle else None),
                              ("--tdp-w", self.tdp_w), ("--sample-hz", self.sample_hz)):
            msg = option_problem(option, value)
            if msg:
                problems.append(msg)
        if self.power_log is not None and not Path(self.power_log).is_file():
            problems.append(f"--power-log: {self.power_log} is not a file")
        if self.power_log_boundary is not None and self.power_log_boundary not in BOUNDARIES:
            problems.append(f"--power-log-boundary: {self.power_log_boundary!r} is not one of {', '.join(BOUNDARIES)}")
        if self.power_log_boundary is not None and self.power_log is None:
            problems.append("--power-log-boundary applies to --power-log only")
        if self.profile and not (self.power_limits_w or self.power_modes):
            problems.append("--profile measures several power settings in one process: give --power-limit "
                            "(GPUs) or --power-mode (Jetsons), e.g. --power-limit 100,125,150,170")
        if self.power_dry_run and not (self.power_limits_w or self.power_modes):
            problems.append("--power-dry-run applies to --power-limit or --power-mode")
        if self.power_limits_w or self.power_modes:
            problems += self._control_problems()
        return problems

    def make_control(self) -> PowerControl | None:
        """The power control this sweep needs (None without --power-limit / --power-mode); with
        --power-dry-run one that records the settings and changes nothing."""
        import runner.control as control

        if self.power_dry_run and (self.power_limits_w or self.power_modes):
            option = "--power-limit" if self.power_limits_w else "--power-mode"
            return control.DryRunPowerControl.around(self._real_control, option)
        return self._real_control()

    def _real_control(self) -> PowerControl | None:
        import runner.control as control

        if self.power_limits_w:
            device = self.resolved_device()
            if not device.startswith("cuda"):
                raise control.PowerControlError(f"--power-limit needs a CUDA device; this sweep runs on {device}")
            return control.NvmlPowerLimit(int(device.split(":", 1)[1]) if ":" in device else 0)
        if self.power_modes:
            from joulebench.paths import jetson_clocks_file, resolve_db_path

            return control.JetsonPowerMode(jetson_clocks=self.jetson_clocks,
                                           clocks_file=jetson_clocks_file(resolve_db_path(self.db)))
        return None

    def _control_problems(self) -> list[str]:
        from runner.control import PowerControlError

        try:
            ctl = self.make_control()
        except PowerControlError as e:
            return [e.format_message()]
        if ctl is None:  # no --power-limit / --power-mode: nothing to check
            return []
        try:
            return ctl.problems(list(self.power_values() or []))
        finally:
            ctl.close()

    def _size_problems(self, names: list[str]) -> list[str]:
        problems: list[str] = []
        specs = [workloads.get(n) for n in names]
        for option, values, kind in (("--seq-len", self.seq_lens, "text"), ("--image-size", self.image_sizes, "image")):
            if values is None or not specs:
                continue
            takers = [s for s in specs if s.input_kind == kind]
            if not takers:
                others = ", ".join(s.name for s in specs)
                problems.append(f"{option} applies to {kind} workloads only; for {others} use "
                                f"{'--image-size' if kind == 'text' else '--seq-len'}")
                continue
            for spec in takers:
                for v in values:
                    msg = spec.size_problem(v)
                    if msg and msg not in problems:
                        problems.append(msg)
        return problems

    def _generation_problems(self, names: list[str]) -> list[str]:
        """--max-new-tokens applies to generation workloads, which generate (mode infer) and do not train."""
        problems: list[str] = []
        specs = [workloads.get(n) for n in names]
        makers = [s for s in specs if s.generates]
        if self.max_new_tokens is not None and specs and not makers:
            generating = ", ".join(n for n in workloads.names() if workloads.get(n).generates)
            problems.append(f"--max-new-tokens applies to generation workloads only ({generating}); "
                            f"{', '.join(s.name for s in specs)} do not generate")
        if self.request_rates is not None and specs and not makers:
            problems.append("--request-rate applies to generation workloads only (llm-*): it serves requests "
                            "arriving at that rate")
        problems += self._serving_span_problems(bool(makers))
        if self.request_rates is not None and self.profile:
            problems.append("--request-rate and --profile: a profile measures fixed batches; serve without --profile")
        if makers and "train" in self.modes:
            problems.append(f"--mode train: {', '.join(s.name for s in makers)} generate text (mode infer); "
                            "to train a causal language model use gpt2")
        for spec in makers:
            for prompt in self.seq_lens or [spec.default_size]:
                for new in self.max_new_tokens or [spec.default_max_new_tokens or 1]:
                    if spec.max_size is not None and prompt + new > spec.max_size:
                        problems.append(f"--seq-len {prompt} + --max-new-tokens {new} exceed {spec.name}'s "
                                        f"{spec.max_size} positions")
        return problems

    def _serving_span_problems(self, serving: bool) -> list[str]:
        """A serving run waits for its requests: at the lowest rate, the requests one run sends (a full
        batch, or --steps full batches) must be expected to arrive within MAX_WINDOW_S."""
        if not serving or not self.request_rates or not self.batch_sizes:
            return []
        rate = min(self.request_rates)
        if not rate > 0 or option_problem("--request-rate", rate) or option_problem("--batch-size",
                                                                                      max(self.batch_sizes)):
            return []  # already reported
        problems = []
        requests = max(self.batch_sizes) * (self.steps or 1)
        if self.duration_s is None and requests / rate > MAX_WINDOW_S:
            hours = requests / rate / 3600
            problems.append(f"--request-rate {rate:g} with {requests:,} requests per run (--batch-size"
                            f"{' x --steps' if self.steps else ''}): they would take about {hours:,.0f} h to arrive, "
                            f"and a serving run lasts at most {MAX_WINDOW_S / 3600:g} h; raise --request-rate or lower "
                            "--batch-size")
        most = serving_requests(max(self.request_rates), max(self.batch_sizes), steps=self.steps,
                                duration_s=self.duration_s, min_window_s=self.min_window_s if self.min_window_s
                                is not None else defaults.MIN_WINDOW_S)
        if most > MAX_SERVING_REQUESTS:
            problems.append(f"--request-rate {max(self.request_rates):g}: a serving run would send {most:,} requests; "
                            f"one run sends at most {MAX_SERVING_REQUESTS:,} (each request's times are kept): give a "
                            "shorter --duration, fewer --steps or a lower rate")
        return problems

    def sensor_equipped(self) -> bool:
        """Whether this sweep's power meter is a real sensor (detected as the sweep would, then closed)."""
        from runner.power import has_sensor
        from runner.sensors import detect_meter

        meter = detect_meter(self.resolved_device(), power_log=self.power_log, log_boundary=self.power_log_boundary,
                             tdp_w=self.tdp_w, rate_hz=self.sample_hz).meter
        try:
            return has_sensor(meter)
        finally:
            meter.close()

    def window_settings(self, sensor: bool) -> tuple[int | None, float, int | None, int]:
        """(steps, min_window_s, warmup_steps, repeats) for a sweep on a sensor or on the estimate;
        warmup_steps None is the steady-state warmup."""
        min_window = self.min_window_s if self.min_window_s is not None else (
            defaults.MIN_WINDOW_S if sensor else 0.0)
        explicit = self.steps is not None or self.duration_s is not None
        steps = self.steps if explicit or min_window > 0 else defaults.STEPS
        if self.warmup == "auto":
            warmup: int | None = None
        elif self.warmup is not None:
            warmup = int(self.warmup)
        else:
            warmup = None if sensor else defaults.WARMUP_STEPS
        repeats = self.repeats or (defaults.SENSOR_REPEATS if sensor else defaults.REPEATS)
        return steps, min_window, warmup, repeats

    def expand(self, sensor: bool = False) -> list[RunConfig]:
        """One RunConfig per combination, in a stable order (workload, mode, precision, batch, ...).
        `sensor`: the sweep measures with a real power sensor (energy-grade defaults)."""
        steps, min_window, warmup, repeats = self.window_settings(sensor)
        if self.run_count(repeats) > MAX_RUNS_PER_SWEEP:  # a sensor's default repeats multiply the sweep
            raise RunConfigError([f"this sweep would make {self.run_count(repeats):,} runs ({repeats} repeats each on "
                                  f"this power meter); one sweep makes at most {MAX_RUNS_PER_SWEEP:,}: split it"])
        device = self.resolved_device()
        runs: list[RunConfig] = []
        for name, mode, prec, batch in itertools.product(self.workloads, self.modes, self.precisions,
                                                          self.batch_sizes):
            spec = workloads.get(name)
            sizes = self.seq_lens if spec.input_kind == "text" else self.image_sizes
            accums = self.grad_accum if mode == "train" else [1]
            news: list[int | None] = [None]
            if spec.generates:
                news = list(self.max_new_tokens) if self.max_new_tokens else [spec.default_max_new_tokens]
            rates: list[float | None] = list(self.request_rates) if spec.generates and self.request_rates else [None]
            for accum, size, new, rate, rep in itertools.product(accums, sizes or [spec.default_size], news, rates,
                                                                 range(repeats)):
                runs.append(RunConfig(name, mode, prec, batch, accum, size, device, self.compile, warmup,
                                      steps, self.duration_s, rep, self.tag, min_window, new, rate))
        return runs


def _short(text: str) -> str:
    """A value typed as an option, quoted for a message: a long one cut (never echoed whole)."""
    return repr(text) if len(text) <= 60 else repr(text[:40]) + f"... ({len(text):,} characters)"


def parse_warmup(text: str | int | None, problems: list[str]) -> int | Literal["auto"] | None:
    """`--warmup`: auto, a whole number of steps, or None (the default for the meter)."""
    if text is None or isinstance(text, int):
        return text
    value = str(text).strip().lower()
    if value == "auto":
        return "auto"
    try:
        return int(value)
    except ValueError:
        problems.append(f"--warmup: {text!r} is not valid; expected auto (until power and step time are steady) "
                        "or a number of steps, e.g. 3")
        return None


def from_strings(*, workload: str = "bert-tiny", mode: str = "infer", precision: str = "fp32",
                 batch_size: str = "8", grad_accum: str = "1", seq_len: str | None = None,
                 image_size: str | None = None, max_new_tokens: str | None = None, request_rate: str | None = None,
                 power_limit: str | None = None, power_mode: str | None = None,
                 warmup: str | int | None = None, **rest: Any) -> SweepOptions:
    """Options from command-line strings (comma lists allowed); raise RunConfigError on bad values."""
    problems: list[str] = []
    opts = SweepOptions(
        warmup=parse_warmup(warmup, problems),
        workloads=split_list("--workload", workload, str, "workload names, e.g. bert-base-ner,gpt2", problems) or [],
        modes=split_list("--mode", mode, str, "train, infer or train,infer", problems) or [],
        precisions=split_list("--precision", precision, str, "e.g. fp32,bf16", problems) or [],
        batch_sizes=split_list("--batch-size", batch_size, int, "whole numbers, e.g. 1,8,32", problems) or [],
        grad_accum=split_list("--grad-accum", grad_accum, int, "whole numbers, e.g. 1,4", problems) or [],
        seq_lens=split_list("--seq-len", seq_len, int, "whole numbers, e.g. 128,384", problems),
        image_sizes=split_list("--image-size", image_size, int, "whole numbers, e.g. 224", problems),
        max_new_tokens=split_list("--max-new-tokens", max_new_tokens, int, "whole numbers, e.g. 128,512", problems),
        request_rates=split_list("--request-rate", request_rate, float, "requests per second, e.g. 2,8", problems),
        power_limits_w=split_list("--power-limit", power_limit, float, "watts, e.g. 100,125,150", problems),
        power_modes=split_list("--power-mode", power_mode, str, "nvpmodel mode ids, e.g. 0,6", problems),
        **rest,
    )
    problems += opts._problems()
    if problems:
        raise RunConfigError(problems)
    return opts
