"""The ``costs`` stage in a real browser: the heatmap the toolbar turns on (each source
line's share of the flops in the gutter, its figures on hover; each op line of a stage
coloured by its source line's), and the panel's table of figures by line, in JupyterLab
and in the standalone page ``report.save()`` writes; and a hostile ``costs`` (a file index
out of range, markup in its strings) shown as text."""

from __future__ import annotations

import copy
import re

import jax
import nbformat
import numpy as np
import pytest

import olympus.numpy as jnp
import olympus_jupyter
from olympus_jupyter.report.cost_names import format_bytes, format_flops, format_share

from built_view import needs_view

from labserver import (
    STAGES_MIME,
    artifacts_dir,
    open_notebook,
    open_offline,
    saved_outputs_notebook,
    set_layout,
)

SETUP = (
    "import numpy as np, olympus, olympus.numpy as jnp\n"
    "import olympus_jupyter\n"
    "%load_ext olympus_jupyter"
)
#: The matmul on a line of its own: its flops are the dot's, 2*M*N*K.
MODEL = (
    "def f(x, w):\n"
    "    y = x @ w\n"
    "    return jnp.tanh(y).sum()\n"
    "x = np.ones((8, 16), np.float32)\n"
    "w = np.ones((16, 32), np.float32)"
)
M, K, N = 8, 16, 32
MATMUL = "y = x @ w"
#: The matmul's line in the cell (the source view numbers a cell's lines from 1).
MATMUL_LINE = MODEL.splitlines().index("    " + MATMUL) + 1

LIVE = "[data-olympus-live][data-olympus-rendered]"
PANEL = '[role="tabpanel"][data-stage-panel="costs"]'


def f(x, w):
    y = x @ w
    return jnp.tanh(y).sum()


def args():
    return np.ones((M, K), np.float32), np.ones((K, N), np.float32)


# -- the figures: the view writes them as the text and static HTML do (format_flops and
# format_share; tests/test_view_tables.py runs the view's functions against them) ------


def expected_heat(costs: dict, line: int) -> tuple[str, str]:
    """The matmul line's share as the gutter writes it, and its tooltip's start."""
    flops = 2 * M * N * K
    share = format_share(flops / costs["totals"]["flops"])
    return share, f"line {line}: {format_flops(flops)} ({share} of flops)"


# -- fixtures ------------------------------------------------------------------------------


@pytest.fixture(scope="module")
def costs_nb(notebooks_dir):
    from labserver import write_notebook

    path = write_notebook(
        notebooks_dir / "costs.ipynb", [SETUP, MODEL, "%olympus_lower --costs f(x, w)"]
    )
    nb = nbformat.read(path, as_version=4)
    data = next(
        o["data"][STAGES_MIME] for o in nb.cells[-1].outputs if STAGES_MIME in o.get("data", {})
    )
    return path.name, data


@pytest.fixture(scope="module")
def saved_page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("costs-page")
    report = olympus_jupyter.inspect(f, *args(), costs=True, cache=None)
    return report.save(folder / "costs.html"), report.to_json()


# -- steps ---------------------------------------------------------------------------------


def choose_tab(root, stage):
    tab = root.locator(f'[role="tab"][data-stage="{stage}"]')
    tab.click()
    assert tab.get_attribute("aria-selected") == "true"
    return root.locator(f'[role="tabpanel"][data-stage-panel="{stage}"]')


def heat_on(root, metric="flops"):
    """Turns the heatmap on from the toolbar (with the keyboard: the choice is a select)."""
    select = root.locator('select[data-olympus-action="heat"]')
    assert select.count() == 1
    assert select.locator("option").all_inner_texts() == [
        "off",
        "flops",
        "bytes accessed",
        "peak memory",
    ]
    select.focus()
    select.select_option(metric)
    assert root.get_attribute("data-olympus-heat") == metric


def code_line(panel, text, whole=False):
    """The first line of ``panel`` holding ``text``; with ``whole``, the first that is
    ``text`` (indented or not): this file's source view also shows the notebook
    cell's text, as a string, which holds the matmul's line too."""
    if whole:
        text = re.compile(r"^\s*" + re.escape(text) + r"\s*$")
    return panel.locator(".cm-line", has_text=text).first


def gutter_mark_of(panel, text, whole=False):
    """The heat gutter's mark beside the line ``code_line`` finds (same height on
    screen)."""
    line = code_line(panel, text, whole)
    line.scroll_into_view_if_needed()
    box = line.bounding_box()
    middle = box["y"] + box["height"] / 2
    panel.locator(".olympus-heat-gutter [data-olympus-heat-mark]").first.wait_for()
    gutter = panel.locator(".olympus-heat-gutter .cm-gutterElement")
    for element in gutter.all():
        if not element.is_visible():
            continue  # the spacer, which only sizes the gutter
        b = element.bounding_box()
        if b and b["y"] <= middle <= b["y"] + b["height"]:
            mark = element.locator("[data-olympus-heat-mark]")
            assert mark.count() == 1, f"no heat mark beside {text!r}"
            return mark
    raise AssertionError(f"no heat gutter element beside {text!r}")


