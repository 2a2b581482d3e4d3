"""The interactive view outside the JupyterLab extension, in a real browser.

The page ``report.save()`` writes, opened from ``file://`` with no network, and a
notebook in a JupyterLab whose Olympus extension is disabled (as in any frontend
that shows a report's ``text/html`` form: Colab, VS Code, the classic notebook):
where scripts run, the report is the extension's live view, linked both ways;
where they do not (an untrusted notebook), it is the static HTML, and nothing from
the report runs anywhere.
"""

from __future__ import annotations

import json
import os
import pathlib
import re
import subprocess
import sys
import textwrap
from unittest import mock

import pytest

import olympus.numpy as jnp
import olympus_jupyter

from built_view import needs_view

from playwright.sync_api import expect

from labserver import (
    MarimoApp,
    Server,
    artifacts_dir,
    open_offline,
    run_all_cells,
    set_layout,
    write_notebook,
)
from deadlines import deadline, ms

pytestmark = needs_view

#: The name MODEL (below) gives its function.
HOSTILE_NAME = "f</script><script>window.__pwned=1</script>"

#: Markup that would end the data's script element and run its own.
BREAKOUT = "</script><script>window.__pwned=1</script><!--<script>"

LIVE = "[data-olympus-live][data-olympus-rendered]"


def pwned(page) -> bool:
    return page.evaluate("() => window.__pwned !== undefined")


def assert_linked_both_ways(root, source_line: str, ops, back: tuple[str, str]):
    """Clicking ``source_line`` lights its ops in every stage (``ops``: stage → a text
    of one of them); clicking the op ``back`` (stage, text) leads to its line."""
    set_layout(root, "side-by-side")
    line = root.locator('[data-stage-panel="source"] .cm-line', has_text=source_line).first
    line.click()
    assert "olympus-active" in line.get_attribute("class")
    for stage, text in ops:
        linked = root.locator(f'[data-stage-panel="{stage}"] .cm-line.olympus-linked')
        linked.first.wait_for()
        assert any(text in t for t in linked.all_inner_texts()), (stage, linked.all_inner_texts())
    stage, text = back
    root.locator(f'[data-stage-panel="{stage}"] .cm-line', has_text=text).first.click()
    active = root.locator('[data-stage-panel="source"] .cm-line.olympus-active')
    active.wait_for()
    return active.inner_text()


def assert_model_linked(root):
    """``model``'s report (or the notebook's ``f``, the same lines) is linked both ways
    in ``root``: its sine line lights its ops in every stage, its tanh op leads back
    to its line."""
    line = assert_linked_both_ways(
        root,
        "y = jnp.sin(x)",
        [("olympuspr", "sin"), ("stablehlo", "stablehlo.sine"), ("compiled", "sine")],
        ("stablehlo", "stablehlo.tanh"),
    )
    assert "jnp.tanh" in line


def assert_notebook_report_live(page, root, picture: str):
    """The report of the notebook ``[SETUP, MODEL, SHOW]`` (below) is live in ``root``:
    linked both ways in every stage, its hostile name shown as text, nothing of its
    data run; the page drawn into ``picture`` (in the tests' artifacts)."""
    assert_model_linked(root)
    assert HOSTILE_NAME in root.locator(".olympus-name").inner_text()
    page.screenshot(path=str(artifacts_dir() / picture))
    assert not pwned(page)


# -- the page report.save() writes ----------------------------------------------------


def model(x):
    y = jnp.sin(x)
    z = y * 2
    return jnp.tanh(z @ z.T)


def hostile(x):
    """</script><script>window.__pwned=1</script><!--<script>
    <img src=x onerror="window.__pwned=1">"""
    label = "</script><script>window.__pwned=1</script>"
    return jnp.cos(x) * len(label)


hostile.__name__ = hostile.__qualname__ = BREAKOUT


@pytest.fixture(scope="module")
def saved_pages(tmp_path_factory):
    folder = tmp_path_factory.mktemp("pages")
    return {
        "model": olympus_jupyter.inspect(model, jnp.ones((4, 4)), cache=None).save(
            folder / "model.html"
        ),
        "hostile": olympus_jupyter.inspect(hostile, jnp.ones(3), cache=None).save(
            folder / "hostile.html"
        ),
    }


