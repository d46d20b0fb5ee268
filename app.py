"""JouleBench explorer: page config, access, the database made ready, and navigation."""

import streamlit as st

from explorer import access, data, nav

st.set_page_config(page_title="JouleBench", page_icon=":material/bolt:", layout="wide")
access.guard()  # the Host header checked; the password asked for when one is set
data.prepare()  # the database created, migrated and seeded; waiting files ingested
page = st.navigation([st.Page(path, title=title, icon=icon, default=path == nav.OVERVIEW)
                      for path, title, icon in nav.PAGES])
with data.errors_shown():  # a busy or damaged store: the same message on every page, never Streamlit's error page
    page.run()
