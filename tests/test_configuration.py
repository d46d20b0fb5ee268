"""One definition of a measurement point (issue 37): every stored run field that changes a result is a field of
joulebench.configuration or named as not a setting with the reason; every place that groups runs derives from it;
Compare never puts two loads, two length shapes or two engines in one bar or ratio; an overloaded point is never a
series' best, a ratio's basis or a reference; and no module but joulebench.metrics writes a metric label."""

from __future__ import annotations

import ast
import re
from pathlib import Path

import polars as pl
import pytest

import decision.like_for_like as like_for_like
import explorer.compare as compare
import explorer.compare_ratios as compare_ratios
from db.columns import config_fields, run_arrow_schema
from db.grading import STAT_METRICS, config_key
from joulebench import configuration
from joulebench.configuration import FIELDS, NAMES, NOT_SETTINGS, VIEWS, View
from joulebench.metrics import AGGREGATED, DERIVED, METRICS, RunKind, run_kind

REPO = Path(__file__).resolve().parent.parent


def test_every_stored_setting_is_defined_once_or_said_not_to_change_a_result() -> None:
    stored = set(config_fields())
    defined, not_settings = set(NAMES), set(NOT_SETTINGS)
    assert not defined & not_settings
    missing = stored - defined - not_settings
    assert not missing, (f"config fields {sorted(missing)} are in no definition: add each to "
                         "joulebench.configuration.FIELDS, or to NOT_SETTINGS with why it does not change a result")
    columns = set(run_arrow_schema().names)
    assert defined <= columns, sorted(defined - columns)
    assert len(NAMES) == len(set(NAMES))


def test_every_view_derives_from_the_definition_and_names_what_it_leaves_out() -> None:
    assert configuration.KEY_ALWAYS + configuration.KEY_WHERE_STATED == NAMES
    knobs = {"power_limit_w", "power_mode"} if "power_setting" in like_for_like.KNOB_FIELDS else set()
    assert set(like_for_like.JOB_FIELDS) | set(like_for_like.KNOB_FIELDS) - {"power_setting"} | knobs \
        == set(configuration.LIKE_FOR_LIKE.fields)
    for view in VIEWS:
        assert set(view.fields) | set(view.left_out) == set(NAMES), view.name
        assert all(why for why in view.left_out.values()), view.name
    with pytest.raises(ValueError, match="not configuration fields"):
        View("typo", {"request_rate": "misspelt"})
    assert "Environment" in configuration.COMPARE.ignores_text()


def test_no_module_writes_the_configuration_out_by_hand() -> None:
    """A literal list of most of the fields every key hashes, outside joulebench.configuration, is a second
    definition (db.same_measurement's had no load, lengths or engine): derive it from a View instead."""
    always = set(configuration.KEY_ALWAYS)
    found = []
    for path in sorted(REPO.glob("*/*.py")):
        if path.parts[-2] in ("tests", ".venv") or path.name == "configuration.py":
            continue
        for node in ast.walk(ast.parse(path.read_text(), str(path))):
            if isinstance(node, ast.Tuple | ast.List | ast.Set):
                named = {e.value for e in node.elts if isinstance(e, ast.Constant)} & always
                if len(named) > len(always) / 2:
                    found.append(f"{path.relative_to(REPO)}:{node.lineno}")
    assert not found, found


def test_one_measurement_brought_twice_is_told_apart_only_by_what_both_copies_state() -> None:
    from db import same_measurement

    served = {"engine": "vllm", "request_rate_per_s": 2.0}
    assert same_measurement._same_settings(served, {"engine": None, "request_rate_per_s": 2.0})
    assert not same_measurement._same_settings(served, {"engine": "vllm", "request_rate_per_s": 4.0})
    assert "request_rate_per_s" in configuration.SAME_MEASUREMENT.fields


def test_a_load_or_an_engine_makes_a_serving_point_as_the_definition_gives_them() -> None:
    from joulebench.metrics import KIND_FIELDS

    for field in FIELDS:
        if field.role in (configuration.Role.LOAD, configuration.Role.ENGINE):
            assert field.name in KIND_FIELDS and run_kind({field.name: "x"}) is RunKind.SERVING, field.name


