"""Decide, energy per token at a latency target (issue 19): "which GPU generates Llama-3.1-8B with the fewest
joules per token while ITL p90 stays under my limit?", answered from the real ML.ENERGY v3 leaderboard file
(tests/fixtures/formats, attribution in SOURCES.md) beside a generation run measured here.

The file's figures (J/token, ITL p90: the file states inter-token latency, not TPOT; per max_num_seqs):
  B200 max_num_seqs 32: 0.1511 J/token at 14.9 ms; 64: 0.1103 at 20.03 ms; 256: 0.0705 at 48.5 ms
  H100 max_num_seqs 96: 0.1029 J/token at 16.7 ms; 128: 0.0951 at 20.04 ms; 384: 0.0742 at 47.8 ms
so at ITL p90 <= 20 ms the H100 wins (0.1029 vs 0.1511), at <= 50 ms the B200 does (0.0705 vs 0.0742).
"""

from __future__ import annotations

from pathlib import Path

import pytest

from db import Store, queries
from decision import token_target
from decision.money import CostSettings, Rates
from ingest import import_file
from tests.helpers import open_page, shown

LEADERBOARD = Path(__file__).parent / "fixtures" / "formats" / "zeus_mlenergy" / \
    "mlenergy-v3-leaderboard-llama31-8b-lm-arena-chat.json"
GPUS = ["B200", "H100 SXM"]  # ML.ENERGY's "H100" is the 700 W SXM part (ingest.device_names)
SHAPE = "llama-3.1-8b, prompt not stated + output length not stated"


@pytest.fixture
def lake(db: Path) -> Path:
    assert import_file(LEADERBOARD, db=db).status == "imported"
    return db


def _answers(db: Path, target: token_target.Target) -> list[token_target.DeviceAnswer]:
    with Store.open(db) as store:
        configs, catalog = queries.configurations(store), queries.devices(store)
        rates = Rates.from_frame(queries.exchange_rates(store))
    rows = token_target.token_configs(configs, GPUS)
    assert token_target.shapes(rows) == [SHAPE]
    return token_target.answer(rows, SHAPE, GPUS, target, catalog, rates, CostSettings())


def test_the_winner_depends_on_the_latency_target(lake: Path) -> None:
    tight = _answers(lake, token_target.Target(itl_p90_ms=20))
    assert [(a.device, a.status, a.best["tag"]) for a in tight if a.best] == [
        ("H100 SXM", "meets", "max_num_seqs 96"), ("B200", "meets", "max_num_seqs 32")]
    assert tight[0].best is not None and tight[0].best["j_per_token_mean"] == pytest.approx(0.10287, abs=1e-5)
    loose = _answers(lake, token_target.Target(itl_p90_ms=50))
    assert [(a.device, a.best["tag"]) for a in loose if a.best] == [("B200", "max_num_seqs 256"),
                                                                     ("H100 SXM", "max_num_seqs 384")]
    lines = token_target.sentences(loose, SHAPE, token_target.Target(itl_p90_ms=50), "USD")
    assert "**B200**" in lines[0] and "0.0705 J/token" in lines[0] and "imported" in lines[0]
    assert "H100 SXM also meets it, at 1.05× the energy per token" in lines[1]


def test_a_limit_no_configuration_meets_and_a_figure_the_file_lacks(lake: Path) -> None:
    none = _answers(lake, token_target.Target(itl_p90_ms=5))
    assert {a.status for a in none} == {"misses"}
    lines = token_target.sentences(none, SHAPE, token_target.Target(itl_p90_ms=5), "USD")
    assert lines[0].startswith("No candidate device has")
    assert any("B200 misses the target" in line and "ITL p90 6.01 ms > 5 ms" in line for line in lines)
    # the file gives no TTFT p90: a TTFT limit cannot be judged, and nothing is said to meet it
    unknown = _answers(lake, token_target.Target(ttft_p90_ms=1000))
    assert {a.status for a in unknown} == {"not known"} and "no TTFT p90 in its runs" in unknown[0].why


def test_a_tpot_limit_is_never_applied_to_an_itl_figure(lake: Path) -> None:
    """TPOT (per request) and ITL (every token gap) are different measures: the file states ITL only, so a TPOT
    limit cannot be judged from it, and the answer says which figure the file has."""
    tpot = _answers(lake, token_target.Target(tpot_p90_ms=50))
    assert {a.status for a in tpot} == {"not known"}
    assert all("no TPOT p90 in its runs; its source states ITL p90" in a.why for a in tpot)
    lines = token_target.sentences(tpot, SHAPE, token_target.Target(tpot_p90_ms=50), "USD")
    assert lines[0].startswith("No candidate device has") and "TPOT p90 ≤ 50 ms" in lines[0]


