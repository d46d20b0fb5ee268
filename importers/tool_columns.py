"""Column names a tool defines with a unit it does not write in them: a table that carries enough of one tool's own
names (its result's keys, flattened into CSV by a person's script) is read in that tool's units. vLLM's
`benchmark_serving` writes `duration` in seconds and `output_throughput` in output tokens per second (its
`mean_ttft_ms` names its unit); a table of those keys with a merged power column is that result, row by row; the
Hugging Face Trainer's `train_runtime` is in seconds (`speed_metrics`: time.time() differences). A
name is read so only beside enough of its tool's names: a bare `duration` elsewhere stays a figure without its unit."""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Vocabulary:
    tool: str
    signature: frozenset[str]  # names only that tool writes together
    units: dict[str, str]  # its names whose unit it does not write -> the unit it writes them in
    enough: int = 4


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
)


def tool_units(header: list[str]) -> tuple[dict[str, str], str | None]:
    """({column name: unit} for a table carrying enough of one tool's own names, that tool), or ({}, None)."""
    def leaf(h: str) -> str:  # a flattened record's 'median.output_throughput': the tool's own name is the last part
        return h.strip().lower().rsplit(".", 1)[-1]

    names = {leaf(h) for h in header}
    for vocabulary in VOCABULARIES:
        if len(names & vocabulary.signature) >= vocabulary.enough:
            return {h: vocabulary.units[leaf(h)] for h in header if leaf(h) in vocabulary.units}, vocabulary.tool
    return {}, None
