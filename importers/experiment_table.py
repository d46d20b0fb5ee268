"""Home-grown per-experiment result tables (CSV or TSV): one row per run, with columns such as
`model`, `gpu_model`, `duration_s` / `training_time_s`, `energy_total_j` / `*_energy_wh` / `*_kwh`,
`avg_power_w`, `throughput_inf_s`, `tokens_per_second`, `p95_ms`.

Numbers are read only from columns whose name states the unit (a suffix `_s`, `_ms`, `_j`, `_wh`,
`_kwh`, `_w`, `_watts`, `_fps`, `tokens_per_second`), because such tables do not agree on units:
one project writes `PWR_IN_AVG` in mW for a Jetson and in W for an RTX 3070. A table with energy or
power columns but no stated unit is refused with that reason.

Energy: a total column when there is one; else the sum of component columns of one kind
(`cpu_*`, `gpu_*`, `ram_*` energies: CodeCarbon's convention, energy_consumed = cpu + gpu + ram);
else average power x duration. Where it was measured is not stated by such tables unless only a
GPU's energy or power is given (`gpu_board`); otherwise the boundary is left for --boundary to fill.
A per-item energy column that is 0 in a row is a broken figure and is left out, never stored as 0.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import (
    COLUMN_UNITS,
    Conversion,
    Importer,
    Source,
    check_run_count,
    clean_str,
    energy_metrics,
    num,
    pos_int,
    positive,
    read_csv,
)
from importers.table_fields import SET_ON, Field, FieldError, measure_field, setting_field, words_of
from importers.table_identities import head_proves_units
from importers.table_long import head_rows
from importers.table_rows import Columns, cell, telling_columns, telling_said
from importers.table_units import canonical_header, scaled_rows, with_header_units
from joulebench import units

ENERGY_UNITS = {u: units.unit(u).factor for u in ("j", "joules", "wh", "kwh", "mj")}  # a column name's unit suffix
DEVICE_COLUMNS = ("gpu_model", "gpu_name", "device", "device_name", "gpu", "accelerator", "dispositivo", "hardware",
                  "geraet", "gerät")
MODEL_COLUMNS = ("model", "model_name", "models", "network", "arch", "modelo", "modell", "modèle", "modello")
_SECONDS = r"(?:_s|_sec|_secs|_seconds)"
DURATION = re.compile(r"^(?:duration|(?:duration|runtime|elapsed|elapsed_time|time_elapsed|wall_time|time_taken"
                      r"|monitoring_duration|(?:mean_)?(?:training|generation|inference|total|run)_time|time)"
                      + _SECONDS + r"|measure_seconds_actual|duration_(?:generate|generation|inference|training))$")
_WHOLE_BOX = r"(?:_(?:system|sys|node|board|device|wall))?"  # 'total_energy_system_j': where it was measured
_PHASE_OF = r"(?:_(?:infer|inference|train|training|run|eval))?"  # 'energy_infer_kwh': the phase measured
ENERGY_TOTAL = re.compile(r"^(?:total_energy|energy_total|energy|energy_consumed|total_energy_consumed)" + _PHASE_OF
                          + _WHOLE_BOX + r"_(j|wh|kwh|mj)$")
ENERGY_PART = re.compile(r"^(?:(cpu|gpu|ram|dram|mem)_energy(?:_hw)?|energy" + _PHASE_OF
                         + r"_(cpu|gpu|ram|dram|mem))_(j|wh|kwh|mj)$")
ENERGY_PER = re.compile(r"^energy_per_(inf|inference|sample|image|token|request|query|run)_(j|wh|kwh|mj)$")
POWER = re.compile(r"^(?:avg_power(?:_system|_sys|_node|_board|_wall)?_w|mean_power_w|power_avg_w|average_power_w"
                   r"|power_draw_watts_mean|power_w"
                   r"|mean_(gpu)_power_w_avg|(gpu)_power_w_avg|avg_(gpu)_power_w)$")
UNITLESS_POWER = re.compile(r"(?i)^(pwr|power|energy|latency)[_a-z]*$|_(pwr|power|energy|latency)(_[a-z]+)?$")
UNIT_TOKENS = {"w", "mw", "watts", "j", "wh", "kwh", "mj", "kg", "g", "pct", "percent", "ratio", "score", "var", "va",
               "available", "enabled", "efficiency", "mode", "s", "ms", "us", "ns", "sec", "seconds"}
PHASE_TIME = re.compile(r"^(?:mean_)?(training|generation|inference)_time" + _SECONDS
                        + r"$|^duration_(generate|generation|inference|training)$")
# a count of the output's frames: beside it, a bare 'fps' is the output video's playback rate
OUTPUT_FRAMES = ("num_frames", "n_frames", "frames", "frame_count", "num_output_frames", "video_frames")
LATENCY = {"median_ms": "latency_p50_ms", "mean_ms": "latency_avg_ms", "p50_ms": "latency_p50_ms",
           "p90_ms": "latency_p90_ms", "p95_ms": "latency_p95_ms", "p99_ms": "latency_p99_ms",
           "inference_latency_ms": "latency_avg_ms", "latency_ms": "latency_avg_ms",
           "tpot_ms": "tpot_avg_ms", "ttft_ms": "ttft_avg_ms", "itl_ms": "itl_avg_ms"}
THROUGHPUT = {"throughput_inf_s": ("throughput_sps", "sample"), "inference_throughput_fps": ("throughput_sps", "frame"),
              "fps": ("throughput_sps", "frame"), "samples_per_second": ("throughput_sps", "sample"),
              "throughput_sps": ("throughput_sps", "sample"),
              "samples_per_s": ("throughput_sps", "sample"), "images_per_second": ("throughput_sps", "image"),
              "tokens_per_second": ("tokens_per_s", None), "tokens_per_second_mean": ("tokens_per_s", None),
              "mean_tokens_per_second": ("tokens_per_s", None), "tokens_per_s": ("tokens_per_s", None),
              "throughput_tokens_per_second": ("tokens_per_s", None)}


_COUNTS = {"samples", "count", "n", "num", "readings"}  # 'power_samples': how many readings, not a power


def _unit_of(column: str) -> str | None:
    """The unit a recognised column's name states (`energy_total_j`: J, `duration`: s), for cells carrying one."""
    found = units.header_unit(column)[1]
    if found is not None:
        return found.symbol if found.kind != "item_rate" else "items/s"
    return "s" if DURATION.match(column) else None


