"""CodeCarbon `emissions.csv` (every version's columns, one row per tracked run) and its JSON.

Energies are in kWh (stored in J), powers in W, duration in s, RAM in GB. CodeCarbon sums
CPU, GPU and RAM energy, partly estimated (CPU from TDP when RAPL is absent, RAM from its
size), so runs are labelled boundary `system`, method `reported`, flagged `energy_partly_estimated`
(energy.grades: graded and shown as partly estimated). On a Jetson (a `tegra` OS with
no GPU listed) CodeCarbon cannot see the integrated GPU and models CPU and RAM power: nothing
there is measured, so those runs are boundary `estimated`, method `estimated`. CodeCarbon does
not say whether the tracked code trained or inferred: pass --mode. Nor does it say what ran or how much of
it: each tracked run (row) is a job of its own, never a repeat of another (its tag names the run), so jobs of
4 s and 2,348 s are not pooled as repeats of one configuration.

`gpu_model` names every GPU the library enumerated (`8 x NVIDIA H800`, or several models run
together); `gpu_count` is the number tracked, and wins. Files appended by a crashed writer hold NUL
bytes (removed, counted) and rows with nothing but a timestamp (skipped, counted); rows of one
run_id written by flush() carry cumulative totals, so only the last is kept.
"""

from __future__ import annotations

import re
from typing import Any

