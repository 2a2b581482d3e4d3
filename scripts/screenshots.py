"""Screenshots of the inspector and the stepper, drawn by a real JupyterLab in Chromium.

    python scripts/screenshots.py [OUT_DIR]      # default: docs/images/

Uses the browser tests' setup (``tests/browser/labserver.py``): a Jupyter server on
loopback with temporary settings, Debian's Chromium driven by Playwright, notebooks
run cell by cell in the browser's own kernel. Writes ``inspector.png`` (after one
change of shape: the line that says why it re-traced, the entry to compare with),
``stepper.png`` (after two steps), and the report view with its linking for the
README (``lab-view.png``, ``linking-1-line.png``, ``linking-2-op.png``). ``tests/browser/test_widgets.py`` runs
:func:`take` too, so the script keeps working.
"""

from __future__ import annotations

import pathlib
import sys
import tempfile

ROOT = pathlib.Path(__file__).resolve().parents[1]
sys.path.insert(0, str(ROOT / "tests" / "browser"))
from labserver import CHROMIUM, CHROMIUM_ARGS, Server, run_all_cells, write_notebook  # noqa: E402

SETUP = (
    "import olympus, olympus.numpy as jnp\n"
    "from olympus_jupyter import Inspector, Stepper\n"
    "def layer(w, x):\n"
    "    return jnp.tanh(x @ w)"
)
VIEWPORT = {"width": 1100, "height": 1600}
REPORT_VIEWPORT = {"width": 1900, "height": 1100}


def _run(page, server: Server, notebooks_dir: pathlib.Path, name: str, cell: str):
    write_notebook(notebooks_dir / name, [SETUP, cell], execute=False)
    run_all_cells(page, server, f"lab/tree/{name}?reset")
    # JupyterLab's chrome is not part of the picture: keep the widget alone on screen.
    page.evaluate(
        "() => { const shell = window.jupyterapp.shell;"
        " if (!shell.leftCollapsed) shell.collapseLeft(); }"
    )


def take(page, server: Server, notebooks_dir: pathlib.Path, out_dir: pathlib.Path):
    """Draws both widgets and the report view in ``server``'s JupyterLab on ``page``;
    returns the PNGs written."""
    out_dir = pathlib.Path(out_dir)
    out_dir.mkdir(parents=True, exist_ok=True)
    page.set_viewport_size(VIEWPORT)

    _run(
        page,
        server,
        notebooks_dir,
        "screenshot-inspector.ipynb",
        "ins = Inspector(layer, jnp.ones((4, 4)), jnp.ones((2, 4)))\nins",
    )
    widget = page.locator(".olympus-inspector").first
    widget.locator("[data-olympus-viewer][data-olympus-rendered]").first.wait_for(timeout=120_000)
    x = (
        widget.locator(".widget-text")
        .filter(has=page.locator('label.widget-label:text-is("x")'))
        .locator("input")
    )
    x.fill("f32[8,4]")
    x.press("Enter")
    widget.locator(".widget-html", has_text="Re-traced").first.wait_for(timeout=120_000)
    widget.locator("[data-olympus-viewer][data-olympus-rendered]").last.wait_for(timeout=120_000)
    tab = widget.locator('[role="tab"][data-stage="olympuspr"]').last
    tab.click()
    page.mouse.move(0, 0)  # no hover highlight in the picture
    page.wait_for_timeout(500)
    inspector = out_dir / "inspector.png"
    widget.screenshot(path=str(inspector))

    _run(
        page,
        server,
        notebooks_dir,
        "screenshot-stepper.ipynb",
        "Stepper(lambda x, y: 2 * x + y, 3, 4)",
    )
    widget = page.locator(".olympus-stepper").first
    widget.wait_for(timeout=120_000)
    for stage, shows in (("trace", "mul 2:i32[] a"), ("lower", "stablehlo.multiply")):
        widget.locator("button", has_text=f"Next: {stage}").click()
        widget.locator("pre", has_text=shows).first.wait_for(timeout=120_000)
    page.mouse.move(0, 0)
    page.wait_for_timeout(300)
    stepper = out_dir / "stepper.png"
    widget.screenshot(path=str(stepper))
    return [inspector, stepper] + take_report(page, server, notebooks_dir, out_dir)


