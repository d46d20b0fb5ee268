"""What a table row's figures say about each other, for the general reader (`importers.general_table`): the phase
of generation a row or its setup names (its rate the prompt's or the decode's, its time the first token's); a decode
step's latency in a table of generation is the inter-token latency; a stated energy per token is checked against
the row's own power and token rate, and against the energy over all its tokens (the prompt's among them); the count
of all tokens a row gives. Each check says what it left out and why."""

from __future__ import annotations

import re
from typing import Any

from importers.base import Conversion
from importers.table_fields import Field, plain, words_of
from joulebench import units
from joulebench.metrics import ITL, LATENCY

# a decode step's latency statistic -> the inter-token latency's (joulebench.metrics: one definition of each)
_STEP_TO_ITL = {LATENCY.stat(stat).name: ITL.stat(stat).name for stat in ("avg", "p50", "p90", "p95", "p99")}
_STEP_MAX = {LATENCY.max.name} if LATENCY.max is not None else set()
# the figures of text generation: a table holding one is a table of generation (its mode infer)
GENERATION = frozenset({"tokens_per_s", "decode_tokens_per_s", "prompt_tokens_per_s", "j_per_token",
                        "decode_j_per_token", "ttft_avg_ms", "ttft_p50_ms", "tpot_avg_ms", "itl_avg_ms"})


def steps_of_generation(conv: Conversion, header: list[str], columns: dict[int, tuple[Field, units.Unit | None]]
                         ) -> None:
    """A step's latency in a table of generation ('per_step_latency_p50_ms' beside tokens/s) is the time of one decode
    step, which makes one token of each sequence: the inter-token latency (ITL), never a request's or a batch's."""
    keys = {f.key for f, _ in columns.values()}
    if not keys & GENERATION:
        return
    for i, (field, unit) in list(columns.items()):
        if field.key not in _STEP_TO_ITL and field.key not in _STEP_MAX or "step" not in words_of(header[i]):
            continue
        itl = _STEP_TO_ITL.get(field.key)
        if itl is None or itl in keys:
            del columns[i]
            conv.warn(f"{header[i][:80]} left out: a decode step's time, "
                      + ("which no ITL statistic holds" if itl is None else f"{itl} is already given"))
            continue
        columns[i] = (Field(itl, "ms"), unit)
        conv.warn(f"{header[i][:80]} read as {itl}: a decode step's time, one token of each sequence")


def per_token_checked(conv: Conversion, where: str, metrics: dict[str, Any], derived: float) -> str | None:
    """The energy per token where the row gives its power and token rate: the stated figure when it agrees with
    power / rate (within a fifth), else power / rate, the stated one left out and said (0.42 J/token beside 94.6 W
    at 83.8 tokens/s is net of an idle draw, or of another window: not the energy per token)."""
    stated = metrics.get("j_per_token")
    if stated is not None and abs(stated - derived) <= 0.2 * derived:
        return None
    if stated is not None:
        conv.warn(f"{where}: the stated {stated:.4g} J/token left out: its power / its token rate gives "
                  f"{derived:.4g} J/token (a net figure, idle subtracted, or another window)")
    metrics["j_per_token"] = derived
    return "J/token = the average power / the output tokens per second"


def all_tokens(header: list[str], row: list[str]) -> float | None:
    """The row's count of prompt and output tokens together ('total_tokens'), where a column gives it."""
    for i, name in enumerate(header):
        if plain(name).strip().replace(" ", "_") in ("total_tokens", "tokens_total", "num_tokens_total") and i < len(
                row):
            try:
                return units.value_in(row[i], None)
            except units.UnitError:
                return None
    return None


# a row of a long table that states its phase of generation in the mode's column ('phase': prefill, ttft, decode):
# its token rate is that phase's, and its time the phase's time, never the run's window
PHASES = {"prefill": "prefill", "prompt": "prefill", "pp": "prefill", "ttft": "ttft", "first_token": "ttft",
          "decode": "decode", "tg": "decode", "generation_phase": "decode"}
# a setup's own name for its phase, with its token count ('Prompt 512', 'tg128', 'gen 64')
_SETUP_PHASES = {w: p for w, p in PHASES.items() if p in ("prefill", "decode") and "_" not in w} | {
    "generation": "decode", "gen": "decode"}
_PHASE_SETUP = re.compile(rf"(?:^|[\s,])(?P<phase>{'|'.join(_SETUP_PHASES)})[\s_-]*\d+", re.IGNORECASE)


def tag_phases(tag: str | None) -> set[str]:
    """The phases of generation a row's setup names with its token count ('Prompt 512', 'Decode 128', 'pp512',
    'Prompt 512 + Decode 128': both)."""
    return {_SETUP_PHASES[m.group("phase").lower()] for term in (tag or "").split("+")
            if (m := _PHASE_SETUP.search(term)) is not None}


