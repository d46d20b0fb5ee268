"""`joulebench decide`: the Decide page's answer on the command line, from the same inputs (flags) and the
same decision model (decision.answer), printed as sentences and tables or written as JSON."""

from __future__ import annotations

import argparse
import json
import sys
from typing import Any

from ingest.stores import add_store_arguments, target

DESCRIPTION = (
    "Which of 2 to 6 candidate devices to buy for a job, and why: the Decide page's answer, from the same inputs. "
    "Every figure says its basis (measured here, imported, reference table, stated ratio, estimate) and where it "
    "comes from; the cost per 1M samples carries the duty cycle at your utilisation; with --mode infer, the "
    "energy per output token at your latency target too. Reads the store read-only.")
# the flag that sets each input DecideInputs.problems names
FLAGS = {"devices": "--device", "scope": "--job", "precision": "--precision", "seq": "--seq"}


def add_subcommand(sub: Any, db_help: str) -> None:
    from decision.money import CostSettings
    from tuning.goals import GOALS

    d = CostSettings()
    p = sub.add_parser("decide", help="which device to buy for a job, and why (the Decide page's answer)",
                       description=DESCRIPTION)
    p.add_argument("--device", action="append", default=[], metavar="NAME", required=True,
                   help="a candidate device as stored, e.g. 'Tesla V100' (give 2 to 6, one flag each)")
    p.add_argument("--mode", choices=("train", "infer"), default="train", help="the job: train or infer "
                                                                               "(default: train)")
    p.add_argument("--job", default="auto", metavar="SCOPE",
                   help="'model:NAME' (a model size class, any task), 'workload:NAME', or 'auto': the model class "
                        "with rows for the most candidates (default)")
    p.add_argument("--precision", default="any", help="one precision, e.g. fp16 (default: any)")
    p.add_argument("--seq", default="any", metavar="TOKENS",
                   help="compare every device at this input size (sequence length); default any: each figure is "
                        "the device's best at whichever size gave it")
    p.add_argument("--best", action="store_true",
                   help="take each device at its best power setting for --goal (measured or predicted)")
    p.add_argument("--goal", choices=GOALS, default="energy", help="the goal of --best (default: energy)")
    g = p.add_argument_group("your numbers (cost)")
    g.add_argument("--currency", default=d.currency, type=str.upper,
                   help=f"every amount in this currency; catalog prices are converted (default {d.currency})")
    g.add_argument("--price-kwh", type=float, default=d.electricity_per_kwh,
                   help=f"electricity price per kWh (default {d.electricity_per_kwh:g})")
    g.add_argument("--pue", type=float, default=d.pue, help=f"facility overhead, 1 = none (default {d.pue:g})")
    g.add_argument("--lifetime-years", type=float, default=d.lifetime_years,
                   help=f"years of use (default {d.lifetime_years:g})")
    g.add_argument("--utilisation", type=float, default=d.utilisation,
                   help=f"share of the time busy, 0.01 to 1 (default {d.utilisation:g})")
    c = p.add_argument_group("constraints (none by default)")
    c.add_argument("--budget", type=float, help="price per device at most, in --currency")
    c.add_argument("--max-power", type=float, metavar="W", help="power while running at most W")
    c.add_argument("--min-memory", type=float, metavar="GB", help="memory at least GB")
    c.add_argument("--max-p99", type=float, metavar="MS", help="p99 latency per batch at most MS")
    t = p.add_argument_group("energy per token at a latency target (--mode infer)")
    t.add_argument("--shape", help="model and lengths compared like for like, as listed (default: the one with "
                                   "the most candidates)")
    t.add_argument("--tpot-p90", type=float, metavar="MS", help="time per output token p90 at most MS")
    t.add_argument("--itl-p90", type=float, metavar="MS",
                   help="inter-token latency p90 at most MS (every gap between tokens; not TPOT)")
    t.add_argument("--ttft-p90", type=float, metavar="MS", help="time to first token p90 at most MS")
    t.add_argument("--slo", metavar="LIMITS",
                   help="goodput under your limits, recomputed from each serving point's stored requests: e.g. "
                        "'ttft<=500ms,tpot_p90<=50ms,itl<=40ms,e2e<=2s' (ttft, itl, tpot, e2e; each request held to "
                        "every limit; _p50/_p90/_p95/_p99 also says whether the limit held at that percentile)")
    p.add_argument("--json", action="store_true", help="write the answer as JSON instead of sentences and tables")
    add_store_arguments(p, db_help, reads=True)
    p.set_defaults(func=cmd_decide)