def test_decide_page_answers_the_token_question(lake: Path) -> None:
    at = open_page("decide", {"device": GPUS, "mode": "infer", "itl": "20"})
    said = "\n".join(shown(m.value) for m in at.markdown)
    assert "Fewest joules per output token with ITL p90 ≤ 20 ms" in said
    assert "**H100 SXM** at batch not stated, bf16, max_num_seqs 96: 0.103 J/token" in said
    table = next(df.value for df in at.dataframe if "Energy per output token (J)" in df.value.columns)
    assert table["Device"].tolist()[:2] == ["H100 SXM", "B200"] and set(table["Basis"]) == {"imported"}
    at.number_input(key="itl").set_value(50).run()
    said = "\n".join(shown(m.value) for m in at.markdown)
    assert "**B200** at batch not stated, bf16, max_num_seqs 256: 0.0705 J/token" in said
    assert at.query_params["itl"] in ("50", ["50"])  # the link keeps the user's limit


def test_compare_ranks_configurations_by_energy_per_token(lake: Path) -> None:
    """Compare's all-devices table: token columns appear when a row has them, sorted by J/token lowest first."""
    import polars as pl

    from explorer import compare

    with Store.open(lake) as store:  # the page adds each row's cost; not the subject here
        runs = queries.runs_table(store).with_columns(
            pl.lit(None, pl.Float64).alias("cost_per_1m_samples"),
            pl.lit(None, pl.Float64).alias("electricity_cost_per_1m"))
    table = compare.config_table(runs.filter(runs["device_name"].is_in(GPUS)), None, compare.METRICS["j_per_token"],
                                 "USD")
    assert {"Output tokens/s", "Energy per output token (J)", "Inter-token latency p90 (ms)"} <= set(table.columns)
    first = table.row(0, named=True)
    # B200 at max_num_seqs 2048: 0.0467 J/token, 14,799 tokens/s, ITL p90 175 ms
    assert (first["Device"], first["Tag"]) == ("B200", "max_num_seqs 2048")
    assert first["Energy per output token (J)"] == pytest.approx(0.046696, abs=1e-6)
    assert first["Output tokens/s"] == pytest.approx(14799.3, abs=0.1)
    assert table["Energy per output token (J)"].is_sorted()
    reference = compare.config_table(runs.filter(~runs["device_name"].is_in(GPUS)), None,
                                     compare.METRICS["throughput"], "USD")
    assert "Output tokens/s" not in reference.columns  # no generation rows: no empty token columns


def test_cost_per_million_output_tokens(lake: Path) -> None:
    """Cost page: the per-sample formula applied per output token, for rows that measured tokens."""
    from decision import cost

    with Store.open(lake) as store:
        runs = queries.runs_table(store)
    settings = CostSettings(electricity_per_kwh=0.30, utilisation=0.5, lifetime_years=3.0)
    costed = cost.with_cost(runs.filter(runs["device_name"] == "H100 SXM"), {"H100 SXM": 25_000.0}, {}, {}, settings)
    row = costed.filter(costed["tag"] == "max_num_seqs 384").row(0, named=True)
    # 0.07423 J/token x 1e6 / 3.6e6 x 0.30 + 25,000 / (9,248 tokens/s x 3 years x 0.5) x 1e6
    energy = 0.074234 * 1e6 / 3.6e6 * 0.30
    hardware = 25_000 / (9248.012 * 3 * 365.25 * 24 * 3600 * 0.5) * 1e6
    assert row["cost_per_1m_tokens"] == pytest.approx(energy + hardware, rel=1e-4)
    ranked, _ = cost.rank(costed, cost.Constraints())
    table = cost.ranking_table(ranked, "USD")
    assert {"Output tokens/s", "Energy per output token (J)", "Cost (USD per 1M output tokens)"} <= set(table.columns)


def test_the_same_architecture_is_one_model_whoever_published_it() -> None:
    assert token_target.model_key("meta-llama/Llama-3.1-8B-Instruct") == "llama-3.1-8b"  # == llm-8b's model
    assert token_target.model_key("Qwen/Qwen2.5-0.5B-Instruct") == "qwen2.5-0.5b"  # == llm-0.5b's model
    assert token_target.model_key("lmsys/vicuna-7b-v1.3") == "vicuna-7b-v1.3"
    assert token_target.model_key(None) is None


def test_without_generation_runs_the_page_says_how_to_get_them(db: Path) -> None:
    at = open_page("decide", {"device": ["GeForce RTX 3060", "Jetson AGX Xavier"], "mode": "infer"})
    info = " ".join(i.value for i in at.info)
    assert "None of these devices has generation runs with energy per token" in info
    assert "upload a vLLM, ML.ENERGY or AI Energy Score result file" in info
