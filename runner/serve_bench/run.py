"""The serve-bench sweep end to end: probe the server, then measure, write and import like `joulebench run`.

Nothing is written before the server has answered as an OpenAI-compatible server serving the model: an
unreachable URL, another kind of server or a missing model end here with the reason and no file.
"""

from __future__ import annotations

import sys
import uuid
from collections.abc import Mapping, Sequence
from dataclasses import replace
from pathlib import Path
from typing import Any, TextIO

from joulebench.text import shown, table
from runner.interrupts import InterruptGuard
from runner.output import ResultSink, unique_out_path
from runner.power import PowerMeter
from runner.serve_bench.bench import run_points
from runner.serve_bench.lag import CLIENT_BOUND_MS, CLIENT_BOUND_TTFT_PCT, FLAG_CLIENT_BOUND
from runner.serve_bench.lengths import PromptBuilder
from runner.serve_bench.options import ServeBenchOptions
from runner.serve_bench.probe import probe


def serve_bench(opts: ServeBenchOptions, *, meter: PowerMeter | None = None, stream: TextIO | None = None,
                ingest: bool = True, root: Path | str = "/") -> Any:
    """Run the sweep; a runner.sweep.SweepResult (its runs, file, import report, exit code). `root`: the
    file system the device is read from (a Jetson's files; tests give a recorded tree)."""
    import torch

    from runner.sweep import SweepResult, finish

    stream = stream or sys.stderr
    if opts.sweep_id is None:  # every point of this invocation (probes, rates, repeats) is one sweep
        opts = replace(opts, sweep_id=str(uuid.uuid4()))
    info = probe(opts.target, opts.model, opts.engine)
    builder = PromptBuilder(opts.tokenizer)
    device = f"cuda:{opts.gpus[0]}" if opts.gpus else opts.device or ("cuda" if torch.cuda.is_available() else "cpu")
    own_meter = meter is None
    if meter is None and opts.gpus:  # before anything is written: a GPU that does not exist ends the command here
        from runner.sampler import SensorMeter
        from runner.serve_bench.gpus import open_gpus

        meter = SensorMeter(open_gpus(opts.gpus), rate_hz=opts.sample_hz)
    elif meter is None:
        from runner.sensors import detect_meter

        meter = detect_meter(device, power_log=opts.power_log, log_boundary=opts.power_log_boundary,
                             tdp_w=opts.tdp_w, rate_hz=opts.sample_hz).meter
    print(f"server: {shown(opts.target)} model {info.label} engine {info.engine or 'not stated'}"
          f"{' ' + info.engine_version if info.engine_version else ''}; energy: "
          f"{getattr(meter, 'describe', lambda: meter.name)()}", file=stream, flush=True)
    captured = _served_elsewhere(opts.server_device) if opts.server_device else _capture(device, opts.gpus, root)
    sink = ResultSink(opts.out or unique_out_path(opts.db, "serve"), opts.db, stream)
    result = SweepResult(out_path=sink.out_path)
    sink.start(recover=ingest)
    with InterruptGuard() as guard:
        try:
            result.runs = list(run_points(opts, info, meter, builder, captured, sink, guard, stream))
        finally:
            if own_meter:
                meter.close()
        if result.runs:
            print(summary(result.runs), file=stream, flush=True)
        finish(result, sink, guard, ingest=ingest, stream=stream)
    return result


def _served_elsewhere(name: str) -> Any:
    """A server on another machine (--server-device): its device as named, its software not known here (this
    machine, the client, is not the one measured)."""
    from importers.device_text import kind_of_device
    from runner.environment import Captured

    return Captured(device={"name": name, "kind": kind_of_device(name)}, environment={})


