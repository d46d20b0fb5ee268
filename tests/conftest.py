from __future__ import annotations

import os
import shutil
from pathlib import Path

import pytest

os.environ.setdefault("HF_HUB_OFFLINE", "1")
# Under pytest-xdist (`make test` runs two workers on a 2-core machine) each worker, and every process it starts,
# gets one thread of OpenMP and BLAS: their default, a thread per core in each worker, spins against the other
# worker's threads (test_tuning's leave-one-out took 150 s beside a busy worker instead of 10 s). Set here,
# before numpy, scikit-learn or torch is imported; the serial run keeps the defaults.
if os.environ.get("PYTEST_XDIST_WORKER"):
    for _threads in ("OMP_NUM_THREADS", "OPENBLAS_NUM_THREADS", "MKL_NUM_THREADS"):
        os.environ.setdefault(_threads, "1")

FIXTURES = Path(__file__).parent / "fixtures"
REPO = Path(__file__).resolve().parent.parent
OUTPUT = REPO / "test-output"


# Run alone after the rest (`make test` runs the rest on two workers): their assertions are about time
# (queueing ratios, energy windows a coarse sensor must resolve, kills at random moments, a server under
# several sessions), which a second worker's load on a 2-core machine would decide instead of the code.
SERIAL_FILES = frozenset({"test_generation.py", "test_profile_loop.py", "test_browser_live.py",
                          "test_concurrency.py", "test_db_birth.py"})


