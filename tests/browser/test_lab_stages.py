"""The JupyterLab viewer takes its stages from the report's stage table: a stage added
through the registry alone (``partitioned``) renders and links, version 1 bundles of
saved notebooks still render, and stages or data this viewer does not know are said so."""

import copy
import json

import pytest

import olympus.numpy as jnp
import olympus_jupyter
from olympus_jupyter.report.cost_names import bundle_json
from labserver import (
    artifacts_dir,
    open_notebook,
    saved_outputs_notebook,
    set_layout,
    write_notebook,
)
from deadlines import ms

MIME = "application/vnd.olympus.stages+json"
DIFF_MIME = "application/vnd.olympus.diff+json"

V1_TITLES = [
    "Source",
    "olympuspr · traced program",
    "StableHLO · lowered program",
    "HLO · compiler input",
    "Compiled HLO · after optimization",
    "Cost analysis",
    "Memory analysis",
]

SHARDED = [
    # A fresh kernel: the flag goes in before JAX is imported, and nowhere else.
    'import os\nos.environ["XLA_FLAGS"] = "--xla_force_host_platform_device_count=8"',
    "import jax, olympus, olympus.numpy as jnp\nimport olympus_jupyter\n%load_ext olympus_jupyter",
    "from jax.sharding import NamedSharding, PartitionSpec as P\n"
    "mesh = jax.make_mesh((8,), ('d',), axis_types=(jax.sharding.AxisType.Auto,))\n"
    "rows = NamedSharding(mesh, P('d', None))\n"
    "x = jax.device_put(jnp.ones((16, 8)), rows)\n"
    "w = jax.device_put(jnp.ones((16, 8)), rows)\n"
    "def f(x, w):\n"
    "    return x @ w.T",
    "%olympus_lower --stages source,olympuspr,compiled,partitioned f(x, w)",
]


def model(x):
    y = jnp.sin(x)
    return jnp.tanh(y @ y.T)


def to_version_1(data):
    """A bundle as a release before the stage table wrote it (version 1)."""
    v1 = copy.deepcopy(data)
    v1["version"] = 1
    # It called the cost analysis cost.
    v1["stages"] = ["cost" if s == "cost_analysis" else s for s in v1["stages"]]
    v1["unavailable"] = {
        ("cost" if k == "cost_analysis" else k): v for k, v in v1["unavailable"].items()
    }
    del v1["stage_table"]
    v1["hlo_text"] = v1["texts"].get("hlo")
    del v1["texts"]
    prov = v1["provenance"]
    prov["version"] = 1
    prov.pop("unavailable", None)
    prov["stages"] = {("hlo" if k == "compiled" else k): v for k, v in prov["stages"].items()}
    for entry in prov["lines"]:
        entry["ops"] = {("hlo" if k == "compiled" else k): v for k, v in entry["ops"].items()}
    return v1


def viewer(page, n=0):
    return page.locator("[data-olympus-viewer]").nth(n)


@pytest.fixture(scope="module")
def sharded_nb(notebooks_dir):
    return write_notebook(notebooks_dir / "partitioned.ipynb", SHARDED).name


@pytest.fixture(scope="module")
def version_1_nb(notebooks_dir):
    v2 = olympus_jupyter.inspect(model, jnp.ones((4, 4))).to_json()
    v1 = to_version_1(v2)
    # The Python side reads the same document back: this is the version 1 shape.
    again = olympus_jupyter.StageReport.from_json(v1)
    assert again.stage_text("compiled") == v2["provenance"]["stages"]["compiled"]["text"]
    return saved_outputs_notebook(notebooks_dir / "version1.ipynb", [v1]).name


@pytest.fixture(scope="module")
def mixed_diff_nb(notebooks_dir):
    old = to_version_1(olympus_jupyter.inspect(model, jnp.ones((4, 4))).to_json())
    new = olympus_jupyter.inspect(model, jnp.ones((2, 4))).to_json()
    diff = {
        "schema": "olympus.diff",
        "version": 1,
        "labels": ["saved", "now"],
        "before": old,
        "after": new,
    }
    return saved_outputs_notebook(notebooks_dir / "mixed_diff.ipynb", [diff], DIFF_MIME).name


