"""The slow tier's list (tests/conftest.py SLOW) names tests that exist: a renamed test would otherwise drop out of
the tier silently and run in `make test` again, or an entry would mark nothing."""

from __future__ import annotations

import re
from pathlib import Path

from tests.conftest import SLOW

HERE = Path(__file__).parent


def test_every_slow_entry_names_an_existing_file_and_test() -> None:
    for key, why in SLOW.items():
        assert why.strip(), f"{key}: say why it is slow"
        file, _, rest = key.partition("::")
        path = HERE / file
        assert path.is_file(), f"{key}: no file {file}"
        if rest:
            name = rest.split("[", 1)[0]
            assert re.search(rf"^def {re.escape(name)}\(", path.read_text(), re.MULTILINE), f"{key}: no test {name}"


def test_the_slow_rule_matches_a_file_a_test_and_a_parameter_and_nothing_beside() -> None:
    from tests.conftest import _slow

    class Item:
        def __init__(self, nodeid: str) -> None:
            self.nodeid = nodeid

    def slow(nodeid: str) -> bool:
        return _slow(Item(nodeid))  # type: ignore[arg-type]

    assert slow("tests/test_benchmarks_run.py::test_anything[x]")
    assert slow("tests/test_browser.py::test_screenshots_of_every_page")
    assert not slow("tests/test_browser.py::test_screenshots_of_every_page_again")
    assert slow("tests/test_runner_interrupt.py::test_signal_during_a_sweep_keeps_finished_runs[15-143]")
    assert not slow("tests/test_runner_interrupt.py::test_signal_during_a_sweep_keeps_finished_runs[2-130]")
    assert not slow("tests/test_benchmarks_run_more.py::test_x")
