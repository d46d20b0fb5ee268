"""The decision model: which device to buy for a job, and why, as typed inputs and typed answers with the
sentences computed beside them (no Streamlit, no torch). The Decide page renders it; `joulebench decide`
prints it. Modules import their siblings by module path, never through this file."""
