"""The question Decide answers: the job (train or infer, a model size class or one workload, a precision, an
input size), the choices the data offers for it, and each device's rows for it."""

from __future__ import annotations

from dataclasses import dataclass, replace

import polars as pl

from decision.text import precision_name

MAX_DEVICES = 6  # candidates compared at once


@dataclass(frozen=True)
class Job:
    """What the devices are for: train or infer, a model size class (`model`) or one workload."""

    mode: str = "train"
    model: str | None = None
    workload: str | None = None
    precision: str | None = None
    seq_len: int | None = None  # the input size (sequence length); None: any, each figure states its own

    def describe(self) -> str:
        what = self.workload or (f"{self.model} (any task)" if self.model else "any workload")
        prec = f", {precision_name(self.precision)}" if self.precision else ""
        size = f", sequence length {self.seq_len}" if self.seq_len else ", any input size (each figure states its own)"
        return f"{what}, {'training' if self.mode == 'train' else 'inference'}{prec}{size}"


def scopes(runs: pl.DataFrame, mode: str) -> list[str]:
    """Job choices for a mode: each model class ('model:bert-large') and each workload."""
    of_mode = runs.filter(pl.col("mode") == mode)
    models = sorted(of_mode["model"].drop_nulls().unique().to_list())
    workloads = sorted(of_mode["workload"].drop_nulls().unique().to_list())
    return [f"model:{m}" for m in models] + [f"workload:{w}" for w in workloads]


def scope_label(scope: str) -> str:
    kind, _, value = scope.partition(":")
    return f"{value} (any task)" if kind == "model" else value


def chosen_job(mode: str, scope: str, auto_scope: str | None, precision: str, seq: str = "any") -> Job:
    """The job the page's controls pick ('auto', 'any' resolved)."""
    return job_from(mode, auto_scope if scope == "auto" else scope, None if precision == "any" else precision,
                    None if seq == "any" else int(seq))


def job_from(mode: str, scope: str | None, precision: str | None, seq_len: int | None = None) -> Job:
    kind, _, value = (scope or "").partition(":")
    return Job(mode, value if kind == "model" else None, value if kind == "workload" else None, precision or None,
               seq_len)


def input_sizes(runs: pl.DataFrame, devices: list[str], job: Job) -> list[int]:
    """The sequence lengths the candidates' rows for the job hold (any precision chosen applies)."""
    rows = pl.concat([job_rows(runs, d, replace(job, seq_len=None)) for d in devices]) if devices else runs.clear()
    return sorted(int(v) for v in rows["seq_len"].drop_nulls().unique().to_list())


def default_scope(runs: pl.DataFrame, devices: list[str], mode: str) -> str | None:
    """The model class with rows for the most candidates in this mode (then the most rows)."""
    rows = runs.filter(pl.col("device_name").is_in(devices) & (pl.col("mode") == mode)
                       & pl.col("model").is_not_null())
    if rows.is_empty():
        options = scopes(runs, mode)
        return options[0] if options else None
    best = (rows.group_by("model").agg(pl.col("device_name").n_unique().alias("d"), pl.len().alias("n"))
            .sort(["d", "n", "model"], descending=[True, True, False]))
    return f"model:{best['model'][0]}"


def mixed_sizes_note(sizes: list[str]) -> str:
    """What 'any input size' means when the data holds several: each figure is the device's best,
    at whatever size gave it, and says which; picking one compares every device at it."""
    return (f"The data holds these input sizes: {', '.join(sizes)} tokens. With 'any', each device's figures are "
            "its best at whichever size gave them (each figure states its size); pick one to compare all at it.")


def job_rows(runs: pl.DataFrame, device: str, job: Job) -> pl.DataFrame:
    """The device's single-device runs for the job (any status; the caller picks `ok` or `oom`):
    a buyer compares one device with another, so multi-GPU system rows are left out."""
    rows = runs.filter((pl.col("device_name") == device) & (pl.col("mode") == job.mode)
                       & (pl.col("gpu_count").fill_null(1) == 1))
    if job.workload:
        rows = rows.filter(pl.col("workload") == job.workload)
    elif job.model:
        rows = rows.filter(pl.col("model") == job.model)
    if job.precision:
        rows = rows.filter(pl.col("precision") == job.precision)
    if job.seq_len:
        rows = rows.filter(pl.col("seq_len") == job.seq_len)
    return rows


def idle_rows(runs: pl.DataFrame, device: str) -> pl.DataFrame:
    return runs.filter((pl.col("device_name") == device) & (pl.col("mode") == "idle")
                       & pl.coalesce("avg_power_w", "idle_power_w").is_not_null())