# fields the general reader (importers.general_table) reads and this one does not
_GENERAL_ONLY = re.compile(r"^(?:decode_tokens_per_s|prompt_tokens_per_s|decode_j_per_token|requests_per_s"
                           r"|j_per_request|(?:ttft|tpot|itl|e2e_latency)_p\d\d_ms|output_tokens)$")


def _for_the_general_reader(header: list[str]) -> bool:
    """A column whose unit contradicts its name ('Energy per Token (W)', which the general reader refuses by
    name), one only the general reader reads (decode_tps, a TTFT percentile), or a setting it keeps in the tag."""
    for name in header:
        if words_of(name) & SET_ON or setting_field(name) is not None:  # a setting with a unit ('clock_target_mhz',
            return True  # 'pl_w'): the general reader reads it, or tags it
        try:
            field = measure_field(name)[0]
        except FieldError:
            return True
        if field is not None and (_GENERAL_ONLY.match(field.key) or field.key in ("tokens_per_s", "throughput_sps")
                                  and name.strip().lower() not in THROUGHPUT):  # 'tok_s_avg': a rate this reader
            return True  # does not know by name, which the general reader reads by its unit
    return False


_SETUP_NAMES = ("name", "variant", "config", "configuration", "setup", "method", "strategy")  # a row's setup, tagged


def _columns(header: list[str]) -> dict[str, str]:
    return {h.strip().lower(): h for h in header}