REPORT_CELL = """\
def mlp(w1, w2, x):
    hidden = jnp.tanh(x @ w1)
    scores = hidden @ w2
    return jax.nn.softmax(scores, axis=-1)

%olympus_lower mlp(jnp.ones((8, 16)), jnp.ones((16, 4)), jnp.ones((2, 8)))"""


def take_report(
    page, server: Server, notebooks_dir: pathlib.Path, out_dir: pathlib.Path
) -> list[pathlib.Path]:
    """The JupyterLab view of a report, side by side (``lab-view.png``), then the
    linking in two pictures: a source line clicked, its ops lit in every stage
    (``linking-1-line.png``), and an op clicked, its line lit (``linking-2-op.png``)."""
    out_dir = pathlib.Path(out_dir)
    write_notebook(
        notebooks_dir / "screenshot-report.ipynb",
        [SETUP + "\nimport jax\n%load_ext olympus_jupyter", REPORT_CELL],
        execute=False,
    )
    page.set_viewport_size(REPORT_VIEWPORT)  # wide: the stages side by side
    run_all_cells(page, server, "lab/tree/screenshot-report.ipynb?reset")
    page.evaluate(
        "() => { const shell = window.jupyterapp.shell;"
        " if (!shell.leftCollapsed) shell.collapseLeft(); }"
    )
    news = page.locator(".jp-toast-button", has_text="No")  # JupyterLab asks about news
    if news.count():
        news.first.click()
    root = page.locator("[data-olympus-viewer][data-olympus-rendered]").first
    root.wait_for(timeout=120_000)
    if root.get_attribute("data-layout") != "side-by-side":
        root.locator('button[data-olympus-action="layout"]').click()
    page.mouse.move(0, 0)
    page.wait_for_timeout(500)
    paths = [out_dir / "lab-view.png", out_dir / "linking-1-line.png", out_dir / "linking-2-op.png"]
    root.scroll_into_view_if_needed()
    page.screenshot(path=str(paths[0]))  # what is on screen: the notebook, the view in it
    line = root.locator('[data-stage-panel="source"] .cm-line', has_text="jnp.tanh(x @ w1)")
    line.click(position={"x": 4, "y": 4})  # at the line's start: the editor stays put
    root.locator('[data-stage-panel="stablehlo"] .cm-line.olympus-linked').first.wait_for()
    page.mouse.move(0, 0)
    page.wait_for_timeout(300)
    page.screenshot(path=str(paths[1]))
    page.keyboard.press("Escape")
    op = root.locator(
        '[data-stage-panel="stablehlo"] .cm-line', has_text="stablehlo.exponential"
    ).first
    op.click(position={"x": 4, "y": 4})
    root.locator('[data-stage-panel="source"] .cm-line.olympus-active').wait_for()
    page.mouse.move(0, 0)
    page.wait_for_timeout(300)
    page.screenshot(path=str(paths[2]))
    return paths


def main(argv=None) -> int:
    argv = sys.argv[1:] if argv is None else argv
    out_dir = pathlib.Path(argv[0]) if argv else ROOT / "docs" / "images"
    from playwright.sync_api import sync_playwright

    with tempfile.TemporaryDirectory(prefix="olympus-screenshots-") as tmp:
        tmp = pathlib.Path(tmp)
        notebooks = tmp / "notebooks"
        notebooks.mkdir()
        server = Server("lab", notebooks, tmp)
        try:
            with sync_playwright() as p:
                browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
                try:
                    page = browser.new_page(viewport=VIEWPORT)
                    page.set_default_timeout(60_000)
                    for path in take(page, server, notebooks, out_dir):
                        print(f"wrote {path}")
                finally:
                    browser.close()
        finally:
            server.stop()
    return 0


if __name__ == "__main__":
    sys.exit(main())