@pytest.fixture(scope="module")
def unknown_nb(notebooks_dir):
    data = olympus_jupyter.inspect(
        model, jnp.ones((4, 4)), stages=("source", "compiled", "partitioned")
    ).to_json()
    newer = copy.deepcopy(data)
    # Stages a newer registry might add within the schema: an analysis, a program in
    # a language this viewer does not highlight.
    newer["stages"] += ["roofline", "mlir"]
    newer["stage_table"] += [
        {
            "name": "roofline",
            "title": "Roofline analysis",
            "label": "roofline",
            "kind": "analysis",
            "step": "compile",
            "language": None,
            "unit": "ops",
            "linked": False,
        },
        {
            "name": "mlir",
            "title": "Some MLIR dialect",
            "label": "MLIR",
            "kind": "program",
            "step": "lower",
            "language": "nosuchlanguage",
            "unit": "ops",
            "linked": False,
        },
    ]
    newer["texts"]["mlir"] = "module @m {\n  func.func @main() {\n  }\n}"
    # A kind registered in a newer release whose view this viewer does not have.
    newer["stages"] += ["timeline"]
    newer["stage_table"] += [
        {
            "name": "timeline",
            "title": "Timeline",
            "label": "timeline",
            "kind": "timeline",
            "view": "timeline",
            "step": None,
            "language": None,
            "unit": "events",
            "linked": False,
        }
    ]
    # A kind that is not a kind's name (lower-case letters and _): refused, as the
    # Python side refuses it.
    new_kind = copy.deepcopy(data)
    new_kind["stages"] += ["timeline"]
    new_kind["stage_table"] += [
        {
            "name": "timeline",
            "title": "Timeline",
            "label": "timeline",
            "kind": "Time line",
            "step": None,
            "language": None,
            "unit": "events",
            "linked": False,
        }
    ]
    malformed = copy.deepcopy(data)
    malformed["stage_table"][1]["linked"] = "yes"
    return saved_outputs_notebook(
        notebooks_dir / "unknown.ipynb", [data, newer, new_kind, malformed]
    ).name


def test_a_stage_added_through_the_registry_renders_and_links(page, lab, sharded_nb):
    open_notebook(page, lab, sharded_nb)
    root = viewer(page)
    set_layout(root, "side-by-side")
    panel = root.locator('[role="tabpanel"][data-stage-panel="partitioned"]')
    assert panel.locator(".olympus-panel-title").inner_text() == "HLO after SPMD partitioning"
    assert root.locator('[role="tab"][data-stage="partitioned"]').inner_text() == "partitioned"
    assert "instructions" in panel.locator(".olympus-panel-meta").inner_text()
    panel.locator(".cm-editor").wait_for()
    assert "all-gather" in panel.locator(".cm-content").inner_text()
    line = root.locator('[data-stage-panel="source"] .cm-line', has_text="return x @ w.T")
    line.hover()
    linked = panel.locator(".cm-line.olympus-linked")
    linked.first.wait_for()
    assert any("all-gather" in t for t in linked.all_inner_texts()), linked.all_inner_texts()
    line.click()
    assert "olympus-active" in line.get_attribute("class")
    assert any("all-gather" in t for t in linked.all_inner_texts())
    # The status line names the new stage by its label, with a button to go there.
    assert root.locator('[data-olympus-goto="partitioned"]').count() == 1
    page.screenshot(path=str(artifacts_dir() / "partitioned-linked.png"))
    # Back from an op of the new stage to its source line.
    page.keyboard.press("Escape")
    assert root.locator(".cm-line.olympus-linked").count() == 0
    panel.locator(".cm-line", has_text="all-gather(").click(position={"x": 40, "y": 5})
    active = root.locator('[data-stage-panel="source"] .cm-line.olympus-active')
    active.wait_for()
    assert "x @ w.T" in active.inner_text()


