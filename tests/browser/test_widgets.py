"""The inspector and the stepper in a real JupyterLab with a live kernel."""

import pytest
from playwright.sync_api import Error as PlaywrightError

from labserver import ROOT, artifacts_dir, run_all_cells, write_notebook
from deadlines import ms

SETUP = (
    "import olympus, olympus.numpy as jnp\n"
    "from olympus_jupyter import Inspector, Stepper\n"
    "def layer(w, x):\n"
    "    return jnp.tanh(x @ w)"
)


@pytest.fixture(autouse=True)
def one_kernel_at_a_time(request):
    """Ends the kernels a test started once its page is closed: each test runs its
    notebook in a kernel of its own, and the machine has few cores."""
    yield
    for name in ("lab", "notebook7"):
        if name in request.fixturenames:
            request.getfixturevalue(name).end_sessions()


def run_all(page, server, name, app="lab"):
    """Opens a notebook that has not run yet and runs every cell in the browser's kernel."""
    run_all_cells(page, server, f"lab/tree/{name}?reset" if app == "lab" else f"notebooks/{name}")


def editor_input(widget, label):
    row = widget.locator(".widget-text").filter(
        has=widget.page.locator(f'label.widget-label:text-is("{label}")')
    )
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
    return write_notebook(
        notebooks_dir / "inspector.ipynb",
        [SETUP, "ins = Inspector(layer, jnp.ones((4, 4)), jnp.ones((2, 4)))\nins"],
        execute=False,
    ).name


@pytest.fixture(scope="module")
def stepper_nb(notebooks_dir):
    return write_notebook(
        notebooks_dir / "stepper.ipynb",
        [SETUP, "Stepper(lambda x, y: 2 * x + y, 3, 4)"],
        execute=False,
    ).name


def test_typing_a_new_shape_shows_the_new_program(page, lab, inspector_nb):
    run_all(page, lab, inspector_nb)
    widget = page.locator(".olympus-inspector").first
    widget.wait_for(timeout=ms(120))
    widget.locator("[data-olympus-viewer][data-olympus-rendered]").first.wait_for(timeout=ms(120))
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
        "() => [...document.querySelectorAll('.olympus-inspector .olympus-compare-with option')]"
        ".length >= 2",
        timeout=ms(120),
    )
    widget.locator(".olympus-compare-with select").select_option(index=0)
    widget.locator("button", has_text="Compare").click()
    diff = widget.locator(".olympus-diff").first
    diff.wait_for(timeout=ms(60))
    assert diff.locator(".cm-mergeView").count() >= 1
    page.screenshot(path=str(artifacts_dir() / "inspector-compare.png"))


def test_stepping_through_the_stepper(page, lab, stepper_nb):
    run_all(page, lab, stepper_nb)
    widget = page.locator(".olympus-stepper").first
    widget.wait_for(timeout=ms(120))
    for stage, shows in (
        ("trace", "mul 2:i32[] a"),
        ("lower", "stablehlo.multiply"),
        ("compile", "HloModule"),
        ("execute", "Array(10"),
    ):
        button = widget.locator("button", has_text=f"Next: {stage}")
        button.click()
        widget.locator("pre", has_text=shows).first.wait_for(timeout=ms(120))
        page.screenshot(path=str(artifacts_dir() / f"stepper-{stage}.png"))
    assert widget.locator("button", has_text="Done").is_disabled()


def test_the_inspector_works_in_notebook_7(page, notebook7, inspector_nb):
    run_all(page, notebook7, inspector_nb, app="notebook")
    widget = page.locator(".olympus-inspector").first
    widget.wait_for(timeout=ms(120))
    type_spec(editor_input(widget, "x"), "f32[3,4]")
    wait_for_stage_text(widget, "olympuspr", "f32[3,4]")


# --- controls people know, reachable by keyboard ------------------------------------------


def new_inspector(page, server, notebooks_dir, name):
    """A fresh notebook holding an inspector of ``layer``, run in the browser's kernel."""
    write_notebook(
        notebooks_dir / name,
        [SETUP, "ins = Inspector(layer, jnp.ones((4, 4)), jnp.ones((2, 4)))\nins"],
        execute=False,
    )
    run_all(page, server, name)
    widget = page.locator(".olympus-inspector").first
    widget.wait_for(timeout=ms(120))
    widget.locator("[data-olympus-viewer][data-olympus-rendered]").first.wait_for(timeout=ms(120))
    return widget


