"""The runner on a real (tiny) model on this CPU: measurements, outcomes, recording, bad input."""

from __future__ import annotations

import contextlib
import json
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import torch

from cli.main import main
from db import Store
from energy import EnergyReading
from ingest import open_store
from joulebench.errors import RunConfigError
from joulebench.metrics import LATENCY
from runner import SweepOptions, run_sweep, workloads
from tests.helpers import database_held_by_another_process

STEPS = 4
SEQ = 32


def _options(tmp_path: Path, db: Path, **overrides: Any) -> SweepOptions:
    values: dict[str, Any] = {"workloads": ["bert-tiny"], "batch_sizes": [2], "seq_lens": [SEQ], "warmup": 1,
                              "steps": STEPS, "db": str(db), "out": tmp_path / "sweep.json", "idle": False}
    values.update(overrides)
    return SweepOptions(**values)


def _check_measured(run: dict[str, Any], *, examples_per_step: int, train: bool) -> None:
    m, c = run["metrics"], run["config"]
    assert run["status"] == "ok", run.get("error")
    assert c["measured_steps"] == STEPS and c["warmup_steps"] == 1
    assert len(run["step_times_ms"]) == STEPS and all(t > 0 for t in run["step_times_ms"])
    assert m["examples"] == STEPS * examples_per_step
    assert m["optimizer_steps"] == (STEPS if train else 0)
    assert m["throughput_sps"] > 0
    assert m["throughput_sps"] == pytest.approx(m["examples"] / m["duration_s"])
    # the window holds the steps: their sum cannot exceed the wall time between the synchronised edges
    assert sum(run["step_times_ms"]) / 1000 <= m["duration_s"] * 1.0001
    lat = [m[LATENCY.stat(k).name] for k in ("p50", "p90", "p95", "p99", "max")]
    assert 0 < lat[0] <= lat[1] <= lat[2] <= lat[3] <= lat[4]
    assert lat[4] == pytest.approx(max(run["step_times_ms"]))
    assert m["mem_peak_rss_mb"] > 50  # torch + a model: tens of MB at the very least
    # no sensor on this machine: the estimate (CPU utilisation x TDP), labelled so (issue 4). These
    # windows last a few /proc/stat ticks (10 ms), so the counter may not move: then the energy is
    # missing with its reason and the window is flagged short, never a 0.
    if m.get("energy_j") is None:
        assert m["energy_missing_reason"] and "window_short_for_sensor" in run["flags"]
    else:
        assert m["energy_boundary"] == "estimated" and m["energy_method"] == "estimated"
        assert m["energy_j"] > 0 and m["j_per_sample"] == pytest.approx(m["energy_j"] / m["examples"])
    env = run["environment"]
    assert env["torch_version"] == torch.__version__ and env["cpu_count"] >= 1 and env["torch_threads"] >= 1
    assert run["device"]["kind"] == "cpu" and run["device"]["name"]


@pytest.mark.parametrize("precision", ["fp32", "bf16"])
def test_every_mode_at_every_cpu_precision(precision: str, seeded_db: Path, tmp_path: Path) -> None:
    result = run_sweep(_options(tmp_path, seeded_db, modes=["infer", "train"], precisions=[precision]))
    assert result.exit_code == 0 and result.interrupted_by is None
    infer, train = result.runs
    assert (infer["config"]["mode"], train["config"]["mode"]) == ("infer", "train")
    for run in result.runs:
        assert run["config"]["precision"] == precision and run["config"]["tf32_enabled"] is False
        assert run["config"]["seq_len"] == SEQ and run["config"]["batch_size"] == 2
    _check_measured(infer, examples_per_step=2, train=False)
    _check_measured(train, examples_per_step=2, train=True)
    assert result.ingest.status == "imported" and result.ingest.runs_added == 2
    with Store.open(seeded_db) as store:
        rows = store.query("SELECT r.mode, r.throughput_sps, r.origin_kind, count(s.step_index) AS steps "
                           "FROM runs r JOIN step_times s USING (run_id) WHERE r.origin_kind = 'local' "
                           "GROUP BY ALL ORDER BY r.mode").rows()
    assert [(r[0], r[2], r[3]) for r in rows] == [("infer", "local", STEPS), ("train", "local", STEPS)]
    assert rows[0][1] == pytest.approx(infer["metrics"]["throughput_sps"])


def test_gradient_accumulation_counts_m_x_n_examples_per_optimizer_step(seeded_db: Path, tmp_path: Path) -> None:
    result = run_sweep(_options(tmp_path, seeded_db, modes=["train"], grad_accum=[3], batch_sizes=[2]))
    (run,) = result.runs
    assert run["config"]["grad_accum_steps"] == 3
    _check_measured(run, examples_per_step=6, train=True)
    assert run["metrics"]["iterations_per_s"] == pytest.approx(STEPS / run["metrics"]["duration_s"])


