"""A person's mapping of a table no reader knows (issue 39, importers.mapping, db.recipes): the table's shape key,
the guesses from its headers, a recipe checked (two columns to one field, a unit of another quantity, another
shape, hostile recipe files) with every refusal naming the column, and a recipe applied through the one reader
and import path (units converted, ranges applied, nothing stored on a refusal)."""

from __future__ import annotations

import json
import re
from pathlib import Path

import pytest

import db.recipes as recipes
import importers
from db import Store
from importers.mapping import (
    FIELDS,
    MAX_RECIPE_BYTES,
    ColumnMap,
    MappingError,
    Recipe,
    apply,
    check,
    find,
    header_of,
    parse,
    read_table,
    recipe_from,
    units_for,
)
from importers.mapping_guess import guess
from importers.table_fields import measure_field
from importers.table_labels import label_field
from ingest.service import import_source
from joulebench.errors import InvalidEditError, NothingToImportError, ResultFileError

HEADER = "gpu_label,tok_rate,joules_per_tok,lat_first\n"
TABLE = HEADER + "Jetson AGX Orin 64GB,21.5,0.42,180\nJetson AGX Orin 64GB,23.0,0.40,175\n"


def _source(text: str, name: str = "bench.csv") -> importers.Source:
    return importers.Source.single(text.encode(), name)


def _recipe(text: str = TABLE, name: str = "orin logger", **changes: tuple[str | None, str | None]) -> Recipe:
    table = read_table(_source(text))
    return recipe_from(name, table, {**guess(table), **changes})


def test_the_table_is_refused_by_every_reader_and_its_headers_are_guessed() -> None:
    with pytest.raises(NothingToImportError):
        importers.load_source(_source(TABLE))
    table = read_table(_source(TABLE))
    assert table.kind == "wide" and table.header == ["gpu_label", "tok_rate", "joules_per_tok", "lat_first"]
    assert guess(table) == {"gpu_label": ("device", None), "tok_rate": ("tokens_per_s", "tokens/s"),
                            "joules_per_tok": ("j_per_token", "J/token"), "lat_first": ("ttft_avg_ms", "ms")}
    units_header = read_table(_source("Device,Total Energy (Wh),Energy per Token (mJ/token)\nA100,1,2\n"))
    assert guess(units_header) == {"Device": ("device", None), "Total Energy (Wh)": ("energy_j", "Wh"),
                                   "Energy per Token (mJ/token)": ("j_per_token", "mJ/token")}


def test_the_shape_key_is_the_kind_and_the_normalised_column_names() -> None:
    a = read_table(_source(TABLE)).shape
    b = read_table(_source("LAT_FIRST, Gpu_Label ,tok_rate,joules_per_tok\n180,x,1,2\n")).shape
    other = read_table(_source(HEADER.replace("lat_first", "lat_p50") + "x,1,2,3\n")).shape
    records = read_table(_source('{"gpu_label": "x", "tok_rate": 1, "joules_per_tok": 2, "lat_first": 3}\n',
                                 "b.jsonl")).shape
    assert a.key == b.key and len(a.key) == 32
    assert a.key != other.key and a.key != records.key and records.kind == "records"


def test_every_field_and_unit_is_read_back_as_that_field_by_the_general_reader() -> None:
    for key, spec in FIELDS.items():
        if spec.section == "log":
            continue  # a power log's columns, read by the power-log reader (the meter log's test below)
        for unit in units_for(key) or [None]:
            header = header_of(ColumnMap("c", key, unit))
            found = label_field(header) if spec.kind is None and spec.section != "metrics" else measure_field(header)[0]
            assert found is not None and found.key == key, (key, unit, header, found)


def test_a_recipe_applied_reads_through_the_general_reader_with_units_converted() -> None:
    text = ("model;latency (median);energy;tok_rate\nllama;0,25;0,5;21,5\n")  # ';' with decimal commas
    table = read_table(_source(text))
    recipe = recipe_from("semicolons", table, {"model": ("model", None), "latency (median)": ("ttft_p50_ms", "s"),
                                               "energy": ("energy_j", "Wh"), "tok_rate": ("tokens_per_s", "tok/s")},
                         {"device": "RTX 4090", "mode": "infer"})
    mapped = apply(recipe, _source(text))
    loaded, fmt = importers.load_source(mapped.source)
    run = loaded.runs[0]
    assert fmt == "general-table" and run["device"]["name"] == "RTX 4090" and run["config"]["mode"] == "infer"
    assert run["config"]["model"] == "llama"
    assert run["metrics"]["ttft_p50_ms"] == pytest.approx(250.0) and run["metrics"]["energy_j"] == 1800.0
    assert run["metrics"]["tokens_per_s"] == 21.5
    assert "read by the saved mapping 'semicolons'" in mapped.said and "latency (median) as" in mapped.said


