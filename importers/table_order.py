"""How the general reader (`importers.general_table`) orders and groups a table's figure columns: of several columns
of one field, the total or the measured window is read first and each GPU's rate last (`total_first`); columns that
are statistics of one figure over requests, not one figure of the run (`distributions_of`); the columns left out,
grouped by why, for a warning (`grouped_reasons`)."""

from __future__ import annotations

import re

from importers.table_fields import WINDOW_WORDS, FieldError, measure_field, per_gpu, words_of
from importers.table_labels import label_field
from importers.table_rows import backends_only

_STAT_WORD = re.compile(r"(?i)(?:^|(?<=[_\s.-]))(?:mean|avg|average|median|p50|p90|p95|p99|p999|std|stdev|min|max)"
                        r"(?=$|[_\s.-])")
_TAIL = re.compile(r"(?i)(?:^|(?<=[_\s.-]))p9\d{1,2}(?=$|[_\s.-])")


# a column counting the repeats a row aggregates ('iterations': 5): its statistics are over repeats, not requests
_REPEAT_COUNTS = frozenset({"iterations", "num_iterations", "n_iterations", "successful_runs", "runs", "num_runs",
                            "n_runs", "repeats", "num_repeats", "n_repeats", "repetitions", "trials", "num_trials",
                            "n_trials"})


def distributions_of(header: list[str]) -> set[int]:
    """The columns of a figure the table also gives a tail percentile of ('tps_mean' beside 'tps_p99'), or both a
    mean and a median of ('tokens_per_s_mean' beside '_median'): statistics over requests, not one figure of the
    whole run (a table aggregated over repeats gives a mean with its spread, not a median). A table with a column
    counting the repeats each row aggregates ('iterations', 'successful_runs') states its statistics over those
    repeats: none of its columns is one."""
    if any(re.sub(r"[\s.-]+", "_", name.strip().lower()) in _REPEAT_COUNTS for name in header[:1_000]):
        return set()
    groups: dict[str, list[int]] = {}
    for i, name in enumerate(header[:1_000]):
        if _STAT_WORD.search(name):
            base = re.sub(r"[_\s.-]+", "_", _STAT_WORD.sub("", name)).strip("_ .-").lower()
            groups.setdefault(base, []).append(i)
    return {i for members in groups.values() if len(members) > 1 and (
        any(_TAIL.search(header[j]) for j in members) or {_stat_of(header[j]) for j in members} >= {"avg", "p50"})
        for i in members}


def _stat_of(name: str) -> str | None:
    found = _STAT_WORD.search(name)
    word = found.group().lower() if found else ""
    return "avg" if word in ("mean", "avg") else "p50" if word in ("median", "p50") else None


def total_first(header: list[str]) -> list[int]:
    """The column indices in order, except that a column named the total ('total_watts', 'Total Energy (J)') comes
    before the other columns of its field ('n1_watts'), and a duration named the measured window ('steady_ms')
    before the wall time around it: of several, it is the one read."""
    keys: dict[int, str] = {}
    for i, name in enumerate(header[:1_000]):
        try:
            found = measure_field(name)[0]
        except FieldError:
            continue
        if found is not None:
            keys[i] = found.key
    first = [i for i, key in keys.items() if list(keys.values()).count(key) > 1 and (
        words_of(header[i]) & WINDOW_WORDS if key == "duration_s" else "total" in words_of(header[i]))]
    last = [i for i in keys if i not in first and per_gpu(header[i].lower(), words_of(header[i]))]  # the system's
    return first + [i for i in range(len(header)) if i not in first and i not in last] + last  # rate is read first


def gpu_device_first(order: list[int], header: list[str], rows: list[tuple[int, list[str]]]) -> list[int]:
    """`order` with a device column naming the GPU ('hardware_gpu') before the device columns that name a machine
    ('hardware_model': a Beelink GTi15) rather than where the code ran ('cuda', 'cpu'): of several, it is read."""
    devices = [i for i in order if (label := label_field(header[i])) is not None and label.key == "device"]
    gpu = next((i for i in devices if words_of(header[i]) & {"gpu", "gpus"}), None)
    machines = [i for i in devices[:devices.index(gpu)] if not backends_only([r[i] for _, r in rows if i < len(r)])
                ] if gpu is not None else []
    return [gpu, *(i for i in order if i != gpu)] if gpu is not None and machines else order


def grouped_reasons(left: list[tuple[str, str]]) -> str:
    """The columns left out, grouped by why, for a warning: 'gflops, memory_bandwidth (no unit in its name or
    cells); efficiency_percent (a percentage ...)'."""
    reasons: dict[str, list[str]] = {}
    for name, why in left:
        reasons.setdefault(why, []).append(name)
    return "; ".join(f"{', '.join(names[:10])}{' ...' if len(names) > 10 else ''} ({why})"
                     for why, names in reasons.items())[:600] or "none"
