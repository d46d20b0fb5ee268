"""Turning measurements into result-file runs: a typed RunRecord built in one place, for every
measured configuration, the idle baseline, and the placeholder of a run in progress. Writing the
sweep's file and importing it is `runner.output`'s job."""

from __future__ import annotations

import re
from collections.abc import Iterator, Mapping
from dataclasses import dataclass, field
from datetime import UTC, datetime
from functools import cache
from typing import Any

import torch

from energy import EnergyReading, PowerTrace, idle_figures, reading_figures
from joulebench.metrics import LATENCY, METRICS, Percentiles, metric
from joulebench.resultfile import schema
from runner.devices import MemoryPeak
from runner.environment import Captured
from runner.generation import GenerationWindows, TokenFigures, generation_figures
from runner.measure import Window
from runner.options import RunConfig
from runner.serving import SERVING_SEED, Served, served_figures


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class RunMetrics:
    """A run's summary metrics, typed. `energy` holds the energy package's figures (energy.figures names
    them: energy_j, avg_power_w, j_per_sample, idle_power_w, ...); every other figure is a field or a
    typed sub-record; `to_json()` gives the result file's `metrics` with the names of joulebench.metrics."""

    examples: int | None = None
    optimizer_steps: int | None = None
    duration_s: float | None = None
    throughput_sps: float | None = None
    iterations_per_s: float | None = None
    latency: Percentiles | None = None  # per step (a generation's step is a batch of requests)
    latency_max_ms: float | None = None
    memory: MemoryPeak | None = None
    warmup_s: float | None = None
    warmup_steady: bool | None = None
    start_offset_s: float | None = None
    sample_unit: str | None = None
    energy: dict[str, Any] = field(default_factory=dict)
    tokens: TokenFigures | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {"examples": self.examples, "optimizer_steps": self.optimizer_steps,
                               "duration_s": self.duration_s, "throughput_sps": self.throughput_sps,
                               "iterations_per_s": self.iterations_per_s, **LATENCY.columns(self.latency),
                               LATENCY.stat("max").name: self.latency_max_ms}
        if self.memory is not None:
            out.update(mem_peak_allocated_mb=self.memory.allocated_mb, mem_peak_reserved_mb=self.memory.reserved_mb,
                       mem_peak_rss_mb=self.memory.rss_mb)
        out.update(warmup_s=self.warmup_s, warmup_steady=self.warmup_steady, start_offset_s=self.start_offset_s)
        out.update({metric(k).name: v for k, v in self.energy.items()})  # a name energy/ gives must be a metric
        if self.tokens is not None:
            out.update(self.tokens.columns())
        out["sample_unit"] = self.sample_unit
        return {k: v for k, v in out.items() if v is not None}


@dataclass
class MeasuredConfig:
    """The configuration of a measured run: what was asked (`run`) and what was in effect."""

    run: RunConfig
    tf32_enabled: bool | None = None
    power_limit_w: float | None = None
    power_mode: str | None = None
    measured_steps: int | None = None
    warmup_steps: int | None = None
    requested: dict[str, Any] | None = None  # power_limit_requested_w / power_mode_requested (and profile)

    def __post_init__(self) -> None:
        # the workload's model, task and input kind as registered when the run was recorded (a test's
        # workload may be gone by the time the record is written)
        self._fields = self.run.config_dict(
            tf32_enabled=self.tf32_enabled, power_limit_w=self.power_limit_w, power_mode=self.power_mode,
            measured_steps=self.measured_steps, warmup_steps=self.warmup_steps, requested=self.requested)

    def to_json(self) -> dict[str, Any]:
        cfg = self.run
        out = dict(self._fields)
        if cfg.max_new_tokens is not None:  # a generation: how the load was offered and the lengths asked for
            serving = cfg.request_rate_per_s is not None
            out.update(load_kind="rate" if serving else "batch", engine="transformers",
                       prompt_tokens_requested=cfg.size, output_tokens_requested=cfg.max_new_tokens,
                       length_distribution="fixed")
            if serving:
                out.update(arrival="poisson", seed=SERVING_SEED, max_concurrency=cfg.batch_size)
        return out


