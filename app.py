"""JouleBench explorer: page config and navigation only."""

import streamlit as st

st.set_page_config(page_title="JouleBench", page_icon="⚡", layout="wide")
navigation = st.navigation([
    st.Page("pages/overview.py", title="Overview", icon="🏠", default=True),
])
navigation.run()