def choice(widget, row, label):
    """The checkbox ``label`` in the row of checkboxes labelled ``row``."""
    return widget.locator(".olympus-choices", has_text=row).get_by_label(label, exact=True)


def wait_for_tabs(widget, present=(), absent=()):
    """Waits until the inspector's report has a tab for each stage of ``present`` and
    none for those of ``absent``."""
    widget.page.wait_for_function(
        """([present, absent]) => {
             const viewers = document.querySelectorAll(
               '.olympus-inspector [data-olympus-viewer][data-olympus-rendered]');
             const v = viewers[viewers.length - 1];
             if (!v) return false;
             const has = s => !!v.querySelector(`[role="tab"][data-stage="${s}"]`);
             return present.every(has) && !absent.some(has);
           }""",
        arg=[list(present), list(absent)],
        timeout=ms(120),
    )


def test_the_checkboxes_and_toggles_change_what_is_shown(page, lab, notebooks_dir):
    widget = new_inspector(page, lab, notebooks_dir, "toggles.ipynb")
    assert widget.locator("select[multiple]").count() == 0  # no multi-select list boxes
    wait_for_tabs(widget, present=("source", "stablehlo", "compiled"))

    choice(widget, "stages", "source").uncheck()
    wait_for_tabs(widget, present=("olympuspr",), absent=("source",))
    choice(widget, "stages", "partitioned").check()
    wait_for_tabs(widget, present=("partitioned",))

    widget.locator(".widget-toggle-button", has_text="HLO").filter(has_not_text="Stable").click()
    wait_for_tabs(widget, present=("hlo",), absent=("stablehlo",))

    choice(widget, "platforms", "tpu").check()
    widget.locator(".widget-html", has_text="Re-lowered").first.wait_for(timeout=ms(120))
    assert (
        "lowering platforms this machine → tpu"
        in widget.locator(".widget-html", has_text="Re-lowered").first.inner_text()
    )
    assert choice(widget, "platforms", "tpu").is_checked()
    assert not choice(widget, "stages", "source").is_checked()
    page.screenshot(path=str(artifacts_dir() / "inspector-toggles.png"))


#: The compare dropdown has an entry chosen.
CHOSEN = "() => document.querySelector('.olympus-inspector .olympus-compare-with select').selectedIndex >= 0"


def compare_state(page):
    return page.evaluate(
        """() => { const s = document.querySelector('.olympus-inspector .olympus-compare-with select');
                   return {count: s.options.length, index: s.selectedIndex,
                           shown: s.selectedIndex >= 0 ? s.options[s.selectedIndex].textContent
                                                       : '',
                           disabled: s.disabled}; }"""
    )


def test_the_compare_dropdown_keeps_its_entries_after_two_changes(page, lab, notebooks_dir):
    widget = new_inspector(page, lab, notebooks_dir, "compare.ipynb")
    assert compare_state(page)["disabled"]  # nothing to compare with yet
    x = editor_input(widget, "x")
    for n, spec in enumerate(("f32[8,4]", "f32[16,4]"), start=1):
        type_spec(x, spec)
        page.wait_for_function(
            "n => document.querySelectorAll('.olympus-inspector .olympus-compare-with option')"
            ".length === n",
            arg=n,
            timeout=ms(120),
        )
        page.wait_for_function(CHOSEN)  # the choice comes with the entries
        state = compare_state(page)
        # The entries are there, one is chosen and it shows (it used to show blank).
        assert state["count"] == n and state["index"] >= 0 and not state["disabled"], state
        assert state["shown"].startswith("1.") and "f32[2,4]" in state["shown"], state
    widget.locator("button", has_text="Compare").click()  # no choosing needed first
    diff = widget.locator(".olympus-diff").first
    diff.wait_for(timeout=ms(60))
    assert "Nothing to compare" not in widget.inner_text()
    widget.locator(".olympus-compare-with select").select_option(index=1)
    type_spec(x, "f32[32,4]")
    page.wait_for_function(
        "() => document.querySelectorAll('.olympus-inspector .olympus-compare-with option')"
        ".length === 3",
        timeout=ms(120),
    )
    page.wait_for_function(CHOSEN)
    assert compare_state(page)["shown"].startswith("2."), compare_state(page)  # kept


FOCUSED = """() => {
  const e = document.activeElement;
  const label = (e.labels && e.labels.length) ? e.labels[0].textContent
              : e.closest('label') ? e.closest('label').textContent : e.textContent;
  return {inside: !!e.closest('.olympus-inspector, .olympus-stepper'), tag: e.tagName,
          type: e.type || '', label: (label || '').trim()};
}"""