@dataclass
class IdleConfig:
    """The idle baseline's configuration: workload and mode `idle`, the power setting in effect."""

    power_limit_w: float | None
    power_mode: str | None
    tag: str | None
    gpu_count: int | None
    requested: dict[str, Any] | None = None

    def to_json(self) -> dict[str, Any]:
        out = {"workload": "idle", "mode": "idle", "power_limit_w": self.power_limit_w, "power_mode": self.power_mode,
               "tag": self.tag, "gpu_count": self.gpu_count, **(self.requested or {})}
        return {k: v for k, v in out.items() if v is not None}


@dataclass(frozen=True)
class Fields:
    """Result-file fields computed elsewhere (e.g. the serve-bench client's figures), each name checked
    against its one definition when written: a metric's in joulebench.metrics, a config field's in the
    result schema. A plain dict given to RunRecord is wrapped in one."""

    values: Mapping[str, Any]
    part: str  # metrics | config

    def to_json(self) -> dict[str, Any]:
        known = config_fields() if self.part == "config" else METRICS
        unknown = sorted(k for k in self.values if k not in known)
        if unknown:
            raise KeyError(f"{self.part}: {', '.join(unknown)} not defined (joulebench/metrics.py, the result schema)")
        return {k: v for k, v in self.values.items() if v is not None}


@cache
def config_fields() -> frozenset[str]:
    return frozenset(schema()["$defs"]["config"]["properties"])


@dataclass
class RunRecord(Mapping[str, Any]):
    """One result-file run, typed until it is written: `to_json()` gives the `runs[]` entry (empty
    fields left out). It reads as that entry too (`record["metrics"]`), for what shows or checks a run."""

    run_id: str
    status: str  # ok | oom | failed | interrupted
    device: dict[str, Any]
    config: MeasuredConfig | IdleConfig | Fields
    started_at: str
    ended_at: str
    environment: dict[str, Any] = field(default_factory=dict)
    metrics: RunMetrics | Fields = field(default_factory=RunMetrics)
    flags: list[str] = field(default_factory=list)
    error: str | None = None
    power_traces: list[PowerTrace] = field(default_factory=list)
    step_times_ms: list[float] = field(default_factory=list)
    notes: str | None = None

    def __post_init__(self) -> None:
        if isinstance(self.config, Mapping):
            self.config = Fields(self.config, "config")
        if isinstance(self.metrics, Mapping):
            self.metrics = Fields(self.metrics, "metrics")

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "run_id": self.run_id, "status": self.status, "error": self.error,
            "started_at": self.started_at, "ended_at": self.ended_at, "device": self.device,
            "environment": {k: v for k, v in self.environment.items() if v is not None},
            "config": self.config.to_json(),
            "metrics": self.metrics.to_json(),
            "flags": sorted(set(self.flags)),
        }
        if self.error is None:
            del out["error"]
        if self.step_times_ms:
            out["step_times_ms"] = list(self.step_times_ms)
        if self.power_traces:
            out["power_traces"] = [t.to_json() for t in self.power_traces]
        if self.notes:
            out["notes"] = self.notes
        return out

    # the read-only view as the result-file run
    def __getitem__(self, key: str) -> Any:
        return self.to_json()[key]

    def __iter__(self) -> Iterator[str]:
        return iter(self.to_json())

    def __len__(self) -> int:
        return len(self.to_json())


