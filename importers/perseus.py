"""Perseus (SOSP'24, ml-energy/zeus branch `kronos`, `sosp24_data/`): measured iteration time and
energy of pipeline-parallel training.

Measured (imported):
- `zeus/csv/<GPU>/zeus_global.csv` / `zeus_local.csv`: one row per power-limit setting, `time` s
  and `energy` J per training iteration over all GPUs (per-stage limits `power_limit_0..N`, a 0.0
  stage is one that does not exist);
- `ZeusGlobalPowerLimit.json`: `{"<power limit W>": {"time": s per iteration, "energy": J per
  iteration summed over ranks}}`;
- `<k>.prof.json`: one profiling result per rank, `iter_time` (s) and `iter_energy` (J, that rank's
  GPU) per iteration; the paper's aggregation (perseus/utils/analysis.py) drops the first two
  iterations, takes the slowest rank's time and the sum of the ranks' energies.
Workload, GPU and parallelism are only in the folder names
(`<GPU>/dp<d>+pp<p>+tp<t>/<framework>+<model>+<partition>+...+mbs<m>+nmb<n>+<scheduler>/`).

Not measurements (recognised and refused with the reason): Lowtime's time-energy frontier
(`iteration_time_energy/*.csv`, `time,energy`), the instruction profiles used for emulation
(`stage,instruction,frequency,time,energy`) and the EnvPipe emulation summary.

One iteration is one optimizer step: J per iteration, iterations/s, and J per sample over the
iteration's global batch (batch_size = microbatch size x microbatches x data-parallel degree).
Energy is GPU energy from Zeus (NVML): boundary `gpu_board`, method `reported`.
"""

from __future__ import annotations

import re
from typing import Any

from importers.base import (
    Conversion,
    Importer,
    Source,
    as_list,
    cell,
    clean_str,
    energy_metrics,
    num,
    pos_int,
    positive,
    read_csv,
)

TABLE_COLUMNS = {"model_name", "dp", "tp", "pp", "time", "energy", "power_limit_0"}
EMULATED = (
    ({"time", "energy"}, "a Lowtime/Perseus time-energy frontier (iteration_time_energy.csv): the planner's emulated "
                         "iterations on profiles the paper's notebook scales by 10 and by the tensor-parallel degree, "
                         "not measured runs"),
    ({"stage", "instruction", "time", "energy"}, "a Perseus instruction profile (one forward or backward of one "
                                                 "microbatch on one pipeline stage per knob value), the input of "
                                                 "emulation, not a measured training run"),
    ({"model", "precision", "device", "num_microbatches", "num_pipelines", "iteration_time", "energy"},
     "the EnvPipe emulation summary of the Perseus artifact: emulated iterations, not measured runs"),
)
_EXPERIMENT = re.compile(r"^(?P<framework>[^+]+)\+(?P<model>[^+]+)\+.*?dp(?P<dp>\d+)\+pp(?P<pp>\d+)\+tp(?P<tp>\d+)"
                         r"(?:\+mbs(?P<mbs>\d+))?(?:\+nmb(?P<nmb>\d+))?(?:\+(?P<scheduler>[A-Za-z]+))?$")


def _header(head: str) -> set[str]:
    return {c.strip() for c in head.split("\n", 1)[0].split(",")}


def _emulated(head: str) -> str | None:
    cols = _header(head)
    for needed, reason in EMULATED:
        if cols == needed if len(needed) == 2 else needed <= cols:
            return reason
    return None


def _is_pl_dump(doc: Any) -> bool:
    return (isinstance(doc, dict) and bool(doc) and all(re.fullmatch(r"\d+(\.\d+)?", k) for k in doc)
            and all(isinstance(v, dict) and {"time", "energy"} <= set(v) for v in doc.values()))


def _is_profile(doc: Any) -> bool:
    return (isinstance(doc, list) and bool(doc) and all(isinstance(r, dict) and {"rank", "iter_time", "iter_energy"}
                                                        <= set(r) for r in doc[:8]))


