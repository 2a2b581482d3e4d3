"""The ``passes`` stage in a real browser: XLA's pass pipeline pass by pass, each pass's
diff in the merge view, and where a source line's instructions went (its journey), in
JupyterLab and in the standalone page ``report.save()`` writes."""

from __future__ import annotations


import numpy as np
import pytest

import olympus.numpy as jnp
import olympus_jupyter

from built_view import needs_view

from labserver import (
    artifacts_dir,
    open_notebook,
    open_offline,
    saved_outputs_notebook,
    set_layout,
    write_notebook,
)

SETUP = (
    "import numpy as np, olympus, olympus.numpy as jnp\n"
    "import olympus_jupyter\n"
    "%load_ext olympus_jupyter"
)
MODEL = (
    "def f(x, w):\n"
    "    y = jnp.tanh(x @ w)\n"
    "    return y.sum()\n"
    "x = np.ones((8, 16), np.float32)\n"
    "w = np.ones((16, 16), np.float32)"
)

PANEL = '[role="tabpanel"][data-stage-panel="passes"]'
LIVE = "[data-olympus-live][data-olympus-rendered]"
#: A line of the function's (one that made ops: it has a colour).
SOURCE_LINE = '[data-stage-panel="source"] .cm-line[class*="olympus-src-"]'


def f(x, w):
    y = jnp.tanh(x @ w)
    return y.sum()


@pytest.fixture(scope="module")
def passes_nb(notebooks_dir):
    return write_notebook(
        notebooks_dir / "passes.ipynb", [SETUP, MODEL, "%olympus_lower --passes f(x, w)"]
    ).name


@pytest.fixture(scope="module")
def saved_page(tmp_path_factory):
    folder = tmp_path_factory.mktemp("passes-page")
    report = olympus_jupyter.inspect(
        f, np.ones((8, 16), np.float32), np.ones((16, 16), np.float32), passes=True, cache=None
    )
    data = report.to_json()
    return report.save(folder / "passes.html"), data


def open_passes_tab(root):
    tab = root.locator('[role="tab"][data-stage="passes"]')
    assert tab.inner_text() == "passes"
    tab.click()
    assert tab.get_attribute("aria-selected") == "true"
    panel = root.locator(PANEL)
    panel.locator("[data-olympus-passes]").wait_for()
    assert panel.get_attribute("data-stage-kind") == "passes"
    return panel


def assert_pass_list(panel):
    """Changed passes are listed; the others hide behind the toggle, which shows them."""
    assert panel.locator("[data-olympus-unsupported]").count() == 0
    changed = panel.locator('li[data-pass-kind="changed"]')
    assert changed.count() > 0
    assert changed.first.is_visible()
    names = changed.locator(".olympus-pass-name").all_inner_texts()
    assert "fusion" in names, names
    quiet = panel.locator('li[data-pass-kind="unchanged"]')
    assert quiet.count() > 0 and not quiet.first.is_visible()
    toggle = panel.locator('button[data-olympus-action="show-unchanged"]')
    assert toggle.get_attribute("aria-expanded") == "false"
    assert "show passes that changed nothing" in toggle.inner_text()
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    assert quiet.first.is_visible()
    toggle.click()
    assert not quiet.first.is_visible()


def open_fusion_diff(panel):
    """Clicking the changed pass ``fusion`` opens its diff in the merge view."""
    fusion = panel.locator(
        'li[data-pass-kind="changed"] button',
        has=panel.page.locator(".olympus-pass-name", has_text="fusion"),
    )
    button = [b for b in fusion.all() if b.locator(".olympus-pass-name").inner_text() == "fusion"][
        0
    ]
    button.click()
    assert button.get_attribute("aria-current") == "true"
    diff = panel.locator("[data-olympus-pass-diff]")
    diff.locator(".cm-mergeView").wait_for()
    assert int(diff.locator("[data-olympus-changes]").get_attribute("data-olympus-changes")) > 0
    # What the pass removed and what it added are both marked.
    assert diff.locator(".cm-merge-a .cm-changedLine").count() > 0
    assert diff.locator(".cm-merge-b .cm-changedLine").count() > 0
    after = diff.locator(".cm-merge-b .cm-content").inner_text()
    assert "HloModule" in after or "fusion" in after
    assert "fusion" in after
    return diff


def test_the_magic_shows_each_pass_and_a_line_journey(page, lab, passes_nb):
    open_notebook(page, lab, passes_nb)
    root = page.locator("[data-olympus-viewer]").first
    set_layout(root, "tabs")
    # Select the source line, then look at the passes: its journey is there.
    line = root.locator(SOURCE_LINE, has_text="jnp.tanh(x @ w)")
    line.click()
    assert "olympus-active" in line.get_attribute("class")
    panel = open_passes_tab(root)
    assert_pass_list(panel)
    journey = panel.locator("[data-olympus-journey]")
    assert "Where" in journey.locator(".olympus-journey-title").inner_text()
    assert journey.locator('[data-olympus-carriers="start"] .olympus-carrier').count() > 0
    assert journey.locator('[data-olympus-carriers="end"] .olympus-carrier').count() > 0
    fused = journey.locator('button[data-event-kind="fused"]')
    assert fused.count() > 0
    texts = fused.all_inner_texts()
    assert any("fused into" in t and "fusion" in t for t in texts), texts
    # The event opens its pass's diff, the instruction it names marked and in sight.
    event = [b for b in fused.all() if "tanh" in b.inner_text()] or fused.all()
    event[0].click()
    diff = panel.locator("[data-olympus-pass-diff]")
    diff.locator(".cm-mergeView").wait_for()
    row = event[0].get_attribute("data-row")
    assert diff.get_attribute("data-row") == row
    assert (
        panel.locator(f'button[data-olympus-pass-row="{row}"]').get_attribute("aria-current")
        == "true"
    )
    hit = diff.locator(".cm-line.olympus-pass-hit")
    hit.first.wait_for()
    assert hit.first.is_visible()
    assert "tanh" in " ".join(hit.all_inner_texts())
    page.screenshot(path=str(artifacts_dir() / "passes-journey.png"))
    # Another changed pass, then back: the list drives the diff.
    open_fusion_diff(panel)
    # Escape clears the line: the journey asks for one.
    root.locator('[role="tab"][data-stage="passes"]').focus()
    page.keyboard.press("Escape")
    assert "Select a source line" in journey.inner_text()