def tab_through(page, presses):
    """Presses Tab ``presses`` times; what had the focus after each press."""
    seen = []
    for _ in range(presses):
        page.keyboard.press("Tab")
        seen.append(page.evaluate(FOCUSED))
    return seen


def test_tab_reaches_every_inspector_control_in_order(page, lab, notebooks_dir):
    widget = new_inspector(page, lab, notebooks_dir, "keyboard.ipynb")
    type_spec(editor_input(widget, "x"), "f32[8,4]")  # something to compare with
    page.wait_for_function(
        "() => !document.querySelector('.olympus-inspector .olympus-compare-with select').disabled",
        timeout=ms(120),
    )
    editor_input(widget, "w").focus()
    assert page.evaluate(FOCUSED)["inside"]
    seen = tab_through(page, 22)
    labels = [f["label"] for f in seen if f["inside"]]
    expected = [
        "x",
        "cpu",
        "cuda",
        "rocm",
        "tpu",
        "target",
        "source",
        "olympuspr",
        "compiled",
        "partitioned",
        "passes",
        "cost by line",
        "cost",
        "memory",
        "StableHLO",
        "HLO",
        "debug info",
        "compiler options",
        "pass filter",
        "compare with…",
        "Compare",
    ]
    assert labels[: len(expected)] == expected, seen
    kinds = {f["label"]: (f["tag"], f["type"]) for f in seen}
    assert kinds["tpu"] == ("INPUT", "checkbox") and kinds["HLO"] == ("BUTTON", "button")
    assert kinds["compare with…"][0] == "SELECT"

    # The controls work from the keyboard too: Space ticks a box, Enter presses a button.
    editor_input(widget, "w").focus()
    for _ in range(expected.index("source") + 1):
        page.keyboard.press("Tab")
    assert page.evaluate(FOCUSED)["label"] == "source"
    page.keyboard.press("Space")
    wait_for_tabs(widget, present=("olympuspr",), absent=("source",))
    widget.locator("button", has_text="Compare").focus()
    page.keyboard.press("Enter")
    widget.locator(".olympus-diff").first.wait_for(timeout=ms(60))


def test_the_stepper_steps_from_the_keyboard(page, lab, notebooks_dir):
    write_notebook(
        notebooks_dir / "stepper-keys.ipynb",
        [SETUP, "Stepper(lambda x, y: 2 * x + y, 3, 4)"],
        execute=False,
    )
    run_all(page, lab, "stepper-keys.ipynb")
    widget = page.locator(".olympus-stepper").first
    widget.wait_for(timeout=ms(120))
    widget.locator("button", has_text="Next: trace").focus()
    page.keyboard.press("Enter")
    widget.locator("pre", has_text="mul 2:i32[] a").first.wait_for(timeout=ms(120))
    widget.locator("button", has_text="Next: lower").wait_for()
    assert page.evaluate(FOCUSED)["label"] == "Next: lower"  # the focus stays on it
    page.keyboard.press("Space")
    widget.locator("pre", has_text="stablehlo.multiply").first.wait_for(timeout=ms(120))
    widget.locator("button", has_text="Next: compile").wait_for()
    labels = [f["label"] for f in tab_through(page, 3) if f["inside"]]
    assert labels == ["Start over", "example inputs", "random inputs"]
    page.keyboard.press("Enter")  # on "random inputs"
    page.wait_for_function(
        "() => [...document.querySelectorAll('.olympus-stepper .widget-toggle-button')]"
        ".find(b => b.textContent.includes('random')).classList.contains('mod-active')"
    )


def test_the_screenshot_script_draws_the_widgets_and_the_report_view(
    page, lab, notebooks_dir, tmp_path
):
    import runpy  # no bytecode left in scripts/, which run.sh fingerprints

    take = runpy.run_path(str(ROOT / "scripts" / "screenshots.py"), run_name="screenshots")["take"]
    paths = take(page, lab, notebooks_dir, tmp_path)
    assert [p.name for p in paths] == [
        "inspector.png",
        "stepper.png",
        "lab-view.png",
        "linking-1-line.png",
        "linking-2-op.png",
    ]
    for path in paths:
        assert path.read_bytes()[:8] == b"\x89PNG\r\n\x1a\n" and path.stat().st_size > 10_000