# Run by `make test-slow` (CI runs it after `make test`), so that `make test` stays within 10 minutes on 2 cores:
# scale, stress and benchmark checks, and journeys whose steps faster tests also take. Each entry says which.
SLOW = {
    "test_benchmarks_run.py": "each benchmark at its smallest size (the benchmarks print their own figures)",
    "test_browser.py::test_screenshots_of_every_page": "documentation screenshots; every page is drawn by test_pages",
    "test_browser.py::test_start_a_run_see_it_in_compare_then_cancel_one":
        "a real run from the browser; test_new_run starts, refuses and cancels one through the page",
    "test_access_server.py::test_clients_forwarded_by_a_trusted_proxy_are_throttled_separately":
        "a real server sleeping through the slowdown; test_who_a_guess_counts_against checks the rule",
    "test_access_server.py::test_guesses_from_other_loopback_addresses_count_as_one_client":
        "as above; test_every_loopback_address_is_one_shared_client checks the rule",
    "test_access_server.py::test_a_new_forwarded_address_per_guess_gets_no_fresh_start":
        "as above; test_a_shared_address_is_slowed_down_but_never_locked_out checks the rule",
    "test_serve_bench_hostile_process.py::test_bombs_and_a_200_mb_line_stay_under_1_gb":
        "peak memory under 2 GiB bombs; test_serve_bench_hostile refuses each bomb in process",
    "test_fuzz_imports.py::test_five_thousand_mutated_real_files_give_documents_or_clear_refusals":
        "5,000 mutations; test_import_properties mutates and truncates every fixture",
    "test_robustness.py::test_a_small_zip_of_many_large_members_is_read_one_member_at_a_time": "an archive at scale",
    "test_push_postgres.py::test_four_machines_push_at_once_to_postgres":
        "four pushers at once on PostgreSQL; test_push pushes concurrently to a catalog file",
    "test_push_postgres.py::test_a_team_decides_in_a_real_browser_from_what_two_runners_pushed":
        "the team journey on PostgreSQL; test_push's explorer reads a pushed store",
    "test_store_upkeep.py::test_upkeep_removes_the_files_a_killed_push_left_and_the_store_reads_the_same[postgres]":
        "the same upkeep on PostgreSQL as on the catalog file",
    "test_browser_mapping.py::test_a_real_long_table_without_units_is_mapped_in_three_choices":
        "a second mapping in a browser; test_mapping checks the same three choices and 30 runs, and the first "
        "browser mapping test takes the page's steps",
    "test_browser_mapping.py::test_a_meter_log_is_mapped_as_a_power_log_in_three_choices":
        "a power log mapped in a browser; test_mapping maps the same log to the same energy through the API",
    "test_power_settings_page.py::test_power_settings_page_in_a_real_browser":
        "the page in a browser; its AppTest tests check every answer on it",
    "test_browser_serving_compare.py": "a real engine swept, then Compare in a browser; test_serving_explorer and "
                                       "test_decide_serving_answers check the same answers through the page",
    "test_serve_bench.py::test_a_server_killed_mid_run_gives_an_interrupted_run":
        "a real engine killed; test_serve_bench_hostile_process kills and signals the client at every phase",
    "test_db_birth.py::test_a_killed_creation_leaves_no_database_or_a_complete_one":
        "kills at seeded random moments of a creation; the other test_db_birth tests check what a kill leaves",
    "test_concurrency.py::test_sessions_open_every_page_at_once_and_the_server_stays_healthy":
        "a server under several browser sessions; test_browser_live uses one while imports and a run land",
    "test_push.py::test_the_explorer_reads_the_team_store":
        "test_explorer_reads and test_read_only_controls read pushed team stores through the pages",
    "test_push.py::test_two_machines_share_the_reference_data_and_add_their_own":
        "test_push_postgres and the other test_push tests push from several machines",
    "test_secrets.py::test_no_command_prints_a_password": "every command run once; the other test_secrets tests "
                                                         "check each way a password travels",
    "test_browser.py::test_overview_renders_reference_data_in_a_real_browser": "test_pages draws the overview",
    "test_browser.py::test_compare_with_only_the_two_devices_shows_data":
        "test_browser's student and cost journeys use Compare in the browser; test_pages checks its filters",
    "test_browser.py::test_compare_shows_the_spread_of_repeats_and_whether_a_difference_is_noise":
        "as above; the spread and noise rule are checked in test_trust_grades and test_pages",
    "test_browser.py::test_compare_a100_and_t4_by_link_shows_a_multi_metric_table": "as above, by a link",
    "test_browser.py::test_a_device_named_with_markdown_shows_as_text":
        "test_hostile_labels shows hostile labels as literal text on every page",
    "test_browser.py::test_run_detail_shows_the_trust_grade_and_its_reasons":
        "test_pages and test_trust_grades check Run detail's grade and reasons",
    "test_browser_answers.py": "Decide and Cost in a browser; test_decide and test_reference_llm check the answers",
    "test_browser_goodput.py": "goodput on Decide in a browser; test_goodput_app checks the same count on the page",
    "test_browser_tokens.py": "J/token under a latency limit in a browser; test_token_target checks it on the page",
    "test_runner_output.py::test_two_sweeps_started_in_the_same_second_keep_every_run":
        "two real sweeps at once; the other test_runner_output tests check the file names and recovery",
    "test_tuning.py::test_nsdi23_v100_traces_leave_one_out": "a model fitted 8 times; test_tuning's others fit once",
    "test_derived_damage.py::test_export_works_and_the_derived_tables_are_rebuilt":
        "the other test_derived_damage tests rebuild each derived table",
    "test_ingest.py::test_export_import_export_gives_the_same_content":
        "the round trip at full size; test_labels exports and imports back",
    "test_browser_live.py::test_imports_and_a_run_while_the_app_is_open_all_show_and_the_inbox_ends_empty":
        "a real run and imports under an open browser; test_browser_live's next test shows a CLI import",
    "test_runner_interrupt.py::test_signal_during_a_sweep_keeps_finished_runs[15-143]":
        "SIGTERM as SIGINT is checked; test_runner_output kills a sweep with SIGKILL",
    "test_browser.py::test_student_decides_between_rtx3060_and_jetson_agx_xavier":
        "test_decide checks the student's answer; test_browser_buyer decides between devices in a browser",
    "test_browser.py::test_cost_ranking_moves_with_electricity_price":
        "test_pages checks the same move on the page; test_browser_buyer types a price in a browser",
    "test_browser.py::test_upload_an_exported_result_file":
        "test_browser_uploads and test_browser_mapping upload in a browser; test_pages imports an exported file",
    "test_serving_explorer.py::test_decide_gives_the_sweep_answer_in_a_real_browser":
        "test_decide_answers_from_the_sweeps_with_the_cost_split checks the same answer; Decide in a browser in "
        "test_browser_buyer",
    "test_serve_bench.py::test_rate_sweep_lands_in_the_database_with_the_servers_token_counts":
        "test_serve_bench_sweep_gpus sweeps the same real engine into a database",
    "test_import_atomic.py::test_an_upload_stopped_by_its_time_limit_commits_nothing_then_a_retry_adds_the_whole_set_once":
        "a 20 s stall by design; the killed-import tests check a stopped import commits nothing, and "
        "test_every_path_that_stops_an_import_writes_the_same_sentence its message",
    "test_grading_vectorised.py::test_a_database_of_ten_thousand_ungraded_runs_is_graded_as_each_run_alone":
        "scale; test_runs_graded_at_once_in_duckdb_match_each_run_graded_alone checks the same equality",
    "test_store_upkeep.py::test_snapshots_older_than_the_retention_are_expired_and_as_of_one_says_what_is_left[postgres]":
        "the same expiry on PostgreSQL as on the catalog file",
    "test_serve_bench_hostile_process.py::test_a_signal_during_the_warm_up_stops_it_and_records_the_point[15]":
        "SIGTERM takes SIGINT's path, checked in the same test's [2] case",
    "test_runner.py::test_every_mode_at_every_cpu_precision[fp32]":
        "the [bf16] case runs both modes; fp32 runs in test_cli_sweep_prints_a_summary_and_writes_next_to_the_database",
    "test_import_properties.py::test_labels_apply_whole_or_not_at_all":
        "a property search over label values; test_labels checks that a refused or failed label changes nothing",
    "test_push.py::test_every_command_takes_the_store_adds_locally_then_pushes_and_reads_any_snapshot":
        "every command once; test_the_cli_reports_what_it_pushed, test_db_info_and_export_read_a_team_store and "
        "test_runner's CLI sweep push to and read a team store",
    "test_push.py::test_a_team_store_with_its_files_in_s3_compatible_storage":
        "the same push with its files in a local S3 server; the other test_push tests push to a catalog's data folder",
    "test_push_postgres.py::test_a_pusher_killed_mid_push_leaves_whole_sources_and_the_next_push_finishes":
        "a real push SIGKILLed against PostgreSQL; test_store_upkeep kills a real push on the catalog file and "
        "test_push's killed push resumes, in make test",
    "test_mapping_cli.py::test_push_carries_the_recipes_to_the_team_store":
        "recipes ride the push every table rides (test_push); test_mapping_cli saves and reads them locally",
    "test_import_properties.py::test_truncated":
        "every fixture cut at 12 points by hypothesis (about 70 s of CPU over 350 fixtures); make test imports every "
        "fixture whole (test_every_sample_imports_without_any_label), random bytes (test_random_bytes) and hostile "
        "files (test_attacks)",
    "test_import_properties.py::test_mutated":
        "every fixture damaged 12 ways by hypothesis (about 70 s of CPU); make test keeps random bytes, hostile files "
        "and a cut fixture's refusal leaving the database unchanged (test_refused_files_never_change_the_database)",
}


