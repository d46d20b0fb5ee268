"""Column names a tool defines with a unit it does not write in them: a table that carries enough of one tool's own
names (its result's keys, flattened into CSV by a person's script) is read in that tool's units. vLLM's
`benchmark_serving` writes `duration` in seconds and `output_throughput` in output tokens per second (its
`mean_ttft_ms` names its unit); a table of those keys with a merged power column is that result, row by row; the
Hugging Face Trainer's `train_runtime` is in seconds (`speed_metrics`: time.time() differences). A
name is read so only beside enough of its tool's names: a bare `duration` elsewhere stays a figure without its unit."""

from __future__ import annotations

from dataclasses import dataclass, field


@dataclass(frozen=True)
class Vocabulary:
    tool: str
    signature: frozenset[str]  # names only that tool writes together
    units: dict[str, str]  # its names whose unit it does not write -> the unit it writes them in
    enough: int = 4
    names: dict[str, str] = field(default_factory=dict)  # its names that mean other than they say -> what they mean


VOCABULARIES = (
    Vocabulary("vLLM benchmark_serving (SGLang's bench_serving writes the same keys)",
               frozenset({"request_throughput", "output_throughput", "total_token_throughput", "mean_ttft_ms",
                          "median_ttft_ms", "mean_tpot_ms", "mean_itl_ms", "mean_e2el_ms", "total_output_tokens",
                          "total_input_tokens", "completed"}),
               {"duration": "s", "output_throughput": "tokens/s", "request_throughput": "req/s"}),
    Vocabulary("Hugging Face Trainer metrics (trainer.train() / evaluate())",
               frozenset({"train_runtime", "train_samples_per_second", "train_steps_per_second", "train_loss",
                          "total_flos", "eval_runtime", "eval_samples_per_second", "eval_steps_per_second",
                          "eval_loss"}),
               {"train_runtime": "s", "eval_runtime": "s"}, enough=2),
    # llama.cpp's server: each completion's 'timings' (tools/server: prompt_* the prefill, predicted_* the decode)
    Vocabulary("llama.cpp server timings",
               frozenset({"prompt_n", "prompt_ms", "prompt_per_token_ms", "prompt_per_second", "predicted_n",
                          "predicted_ms", "predicted_per_token_ms", "predicted_per_second"}),
               {}, enough=4,
               names={"prompt_per_second": "prompt tokens/s", "predicted_per_second": "decode tokens/s",
                      "predicted_n": "output tokens", "prompt_n": "prompt tokens", "prompt_ms": "prefill (ms)",
                      "predicted_ms": "decode (ms)", "predicted_per_token_ms": "decode time per token (ms)",
                      "prompt_per_token_ms": "prefill time per token (ms)"}),
)


def _leaf(h: str) -> str:  # a flattened record's 'median.output_throughput': the tool's own name is the last part
    return h.strip().lower().rsplit(".", 1)[-1]


def tool_names(header: list[str]) -> tuple[list[str], str | None]:
    """The header with a tool's own names that mean other than they say written as what they mean ('predicted_per_
    second': llama.cpp's decode tokens/s, never an estimate), and the tool; the header as it is, and None."""
    names = {_leaf(h) for h in header}
    for vocabulary in VOCABULARIES:
        if vocabulary.names and len(names & vocabulary.signature) >= vocabulary.enough:
            return [vocabulary.names.get(_leaf(h), h) for h in header], vocabulary.tool
    return header, None


def tool_units(header: list[str]) -> tuple[dict[str, str], str | None]:
    """({column name: unit} for a table carrying enough of one tool's own names, that tool), or ({}, None)."""
    names = {_leaf(h) for h in header}
    for vocabulary in VOCABULARIES:
        if len(names & vocabulary.signature) >= vocabulary.enough and vocabulary.units:
            return {h: vocabulary.units[_leaf(h)] for h in header if _leaf(h) in vocabulary.units}, vocabulary.tool
    return {}, None