def test_a_saved_page_is_the_live_view_linked_both_ways(page, saved_pages):
    root, requests, url = open_offline(page, saved_pages["model"], LIVE)
    # The view took the static report's place; its scripts are gone.
    assert page.locator(".olympus-report[data-olympus-live]").count() == 1
    assert not page.locator(".olympus-report > details.stage").first.is_visible()
    assert page.evaluate("() => document.scripts.length") == 0
    assert_model_linked(root)
    page.keyboard.press("Escape")
    assert root.locator(".cm-line.olympus-linked").count() == 0
    page.screenshot(path=str(artifacts_dir() / "standalone-saved-page.png"))
    assert requests == [url]  # nothing else was asked for
    # The analyses are there too.
    set_layout(root, "tabs")
    root.locator('[role="tab"][data-stage="memory"]').click()
    assert root.locator('[data-stage-panel="memory"]').is_visible()


def test_a_hostile_saved_page_shows_the_markup_as_text(page, saved_pages):
    root, requests, url = open_offline(page, saved_pages["hostile"], LIVE)
    assert not pwned(page)
    assert BREAKOUT in root.locator(".olympus-name").inner_text()
    assert (
        'label = "</script><script>window.__pwned=1</script>"'
        in root.locator('[data-stage-panel="source"] .cm-content').inner_text()
    )
    assert_linked_both_ways(
        root, "jnp.cos(x)", [("stablehlo", "stablehlo.cosine")], ("stablehlo", "stablehlo.cosine")
    )
    assert not pwned(page)
    # (CodeMirror's widget buffers are images with no source: they load nothing.)
    assert page.evaluate("() => document.querySelectorAll('script, img[src], iframe').length") == 0
    assert requests == [url]


def test_the_static_page_shows_where_scripts_do_not_run(browser, saved_pages):
    context = browser.new_context(java_script_enabled=False)
    try:
        page = context.new_page()
        page.goto(pathlib.Path(saved_pages["model"]).as_uri())
        assert page.locator(".olympus-report > details.stage").first.is_visible()
        assert "y = jnp.sin(x)" in page.locator(".olympus-report").inner_text()
        assert page.locator("[data-olympus-live]").count() == 0
    finally:
        context.close()


# -- frontends that insert an output their own way --------------------------------------

#: How frontends put an HTML output in the page and run its scripts: JupyterLab and
#: Notebook 7 (innerHTML, then each script replaced by a copy in place), VS Code
#: (its renderer is sent the output in a message, and inserts it as a parsed
#: fragment, whose scripts run when inserted), the classic notebook (jQuery:
#: innerHTML, then each JavaScript script's text run in a copy in <head>). Colab's
#: frame of its own for each output: test_colab_s_frame_per_output_shows_the_view_in_each.
INSERT = {
    "vscode-message": """(html) => new Promise((done) => {
        window.addEventListener('message', (event) => {
          const out = document.createElement('div');
          document.body.appendChild(out);
          out.appendChild(document.createRange().createContextualFragment(event.data.html));
          done();
        }, { once: true });
        window.postMessage({ type: 'output', mime: 'text/html', html }, '*'); })""",
    "copy-in-place": """(html) => { const out = document.createElement('div');
        document.body.appendChild(out); out.innerHTML = html;
        for (const old of [...out.querySelectorAll('script')]) {
          if (!old.parentNode) continue;
          const s = document.createElement('script');
          for (const a of old.attributes) s.setAttribute(a.name, a.value);
          s.textContent = old.textContent; old.replaceWith(s);
        } }""",
    "fragment": """(html) => { const out = document.createElement('div');
        document.body.appendChild(out);
        out.appendChild(document.createRange().createContextualFragment(html)); }""",
    "copy-in-head": """(html) => { const out = document.createElement('div');
        document.body.appendChild(out); out.innerHTML = html;
        for (const old of [...out.querySelectorAll('script')]) {
          if (old.type && old.type !== 'text/javascript') continue;
          const s = document.createElement('script'); s.text = old.textContent;
          document.head.appendChild(s).parentNode.removeChild(s);
        } }""",
}


@pytest.mark.parametrize("how", list(INSERT))
def test_every_way_of_running_an_outputs_scripts_shows_the_view(page, how):
    report = olympus_jupyter.inspect(model, jnp.ones((4, 4)), cache=None)
    other = olympus_jupyter.inspect(hostile, jnp.ones(3), cache=None)
    page.set_content("<!DOCTYPE html><html><head></head><body></body></html>")
    # Two outputs of one report (a report displayed twice) and another report.
    for html in (report.form("text/html"), report.form("text/html"), other.form("text/html")):
        page.evaluate(INSERT[how], html)
    page.wait_for_function(f"() => document.querySelectorAll('{LIVE}').length === 3")
    assert page.evaluate("() => Object.keys(window.__olympusViewers).length") == 1
    assert page.locator(".olympus-report:not([data-olympus-live])").count() == 0
    assert not pwned(page)
    roots = page.locator(LIVE)
    line = assert_linked_both_ways(
        roots.nth(1),
        "y = jnp.sin(x)",
        [("stablehlo", "stablehlo.sine")],
        ("stablehlo", "stablehlo.tanh"),
    )
    assert "jnp.tanh" in line
    # Each view is linked on its own.
    assert roots.nth(0).locator(".cm-line.olympus-linked").count() == 0
    assert BREAKOUT in roots.nth(2).locator(".olympus-name").inner_text()
    assert not pwned(page)