def _recognised(cols: dict[str, str]) -> dict[str, list[str]]:
    kinds: dict[str, list[str]] = {"duration": [], "energy": [], "part": [], "per": [], "power": [], "rate": [],
                                   "latency": [], "unitless": []}
    for low in cols:
        if DURATION.match(low):
            kinds["duration"].append(low)
        elif ENERGY_TOTAL.match(low):
            kinds["energy"].append(low)
        elif ENERGY_PART.match(low):
            kinds["part"].append(low)
        elif ENERGY_PER.match(low):
            kinds["per"].append(low)
        elif POWER.match(low):
            kinds["power"].append(low)
        elif low in THROUGHPUT:
            kinds["rate"].append(low)
        elif low in LATENCY:
            kinds["latency"].append(low)
        elif UNITLESS_POWER.search(low) and not (set(low.split("_")) & (UNIT_TOKENS | _COUNTS)) and not re.match(
                r"(?:has|is|with|use|uses)_", low):  # 'has_power': a flag, not a power without its unit
            kinds["unitless"].append(low)
    kinds["power"].sort(key=lambda c: "gpu" in c)  # the whole device's average before the GPU's part
    return kinds


_TOTAL_WORDS = {"in", "input", "total", "tot", "sys", "system", "board", "wall", "node"}


def _unit_name(column: str, quantity: str) -> str | None:
    """The recognised column name a user-united column stands for (values converted to J, W or s),
    or None when it is not one JouleBench stores (a peak power, one CPU's part of the power)."""
    low = column.strip().lower()
    words = set(re.split(r"[^a-z0-9]+", low))
    if quantity == "time":
        return "latency_ms" if "latency" in words or "latency" in low else "duration_s"
    part = next((w for w in ("gpu", "cpu", "ram") if w in words), None)
    if quantity == "energy":
        if "per" in words:
            return "energy_per_sample_j"
        return f"{part}_energy_j" if part else "energy_total_j"
    if words & {"max", "peak", "min"}:
        return None
    if words & _TOTAL_WORDS or not part:
        return "avg_power_w"
    return "gpu_power_w_avg" if part == "gpu" else None


def _with_user_units(conv: Conversion, header: list[str], rows: list[tuple[int, list[str]]]
                     ) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """Columns the user gave a unit (--unit COLUMN=UNIT) renamed to the recognised name of their
    quantity, their values converted to J, W or s; each step said in a warning."""
    if not conv.hints.units:
        return header, rows
    names = [h.strip().lower() for h in header]
    header, taken = list(header), set(names)
    scales: dict[int, float] = {}
    for column, unit in conv.hints.units:
        if column.strip().lower() not in names:
            raise conv.fail(f"--unit {column}", f"no such column; the file's columns are {', '.join(header)[:300]}")
        i = names.index(column.strip().lower())
        quantity, factor = COLUMN_UNITS[unit]
        target = _unit_name(column, quantity)
        if target is None or target in taken:
            why = "already given by another column" if target else "not a figure JouleBench stores"
            conv.warn(f"{column} ({unit}, as you stated) is left out: {why}")
            header[i] = f"{header[i]} (left out)"
            continue
        taken.add(target)
        scales[i] = factor * (1e3 if target.endswith("_ms") else 1.0)
        header[i] = target
        conv.warn(f"{column} read in {unit}, as you stated (--unit), and stored as {target}")
    return header, scaled_rows(rows, scales)


LONG_COLUMNS = {"metric", "value", "unit"}
_LONG_KINDS = {"energy": "energy", "power": "power", "time": "time", "token_rate": "tokens", "item_rate": "samples"}


