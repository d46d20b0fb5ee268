"""The script `joulebench app` hands to Streamlit: it runs app.py.

Streamlit treats a `pages/` folder beside its main script as a legacy multipage app until the
main script has called `st.navigation`, and a first visit by deep link (/compare) would then run
the page without app.py (no page config, no navigation). Starting from this folder, which has no
`pages/`, makes every visit go through app.py.
"""

import runpy

from joulebench.paths import REPO_ROOT

runpy.run_path(str(REPO_ROOT / "app.py"), run_name="__main__")