def test_colab_s_frame_per_output_shows_the_view_in_each(page):
    """Colab renders each output in a frame of its own (a document of its own, its
    scripts run): each report's output brings the view with it, and is live and
    linked on its own."""
    report = olympus_jupyter.inspect(model, jnp.ones((4, 4)), cache=None)
    other = olympus_jupyter.inspect(hostile, jnp.ones(3), cache=None)
    page.set_content("<!DOCTYPE html><html><head></head><body></body></html>")
    for html in (report.form("text/html"), other.form("text/html")):
        page.evaluate(
            """(html) => { const frame = document.createElement('iframe');
            frame.setAttribute('sandbox', 'allow-scripts');
            frame.style.width = '1350px'; frame.style.height = '900px';
            frame.srcdoc = '<!DOCTYPE html><html><body>' + html + '</body></html>';
            document.body.appendChild(frame); }""",
            html,
        )
    frames = page.frame_locator("iframe")
    first, second = frames.nth(0).locator(LIVE), frames.nth(1).locator(LIVE)
    first.wait_for()
    second.wait_for()
    line = assert_linked_both_ways(
        first, "y = jnp.sin(x)", [("stablehlo", "stablehlo.sine")], ("stablehlo", "stablehlo.tanh")
    )
    assert "jnp.tanh" in line
    assert second.locator(".cm-line.olympus-linked").count() == 0  # each frame on its own
    assert BREAKOUT in second.locator(".olympus-name").inner_text()
    for frame in page.frames:
        assert frame.evaluate("() => window.__pwned === undefined")


# -- a notebook in JupyterLab with the extension disabled -----------------------------

SETUP = "import olympus, olympus.numpy as jnp\nimport olympus_jupyter\n%load_ext olympus_jupyter"
MODEL = (
    "def f(x):\n"
    '    """</script><script>window.__pwned=1</script><!--<script>"""\n'
    "    y = jnp.sin(x)\n"
    "    z = y * 2\n"
    "    return jnp.tanh(z @ z.T)\n"
    'f.__name__ = "f</script><script>window.__pwned=1</script>"\n'
    "x = jnp.ones((4, 4))"
)
SHOW = "%olympus_lower f(x)"


@pytest.fixture(scope="module")
def lab_without_olympus(notebooks_dir, tmp_path_factory):
    """A JupyterLab whose Olympus extension is disabled, in a config dir of its own."""
    tmp = tmp_path_factory.mktemp("lab-without-olympus")
    config = tmp / "config"
    config.mkdir()
    env = {"JUPYTER_CONFIG_DIR": str(config)}
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "jupyter",
            "labextension",
            "disable",
            "--level=user",
            "olympus-jupyter",
        ],
        env={**os.environ, **env},
        capture_output=True,
        text=True,
        timeout=deadline(120),
    )
    assert proc.returncode == 0, proc.stderr
    page_config = json.loads((config / "labconfig" / "page_config.json").read_text())
    assert page_config["disabledExtensions"]["olympus-jupyter"] is True
    with mock.patch.dict(os.environ, env):  # the server's environment only
        server = Server("lab", notebooks_dir, tmp)
    yield server
    server.stop()


def test_the_html_output_is_the_live_view_where_the_extension_is_off(
    page, lab_without_olympus, notebooks_dir
):
    name = write_notebook(
        notebooks_dir / "no-extension.ipynb", [SETUP, MODEL, SHOW], execute=False
    ).name
    run_all_cells(page, lab_without_olympus, f"lab/tree/{name}?reset")
    root = page.locator(f'.jp-OutputArea-output[data-mime-type="text/html"] {LIVE}')
    root.wait_for(timeout=ms(120))
    assert page.locator("[data-olympus-viewer]").count() == 0  # no extension here
    assert not pwned(page)
    assert_notebook_report_live(page, root, "standalone-lab-without-extension.png")
    assert page.locator(".jp-OutputArea script").count() == 0