def test_a_version_1_bundle_still_renders(page, lab, version_1_nb):
    open_notebook(page, lab, version_1_nb)
    root = viewer(page)
    assert root.locator("[data-olympus-error]").count() == 0
    set_layout(root, "side-by-side")
    titles = root.locator(".olympus-panel-title").all_inner_texts()
    assert titles == V1_TITLES
    tabs = root.locator('[role="tab"]').all_inner_texts()
    assert tabs == ["source", "olympuspr", "StableHLO", "HLO", "compiled", "cost", "memory"]
    assert root.locator("[data-olympus-unavailable]").count() == 0
    compiled = root.locator('[data-stage-panel="compiled"]')
    compiled.locator(".cm-editor").wait_for()
    assert "HloModule" in compiled.locator(".cm-content").inner_text()
    hlo = root.locator('[data-stage-panel="hlo"]')  # version 1's hlo_text
    assert "HloModule" in hlo.locator(".cm-content").inner_text()
    line = root.locator('[data-stage-panel="source"] .cm-line', has_text="jnp.sin(x)")
    line.click()
    for stage, text in (
        ("olympuspr", "sin"),
        ("stablehlo", "stablehlo.sine"),
        ("compiled", "sine"),
    ):
        linked = root.locator(f'[data-stage-panel="{stage}"] .cm-line.olympus-linked')
        linked.first.wait_for()
        assert any(text in t for t in linked.all_inner_texts()), (stage, linked.all_inner_texts())
    assert root.locator('[data-olympus-goto="compiled"]').count() == 1
    page.screenshot(path=str(artifacts_dir() / "version-1-bundle.png"))


def test_stages_this_viewer_does_not_know_are_said_so(page, lab, unknown_nb):
    open_notebook(page, lab, unknown_nb)
    page.wait_for_function(
        "() => document.querySelectorAll('[data-olympus-viewer][data-olympus-rendered]')"
        ".length === 4",
        timeout=ms(60),
    )
    # A one-device program has no partitioned stage: the report says why.
    one = viewer(page, 0)
    set_layout(one, "side-by-side")
    note = one.locator('[data-stage-panel="partitioned"] [data-olympus-unavailable]')
    assert note.count() == 1 and note.inner_text().startswith("Not available")
    # Stages of a newer registry: a note for what has no view, plain text otherwise.
    newer = viewer(page, 1)
    set_layout(newer, "side-by-side")
    tabs = newer.locator('[role="tab"]').all_inner_texts()
    assert tabs == ["source", "compiled", "partitioned", "roofline", "MLIR", "timeline"]
    for stage in ("roofline", "timeline"):
        box = newer.locator(f'[data-stage-panel="{stage}"] [data-olympus-unsupported]')
        assert "does not know how to show it" in box.inner_text()
    mlir = newer.locator('[data-stage-panel="mlir"]')
    assert mlir.locator(".olympus-panel-title").inner_text() == "Some MLIR dialect"
    assert "func.func @main" in mlir.locator(".cm-content").inner_text()
    newer.locator('[data-stage-panel="roofline"]').scroll_into_view_if_needed()
    page.screenshot(path=str(artifacts_dir() / "unknown-stages.png"))
    # A kind that is not a name, a malformed stage table: an error box that names the
    # field and says what is wrong.
    error = viewer(page, 2).locator("[data-olympus-error]").inner_text()
    assert "/stage_table/3/kind" in error and "must match pattern" in error
    error = viewer(page, 3).locator("[data-olympus-error]").inner_text()
    assert "/stage_table/1/linked: must be boolean (got string)" in error