def assert_source_heat(root, costs, line_number):
    """The matmul's line: its share in the gutter, its flops (2*M*N*K) on hover."""
    share, title = expected_heat(costs, line_number)
    source = choose_tab(root, "source")
    mark = gutter_mark_of(source, MATMUL, whole=True)
    mark.hover()
    assert mark.inner_text() == share
    assert mark.get_attribute("title").startswith(title + ", "), mark.get_attribute("title")
    assert "accessed" in mark.get_attribute("title")
    assert "live at peak" in mark.get_attribute("title")
    # For assistive technology too: the mark's label, and the line's own tooltip.
    assert mark.get_attribute("aria-label") == mark.get_attribute("title")
    line = code_line(source, MATMUL, whole=True)
    assert title in line.get_attribute("title")
    return title


def assert_stage_heat(root, title, stage="olympuspr", op="dot_general"):
    """An op line of a stage takes its source line's share (and says whose it is)."""
    panel = choose_tab(root, stage)
    mark = gutter_mark_of(panel, op)
    assert mark.get_attribute("title").startswith("tied to " + title)


def assert_costs_row(root, costs, line_number):
    """The costs tab: the matmul's row with its flops and share; choosing it selects the line."""
    share, _ = expected_heat(costs, line_number)
    panel = choose_tab(root, "costs")
    panel.locator("[data-olympus-costs]").wait_for()
    assert panel.locator("[data-olympus-unsupported]").count() == 0
    table = panel.locator('table[data-olympus-table="cost-lines"]')
    rows = table.locator("tbody tr[data-olympus-cost-row]")
    assert rows.count() == len(costs["lines"])
    row = table.locator("tbody tr[data-key]", has_text=MATMUL)
    assert row.count() == 1
    flops_cell = row.locator("td").first
    assert flops_cell.locator(".olympus-cost-value").inner_text() == format_flops(2 * M * N * K)
    assert flops_cell.locator(".olympus-cost-share").inner_text() == share
    assert f":{line_number}" in row.locator("button[data-olympus-cost-line]").inner_text()
    # What no line made is in the table, not in a gutter.
    assert table.locator('tr[data-what="arguments"]').count() == 1
    # One device: no collectives, said in words.
    assert "runs on one device" in panel.locator("[data-olympus-no-collectives]").inner_text()
    assert panel.locator('table[data-olympus-table="cost-buffers"] tbody tr').count() == len(
        costs["buffers"]
    )
    # The arguments by their names (f's parameters), XLA's labels beside them.
    named = panel.locator('table[data-olympus-table="cost-buffers"] th[data-olympus-argument]')
    arguments = [b for b in costs["buffers"] if b["kind"] == "argument"]
    assert {b["argument"] for b in arguments} == {"x", "w"}
    assert named.count() == len(arguments)
    assert {t.split(" ")[0] for t in named.all_inner_texts()} == {"x", "w"}
    shardings = panel.locator('table[data-olympus-table="shardings"] tbody th')
    assert shardings.all_inner_texts()[:2] == ["x", "w"]
    if costs["peak"]["difference"]:
        assert (
            panel.locator("[data-olympus-costs-difference]").inner_text()
            == costs["peak"]["difference"]
        )
    # Choosing the row selects the line: it is marked, and the source view shows it.
    row.locator("button[data-olympus-cost-line]").click()
    assert row.get_attribute("aria-current") == "true"
    source = choose_tab(root, "source")
    line = code_line(source, MATMUL, whole=True)
    assert "olympus-active" in line.get_attribute("class")


# -- tests ---------------------------------------------------------------------------------