def _positive(value: float | None, flag: str) -> float | None:
    """A constraint or limit: None when not given; a number above 0 when given."""
    from joulebench.errors import RunConfigError

    if value is not None and not value > 0:
        raise RunConfigError(f"{flag}: {value:g} is not above 0 (leave the flag out for no limit)")
    return value


def inputs_of(args: argparse.Namespace) -> Any:
    """DecideInputs from the flags; RunConfigError naming the flag for a value outside its range."""
    from decision.cost import Constraints
    from decision.inputs import DecideInputs
    from decision.money import CostSettings
    from decision.scope import MAX_DEVICES
    from decision.token_target import Target
    from joulebench.errors import RunConfigError

    devices = tuple(dict.fromkeys(args.device))
    if not 2 <= len(devices) <= MAX_DEVICES:
        raise RunConfigError(f"--device: give 2 to {MAX_DEVICES} different candidate devices (got {len(devices)})")
    flags = {"electricity_per_kwh": "--price-kwh", "pue": "--pue", "lifetime_years": "--lifetime-years",
             "utilisation": "--utilisation"}
    try:
        settings = CostSettings(args.currency, args.price_kwh, args.pue, args.lifetime_years, args.utilisation)
    except ValueError as e:
        name = str(e).split(" ", 1)[0]
        raise RunConfigError(f"{flags.get(name, name)}: {e}") from e
    if not (len(args.currency) == 3 and args.currency.isalpha()):
        raise RunConfigError(f"--currency: {args.currency!r} is not a currency code (three letters, e.g. USD)")
    constraints = Constraints(_positive(args.max_power, "--max-power"), _positive(args.min_memory, "--min-memory"),
                              _positive(args.max_p99, "--max-p99"), _positive(args.budget, "--budget"))
    target = Target(_positive(args.tpot_p90, "--tpot-p90"), _positive(args.ttft_p90, "--ttft-p90"),
                    _positive(args.itl_p90, "--itl-p90"))
    given = [f for f, v in (("--shape", args.shape), ("--tpot-p90", args.tpot_p90), ("--itl-p90", args.itl_p90),
                            ("--ttft-p90", args.ttft_p90)) if v is not None]
    if given and args.mode != "infer":
        raise RunConfigError(f"{', '.join(given)}: the energy per token is asked for inference; add --mode infer")
    try:
        return DecideInputs(devices, args.mode, args.job, args.precision, args.seq, args.best, args.goal, settings,
                            constraints, args.shape, target)
    except ValueError as e:
        flag = {"job": "--job", "input": "--seq"}.get(str(e).split(" ", 1)[0], "decide")
        raise RunConfigError(f"{flag}: {e}") from e


def best_settings(store: Any, asked: Any, job: Any, runs: Any) -> Any:
    """The best power settings the page reads for --best (explorer.data.best_settings: the same call per
    (device, workload), eta 0.5, the power cap constraint)."""
    import polars as pl

    from decision.best_settings import profile_workloads
    from explorer import power_settings
    from tuning import Constraints

    frames = []
    for device, workload in profile_workloads(runs, asked.devices, job).items():
        if workload:
            frame = power_settings.best_settings(store, [device], workload, asked.goal, eta=0.5, inputs=asked.settings,
                                                 constraints=Constraints(asked.constraints.max_power_w),
                                                 mode=asked.mode, precision=job.precision)
            frames.append(frame.with_columns(pl.lit(workload).alias("workload")))
    return pl.concat(frames, how="diagonal_relaxed") if frames else pl.DataFrame()


def slo_of(args: argparse.Namespace) -> Any:
    """The --slo limits (decision.goodput.Slo; None without the flag); RunConfigError naming the flag."""
    from decision.goodput import SloError, parse_slo
    from joulebench.errors import RunConfigError

    if args.slo is None:
        return None
    if args.mode != "infer":
        raise RunConfigError("--slo: goodput is asked of serving points (inference); add --mode infer")
    try:
        return parse_slo(args.slo)
    except SloError as e:
        raise RunConfigError(f"--slo: {e}") from e


