"""JouleBench explorer: page config, the database made ready, and navigation."""

import streamlit as st

from explorer import data, nav

st.set_page_config(page_title="JouleBench", page_icon=":material/bolt:", layout="wide")
data.prepare()  # the database created, migrated and seeded; waiting files ingested
st.navigation([st.Page(path, title=title, icon=icon, default=path == nav.OVERVIEW)
               for path, title, icon in nav.PAGES]).run()