def _from_long(conv: Conversion, header: list[str], rows: list[tuple[int, list[str]]]
               ) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """A long-format summary (`metric,[gpu_index,]value,unit`, one figure per row) as one run's row:
    energies and average powers summed over the GPUs, the longest duration, per its stated unit."""
    cols = _columns(header)
    index = {name: header.index(cols[name]) for name in cols}
    gpu_col = next((c for c in ("gpu_index", "gpu", "device_index", "gpu_id") if c in cols), None)
    sums: dict[str, float] = {}
    gpus: set[str] = set()
    skipped: list[str] = []
    first_line = rows[0][0] if rows else 2
    for lineno, row in rows:
        def cell_of(name: str, row: list[str] = row) -> str:
            return row[index[name]].strip() if index[name] < len(row) else ""

        metric, unit = cell_of("metric").lower(), cell_of("unit").lower()
        value = num(cell_of("value"), f"line {lineno}: value", conv)
        kind, factor = units.factor_of(unit, tuple(_LONG_KINDS)) or ("", 1.0)
        quantity = _LONG_KINDS.get(kind)
        words = set(re.split(r"[^a-z0-9]+", metric))
        if value is None or quantity is None or words & {"max", "min", "peak", "std", "stdev", "per"}:
            skipped.append(cell_of("metric")[:40])
            continue
        if gpu_col:
            gpus.add(cell_of(gpu_col))
        if quantity == "time":
            target = "latency_ms" if "latency" in words else "duration_s"
            v = value * factor * (1e3 if target == "latency_ms" else 1.0)
            sums[target] = max(sums.get(target, 0.0), v) if target == "duration_s" else v
        else:
            target = {"energy": "energy_total_j", "power": "avg_power_w", "tokens": "tokens_per_second",
                      "samples": "samples_per_second"}[quantity]
            sums[target] = sums.get(target, 0.0) + value * factor
    if skipped:
        conv.warn(f"rows left out (a spread, a peak, a per-item figure or a unit not read): {', '.join(skipped[:8])}")
    if len(gpus) > 1:
        conv.warn(f"energy and power summed over {len(gpus)} GPUs ({', '.join(sorted(gpus)[:8])}); the longest "
                  "duration is the run's")
    names = list(sums)
    return names, [(first_line, [repr(sums[n]) for n in names])]


def _delimiter(head: str) -> str:
    first = head.split("\n", 1)[0]
    return "\t" if first.count("\t") > first.count(",") else ","


