"""One device, one name (issue 28 item 5): a device string a file states is stored under the catalog entry of
the same part (family, memory size, form factor), never across form factors or power classes; an ambiguous
one waits for a person's choice (the command line says which entries it could be); an unknown one is added
once and reused; the mapping is shown and changeable (Devices page, `joulebench device-name`), re-pointing
the stored runs."""

from __future__ import annotations

import csv
from pathlib import Path

import pytest
from streamlit.testing.v1 import AppTest

from cli.main import main
from db import Store, queries
from importers import Hints
from importers.archive import sources_from_path
from importers.device_text import device_named, kind_of_device
from ingest import import_source
from ingest.device_names import CatalogEntry, match, parse
from ingest.service import import_sources
from joulebench.paths import REPO_ROOT

FORMATS = Path(__file__).resolve().parent / "fixtures" / "formats"
MLENERGY_V3 = FORMATS / "zeus_mlenergy" / "mlenergy-v3-leaderboard-llama31-8b-lm-arena-chat.json"
CODECARBON_A100 = FORMATS / "codecarbon" / "lightspec-a100sxm4_emissions.csv"
NVIDIA_SMI_H100 = (FORMATS / "ai_energy_score"
                   / "neuralwatt-ai_energy_benchmarks-preAIES-nvidia_smi_log-h100-llama3.3-2025-03.csv")
APP = str(REPO_ROOT / "app.py")


def _catalog() -> list[CatalogEntry]:
    """The reference catalog as shipped (sample_data/devices.csv)."""
    with (REPO_ROOT / "sample_data" / "devices.csv").open(newline="") as f:
        return [CatalogEntry(r["name"], float(r["tdp_w"]) if r["tdp_w"] else None,
                             float(r["memory_gb"]) if r["memory_gb"] else None) for r in csv.DictReader(f)]


PCIE_H100 = CatalogEntry("H100 80GB", 350.0, 80.0)  # the catalog's H100 80GB: the 350 W PCIe card


@pytest.mark.parametrize(("name", "family", "memory_gb", "form"), [
    ("NVIDIA A100-SXM4-40GB", "a100", 40, "sxm"),
    ("NVIDIA H200-SXM-141GB", "h200", 141, "sxm"),
    ("Tesla V100-SXM2-16GB", "v100", 16, "sxm"),
    ("NVIDIA H100 80GB HBM3", "h100", 80, "sxm"),  # nvidia-smi's name of the SXM5 part (PCIe: HBM2e)
    ("H100-SXM-80GBx8_TRT", "h100", 80, "sxm"),  # an MLPerf system name
    ("1xSMC-H100-SXM-80GB", "h100", 80, "sxm"),
    ("H100 80GB PCIe Gen5", "h100", 80, "pcie"),
    ("NVIDIA H100 NVL", "h100", None, "nvl"),
    ("GeForce RTX 2070 with Max-Q Design", "rtx 2070", None, "laptop"),
    ("Jetson AGX Orin Developer Kit", "jetson agx orin", None, "devkit"),
    ("NVIDIA Jetson AGX Xavier [16GB]", "jetson agx xavier", 16, None),
    ("NVIDIA GeForce RTX 4090", "rtx 4090", None, None),
    ("Intel(R) Xeon(R) Platinum 8259CL CPU @ 2.50GHz", None, None, None),
])
def test_a_name_is_parsed_into_family_memory_and_form_factor(name: str, family: str | None, memory_gb: int | None,
                                                             form: str | None) -> None:
    ident = parse(name)
    assert (ident.family, ident.memory_gb, ident.form) == (family, memory_gb, form)


def test_the_catalog_h100_80gb_is_the_pcie_card_by_its_power() -> None:
    assert parse("H100 80GB", tdp_w=350, memory_gb=80).form == "pcie"
    assert parse("H100 SXM", tdp_w=700, memory_gb=80).form == "sxm"
    assert parse("A100 40GB", tdp_w=300, memory_gb=40).form is None  # no A100 40GB part is 300 W: not known


