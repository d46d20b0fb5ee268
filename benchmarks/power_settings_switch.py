"""Power settings: the time the page takes to show another device (issue 17: the first switch took
8.8 s). Builds a database with two real power-limit profiles (Zeus V100 and A40 BERT, from
tests/fixtures), opens the page in Streamlit's AppTest, switches device and back, and prints each
rerun's time against the target.

    .venv/bin/python benchmarks/power_settings_switch.py
"""

from __future__ import annotations

import os
import sys
import tempfile
import time
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
ZEUS = REPO / "tests" / "fixtures" / "formats" / "zeus_mlenergy"
TARGET_S = 2.0


def main() -> int:
    sys.path.insert(0, str(REPO))
    from streamlit.testing.v1 import AppTest

    from cli.main import main as cli

    db = Path(tempfile.mkdtemp()) / "bench.duckdb"
    for name, device in (("zeus-plo-profile-v100-bert.csv", "Tesla V100"),
                         ("zeus-profile-A40+bert-base-uncased+gpu0.csv", "A40")):
        assert cli(["import", str(ZEUS / name), "--device", device, "--workload", "bert-base-uncased",
                    "--db", str(db)]) in (0, 1)
    os.environ["JOULEBENCH_DB"] = str(db)
    at = AppTest.from_file(str(REPO / "pages" / "power_settings.py"), default_timeout=120)
    start = time.perf_counter()
    at.run()
    print(f"first open: {time.perf_counter() - start:.2f} s")
    devices = at.selectbox(key="ps_device").options
    worst = 0.0
    for device in [*devices[1:], devices[0], *devices[1:]]:
        start = time.perf_counter()
        at.selectbox(key="ps_device").set_value(device).run()
        took = time.perf_counter() - start
        worst = max(worst, took)
        assert not at.exception, at.exception
        print(f"switch to {device}: {took:.2f} s")
    print(f"slowest device switch: {worst:.2f} s (target < {TARGET_S:g} s): {'met' if worst < TARGET_S else 'MISSED'}")
    return 0 if worst < TARGET_S else 1


if __name__ == "__main__":
    sys.exit(main())