class ExperimentTableImporter(Importer):
    NAME = "experiment-table"
    TOOL = "per-experiment table"
    DESCRIPTION = ("a per-experiment CSV/TSV of runs with unit-named columns (duration_s, energy_total_j, *_wh, "
                   "*_kwh, avg_power_w, tokens_per_second, ...)")

    def sniff(self, source: Source) -> bool:
        head = source.head
        if not head or head.lstrip()[:1] in ("{", "["):
            return False
        first = head.split("\n", 1)[0]
        raw = [c.strip().strip('"') for c in first.split(_delimiter(head))]
        cols = _columns(canonical_header(raw))
        if LONG_COLUMNS <= set(cols):  # a per-GPU summary of figures; a long table of several runs, or of labels
            # ('device,CUDA - NVIDIA GB10,') beside its figures, is the general reader's
            value = raw.index(cols["value"]) if cols["value"] in raw else -1
            texts = any(num(row[value]) is None for row in head_rows(head, _delimiter(head))[1:]
                        if 0 <= value < len(row) and row[value].strip())
            return not texts and not set(cols) - LONG_COLUMNS - {"gpu_index", "gpu", "device_index", "gpu_id"}
        if len(cols) < 3 or _for_the_general_reader(raw) or head_proves_units(head, _delimiter(head)):
            return False  # decode/prefill rates, percentiles, a unit against its name, units the rows prove:
            # importers.general_table's
        kinds = _recognised(cols)
        measures = kinds["energy"] or kinds["part"] or kinds["per"] or kinds["power"] or kinds["unitless"]
        return bool(measures) and bool(kinds["duration"] or kinds["rate"] or kinds["latency"]
                                       or any(c in cols for c in (*MODEL_COLUMNS, *DEVICE_COLUMNS, "run", "tag")))

    def convert(self, conv: Conversion) -> dict[str, Any]:
        header, rows = read_csv(conv, conv.source.text or "", delimiter=_delimiter(conv.source.head))
        check_run_count(conv, len(rows), "its rows")
        if LONG_COLUMNS <= set(_columns(header)):
            header, rows = _from_long(conv, header, rows)
        header, rows = _with_user_units(conv, header, rows)
        header, rows = with_header_units(conv, header, rows)
        header, rows = _with_named_units(conv, header, rows)
        cols = _columns(header)
        kinds = _recognised(cols)
        usable = (kinds["energy"] or kinds["part"] or kinds["per"] or kinds["power"] or kinds["rate"]
                  or kinds["latency"] or kinds["duration"])
        if kinds["unitless"]:
            unitless = [cols[c] for c in kinds["unitless"]]
            fix = (f"pass --unit {unitless[0]}=<unit> (one of {', '.join(COLUMN_UNITS)}) for each, or in Upload "
                   f"under 'Units of columns'")
            if not usable:
                raise conv.fail("line 1", f"the columns {', '.join(unitless)} do not state their unit (tables like "
                                "this write mW for a Jetson and W for a GPU under one name), so no figure can be "
                                f"read: {fix}")
            conv.warn(f"columns without a stated unit left out: {', '.join(unitless)}; to read them, {fix}")
        if not rows:
            raise conv.fail("line 2", "no rows after the header")
        runs = [self._run(conv, i, lineno, header, row, cols, kinds) for i, (lineno, row) in enumerate(rows)]
        _tag_telling(conv, header, rows, kinds, runs)
        return conv.document(runs)

    def _run(self, conv: Conversion, i: int, lineno: int, header: list[str], row: list[str], cols: dict[str, str],
             kinds: dict[str, list[str]]) -> dict[str, Any]:
        values = {h.strip().lower(): (row[j].strip() if j < len(row) else "") for j, h in enumerate(header)}

        def val(low: str) -> float | None:  # a cell may carry the unit its column's name states ('2.1 s')
            return num(values.get(low), f"line {lineno}: {cols[low]}", conv, unit=_unit_of(low))

        where = f"line {lineno}"
        device_col = next((c for c in DEVICE_COLUMNS if c in cols and values.get(c)), None)
        device = conv.device(clean_str(values.get(device_col)) if device_col else None,
                             where=f"{where}: {cols[device_col] if device_col else 'gpu_model (no device column)'}")
        model = next((clean_str(values.get(c)) for c in MODEL_COLUMNS if c in cols and values.get(c)), None)
        metrics: dict[str, Any] = {}
        flags: list[str] = []
        notes: list[str] = []
        duration_col = kinds["duration"][0] if kinds["duration"] else None
        duration = positive(val(duration_col)) if duration_col else None
        if duration_col and "monitoring" in duration_col:
            notes.append(f"{cols[duration_col]} is the power-monitoring window")
        metrics["duration_s"] = duration
        phase = PHASE_TIME.match(duration_col or "")
        # a phase's time (the fit, the generation) need not be the window the energy was measured over
        window = None if phase else duration
        frames_col = next((c for c in OUTPUT_FRAMES if c in cols), None)
        for low in kinds["rate"]:
            field, unit = THROUGHPUT[low]
            if low == "fps" and frames_col:
                notes.append(f"{cols[low]} is the output video's frame rate (the table counts its frames in "
                             f"{cols[frames_col]}), not a throughput")
                continue
            v = positive(val(low))
            if v is not None:
                metrics[field] = v
                if unit:
                    metrics["sample_unit"] = unit
        frames = positive(val(frames_col)) if frames_col else None
        if frames and duration and "throughput_sps" not in metrics:
            metrics.update(throughput_sps=frames / duration, sample_unit="frame", examples=pos_int(frames),
                           throughput_derivation=f"{cols[frames_col or '']} / {cols[duration_col or '']}")
        for low in kinds["latency"]:
            v = positive(val(low))  # a latency of 0 is a figure not taken ('io_latency_ms' with no delay set)
            if v is not None:
                metrics.setdefault(LATENCY[low], v)
        energy, boundary, how = self._energy(conv, val, kinds, duration, notes)
        power_col = kinds["power"][0] if kinds["power"] else None
        power = positive(val(power_col)) if power_col else None
        if energy is not None:
            metrics.update(energy_metrics(energy, duration_s=window if power is None else duration,
                                          examples=metrics.get("examples"),
                                          boundary=conv.boundary(boundary), method="reported", what=how, flags=flags))
            if power is not None:
                metrics["avg_power_w"] = power  # the table's own average, kept over energy / duration
            elif phase and duration:
                metrics["avg_power_missing_reason"] = (
                    f"{cols[duration_col or '']} times the {phase.group(1) or phase.group(2)} only and the table does "
                    "not say its energy was measured over the same window, so no average power is derived from them")
        elif power is not None:
            metrics["avg_power_w"] = power
            metrics["energy_missing_reason"] = f"{cols[power_col or '']} is given without a duration"
            if metrics.get("tokens_per_s"):
                metrics["j_per_token"] = power / metrics["tokens_per_s"]
                notes.append(f"J per token = {cols[power_col or '']} / tokens per second")
                if boundary := ("gpu_board" if "gpu" in (power_col or "") or "draw" in (power_col or "") else None):
                    metrics["energy_boundary"] = conv.boundary(boundary)
                metrics["energy_method"] = "reported"
        else:
            metrics["energy_missing_reason"] = "no energy or power column with a stated unit"
        for low in kinds["per"]:
            m = ENERGY_PER.match(low)
            v = val(low)
            if m is None or v is None:
                continue
            if v <= 0:
                notes.append(f"{cols[low]} is {v:g}: left out (a broken figure, never stored as 0)")
                continue
            field = "j_per_token" if m.group(1) == "token" else "j_per_sample"
            metrics[field] = v * ENERGY_UNITS[m.group(2)]
            metrics.setdefault("energy_boundary", conv.boundary(boundary))
            metrics.setdefault("energy_method", "reported")
        if prompt := clean_str(values.get("prompt")):
            notes.append(f"prompt {prompt[:200]!r}")
        mode = "train" if any(c.startswith("training") for c in cols) else (
            "infer" if any(c.startswith(("inference", "throughput_inf", "generation", "mean_generation")) for c in cols)
            else None)
        return {
            "run_id": conv.run_id(i),
            "status": "failed" if (values.get("status") or "ok").lower() in ("failed", "error", "oom") else "ok",
            "device": device,
            "config": {
                "workload": conv.hints.workload or (model or "unknown")[:200],
                "model": model,
                "mode": conv.mode(mode, f"{where} (the table does not say whether it trained or inferred)"),
                "precision": conv.precision(None),
                "batch_size": pos_int(values.get("batch_size")) or conv.hints.batch_size,
                "gpu_count": pos_int(values.get("gpu_count")),
                "tag": clean_str(next((f"{c} {values[c]}" if c in _SETUP_NAMES else values[c] for c in (
                    "tag", "framework", "dataset", *_SETUP_NAMES) if values.get(c)), None)),
            },
            "metrics": {k: v for k, v in metrics.items() if v is not None},
            "flags": flags,
            "notes": "; ".join(["per-experiment table row", *notes]),
        }

    @staticmethod
    def _energy(conv: Conversion, val: Any, kinds: dict[str, list[str]], duration: float | None,
                notes: list[str]) -> tuple[float | None, str | None, str]:
        """(energy J, boundary, what it is) from a total, a sum of components or power x duration."""
        for low in kinds["energy"]:
            m = ENERGY_TOTAL.match(low)
            v = val(low)
            if m and v is not None:  # 'total_energy_system_j': the whole system's, said in its name
                return v * ENERGY_UNITS[m.group(1)], "system" if re.search(r"_(system|sys|node)_", low) else None, low
        parts = []
        for low in kinds["part"]:
            m = ENERGY_PART.match(low)
            v = val(low)
            if m and v is not None:
                parts.append((m.group(1) or m.group(2), v * ENERGY_UNITS[m.group(3)], low))
        if parts:
            scopes = {p[0] for p in parts}
            notes.append("energy = " + " + ".join(p[2] for p in parts) + " (components of one run add up)")
            return sum(p[1] for p in parts), ("gpu_board" if scopes == {"gpu"} else "system"), "the table's energy"
        for low in kinds["power"]:
            v = positive(val(low))
            if v is not None and duration:
                gpu = bool(POWER.match(low) and "gpu" in low)
                notes.append(f"energy = {low} x duration")
                return v * duration, ("gpu_board" if gpu else None), f"{low} x duration"
        return None, None, "energy"