def test_an_untrusted_notebook_shows_the_static_html_and_runs_nothing(
    page, lab_without_olympus, notebooks_dir
):
    name = write_notebook(notebooks_dir / "no-extension-saved.ipynb", [SETUP, MODEL, SHOW]).name
    page.goto(lab_without_olympus.page_url(f"lab/tree/{name}?reset"))
    static = page.locator('.jp-OutputArea-output[data-mime-type="text/html"] .olympus-report')
    static.wait_for(timeout=ms(60))
    assert (
        page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(2).trusted"
        )
        is False
    )
    page.wait_for_timeout(1000)  # time for any script to have run
    assert page.locator("[data-olympus-live]").count() == 0
    assert page.locator(".jp-OutputArea script").count() == 0  # the sanitizer took them
    assert "y = jnp.sin(x)" in static.inner_text()
    assert "f</script><script>window.__pwned=1</script>" in static.inner_text()
    # The sanitizer dropped the style sheet too: each line still reads on its own.
    lines = static.inner_text().split("\n")
    sine = [line for line in lines if "y = jnp.sin(x)" in line]
    assert len(sine) == 1 and "z = y * 2" not in sine[0] and "olympuspr: sin" in sine[0]
    sine_ops = [line for line in lines if "= stablehlo.sine" in line]
    assert sine_ops and all(
        re.match(r"\s*\d+  ", line) and line.endswith("In [2]:3 (f)") for line in sine_ops
    )
    assert not pwned(page)
    page.screenshot(path=str(artifacts_dir() / "standalone-lab-untrusted.png"))


# -- nbconvert's HTML export of an executed notebook ----------------------------------


def test_an_nbconvert_html_export_is_the_live_view_offline(page, notebooks_dir, tmp_path):
    """``jupyter nbconvert --to html`` of an executed notebook, opened from disk with
    every request but the file refused: the report's output is the live view, linked
    both ways, and nothing from the report's data runs."""
    notebook = write_notebook(notebooks_dir / "nbconvert-export.ipynb", [SETUP, MODEL, SHOW])
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "jupyter",
            "nbconvert",
            "--to",
            "html",
            "--output-dir",
            str(tmp_path),
            str(notebook),
        ],
        capture_output=True,
        text=True,
        timeout=deadline(120),
    )
    assert proc.returncode == 0, proc.stderr
    exported = tmp_path / "nbconvert-export.html"
    root, requests, url = open_offline(page, exported, LIVE)
    # nbconvert's own template asks a CDN for require.js and MathJax: refused here,
    # as offline. The report asks for nothing.
    refused = [r for r in requests if not r.startswith("file:")]
    assert all(r.startswith("https://cdnjs.cloudflare.com/") for r in refused), refused
    log = page.console_log
    failed = [e for e in log.errors if e.startswith("Failed to load resource")]
    assert len(failed) <= len(refused), log.errors
    log.errors[:] = [e for e in log.errors if e not in failed]  # the template's, not ours
    assert page.locator(LIVE).count() == 1
    assert not pwned(page)
    assert_notebook_report_live(page, root, "nbconvert-export.png")


# -- Voilà, serving a notebook as an app ----------------------------------------------


def test_voila_serves_a_report_as_the_live_view(page, lab, notebooks_dir):
    """A notebook with a report, rendered by Voilà (the Jupyter server's extension,
    ``/voila/render/NB``: Voilà runs the notebook and shows its outputs with
    JupyterLab's output renderers of its own release, so this extension's JSON
    renderer is not loaded there): the ``text/html`` output is the live view, linked
    both ways, and nothing from the report's data runs."""
    name = write_notebook(
        notebooks_dir / "voila-app.ipynb", [SETUP, MODEL, SHOW], execute=False
    ).name
    failed: list[str] = []
    page.on("requestfailed", lambda r: failed.append(r.url))
    page.goto(lab.page_url(f"voila/render/{name}"))
    root = page.locator(LIVE)
    root.wait_for(timeout=ms(120))
    assert page.locator(".olympus-report").count() == 1  # one report, shown once
    assert not pwned(page)
    assert_notebook_report_live(page, root, "voila-app.png")
    # Voilà's own page asks CDNs for fonts and MathJax (refused where there is no
    # network), and Voilà 0.5 tries the JupyterLab extension against the JupyterLab
    # 4.2 packages it ships, where it cannot load (it needs 4.5: "Shared module ...
    # doesn't exist in shared scope"): those are the console's errors, and the
    # report's output shows live without the extension.
    assert all(not url.startswith(lab.url) for url in failed), failed
    log = page.console_log
    log.errors[:] = [
        e
        for e in log.errors
        if not (e.startswith("Failed to load resource") and failed)
        and not re.search(r"Shared module \S+ doesn't exist in shared scope", e)
    ]


# -- marimo, serving a notebook as an app ---------------------------------------------