@pytest.mark.parametrize("name", ["H100", "NVIDIA H100 80GB HBM3", "H100-SXM-80GB", "H100 80GB SXM5"])
def test_never_across_form_factors_an_sxm_h100_is_not_the_pcie_card(name: str) -> None:
    found = match(name, [PCIE_H100, CatalogEntry("H100 NVL", 400.0, 94.0)], source_format="mlenergy-leaderboard")
    assert found.device_name != "H100 80GB" and "H100 80GB" not in found.candidates
    assert found.how == "added" and found.device_name is not None and "SXM" in found.device_name


def test_never_across_power_classes_a_stated_tdp_decides() -> None:
    assert match("H100 PCIe", [PCIE_H100], tdp_w=700).how == "added"  # 700 W is no PCIe card's power
    assert match("H100 PCIe", [PCIE_H100], tdp_w=350).device_name == "H100 80GB"


def test_memory_sizes_must_agree_when_both_state_one() -> None:
    catalog = [CatalogEntry("Tesla V100 16GB", 300.0, 16.0), CatalogEntry("Tesla V100 32GB", 300.0, 32.0)]
    assert match("Tesla V100-SXM2-32GB", catalog).device_name == "Tesla V100 32GB"
    assert match("Tesla V100-SXM2-16GB", catalog).device_name == "Tesla V100 16GB"
    assert match("NVIDIA A100-SXM4-80GB", [CatalogEntry("A100 40GB", 400.0, 40.0)]).how == "added"


def test_an_ambiguous_name_is_never_mapped_silently() -> None:
    plain = match("H100", [PCIE_H100, CatalogEntry("H100 NVL", 400.0, 94.0)])  # no source that settles SXM
    assert plain.how == "ambiguous" and plain.device_name is None
    assert plain.candidates == ("H100 80GB", "H100 NVL") and "SXM, PCIe or NVL" in plain.reason
    h200 = match("NVIDIA H200", _catalog())
    assert h200.how == "ambiguous" and set(h200.candidates) == {"H200 NVL", "H200 SXM"}


@pytest.mark.parametrize(("name", "source_format", "how", "device_name"), [
    ("NVIDIA H200-SXM-141GB", None, "rule", "H200 SXM"),
    ("H100 80GB PCIe Gen5", "lambda-dlbench", "rule", "H100 80GB"),
    ("NVIDIA GeForce RTX 4090", "codecarbon", "rule", "GeForce RTX 4090"),
    ("Tesla T4", "optimum-benchmark", "exact", "Tesla T4"),
    ("Tesla V100-SXM2-16GB", "dllogger", "added", "V100 SXM 16GB"),  # the catalog's 16GB V100 is the 250 W card
    ("NVIDIA GeForce GTX 1650", "nvidia-smi", "added", "GeForce GTX 1650"),
    ("Apple M1 Pro", "codecarbon", "added", "Apple M1 Pro"),
])
def test_real_file_names_against_the_shipped_catalog(name: str, source_format: str | None, how: str,
                                                     device_name: str) -> None:
    found = match(name, _catalog(), source_format=source_format)
    assert (found.how, found.device_name) == (how, device_name)


def test_the_real_files_names_never_land_on_the_pcie_h100() -> None:
    """ML.ENERGY v3's 'H100'/'B200', MLPerf's 'H100-SXM-80GB', nvidia-smi's 'NVIDIA H100 80GB HBM3' (as the real
    files state them) against the shipped catalog: each is an SXM part, never the 350 W PCIe 'H100 80GB'."""
    catalog = _catalog()
    names = {r["device"]["name"] for r in _loaded(MLENERGY_V3).runs} | {r["device"]["name"] for r in
                                                                         _loaded(NVIDIA_SMI_H100).runs}
    assert names == {"H100", "B200", "NVIDIA H100 80GB HBM3"}
    for name, fmt in [("H100", "mlenergy-leaderboard"), ("B200", "mlenergy-leaderboard"),
                      ("H100-SXM-80GB", "mlperf-inference"), ("NVIDIA H100 80GB HBM3", "nvidia-smi")]:
        found = match(name, catalog, source_format=fmt)
        assert found.device_name != "H100 80GB", name
        assert found.how in ("exact", "rule", "added"), (name, found)
        assert parse(found.device_name or "").form == "sxm", (name, found)


def _loaded(path: Path) -> object:
    from importers import load_source

    return load_source(sources_from_path(path)[0], None)[0]


