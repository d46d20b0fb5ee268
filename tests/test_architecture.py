"""The layout holds: packages import only downward, and the app process never loads torch."""

from __future__ import annotations

import ast
import subprocess
import sys
from pathlib import Path

REPO = Path(__file__).resolve().parent.parent
# Bottom to top. A package may import only packages listed before it (and itself). The explorer sits
# below the runner: the app process starts runs as child processes and never imports torch.
LAYERS = ["energy", "joulebench", "tuning", "importers", "db", "ingest", "decision", "explorer", "runner", "cli"]


def _imports(package: str) -> dict[str, set[str]]:
    """Our top-level packages each module of `package` imports (anywhere in the module)."""
    found: dict[str, set[str]] = {}
    for path in sorted((REPO / package).rglob("*.py")):
        tree = ast.parse(path.read_text(), str(path))
        targets: set[str] = set()
        for node in ast.walk(tree):
            if isinstance(node, ast.Import):
                targets.update(alias.name.split(".")[0] for alias in node.names)
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                targets.add(node.module.split(".")[0])
        found[str(path.relative_to(REPO))] = {t for t in targets if t in LAYERS and t != package}
    return found


def test_packages_import_only_downward() -> None:
    upward = []
    for rank, package in enumerate(LAYERS):
        allowed = set(LAYERS[:rank])
        for module, targets in _imports(package).items():
            upward += [f"{module} imports {t}" for t in sorted(targets - allowed)]
    assert upward == [], "imports against the layering (no cycles): " + "; ".join(upward)


def test_energy_depends_on_nothing_of_ours() -> None:
    assert all(not targets for targets in _imports("energy").values())


def test_pages_reach_the_store_only_through_explorer_and_hold_no_sql() -> None:
    for page in sorted((REPO / "pages").glob("*.py")):
        text = page.read_text()
        assert "import duckdb" not in text and "SELECT " not in text, page.name
        assert "from db import Store" not in text, page.name


APP_WALK = """
import sys
from streamlit.testing.v1 import AppTest
at = AppTest.from_file(sys.argv[1], default_timeout=120)
at.run()
assert not at.exception, at.exception
for page in sys.argv[2:]:
    at.switch_page(page).run()
    assert not at.exception, (page, at.exception)
heavy = sorted(m for m in ("torch", "transformers") if m in sys.modules)
print("HEAVY:" + ",".join(heavy))
"""


def test_the_app_process_never_imports_torch(seeded_db: Path) -> None:
    pages = [f"pages/{p.name}" for p in sorted((REPO / "pages").glob("*.py"))]
    env = {"JOULEBENCH_DB": str(seeded_db), "HF_HUB_OFFLINE": "1", "PATH": "/usr/bin:/bin"}
    done = subprocess.run([sys.executable, "-c", APP_WALK, str(REPO / "app.py"), *pages], capture_output=True,
                          text=True, timeout=600, env=env, cwd=REPO)
    assert done.returncode == 0, done.stderr[-3000:]
    assert "HEAVY:\n" in done.stdout, done.stdout[-500:]
