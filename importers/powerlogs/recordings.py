"""Recordings appended to one power log: a meter script that opens its CSV for appending writes the next session
under the last one ('a' mode, the header once), so a log may hold two recordings hours or days apart. Integrated as
one, the power of the first sample after the gap would be held over the whole gap (a day at 5 W: 432 kJ no one
measured). A gap of more than GAP_PERIODS sample periods, and of MIN_GAP_S at least, splits the log: each
recording is a log of its own."""

from __future__ import annotations

import dataclasses
from datetime import timedelta

import numpy as np

from energy.trace import PowerTrace, median_period_s
from importers.powerlogs.log import PowerLog

GAP_PERIODS = 50
MIN_GAP_S = 60.0
MAX_RECORDINGS = 100


def recordings(log: PowerLog) -> list[PowerLog]:
    """The log's recordings, each on its own time axis from its first sample; [log] where it has one."""
    if not log.totals:
        return [log]
    t = np.asarray(log.trace(log.totals[0]).t_s, dtype=float)
    period = median_period_s(list(t)) if len(t) >= 4 else None
    if not period:
        return [log]
    cuts = np.where(np.diff(t) > max(MIN_GAP_S, GAP_PERIODS * period))[0]
    if len(cuts) == 0 or len(cuts) >= MAX_RECORDINGS:
        return [log]
    starts = [float(t[0]), *(float(t[i + 1]) for i in cuts)]
    ends = [*(float(t[i]) for i in cuts), float(t[-1])]
    return [_part(log, a, b) for a, b in zip(starts, ends, strict=True)]


def _part(log: PowerLog, start: float, end: float) -> PowerLog:
    traces = []
    for trace in log.traces:
        kept = [(ts - start, w) for ts, w in zip(trace.t_s, trace.power_w, strict=True) if start <= ts <= end]
        traces.append(PowerTrace(trace.domain, trace.boundary, trace.method, [ts for ts, _ in kept],
                                 [w for _, w in kept]))
    started = log.started + timedelta(seconds=start) if log.started is not None else None
    wall = log.start_wall_s + start if log.start_wall_s is not None else None
    samples = len(traces[0].t_s) if traces else 0
    return dataclasses.replace(log, traces=traces, started=started, start_wall_s=wall, samples=samples,
                               notes=list(log.notes), flags=list(log.flags), counter_j=None)
