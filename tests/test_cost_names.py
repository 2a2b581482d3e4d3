"""XLA's cost figures are named for people, with units, in every form of a report;
XLA's own key stays beside the name, and a key nobody knows is shown as itself."""

import html.parser
import json
import math

import jax
import numpy as np
import pytest

import olympus.numpy as jnp
from olympus_jupyter import StageReport, inspect
from olympus_jupyter.report import cost_names
from olympus_jupyter.report.cost_names import describe, format_value, legend, sort_key
from olympus_jupyter.report.validate import check_bundle

HOSTILE = "<img src=x onerror=alert(1)>\"'&amp;"
UNITS = {"flops", "ops", "bytes", "seconds", ""}


def matmul(a, b):
    return a @ b


def tuple_output(x):
    y = jnp.sin(x)
    return y * 2, {"total": jnp.sum(y), "cos": jnp.cos(x)}


PROGRAMS = {
    "matmul": (matmul, (np.ones((4, 8), np.float32), np.ones((8, 3), np.float32))),
    "tuple output": (tuple_output, (np.ones((16, 16), np.float32),)),
}


@pytest.fixture(scope="module", params=sorted(PROGRAMS))
def report(request):
    f, args = PROGRAMS[request.param]
    return inspect(f, *args, cache=None)


def figures(report):
    tables = [t for t in (report.analyses.cost_lowered, report.analyses.cost_compiled) if t]
    if not tables:
        pytest.skip(f"{jax.default_backend()} reports no cost analysis")
    return tables


# --- every key XLA makes here has a name -----------------------------------------


def test_every_key_xla_reports_on_this_backend_is_named(report):
    for table in figures(report):
        for key, value in table.items():
            name = describe(key)
            assert name.known, f"XLA's key {key!r} on {jax.default_backend()} has no name"
            assert name.label and name.label != key, key
            assert name.key == key and name.unit in UNITS
            assert len(name.explanation) > 40 and name.family
            assert name.format(value) != "—"


def test_the_keys_here_are_the_ones_the_names_describe(report):
    # So that the test above covers something: XLA's per-operand and output keys.
    keys = set().union(*figures(report))
    assert {"flops", "bytes accessed", "bytes accessed0{}", "bytes accessedout{}"} <= keys


def test_operand_means_each_instructions_operand_not_the_functions_argument():
    # sin, multiply and the sum each read x through their operand 0: XLA adds them up.
    x = np.ones(5, np.float32)
    lowered = inspect(lambda x: (jnp.sin(x), x * 2, x.sum()), x, cache=None).analyses.cost_lowered
    if lowered is None:
        pytest.skip(f"{jax.default_backend()} reports no cost analysis before optimization")
    assert lowered["bytes accessed0{}"] >= 3 * x.nbytes
    assert "not argument 0 of the function" in describe("bytes accessed0{}").explanation


# --- the names ----------------------------------------------------------------------


@pytest.mark.parametrize(
    "key, label, unit",
    [
        ("flops", "floating-point operations", "flops"),
        ("transcendentals", "transcendental operations", "ops"),
        ("bytes accessed", "bytes accessed (read + written)", "bytes"),
        ("bytes accessed0{}", "bytes read from operand 0", "bytes"),
        ("bytes accessed12{}", "bytes read from operand 12", "bytes"),
        ("bytes accessed1{0,2}", "bytes read from operand 1, tuple element {0,2}", "bytes"),
        ("bytes accessedout{}", "bytes written to results", "bytes"),
        ("bytes accessedout{1}", "bytes written to results, tuple element {1}", "bytes"),
        ("utilization1{}", "utilization of operand 1", ""),
        ("utilization", "utilization of results", ""),
        ("optimal_seconds", "optimal time", "seconds"),
        # The spelling of some XLA releases (the constants of HloCostAnalysis::Properties).
        ("bytes accessed operand 0 {}", "bytes read from operand 0", "bytes"),
        ("utilization operand 1 {}", "utilization of operand 1", ""),
        ("bytes accessed output {}", "bytes written to results", "bytes"),
    ],
)
def test_each_kind_of_key_has_a_label_and_a_unit(key, label, unit):
    name = describe(key)
    assert (name.label, name.unit, name.known) == (label, unit, True)


@pytest.mark.parametrize(
    "key",
    [
        "some figure XLA adds next year",
        "",
        HOSTILE,
        "bytes accessed{}",
        "utilization-1{}",
        "bytes accessed0{",
        "bytes accessed" + "9" * 200 + "{}",
        "flops ",
        "x" * 256,
        "\x1b[31m",
    ],
)
def test_an_unknown_key_is_shown_as_itself(key):
    name = describe(key)
    assert (name.label, name.key, name.unit, name.known) == (key, key, "", False)
    assert "no name for" in name.explanation
    assert name.format(1.5) == "1.5"
    sort_key(key)  # orders, never raises


def test_keys_are_ordered_headline_first_then_by_operand_number():
    keys = [
        "utilization1{}",
        "zzz",
        "bytes accessed10{}",
        "bytes accessedout{}",
        "flops",
        "bytes accessed2{}",
        "bytes accessed",
        "optimal_seconds",
        "utilization0{}",
        "transcendentals",
    ]
    assert sorted(keys, key=sort_key) == [
        "flops",
        "transcendentals",
        "bytes accessed",
        "optimal_seconds",
        "bytes accessedout{}",
        "bytes accessed2{}",
        "bytes accessed10{}",
        "utilization0{}",
        "utilization1{}",
        "zzz",
    ]


