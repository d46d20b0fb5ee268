"""`joulebench recommend`: which power limit or power mode for a goal, from what was measured.

Prints the measured and predicted settings, the Pareto front of time vs energy, the model's
leave-one-out error (or why it predicts nothing), and the recommended setting with what it saves
and costs against the highest limit (or fastest mode) measured.
"""

from __future__ import annotations

import argparse
from typing import Any

from ingest.stores import add_store_arguments, target

DESCRIPTION = (
    "Recommend a GPU power limit or Jetson power mode for a goal, from the runs in the database at several "
    "settings (measure them with `joulebench run --profile --power-limit 100,125,150,170`). Settings between "
    "the measured ones are predicted (GPUs: from the power limit; Jetsons: from the mode's CPU cores and "
    "CPU/GPU/memory clocks in the power-mode table) when enough were measured, with the leave-one-out error; "
    "nothing outside the measured range is predicted. Goals: energy (fewest joules), speed (most throughput), "
    "balanced (Zeus: eta x energy + (1 - eta) x max power x time), cost (electricity + hardware).")


def add_subcommand(sub: Any, db_help: str) -> None:
    from tuning.goals import GOALS

    p = sub.add_parser("recommend", help="recommend a power limit / power mode for a goal (measured and predicted)",
                       description=DESCRIPTION)
    p.add_argument("--device", required=True, help="device name as stored, e.g. 'Tesla V100'")
    p.add_argument("--workload", required=True, help="workload, e.g. bert-base-ner")
    p.add_argument("--mode", choices=("train", "infer"), help="narrow to train or infer runs")
    p.add_argument("--precision", help="narrow to one precision, e.g. fp16")
    p.add_argument("--batch-size", type=int, help="narrow to one batch size")
    p.add_argument("--tag", help="narrow to runs with this tag")
    p.add_argument("--goal", choices=GOALS, default="energy", help="what to optimise (default: energy)")
    p.add_argument("--eta", type=float, default=0.5,
                   help="balanced goal: weight of energy against time, 0 to 1 (Zeus's eta; default 0.5)")
    p.add_argument("--max-power", type=float, metavar="W", help="only settings whose average power is at most W")
    p.add_argument("--min-throughput", type=float, metavar="X", help="only settings with at least X samples/s")
    g = p.add_argument_group("cost goal")
    g.add_argument("--currency", default="USD", type=str.upper,
                   help="currency of --price-kwh and --device-price; the catalog price is converted to it with the "
                        "stored exchange rates (default USD)")
    g.add_argument("--price-kwh", type=float, default=0.15, help="electricity price per kWh (default 0.15)")
    g.add_argument("--pue", type=float, default=1.0, help="facility overhead (default 1.0)")
    g.add_argument("--device-price", type=float, help="device price (default: the catalog's)")
    g.add_argument("--lifetime-years", type=float, default=3.0, help="years of use (default 3)")
    g.add_argument("--utilisation", type=float, default=0.5, help="share of the time in use (default 0.5)")
    p.add_argument("--all", action="store_true", help="list every predicted setting, not only those on the front")
    add_store_arguments(p, db_help, reads=True)
    p.set_defaults(func=cmd_recommend)


def _num(value: float | None, digits: int = 3) -> str:
    return "-" if value is None else f"{value:,.{digits}g}" if abs(value) < 1000 else f"{value:,.0f}"


def cmd_recommend(args: argparse.Namespace) -> int:
    from db import queries
    from decision.money import CostSettings, Rates
    from explorer import power_settings as ps
    from joulebench.errors import PredictionRefusedError, RunConfigError
    from joulebench.text import table
    from tuning import Constraints

    if not 0.0 <= args.eta <= 1.0:
        raise RunConfigError(f"--eta: {args.eta:g} is not between 0 and 1")
    try:
        inputs = CostSettings(currency=args.currency, electricity_per_kwh=args.price_kwh, pue=args.pue,
                              lifetime_years=args.lifetime_years,
                              utilisation=args.utilisation)
    except ValueError as e:
        raise RunConfigError(f"cost inputs: {e}") from e
    store = target(args).open_reading(prepare_file=False)  # a file is created only when missing
    with store:
        loaded = ps.load(store, ps.Selection(args.device, args.workload, args.mode, args.precision, args.batch_size,
                                             args.tag))
        rates = Rates.from_frame(queries.exchange_rates(store))
    price = args.device_price
    if price is None and args.goal == "cost":
        price = ps.catalog_price(loaded, rates, inputs.currency)
    goal = ps.make_goal(args.goal, args.eta, inputs, price)
    rec = ps.recommendation(loaded, goal, Constraints(args.max_power, args.min_throughput))
    profile = rec.profile

    unit = profile.unit_label
    print(f"{profile.device}, {profile.describe()}: {len(profile.points)} setting(s) measured"
          + ("" if profile.unit == "sample" else " (time and energy per run: each run did the same work; the file "
                                                 "does not say how many samples)"))
    for note in profile.left_out:
        print(f"  left out: {note}")
    others = loaded.profiles[1:]
    if others:
        print("  other configurations with power settings (narrow with --mode/--precision/--batch-size): "
              + "; ".join(f"{o.describe()} ({len(o.points)})" for o in others))
    print(f"model: {ps.model_summary(rec)}")
    for refused in rec.not_predicted:
        print(f"  not predicted: {refused}")

    frame = ps.candidates_frame(rec)
    shown = frame if args.all else frame.filter((frame["basis"] == "measured") | frame["on_front"]
                                                | frame["recommended"])
    hidden = frame.height - shown.height
    rows = []
    for r in shown.iter_rows(named=True):
        band = ""
        if r["j_per_unit_low"] is not None:
            band = f"{_num(r['j_per_unit_low'], 4)}-{_num(r['j_per_unit_high'], 4)}"
        rows.append((r["setting"], r["basis"], _num(r["throughput"], 4), _num(r["s_per_unit"], 4),
                     _num(r["avg_power_w"], 4), _num(r["j_per_unit"], 4), band,
                     "yes" if r["on_front"] else "", "<-" if r["recommended"] else "", r["excluded"] or ""))
    time_label, rate_label, energy_label = ps.units_of(profile)
    print("\nmeasured and predicted settings")
    print(table(("setting", "basis", rate_label, time_label, "avg W", energy_label, "band", "Pareto", "best",
                 "constraint broken"), rows))
    if hidden:
        print(f"({hidden} more predicted settings, every 5 W, are not on the front; --all lists them)")
    print("\nPareto front, time vs energy (fastest first): " + ", ".join(p.label for p in rec.front))
    print(f"goal: {goal.describe(rec.max_power_w)}")
    if args.max_power is not None or args.min_throughput is not None:
        print(f"constraints: average power <= {_num(args.max_power)} W, throughput >= "
              f"{_num(args.min_throughput)} {unit}s/s")
    for note in rec.notes:
        print(f"note: {note}")
    print(f"\nrecommendation: {rec.sentence()}")
    if rec.best is None:
        raise PredictionRefusedError(rec.sentence())
    return 0