def test_a_long_table_and_json_lines_are_mapped_by_their_pivoted_or_flattened_columns() -> None:
    long = "GPU,Run,Metric,Value\nH100,1,tok_rate,100\nH100,1,joules_per_tok,0.3\nH100,2,tok_rate,110\n" \
           "H100,2,joules_per_tok,0.31\n"
    table = read_table(_source(long))
    assert table.kind == "long" and {"tok_rate", "joules_per_tok"} <= set(table.header)
    loaded, _ = importers.load_source(apply(_recipe(long, "long one"), _source(long)).source)
    assert sorted(r["metrics"]["tokens_per_s"] for r in loaded.runs) == [100.0, 110.0]
    assert {r["device"]["name"] for r in loaded.runs} == {"H100"}
    lines = '{"hw": {"gpu": "L4"}, "stats": {"tok_rate": 40, "lat_first": 0.2}}\n' * 2
    table = read_table(_source(lines, "r.jsonl"))
    assert table.header == ["hw.gpu", "stats.tok_rate", "stats.lat_first"]
    recipe = recipe_from("nested", table, {"hw.gpu": ("device", None), "stats.tok_rate": ("tokens_per_s", "tok/s"),
                                           "stats.lat_first": ("ttft_avg_ms", "s")})
    loaded, _ = importers.load_source(apply(recipe, _source(lines, "r.jsonl")).source)
    assert [r["metrics"]["ttft_avg_ms"] for r in loaded.runs] == [200.0, 200.0]


@pytest.mark.parametrize(("changes", "labels", "said"), [
    ({"lat_first": ("tokens_per_s", "tokens/s")}, {}, "columns 'tok_rate', 'lat_first': all mapped to Output tokens/s"),
    ({"joules_per_tok": ("j_per_token", "W")}, {}, "column 'joules_per_tok': its unit W is one of power"),
    ({"lat_first": ("ttft_avg_ms", "apples")}, {}, "column 'lat_first': 'apples' is not a unit"),
    ({"lat_first": ("ttft_avg_ms", None)}, {}, "column 'lat_first': give the unit"),
    ({"gpu_label": ("device", "W")}, {}, "column 'gpu_label': Device carries no unit"),
    ({"tok_rate": (None, None), "joules_per_tok": (None, None), "lat_first": (None, None)}, {},
     "map at least one column to a figure"),
    ({}, {"mode": "sleeping"}, "labels: 'mode': 'sleeping' is not one of"),
    ({}, {"device": "A100"}, "labels: 'device': column 'gpu_label' gives it already"),
    ({}, {"batch_size": "-3"}, "labels: 'batch_size'"),
])
def test_a_recipe_that_cannot_be_used_is_refused_naming_the_column(
        changes: dict[str, tuple[str | None, str | None]], labels: dict[str, str], said: str) -> None:
    table = read_table(_source(TABLE))
    with pytest.raises(MappingError) as e:
        recipe_from("bad", table, {**guess(table), **changes}, labels)
    assert said in e.value.format_message(), e.value.format_message()


def test_a_recipe_of_another_shape_is_refused_and_nothing_is_stored(seeded_db: Path) -> None:
    recipe = _recipe()
    other = "gpu_label,tok_rate,joules_per_tok,lat_p99\nx,1,2,3\n"
    with pytest.raises(MappingError, match="is for another table .*columns the file lacks: lat_first"):
        apply(recipe, _source(other))
    with Store.open_read_only(seeded_db) as store:
        before = store.query("SELECT count(*) FROM sources").row(0)[0]
    out_of_range = HEADER + "A100,21.5,0.42,180\nA100,2e12,0.40,175\n"  # 2e12 tokens/s: no device makes that
    mapped = apply(_recipe(), _source(out_of_range))
    with pytest.raises(ResultFileError) as e:
        import_source(mapped.source, db=seeded_db)
    message = mapped.explained(e.value).format_message()
    assert "line 3: column 'tok_rate'" in message and "tokens_per_s" in message, message
    with Store.open_read_only(seeded_db) as store:
        assert store.query("SELECT count(*) FROM sources").row(0)[0] == before


