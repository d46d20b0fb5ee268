"""Issue 39, twelfth held-out set (files and attribution in tests/fixtures/formats/SOURCES.md): a Markdown table
whose delimiter cells are short (`--:`) with its prompt sizes in a 'prompt' column, a text's table of words beside its
table of figures, and records of figures beside records of percentage comparisons. Each rule on the file's own
numbers, with its negative case."""

from __future__ import annotations

from pathlib import Path

from importers import load
from tests.helpers import load_fixture as _load
from tests.helpers import refusal

FORMATS = Path(__file__).parent / "fixtures" / "formats" / "general_table"
SHORT_RULE = FORMATS / "apple-m5-max-llamacpp-mlx-bench-short-rule-prompt-sizes.md"
WORDS_AND_FIGURES = FORMATS / "rpi5-ollama-research-words-table-and-figures-table.md"
PERCENTS = FORMATS / "tokendock-kv-cache-engines-and-percent-comparisons.json"


def test_a_short_delimiter_row_is_a_table_and_its_prompt_sizes_are_setups() -> None:
    runs, fmt, _ = _load(SHORT_RULE)
    assert fmt == "general-table" and len(runs) == 28
    first = runs[0]
    assert first["metrics"]["decode_tokens_per_s"] == 92.9 and first["metrics"]["prompt_tokens_per_s"] == 1113.0
    assert first["metrics"]["ttft_avg_ms"] == 128.0 and "128tok (142 tok)" in first["config"]["tag"]
    assert len({(r["config"]["model"], r["config"]["tag"]) for r in runs}) == 28  # 7 setups x 4 prompt sizes
    # a prompt column of texts, each its own, is never the setup
    texts = "| prompt | decode t/s |\n|--|--:|\n| Write a poem about the sea | 9 |\n| Explain TCP | 8 |\n"
    assert all("Explain" not in (r["config"].get("tag") or "") for r in load(texts.encode(), "t.md")[0].runs)


def test_a_table_of_words_beside_a_table_of_figures_is_left_out() -> None:
    runs, _, _ = _load(WORDS_AND_FIGURES)
    assert len(runs) == 8
    gemma = next(r for r in runs if r["config"]["model"] == "gemma3:1b")
    assert gemma["metrics"]["tokens_per_s"] == 11.53  # '**11.53**'
    # a text's only table, of words where a figure is due, is still refused naming the cell
    words = "| Engine | Speed (TPS) |\n|---|---|\n| ollama | Moderate |\n"
    assert "'Moderate' is not a number" in refusal(words.encode(), "w.md")


def test_records_of_figures_beside_records_of_percentages_are_the_runs() -> None:
    runs, _, warnings = _load(PERCENTS)
    assert [(r["config"]["engine"], r["metrics"]["tokens_per_s"]) for r in runs] == [
        ("baseline_mha_no_cache", 121.781), ("gqa_contiguous_cache", 190.646), ("gqa_paged_cache", 183.285)]
    assert runs[0]["metrics"]["ttft_avg_ms"] == 10.595
    # 'mean_total_time_ms' is a request's mean time, not the run's window
    assert runs[0]["metrics"]["latency_avg_ms"] == 173.023 and "duration_s" not in runs[0]["metrics"]
    assert any("not read: their figures are of another kind" in w for w in warnings)  # the comparisons among them
    # two sets of records that both hold figures are still refused as ambiguous
    both = ('{"a": {"x": {"tokens_per_s": 1}, "y": {"tokens_per_s": 2}}, '
            '"b": {"p": {"ttft_ms": 3}, "q": {"ttft_ms": 4}}}')
    assert "sets of records of different keys" in refusal(both.encode(), "r.json")
