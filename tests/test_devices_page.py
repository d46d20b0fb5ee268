"""Devices edits and what they become on Decide and Cost: every typed value checked with
joulebench.ranges (the whole save refused, naming the row, the field and the range), a price the
user enters labelled 'entered by you, <date>' wherever it is cited, and no stored value, however
extreme but in range, able to crash Decide or Cost."""

from __future__ import annotations

from datetime import UTC, datetime
from pathlib import Path

import polars as pl
import pytest
from streamlit.testing.v1 import AppTest

from db import Store, catalog_edits, queries
from decision import cost, decide, figures, scope, sentences
from decision.money import CostSettings, Rates
from explorer.devices import catalog_view
from joulebench.errors import InvalidEditError
from tests.helpers import shown

APP = str(Path(__file__).resolve().parent.parent / "app.py")
STUDENT = ["GeForce RTX 3060", "Jetson AGX Xavier"]


def _edit(**values: object) -> pl.DataFrame:
    return pl.DataFrame([{"device_name": "GeForce RTX 3060", **values}])


@pytest.mark.parametrize(("field", "typed", "said"), [
    ("tdp_w", "-50", "GeForce RTX 3060: TDP (W): -50 is outside its range; enter a number above 0 up to 100,000"),
    ("tdp_w", "abc", "GeForce RTX 3060: TDP (W): 'abc' is not a number"),
    ("tdp_w", "1e308", "TDP (W): 1e+308 is outside its range"),
    ("memory_gb", "1e12", "memory (GB): 1,000,000,000,000 is outside its range"),
    ("price_amount", "-5", "price: -5 is outside its range"),
    ("price_date", "tomorrow-ish", "price date: 'tomorrow-ish' is not a date; write it as YYYY-MM-DD"),
])
def test_a_device_edit_out_of_range_is_refused_whole(db: Path, field: str, typed: str, said: str) -> None:
    with Store.open(db) as store:
        before = queries.devices(store)
        with pytest.raises(InvalidEditError) as e:
            catalog_edits.update_devices(store, _edit(notes="also changed", **{field: typed}))
        assert said in e.value.format_message()
        assert queries.devices(store).equals(before) and queries.device_edits(store).is_empty()


def test_blanking_a_spec_that_was_typed_as_text_is_refused_not_saved_as_empty(db: Path) -> None:
    """'abc' in a TDP cell reaches the check as text (the page edits numbers as text) and is refused."""
    with Store.open(db) as store:
        with pytest.raises(InvalidEditError, match="'abc' is not a number"):
            catalog_edits.update_devices(store, _edit(tdp_w="abc"))
        assert queries.device_catalog_row(store, "GeForce RTX 3060")["tdp_w"] == 170  # type: ignore[index]


@pytest.mark.parametrize(("rate", "date", "said"), [
    ("-2", "2024-01-01", "rate 1 (CAD to USD): rate: -2 is outside its range; enter a number above 0"),
    ("1e308", "2024-01-01", "rate: 1e+308 is outside its range"),
    ("abc", "2024-01-01", "'abc' is not a number"),
    ("0.7", "tomorrow-ish", "date: 'tomorrow-ish' is not a date"),
])
def test_an_exchange_rate_out_of_range_is_refused(db: Path, rate: str, date: str, said: str) -> None:
    table = pl.DataFrame([{"from_currency": "CAD", "to_currency": "USD", "rate": rate, "rate_date": date,
                           "source": "typed"}])
    with Store.open(db) as store:
        before = queries.exchange_rates(store)
        with pytest.raises(InvalidEditError) as e:
            catalog_edits.replace_exchange_rates(store, table)
        assert said in e.value.format_message()
        assert queries.exchange_rates(store)["rate"].to_list() == before["rate"].to_list()


def _answer(db: Path, constraints: cost.Constraints | None = None) -> decide.Answer:
    with Store.open(db) as store:
        runs, findings = queries.runs_table(store), queries.findings(store)
        catalog, modes = queries.devices(store), queries.power_modes(store)
        rates = Rates.from_frame(queries.exchange_rates(store))
    job = scope.job_from("train", scope.default_scope(runs, STUDENT, "train"), None)
    return decide.decide(runs, findings, catalog, modes, rates, STUDENT, job, CostSettings(electricity_per_kwh=0.3),
                         constraints or cost.Constraints())