def _device_counts(db: Path) -> dict[str, int]:
    with Store.open(db, seed_reference=False) as store:
        rows = store.con.execute("SELECT device_name, count(*) FROM runs GROUP BY ALL").fetchall()
    return {r[0]: r[1] for r in rows}


def test_an_imported_run_lands_on_one_catalog_name(seeded_db: Path) -> None:
    """ML.ENERGY v3 (20 runs: 11 on 'H100', 9 on 'B200') into a real store: the runs are stored under the
    catalog's SXM entry and B200's one entry, the string the file stated kept in each run's notes; Compare's
    configurations and Decide's catalog show each device once; a second import of the same string reuses it."""
    with Store.open(seeded_db) as store:
        catalog = set(queries.devices(store)["device_name"].to_list())
    report, _ = import_source(sources_from_path(MLENERGY_V3)[0], db=seeded_db)
    assert report.runs_added == 20
    with Store.open(seeded_db, seed_reference=False) as store:
        runs = store.query(f"SELECT device_name, notes FROM runs WHERE source_id = {report.source_id}")
        configs = queries.configurations(store)
        devices = queries.devices(store)
        mapped = dict(store.con.execute("SELECT source_name, device_name FROM device_names").fetchall())
    names = set(runs["device_name"].to_list())
    assert "H100" not in names and "H100 80GB" not in names
    h100 = mapped["H100"]
    assert parse(h100).form == "sxm" and h100 in set(devices["device_name"].to_list())
    assert names == {h100, "B200"}
    h100_notes = runs.filter(runs["device_name"] == h100)["notes"].to_list()
    assert len(h100_notes) == 11 and all("device as stated in the file: 'H100'" in n for n in h100_notes)
    shown = set(configs.filter(configs["source_id"] == report.source_id)["device_name"].to_list()) \
        if "source_id" in configs.columns else set(configs["device_name"].to_list())
    assert "H100" not in shown and h100 in shown
    assert set(devices["device_name"].to_list()) - catalog <= {h100, "B200"}  # added once, no other name
    # the same string again (another file): reused, nothing added
    before = set(devices["device_name"].to_list())
    other = FORMATS / "zeus_mlenergy" / "mlenergy-lb-v3-task-sourcegraph-fim.json"
    import_source(sources_from_path(other)[0], db=seeded_db)
    with Store.open(seeded_db, seed_reference=False) as store:
        assert set(queries.devices(store)["device_name"].to_list()) == before
    assert "H100" not in _device_counts(seeded_db)


def test_an_ambiguous_name_is_said_and_a_choice_repoints_the_runs(seeded_db: Path,
                                                                   capsys: pytest.CaptureFixture[str]) -> None:
    """CodeCarbon's 'NVIDIA A100-SXM4-40GB': the catalog's 'A100 40GB' does not say it is the SXM part, so the
    import names the file, the string and the candidate, and how to choose; `joulebench device-name` then
    re-points its 7 runs (regraded) and removes the entry the import had added for the string."""
    assert main(["import", str(CODECARBON_A100), "--db", str(seeded_db)]) == 0
    said = capsys.readouterr().out
    assert "lightspec-a100sxm4_emissions.csv: the device 'NVIDIA A100-SXM4-40GB' is not mapped" in said
    assert "'A100 40GB'" in said and "joulebench device-name 'NVIDIA A100-SXM4-40GB' 'A100 40GB'" in said
    assert "A100 80GB PCIe" not in said  # another memory size: never a candidate
    assert _device_counts(seeded_db)["NVIDIA A100-SXM4-40GB"] == 7
    before = _device_counts(seeded_db).get("A100 40GB", 0)
    assert main(["device-name", "NVIDIA A100-SXM4-40GB", "A100 40GB", "--db", str(seeded_db)]) == 0
    assert "7 run(s) re-pointed" in capsys.readouterr().out
    counts = _device_counts(seeded_db)
    assert counts["A100 40GB"] == before + 7 and "NVIDIA A100-SXM4-40GB" not in counts
    with Store.open(seeded_db, seed_reference=False) as store:
        assert "NVIDIA A100-SXM4-40GB" not in set(queries.devices(store)["device_name"].to_list())
        stale = store.con.execute("SELECT count(*) FROM configurations c WHERE NOT EXISTS "
                                  "(SELECT 1 FROM runs r WHERE r.config_key = c.config_key)").fetchone()
        assert stale == (0,)
    # a later import of the same string uses the choice
    import_sources([(sources_from_path(CODECARBON_A100)[0], None)], db=seeded_db, hints=Hints(mode="train"))
    assert "NVIDIA A100-SXM4-40GB" not in _device_counts(seeded_db)
    assert main(["device-name", "NVIDIA A100-SXM4-40GB", "A100 80GB", "--db", str(seeded_db)]) != 0