def run_metrics(cfg: RunConfig, window: Window, memory: MemoryPeak | None, gen: GenerationWindows | None = None,
                served: Served | None = None) -> tuple[RunMetrics, str | None]:
    """Summary metrics of a measured window (joulebench.metrics defines each) and a note on how the
    generation figures were split (None for other workloads). A generation step is a batch of
    requests: examples are requests, the latency percentiles are per step (per request when served)."""
    train = cfg.mode == "train"
    examples = served.requests if served is not None else window.steps * cfg.examples_per_step
    optimizer_steps = window.steps if train else 0
    latencies = served.latency_ms if served is not None else window.step_times_ms
    out = RunMetrics(examples=examples, optimizer_steps=optimizer_steps, duration_s=window.duration_s,
                     throughput_sps=examples / window.duration_s, iterations_per_s=window.steps / window.duration_s,
                     latency=Percentiles.of(latencies), latency_max_ms=max(latencies, default=None), memory=memory,
                     warmup_s=window.warmup.duration_s if window.warmup.duration_s > 0 else None,
                     warmup_steady=window.warmup.steady, start_offset_s=window.warmup.start_offset_s,
                     energy=reading_figures(window.energy, examples=examples, optimizer_steps=optimizer_steps,
                                            duration_s=window.duration_s))
    note = None
    if gen is not None and cfg.max_new_tokens is not None:
        out.tokens, note = generation_figures(gen, batch_size=cfg.batch_size, prompt_tokens=cfg.size,
                                              max_new_tokens=cfg.max_new_tokens, energy_j=out.energy.get("energy_j"))
        out.sample_unit = "request"
    if served is not None and cfg.max_new_tokens is not None:
        out.tokens, note = served_figures(served, batch_size=cfg.batch_size, max_new_tokens=cfg.max_new_tokens)
        out.tokens.prompt_tokens_mean = float(cfg.size)
        out.sample_unit = "request"
    return out, note


def requested_setting(requested: dict[str, Any] | None, captured: Captured | None, flags: list[str]) -> None:
    """Flag a run whose requested power setting is not the one in effect (no privilege, or refused)."""
    if not requested or captured is None:
        return
    want_w = requested.get("power_limit_requested_w")
    if want_w is not None and (captured.power_limit_w is None or abs(captured.power_limit_w - want_w) > 0.5):
        flags.append("power_setting_not_applied")
    want_mode = requested.get("power_mode_requested")
    if want_mode is not None and (captured.power_mode or "").split(" ", 1)[0] != str(want_mode):
        flags.append("power_setting_not_applied")


# What an allocator says when memory runs out, on every device torch runs on: CUDA ("CUDA out of
# memory", "CUDA error: out of memory"), ROCm ("HIP out of memory"), MPS, XPU, the CPU allocator
# ("DefaultCPUAllocator: can't allocate memory" on Linux, "not enough memory" on Windows), cuBLAS /
# cuDNN workspaces (ALLOC_FAILED) and C++'s std::bad_alloc.
_OOM_TEXT = re.compile(r"out of memory|DefaultCPUAllocator: (can't allocate memory|not enough memory)"
                       r"|_STATUS_ALLOC_FAILED|std::bad_alloc", re.IGNORECASE)


def is_out_of_memory(error: BaseException) -> bool:
    """Whether `error` (or what it was raised from) is a device or host running out of memory: the
    one rule every mode (train, infer, generation, serving) records as `oom` rather than `failed`.
    torch.OutOfMemoryError, Python's MemoryError (numpy's too), and a RuntimeError whose message
    is an allocator's."""
    seen: set[int] = set()
    e: BaseException | None = error
    while e is not None and id(e) not in seen and len(seen) < 8:
        seen.add(id(e))
        if isinstance(e, (torch.OutOfMemoryError, MemoryError)):
            return True
        if isinstance(e, RuntimeError) and _OOM_TEXT.search(str(e)[:2000]):
            return True
        e = e.__cause__ or e.__context__
    return False


def missing_energy(status: str) -> dict[str, Any]:
    why = {"oom": "the run ran out of memory", "failed": "the run failed",
           "interrupted": "the run was interrupted"}[status]
    return {"energy_missing_reason": f"{why} before the measured window completed"}