def test_a_diff_of_a_version_1_and_a_version_2_report(page, lab, mixed_diff_nb):
    page.goto(lab.page_url(f"lab/tree/{mixed_diff_nb}?reset"))
    diff = page.locator("div.olympus-diff[data-olympus-rendered]").first
    diff.wait_for(timeout=ms(60))
    tabs = diff.locator('[role="tab"]')
    assert tabs.all_inner_texts() == [
        "source",
        "olympuspr",
        "StableHLO",
        "HLO",
        "compiled",
        "cost",
        "memory",
    ]
    # It opens on the compiled program, titled as the first report's stage table says
    # (version 1's, built into the view).
    assert (
        diff.locator('[role="tab"][aria-selected="true"]').get_attribute("data-stage") == "compiled"
    )
    panel = diff.locator('[data-stage-panel="compiled"]')
    assert panel.locator(".olympus-panel-title").inner_text() == V1_TITLES[4]
    assert "f32[4,4]" in panel.locator(".cm-mergeView").inner_text()
    diff.locator('[role="tab"][data-stage="hlo"]').click()
    merge = diff.locator('[data-stage-panel="hlo"] .cm-mergeView')
    merge.wait_for()
    assert "f32[4,4]" in merge.inner_text() and "f32[2,4]" in merge.inner_text()


@pytest.fixture(scope="module")
def inflated_nb(notebooks_dir):
    """A saved notebook whose report claims sizes far past its data: an op spanning a
    billion lines, and a source line naming a hundred million ops."""
    data = olympus_jupyter.inspect(model, jnp.ones((4, 4))).to_json()
    stage = data["provenance"]["stages"]["compiled"]["ops"]
    spans = stage["lines"].split(",")
    spans[-1] = "1:999999999"
    stage["lines"] = ",".join(spans)
    data["provenance"]["lines"][0]["ops"]["compiled"] = "0-99999999"
    return saved_outputs_notebook(notebooks_dir / "inflated.ipynb", [data]).name


def test_sizes_read_from_a_saved_notebook_cannot_freeze_the_tab(page, lab, inflated_nb):
    open_notebook(page, lab, inflated_nb)
    root = viewer(page)
    # The claim of a hundred million ops is refused at once, with one clear message.
    error = root.locator("[data-olympus-error]")
    error.wait_for(timeout=ms(30))
    assert "out of range for a stage of" in error.inner_text()
    start = page.evaluate("() => performance.now()")
    assert page.evaluate("() => 1 + 1") == 2  # the tab still answers, at once
    assert page.evaluate("() => performance.now()") - start < 1000
    assert page.evaluate("() => window.__pwned") is None


@pytest.fixture(scope="module")
def long_span_nb(notebooks_dir):
    """A saved report whose op claims to span a billion lines of its stage."""
    data = olympus_jupyter.inspect(model, jnp.ones((4, 4))).to_json()
    stage = data["provenance"]["stages"]["compiled"]["ops"]
    spans = stage["lines"].split(",")
    spans[-1] = "1:999999999"
    stage["lines"] = ",".join(spans)
    return saved_outputs_notebook(notebooks_dir / "long_span.ipynb", [data]).name


def test_a_line_number_from_the_data_cannot_size_a_table(page, lab, long_span_nb):
    open_notebook(page, lab, long_span_nb)
    root = viewer(page)
    set_layout(root, "side-by-side")
    root.locator('[data-stage-panel="compiled"] .cm-editor').wait_for(timeout=ms(30))
    for line in root.locator('[data-stage-panel="source"] .cm-line').all()[:6]:
        line.hover()
        line.click()
    start = page.evaluate("() => performance.now()")
    assert page.evaluate("() => 1 + 1") == 2
    assert page.evaluate("() => performance.now()") - start < 1000


@pytest.fixture(scope="module")
def off_schema_nb(notebooks_dir):
    """Reports that the viewer's own checks of the stage table and op indices let
    through, and the published schema refuses: a wrong type deep in the call stacks, a
    title over its size limit, a key no stage name can be. Python refuses each too."""
    from olympus_jupyter.report.validate import BundleError, check_bundle

    data = olympus_jupyter.inspect(model, jnp.ones((4, 4))).to_json()
    deep = copy.deepcopy(data)
    deep["provenance"]["frames"][1][1] = "5"  # a line number, as a string
    long_title = copy.deepcopy(data)
    long_title["stage_table"][2]["title"] = "StableHLO " * 30  # 300 characters; 256 at most
    bad_key = copy.deepcopy(data)
    bad_key["timings"]["<img src=x onerror=window.__pwned=1>"] = 1.0
    for bundle in (deep, long_title, bad_key):
        with pytest.raises(BundleError):
            check_bundle(bundle)
    return saved_outputs_notebook(
        notebooks_dir / "off_schema.ipynb", [deep, long_title, bad_key]
    ).name


