"""What the pages print: escaping, significant figures, human headers, charts that say which way
is better, and room for repeat statistics (n, 95% interval, grade) without a redesign."""

from __future__ import annotations

import re

import polars as pl
import pytest

from decision import cost, decide, figures, money, scope, tables
from decision.markdown import md
from decision.text import human_field, plot_text, sig
from explorer import charts
from explorer.tables import styled
from tests.helpers import shown


@pytest.mark.parametrize("text", ["![x](http://example.invalid/a.png)", "[click](javascript:alert(1))",
                                  "# heading", "- item", "1. item", "<img src=x onerror=alert(1)>", "**bold** _it_",
                                  ":red[colour] $x^2$ `code`", "line one\nline two", "www.example.invalid",
                                  "someone@example.invalid"])
def test_esc_keeps_every_markdown_construct_literal(text: str) -> None:
    escaped = md(text)
    unescaped = re.findall(r"(?<!\\)[\[\]()!#*_`$<>:.\-]", escaped)
    assert unescaped == [], escaped  # every character that could start Markdown is backslash-escaped
    assert "://" not in escaped and "www." not in escaped and "@e" not in escaped  # no autolink can form
    assert shown(escaped) == "  \n".join(line for line in text.splitlines())  # the reader sees the text


def test_plot_text_keeps_html_out_of_charts() -> None:
    assert plot_text('<a href="http://x">y</a>') == '&lt;a href="http://x"&gt;y&lt;/a&gt;'


@pytest.mark.parametrize(("value", "expected"), [
    (828.2, "828"), (11.04, "11"), (0.004513, "0.00451"), (123456.7, "123,457"), (2.046, "2.05"), (6.0, "6"),
    (0.4513, "0.451"), (None, "not measured"), (float("nan"), "not measured"), (0, "0"), (-27.0, "-27")])
def test_sig_gives_three_significant_figures_and_never_zero_for_missing(value: float | None, expected: str) -> None:
    assert sig(value) == expected


def test_human_headers_carry_units() -> None:
    assert human_field("throughput_sps") == "Throughput (samples/s)"
    assert human_field("j_per_iteration") == "Energy per iteration (J)"
    assert human_field("latency_p99_ms") == "Latency p99 (ms)"
    assert human_field("tdp_w") == "TDP (W)"
    assert human_field("memory_bandwidth_gbs") == "Memory bandwidth (GB/s)"


def test_styled_tables_say_not_measured_and_keep_numbers_sortable() -> None:
    frame = pl.DataFrame({"Device": ["a", None], "Throughput (samples/s)": [1234.5678, None], "Runs": [3, None]})
    styler = styled(frame)
    html = styler.to_html()
    assert "not measured" in html and "1,235" in html and "None" not in html and "nan" not in html
    assert styler.data["Throughput (samples/s)"].dtype.kind == "f"  # numbers stay numbers for sorting


def test_every_metric_chart_says_which_way_is_better_and_can_draw_confidence_intervals() -> None:
    bars = pl.DataFrame({"series": ["A", "B"], "config": ["FP16 · batch 8", "FP16 · batch 8"], "value": [10.0, 5.0],
                         "runs": [3, 3], "boundary": ["", ""], "method": ["", ""], "basis": ["", ""],
                         "citation": ["", ""]})
    plain = charts.metric_bars(bars, "Throughput (samples/s)", True)
    assert "higher is better" in plain.layout.yaxis.title.text
    assert plain.data[0].error_y.array is None
    with_ci = charts.metric_bars(bars.with_columns(pl.Series("ci_low", [9.0, 4.0]), pl.Series("ci_high", [12.0, 5.5])),
                                 "Energy per example (J)", False, log_y=True)
    assert "lower is better" in with_ci.layout.yaxis.title.text and with_ci.layout.yaxis.type == "log"
    assert list(with_ci.data[0].error_y.array) == [2.0]


def test_decide_table_shows_n_interval_and_grade_columns_only_when_figures_carry_them() -> None:
    fig = figures.Figure("A", "Throughput", 10.0, "samples/s", "measured here")
    graded = figures.Figure("A", "Throughput", 10.0, "samples/s", "measured here", n=5, ci_low=9.0, ci_high=11.0,
                           grade="B")
    answer = decide.Answer(scope.Job(), money.CostSettings(), cost.Constraints(), [], {}, {}, {}, {}, [])
    assert {"n", "ci_low", "grade"}.isdisjoint(tables.figure_table(answer).columns)
    assert (fig.shown(), graded.n) == ("10 samples/s", 5)


def test_a_citation_names_the_document_by_its_title_not_its_file() -> None:
    """Issue 17: raw seed file names were shown as citations."""
    import polars as pl

    from decision.text import cite, cited

    raw = "003_a690d2fb17d185da.txt · Inference performance: NVIDIA Tesla T4 (1x T4 16GB)"
    assert cite(raw) == ("NVIDIA DeepLearningExamples: BERT for TensorFlow, benchmark results · Inference "
                         "performance: NVIDIA Tesla T4 (1x T4 16GB)")
    assert cite("someone's own upload.csv") == "someone's own upload.csv" and cite(None) is None
    frame = cited(pl.DataFrame({"citation": [raw, None, "x"], "price_source": ["retail; " + raw, None, None]}))
    assert frame["citation"].to_list() == [cite(raw), None, "x"]
    assert frame["price_source"].to_list() == ["retail; " + (cite(raw) or ""), None, None]


def test_a_label_inside_a_sentence_keeps_its_units_and_acronyms() -> None:
    """Issue 17: 'average power (w)' in Compare's sentences."""
    from decision.text import in_sentence

    assert in_sentence("Average power (W)") == "average power (W)"
    assert in_sentence("TDP (W)") == "TDP (W)" and in_sentence("J per token (J)") == "J per token (J)"


def test_an_edited_catalog_row_is_saved_with_the_stored_citation_not_the_shown_title() -> None:
    """The Devices page shows titles; saving an edit must not write the title back as if the user
    had typed a new price source (the entered price then kept the published source beside it)."""
    import polars as pl

    from decision.text import cited

    stored = pl.DataFrame({"price_source": ["000_62b0c31cb218ba3e.txt · Introduction"], "price_amount": [1500.0]})
    shown = cited(stored)
    assert shown["price_source"][0].startswith("Blog post (2021)")
    assert cited(shown, back=True).equals(stored)