def run_record(cfg: RunConfig, *, run_id: str, status: str, error: str | None, started_at: str,
               ended_at: str, captured: Captured | None, tf32_enabled: bool | None,
               window: Window | GenerationWindows | Served | None, memory: MemoryPeak | None, flags: list[str],
               idle_power_w: float | None = None, requested: dict[str, Any] | None = None) -> RunRecord:
    """One result-file run of a measured configuration."""
    from runner.environment import fallback_device

    gen = window if isinstance(window, GenerationWindows) else None
    served = window if isinstance(window, Served) else None
    if gen is not None:
        window = gen.window
        flags = [*flags, *gen.flags]
    if served is not None:
        window = served.window
    assert isinstance(window, Window) or window is None
    ok = status == "ok" and window is not None
    flags = list(flags)
    requested_setting(requested, captured, flags)
    if ok and window:
        measured, note = run_metrics(cfg, window, memory, gen, served)
        measured.energy.update(idle_figures({**measured.energy, "duration_s": measured.duration_s,
                                             "examples": measured.examples}, idle_power_w, flags))
    else:
        measured, note = RunMetrics(energy=missing_energy(status)), None
    return RunRecord(
        run_id=run_id, status=status, error=error, started_at=started_at, ended_at=ended_at,
        device=captured.device if captured else fallback_device(cfg.device),
        environment=dict(captured.environment) if captured else {},
        config=MeasuredConfig(
            cfg, tf32_enabled=tf32_enabled,
            power_limit_w=captured.power_limit_w if captured else None,
            power_mode=captured.power_mode if captured else None,
            measured_steps=window.steps if ok and window else None,
            warmup_steps=window.warmup.steps if ok and window else None, requested=requested),
        metrics=measured,
        flags=flags + (window.energy.flags + window.flags if ok and window else []),
        step_times_ms=window.step_times_ms if ok and window else [],
        power_traces=window.energy.traces if ok and window else [],
        notes=note,
    )


def idle_record(*, run_id: str, status: str, error: str | None, started_at: str, ended_at: str,
                captured: Captured, gpu: bool, reading: EnergyReading, duration_s: float, seconds: float,
                requested: dict[str, Any] | None, tag: str | None) -> RunRecord:
    """The idle baseline's run: workload and mode `idle`, its average power as `idle_power_w`."""
    flags = list(reading.flags)
    requested_setting(requested, captured, flags)
    config = IdleConfig(power_limit_w=captured.power_limit_w, power_mode=captured.power_mode, tag=tag,
                        gpu_count=1 if gpu else None, requested=requested)
    if status == "ok":
        idle = RunMetrics(duration_s=duration_s, examples=0,
                          energy=reading_figures(reading, examples=0, optimizer_steps=0, duration_s=duration_s))
        if idle.energy.get("avg_power_w"):
            idle.energy["idle_power_w"] = idle.energy["avg_power_w"]
    else:
        idle = RunMetrics(energy={"energy_missing_reason": "the idle measurement was interrupted"})
    return RunRecord(
        run_id=run_id, status=status, error=error, started_at=started_at, ended_at=ended_at,
        device=captured.device, environment=dict(captured.environment), config=config, metrics=idle,
        flags=flags, power_traces=reading.traces if status == "ok" else [],
        notes=f"idle baseline: {seconds:g} s with nothing running",
    )


def placeholder(cfg: RunConfig, requested: dict[str, Any] | None) -> dict[str, Any]:
    """The run about to start, as it is recorded if the process is killed during it: written to the
    sweep's marker file at once (ingest.recover), so given as the result-file run."""
    import uuid

    return run_record(cfg, run_id=str(uuid.uuid4()), status="interrupted", error="killed", started_at=now_iso(),
                      ended_at=now_iso(), captured=None, tf32_enabled=None, window=None, memory=None, flags=[],
                      requested=requested).to_json()
