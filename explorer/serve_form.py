"""New run's section "Measure a running server (serve-bench)": the form and starting the job
(`explorer.jobs.ServeBenchRequest`, checked by `joulebench serve-bench --check` in the child)."""

from __future__ import annotations

from pathlib import Path

import streamlit as st

from decision.markdown import md
from explorer import jobs
from joulebench.errors import JouleBenchError


def render(db: Path, running: bool, target_given: str, rate_given: str) -> None:
    """The form; `running`: a job holds the machine (the button is off); the URL's target and rate prefill it."""
    st.subheader("Measure a running server (serve-bench)")
    st.caption("Sends streamed requests to an OpenAI-compatible server already running on this machine (vLLM, SGLang, "
               "TGI, llama.cpp, Ollama, transformers serve) at each load while sampling this machine's power: "
               "one run per load. Give requests per second or a concurrency; a comma list sweeps them.")
    labels = jobs.SERVE_FORM_LABELS
    with st.form("serve_bench"):
        top = st.columns([2, 1, 1])
        target = top[0].text_input(labels["--target"], target_given, placeholder="http://localhost:8000",
                                 key="sb_target")
        sb_rate = top[1].text_input(labels["--rate"], rate_given, key="sb_rate")
        sb_concurrency = top[2].text_input(labels["--concurrency"], "", key="sb_concurrency")
        c = st.columns(4)
        sb_prompt = c[0].text_input(labels["--prompt-tokens"], "128", key="sb_prompt",
                                    help="128, or mean=128,stdev=32,min=16,max=256")
        sb_output = c[1].text_input(labels["--output-tokens"], "128", key="sb_output", help="as the prompt tokens")
        sb_requests = c[2].number_input(labels["--requests"], 1, 1_000_000, None, key="sb_requests",
                                        placeholder="10 s's worth")
        sb_repeats = c[3].number_input(labels["--repeats"], 1, 100, 1, key="sb_repeats")
        c = st.columns(4)
        sb_slo = c[0].text_input(labels["--slo"], "", key="sb_slo", placeholder="ttft_p90=500ms,tpot_p90=50ms")
        sb_model = c[1].text_input(labels["--model"], st.query_params.get("model", ""), key="sb_model")
        sb_engine = c[2].text_input(labels["--engine"], "", key="sb_engine")
        sb_tag = c[3].text_input(labels["--tag"], "", key="sb_tag")
        serve_submitted = st.form_submit_button("Start serve-bench", type="primary", disabled=running)
    if serve_submitted:
        serve_request = jobs.ServeBenchRequest(
            target=target, rate=sb_rate, concurrency=sb_concurrency,
            requests=None if sb_requests is None else int(sb_requests), prompt_tokens=sb_prompt,
            output_tokens=sb_output,
            slo=sb_slo, engine=sb_engine, model=sb_model, repeats=int(sb_repeats), tag=sb_tag)
        try:
            jobs.start(db, serve_request)
        except JouleBenchError as e:
            st.error(md(e.format_message()))
        else:
            st.rerun()