def test_the_devices_page_lists_the_names_and_offers_the_change(db: Path) -> None:
    import_source(sources_from_path(CODECARBON_A100)[0], db=db)
    at = AppTest.from_file(APP, default_timeout=90)
    at.run()
    at.switch_page("pages/devices.py").run()
    assert not at.exception
    assert "Device names in imported files" in [s.value for s in at.subheader]
    table = next(d.value for d in at.dataframe if "Name in the files" in d.value.columns)
    row = table[table["Name in the files"] == "NVIDIA A100-SXM4-40GB"].iloc[0]
    assert row["Decided"] == "waits for your choice" and row["Could be"] == "A100 40GB"
    pick = next(s for s in at.selectbox if s.key == "device_name_pick")
    assert pick.options[0] == "A100 40GB"
    pick.set_value("A100 40GB").run()
    next(b for b in at.button if b.key == "device_name_save").click().run()
    assert not at.exception
    assert "NVIDIA A100-SXM4-40GB" not in _device_counts(db)


@pytest.mark.parametrize(("line", "named"), [
    ("bench on RTX 4060Ti 16GB, llama.cpp", "RTX 4060Ti 16GB"),
    ("AMD Instinct MI300X (192 GB)", "AMD Instinct MI300X"),
    ("Radeon RX 7900 XTX", "Radeon RX 7900 XTX"),
    ("Intel Arc A770 16GB", "Intel Arc A770"),
    ("Gaudi2 HPU", "Gaudi2"),
    ("NVIDIA GH200 480GB", "NVIDIA GH200"),
    ("RTX PRO 6000 Blackwell Workstation", "RTX PRO 6000 Blackwell"),
    ("model 3060 rows", None),  # bare digits are no card without a Ti or a family word
    ("rx 580 frames", None),
])
def test_cards_beyond_nvidia_and_a_ti_are_named_in_a_line(line: str, named: str | None) -> None:
    assert device_named(line) == named
    if named:
        assert kind_of_device(named) == "gpu"  # an Intel Arc or Gaudi is no CPU for all its maker's name


@pytest.mark.parametrize(("line", "named", "kind"), [
    ("**Device:** Samsung Galaxy S24 Ultra (SM-S938B)", "Samsung Galaxy S24 Ultra", "cpu"),
    ("measured on a Pixel 8 Pro", "Pixel 8 Pro", "cpu"),
    ("iPhone 15 Pro Max, Core ML", "iPhone 15 Pro Max", "cpu"),
    ("Snapdragon 8 Gen 3 (Hexagon NPU)", "Snapdragon 8 Gen 3", "cpu"),
    ("Cloud TPU v5e", "Cloud TPU v5e", "gpu"),
    ("the pixel 0 row", None, None),  # a pixel's index is no phone
])
def test_phones_their_chips_and_tpus_are_named_in_a_line(line: str, named: str | None, kind: str | None) -> None:
    assert device_named(line) == named
    if named:
        assert kind_of_device(named) == kind  # a phone runs on its own SoC: the cpu kind, as a board does


@pytest.mark.parametrize(("line", "named"), [
    ("**Hardware**: Mac Studio M3 Ultra (28 cores, 26 threads)", "Mac Studio M3 Ultra"),
    ("MacBook Pro M4 Max, 128 GB", "MacBook Pro M4 Max"),
    ("chip: M2 Pro", "M2 Pro"),
    ("Apple M1", "Apple M1"),
    ("step M3 of the plan", None),  # a bare 'M3' names no chip
])
def test_apple_chips_are_named_by_their_macs_or_their_variant(line: str, named: str | None) -> None:
    assert device_named(line) == named