def test_a_recipe_file_round_trips_and_a_hostile_one_gets_the_limits_of_any_upload() -> None:
    recipe = _recipe()
    assert parse(recipe.dumps()).dumps() == recipe.dumps()
    doc = recipe.to_json()
    cases: list[tuple[bytes, str]] = [
        (b"x" * (MAX_RECIPE_BYTES + 1), "a mapping is at most"),
        (("[" * 50000).encode(), "not a JSON mapping"),
        (json.dumps({**doc, "labels": {"device": {"a": {"b": {"c": 1}}}}}).encode(), "nested deeper"),
        (json.dumps({**doc, "format": "something"}).encode(), "not a JouleBench mapping"),
        (json.dumps({**doc, "name": "a\x1bb"}).encode(), "name"),
        (json.dumps({**doc, "name": "n" * 201}).encode(), "name"),
        (json.dumps({**doc, "columns": {"x\ny": {"field": "energy_j", "unit": "J"}}}).encode(), "column name"),
        (json.dumps({**doc, "columns": {f"c{i}": None for i in range(401)}}).encode(), "at most 400"),
        (json.dumps({**doc, "extra": 1}).encode(), "'extra': not part of a mapping"),
        (json.dumps({**doc, "shape": {**doc["shape"], "key": "0" * 32}}).encode(), "does not match its columns"),
        (json.dumps({**doc, "columns": {**doc["columns"], "tok_rate": {"field": "j_per_token", "unit": "J/token"}}}
                    ).encode(), "all mapped to Energy per output token (J)"),
        (b"\xff\xfe", "not a JSON mapping"),
    ]
    for data, said in cases:
        with pytest.raises(MappingError) as e:
            parse(data)
        assert said in e.value.format_message(), (said, e.value.format_message())


def test_recipes_are_stored_by_shape_and_name_and_a_damaged_row_is_left_out(seeded_db: Path) -> None:
    recipe = _recipe()
    with Store.open(seeded_db) as store:
        assert recipes.save(store.con, recipe) == "mapping 'orin logger' saved"
        renamed = Recipe("orin logger v2", recipe.shape, recipe.columns, (("mode", "infer"),))
        assert "in place of 'orin logger'" in recipes.save(store.con, renamed)
        other = _recipe(HEADER.replace("lat_first", "lat_p99") + "x,1,2,3\n", "orin logger v2")
        with pytest.raises(InvalidEditError, match="another table shape's mapping has it"):
            recipes.save(store.con, other)
        store.con.execute("INSERT INTO mapping_recipes VALUES ('k', 'broken', 'wide', '{\"format\": 1}', now(), 'x')")
        found, bad = recipes.stored(store.con)
        assert [s.recipe.name for s in found] == ["orin logger v2"] and "broken" in bad[0]
        assert find(recipes.recipes(store.con), read_table(_source(TABLE))).dumps() == renamed.dumps()  # type: ignore[union-attr]
        assert recipes.delete(store.con, "orin logger v2") and recipes.recipes(store.con) == []


def test_check_alone_refuses_what_a_hand_written_recipe_gets_wrong() -> None:
    recipe = _recipe()
    broken = Recipe("", recipe.shape, (*recipe.columns, ColumnMap("power", "avg_power_w", "J")))
    with pytest.raises(MappingError) as e:
        check(broken)
    said = e.value.format_message()
    assert "give the mapping a name" in said and "column 'power': its unit J is one of energy" in said


CARBONTRACKER_LONG = Path(__file__).parent / "fixtures" / "formats" / "general_table" / \
    "carbontracker-llama31-8b-h100-h200-long-metrics-no-units.csv"


