"""Turning measurements into result-file runs: a typed RunRecord built in one place, for every
measured configuration, the idle baseline, and the placeholder of a run in progress. Writing the
sweep's file and importing it is `runner.output`'s job."""

from __future__ import annotations

import re
from dataclasses import dataclass, field
from datetime import UTC, datetime
from typing import TYPE_CHECKING, Any

import torch

from energy import EnergyReading, PowerTrace, idle_figures, reading_figures
from runner.devices import MemoryPeak
from runner.environment import Captured
from runner.generation import GenerationWindows, generation_figures, token_stats
from runner.measure import Window, latency_stats
from runner.options import RunConfig
from runner.serving import Served, steady_figures

if TYPE_CHECKING:
    pass


def now_iso() -> str:
    return datetime.now(UTC).isoformat()


@dataclass
class RunRecord:
    """One result-file run, typed; `to_json()` gives the `runs[]` entry (empty fields left out)."""

    run_id: str
    status: str  # ok | oom | failed | interrupted
    device: dict[str, Any]
    config: dict[str, Any]
    started_at: str
    ended_at: str
    environment: dict[str, Any] = field(default_factory=dict)
    metrics: dict[str, Any] = field(default_factory=dict)
    flags: list[str] = field(default_factory=list)
    error: str | None = None
    power_traces: list[PowerTrace] = field(default_factory=list)
    step_times_ms: list[float] = field(default_factory=list)
    notes: str | None = None

    def to_json(self) -> dict[str, Any]:
        out: dict[str, Any] = {
            "run_id": self.run_id, "status": self.status, "error": self.error,
            "started_at": self.started_at, "ended_at": self.ended_at, "device": self.device,
            "environment": {k: v for k, v in self.environment.items() if v is not None},
            "config": {k: v for k, v in self.config.items() if v is not None},
            "metrics": {k: v for k, v in self.metrics.items() if v is not None},
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


def metrics(cfg: RunConfig, window: Window, memory: MemoryPeak | None,
            gen: GenerationWindows | None = None, served: Served | None = None) -> tuple[dict[str, Any], str | None]:
    """Summary metrics of a measured window (PRODUCT.md's definitions) and a note on how the
    generation figures were split (None for other workloads). A generation step is a batch of
    requests: examples are requests, the latency percentiles are per request."""
    train = cfg.mode == "train"
    examples = served.requests if served is not None else window.steps * cfg.examples_per_step
    optimizer_steps = window.steps if train else 0
    out: dict[str, Any] = {
        "examples": examples,
        "optimizer_steps": optimizer_steps,
        "duration_s": window.duration_s,
        "throughput_sps": examples / window.duration_s,
        "iterations_per_s": window.steps / window.duration_s,
        **latency_stats(served.latency_ms if served is not None else window.step_times_ms),
    }
    if memory is not None:
        out.update(mem_peak_allocated_mb=memory.allocated_mb, mem_peak_reserved_mb=memory.reserved_mb,
                   mem_peak_rss_mb=memory.rss_mb)
    out.update(warmup_s=window.warmup.duration_s if window.warmup.duration_s > 0 else None,
               warmup_steady=window.warmup.steady, start_offset_s=window.warmup.start_offset_s)
    out.update(reading_figures(window.energy, examples=examples, optimizer_steps=optimizer_steps,
                               duration_s=window.duration_s))
    note = None
    if gen is not None and cfg.max_new_tokens is not None:
        tokens, note = generation_figures(gen, batch_size=cfg.batch_size, prompt_tokens=cfg.size,
                                          max_new_tokens=cfg.max_new_tokens, energy_j=out.get("energy_j"))
        out.update(tokens, sample_unit="request")
    if served is not None and cfg.max_new_tokens is not None:
        steady, note = steady_figures(served, batch_size=cfg.batch_size, max_new_tokens=cfg.max_new_tokens)
        out.update(output_tokens=served.requests * cfg.max_new_tokens, sample_unit="request",
                   **token_stats("ttft", served.ttft_ms), **token_stats("tpot", served.gaps_ms, served.gap_weights),
                   **steady)
    return {k: v for k, v in out.items() if v is not None}, note


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
               idle_power_w: float | None = None, requested: dict[str, Any] | None = None) -> dict[str, Any]:
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
    run_metrics, note = metrics(cfg, window, memory, gen, served) if ok and window else (missing_energy(status),
                                                                                          None)
    if ok:
        run_metrics.update(idle_figures(run_metrics, idle_power_w, flags))
    return RunRecord(
        run_id=run_id, status=status, error=error, started_at=started_at, ended_at=ended_at,
        device=captured.device if captured else fallback_device(cfg.device),
        environment=dict(captured.environment) if captured else {},
        config=cfg.config_dict(
            tf32_enabled=tf32_enabled,
            power_limit_w=captured.power_limit_w if captured else None,
            power_mode=captured.power_mode if captured else None,
            measured_steps=window.steps if ok and window else None,
            warmup_steps=window.warmup.steps if ok and window else None, requested=requested),
        metrics=run_metrics,
        flags=flags + (window.energy.flags + window.flags if ok and window else []),
        step_times_ms=window.step_times_ms if ok and window else [],
        power_traces=window.energy.traces if ok and window else [],
        notes=note,
    ).to_json()


def idle_record(*, run_id: str, status: str, error: str | None, started_at: str, ended_at: str,
                captured: Captured, gpu: bool, reading: EnergyReading, duration_s: float, seconds: float,
                requested: dict[str, Any] | None, tag: str | None) -> dict[str, Any]:
    """The idle baseline's run: workload and mode `idle`, its average power as `idle_power_w`."""
    flags = list(reading.flags)
    requested_setting(requested, captured, flags)
    config: dict[str, Any] = {"workload": "idle", "mode": "idle", "power_limit_w": captured.power_limit_w,
                              "power_mode": captured.power_mode, "tag": tag, "gpu_count": 1 if gpu else None,
                              **(requested or {})}
    run_metrics: dict[str, Any]
    if status == "ok":
        run_metrics = {"duration_s": duration_s, "examples": 0,
                       **reading_figures(reading, examples=0, optimizer_steps=0, duration_s=duration_s)}
        if run_metrics.get("avg_power_w"):
            run_metrics["idle_power_w"] = run_metrics["avg_power_w"]
    else:
        run_metrics = {"energy_missing_reason": "the idle measurement was interrupted"}
    return RunRecord(
        run_id=run_id, status=status, error=error, started_at=started_at, ended_at=ended_at,
        device=captured.device, environment=dict(captured.environment), config=config, metrics=run_metrics,
        flags=flags, power_traces=reading.traces if status == "ok" else [],
        notes=f"idle baseline: {seconds:g} s with nothing running",
    ).to_json()


def placeholder(cfg: RunConfig, requested: dict[str, Any] | None) -> dict[str, Any]:
    """The run about to start, as it is recorded if the process is killed during it."""
    import uuid

    return run_record(cfg, run_id=str(uuid.uuid4()), status="interrupted", error="killed", started_at=now_iso(),
                      ended_at=now_iso(), captured=None, tf32_enabled=None, window=None, memory=None, flags=[],
                      requested=requested)