def _capture(device: str, gpus: list[int], root: Path | str = "/") -> Any:
    """The device and environment of the runs; a GPU the client's torch cannot see is named by NVML. On a
    Jetson the device is the module whose power is measured (its device-tree model), whatever --device says:
    Ollama or llama.cpp serve from the module, and a client's CPU-only torch cannot see its GPU."""
    import torch

    import runner.environment as environment
    from runner.sensors import jetson

    cuda = device.startswith("cuda") and torch.cuda.is_available()
    if jetson.is_jetson(root) and not cuda:
        captured = environment.capture(torch.device("cpu"))
        return replace(captured, device={"name": environment.jetson_module(root) or "Jetson (module not stated)",
                                         "kind": "jetson"},
                       power_mode=environment.jetson_power_mode() if str(root) == "/" else None)
    if not device.startswith("cuda") or cuda:
        return environment.capture(torch.device(device))
    from runner.serve_bench.gpus import gpu_name

    captured = environment.capture(torch.device("cpu"))
    name = gpu_name(gpus[0]) if gpus else None
    return replace(captured, device={"name": name or "NVIDIA GPU", "kind": "gpu"})


def _fmt(value: Any, digits: int = 3) -> str:
    return "-" if value is None else f"{value:.{digits}g}" if isinstance(value, float) else str(value)


def summary(runs: Sequence[Mapping[str, Any]]) -> str:
    """One row per point: load, status, tokens/s, requests/s, J/token, TTFT/ITL/TPOT p90, goodput (and per J),
    the client's send lag p99; where the latency percentiles are withheld, why, in their place; a client-bound
    point (runner.serve_bench.lag) says so with its lag and CPU figures under the table."""
    rows = []
    withheld: list[str] = []
    bound: list[str] = []
    for run in runs:
        c, m = run["config"], run.get("metrics", {})
        load = f"{c.get('request_rate_per_s'):g}/s" if c.get("load_kind") == "rate" else f"x{c.get('max_concurrency')}"
        flags = run.get("flags", [])
        status = run["status"] + (" overloaded" if "overloaded" in flags else "") + (
            " client-bound" if FLAG_CLIENT_BOUND in flags else "")
        if FLAG_CLIENT_BOUND in flags:
            bound.append(f"{load}: client-bound: the client's send lag p99 {_fmt(m.get('client_send_lag_p99_ms'))} ms "
                         f"(max {_fmt(m.get('client_send_lag_max_ms'))} ms) is past {CLIENT_BOUND_TTFT_PCT:g} % of "
                         f"TTFT p50 or {CLIENT_BOUND_MS:g} ms; its event loop waited "
                         f"{_fmt(m.get('client_cpu_wait_pct'))} % of the load for a CPU and ran "
                         f"{_fmt(m.get('client_cpu_busy_pct'))} %: the latencies include the client's own delay "
                         "(graded C; run the client on a quieter machine, or with fewer other processes beside it)")
        why = m.get("latency_missing_reason")
        if why:
            withheld.append(f"{load}: latency percentiles withheld: {why}")
        latency = [f"withheld ({why.split(':')[0]})", "-", "-", "-"] if why else [
            _fmt(m.get("ttft_p90_ms")), _fmt(m.get("itl_p90_ms")), _fmt(m.get("tpot_p90_ms")),
            _fmt(m.get("e2e_latency_p90_ms"))]
        rows.append((load, status, _fmt(m.get("requests_completed")), _fmt(m.get("requests_failed")),
                     _fmt(m.get("tokens_per_s")), _fmt(m.get("requests_per_s")), _fmt(m.get("j_per_token")),
                     _fmt(m.get("j_per_request")), *latency, _fmt(m.get("goodput_requests_per_s")),
                     _fmt(m.get("goodput_requests_per_j")), _fmt(m.get("client_send_lag_p99_ms"))))
    return table(("load", "status", "done", "failed", "tok/s", "req/s", "J/token", "J/request", "TTFT p90 ms",
                  "ITL p90 ms", "TPOT p90 ms", "e2e p90 ms", "goodput req/s", "goodput req/J", "send lag p99 ms"),
                 rows) + "".join("\n" + line for line in withheld + bound)
