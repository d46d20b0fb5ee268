"""JouleBench explorer: page config and navigation only."""

import streamlit as st

st.set_page_config(page_title="JouleBench", page_icon=":material/bolt:", layout="wide")
navigation = st.navigation([
    st.Page("pages/overview.py", title="Overview", icon=":material/home:", default=True),
    st.Page("pages/compare.py", title="Compare", icon=":material/bar_chart:"),
    st.Page("pages/run_detail.py", title="Run detail", icon=":material/search:"),
    st.Page("pages/upload.py", title="Upload", icon=":material/upload:"),
    st.Page("pages/cost.py", title="Cost & buying guide", icon=":material/payments:"),
    st.Page("pages/devices.py", title="Devices", icon=":material/memory:"),
])
navigation.run()
