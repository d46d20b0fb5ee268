"""`joulebench recommend` and the Power settings page on the real Zeus V100 BERT profile, in AppTest
and in a real browser; the buying guide's best-setting function; too few settings said plainly."""

from __future__ import annotations

import shutil
from pathlib import Path

import pytest

from cli.main import main
from tests.test_browser import page, server  # noqa: F401  (fixtures)

ZEUS_V100_BERT = Path(__file__).parent / "fixtures" / "formats" / "zeus_mlenergy" / "zeus-plo-profile-v100-bert.csv"
PAGE = "pages/power_settings.py"


@pytest.fixture(scope="module")
def zeus_template(tmp_path_factory: pytest.TempPathFactory, seeded_template: Path) -> Path:
    path = tmp_path_factory.mktemp("zeus") / "zeus.duckdb"
    shutil.copy(seeded_template, path)
    assert main(["import", str(ZEUS_V100_BERT), "--device", "Tesla V100", "--workload", "bert-base-uncased",
                 "--db", str(path)]) == 0
    return path


@pytest.fixture
def seeded_db(zeus_template: Path, tmp_path: Path) -> Path:
    """Here the seeded database also holds the Zeus profile (the browser's `server` fixture uses it)."""
    path = tmp_path / "zeus.duckdb"
    shutil.copy(zeus_template, path)
    return path


def test_recommend_energy_on_the_zeus_profile(seeded_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recommend", "--device", "Tesla V100", "--workload", "bert-base-uncased", "--goal", "energy",
                 "--db", str(seeded_db)]) == 0
    out = capsys.readouterr().out
    assert "7 setting(s) measured" in out and "leave-one-out over 5 measured settings" in out
    assert "MAPE time 3.9%, power 0.8%" in out
    assert "Pareto front, time vs energy (fastest first): 250 W," in out
    assert "recommendation: at 150 W: -20% J/run, -18% throughput vs 250 W, measured" in out