#: A marimo notebook: the model of the notebooks above in one cell, its report the
#: output of the next (marimo shows a cell's last expression).
MARIMO_APP = """\
import marimo

app = marimo.App(width="full")


@app.cell
def _():
    import olympus.numpy as jnp
    import olympus_jupyter

{model}
    return f, olympus_jupyter, x


@app.cell
def _(f, olympus_jupyter, x):
    olympus_jupyter.inspect(f, x)
    return
"""


#: The same model in an Inspector, bound to a name (marimo keeps a widget's page
#: connected while a name holds it).
MARIMO_INSPECTOR_APP = MARIMO_APP.replace(
    "    olympus_jupyter.inspect(f, x)\n    return\n",
    "    inspector = olympus_jupyter.Inspector(f, x)\n    inspector\n    return (inspector,)\n",
)


def serve_marimo(tmp_path_factory, source: str):
    tmp = tmp_path_factory.mktemp("marimo")
    app = tmp / "olympus_app.py"
    app.write_text(source.format(model=textwrap.indent(MODEL, "    ")))
    return MarimoApp(app, tmp)


@pytest.fixture(scope="module")
def marimo_app(tmp_path_factory):
    server = serve_marimo(tmp_path_factory, MARIMO_APP)
    yield server
    server.stop()


@pytest.fixture(scope="module")
def marimo_inspector_app(tmp_path_factory):
    server = serve_marimo(tmp_path_factory, MARIMO_INSPECTOR_APP)
    yield server
    server.stop()


def test_marimo_shows_a_report_as_the_live_view(page, marimo_app):
    """A marimo notebook served as an app (``marimo run --headless``), a report its
    cell's output: marimo runs no script of an HTML output, and asks the report
    for what to show (``_display_``): the anywidget of the same view, linked both
    ways, nothing of the report's data run; the compiled HLO's source tables, which
    list marimo's own files, folded shut until opened."""
    page.goto(marimo_app.url)
    root = page.locator(LIVE)
    root.wait_for(timeout=ms(120))
    assert root.count() == 1
    assert not pwned(page)
    assert_notebook_report_live(page, root, "marimo-app.png")
    compiled = root.locator('[data-stage-panel="compiled"] .cm-content')
    shut = compiled.inner_text()
    assert "FileNames" in shut and "marimo" not in shut, shut[:2000]
    root.locator('[data-stage-panel="compiled"] .cm-foldPlaceholder').first.click()
    opened = compiled.inner_text()
    assert re.search(r"marimo[/\\]_runtime", opened), opened[:2000]


def test_the_inspector_works_in_marimo(page, marimo_inspector_app):
    """marimo shows no ipywidget; the Inspector's ``_display_`` is its controls and
    report as an anywidget, the Inspector itself still the model: an edited shape
    re-stages and says why, a stage unticked changes the view alone, Compare diffs
    the two specializations, a bad value is refused beside its box, and nothing of
    the program's names runs."""
    page.goto(marimo_inspector_app.url)
    report = page.locator(f".olympus-inspector-report {LIVE}")
    report.wait_for(timeout=ms(120))
    status, why = page.locator(".olympus-inspector-status"), page.locator(".olympus-inspector-why")
    expect(status).to_contain_text("✓ trace")
    assert HOSTILE_NAME in report.locator(".olympus-name").inner_text()
    arg = page.locator('input[data-olympus-control="arg0"]')
    assert arg.input_value() == "f32[4,4]"
    arg.fill("f32[8,8]")
    arg.press("Enter")
    expect(why).to_contain_text("shape (4, 4) → (8, 8)")
    set_layout(report, "side-by-side")
    expect(report.locator('[data-stage-panel="olympuspr"] .cm-content')).to_contain_text("f32[8,8]")
    assert report.locator('[data-stage-panel="memory"]').count() == 1
    page.locator('input[data-olympus-control="stages:memory"]').uncheck()
    expect(why).to_contain_text("No new stages: only the display changed.")
    expect(report.locator('[data-stage-panel="memory"]')).to_have_count(0)
    page.locator('button[data-olympus-control="compare-button"]').click()
    comparison = page.locator(".olympus-inspector-comparison")
    expect(comparison).to_contain_text("f32[4,4]")
    expect(comparison).to_contain_text("f32[8,8]")
    arg.fill("f32[4,x]")
    arg.press("Enter")
    expect(page.locator(".olympus-inspector-error")).to_contain_text("whole numbers")
    expect(status).to_contain_text("Not re-staged")
    assert not pwned(page)
    page.screenshot(path=str(artifacts_dir() / "marimo-inspector.png"))