def cmd_decide(args: argparse.Namespace) -> int:
    from dataclasses import replace

    import polars as pl

    import db.requests as db_requests
    from db import serving
    from decision import answer, goodput, token_target
    from joulebench.errors import RunConfigError

    asked = inputs_of(args)
    slo = slo_of(args)
    found = None
    with target(args).open_reading(prepare_file=False) as store:  # a file is created only when missing
        data = answer.DecideData.read(store)
        if data.configurations is not None:  # how each configuration's token figures were measured (like for like)
            data = replace(data, configurations=token_target.with_serving(data.configurations,
                                                                           serving.serving_configs(store)))
        problems = asked.problems(data.runs, data.catalog)
        if problems:
            raise RunConfigError("; ".join(f"{FLAGS[name]} {text}" for name, text in problems))
        if asked.best:
            data = replace(data, best=best_settings(store, asked, asked.job(data.runs), data.runs))
        if slo is not None:  # the Decide page's section: the candidates' inference runs
            runs = data.runs.filter(pl.col("device_name").is_in(list(asked.devices)) & (pl.col("mode") == "infer"))
            found = goodput.answer(runs, db_requests.slo_frame(store), slo)
    try:
        decided = answer.answer(asked, data)
    except ValueError as e:  # a --shape the candidates have no runs of
        raise RunConfigError(f"--shape: {e}") from e
    if args.json:
        out = decided.to_dict()
        if found is not None:
            out["goodput"] = found.to_dict()
        json.dump(out, sys.stdout, indent=2, default=str)
        print()
    else:
        print_decision(decided)
        if found is not None:
            print_goodput(found)
    return 0


def print_goodput(found: Any) -> None:
    """The goodput table as the page gives it, the points without requests counted."""
    from decision.goodput import BASIS_REQUESTS
    from decision.text import sig
    from joulebench.text import table

    print(f"\nGoodput under your limits: {found.slo.label()}")
    print(f"{found.counted} serving points counted from their stored requests, {found.without_requests} without "
          "requests (not known unless a stored goodput was measured under these same limits)")
    rows = found.table().filter(found.points["known"].fill_null(False)
                                | (found.points["basis"] == BASIS_REQUESTS)).drop("Basis")
    if rows.height:
        print(table(rows.columns, [[sig(v, 3, missing="not known") if isinstance(v, float) else
                                    ("" if v is None else v) for v in row] for row in rows.rows()]))


def _lines(lines: list[str]) -> None:
    from decision.markdown import plain
    from joulebench.text import shown

    for line in lines:
        print(shown(plain(line), max_chars=100_000))


def print_decision(decided: Any) -> None:
    """The answer as the page gives it: sentences, then the costs, every figure with its basis, what is
    missing, and the per-token answer."""
    from decision import inputs, tables
    from joulebench.text import table

    print(f"The answer for {decided.job.describe()}")
    print(inputs.ANSWER_CAPTION)
    print()
    _lines([f"Best power setting for {decided.inputs.goal}: {line}" for line in decided.at_best] + decided.stays)
    _lines(decided.sentences)
    if decided.grade_warning:
        _lines([decided.grade_warning])
    figures = decided.figure_table
    print("\nEvery figure, with its basis (--json has each figure's source or derivation)")
    shown_columns = [c for c in figures.columns if c != "Source or derivation"]
    print(table(shown_columns, figures.select(shown_columns).rows()))
    print("\nCost per 1M samples: electricity + hardware, each with its numbers")
    _lines(tables.cost_workings(decided.answer))
    if decided.answer.gaps:
        print("\nWhat the data cannot answer yet")
        for gap in decided.answer.gaps:
            how = {"run": "measure it (joulebench run, or the New run page)",
                   "devices": "enter a price (Devices page)"}.get(gap.fill, "upload a file that holds it")
            _lines([f"{gap.device}: {gap.what}; {how}"])
    tokens = decided.tokens
    if tokens is not None:
        print("\nEnergy per token at your latency target")
        if tokens.shape is None:
            print("None of these devices has generation runs with energy per token.")
            return
        print(f"model and lengths: {tokens.shape} (others: {'; '.join(tokens.shapes[1:]) or 'none'})")
        _lines(tokens.sentences)
        print(table(tokens.table.columns, tokens.table.rows()))
        if tokens.left_out:
            print("\nLeft out of this comparison (not like for like)")
            _lines(tokens.left_out)