def of_phase(metrics: dict[str, Any], phase: str) -> None:
    """A phase row's figures as that phase's: a token rate is the prompt's (prefill) or the decode rate, a time is
    the time to first token on a ttft row and no window on the others (a prefill or decode time is not stored); a
    prefill row's decode rate is left out."""
    rate = metrics.pop("tokens_per_s", None)
    seconds = metrics.pop("duration_s", None)
    if phase == "prefill":  # a prompt-only row's decode rate is none of its own (a 1000000 placeholder, say)
        metrics.pop("decode_tokens_per_s", None)
    if rate is not None and phase == "prefill":
        metrics.setdefault("prompt_tokens_per_s", rate)
    elif rate is not None and phase == "decode":
        metrics.setdefault("decode_tokens_per_s", rate)
    if seconds is not None and phase == "ttft":
        metrics.setdefault("ttft_avg_ms", seconds * 1000.0)




_COMPONENTS = {"cpu", "gpu", "ram", "dram", "mem", "memory", "soc"}
_COUNTER_ENDS = {"start", "end", "begin", "initial", "final", "before", "after"}


def with_component_sums(conv: Conversion, header: list[str], rows: list[tuple[int, list[str]]],
                        columns: dict[int, tuple[Field, units.Unit | None]], twins: list[tuple[int, int]]
                        ) -> tuple[list[str], list[tuple[int, list[str]]], list[tuple[int, int]]]:
    """A run's energy (or power) given only as its components ('cpu_total_energy_j', 'gpu_total_energy_j'; no
    total): their sum, a column of its own, said (CodeCarbon's convention: the energy is CPU + GPU + RAM). Counter
    readings at the start or end of the run ('start_cpu_energy_j') are no energy and are left out first. Columns of
    one field that are not one component each stay as they were (setups, or left out)."""
    for key in ("energy_j", "avg_power_w"):
        first = next((i for i, (f, _) in columns.items() if f.key == key), None)
        if first is None:
            continue
        group = [first, *(o for f0, o in twins if f0 == first)]
        counters = [i for i in group if words_of(header[i]) & _COUNTER_ENDS]
        group = [i for i in group if i not in counters]
        parts = {i: words_of(header[i]) & _COMPONENTS for i in group}
        totals = [i for i in group if not parts[i]]
        named = [i for i in group if parts[i]]
        if len(totals) == 1 and named and all(len(parts[i]) == 1 for i in named) and len(
                {next(iter(parts[i])) for i in named}) == len(named):
            # 'energy_infer_kwh' beside 'energy_infer_cpu_kwh' and 'energy_infer_gpu_kwh': the total is given
            whole = totals[0]
            columns[whole] = columns.pop(first)
            twins = [(a, b) for a, b in twins if a != first]
            parts_named = ", ".join(header[i][:40] for i in named)
            conv.warn(f"{header[whole][:40]} read as {key} (the whole); its parts {parts_named} left out")
            continue
        if len(group) < 2 or any(len(p) != 1 for p in parts.values()) or len(
                {next(iter(p)) for p in parts.values()}) != len(group):
            continue
        unit = columns[first][1]
        factor = unit.factor if unit is not None else 1.0
        header = [*header, f"{key} ({' + '.join(header[i][:30] for i in group)})"]
        summed = []
        for n, row in rows:
            values = [units.value_in(row[i], None) if i < len(row) else None for i in group]
            total = sum(v for v in values if v is not None) if all(v is not None for v in values) else None
            summed.append((n, [*row, "" if total is None else repr(total * factor)]))
        rows = summed
        columns[len(header) - 1] = (columns[first][0], units.find_unit("J" if key == "energy_j" else "W"))
        for i in group + counters:
            columns.pop(i, None)
        twins = [(a, b) for a, b in twins if a not in group and b not in group + counters]
        conv.warn(f"{key} read as the sum of its parts {', '.join(header[i][:40] for i in group)}"
                  + (f"; {', '.join(header[i][:40] for i in counters)} left out (counter readings at the start or "
                     "end, no energy)" if counters else ""))
    return header, rows, twins


# a row per layer of one network's pass: 'layer', 'module'; an operator's or a node's name ('op', '[node type]') only
# beside each row's share of the pass ('pct', '[%]'): a table of single-operator benchmarks names its ops too
_LAYER_COLUMNS = frozenset({"layer", "layers", "layer_name", "layer name", "module", "module_name"})
_OP_COLUMNS = frozenset({"op", "op_name", "op name", "operator", "operator_name", "op_type", "node", "node_name",
                         "node type", "node_type", "kernel", "kernel_name"})
_SHARE = frozenset({"pct", "%", "percent", "percentage", "share", "cdf%", "time_pct", "pct_time"})
_PROFILE_KEYS = ({"name", "averagems"}, {"name", "timems"})  # trtexec --exportProfile's layer records


def layer_profile(header: list[str], rows: list[tuple[int, list[str]]]) -> str | None:
    """The column naming a layer or operator a row each (a per-layer profile: every row one part of one pass, never
    a run of its own); None for a table of runs. Five distinct names at least: a table of three stages is a table."""
    plain_names = [plain(h).strip(" []") for h in header]
    keys = {h.replace(" ", "").replace("_", "") for h in plain_names}
    shares = bool(set(plain_names) & _SHARE)
    for i, name in enumerate(plain_names):
        profile = name == "name" and any(k <= keys for k in _PROFILE_KEYS)
        if name in _LAYER_COLUMNS or profile or (name in _OP_COLUMNS and shares):
            named = {row[i].strip() for _, row in rows[:2000] if i < len(row) and row[i].strip()}
            if len(named) >= 5:
                return header[i]
    return None