class PerseusImporter(Importer):
    NAME = "perseus"
    TOOL = "Perseus (ml-energy/zeus kronos)"
    DESCRIPTION = "Perseus SOSP'24 zeus_global/zeus_local CSV, ZeusGlobalPowerLimit.json, <k>.prof.json"

    def sniff(self, source: Source) -> bool:
        doc = source.json
        if doc is not None:
            return _is_pl_dump(doc) or _is_profile(doc)
        head = source.head
        return TABLE_COLUMNS <= _header(head) or _emulated(head) is not None

    def convert(self, conv: Conversion) -> dict[str, Any]:
        doc = conv.source.json
        if _is_pl_dump(doc):
            return self._pl_dump(conv, doc)
        if _is_profile(doc):
            return self._profile(conv, doc)
        reason = _emulated(conv.source.head)
        if reason and not TABLE_COLUMNS <= _header(conv.source.head):
            raise conv.fail("(whole file)", reason)
        return self._table(conv)

    # --- context from the folder names -----------------------------------------------------------------
    def _experiment(self, conv: Conversion) -> dict[str, Any]:
        for part in reversed(conv.source.dirs):
            m = _EXPERIMENT.match(part)
            if m:
                return {k: v for k, v in m.groupdict().items() if v is not None}
        return {}

    @staticmethod
    def _iteration(conv: Conversion, time_s: float | None, energy_j: float | None, batch: int | None,
                   flags: list[str]) -> dict[str, Any]:
        metrics: dict[str, Any] = {}
        if time_s and time_s > 0:
            metrics["duration_s"] = time_s
            metrics["iterations_per_s"] = 1.0 / time_s
            metrics["optimizer_steps"] = 1
            if batch:
                metrics.update(examples=batch, throughput_sps=batch / time_s, sample_unit="sample",
                               throughput_derivation="global batch / time per iteration")
        metrics.update(energy_metrics(energy_j, examples=batch, duration_s=positive(time_s),
                                      boundary=conv.boundary("gpu_board"), method="reported",
                                      what="energy per iteration", flags=flags))
        if "energy_j" in metrics:
            metrics["j_per_iteration"] = metrics["energy_j"]  # the window is one iteration (one optimizer step)
        return metrics

    # --- the flat tables ----------------------------------------------------------------------------------
    def _table(self, conv: Conversion) -> dict[str, Any]:
        header, rows = read_csv(conv, conv.source.text or "")
        device = conv.device(None, "gpu", where="(whole file; the GPU is in the folder name: zeus/csv/<GPU>/)")
        stages = sorted((h for h in header if re.fullmatch(r"power_limit_\d+", h)),
                        key=lambda h: int(h.rsplit("_", 1)[1]))
        runs = []
        for i, (lineno, row) in enumerate(rows):
            def val(col: str, _row: list[str] = row, _lineno: int = lineno) -> float | None:
                return num(cell(header, _row, col), f"line {_lineno}: {col}", conv)

            model = clean_str(cell(header, row, "model_name"))
            dp, tp, pp = (pos_int(cell(header, row, k)) for k in ("dp", "tp", "pp"))
            mbs, nmb = pos_int(cell(header, row, "microbatch_size")), pos_int(cell(header, row, "num_microbatches"))
            batch = pos_int(cell(header, row, "batch_size"))
            limits = [v for h in stages if (v := val(h)) is not None and v > 0][: pp or len(stages)]
            flags: list[str] = []
            metrics = self._iteration(conv, val("time"), val("energy"), batch, flags)  # batch_size: mbs x nmb x dp
            same = limits and all(v == limits[0] for v in limits)
            gpus = (dp or 1) * (tp or 1) * (pp or 1)
            notes = [f"Perseus Zeus baseline: time and energy per iteration over all {gpus} GPUs; per-stage power "
                     f"limits {', '.join(f'{v:g}' for v in limits)} W"]
            if val("optimal_power_limit") is not None:
                notes.append(f"optimal_power_limit {val('optimal_power_limit'):g} W")
            runs.append({
                "run_id": conv.run_id(i),
                "status": "ok",
                "device": dict(device),
                "config": {
                    "workload": model or conv.hints.workload or "unknown",
                    "model": model,
                    "mode": "train",
                    "precision": conv.precision(None),
                    "batch_size": mbs,
                    "grad_accum_steps": nmb,
                    "gpu_count": (dp or 1) * (tp or 1) * (pp or 1),
                    "power_limit_w": limits[0] if same else None,
                    "tag": f"dp{dp}+tp{tp}+pp{pp}" + ("" if same else " per-stage limits"),
                },
                "metrics": metrics,
                "flags": flags,
                "notes": "; ".join(notes),
            })
        return conv.document(runs)

    # --- ZeusGlobalPowerLimit.json ---------------------------------------------------------------------
    def _pl_dump(self, conv: Conversion, doc: dict[str, Any]) -> dict[str, Any]:
        exp = self._experiment(conv)
        device = conv.device(None, "gpu", where="(whole file; the GPU is in the folder name)")
        dp, tp, pp = (int(exp[k]) if k in exp else None for k in ("dp", "tp", "pp"))
        mbs, nmb = (int(exp[k]) if k in exp else None for k in ("mbs", "nmb"))
        batch = mbs * nmb * (dp or 1) if mbs and nmb else None
        runs = []
        for i, (limit, v) in enumerate(sorted(doc.items(), key=lambda kv: -float(kv[0]))):
            where = f'"{limit}"'
            flags: list[str] = []
            metrics = self._iteration(conv, num(v.get("time"), f"{where}.time", conv),
                                      num(v.get("energy"), f"{where}.energy", conv), batch, flags)
            runs.append(self._run(conv, i, device, exp, metrics, flags, float(limit), dp, tp, pp, mbs, nmb,
                                  "Zeus global power limit (Perseus baseline): time and energy per iteration, summed "
                                  "over ranks"))
        return conv.document(runs)

    # --- <k>.prof.json ---------------------------------------------------------------------------------
    def _profile(self, conv: Conversion, doc: list[Any]) -> dict[str, Any]:
        exp = self._experiment(conv)
        device = conv.device(None, "gpu", where="(whole file; the GPU is in the folder name)")
        times: list[list[float]] = []
        energies: list[list[float]] = []
        for i, r in enumerate(doc):
            where = f"[{i}]"
            t = [num(x, f"{where}.iter_time", conv) for x in as_list(r.get("iter_time"))]
            e = [num(x, f"{where}.iter_energy", conv) for x in as_list(r.get("iter_energy"))]
            if not t or len(t) != len(e) or any(x is None for x in (*t, *e)):
                raise conv.fail(where, "iter_time and iter_energy must be lists of numbers of the same length")
            times.append([x for x in t if x is not None])
            energies.append([x for x in e if x is not None])
        n = min(len(t) for t in times)
        skip = 2 if n > 2 else 0  # the paper drops two warm-up iterations
        per_iter_t = [max(t[k] for t in times) for k in range(skip, n)]
        per_iter_e = [sum(e[k] for e in energies) for k in range(skip, n)]
        dp, tp, pp = (int(exp[k]) if k in exp else None for k in ("dp", "tp", "pp"))
        mbs, nmb = (int(exp[k]) if k in exp else None for k in ("mbs", "nmb"))
        batch = mbs * nmb * (dp or 1) if mbs and nmb else None
        flags: list[str] = []
        metrics = self._iteration(conv, sum(per_iter_t) / len(per_iter_t), sum(per_iter_e) / len(per_iter_e), batch,
                                  flags)
        run = self._run(conv, 0, device, exp, metrics, flags, None, dp, tp, pp, mbs, nmb,
                        f"Perseus profile of one frequency plan ({conv.source.base_name}): {len(doc)} ranks, mean of "
                        f"{len(per_iter_t)} iterations after {skip} warm-up; time = slowest rank, energy = sum of "
                        "ranks")
        return conv.document([run])

    def _run(self, conv: Conversion, i: int, device: dict[str, Any], exp: dict[str, Any], metrics: dict[str, Any],
             flags: list[str], limit: float | None, dp: int | None, tp: int | None, pp: int | None, mbs: int | None,
             nmb: int | None, note: str) -> dict[str, Any]:
        model = exp.get("model")
        gpus = (dp or 1) * (tp or 1) * (pp or 1) if exp else None
        return {
            "run_id": conv.run_id(i),
            "status": "ok",
            "device": dict(device),
            "config": {  # batch: microbatch size x microbatches x data-parallel degree per iteration
                "workload": conv.hints.workload or model or "unknown",
                "model": model,
                "mode": "train",
                "precision": conv.precision(None),
                "batch_size": mbs,
                "grad_accum_steps": nmb,
                "gpu_count": gpus,
                "power_limit_w": limit,
                "tag": exp.get("scheduler"),
            },
            "metrics": metrics,
            "flags": flags,
            "notes": note + ("" if exp else "; the folder names (model, parallelism, microbatches) were not "
                                             "given: J per sample is not known"),
        }