def test_a_bundle_the_schema_refuses_is_refused_naming_the_field(page, lab, off_schema_nb):
    open_notebook(page, lab, off_schema_nb)
    page.wait_for_function(
        "() => document.querySelectorAll('[data-olympus-viewer][data-olympus-rendered]')"
        ".length === 3",
        timeout=ms(60),
    )
    expected = [
        ("/provenance/frames/1/1", "must be integer"),
        ("/stage_table/2/title", "256 characters"),
        ("/timings", "<img src=x onerror=window.__pwned=1>"),
    ]
    for n, (path, what) in enumerate(expected):
        root = viewer(page, n)
        error = root.locator("[data-olympus-error]")
        assert error.count() == 1, f"report {n} was not refused"
        text = error.inner_text()
        assert text.startswith("Not a readable Olympus report: "), text
        assert path in text and what in text, text
        # One message, as text; nothing from the bundle is rendered.
        assert error.evaluate("e => e.children.length") == 0
        assert root.locator('[role="tab"], [role="tabpanel"], .cm-editor').count() == 0
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("[data-olympus-viewer] img").count() == 0
    start = page.evaluate("() => performance.now()")
    assert page.evaluate("() => 1 + 1") == 2  # the tab still answers, at once
    assert page.evaluate("() => performance.now()") - start < 1000
    page.locator(".jp-Cell").nth(1).click()
    assert "jp-mod-selected" in page.locator(".jp-Cell").nth(1).get_attribute("class")


def long_model(x):
    for _ in range(300):
        x = jnp.tanh(x) * 1.5 + jnp.sin(x)
    return x


@pytest.fixture(scope="module")
def capped_nb(notebooks_dir):
    from olympus_jupyter.report.output_cap import capped_forms

    report = olympus_jupyter.inspect(long_model, jnp.ones((4, 4)), cache=None)
    data = capped_forms(report, limit=250_000)[MIME]
    assert data["notes"]
    return saved_outputs_notebook(
        notebooks_dir / "capped.ipynb", [json.loads(json.dumps(data))]
    ).name


def test_a_capped_report_says_what_it_left_out_and_still_links(page, lab, capped_nb):
    open_notebook(page, lab, capped_nb)
    root = viewer(page)
    note = root.locator(".olympus-notes .olympus-note")
    note.wait_for()
    assert "capped at 0.25 MB" in note.inner_text() and "report.save" in note.inner_text()
    assert root.locator("[data-olympus-error]").count() == 0
    set_layout(root, "side-by-side")
    line = root.locator('[data-stage-panel="source"] .cm-line', has_text="jnp.tanh(x)")
    line.click()
    linked = root.locator('[data-stage-panel="olympuspr"] .cm-line.olympus-linked')
    linked.first.wait_for()
    assert any("tanh" in t for t in linked.all_inner_texts())


def matmul_and_tuple(a, b):
    y = jnp.sin(a @ b)
    return y * 2, {"total": jnp.sum(y), "cos": jnp.cos(a)}


#: Cost keys a bundle may hold beyond what XLA gave here: a tuple element's, one no
#: release names, and markup (which must stay text).
EXTRA_COST = {
    "bytes accessedout{1}": 2048.0,
    "a figure of a future XLA": 7.0,
    "<img src=x onerror=window.__pwned=1>": 1.0,
}


