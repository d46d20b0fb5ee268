"""Overview: what the database holds and one headline comparison."""


import streamlit as st

from db.queries import HEADLINE
from decision.markdown import md
from decision.text import count
from explorer import charts, data, nav
from explorer.tables import styled

st.title("JouleBench")
st.caption("Throughput, joules per example and cost per sample of deep-learning hardware: "
           "devices, precisions and power limits side by side.")

ov = data.or_stop(data.overview, data.db_path())
headline = data.or_stop(data.headline_runs, data.db_path())

with st.container(border=True):
    st.markdown("#### Which device should you buy?")
    st.caption("Pick two to six devices and the job: which is faster, which uses fewer joules and what a sample "
               "costs over the device's life, with the basis of every figure.")
    st.page_link(nav.DECIDE, label="**Decide what to buy**", icon=":material/check_circle:")

with st.container(border=True):
    st.markdown("#### Serving an LLM: which device gives the fewest joules per output token at your latency target?")
    tokens = data.or_stop(data.token_devices, data.db_path())
    if tokens.is_empty():
        st.caption("No run here measured energy per output token yet: measure a serving engine on this machine "
                   "(serve-bench against its OpenAI-compatible URL) or upload a vLLM, ML.ENERGY or LLMPerf file.")
    else:
        names = tokens["device_name"].to_list()
        st.caption(f"{count(int(tokens['configurations'].sum()), 'configuration')} measured in J per output token on "
                   f"{', '.join(md(n) for n in names)}: compare them at your TTFT, ITL or TPOT limit, like for like "
                   "(same model, request lengths, load, engine and GPUs per system).")
        st.page_link(nav.DECIDE, label="**Energy per token at a latency target (Decide)**",
                     icon=":material/bolt:", query_params={"device": names, "mode": "infer"})
    st.page_link(nav.NEW_RUN, label="Measure a serving engine here (serve-bench)", icon=":material/play_arrow:")

cols = st.columns(4)
cols[0].metric("Runs", ov.runs)
cols[1].metric("Devices in catalog", ov.devices)
cols[2].metric("Sources", ov.sources.height)
cols[3].metric("Stated ratios (findings)", ov.findings)
st.caption("Or explore: many devices and metrics side by side, costs, results of your own.")
links = st.columns(5)
links[0].page_link(nav.COMPARE, label="Compare devices", icon=":material/bar_chart:")
links[1].page_link(nav.COST, label="Cost & buying guide", icon=":material/payments:")
links[2].page_link(nav.UPLOAD, label="Upload results", icon=":material/upload:")
links[3].page_link(nav.DEVICES, label="Device catalog", icon=":material/memory:")
links[4].page_link(nav.RUN_DETAIL, label="Run detail", icon=":material/search:")
if ov.inbox_pending:
    st.warning(f"{count(ov.inbox_pending, 'result file')} wait in the inbox; they are ingested on the next open.")

st.subheader("BERT-Large question answering, inference, sequence length 384, FP16")
if headline.is_empty():
    st.info("No runs match the headline comparison yet: the reference data is not in this database.")
else:
    st.plotly_chart(charts.throughput_by_batch(
        headline, f"Throughput by batch size ({HEADLINE.workload}, {HEADLINE.precision})"),
        width="stretch")
    st.caption("Source: NVIDIA DeepLearningExamples BERT for TensorFlow, inference tables "
               "(throughput averaged over 1024 iterations, one GPU).")

left, right = st.columns(2)
with left:
    st.subheader("Runs by source")
    st.dataframe(styled(ov.runs_by_source_kind.rename({"source_kind": "Source", "runs": "Runs"})), hide_index=True)
    st.subheader("Workloads")
    st.dataframe(styled(ov.workloads.rename({"workload": "Workload", "mode": "Mode", "runs": "Runs",
                                             "devices": "Devices", "device_not_stated": "Device not stated"},
                                            strict=False)), hide_index=True)
with right:
    st.plotly_chart(charts.runs_per_device(ov.runs_by_device), width="stretch")

st.subheader("Sources")
st.dataframe(styled(ov.sources.rename({"source_id": "Source", "kind": "Kind", "file_name": "File", "format": "Format",
                                       "runs": "Runs", "findings": "Findings", "not_stated": "Not stated",
                                       "imported_at": "Imported at"}, strict=False)), hide_index=True)
st.caption(data.store_line(data.db_path()))