def test_the_legend_names_each_kind_once():
    entries = legend(
        ["bytes accessed0{}", "bytes accessed1{}", "utilization0{}", "flops", "unknown key"]
    )
    assert [label for label, _ in entries] == [
        "floating-point operations",
        "bytes read from operand N",
        "utilization of operand N",
    ]
    assert all(text and "N" in text for _, text in entries[1:])


@pytest.mark.parametrize(
    "value, unit, shown",
    [
        (272.0, "bytes", "272 B"),
        (1258291.0, "bytes", "1.2 MiB (1,258,291 B)"),
        (1536, "bytes", "1.5 KiB (1,536 B)"),
        (192.0, "flops", "192 flops"),
        (2.5e9, "flops", "2,500,000,000 flops (2.5 G)"),
        (5.0, "ops", "5 ops"),
        (3.2e-6, "seconds", "3.2 µs"),
        (0.0015, "seconds", "1.5 ms"),
        (0.5, "", "0.5"),
        (None, "bytes", "—"),
        (math.inf, "bytes", "inf"),
        (math.nan, "flops", "nan"),
    ],
)
def test_values_carry_their_unit_and_sizes_a_readable_form(value, unit, shown):
    assert format_value(value, unit) == shown


def test_lowered_and_compiled_are_explained():
    assert "before" in cost_names.LOWERED_NOTE and "fusion" in cost_names.COMPILED_NOTE
    assert "not measurements" in cost_names.STAGES_NOTE


# --- the forms ------------------------------------------------------------------------


class Cells(html.parser.HTMLParser):
    """The cost table's row headers: their text and ``title``."""

    def __init__(self, page):
        super().__init__(convert_charrefs=True)
        self.rows, self.tags = {}, []
        self._th, self._in_cost, self._key = None, False, None
        self.feed(page)

    def handle_starttag(self, tag, attrs):
        attrs = dict(attrs)
        self.tags.append(tag)
        if tag == "table":
            self._in_cost = "cost" in (attrs.get("class") or "").split()
        if tag == "tr":
            self._key = attrs.get("data-key") if self._in_cost else None
        if tag == "th" and self._key is not None:
            self._th = [attrs["title"], ""]

    def handle_endtag(self, tag):
        if tag == "th" and self._th is not None:
            self.rows[self._key] = tuple(self._th)
            self._th = None
        if tag == "table":
            self._in_cost = False

    def handle_data(self, data):
        if self._th is not None:
            self._th[1] += data


def with_figures(report, extra):
    data = json.loads(json.dumps(report.to_json()))
    for column in ("lowered", "compiled"):
        if data["analyses"]["cost"][column] is not None:
            data["analyses"]["cost"][column].update(extra)
    return StageReport.from_json(data)


def test_the_html_table_names_each_figure_keeps_its_key_and_explains_it(report):
    figures(report)
    report = with_figures(report, {HOSTILE: 1.0, "bytes accessed3{}": 2048.0})
    page = report.html()
    cells = Cells(page)
    keys = set(report.analyses.cost_lowered or {}) | set(report.analyses.cost_compiled or {})
    assert set(cells.rows) == keys
    for key, (title, text) in cells.rows.items():
        name = describe(key)
        assert text.startswith(name.label) and title.startswith(name.explanation)
        assert f"XLA key: {key}" in title
        if name.known:
            assert text.endswith(key)  # the raw key, small, beside the name
    assert "2.0 KiB (2,048 B)" in page
    # Visible without hovering: what lowered and compiled mean, and a legend.
    assert "before any of its optimization passes" in page
    assert "<b>bytes read from operand N</b>" in page
    # The key from the data is text, never markup.
    assert "<img" not in page and "script" not in cells.tags
    assert cells.rows[HOSTILE][1] == HOSTILE


def test_the_text_form_names_the_figures_with_units_and_keys(report):
    figures(report)
    text = with_figures(report, {"odd\x1bkey": 1.0}).text()
    assert "cost, XLA's estimate before -> after optimization (lowered -> compiled):" in text
    assert "floating-point operations" in text and "[flops]" in text
    assert "bytes accessed (read + written)" in text and "[bytes accessed]" in text
    assert "\x1b" not in text
    lines = text.splitlines()
    flops = next(ln for ln in lines if "[flops]" in ln)
    assert flops.count("flops") == 3  # the unit before and after, and XLA's key


def test_the_text_form_lists_a_few_figures_and_counts_the_rest():
    from olympus_jupyter.report.text import MAX_COST_LINES, cost_lines

    many = {f"bytes accessed{i}{{}}": 1.0 for i in range(20)}
    lines = cost_lines(many, None)
    assert len(lines) == 1 + MAX_COST_LINES + 1
    assert "12 more" in lines[-1]
    # Only the figures there are: a lowering that was not compiled has one column.
    assert "(lowered):" in lines[0] and "compiled" not in "".join(lines) and "->" not in lines[1]
    assert cost_lines(None, None) == []


def test_the_bundle_carries_the_names_and_old_bundles_still_read(report):
    figures(report)
    data = report.to_json()
    check_bundle(data)
    cost = data["analyses"]["cost"]
    keys = set(cost["lowered"] or {}) | set(cost["compiled"] or {})
    assert set(cost["names"]) == keys
    for key, name in cost["names"].items():
        assert name == describe(key).to_json() and name["label"] != key
    assert cost["note"] == cost_names.STAGES_NOTE
    # A bundle from before the names (or one without them) validates and reads.
    old = json.loads(json.dumps(data))
    del old["analyses"]["cost"]["names"], old["analyses"]["cost"]["note"]
    check_bundle(old)
    again = StageReport.from_json(old)
    assert again.to_json() == data
    assert describe("flops").label in again.html()