@pytest.fixture(scope="module")
def cost_nb(notebooks_dir):
    import numpy as np

    data = olympus_jupyter.inspect(
        matmul_and_tuple, np.ones((4, 8), np.float32), np.ones((8, 3), np.float32), cache=None
    ).to_json()
    data = json.loads(json.dumps(data))
    assert data["analyses"]["cost"]["lowered"], "this backend reports no cost analysis"
    cost = data["analyses"]["cost"]
    cost["lowered"].update(EXTRA_COST)
    cost.update(bundle_json(cost["lowered"], cost["compiled"]))  # as Python names them
    # A bundle written before the names were: the view shows XLA's keys.
    old = copy.deepcopy(data)
    for field in ("names", "order", "legend", "note", "columns"):
        del old["analyses"]["cost"][field]
    return saved_outputs_notebook(notebooks_dir / "cost.ipynb", [data, old]).name, data


def test_the_cost_table_names_each_figure_and_explains_it_on_hover(page, lab, cost_nb):
    """The view shows the names the bundle carries (it names nothing itself); an
    older bundle without them shows XLA's keys."""
    from olympus_jupyter.report.cost_names import STAGES_NOTE, describe

    name, data = cost_nb
    open_notebook(page, lab, name)
    page.wait_for_function(
        "() => document.querySelectorAll('[data-olympus-viewer][data-olympus-rendered]')"
        ".length === 2",
        timeout=ms(60),
    )
    lowered = data["analyses"]["cost"]["lowered"]
    compiled = data["analyses"]["cost"]["compiled"] or {}
    for n in (0, 1):
        root = viewer(page, n)
        set_layout(root, "tabs")
        root.locator('[role="tab"][data-stage="cost_analysis"]').click()
        table = root.locator('table[data-olympus-table="cost"]')
        table.wait_for()
        rows = table.locator("tbody tr")
        keys = [rows.nth(i).get_attribute("data-key") for i in range(rows.count())]
        assert set(keys) == set(lowered) | set(compiled)
        if n == 1:  # no names in the bundle: each key as itself, its value shown
            for i, key in enumerate(keys):
                th = rows.nth(i).locator("th")
                assert th.inner_text() == key and f"XLA key: {key}" in th.get_attribute("title")
                assert th.locator("code").count() == 0
            assert root.locator('[data-olympus-legend="cost"] b').count() == 0
            continue
        assert keys == data["analyses"]["cost"]["order"]  # the bundle's order
        for i, key in enumerate(keys):
            expected = describe(key)
            th = rows.nth(i).locator("th")
            text, title = th.inner_text(), th.get_attribute("title")
            # The label for people, XLA's key beside it, what it counts on hover: as
            # the Python forms say it.
            assert text.startswith(expected.label), (key, text)
            assert title == f"{expected.explanation}\nXLA key: {key}", (key, title)
            if expected.known:
                assert expected.label != key and text.endswith(key)
                assert th.locator("code").inner_text() == key
            cells = rows.nth(i).locator("td").all_inner_texts()
            for value, cell in ((lowered.get(key), cells[0]), (compiled.get(key), cells[1])):
                if value is None or float(value).is_integer():
                    assert cell == expected.format(value), (key, cell)
        row = table.locator('tr[data-key="bytes accessed0{}"] th')
        row.hover()  # what a user does; the browser's tooltip is the title
        assert "not argument 0 of the function" in row.get_attribute("title")
        assert (
            table.locator('tr[data-key="bytes accessedout{1}"] th')
            .inner_text()
            .startswith("bytes written to results, tuple element {1}")
        )
        assert "2.0 KiB (2,048 B)" in table.inner_text()
        heads = table.locator("thead th")
        assert "before any of its optimization passes" in heads.nth(1).get_attribute("title")
        assert "fusion" in heads.nth(2).get_attribute("title")
        # Without hovering: the legend under the table.
        legend = root.locator('[data-olympus-legend="cost"]')
        assert STAGES_NOTE in legend.inner_text()
        assert "bytes read from operand N" in legend.locator("b").all_inner_texts()
    page.screenshot(path=str(artifacts_dir() / "cost-names.png"))
    assert page.evaluate("() => window.__pwned") is None
    assert page.locator("[data-olympus-viewer] img").count() == 0
