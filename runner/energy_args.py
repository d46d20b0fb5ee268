"""The energy-measurement options `joulebench run` and `joulebench serve-bench` share (an external power log,
the CPU TDP for an estimate, the sampling rate). Cheap to import: no torch."""

from __future__ import annotations

import argparse
from pathlib import Path


def add_energy_arguments(p: argparse.ArgumentParser) -> None:
    from joulebench import defaults
    from joulebench.vocab import BOUNDARIES

    g = p.add_argument_group("energy measurement")
    g.add_argument("--power-log", type=Path,
                   help="an external power log written during the run (wall meter CSV of time,watts; nvidia-smi, "
                        "tegrastats or jtop log), aligned to each window by timestamp")
    g.add_argument("--power-log-boundary", choices=BOUNDARIES,
                   help="where the --power-log measures (default: wall for a meter CSV, else the log's own)")
    g.add_argument("--tdp-w", type=float, help="CPU TDP in W for the estimate used when no sensor exists")
    g.add_argument("--sample-hz", type=float, default=defaults.SAMPLE_HZ,
                   help=f"power sampling rate, never faster than the sensor updates (default: {defaults.SAMPLE_HZ:g})")
