"""The JupyterLab viewer in a real browser: rendering, linking, layout, diff, theme, no kernel."""

import json
import os
import subprocess
import sys

import pytest

from labserver import (
    artifacts_dir,
    dismiss_kernel_dialog,
    open_notebook,
    set_layout,
    write_notebook,
)
from deadlines import deadline, ms

SETUP = "import olympus, olympus.numpy as jnp\nimport olympus_jupyter\n%load_ext olympus_jupyter"
MODEL = (
    "def f(x):\n"
    "    y = jnp.sin(x)\n"
    "    z = y * 2\n"
    "    return jnp.tanh(z @ z.T)\n"
    "x = jnp.ones((4, 4))"
)


@pytest.fixture(scope="module")
def stages_nb(notebooks_dir):
    return write_notebook(
        notebooks_dir / "stages.ipynb", [SETUP, MODEL, "%olympus_lower f(x)"]
    ).name


@pytest.fixture(scope="module")
def diff_nb(notebooks_dir):
    return write_notebook(
        notebooks_dir / "diff.ipynb",
        [
            SETUP,
            MODEL,
            "a = olympus_jupyter.inspect(f, jnp.ones((4, 4)))\n"
            "b = olympus_jupyter.inspect(f, jnp.ones((2, 4)))\n"
            "olympus_jupyter.compare(a, b, labels=('f32[4,4]', 'f32[2,4]'))",
        ],
    ).name


@pytest.fixture(scope="module")
def no_kernel_nb(notebooks_dir):
    # Saved with outputs, for a kernel this server does not have: nothing runs.
    return write_notebook(
        notebooks_dir / "saved.ipynb",
        [SETUP, MODEL, "%olympus_lower f(x)"],
        kernel="no-such-kernel",
    ).name


def viewer(page):
    return page.locator("[data-olympus-viewer]").first


def test_the_labextension_is_installed_and_enabled():
    jupyter = os.path.join(os.path.dirname(sys.executable), "jupyter")
    proc = subprocess.run(
        [jupyter, "labextension", "list"], capture_output=True, text=True, timeout=deadline(120)
    )
    listing = proc.stdout + proc.stderr
    line = next((ln for ln in listing.splitlines() if "olympus-jupyter" in ln), "")
    assert "enabled" in line and "OK" in line, listing


def test_report_renders_after_the_magic(page, lab, stages_nb):
    open_notebook(page, lab, stages_nb)
    root = viewer(page)
    assert root.locator(".cm-editor").count() >= 1
    set_layout(viewer(page), "tabs")
    for stage in ("source", "olympuspr", "stablehlo", "hlo", "compiled", "cost_analysis", "memory"):
        root.locator(f'[role="tab"][data-stage="{stage}"]').click()
        panel = root.locator(f'[role="tabpanel"][data-stage-panel="{stage}"]')
        assert panel.is_visible()
        page.screenshot(path=str(artifacts_dir() / f"tab-{stage}.png"))
    assert root.locator('table[data-olympus-table="cost"]').count() == 1
    assert root.locator('table[data-olympus-table="memory"]').count() == 1
    assert root.locator('svg[data-olympus-chart="memory"]').count() == 1
    # The interactive view replaces the static HTML form.
    assert page.locator(".olympus-report").count() == 0


def test_only_the_panels_on_screen_are_built(page, lab, stages_nb):
    # A new browser context: the view opens as tabs, one panel on screen. The
    # editors of the others are built when they are first shown, not before.
    open_notebook(page, lab, stages_nb)
    root = viewer(page)
    assert root.get_attribute("data-layout") == "tabs"
    panels = root.locator('[role="tabpanel"]')
    on_screen = root.locator('[role="tabpanel"]:not([hidden])')
    assert on_screen.count() == 1 and panels.count() > 3
    assert on_screen.locator(".cm-editor").count() == 1
    assert root.locator('[role="tabpanel"][hidden] .cm-editor').count() == 0
    compiled = root.locator('[role="tabpanel"][data-stage-panel="compiled"]')
    root.locator('[role="tab"][data-stage="compiled"]').click()
    compiled.locator(".cm-editor").wait_for()
    assert "HloModule" in compiled.locator(".cm-content").inner_text()
    assert root.locator('[role="tabpanel"][data-stage-panel="stablehlo"] .cm-editor').count() == 0
    # Side by side, every stage is on screen: each has its editor.
    set_layout(viewer(page), "side-by-side")
    for stage in ("source", "olympuspr", "stablehlo", "hlo", "compiled"):
        root.locator(f'[data-stage-panel="{stage}"] .cm-editor').wait_for()


def test_a_source_line_leads_to_its_ops_in_every_stage(page, lab, stages_nb):
    open_notebook(page, lab, stages_nb)
    set_layout(viewer(page), "side-by-side")
    root = viewer(page)
    line = root.locator('[data-stage-panel="source"] .cm-line', has_text="jnp.sin(x)")
    line.click()
    assert "olympus-active" in line.get_attribute("class")
    for stage, text in (
        ("olympuspr", "sin"),
        ("stablehlo", "stablehlo.sine"),
        ("compiled", "sine"),
    ):
        linked = root.locator(f'[data-stage-panel="{stage}"] .cm-line.olympus-linked')
        linked.first.wait_for()
        assert any(text in t for t in linked.all_inner_texts()), (stage, linked.all_inner_texts())
    # The compiled stage also marks the fusion that holds the instruction.
    compiled = root.locator(
        '[data-stage-panel="compiled"] .cm-line.olympus-linked'
    ).all_inner_texts()
    assert any("fusion" in t for t in compiled)
    page.keyboard.press("Escape")
    assert root.locator(".cm-line.olympus-linked").count() == 0