def test_the_pass_list_is_keyboard_reachable(page, lab, passes_nb):
    open_notebook(page, lab, passes_nb)
    root = page.locator("[data-olympus-viewer]").first
    set_layout(root, "tabs")
    panel = open_passes_tab(root)
    first = panel.locator('button[data-olympus-pass-row][tabindex="0"]')
    assert first.count() == 1
    start = first.get_attribute("data-olympus-pass-row")
    first.focus()
    page.keyboard.press("ArrowDown")
    focused = page.evaluate("() => document.activeElement.dataset.olympusPassRow")
    assert focused is not None and focused != start
    # One stop in the Tab order: the focused pass.
    assert first.get_attribute("data-olympus-pass-row") == focused
    page.keyboard.press("Enter")
    diff = panel.locator("[data-olympus-pass-diff]")
    assert diff.get_attribute("data-row") == focused
    diff.locator(".cm-mergeView").wait_for()


@needs_view
def test_a_saved_page_shows_the_passes(page, saved_page):
    path, data = saved_page
    root, requests, url = open_offline(page, path, LIVE)
    set_layout(root, "tabs")
    panel = open_passes_tab(root)
    assert_pass_list(panel)
    rows = data["passes"]["rows"]
    changed = sum(r["kind"] == "changed" for r in rows)
    assert panel.locator('li[data-pass-kind="changed"]').count() == changed
    assert panel.locator("li[data-pass-kind]").count() == len(rows)
    # No line selected yet: the journey asks for one.
    assert "Select a source line" in panel.locator("[data-olympus-journey]").inner_text()
    diff = open_fusion_diff(panel)
    page.screenshot(path=str(artifacts_dir() / "passes-saved-page.png"))
    # Select the line in the source tab: the journey follows, and names a fusion.
    root.locator('[role="tab"][data-stage="source"]').click()
    root.locator(SOURCE_LINE, has_text="jnp.tanh(x @ w)").click()
    root.locator('[role="tab"][data-stage="passes"]').click()
    fused = panel.locator('[data-olympus-journey] button[data-event-kind="fused"]')
    assert fused.count() > 0
    fused.first.click()
    assert diff.get_attribute("data-row") == fused.first.get_attribute("data-row")
    diff.locator(".cm-mergeView").wait_for()
    assert requests == [url]


#: Markup in the report's strings: shown as text, never run.
HOSTILE = '<img src=x onerror="window.__pwned=1"></script><script>window.__pwned=1</script>'


@pytest.fixture(scope="module")
def hostile_nb(notebooks_dir, saved_page):
    """A saved notebook whose report's passes hold markup, a kept range past the end
    of its module, and an event naming a row that does not exist."""
    import copy

    data = copy.deepcopy(saved_page[1])
    p = data["passes"]
    fusion = next(
        i for i, r in enumerate(p["rows"]) if r["kind"] == "changed" and r["pass"] == "fusion"
    )
    p["rows"][fusion]["pass"] = HOSTILE
    p["rows"][fusion]["pipeline"] = HOSTILE
    step = p["rows"][fusion]["step"]
    kept = next(k for k, item in enumerate(p["deltas"][step]) if isinstance(item, list))
    p["deltas"][step][kept] = [p["deltas"][step][kept][0], 100_000_000]
    journey = p["journeys"][0]
    journey["events"][0]["detail"] = HOSTILE
    journey["events"][0]["row"] = 99_999
    journey["start"][0]["label"] = HOSTILE
    p["note"] = HOSTILE
    return saved_outputs_notebook(notebooks_dir / "hostile_passes.ipynb", [data]).name, fusion


def test_hostile_passes_data_is_text_and_clamped(page, lab, hostile_nb):
    name, fusion = hostile_nb
    open_notebook(page, lab, name)
    root = page.locator("[data-olympus-viewer]").first
    assert root.locator("[data-olympus-error]").count() == 0
    set_layout(root, "tabs")
    root.locator(SOURCE_LINE, has_text="jnp.tanh(x @ w)").click()
    panel = open_passes_tab(root)
    assert panel.locator("[data-olympus-passes-note]").inner_text() == HOSTILE
    button = panel.locator(f'button[data-olympus-pass-row="{fusion}"]')
    assert HOSTILE in button.inner_text()
    # The kept range past the module's end is clamped: the diff opens.
    button.click()
    diff = panel.locator("[data-olympus-pass-diff]")
    diff.locator(".cm-mergeView").wait_for()
    assert HOSTILE in diff.locator(".olympus-pass-diff-title").inner_text()
    journey = panel.locator("[data-olympus-journey]")
    assert HOSTILE in journey.inner_text()
    # An event naming no row cannot be chosen.
    assert journey.locator('button[data-olympus-journey-event="0"]').is_disabled()
    assert page.evaluate("() => window.__pwned === undefined")
    assert (
        page.evaluate(
            "() => document.querySelectorAll('[data-olympus-viewer] img, "
            "[data-olympus-viewer] script').length"
        )
        == 0
    )
