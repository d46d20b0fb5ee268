"""`joulebench decide` and the Decide page give one answer: the same decision model (decision/), so on the same
database the command (a real process, --json) and the page (AppTest) name the same devices in the same order,
with the same figures and the same sentences; and the decision package loads neither Streamlit nor torch."""

from __future__ import annotations

import json
import math
import subprocess
import sys
from pathlib import Path
from typing import Any

import polars as pl
import pytest

from explorer.tables import bounded
from ingest import import_file
from tests.helpers import open_page

REPO = Path(__file__).resolve().parent.parent
LEADERBOARD = Path(__file__).parent / "fixtures" / "formats" / "zeus_mlenergy" / \
    "mlenergy-v3-leaderboard-llama31-8b-lm-arena-chat.json"
STUDENT = ["GeForce RTX 3060", "Jetson AGX Xavier"]


def test_the_decision_package_loads_neither_streamlit_nor_torch() -> None:
    modules = sorted(f"decision.{p.stem}" for p in (REPO / "decision").glob("*.py") if p.stem != "__init__")
    probe = ("import importlib, sys\n"
             f"for m in {modules!r}: importlib.import_module(m)\n"
             "heavy = sorted(m for m in ('streamlit', 'torch', 'transformers') if m in sys.modules)\n"
             "print('LOADED:' + ','.join(heavy))")
    done = subprocess.run([sys.executable, "-c", probe], capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    assert len(modules) >= 10 and "LOADED:\n" in done.stdout, done.stdout


def _command(db: Path, *flags: str) -> dict[str, Any]:
    done = subprocess.run([sys.executable, "-m", "cli", "decide", *flags, "--json", "--db", str(db)],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 0, done.stderr[-2000:]
    return json.loads(done.stdout)


def _cell(value: Any) -> str:
    """A table cell as the page shows it and the command writes it: missing as '', whole numbers as integers."""
    if value is None or (isinstance(value, float) and math.isnan(value)):
        return ""
    if isinstance(value, float) and value.is_integer():
        return str(int(value))
    return str(value)


def _page_table(at: Any, column: str) -> list[list[str]]:
    frame = next(getattr(df.value, "data", df.value) for df in at.dataframe
                 if column in getattr(df.value, "data", df.value).columns)
    return [list(frame.columns)] + [[_cell(v) for v in row] for row in frame.values.tolist()]


def _command_table(rows: list[dict[str, Any]]) -> list[list[str]]:
    frame, _ = bounded(pl.DataFrame(rows, infer_schema_length=None))  # the page cuts long cells the same way
    return [list(frame.columns)] + [[_cell(v) for v in row] for row in frame.rows()]


def _same_answer(at: Any, said: dict[str, Any]) -> None:
    page = [str(m.value) for m in at.markdown]
    sentences = said["sentences_markdown"]
    assert sentences and sentences[0].startswith("**In short:**")
    start = page.index(sentences[0])
    assert page[start:start + len(sentences)] == sentences  # the same sentences, in the same order
    figures = _page_table(at, "Figure")
    assert figures == _command_table(said["figures"])
    assert list(dict.fromkeys(row[0] for row in figures[1:])) == said["devices"]  # the same device order


def test_the_page_and_the_command_agree_on_the_default_inputs(db: Path) -> None:
    at = open_page("decide", {"device": STUDENT})
    said = _command(db, *[f for d in STUDENT for f in ("--device", d)])
    _same_answer(at, said)
    assert said["devices"] == STUDENT and said["cheapest_first"] == ["GeForce RTX 3060", "Jetson AGX Xavier"]
    assert said["job"] == "bert-large (any task), training, any input size (each figure states its own)"
    assert said["sentences"][0].startswith("In short: GeForce RTX 3060 is faster; Jetson AGX Xavier uses fewer")
    assert said["tokens"] is None  # training: no per-token question


def test_the_page_and_the_command_agree_on_other_inputs(db: Path) -> None:
    """Inference at FP16, five devices (two from an imported ML.ENERGY file), other cost numbers, a power cap
    and a budget, and an ITL limit for the per-token answer."""
    assert import_file(LEADERBOARD, db=db).status == "imported"
    devices = ["A100 40GB", "Tesla V100 32GB", "GeForce RTX 3060", "B200", "H100 SXM"]
    at = open_page("decide", {"device": devices, "mode": "infer", "precision": "fp16", "kwh": "0.3", "util": "0.2",
                              "years": "5", "pue": "1.2", "max_w": "300", "budget": "20000", "itl": "50"})
    said = _command(db, *[f for d in devices for f in ("--device", d)], "--mode", "infer", "--precision", "fp16",
                    "--price-kwh", "0.3", "--utilisation", "0.2", "--lifetime-years", "5", "--pue", "1.2",
                    "--max-power", "300", "--budget", "20000", "--itl-p90", "50")
    _same_answer(at, said)
    assert said["devices"] == devices and said["inputs"]["util"] == ["0.2"]
    assert any("Constraints:" in s for s in said["sentences"])
    tokens = said["tokens"]
    assert tokens["target"] == "ITL p90 ≤ 50 ms" and tokens["shape"] == tokens["shapes"][0]
    page = [str(m.value) for m in at.markdown]
    start = page.index(tokens["sentences"][0])
    assert page[start:start + len(tokens["sentences"])] == tokens["sentences"]
    table = _page_table(at, "Energy per output token (J)")
    assert [row[0] for row in table[1:]] == tokens["devices"]
    assert table == _command_table(tokens["table"])


@pytest.mark.parametrize(("flags", "message"), [
    (["--device", "GeForce RTX 3060"], "--device: give 2 to 6 different candidate devices"),
    (["--device", "GeForce RTX 3060", "--device", "No Such GPU"], "--device 'No Such GPU': not in the device catalog"),
    (["--device", "GeForce RTX 3060", "--device", "Jetson AGX Xavier", "--precision", "fp8"],
     "--precision 'fp8': no train runs at it; choices: any, fp16"),
    (["--device", "GeForce RTX 3060", "--device", "Jetson AGX Xavier", "--utilisation", "2"],
     "--utilisation: utilisation must be between 0.01 and 1"),
    (["--device", "GeForce RTX 3060", "--device", "Jetson AGX Xavier", "--tpot-p90", "50"],
     "--tpot-p90: the energy per token is asked for inference; add --mode infer"),
])
def test_bad_flags_say_which_and_what_would_do(seeded_db: Path, flags: list[str], message: str) -> None:
    done = subprocess.run([sys.executable, "-m", "cli", "decide", *flags, "--db", str(seeded_db)],
                          capture_output=True, text=True, timeout=120, cwd=REPO)
    assert done.returncode == 2 and message in done.stderr, done.stderr
    assert "Traceback" not in done.stderr and done.stdout == ""