def _slow(item: pytest.Item) -> bool:
    path, _, rest = item.nodeid.partition("::")  # a parameter may hold a '/': 'test_x[jetson/log.csv]'
    node = f"{path.split('/')[-1]}::{rest}" if rest else path.split("/")[-1]
    return any(node == key or node.startswith(key + "[") or (("::" not in key) and node.startswith(key + "::"))
               for key in SLOW)


def pytest_collection_modifyitems(items: list[pytest.Item]) -> None:
    for item in items:
        if item.path.name in SERIAL_FILES:
            item.add_marker(pytest.mark.serial)
        if _slow(item):
            item.add_marker(pytest.mark.slow)


@pytest.fixture(autouse=True)
def _isolated_default_db(tmp_path_factory: pytest.TempPathFactory, monkeypatch: pytest.MonkeyPatch) -> None:
    """No test may touch the user's real default database."""
    home = tmp_path_factory.mktemp("xdg")
    monkeypatch.setenv("XDG_DATA_HOME", str(home))
    monkeypatch.delenv("JOULEBENCH_DB", raising=False)


@pytest.fixture
def fixture_file() -> Path:
    return FIXTURES / "result_v1_cpu_runs.json"


@pytest.fixture(scope="session")
def seeded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database seeded with the reference data of the design sources, without the public LLM results
    (sample_data/runs_llm_*.csv): the tests that import the ML.ENERGY leaderboard file check its reader and
    what the pages make of it, which the same figures already stored as reference rows would turn into a
    duplicate (db.same_measurement). `full_seeded_db` is a fresh install's database, with every file."""
    from db import Store
    from joulebench.paths import SAMPLE_DATA_DIR

    folder = tmp_path_factory.mktemp("sample_data")
    for item in SAMPLE_DATA_DIR.iterdir():
        if item.is_file() and not item.name.startswith("runs_llm_"):
            shutil.copy(item, folder / item.name)
    path = tmp_path_factory.mktemp("seeded") / "template.duckdb"
    Store.open(path, sample_data=folder).close()
    return path