def test_the_heatmap_and_the_costs_tab_in_jupyterlab(page, lab, costs_nb):
    name, data = costs_nb
    costs = data["costs"]
    row = next(r for r in costs["lines"] if r["line"] == MATMUL_LINE)
    assert row["flops"] == 2 * M * N * K
    open_notebook(page, lab, name)
    root = page.locator("[data-olympus-viewer]").first
    set_layout(root, "tabs")
    # No mark until the heatmap is on.
    assert root.locator("[data-olympus-heat-mark]").count() == 0
    heat_on(root, "flops")
    title = assert_source_heat(root, costs, MATMUL_LINE)
    page.screenshot(path=str(artifacts_dir() / "costs-heatmap.png"))
    assert_stage_heat(root, title)
    assert_stage_heat(root, title, stage="compiled", op="dot(")
    # Another figure: the gutter follows; off: no gutter.
    select = root.locator('select[data-olympus-action="heat"]')
    select.select_option("bytes")
    source = choose_tab(root, "source")
    mark = gutter_mark_of(source, MATMUL, whole=True)
    assert "of bytes accessed)" in mark.get_attribute("title")
    select.select_option("off")
    assert root.get_attribute("data-olympus-heat") == "off"
    assert root.locator("[data-olympus-heat-mark]").count() == 0
    # The gutter, empty, takes no room.
    assert source.locator(".olympus-heat-gutter").bounding_box()["width"] == 0
    assert_costs_row(root, costs, MATMUL_LINE)
    page.screenshot(path=str(artifacts_dir() / "costs-panel.png"))


@needs_view
def test_a_saved_page_shows_the_heatmap_and_the_costs(page, saved_page):
    path, data = saved_page
    root, requests, url = open_offline(page, path, LIVE)
    set_layout(root, "tabs")
    heat_on(root, "flops")
    # The function is this file's: the matmul is the line after its ``def``.
    line = f.__code__.co_firstlineno + 1
    title = assert_source_heat(root, data["costs"], line)
    assert_stage_heat(root, title)
    assert_costs_row(root, data["costs"], line)
    assert requests == [url]


def test_a_saved_page_names_the_parameters_a_collective_serves(page, tmp_path):
    """The standalone viewer's collectives table: the parameters a collective
    serves, in their column (a one-device program's report, given the all-reduce
    of a sharded one's gradients)."""
    import dataclasses

    report = olympus_jupyter.inspect(f, *args(), costs=True, cache=None)
    costs = copy.deepcopy(report.costs)
    costs["collectives"] = [
        {
            "label": "all-reduce.36",
            "opcode": "all-reduce",
            "kind": "inserted",
            "replica_groups": "[1,8]<=[8]",
            "group_size": 8,
            "result_bytes": 1024,
            "moved_bytes": 1792,
            "op_name": "jit(train_step)/transpose(jvp())/dot_general",
            "lines": [],
            "shardings": [],
            "arguments": [],
            "parameters": ["blocks/0/up/kernel/value", "blocks/0/up/bias/value"],
            "text": "all-reduce (inserted), serving blocks/0/up/kernel/value",
        }
    ]
    costs["devices"] = 8
    path = dataclasses.replace(report, costs=costs).save(tmp_path / "served.html")
    root, requests, url = open_offline(page, path, LIVE)
    set_layout(root, "tabs")
    panel = choose_tab(root, "costs")
    panel.locator("[data-olympus-costs]").wait_for()
    served = panel.locator("td[data-olympus-serves]")
    assert served.count() == 1
    assert served.locator("div").all_inner_texts() == [
        "blocks/0/up/kernel/value",
        "blocks/0/up/bias/value",
    ]
    assert (
        "parameters served"
        in panel.locator('table[data-olympus-table="collectives"] thead').inner_text()
    )
    assert requests == [url]


#: Markup in the report's strings: shown as text, never run.
HOSTILE = '<img src=x onerror="window.__pwned=1"></script><script>window.__pwned=1</script>'


@pytest.fixture(scope="module")
def hostile_nb(notebooks_dir, saved_page):
    """A saved notebook whose report's costs name a file that does not exist, and hold
    markup in every string the view shows."""
    data = copy.deepcopy(saved_page[1])
    c = data["costs"]
    matmul = next(r for r in c["lines"] if r["line"] == f.__code__.co_firstlineno + 1)
    bad = dict(matmul, file=99_999, instructions=[HOSTILE])
    c["lines"].insert(0, bad)
    c["lines"].append(dict(matmul, file=None, path=HOSTILE, line=3))
    c["buffers"].append(
        {
            "label": HOSTILE,
            "index": HOSTILE,
            "size": 16,
            "kind": HOSTILE,
            "shape": HOSTILE,
            "file": 12_345,
            "path": None,
            "line": 2,
            "aliased_argument": None,
            "argument": HOSTILE,
        }
    )
    c["buffers"].append(
        {
            "label": "param.1",
            "index": "{}",
            "size": 16,
            "kind": "argument",
            "shape": "f32[4]",
            "file": None,
            "path": None,
            "line": None,
            "aliased_argument": None,
            "argument": HOSTILE,
        }
    )
    c["collectives"].append(
        {
            "label": HOSTILE,
            "opcode": HOSTILE,
            "kind": "inserted",
            "replica_groups": HOSTILE,
            "group_size": 2,
            "result_bytes": 64,
            "moved_bytes": None,
            "op_name": HOSTILE,
            "lines": [[99_999, 2], [None, 3]],
            "shardings": [HOSTILE],
            "arguments": [HOSTILE],
            "parameters": [HOSTILE],
            "text": HOSTILE,
        }
    )
    c["shardings"]["inputs"].append(HOSTILE)
    c["shardings"]["input_names"] = [HOSTILE] * len(c["shardings"]["inputs"])
    c["notes"].append(HOSTILE)
    c["unavailable"]["something"] = HOSTILE
    c["peak"]["difference"] = HOSTILE
    c["peak"]["at"] = HOSTILE
    return saved_outputs_notebook(notebooks_dir / "hostile_costs.ipynb", [data]).name, data