def test_duration_measures_until_the_time_is_up(seeded_db: Path, tmp_path: Path) -> None:
    result = run_sweep(_options(tmp_path, seeded_db, steps=None, duration_s=0.3))
    (run,) = result.runs
    assert run["status"] == "ok" and run["metrics"]["duration_s"] >= 0.3
    assert run["config"]["measured_steps"] == len(run["step_times_ms"]) >= 1


def test_cli_sweep_prints_a_summary_and_writes_next_to_the_database(
        seeded_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """... and, given a team store, pushes the sweep there after it is in this machine's file."""
    team = f"ducklake:sqlite:{tmp_path / 'team.sqlite'}"
    code = main(["run", "--workload", "bert-tiny", "--mode", "infer", "--precision", "fp32", "--batch-size", "1,2",
                 "--seq-len", "16", "--steps", "3", "--warmup", "1", "--tag", "ci", "--no-idle",
                 "--db", str(seeded_db), "--store", team])
    out, err = capsys.readouterr()
    assert code == 0, err
    assert "run 1/2: bert-tiny infer fp32 batch 1 seq 16" in err and "2/2 done" in err
    lines = out.splitlines()
    assert lines[0].split()[:5] == ["#", "workload", "mode", "precision", "batch"]
    assert [line.split()[4] for line in lines[2:4]] == ["1", "2"] and all("ok" in line for line in lines[2:4])
    header = lines[0].split()
    for line in lines[2:4]:  # one repeat each, estimated energy: n 1, grade D (not a measurement)
        cells = line.split()
        assert cells[header.index("n")] == "1" and cells[-2:] in (["D", "estimated"], ["C", "-"])
    assert "mean ± 95 % confidence interval" in out and "  A: decision grade" in out
    assert "why below A:" in out
    grades = {line.split()[-2] for line in lines[2:4]}
    if "D" in grades:  # the estimate moved: energy estimated, not a measurement
        assert "run(s) boundary (D), e.g. energy estimated from utilisation x TDP" in out
    if "C" in grades:  # a window too short for /proc/stat: energy missing, a throughput window under 1 s
        assert "run(s) window (C), e.g." in out and "launch jitter" in out
    assert "database: imported, 2 run(s) added" in out
    files = list((seeded_db.parent / "results").glob("joulebench-run-*.json"))
    assert len(files) == 1 and f"result file: {files[0]}" in out
    doc = json.loads(files[0].read_text())
    assert [r["config"]["tag"] for r in doc["runs"]] == ["ci", "ci"]
    assert f"team store {team}: pushed " in out
    with Store.open_team_store(team) as lake:
        assert lake.query("SELECT count(*) FROM runs WHERE tag = 'ci' AND trust_grade IS NOT NULL").item() == 2


def test_sweep_expands_every_combination_in_order() -> None:
    opts = SweepOptions(workloads=["bert-tiny", "resnet50"], modes=["infer", "train"], precisions=["fp32", "bf16"],
                        batch_sizes=[1, 4], seq_lens=[16, 32], image_sizes=[64], repeats=2, device="cpu", steps=2)
    opts.validate()
    runs = opts.expand()
    # modes x precisions x batch sizes x sizes x repeats, per workload
    assert len(runs) == 2 * 2 * 2 * 2 * 2 + 2 * 2 * 2 * 1 * 2
    assert len(set(runs)) == len(runs)
    assert {r.size for r in runs if r.workload == "resnet50"} == {64}
    assert runs[0].label() == "bert-tiny infer fp32 batch 1 seq 16"
    assert [r.repeat_index for r in runs[:2]] == [0, 1]
    train = SweepOptions(modes=["train"], batch_sizes=[2], grad_accum=[1, 4], device="cpu")
    train.validate()
    assert [(r.grad_accum_steps, r.examples_per_step) for r in train.expand()] == [(1, 2), (4, 8)]
    assert train.expand()[1].label() == "bert-tiny train fp32 batch 4x2 seq 128"


# --- outcomes: out of memory, failure ---------------------------------------------------------------

class _Tiny(torch.nn.Module):
    """A small real model that raises like the device would past a batch-size threshold."""

    def __init__(self, oom_from_batch: int | None, fail_from_batch: int | None) -> None:
        super().__init__()
        self.linear = torch.nn.Linear(8, 2)
        self.oom_from, self.fail_from = oom_from_batch, fail_from_batch

    def forward(self, x: torch.Tensor, labels: torch.Tensor | None = None) -> dict[str, torch.Tensor]:
        if self.oom_from is not None and x.shape[0] >= self.oom_from:
            held = torch.empty(x.shape[0], 1 << 20)  # something to free afterwards
            raise torch.OutOfMemoryError(f"CUDA out of memory. Tried to allocate {held.numel() * 4 // 2**20} MiB")
        if self.fail_from is not None and x.shape[0] >= self.fail_from:
            raise RuntimeError("a kernel went wrong")
        logits = self.linear(x)
        loss = torch.nn.functional.cross_entropy(logits, labels) if labels is not None else None
        return {"logits": logits, "loss": loss}


def _inputs(batch: int, size: int, device: torch.device, train: bool, gen: torch.Generator) -> dict[str, Any]:
    x = {"x": torch.randn(batch, 8, generator=gen).to(device)}
    if train:
        x["labels"] = torch.randint(0, 2, (batch,), generator=gen).to(device)
    return x


@contextlib.contextmanager
def _test_workload(name: str, *, oom_from: int | None = None, fail_from: int | None = None) -> Iterator[str]:
    workloads.register(workloads.Workload(name, "test", "test", "text", 8, lambda size: _Tiny(oom_from, fail_from),
                                          _inputs))
    try:
        yield name
    finally:
        workloads.unregister(name)


def test_out_of_memory_is_an_outcome_and_the_sweep_goes_on(seeded_db: Path, tmp_path: Path) -> None:
    with _test_workload("test-oom", oom_from=4) as name:
        result = run_sweep(_options(tmp_path, seeded_db, workloads=[name], modes=["train", "infer"],
                                    batch_sizes=[2, 4, 8], seq_lens=None))
    statuses = [(r["config"]["mode"], r["config"]["batch_size"], r["status"]) for r in result.runs]
    assert statuses == [("train", 2, "ok"), ("train", 4, "oom"), ("train", 8, "oom"),
                        ("infer", 2, "ok"), ("infer", 4, "oom"), ("infer", 8, "oom")]
    oom = result.runs[1]
    assert "out of memory" in oom["error"] and oom["config"]["workload"] == "test-oom"
    assert oom["metrics"] == {"energy_missing_reason": "the run ran out of memory before the measured window completed"}
    assert "step_times_ms" not in oom
    assert result.runs[3]["metrics"]["throughput_sps"] > 0  # the run after an OOM measures normally
    assert result.exit_code == 0  # OOM is an outcome, not a failure
    assert result.ingest.runs_added == 6
    with Store.open(seeded_db) as store:
        got = store.query("SELECT status, count(*) FROM runs WHERE workload = 'test-oom' GROUP BY 1 ORDER BY 1").rows()
    assert got == [("ok", 2), ("oom", 4)]


def test_a_crash_records_failed_with_the_error_and_the_sweep_goes_on(seeded_db: Path, tmp_path: Path) -> None:
    with _test_workload("test-fail", fail_from=4) as name:
        result = run_sweep(_options(tmp_path, seeded_db, workloads=[name], batch_sizes=[4, 2], seq_lens=None))
    failed, ok = result.runs
    assert failed["status"] == "failed" and failed["error"] == "RuntimeError: a kernel went wrong"
    assert failed["config"]["batch_size"] == 4 and "energy_missing_reason" in failed["metrics"]
    assert ok["status"] == "ok" and ok["metrics"]["throughput_sps"] > 0
    assert result.exit_code == 1 and result.ingest.runs_added == 2


# --- the power-meter seam ----------------------------------------------------------------------------

class _FakeMeter:
    name = "fake"

    def __init__(self, energy_j: float) -> None:
        self.energy_j = energy_j
        self.windows = 0

    @contextlib.contextmanager
    def window(self) -> Iterator[EnergyReading]:
        reading = EnergyReading()
        self.windows += 1
        try:
            yield reading
        finally:
            reading.energy_j, reading.boundary, reading.method = self.energy_j, "cpu_package", "counter"


def test_energy_from_a_meter_gives_joules_per_sample_and_per_optimizer_step(seeded_db: Path, tmp_path: Path) -> None:
    meter = _FakeMeter(12.0)
    result = run_sweep(_options(tmp_path, seeded_db, modes=["train"], grad_accum=[2]), meter=meter)
    m = result.runs[0]["metrics"]
    assert meter.windows == 1
    assert (m["energy_j"], m["energy_boundary"], m["energy_method"]) == (12.0, "cpu_package", "counter")
    assert m["j_per_sample"] == pytest.approx(12.0 / (STEPS * 4))
    assert m["j_per_iteration"] == pytest.approx(12.0 / STEPS)
    assert m["avg_power_w"] == pytest.approx(12.0 / m["duration_s"])


def test_zero_energy_is_recorded_missing_never_zero(seeded_db: Path, tmp_path: Path) -> None:
    result = run_sweep(_options(tmp_path, seeded_db), meter=_FakeMeter(0.0))
    m = result.runs[0]["metrics"]
    assert "energy_j" not in m and "j_per_sample" not in m and "0.0 J" in m["energy_missing_reason"]


# --- recording when the database is held ---------------------------------------------------------------

def test_a_held_database_queues_the_result_file_in_its_inbox(seeded_db: Path, tmp_path: Path) -> None:
    with database_held_by_another_process(seeded_db):
        result = run_sweep(_options(tmp_path, seeded_db))
    assert result.ingest.status == "queued" and result.exit_code == 0
    with open_store(seeded_db) as store:  # opening drains the inbox
        assert store.query("SELECT count(*) FROM runs WHERE origin_kind = 'local'").item() == 1


# --- bad input fails before anything runs --------------------------------------------------------------

BAD = [
    (["--precision", "fp16"], ["--precision: fp16 is not available on a CPU", "valid on cpu: fp32, bf16"]),
    (["--precision", "tf32"], ["--precision: tf32 is not available on a CPU", "valid on cpu: fp32, bf16"]),
    (["--precision", "fp16-weights", "--mode", "train"], ["fp16-weights is for inference only",
                                                          "valid for --mode train"]),
    (["--precision", "fp64"], ["--precision: 'fp64' is not a precision", "valid: fp32, tf32, fp16, bf16"]),
    (["--workload", "bert-huge"], ["--workload: unknown workload 'bert-huge'", "bert-large-ner", "bert-tiny"]),
    (["--batch-size", "0"], ["--batch-size: 0 is not valid", "at least 1"]),
    (["--batch-size", "2,x"], ["--batch-size: 'x' is not valid"]),
    (["--mode", "infer", "--grad-accum", "4"], ["--grad-accum: 4 applies to --mode train only"]),
    (["--mode", "infer,train", "--grad-accum", "2"], ["--grad-accum: 2 applies to --mode train only"]),
    (["--mode", "predict"], ["--mode: 'predict' is not a mode", "valid: train, infer"]),
    (["--device", "cuda"], ["--device: cuda is not available", "valid here: cpu"]),
    (["--device", "cuda:7"], ["--device: cuda:7", "valid here: cpu"]),
    (["--device", "tpu"], ["--device: 'tpu' is not a device", "valid here: cpu"]),
    (["--seq-len", "1024"], ["--seq-len: 1024 is too long for bert-tiny", "at most 512"]),
    (["--workload", "resnet50", "--seq-len", "128"], ["--seq-len applies to text workloads only", "--image-size"]),
    (["--workload", "vit-base", "--image-size", "100"], ["--image-size: 100 does not fit vit-base", "multiple of 16"]),
    (["--steps", "5", "--duration", "2"], ["--steps and --duration: give one of them"]),
    (["--steps", "0"], ["--steps: 0 is not valid"]),
    (["--repeats", "0"], ["--repeats: 0 is not valid"]),
    (["--warmup", "soon"], ["--warmup: 'soon' is not valid", "expected auto"]),
    (["--warmup", "-2"], ["--warmup: -2 is not valid"]),
    (["--min-window", "-1"], ["--min-window: -1.0 is not valid"]),
]


@pytest.mark.parametrize(("argv", "expected"), BAD, ids=[" ".join(a) for a, _ in BAD])
def test_bad_input_fails_before_anything_runs(argv: list[str], expected: list[str], tmp_path: Path,
                                              capsys: pytest.CaptureFixture[str]) -> None:
    db = tmp_path / "never.duckdb"
    assert main(["run", *argv, "--db", str(db)]) == RunConfigError.exit_code
    out, err = capsys.readouterr()
    assert err.startswith("error: ") and out == ""
    for text in expected:
        assert text in err
    assert "run 1/" not in err and "Traceback" not in err
    assert list(tmp_path.iterdir()) == []  # no database, no results folder: nothing ran


def test_several_problems_are_reported_together(capsys: pytest.CaptureFixture[str], tmp_path: Path) -> None:
    assert main(["run", "--precision", "fp16", "--batch-size", "0", "--db", str(tmp_path / "x.duckdb")]) == 2
    err = capsys.readouterr().err
    assert "--precision: fp16" in err and "--batch-size: 0" in err


def test_options_validate_for_library_callers() -> None:
    with pytest.raises(RunConfigError, match="--workload: unknown workload 'nope'"):
        run_sweep(SweepOptions(workloads=["nope"]))