def test_recommend_balanced_and_a_power_cap(seeded_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    assert main(["recommend", "--device", "Tesla V100", "--workload", "bert-base-uncased", "--goal", "balanced",
                 "--eta", "0.5", "--max-power", "180", "--db", str(seeded_db)]) == 0
    out = capsys.readouterr().out
    assert "balanced (Zeus): minimise 0.5 x energy + 0.5 x 250 W x time" in out
    line = next(x for x in out.splitlines() if x.startswith("recommendation: at "))
    watts = float(line.split("at ", 1)[1].split(" W", 1)[0])
    assert watts <= 185  # average power at most 180 W


def test_recommend_says_when_nothing_can_be_modelled(seeded_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The seeded blog data: the RTX 3060 at PL 100 W has speeds or energy, never both, so no setting has
    time and power to model (the two-point case itself: tests/test_tuning.py)."""
    code = main(["recommend", "--device", "GeForce RTX 3060", "--workload", "bert-base-ner", "--db", str(seeded_db)])
    err = capsys.readouterr().err
    assert code == 8
    assert "no setting with time and power measured (2 run(s): no energy or average power measured)" in err


def test_best_settings_for_the_buying_guide(seeded_db: Path) -> None:
    from db import Store
    from explorer.power_settings import best_settings

    with Store.open_read_only(seeded_db) as store:
        frame = best_settings(store, ["Tesla V100", "GeForce RTX 3060"], "bert-base-uncased", "energy")
    v100, rtx = frame.row(0, named=True), frame.row(1, named=True)
    assert v100["power_setting"] == "150 W" and v100["setting_basis"] == "measured"  # tied with 125 W: faster
    assert v100["energy_change_pct"] == pytest.approx(-20.5, abs=0.5) and v100["baseline_setting"] == "250 W"
    assert rtx["power_setting"] is None and "no finished runs" in rtx["why_not"]


def test_power_settings_page_in_apptest(seeded_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("JOULEBENCH_DB", str(seeded_db))
    at = AppTest.from_file(f"../{PAGE}", default_timeout=180).run()
    assert not at.exception, at.exception
    assert at.selectbox(key="ps_device").value == "Tesla V100"
    text = " ".join(m.value for m in at.markdown)
    assert "**Recommendation:** at 150 W: -20% J/run, -18% throughput vs 250 W, measured" in text
    assert len(at.get("plotly_chart")) == 2
    at.radio(key="ps_goal").set_value("speed").run()
    assert "at 250 W" in " ".join(m.value for m in at.markdown)


def test_the_page_state_is_in_the_link_and_a_bad_link_warns(seeded_db: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    from streamlit.testing.v1 import AppTest

    monkeypatch.setenv("JOULEBENCH_DB", str(seeded_db))
    at = AppTest.from_file(f"../{PAGE}", default_timeout=180)
    at.query_params.update({"device": "Tesla V100", "goal": "speed"})
    at.run()
    assert not at.exception and at.radio(key="ps_goal").value == "speed"
    assert "at 250 W" in " ".join(m.value for m in at.markdown)
    written = {k: v if isinstance(v, str) else v[0] for k, v in at.query_params.items()}
    assert written["device"] == "Tesla V100" and written["goal"] == "speed"
    bad = AppTest.from_file(f"../{PAGE}", default_timeout=180)
    bad.query_params["device"] = "Tesla V999"
    bad.run()
    assert not bad.exception and "device \\'Tesla V999\\'" in bad.warning[0].value  # escaped Markdown
    assert bad.selectbox(key="ps_device").value == "Tesla V100"  # the first with a profile, not an error


def test_with_no_profile_anywhere_the_page_says_how_to_get_one(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    """Issue 17: the page opened on a red error for a device with no profile, with no way forward."""
    from streamlit.testing.v1 import AppTest

    from ingest.service import open_store

    db = tmp_path / "reference-only.duckdb"
    open_store(db).close()  # the reference data only: runs at one setting, none with power measured
    monkeypatch.setenv("JOULEBENCH_DB", str(db))
    at = AppTest.from_file("../app.py", default_timeout=180).run()
    at.switch_page("pages/power_settings.py").run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert at.info[0].value.startswith("No device in this database has a power-setting profile yet")
    assert "Upload a profile" in at.info[0].value
    links = {link.proto.label for link in at.get("page_link")}
    assert "Upload a power-limit or power-mode profile" in links


def test_the_profile_button_starts_a_profile_through_the_runner(seeded_db: Path,
                                                                monkeypatch: pytest.MonkeyPatch) -> None:
    """Without a GPU the runner refuses a real power-limit change (`joulebench run --check` in a child
    process); the dry run is accepted and started as a profile."""
    from streamlit.testing.v1 import AppTest

    from explorer import jobs

    monkeypatch.setenv("JOULEBENCH_DB", str(seeded_db))
    at = AppTest.from_file(f"../{PAGE}", default_timeout=180).run()
    at.text_input(key="ps_run_workload").set_value("bert-tiny")
    at.button(key="FormSubmitter:profile-Start profiling").click().run()
    assert "needs a CUDA device; this sweep runs on cpu" in " ".join(e.value for e in at.error)
    started: list[jobs.RunRequest] = []

    def start(db: Path, request: jobs.RunRequest) -> jobs.Job:
        request.plan(db)  # the same check, in a child process; raises RunConfigError if refused
        started.append(request)
        return jobs.Job(pid=4242, started_at="now", planned_runs=4, out_path="x", log_path="y")

    monkeypatch.setattr(jobs, "start", start)
    at.checkbox(key="ps_run_dry").check()
    at.button(key="FormSubmitter:profile-Start profiling").click().run()
    assert not at.exception and not at.error, [e.value for e in at.error]
    assert "Profiling started: 4 settings to measure" in " ".join(s.value for s in at.success)
    argv = started[0].argv(seeded_db, seeded_db.with_suffix(".json"))
    assert "--profile" in argv and "--power-dry-run" in argv
    assert argv[argv.index("--power-limit") + 1] == "100,125,150,170"


@pytest.mark.browser
def test_power_settings_page_in_a_real_browser(server: str, page, output_dir: Path) -> None:  # type: ignore[no-untyped-def]  # noqa: F811
    browser_page = page
    browser_page.goto(f"{server}/power_settings")
    browser_page.get_by_text("Recommendation:").wait_for(timeout=120_000)
    browser_page.locator(".js-plotly-plot").nth(1).wait_for(timeout=60_000)
    browser_page.wait_for_timeout(1500)
    body = browser_page.inner_text("body")
    assert "at 150 W: -20% J/run, -18% throughput vs 250 W, measured" in body
    plots = browser_page.locator(".js-plotly-plot")
    curves, front = plots.nth(0).inner_text(), plots.nth(1).inner_text()
    assert "measured" in curves and "predicted" in curves and "prediction band" in curves
    assert "Pareto front" in front and "recommended" in front
    browser_page.screenshot(path=str(output_dir / "power-settings.png"), full_page=True)


def test_recommend_cost_converts_the_catalog_price_to_the_chosen_currency(
        seeded_db: Path, capsys: pytest.CaptureFixture[str]) -> None:
    """The cost goal weighs the device's price against electricity: both in one currency. A catalog
    price in CAD is converted with the stored rate (1 CAD = 0.80 USD, shipped); a currency without a
    rate is refused with the fix, never weighed unconverted."""
    import polars as pl

    from db import Store, queries
    from explorer import edits

    with Store.open(seeded_db) as store:
        v100 = queries.devices(store).filter(pl.col("device_name") == "Tesla V100")
    edits.save_device_edits(str(seeded_db), v100.with_columns(pl.lit(625.0).alias("price_amount"),
                                                             pl.lit("CAD").alias("price_currency")))
    base = ["recommend", "--device", "Tesla V100", "--workload", "bert-base-uncased", "--goal", "cost",
            "--price-kwh", "0.30", "--db", str(seeded_db)]

    def recommendation(*extra: str) -> str:
        assert main([*base, *extra]) == 0
        return next(x for x in capsys.readouterr().out.splitlines() if x.startswith("recommendation: "))

    converted = recommendation("--currency", "USD")
    assert converted == recommendation("--currency", "USD", "--device-price", "500")  # 625 CAD x 0.80
    assert converted.startswith("recommendation: at 150 W")
    # 625 taken as USD would tip it to 200 W (tied with 150 W within 1 %: the faster): either side of the flip
    assert recommendation("--currency", "USD", "--device-price", "625").startswith("recommendation: at 200 W")
    assert main([*base, "--currency", "EUR"]) == 8
    assert "no CAD to EUR exchange rate (add one on the Devices page)" in capsys.readouterr().err


def test_best_settings_per_sample_on_a_real_perseus_zeus_global_profile(seeded_db: Path) -> None:
    """The Perseus SOSP'24 ZeusGlobal A100 profile (one limit on all four pipeline stages) gives time
    and energy per iteration of known samples: the buying guide's row is per sample, measured."""
    import polars as pl

    from db import Store
    from explorer.power_settings import best_settings

    profile = ZEUS_V100_BERT.with_name("zeus-perseus-sosp24-zeus_global-A100.csv")
    assert main(["import", str(profile), "--device", "A100 80GB PCIe", "--db", str(seeded_db)]) == 0
    with Store.open_read_only(seeded_db) as store:
        row = best_settings(store, ["A100 80GB PCIe"], "bert-huge-uncased", "energy").row(0, named=True)
        at_best = store.query("SELECT throughput_sps, j_per_sample FROM runs WHERE device_name = 'A100 80GB PCIe' "
                              "AND workload = 'bert-huge-uncased' AND power_limit_w = 250 AND batch_size = 8")
    assert (row["power_setting"], row["setting_basis"]) == ("250 W", "measured")
    assert row["recommendation"] == "at 250 W: -8% J/sample, -7% throughput vs 300 W, measured"
    assert row["j_per_sample"] == pytest.approx(at_best["j_per_sample"].mean(), rel=1e-9)
    assert row["throughput_sps"] == pytest.approx(at_best["throughput_sps"].mean(), rel=1e-9)
    assert at_best.height >= 1 and not at_best.filter(pl.col("j_per_sample").is_null()).height