def test_hostile_costs_are_text_and_checked(page, lab, hostile_nb):
    name, data = hostile_nb
    open_notebook(page, lab, name)
    root = page.locator("[data-olympus-viewer]").first
    assert root.locator("[data-olympus-error]").count() == 0
    set_layout(root, "tabs")
    heat_on(root, "flops")
    # The heatmap still works: the rows that name no file of the report are in no gutter.
    source = choose_tab(root, "source")
    marks = source.locator("[data-olympus-heat-mark]")
    marks.first.wait_for()
    assert all(HOSTILE not in (m.get_attribute("title") or "") for m in marks.all())
    heat_on(root, "peak")
    panel = choose_tab(root, "costs")
    panel.locator("[data-olympus-costs]").wait_for()
    text = panel.inner_text()
    assert text.count(HOSTILE) >= 6, text
    # The names of arguments, as text: a buffer's, a collective's (and the parameters
    # it serves), a sharding's.
    assert panel.locator("th[data-olympus-argument]", has_text=HOSTILE).count() == 1
    assert panel.locator("td[data-olympus-moved]", has_text=HOSTILE).count() == 1
    assert panel.locator("td[data-olympus-serves]", has_text=HOSTILE).count() == 1
    shardings = panel.locator('table[data-olympus-table="shardings"] tbody th')
    assert HOSTILE in shardings.all_inner_texts()
    # The row of the file index out of range is shown, and cannot be chosen.
    first = panel.locator('tr[data-olympus-cost-row="0"]')
    assert first.get_attribute("data-key") is None
    assert first.locator("button").count() == 0
    assert "?:" in first.locator("th").inner_text()
    assert panel.locator("[data-olympus-costs-difference]").inner_text() == HOSTILE
    assert page.evaluate("() => window.__pwned === undefined")
    assert (
        page.evaluate(
            "() => document.querySelectorAll('[data-olympus-viewer] img, "
            "[data-olympus-viewer] script').length"
        )
        == 0
    )


# -- loops and the peak ----------------------------------------------------------------------


def scanned(x, ws):
    def body(c, w):
        return jnp.tanh(c @ w), None

    return jax.lax.scan(body, x, ws)[0]


@pytest.fixture(scope="module")
def loop_page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("loop-page")
    x, ws = np.ones((8, 8), np.float32), np.ones((8, 8, 8), np.float32)
    report = olympus_jupyter.inspect(scanned, x, ws, costs=True, cache=None)
    return report.save(folder / "loop.html"), report.to_json()


def test_a_saved_page_says_how_loops_are_counted_and_names_both_peaks(page, loop_page):
    path, data = loop_page
    costs = data["costs"]
    root, requests, url = open_offline(page, path, LIVE)
    set_layout(root, "tabs")
    panel = choose_tab(root, "costs")
    assert "× 8 iterations" in panel.locator("[data-olympus-iterations]").all_inner_texts()
    # The counted totals (what the rows add up to), then XLA's (each loop body once).
    first = panel.locator("tfoot tr").first.inner_text()
    assert "loops × trip counts" in first
    assert format_flops(costs["counted_totals"]["flops"]) in first
    xla = panel.locator("tr[data-olympus-cost-xla]")
    assert xla.count() == 1 and format_flops(costs["totals"]["flops"]) in xla.inner_text()
    # The memory panel's heading names the live-range peak and memory_analysis()'s.
    memory = choose_tab(root, "memory")
    meta = memory.locator(".olympus-panel-meta").inner_text()
    live = format_bytes(costs["peak"]["bytes"])
    ma = format_bytes(data["analyses"]["memory"]["peak_memory_in_bytes"])
    assert meta == f"peak {live} live (buffer assignment) · {ma} memory_analysis()"
    labels = memory.locator('table[data-olympus-table="memory"] th').all_inner_texts()
    assert "peak live (buffer assignment)" in labels and "peak (memory_analysis())" in labels
    assert requests == [url]