@pytest.fixture(scope="session")
def catalog_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A database seeded with the device catalog (devices, power modes) and no reference run: for tests that
    edit a device's price or push a catalog, where the reference runs would only make each push longer."""
    from db import Store
    from joulebench.paths import SAMPLE_DATA_DIR

    folder = tmp_path_factory.mktemp("catalog_only")
    for name in ("devices.csv", "power_modes.csv", "documents.csv"):
        shutil.copy(SAMPLE_DATA_DIR / name, folder / name)
    path = tmp_path_factory.mktemp("catalog") / "template.duckdb"
    Store.open(path, sample_data=folder).close()
    return path


@pytest.fixture(scope="session")
def full_seeded_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    from db import Store

    path = tmp_path_factory.mktemp("full") / "template.duckdb"
    Store.open(path).close()
    return path


@pytest.fixture
def full_seeded_db(full_seeded_template: Path, tmp_path: Path) -> Path:
    """A fresh copy of the database a fresh install makes: every reference file, the LLM results included."""
    path = tmp_path / "full.duckdb"
    shutil.copy(full_seeded_template, path)
    return path


@pytest.fixture(scope="session")
def bare_template(tmp_path_factory: pytest.TempPathFactory) -> Path:
    """A migrated database without the reference data: a runner's file for tests where the reference sources
    would only make each push longer."""
    from db import Store

    path = tmp_path_factory.mktemp("bare") / "template.duckdb"
    Store.open(path, seed_reference=False).close()
    return path


@pytest.fixture
def seeded_db(seeded_template: Path, tmp_path: Path) -> Path:
    """A fresh copy of a database seeded with the reference data."""
    path = tmp_path / "seeded.duckdb"
    shutil.copy(seeded_template, path)
    return path


@pytest.fixture
def db(seeded_db: Path, monkeypatch: pytest.MonkeyPatch) -> Path:
    """A seeded database the app's pages open (JOULEBENCH_DB), with Streamlit's caches cleared."""
    monkeypatch.setenv("JOULEBENCH_DB", str(seeded_db))
    import streamlit as st

    st.cache_data.clear()
    st.cache_resource.clear()
    return seeded_db


@pytest.fixture(scope="session")
def output_dir() -> Path:
    OUTPUT.mkdir(exist_ok=True)
    return OUTPUT
