"""serve-bench: measure a running OpenAI-compatible server (vLLM, SGLang, TGI, llama.cpp, Ollama,
`transformers serve`) under load while sampling the power of the device it runs on.

Modules: `options` (ranges, the SLO), `lengths` (request lengths and prompts), `load` (arrivals and
concurrency), `client` (streamed requests, the server probe), `measure` (steady state, overload,
figures), `records` (every request of a point as the result file keeps it), `lag` (the client's own send lag and
CPU wait; client_bound), `bench` (a point and its run), `run` (the sweep: probe, measure, write, import), `cli`.
"""
