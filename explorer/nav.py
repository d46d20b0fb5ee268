"""The explorer's pages: one list for app.py's navigation and for links between pages.

Paths are absolute so they resolve the same whether Streamlit started app.py directly or
through explorer/streamlit_main.py.
"""

from __future__ import annotations

from pathlib import Path

from joulebench.paths import REPO_ROOT

PAGES_DIR = REPO_ROOT / "pages"
OVERVIEW = PAGES_DIR / "overview.py"
DECIDE = PAGES_DIR / "decide.py"
COMPARE = PAGES_DIR / "compare.py"
RUN_DETAIL = PAGES_DIR / "run_detail.py"
RUN_DETAIL_URL = "/run_detail"  # the page's URL path, for links inside tables
NEW_RUN = PAGES_DIR / "new_run.py"
UPLOAD = PAGES_DIR / "upload.py"
COST = PAGES_DIR / "cost.py"
DEVICES = PAGES_DIR / "devices.py"
POWER_SETTINGS = PAGES_DIR / "power_settings.py"

# (path, title, icon) in menu order
PAGES: list[tuple[Path, str, str]] = [
    (OVERVIEW, "Overview", ":material/home:"),
    (DECIDE, "Decide", ":material/check_circle:"),
    (COMPARE, "Compare", ":material/bar_chart:"),
    (RUN_DETAIL, "Run detail", ":material/search:"),
    (NEW_RUN, "New run", ":material/play_arrow:"),
    (UPLOAD, "Upload", ":material/upload:"),
    (COST, "Cost & buying guide", ":material/payments:"),
    (POWER_SETTINGS, "Power settings", ":material/tune:"),
    (DEVICES, "Devices", ":material/memory:"),
]