def test_an_op_leads_back_to_its_source_line(page, lab, stages_nb):
    open_notebook(page, lab, stages_nb)
    set_layout(viewer(page), "side-by-side")
    root = viewer(page)
    op = root.locator('[data-stage-panel="stablehlo"] .cm-line', has_text="stablehlo.tanh")
    op.click()
    active = root.locator('[data-stage-panel="source"] .cm-line.olympus-active')
    active.wait_for()
    assert "jnp.tanh" in active.inner_text()


def test_source_lines_share_a_colour_with_their_ops(page, lab, stages_nb):
    open_notebook(page, lab, stages_nb)
    set_layout(viewer(page), "side-by-side")
    root = viewer(page)
    sin_line = root.locator('[data-stage-panel="source"] .cm-line', has_text="jnp.sin(x)")
    colour = [c for c in sin_line.get_attribute("class").split() if c.startswith("olympus-src-")]
    assert len(colour) == 1
    sine = root.locator('[data-stage-panel="stablehlo"] .cm-line', has_text="stablehlo.sine")
    assert colour[0] in sine.get_attribute("class").split()


def test_layout_choice_is_remembered(page, lab, stages_nb):
    open_notebook(page, lab, stages_nb)
    set_layout(viewer(page), "tabs")
    set_layout(viewer(page), "side-by-side")
    page.reload()
    page.wait_for_selector("[data-olympus-viewer][data-olympus-rendered]")
    assert viewer(page).get_attribute("data-layout") == "side-by-side"


def test_keyboard_reaches_every_action(page, lab, stages_nb):
    open_notebook(page, lab, stages_nb)
    set_layout(viewer(page), "tabs")
    root = viewer(page)
    first = root.locator('[role="tab"][data-stage="source"]')
    first.focus()
    first.press("Enter")
    page.keyboard.press("ArrowRight")
    assert (
        root.locator('[role="tab"][aria-selected="true"]').get_attribute("data-stage")
        == "olympuspr"
    )
    button = root.locator('button[data-olympus-action="layout"]')
    button.focus()
    page.keyboard.press("Enter")
    assert root.get_attribute("data-layout") == "side-by-side"


def test_diff_shows_two_reports_side_by_side(page, lab, diff_nb):
    page.goto(lab.page_url(f"lab/tree/{diff_nb}?reset"))
    diff = page.locator("div.olympus-diff").first
    diff.wait_for(timeout=ms(60))
    assert diff.locator(".cm-mergeView").count() >= 1
    diff.locator('[data-stage="stablehlo"]').first.click()
    merge = diff.locator(".cm-mergeView").first
    assert "tensor<4x4xf32>" in merge.inner_text() and "tensor<2x4xf32>" in merge.inner_text()
    assert diff.locator(".cm-changedLine, .cm-deletedChunk, .cm-changedText").count() > 0


def test_theme_switch_follows_jupyterlab(page, lab, stages_nb):
    open_notebook(page, lab, stages_nb)
    editor = viewer(page).locator(".cm-editor").first

    def background():
        return editor.evaluate("e => getComputedStyle(e).backgroundColor")

    light = background()
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', "
        "{theme: 'JupyterLab Dark'})"
    )
    page.wait_for_function("() => document.body.dataset.jpThemeLight === 'false'")
    # The editor takes the theme's colours once its style sheet applies.
    page.wait_for_function(
        "([e, light]) => getComputedStyle(e).backgroundColor !== light",
        arg=[editor.element_handle(), light],
    )
    dark = background()
    page.screenshot(path=str(artifacts_dir() / "dark-theme.png"))
    page.evaluate(
        "() => window.jupyterapp.commands.execute('apputils:change-theme', "
        "{theme: 'JupyterLab Light'})"
    )
    assert light != dark


def test_saved_notebook_renders_without_a_kernel(page, lab_without_kernels, no_kernel_nb):
    lab = lab_without_kernels
    page.goto(lab.page_url(f"lab/tree/{no_kernel_nb}?reset"))
    page.wait_for_selector(
        ".jp-Dialog, [data-olympus-viewer][data-olympus-rendered]", timeout=ms(60)
    )
    dismiss_kernel_dialog(page)
    page.wait_for_selector("[data-olympus-viewer][data-olympus-rendered]")
    assert viewer(page).locator(".cm-editor").count() >= 1
    specs = json.loads(
        page.evaluate("async () => JSON.stringify(await (await fetch('/api/kernelspecs')).json())")
    )
    assert specs["kernelspecs"] == {}  # this server has no kernel to run anything with
    kernels = json.loads(
        page.evaluate("async () => JSON.stringify(await (await fetch('/api/kernels')).json())")
    )
    assert kernels == []


def test_notebook_7_renders_the_viewer(page, notebook7, stages_nb):
    open_notebook(page, notebook7, stages_nb, app="notebook")
    assert viewer(page).locator(".cm-editor").count() >= 1
