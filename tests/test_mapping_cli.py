"""`joulebench import --mapping RECIPE FILE`, `joulebench mapping list/export/import/delete`, a file of a saved
mapping's shape read by it and said so, a mapping that does not fit refused with nothing stored, and the recipes
carried to a team store by `joulebench push` (issue 39)."""

from __future__ import annotations

import json
import shutil
from pathlib import Path

import pytest

from cli.main import main
from db import Store
from db.lake import LakeUrl, connect
from db.push import push
from importers.base import Source
from importers.mapping import read_table, recipe_from
from importers.mapping_guess import guess

HEADER = "gpu_label,tok_rate,joules_per_tok,lat_first\n"
FIRST = HEADER + "Jetson AGX Orin 64GB,21.5,0.42,180\nJetson AGX Orin 64GB,23.0,0.40,175\n"
SECOND = HEADER + "Jetson AGX Orin 64GB,31.5,0.35,140\n"


def _recipe_file(tmp_path: Path, name: str = "orin logger") -> Path:
    table = read_table(Source.single(FIRST.encode(), "a.csv"))
    recipe = recipe_from(name, table, {**guess(table), "lat_first": ("ttft_p50_ms", "ms")})
    path = tmp_path / "orin.mapping.json"
    path.write_text(recipe.dumps())
    return path


def _runs(db: Path) -> list[tuple]:
    with Store.open_read_only(db) as store:
        rows = store.con.execute("SELECT s.file_name, r.tokens_per_s, r.ttft_p50_ms FROM runs r JOIN sources s "
                                 "USING (source_id) WHERE s.file_name LIKE 'orin%' ORDER BY 2").fetchall()
    return [(name, round(t, 6), round(p50, 6)) for name, t, p50 in rows]


def test_import_with_a_mapping_then_the_same_shape_is_read_by_the_saved_one(
        seeded_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    first, second = tmp_path / "orin_a.csv", tmp_path / "orin_b.csv"
    first.write_text(FIRST)
    second.write_text(SECOND)
    recipe = _recipe_file(tmp_path)
    assert main(["import", "--db", str(seeded_db), str(second)]) == 2  # no reader, no saved mapping: refused
    assert main(["import", "--db", str(seeded_db), "--mapping", str(recipe), str(first)]) == 0
    out = capsys.readouterr().out
    assert "read by the saved mapping 'orin logger'" in out and "lat_first as Time to first token p50 (ms)" in out
    assert main(["mapping", "import", "--db", str(seeded_db), str(recipe)]) == 0
    assert "mapping 'orin logger' saved" in capsys.readouterr().out
    assert main(["import", "--db", str(seeded_db), str(second)]) == 0  # the saved mapping of its shape
    assert "read by the saved mapping 'orin logger'" in capsys.readouterr().out
    assert _runs(seeded_db) == [("orin_a.csv", 21.5, 180.0), ("orin_a.csv", 23.0, 175.0), ("orin_b.csv", 31.5, 140.0)]

    assert main(["mapping", "list", "--db", str(seeded_db)]) == 0
    assert "orin logger" in capsys.readouterr().out
    exported = tmp_path / "exported.json"
    assert main(["mapping", "export", "--db", str(seeded_db), "orin logger", "-o", str(exported)]) == 0
    assert json.loads(exported.read_text()) == json.loads(recipe.read_text())
    assert main(["mapping", "delete", "--db", str(seeded_db), "orin logger"]) == 0
    assert main(["mapping", "export", "--db", str(seeded_db), "orin logger"]) == 2


def test_a_mapping_that_does_not_fit_or_is_hostile_is_refused_and_nothing_is_stored(
        seeded_db: Path, tmp_path: Path, capsys: pytest.CaptureFixture[str]) -> None:
    recipe = _recipe_file(tmp_path)
    other = tmp_path / "orin_other.csv"
    other.write_text("gpu_label,tok_rate,joules_per_tok,lat_p99\nA100,1,2,3\n")
    assert main(["import", "--db", str(seeded_db), "--mapping", str(recipe), str(other)]) == 2
    err = capsys.readouterr().err
    assert "is for another table" in err and "columns the file lacks: lat_first" in err
    bad_unit = json.loads(recipe.read_text())
    bad_unit["columns"]["joules_per_tok"]["unit"] = "W"
    hostile = tmp_path / "bad.json"
    hostile.write_text(json.dumps(bad_unit))
    first = tmp_path / "orin_a.csv"
    first.write_text(FIRST)
    assert main(["import", "--db", str(seeded_db), "--mapping", str(hostile), str(first)]) == 2
    assert "column 'joules_per_tok': its unit W is one of power" in capsys.readouterr().err
    huge = tmp_path / "huge.json"
    huge.write_bytes(b"{" + b" " * 300_000 + b"}")
    assert main(["mapping", "import", "--db", str(seeded_db), str(huge)]) == 2
    assert "a mapping is at most" in capsys.readouterr().err
    out_of_range = tmp_path / "orin_range.csv"
    out_of_range.write_text(HEADER + "A100,1e12,0.4,10\n")
    assert main(["import", "--db", str(seeded_db), "--mapping", str(recipe), str(out_of_range)]) == 2
    assert "line 2: column 'tok_rate'" in capsys.readouterr().err
    assert _runs(seeded_db) == []
    with Store.open_read_only(seeded_db) as store:
        assert store.con.execute("SELECT count(*) FROM mapping_recipes").fetchone() == (0,)


def test_push_carries_the_recipes_to_the_team_store(seeded_template: Path, tmp_path: Path,
                                                   capsys: pytest.CaptureFixture[str]) -> None:
    local = tmp_path / "local.duckdb"
    shutil.copy(seeded_template, local)
    assert main(["mapping", "import", "--db", str(local), str(_recipe_file(tmp_path))]) == 0
    lake = LakeUrl.parse(f"ducklake:sqlite:{tmp_path / 'team.sqlite'}")
    assert push(local, lake, machine="box-a").recipes_pushed == 1
    assert push(local, lake, machine="box-a").recipes_pushed == 0  # nothing new: no snapshot for it
    con = connect(lake, read_only=True)
    try:
        assert con.execute("SELECT name FROM mapping_recipes").fetchall() == [("orin logger",)]
    finally:
        con.close()
    assert main(["mapping", "list", "--store", f"ducklake:sqlite:{tmp_path / 'team.sqlite'}"]) == 0
    assert "orin logger" in capsys.readouterr().out
