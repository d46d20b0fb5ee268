"""Money split everywhere (issue 28 item 6): cost per 1M samples or output tokens as electricity + hardware =
total, the electricity shown even when no device price is known (the hardware part then says how to get it),
the user's price called theirs, the amortisation written out with its numbers, on Decide, Cost and
`joulebench decide`; a duty cycle typed as hours a day."""

from __future__ import annotations

import json
import re
import shutil
import subprocess
import sys
from pathlib import Path

import pytest

from db import Store, queries
from decision import cost, decide, scope, sentences, tables
from decision.money import NO_PRICE, SECONDS_PER_YEAR, CostSettings, Rates, cost_terms
from decision.text import sig
from ingest import import_file
from tests.helpers import open_page, page_texts, shown

LEADERBOARD = (Path(__file__).parent / "fixtures" / "formats" / "zeus_mlenergy"
               / "mlenergy-v3-leaderboard-llama31-8b-lm-arena-chat.json")
STUDENT = ["GeForce RTX 3060", "Jetson AGX Xavier"]
WORKLOAD = "meta-llama/Llama-3.1-8B-Instruct:lm-arena-chat"


@pytest.fixture(scope="module")
def llm_db(seeded_template: Path, tmp_path_factory: pytest.TempPathFactory) -> tuple[Path, dict[str, str]]:
    """The seeded store with the ML.ENERGY v3 file imported (devices without a price); each GPU of the file
    with the name the store gave it."""
    path = tmp_path_factory.mktemp("split") / "split.duckdb"
    shutil.copy(seeded_template, path)
    report = import_file(LEADERBOARD, db=path)
    with Store.open_reading(path) as store:
        runs = queries.runs_table(store)
    mine = runs.filter(runs["run_id"].is_in(report.run_ids))
    b200 = mine.filter(mine["tag"] == "max_num_seqs 2048")["device_name"][0]  # only B200 ran 2048
    h100 = mine.filter(mine["device_name"] != b200)["device_name"][0]
    return path, {"B200": b200, "H100": h100}


def _frugal(gpu: str) -> dict:
    """The file's configuration of `gpu` with the least energy per request (the cheapest without a price)."""
    configs = [c for c in json.loads(LEADERBOARD.read_text())["configurations"] if c["gpu_model"] == gpu]
    return min(configs, key=lambda c: c["energy_per_request_joules"])


def _answer(db: Path, devices: list[str], mode: str, settings: CostSettings) -> decide.Answer:
    with Store.open_reading(db) as store:
        runs, findings = queries.runs_table(store), queries.findings(store)
        catalog, modes = queries.devices(store), queries.power_modes(store)
        rates = Rates.from_frame(queries.exchange_rates(store))
    job = scope.job_from(mode, scope.default_scope(runs, devices, mode), None)
    return decide.decide(runs, findings, catalog, modes, rates, devices, job, settings, cost.Constraints())


def test_decide_splits_each_cost_and_writes_the_amortisation_out(seeded_template: Path) -> None:
    """With prices: electricity + hardware = total in the sentence and the figure table, and the hardware part
    is the price over the samples of the lifetime, with those numbers written beside it."""
    settings = CostSettings(electricity_per_kwh=0.30, lifetime_years=3.0, utilisation=0.1)
    answer = _answer(seeded_template, STUDENT, "train", settings)
    costed = answer.costed()
    assert costed, [answer.per_device[d].cost_missing for d in STUDENT]
    said = "\n".join(shown(s) for s in sentences.verdict(answer)).replace("**", "")
    assert "Electricity + hardware per 1M samples, at your electricity price of 0.3 USD per kWh: " in said
    table = tables.figure_table(answer)
    for d in costed:
        ans = answer.per_device[d]
        price, tp, j = ans.price.value, ans.cost_throughput.value, ans.cost_energy.value
        assert price is not None and tp is not None and j is not None
        hardware = price / (tp * 3.0 * SECONDS_PER_YEAR * 0.1) * 1e6  # by hand
        idle = ans.idle_power.value or 0.0
        electricity = (j + idle / tp * 0.9 / 0.1) * 1e6 / 3.6e6 * 0.30
        assert ans.cost_at(0.1) == pytest.approx(electricity + hardware)
        rows = {r["Figure"]: r for r in table.filter(table["Device"] == d).iter_rows(named=True)}
        assert rows["Electricity per 1M samples"]["Value"] == f"{sig(electricity)} USD"
        assert rows["Hardware per 1M samples"]["Value"] == f"{sig(hardware)} USD"
        assert rows["Hardware per 1M samples"]["Source or derivation"].startswith(
            f"hardware = {sig(price)} USD ÷ ({sig(tp)} samples/s × 3 years × 31,557,600 s a year × 0.1 busy)")
        split = f"{sig(electricity)} USD electricity + {sig(hardware)} USD hardware = {sig(ans.cost_at(0.1))} USD"
        assert f"{d} {split}" in said, said
        assert rows["Cost per 1M samples at 10% utilisation"]["Source or derivation"].startswith(split)
    workings = "\n".join(tables.cost_workings(answer))
    assert "hardware = " in workings and "(your price)" in workings