def test_like_for_like_matches_load_lengths_engine_and_gpu_count() -> None:
    for name in ("request_rate_per_s", "max_concurrency", "prompt_tokens_requested", "output_tokens_requested",
                 "engine", "gpu_count", "burstiness", "quantization"):
        assert name in like_for_like.JOB_FIELDS, name


def test_older_stored_keys_do_not_change() -> None:
    """A run that states none of the later fields keeps the key it was stored under (computed before issue 37)."""
    row = {"device_name": "A100 40GB", "env_id": None, "workload": "bert-large-squad", "mode": "infer",
           "precision": "fp16", "batch_size": 8, "grad_accum_steps": 1, "seq_len": 384, "image_size": None,
           "gpu_count": 1, "compile": False, "power_limit_w": None, "power_mode": None, "tag": None,
           "energy_boundary": None, "origin_kind": "local"}
    assert config_key(row) == "10882bdf5d2ec6a05914c645"
    served = {**row, "engine": "vllm", "request_rate_per_s": 2.0}
    assert config_key(served) == "2e94cd34fc5febccabfa0e13"
    assert config_key({**served, "engine_version": "0.8.1"}) != config_key(served)


def test_the_aggregated_figures_are_the_catalogues() -> None:
    assert STAT_METRICS == AGGREGATED and set(AGGREGATED) <= set(METRICS)
    for name in ("j_per_request", "goodput_requests_per_j"):
        assert METRICS[name].aggregated


def test_a_run_kind_follows_its_configuration() -> None:
    assert run_kind({"load_kind": "rate", "request_rate_per_s": 2.0}) is RunKind.SERVING
    assert run_kind({"engine": "vllm"}) is RunKind.SERVING
    assert run_kind({"max_new_tokens": 32}) is RunKind.GENERATION
    assert run_kind({"batch_size": 8}) is RunKind.SAMPLES


def _serving_runs() -> pl.DataFrame:
    """A rate sweep 1, 2, 4 of one file (4 overloaded), a concurrency sweep 1, 4, and two length shapes; two devices."""
    rows = []
    for device, scale in (("CPU A", 1.0), ("CPU B", 2.0)):
        for i, (rate, conc, prompt, out, jt, overloaded) in enumerate((
                (1.0, None, 64, 32, 0.529, False), (2.0, None, 64, 32, 0.366, False), (4.0, None, 64, 32, 0.179, True),
                (None, 1, 64, 32, 0.589, False), (None, 4, 64, 32, 0.460, False), (None, 4, 32, 16, 0.300, False))):
            rows.append({
                "run_id": f"{device}-{i}", "status": "ok", "mode": "infer", "device_name": device,
                "workload": "tiny-llama", "precision": "fp32", "batch_size": None, "grad_accum_steps": None,
                "seq_len": None, "image_size": None, "gpu_count": 1, "compile": None, "max_new_tokens": None,
                "request_rate_per_s": rate, "load_kind": "rate" if rate else "concurrency", "max_concurrency": conc,
                "arrival": "poisson" if rate else None, "burstiness": None, "prompt_tokens_requested": prompt,
                "output_tokens_requested": out, "length_distribution": "fixed", "engine": "transformers",
                "quantization": None, "engine_version": None, "power_setting": "default", "source_kind": "local",
                "tag": None, "system_name": None, "env_id": "env1", "energy_boundary": "estimated",
                "energy_method": "estimated", "origin_kind": "local", "source_file": f"{device}.json",
                "config_key": f"{device}-{i}", "config_grade": "C", "citation": None, "latency_missing_reason": None,
                "j_per_token": jt * scale, "tokens_per_s": 100.0 / scale, "flags": ["overloaded"] if overloaded else [],
            })
    return pl.DataFrame(rows, infer_schema_length=None)


def test_compare_never_pools_loads_shapes_or_engines_in_one_bar() -> None:
    labelled, _, _ = compare.chart_runs(_serving_runs())
    bars = compare.bars(labelled, compare.METRICS["j_per_token"])
    assert bars.height == 12 and (bars["n"] == 1).all()  # every point its own bar, never a mean of loads
    configs = set(bars["config"].to_list())
    assert {"load by rate · rate 1/s · poisson arrivals", "load by rate · rate 4/s · poisson arrivals"} <= configs \
        or any("rate 4/s" in c for c in configs)
    assert any("prompt 32 tokens" in c for c in configs) and any("prompt 64 tokens" in c for c in configs)
    overloaded = bars.filter(pl.col("config").str.contains("rate 4/s"))
    assert overloaded["overloaded"].all()
    shown, _ = compare.readable_bars(bars, higher_is_better=False, show_all=False)
    assert shown.height == 12  # few enough to show all; the best of each series is never the overloaded point:
    best = (bars.filter(~pl.col("overloaded")).sort("value").group_by("series", maintain_order=True).first())
    assert not best.filter(pl.col("config").str.contains("rate 4/s")).height