def test_a_price_the_user_enters_is_theirs_wherever_it_is_cited(db: Path) -> None:
    today = datetime.now(UTC).date().isoformat()
    assert "000_62b0c31cb218ba3e" in _answer(db).per_device["GeForce RTX 3060"].price.source  # published
    with Store.open(db) as store:
        catalog_edits.update_devices(store, _edit(price_amount="1500", price_currency="usd"))
        row = queries.devices(store).filter(pl.col("device_name") == "GeForce RTX 3060").row(0, named=True)
        history = queries.device_edits(store)
    assert row is not None and row["price_entered_at"] is not None and row["price_source"] is None
    assert set(history["edited_by"]) == {"you (Devices page)"}
    price = _answer(db).per_device["GeForce RTX 3060"].price
    assert price.value == 1500 and price.basis == "entered by you"
    assert price.source == f"1,500 USD; entered by you, {today}" and "000_" not in price.source
    assert price.config == "covers the card only (needs a host PC)"
    with Store.open(db) as store:
        view = catalog_view(queries.devices(store))
    rtx = view.filter(pl.col("device_name") == "GeForce RTX 3060").row(0, named=True)
    assert rtx["price_from"] == f"entered by you, {today}" and rtx["price_amount"] == "1500"
    assert view.columns[:4] == ["device_name", "kind", "price_amount", "price_currency"]
    assert "price_entered_at" not in view.columns


def test_the_headline_names_the_best_device_that_fits_the_constraints(db: Path) -> None:
    with Store.open(db) as store:  # the RTX 3060 is still cheapest per sample at 1,500 USD
        catalog_edits.update_devices(store, _edit(price_amount="1500", price_currency="USD"))
    free = sentences.headline(_answer(db))
    assert "**GeForce RTX 3060** costs least per sample" in free
    ruled = shown(sentences.headline(_answer(db, cost.Constraints(budget=1000))))
    assert ruled.startswith("**In short:** the best device that fits the constraints is **Jetson AGX Xavier**")
    assert "Ruled out: **GeForce RTX 3060** breaks budget 1,000 USD (is 1,500 USD)" in ruled
    assert "RTX 3060** costs least" not in ruled
    none = shown(sentences.headline(_answer(db, cost.Constraints(budget=100))))
    assert none.startswith("**In short:** none of these devices fits the constraints")
    memory = shown(sentences.headline(_answer(db, cost.Constraints(min_memory_gb=16))))
    assert "fits the constraints is **Jetson AGX Xavier**" in memory


def test_prices_that_buy_different_things_are_flagged(db: Path) -> None:
    answer = _answer(db)
    warning = shown(sentences.price_coverage_warning(answer) or "")
    assert "**GeForce RTX 3060**'s price buys the card only (needs a host PC)" in warning
    assert "**Jetson AGX Xavier**'s price buys a complete system (developer kit)" in warning
    assert sentences.price_coverage_warning(_answer_of(db, ["A100 40GB", "Tesla T4"])) is None  # neither priced


def _answer_of(db: Path, devices: list[str]) -> decide.Answer:
    with Store.open(db) as store:
        runs, findings = queries.runs_table(store), queries.findings(store)
        catalog, modes = queries.devices(store), queries.power_modes(store)
        rates = Rates.from_frame(queries.exchange_rates(store))
    job = scope.job_from("infer", scope.default_scope(runs, devices, "infer"), None)
    return decide.decide(runs, findings, catalog, modes, rates, devices, job, CostSettings(), cost.Constraints())


def test_an_estimated_energy_figure_is_labelled_an_estimate() -> None:
    row = {"source_kind": "local", "energy_method": "estimated", "energy_boundary": "estimated"}
    assert figures.figure_basis(row, energy=True) == "estimate"
    assert figures.figure_basis({**row, "energy_method": "counter", "energy_boundary": "gpu_board"},
                               energy=True) == "measured here"
    assert figures.figure_basis(row) == "measured here"  # a throughput of that run was measured


def _run(page: str, **query: str | list[str]) -> AppTest:
    at = AppTest.from_file(APP, default_timeout=90)
    at.query_params.update(query)
    at.run()
    at.switch_page(f"pages/{page}.py").run()
    return at