# the general vocabulary's latency and power fields (importers.table_fields), by this reader's column names
_NAMED = {"latency_avg_ms": "latency_ms", "latency_p50_ms": "p50_ms", "latency_p90_ms": "p90_ms",
          "latency_p95_ms": "p95_ms", "latency_p99_ms": "p99_ms", "avg_power_w": "avg_power_w",
          "throughput_sps": "throughput_sps", "j_per_token": "energy_per_token_j",
          "j_per_sample": "energy_per_sample_j"}


def _with_named_units(conv: Conversion, header: list[str], rows: list[tuple[int, list[str]]]
                      ) -> tuple[list[str], list[tuple[int, list[str]]]]:
    """A latency, a rate of items or a device's power this reader's names miss, whose name states its unit
    ('latency_sec', 'mis_fps', 'Avg_Power_mW'), renamed to this reader's column and converted (a component's
    power, 'cpu_power_w', is left as it is: it is no device's average)."""
    known = {c for found in _recognised(_columns(header)).values() for c in found}
    taken = {h.strip().lower() for h in header}
    header, scales = list(header), {}
    for i, name in enumerate(header):
        if name.strip().lower() in known or words_of(name) & {"cpu", "gpu", "ram", "dram", "mem", "memory", "soc"}:
            continue
        try:
            field, unit, _ = measure_field(name)
        except FieldError:
            continue
        to = _NAMED.get(field.key) if field is not None and unit is not None else None
        if to is None or to in taken or unit is None or field is None or field.unit is None:
            continue
        taken.add(to)
        header[i], scales[i] = to, unit.factor / units.unit(field.unit).factor
        conv.warn(f"{name} read as {field.key} (in {unit.symbol})")
    return header, scaled_rows(rows, scales, decimal_comma=True)