def test_ratios_only_between_equal_points_and_never_on_an_overloaded_one() -> None:
    labelled, _, _ = compare.chart_runs(_serving_runs())
    bars = compare.bars(labelled, compare.METRICS["j_per_token"])
    ratios = compare_ratios.ratio_table(bars, compare.METRICS["j_per_token"])
    assert ratios.height == 1
    row = ratios.row(0, named=True)
    assert row["Like-for-like configurations"] == 5  # 6 points each, the overloaded one left out
    assert "rate 4/s" not in row["Configurations"]
    assert row["Ratio (A ÷ B)"] == pytest.approx(0.5)


def test_the_table_relative_column_is_taken_at_one_equal_point() -> None:
    runs = _serving_runs()
    table = compare.config_table(runs, "CPU B", compare.METRICS["j_per_token"], "USD")
    rel = [c for c in table.columns if "relative to CPU B" in c][0]
    a = table.filter(pl.col("Device") == "CPU A")
    assert a.height == 6 and "Requests arriving per second" in table.columns and "Overloaded" in table.columns
    rated = a.filter(pl.col("Requests arriving per second") == 4.0)
    assert rated[rel].to_list() == [None]  # overloaded: no basis
    others = a.filter(pl.col("Requests arriving per second") != 4.0)[rel].drop_nulls().to_list()
    assert others == [pytest.approx(0.5)] * 2


# --- one label per metric -------------------------------------------------------------------------------------

_LABELS = {m.label for m in (*METRICS.values(), *DERIVED.values())}
# text that names a metric with its unit: a label written by hand (the catalogue's or another for the same figure)
_LOOKS_LIKE_A_LABEL = re.compile(
    r"^(Energy per|Net energy per|Decode energy|Decode J|J per|Time to first token|Inter-token latency|Time per output"
    r" token|End-to-end latency|Throughput|Average power|Idle power|Goodput|Output tokens/s|Tokens/s|Requests/s|"
    r"J/token|J/sample|J/request|p\d\d latency|TTFT|ITL|TPOT)\b")
_UNIT_AT_END = re.compile(r"\((J|ms|s|W|MB|%|[a-z]+/s|[A-Za-z]+/[a-z]+|x|×)\)$")
_SCANNED = ("explorer", "decision", "cli", "pages", "db", "tuning", "ingest", "app.py", "runner/report.py")


def test_no_module_but_the_catalogue_writes_a_metric_label() -> None:
    written = []
    for part in _SCANNED:
        base = REPO / part
        for path in ([base] if base.suffix == ".py" else sorted(base.rglob("*.py"))):
            for node in ast.walk(ast.parse(path.read_text(), str(path))):
                if isinstance(node, ast.Constant) and isinstance(node.value, str):
                    text = node.value
                    if text in _LABELS or (len(text) < 60 and _LOOKS_LIKE_A_LABEL.match(text)
                                           and _UNIT_AT_END.search(text)):
                        written.append(f"{path.relative_to(REPO)}:{node.lineno}: {text!r}")
    assert not written, "metric labels written outside joulebench.metrics (use metrics.label(name)):\n" \
        + "\n".join(written)


def test_every_field_reads_for_a_person() -> None:
    by = configuration.BY_NAME
    assert by["request_rate_per_s"].text(2.0) == "rate 2/s"
    assert by["gpu_count"].text(1) == "1 GPU" and by["gpu_count"].text(4) == "4 GPUs"
    assert configuration.label_parts({"max_concurrency": 4, "engine": "vllm"}, ("max_concurrency", "engine")) \
        == ["concurrency 4", "engine vllm"]
    assert len(FIELDS) == len(by)


def test_the_pages_know_the_runners_workloads() -> None:
    import runner.workloads as workloads
    from joulebench.defaults import RUNNER_WORKLOADS

    assert list(RUNNER_WORKLOADS) == workloads.names()
