"""The inspector and the stepper in a real JupyterLab with a live kernel."""
import pytest
from playwright.sync_api import Error as PlaywrightError

from labserver import artifacts_dir, run_all_cells, write_notebook

SETUP = ("import olympus, olympus.numpy as jnp\n"
         "from olympus_jupyter import Inspector, Stepper\n"
         "def layer(w, x):\n"
         "    return jnp.tanh(x @ w)")


def run_all(page, server, name, app="lab"):
    """Opens a notebook that has not run yet and runs every cell in the browser's kernel."""
    run_all_cells(page, server, f"lab/tree/{name}?reset" if app == "lab" else f"notebooks/{name}")


def editor_input(widget, label):
    row = widget.locator(".widget-text").filter(has=widget.page.locator(
        f'label.widget-label:text-is("{label}")'))
    return row.locator("input")


def wait_for_stage_text(widget, stage, needle):
    """Waits until the inspector's current report shows ``needle`` in ``stage``."""
    page = widget.page
    deadline_ms = 120_000
    step = 500
    for _ in range(deadline_ms // step):
        viewer = widget.locator("[data-olympus-viewer][data-olympus-rendered]").last
        try:  # the report may be replaced while we look: then look again
            if viewer.count():
                tab = viewer.locator(f'[role="tab"][data-stage="{stage}"]')
                if tab.count() and tab.is_visible():
                    tab.click(timeout=step)
                panel = viewer.locator(f'[data-stage-panel="{stage}"] .cm-content')
                if panel.count() and needle in (panel.first.text_content(timeout=step) or ""):
                    return
        except PlaywrightError:
            pass
        page.wait_for_timeout(step)
    raise AssertionError(f"{needle!r} never showed in the {stage} stage")


def type_spec(input_, text):
    input_.click()
    input_.fill(text)
    input_.press("Enter")


@pytest.fixture(scope="module")
def inspector_nb(notebooks_dir):
    return write_notebook(notebooks_dir / "inspector.ipynb", [
        SETUP, "ins = Inspector(layer, jnp.ones((4, 4)), jnp.ones((2, 4)))\nins"],
        execute=False).name


@pytest.fixture(scope="module")
def stepper_nb(notebooks_dir):
    return write_notebook(notebooks_dir / "stepper.ipynb", [
        SETUP, "Stepper(lambda x, y: 2 * x + y, 3, 4)"], execute=False).name


def test_typing_a_new_shape_shows_the_new_program(page, lab, inspector_nb):
    run_all(page, lab, inspector_nb)
    widget = page.locator(".olympus-inspector").first
    widget.wait_for(timeout=120_000)
    widget.locator("[data-olympus-viewer][data-olympus-rendered]").first.wait_for(timeout=120_000)
    type_spec(editor_input(widget, "x"), "f32[8,4]")
    wait_for_stage_text(widget, "olympuspr", "f32[8,4]")
    wait_for_stage_text(widget, "compiled", "f32[8,4]")  # the new HLO
    why = widget.locator(".widget-html", has_text="Re-traced").first
    assert "shape (2, 4) → (8, 4)" in why.inner_text()
    page.screenshot(path=str(artifacts_dir() / "inspector-new-shape.png"))

    # A bad spec is marked inline and the report stays.
    type_spec(editor_input(widget, "x"), "f32[8,x]")
    widget.locator(".widget-html", has_text="whole numbers").first.wait_for()
    assert widget.locator("[data-olympus-viewer]").count() >= 1

    # Compare with the first specialization: the diff view opens.
    type_spec(editor_input(widget, "x"), "f32[16,4]")
    page.wait_for_function(
        "() => [...document.querySelectorAll('.olympus-inspector .widget-dropdown option')]"
        ".length >= 2", timeout=120_000)
    widget.locator(".widget-dropdown select").select_option(index=0)
    widget.locator("button", has_text="Compare").click()
    diff = widget.locator(".olympus-diff").first
    diff.wait_for(timeout=60_000)
    assert diff.locator(".cm-mergeView").count() >= 1
    page.screenshot(path=str(artifacts_dir() / "inspector-compare.png"))


def test_stepping_through_the_stepper(page, lab, stepper_nb):
    run_all(page, lab, stepper_nb)
    widget = page.locator(".olympus-stepper").first
    widget.wait_for(timeout=120_000)
    for stage, shows in (("trace", "mul 2:i32[] a"), ("lower", "stablehlo.multiply"),
                         ("compile", "HloModule"), ("execute", "Array(10")):
        button = widget.locator("button", has_text=f"Next: {stage}")
        button.click()
        widget.locator("pre", has_text=shows).first.wait_for(timeout=120_000)
        page.screenshot(path=str(artifacts_dir() / f"stepper-{stage}.png"))
    assert widget.locator("button", has_text="Done").is_disabled()


def test_the_inspector_works_in_notebook_7(page, notebook7, inspector_nb):
    run_all(page, notebook7, inspector_nb, app="notebook")
    widget = page.locator(".olympus-inspector").first
    widget.wait_for(timeout=120_000)
    type_spec(editor_input(widget, "x"), "f32[3,4]")
    wait_for_stage_text(widget, "olympuspr", "f32[3,4]")