_LABELS = (*MODEL_COLUMNS, *DEVICE_COLUMNS, "tag", "framework", "dataset", *_SETUP_NAMES, "batch_size", "gpu_count")


def _tag_telling(conv: Conversion, header: list[str], rows: list[tuple[int, list[str]]], kinds: dict[str, list[str]],
                 runs: list[dict[str, Any]]) -> None:
    """Rows this reader's labels pool, told apart by a column it reads nothing of (a GEMM shape's `I`, `J`, `K`, a
    `context_window`): that column joins each run's tag, as in the general reader (`table_rows.telling_columns`),
    so that different setups are never averaged as repeats of one."""
    figures = {c for found in kinds.values() for c in found}
    columns: Columns = {}
    for i, name in enumerate(header):
        low = name.strip().lower()
        if low in _LABELS or low in ("status", "prompt"):
            columns[i] = (Field(low, None, "label"), None)
        elif low in figures or low in OUTPUT_FRAMES:
            columns[i] = (Field(low, None, "metrics"), None)
    telling = telling_columns(header, rows, columns, set())
    if not telling:
        return
    for run, (_, row) in zip(runs, rows):
        parts = [f"{header[i][:30]} {cell(row, i)}".strip() for i in telling if cell(row, i)]
        config = run["config"]
        config["tag"] = ", ".join([config["tag"], *parts] if config["tag"] else parts)[:200] or None
    conv.warn(telling_said([header[i][:40] for i in telling]))