def test_a_real_long_table_without_units_is_mapped_in_three_choices() -> None:
    """CarbonTracker figures in a long table with no unit anywhere: refused unaided; its 'Type' ('Local') is no mode,
    so it is not guessed as one. The energy column and its unit (kWh, as the scraping script wrote it) and the mode
    are the three choices; each of the 30 runs gets its energy, per device and run."""
    source = importers.Source.single(CARBONTRACKER_LONG.read_bytes(), CARBONTRACKER_LONG.name)
    with pytest.raises(ResultFileError, match="no column is a figure with a unit JouleBench reads"):
        importers.load_source(source)
    table = read_table(source)
    reasons: dict[str, str] = {}
    guessed = guess(table, reasons)
    assert guessed == {"Type": (None, None), "Model": ("model", None), "GPU": ("device", None),
                       "Run": ("repeat", None), "CO2eq": (None, None), "Distance": (None, None),
                       "Energy": (None, None), "Time": (None, None)}
    assert "no mode" in reasons["Type"]
    choices = {**guessed, "Energy": ("energy_j", "kWh")}
    labels = {"mode": "infer"}
    changed = sum(1 for c in guessed for a, b in zip(guessed[c], choices[c], strict=True) if a != b) + len(labels)
    assert changed == 3
    recipe = recipe_from("carbontracker long", table, choices, labels)
    loaded, _ = importers.load_source(apply(recipe, source).source)
    assert len(loaded.runs) == 30
    by = {(r["device"]["name"], r["config"]["model"], r["notes"].split("run ")[-1]): r for r in loaded.runs}
    h100 = next(r for (d, _, n), r in by.items() if d == "H100" and n == "1")
    assert h100["metrics"]["energy_j"] == pytest.approx(0.453637 * 3.6e6)
    assert {r["config"]["mode"] for r in loaded.runs} == {"infer"}
    assert {r["device"]["name"] for r in loaded.runs} == {"H100", "H100-PCI", "H200"}
    assert min(r["metrics"]["energy_j"] for r in loaded.runs) == pytest.approx(0.362 * 3.6e6, rel=2e-3)


METER_LOG = Path(__file__).parent / "fixtures" / "formats" / "power_logs_meter" / \
    "tfg-a30-resnet50-offline-meter-semicolon-mw-unnamed.csv"


def test_a_meter_log_whose_columns_no_reader_knows_is_mapped_as_a_power_log_in_three_choices() -> None:
    """A meter's channels (`Set_id;Time;Line 6;Sum`) in mW with no unit written: refused unaided; the time column,
    the power column and its unit make it the log the power-table reader reads, with its energy and checks."""
    import csv
    import io

    source = importers.Source.single(METER_LOG.read_bytes(), METER_LOG.name)
    with pytest.raises(ResultFileError):
        importers.load_source(source)
    table = read_table(source)
    guessed = guess(table)
    assert all(v == (None, None) for v in guessed.values())
    choices = {**guessed, "Time": ("log_time", "s"), "Sum": ("log_power", "mW")}  # the time's unit is s by default
    recipe = recipe_from("meter channel 6", table, choices)
    assert recipe.needed() == []
    mapped = apply(recipe, source, table)
    loaded, fmt = importers.load_source(mapped.source)
    rows = list(csv.reader(io.StringIO(METER_LOG.read_text()), delimiter=";"))[1:]
    t, p = [float(r[1]) for r in rows], [float(r[3]) / 1000 for r in rows]
    expected = sum((t[i + 1] - t[i]) * (p[i] + p[i + 1]) / 2 for i in range(len(t) - 1))
    run = loaded.runs[0]
    assert fmt == "power-table" and run["metrics"]["energy_j"] == pytest.approx(expected, rel=1e-9)
    assert run["metrics"]["duration_s"] == pytest.approx(70.025897)
    assert run["metrics"]["avg_power_w"] == pytest.approx(160.65, abs=0.01)  # the repository divides by 160.64 W
    assert "as a power log" in mapped.said and "Sum as Power sample" in mapped.said
    for changes, labels, said in (
            ({"Line 6": ("avg_power_w", "mW")}, {}, "a power log's rows are samples of one window"),
            ({"Line 6": ("log_power", "mW")}, {}, "needs one column mapped to Power sample (a power log) (it has 2)"),
            ({}, {"device": "A30"}, "a power log's device and mode are given at the import"),
            ({"Time": (None, None)}, {}, "needs one column mapped to Time of a power sample")):
        with pytest.raises(MappingError, match=re.escape(said)):
            recipe_from("bad", table, {**choices, **changes}, labels)
