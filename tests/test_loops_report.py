"""The report's forms on loops and on the peak: a scan's rows say "× 8 iterations",
the totals the rows add up to are named apart from XLA's (which count each loop
body once) and the notes say why they differ; the summary's peak is the live-range
peak of the buffer assignment with memory_analysis()'s beside it, each named, or
says which figure it shows. Real compiles."""

import html

import jax
import numpy as np
import pytest

import olympus.numpy as jnp
from olympus_jupyter import inspect
from olympus_jupyter.report.cost_names import format_bytes
from olympus_jupyter.report.costs_html import costs_section
from olympus_jupyter.report.costs_view import counted_totals
from olympus_jupyter.report.markup import concat
from olympus_jupyter.report.peak_words import peak_summary
from olympus_jupyter.report.validate import check_bundle

STEPS, WIDTH = 8, 16
X = np.ones((WIDTH, WIDTH), np.float32)
WS = np.ones((STEPS, WIDTH, WIDTH), np.float32)


def scanned(x, ws):
    def body(c, w):
        return jnp.tanh(c @ w), None

    return jax.lax.scan(body, x, ws)[0]


def plain(x, w):
    return jnp.tanh(x @ w)


@pytest.fixture(scope="module")
def loop_report():
    return inspect(scanned, X, WS, costs=True, cache=False)


@pytest.fixture(scope="module")
def plain_report():
    return inspect(plain, X, X, costs=True, cache=False)


def test_the_data_names_both_totals_and_says_why_they_differ(loop_report):
    costs = loop_report.costs
    xla, counted = costs["totals"], costs["counted_totals"]
    assert counted_totals(costs) is counted
    flops = sum(r["flops"] for r in costs["lines"])
    assert flops == pytest.approx(counted["flops"], rel=1e-6)
    assert counted["flops"] >= STEPS * 2 * WIDTH**3 > 2 * xla["flops"]
    assert costs["notes"][0].startswith("XLA's cost_analysis() counts each loop body once")
    (heavy,) = [r for r in loop_report.cost_by_line() if r["flops"] >= 2 * WIDTH**3]
    assert heavy["iterations"] == "× 8 iterations"
    # Shares are of what the rows add up to.
    assert heavy["flops_share"] == pytest.approx(heavy["flops"] / counted["flops"])
    assert sum(r["flops_share"] for r in loop_report.cost_by_line()) == pytest.approx(1.0)
    check_bundle(loop_report.form("application/vnd.olympus.stages+json"))


def test_a_program_without_loops_has_xla_totals_only(plain_report):
    costs = plain_report.costs
    assert "counted_totals" not in costs
    assert all("iterations" not in r for r in costs["lines"])
    assert all(r["iterations"] == "" for r in plain_report.cost_by_line())
    assert not any("loop" in n for n in costs["notes"])
    section = html.unescape(str(concat(costs_section(plain_report, "olT", full=False))))
    assert "XLA's totals" in section and "counted (loops" not in section
    assert "loops x trip counts" not in plain_report.text()


def test_the_html_and_the_text_show_the_iterations_and_both_totals(loop_report):
    page = loop_report.form("text/html")
    shown = html.unescape(page)
    assert "× 8 iterations" in shown
    assert "XLA's totals" in shown and "counted (loops × trip counts)" in shown
    assert "counts each loop body once" in shown
    text = loop_report.text()
    assert text.isascii()
    assert "[x 8 iterations]" in text
    assert "(loops x trip counts; XLA's cost_analysis():" in text


def test_the_summary_peak_is_the_live_range_peak_with_memory_analysis_beside(loop_report):
    live = loop_report.costs["peak"]["bytes"]
    assert loop_report.analyses.memory is not None
    ma = loop_report.analyses.memory["peak_memory_in_bytes"]
    text = loop_report.text()
    want = (
        f"  peak memory {format_bytes(live)} live (buffer assignment); "
        f"{format_bytes(ma)} memory_analysis()"
    )
    assert want in text.split("\n")
    page = html.unescape(loop_report.form("text/html"))
    assert (
        f"peak {format_bytes(live)} live (buffer assignment) · {format_bytes(ma)} memory_analysis()"
        in page
    )
    assert "peak (memory_analysis())" in page and "peak live (buffer assignment)" in page


def test_without_the_costs_stage_the_summary_says_which_peak_it_shows():
    report = inspect(plain, X, X, cache=False)
    assert report.analyses.memory is not None
    ma = report.analyses.memory["peak_memory_in_bytes"]
    (line,) = [t for t in report.text().split("\n") if t.startswith("  peak memory")]
    assert line == (
        f"  peak memory {format_bytes(ma)} memory_analysis() (the live-range peak of "
        "the buffer assignment needs the costs stage: costs=True)"
    )


def test_a_peak_that_could_not_be_read_says_why():
    costs = {"peak": None, "unavailable": {"peak": "XLA wrote no buffer assignment"}}
    assert peak_summary({"peak_memory_in_bytes": 2048}, costs) == (
        "2.0 KiB memory_analysis() (the live-range peak is unavailable: "
        "XLA wrote no buffer assignment)"
    )
    assert peak_summary(None, {"peak": {"bytes": 4096}}) == "4.0 KiB live (buffer assignment)"