def test_without_a_price_the_electricity_is_still_shown_with_the_way_to_the_rest(
        llm_db: tuple[Path, dict[str, str]]) -> None:
    """ML.ENERGY's B200 and H100 have no price: the cost was blank; now the electricity part shows (J/request x
    1e6 / 3.6e6 x price) and the hardware part says where to add a price."""
    db, names = llm_db
    settings = CostSettings(electricity_per_kwh=0.15)
    answer = _answer(db, [names["B200"], names["H100"]], "infer", settings)
    said = "\n".join(shown(s) for s in sentences.verdict(answer)).replace("**", "")
    for gpu, name in names.items():
        assert answer.per_device[name].cost_per_1m is None  # no price, no total
        electricity = _frugal(gpu)["energy_per_request_joules"] * 1e6 / 3.6e6 * 0.15
        assert f"{name} {sig(electricity)} USD electricity + hardware not known ({NO_PRICE})" in said, said
        rows = {r["Figure"]: r for r in tables.figure_table(answer).filter(
            tables.figure_table(answer)["Device"] == name).iter_rows(named=True)}
        assert rows["Electricity per 1M samples"]["Value"] == f"{sig(electricity)} USD"
        assert rows["Hardware per 1M samples"]["Source or derivation"] == NO_PRICE


def test_the_cost_page_shows_electricity_per_output_token_without_a_price(
        llm_db: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    db, names = llm_db
    monkeypatch.setenv("JOULEBENCH_DB", str(db))
    at = open_page("cost", {"workload": WORKLOAD, "mode": "infer", "kwh": "0.3"})
    text = "\n".join(shown(t) for t in page_texts(at)).replace("**", "")
    assert "Electricity only: no device price" in text
    for gpu, name in names.items():
        best = _frugal(gpu)
        per_token = best["energy_per_token_joules"] * 1e6 / 3.6e6 * 0.3
        found = re.search(rf"^{re.escape(name)} \(.*max_num_seqs (\d+)\): .*?; ([\d.]+) USD electricity \+ hardware "
                          rf"not known \({NO_PRICE}\) per 1M output tokens\.$", text, re.MULTILINE)
        assert found and int(found.group(1)) == best["max_num_seqs"], text
        assert found.group(2) == sig(per_token)
        assert f"{sig(best['energy_per_token_joules'])} J/output token × 1,000,000 ÷ 3,600,000 × 0.3 USD per kWh " \
               "(your price)" in text


def test_a_duty_cycle_is_typed_as_hours_a_day(llm_db: tuple[Path, dict[str, str]],
                                              monkeypatch: pytest.MonkeyPatch) -> None:
    """'8 hours a day' is typed as it is said, and the page says it back in hours."""
    db, _ = llm_db
    monkeypatch.setenv("JOULEBENCH_DB", str(db))
    at = open_page("cost", {"workload": WORKLOAD, "mode": "infer"})
    at.radio(key="util_as").set_value("hours a day").run()
    at.number_input(key="util_hours").set_value(8.0).run()
    assert not at.exception
    text = "\n".join(shown(t) for t in page_texts(at)).replace("**", "")
    assert "33% utilisation (8 hours a day)" in text, text[:2000]
    assert at.query_params["util"] == f"{8 / 24:g}"


def test_the_command_prints_the_split_and_its_numbers(llm_db: tuple[Path, dict[str, str]]) -> None:
    db, names = llm_db
    done = subprocess.run([sys.executable, "-m", "cli", "decide", "--device", names["B200"], "--device",
                           names["H100"], "--mode", "infer", "--price-kwh", "0.3", "--db", str(db)],
                          capture_output=True, text=True, timeout=120)
    assert done.returncode == 0, done.stderr
    electricity = _frugal("B200")["energy_per_request_joules"] * 1e6 / 3.6e6 * 0.3
    assert "Cost per 1M samples: electricity + hardware, each with its numbers" in done.stdout
    assert f"{names['B200']}: {sig(electricity)} USD electricity + hardware not known ({NO_PRICE}) per 1M samples" \
        in done.stdout
    assert f"× 0.3 USD per kWh (your price) × PUE 1 = {sig(electricity)} USD per 1M samples" in done.stdout


def test_terms_and_split_agree() -> None:
    """The split is the same sum as the crossover's terms (A + B ÷ u), at any utilisation."""
    from decision.money import cost_split

    for u in (0.05, 1 / 3, 1.0):
        s = CostSettings(electricity_per_kwh=0.2, pue=1.3, lifetime_years=4, utilisation=u)
        split = cost_split(12.0, 40.0, 55.0, 2500.0, s)
        assert split.total == pytest.approx(cost_terms(12.0, 40.0, 55.0, 2500.0, s).at(u))


def test_compare_shows_the_electricity_part_without_a_device_price(
        llm_db: tuple[Path, dict[str, str]], monkeypatch: pytest.MonkeyPatch) -> None:
    """Compare's table gives the electricity per 1M samples beside the total: the GPUs of the file have no price,
    so the total is empty, but the electricity (J per request x 1e6 / 3.6e6 x the default 0.15 USD/kWh, no idle
    power known) is shown, checked against the file by hand for B200 at max_num_seqs 8."""
    from tests.test_pages import _frame

    db, names = llm_db
    monkeypatch.setenv("JOULEBENCH_DB", str(db))
    at = open_page("compare", {"workload": WORKLOAD, "mode": "infer"})
    table = _frame(at, "Electricity per 1M samples (USD)", "Cost per 1M samples (USD)", "Tag")
    row = table[(table["Device"] == names["B200"]) & (table["Tag"] == "max_num_seqs 8")].iloc[0]
    per_request = next(c for c in json.loads(LEADERBOARD.read_text())["configurations"]
                       if c["gpu_model"] == "B200" and c["max_num_seqs"] == 8)["energy_per_request_joules"]
    assert row["Electricity per 1M samples (USD)"] == pytest.approx(per_request * 1e6 / 3.6e6 * 0.15, rel=1e-6)
    assert row["Cost per 1M samples (USD)"] is None or row["Cost per 1M samples (USD)"] != \
        row["Cost per 1M samples (USD)"]  # missing (None or NaN): no price, never 0
