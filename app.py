"""JouleBench explorer: page config and navigation only."""

import streamlit as st

from explorer import nav

st.set_page_config(page_title="JouleBench", page_icon=":material/bolt:", layout="wide")
st.navigation([st.Page(path, title=title, icon=icon, default=path == nav.OVERVIEW)
               for path, title, icon in nav.PAGES]).run()