from energy.grades import FLAG_PARTLY_ESTIMATED
from importers.base import (
    J_PER_KWH,
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

REQUIRED = ("duration", "energy_consumed")
# CodeCarbon writes gpu_model as "".join(f"{count} x {name}") over the distinct names, so a second model's
# count is glued to the first's last digits ("1 x NVIDIA GeForce RTX 30901 x NVIDIA GeForce RTX 4090"); other
# writers join names with commas ("NVIDIA GeForce RTX 3090, NVIDIA GeForce RTX 3090").
_COUNT = re.compile(r"(\d{1,12}) ?x ")
MAX_GPUS_LISTED = 64


def gpu_models(text: str, gpu_count: int | None = None) -> list[tuple[int, str]]:
    """[(count, model)] from a CodeCarbon `gpu_model`: '2 x NVIDIA GeForce RTX 4090' -> [(2, 'NVIDIA GeForce RTX
    4090')]; the glued '1 x A1 x B' form split where the counts add up to `gpu_count` (else at a one-digit count);
    a comma list of names counted per name. [] when it names no GPU."""
    text = text.strip()[:1000]
    marks = list(_COUNT.finditer(text))
    if not marks or marks[0].start() != 0:
        names = [n.strip() for n in text.split(",") if n.strip()]
        counted: dict[str, int] = {}
        for n in names:
            counted[n] = counted.get(n, 0) + 1
        return [(c, n) for n, c in counted.items()]
    # each later mark's digits may begin with the previous name's last digits: try every split of them
    splits: list[list[tuple[int, int]]] = [[(marks[0].start(), int(marks[0].group(1)))]]
    for m in marks[1:]:
        digits = m.group(1)
        splits.append([(m.start() + k, int(digits[k:])) for k in range(len(digits)) if digits[k] != "0"
                       and int(digits[k:]) <= MAX_GPUS_LISTED])
    chosen = [options[-1] for options in splits]  # the shortest count: one digit where possible
    if gpu_count is not None and sum(c for _, c in chosen) != gpu_count and len(splits) <= 4:
        for k in range(1, len(splits)):  # a two-digit count where that makes the stated total
            for option in splits[k]:
                trial = chosen[:k] + [option] + chosen[k + 1:]
                if sum(c for _, c in trial) == gpu_count:
                    chosen = trial
    out = []
    for i, (start, count) in enumerate(chosen):
        name_start = text.index("x ", start) + 2
        end = chosen[i + 1][0] if i + 1 < len(chosen) else len(text)
        name = text[name_start:end].strip(" ,;")
        if name and count >= 1:
            out.append((count, name))
    return out


class CodeCarbonImporter(Importer):
    NAME = "codecarbon"
    TOOL = "codecarbon"
    DESCRIPTION = "CodeCarbon emissions.csv or its JSON"
    TOLERATES_NUL = True  # a crash while appending leaves NUL bytes in emissions.csv

    def sniff(self, source: Source) -> bool:
        doc = source.json
        if doc is not None:
            rows = doc if isinstance(doc, list) else [doc]
            return bool(rows) and all(
                isinstance(r, dict) and set(REQUIRED) <= set(r) and "emissions" in r for r in rows[:3]
            )
        first = source.head.split("\n", 1)[0]
        cols = {c.strip() for c in first.split(",")}
        return {"duration", "emissions", "energy_consumed"} <= cols

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        if doc is not None:
            records = doc if isinstance(doc, list) else [doc]
            rows = [(f"[{i}]" if isinstance(doc, list) else "(object)", r) for i, r in enumerate(records)]
        else:
            raw = conv.source.data
            nul = raw.count(b"\x00")
            try:
                text = raw.replace(b"\x00", b"").decode("utf-8-sig") if nul else conv.source.text or ""
            except UnicodeDecodeError as e:
                raise conv.fail("(whole file)", f"byte {e.start} (after removing NUL bytes) is not UTF-8") from e
            if nul:
                conv.warn(f"{nul} NUL bytes removed (a crash while appending to the file)")
            header, lines = read_csv(conv, text)
            check_run_count(conv, len(lines), "its rows")
            missing = [c for c in REQUIRED if c not in header]
            if missing:
                raise conv.fail("line 1", f"header lacks {', '.join(missing)}")
            rows = []
            empty = 0
            for lineno, cells in lines:
                if cells == header:  # runs appended by a newer version repeat the header
                    continue
                if len(cells) > len(header) + 1:
                    raise conv.fail(f"line {lineno}", f"{len(cells)} cells for {len(header)} columns")
                record = {h: (cells[i] if i < len(cells) else "") for i, h in enumerate(header)}
                if not (record.get("duration") or "").strip() and not (record.get("energy_consumed") or "").strip():
                    empty += 1  # a row the writer never finished: only a timestamp (and a project name)
                    continue
                rows.append((f"line {lineno}", record))
            if empty:
                conv.warn(f"{empty} row(s) with no duration and no energy (never finished by the writer) skipped")
            rows = self._last_per_run(conv, rows)
        runs = [self._run(conv, where, record, i) for i, (where, record) in enumerate(rows)]
        return conv.document(runs)

    @staticmethod
    def _last_per_run(conv: Conversion, rows: list[tuple[str, dict[str, Any]]]) -> list[tuple[str, dict[str, Any]]]:
        """flush() appends cumulative rows with the same run_id: the last one is the run. In task mode
        (start_task / stop_task, CodeCarbon 2.8 and later) each row is one task of the run, named in task_name."""
        last: dict[str, int] = {}
        superseded: set[int] = set()
        for i, (_, r) in enumerate(rows):
            run_id = clean_str(r.get("run_id"))
            if not run_id:
                continue
            run_id += f"/{clean_str(r.get('task_name')) or ''}"
            if run_id in last:
                before, now = num(rows[last[run_id]][1].get("duration")), num(r.get("duration"))
                if before is not None and now is not None and now >= before:  # a running total, grown
                    superseded.add(last[run_id])
            last[run_id] = i
        keep = [row for i, row in enumerate(rows) if i not in superseded]
        if len(keep) < len(rows):
            conv.warn(f"{len(rows) - len(keep)} earlier row(s) of a run_id written again later (flush() writes "
                      "running totals) are superseded by the last")
        return keep

    def _run(self, conv: Conversion, where: str, r: dict[str, Any], index: int) -> dict[str, Any]:
        if not isinstance(r, dict):
            raise conv.fail(where, "expected an object of CodeCarbon fields")
        conv.tool_version = clean_str(r.get("codecarbon_version")) or conv.tool_version
        duration = num(r.get("duration"), f"{where}: duration", conv)
        energy_kwh = num(r.get("energy_consumed"), f"{where}: energy_consumed", conv)
        if duration is None or duration <= 0:
            raise conv.fail(f"{where}: duration", f"{r.get('duration')!r} is not a positive duration in s")
        gpu_model = clean_str(r.get("gpu_model"))
        gpu_count = pos_int(r.get("gpu_count"))
        os_name = clean_str(r.get("os")) or ""
        jetson = False
        if gpu_model:
            listed = gpu_models(gpu_model, gpu_count)
            if listed:
                names = {name for _, name in listed}
                listed_count = sum(n for n, _ in listed)
                if len(names) > 1:
                    conv.warn(f"{where}: gpu_model lists several GPU models ({gpu_model}): "
                              + ", ".join(f"{n} x {name}" for n, name in listed) + f"; the run is stored on "
                              f"{listed[0][1]}, the first listed")
                gpu_count = gpu_count or listed_count
                if gpu_count and listed_count > gpu_count:
                    conv.warn(f"gpu_model lists {listed_count} GPUs ({gpu_model}) where gpu_count says "
                              f"{gpu_count} were tracked: the tracked count is stored")
                gpu_model = listed[0][1]
            device = conv.device(gpu_model, "gpu", where=f"{where}: gpu_model")
        elif "tegra" in os_name.lower():
            device = conv.device(None, "jetson", where=f"{where}: gpu_model (empty on a Jetson)")
            gpu_count = None
            jetson = True
        else:
            device = conv.device(clean_str(r.get("cpu_model")), "cpu", where=f"{where}: cpu_model")
            gpu_count = None
        flags: list[str] = []
        metrics: dict[str, Any] = {"duration_s": duration}
        if energy_kwh is not None:
            metrics.update(
                energy_metrics(
                    energy_kwh * J_PER_KWH,
                    duration_s=duration,
                    boundary=conv.boundary("estimated" if jetson else "system"),
                    method="estimated" if jetson else "reported",
                    what="energy_consumed",
                    flags=flags,
                )
            )
            if not jetson:  # RAM power is always modelled from its size, CPU power from TDP without RAPL
                flags.append(FLAG_PARTLY_ESTIMATED)
        else:
            metrics["energy_missing_reason"] = "energy_consumed is empty"
        parts = []
        for key in ("cpu", "gpu", "ram"):
            e = num(r.get(f"{key}_energy"))
            p = num(r.get(f"{key}_power"))
            if e is not None:
                parts.append(f"{key} {e * J_PER_KWH:.6g} J")
            if p is not None:
                parts.append(f"{key} {p:.6g} W")
        emissions = num(r.get("emissions"))
        if emissions is not None:
            parts.append(f"emissions {emissions * 1000:.6g} g CO2eq")
        stamp = clean_str(r.get("timestamp"))
        run: dict[str, Any] = {
            "run_id": conv.run_id(index),
            "status": "ok",
            "device": device,
            "config": {
                "workload": (clean_str(r.get("project_name")) if conv.hints.workload is None else conv.hints.workload)
                or "unknown",
                "mode": conv.mode(None, f"{where}: (CodeCarbon does not record it)"),
                "precision": conv.precision(None),
                "gpu_count": gpu_count,
                "batch_size": conv.hints.batch_size,
                # one tracked run is one job: never pooled with another as its repeat
                "tag": ((f"CodeCarbon run {tracked[:8]}" if (tracked := clean_str(r.get("run_id")))
                         else f"CodeCarbon row {index + 1}")
                        + (f", task {task[:60]}" if (task := clean_str(r.get("task_name"))) else "")),
            },
            "metrics": metrics,
            "flags": flags,
            "environment": {
                "os": os_name or None,
                "python_version": clean_str(r.get("python_version")),
                "cpu_model": clean_str(r.get("cpu_model")),
                "cpu_count": pos_int(r.get("cpu_count")),
                "ram_gb": positive(num(r.get("ram_total_size"))),
            },
            "notes": f"CodeCarbon run {clean_str(r.get('run_id')) or '?'} written {stamp or '?'} "
            f"(local time, zone not recorded): " + ", ".join(parts)
            + ("; CPU and RAM power are partly modelled by CodeCarbon (RAM from its size; CPU from its TDP when "
               "RAPL cannot be read): the energy is partly estimated" if energy_kwh is not None and not jetson else "")
            + ("; on a Jetson CodeCarbon sees no GPU (its integrated GPU is not measured) and models CPU and RAM "
               "power: the energy is an estimate" if jetson else ""),
        }
        return run