def test_extreme_stored_values_in_range_crash_neither_decide_nor_cost(db: Path) -> None:
    """A CAD->USD rate of 30,000 once crashed Cost (StreamlitValueAboveMaxError): every widget whose
    value comes from stored data is held inside its range."""
    with Store.open(db) as store:
        catalog_edits.replace_exchange_rates(store, pl.DataFrame([{
            "from_currency": "CAD", "to_currency": "USD", "rate": "999999", "rate_date": "2024-01-01",
            "source": "typed"}]))
        catalog_edits.update_devices(store, _edit(price_amount="1000000000", price_currency="CAD", tdp_w="100000",
                                            memory_gb="100000"))
    for page, query in (("cost", {"workload": "bert-large-ner", "mode": "train", "currency": "USD"}),
                        ("decide", {"device": STUDENT, "mode": "train", "budget": "1e12", "max_w": "1e9"})):
        at = _run(page, **query)
        assert not at.exception, (page, at.exception)
        if page == "cost":  # the price box says whose price it starts from
            today = datetime.now(UTC).date().isoformat()
            assert any(f"entered by you, {today}; covers the card only" in shown(c.value) for c in at.caption)
    said = "\n".join(shown(m.value) for m in at.markdown)
    assert "entered by you" in "\n".join(str(c) for c in at.dataframe[0].value.to_numpy().ravel())
    assert "In short" in said


def test_the_example_button_loads_the_example(db: Path) -> None:
    at = _run("decide")
    assert not at.exception
    at.button(key="example").click().run()
    assert not at.exception, at.exception
    # new widgets (a new key generation) start from the example's link, in the browser too
    assert at.multiselect(key="devices_1").value == STUDENT
    assert at.number_input(key="kwh_1").value == pytest.approx(0.3)
    assert any("In short" in shown(m.value) for m in at.markdown)


def test_the_input_size_is_chosen_from_the_link_and_stated(db: Path) -> None:
    at = _run("decide", device=STUDENT, mode="train", seq="512")
    assert not at.exception, at.exception
    assert at.selectbox(key="seq_train").value == "512"
    assert any("sequence length 512" in shown(h.value) for h in at.subheader)
    at = _run("decide", device=STUDENT, mode="train")
    assert any("any input size" in shown(h.value) for h in at.subheader)
    assert at.query_params["seq"] in ("any", ["any"])  # the link carries it


def test_mixed_input_sizes_are_said_and_one_can_be_picked(db: Path) -> None:
    """A100 and T4 inference rows span several sequence lengths: 'any' says so, and a pick filters."""
    at = _run("decide", device=["A100 40GB", "Tesla T4"], mode="infer")
    assert not at.exception, at.exception
    assert at.selectbox(key="seq_infer").options == ["any: each figure states its own", "128 tokens", "384 tokens"]
    assert any("The data holds these input sizes: 128, 384 tokens" in shown(c.value) for c in at.caption)
    at.selectbox(key="seq_infer").set_value("128").run()
    assert not at.exception, at.exception
    assert any("sequence length 128" in shown(h.value) for h in at.subheader)
    assert at.query_params["seq"] in ("128", ["128"])


def test_cost_labels_an_estimated_energy_figure_an_estimate(db: Path) -> None:
    from decision import cost

    with Store.open(db) as store:
        runs = queries.runs_table(store)
    rows = runs.filter(pl.col("j_per_sample").is_not_null()).head(2)
    rows = rows.with_columns(pl.Series("energy_method", ["estimated", "counter"]),
                             pl.Series("energy_boundary", ["estimated", "gpu_board"]))
    costed = cost.with_cost(rows, {}, {}, {}, CostSettings())
    basis = costed["energy_basis"].to_list()
    assert basis[0].startswith("estimate") and "measured" not in basis[0] and "estimated" not in basis[1]


def test_a_price_entered_before_0010_is_found_in_the_edit_history(tmp_path: Path) -> None:
    from db import migrate
    from db.connection import connect

    con = connect(tmp_path / "old.duckdb")
    sql = {p.name: p.read_text() for p in sorted(migrate.MIGRATIONS_DIR.glob("*.sql"))}
    for name, text in sql.items():
        if not name.startswith("0010"):
            con.execute(text)
    con.execute("INSERT INTO device_edits (edited_at, device_name, column_name, old_value, new_value) VALUES "
                "('2025-01-02 10:00:00+00', 'GeForce RTX 3060', 'price_amount', '420.0', '399.0')")
    con.execute(sql["0010_price_entered_by_you.sql"])
    assert con.execute("SELECT device_name, CAST(entered_at AS DATE)::VARCHAR, entered_by FROM price_entries"
                       ).fetchall() == [("GeForce RTX 3060", "2025-01-02", "you (Devices page)")]
