"""Draws the pictures of a real model's report in docs/report.md ("Your code first").

Reports the train step of ``real_model.py`` (beside this script: a flax linen model
of three residual blocks of Dense layers, trained with optax adam) with its costs,
saves the page (``report.save``), opens it in Chromium with Playwright and takes two
screenshots into this folder:

- ``real-model-heatmap.png``: the source view of ``real_model.py`` with the costs
  heatmap on (each line's share of the flops in the gutter);
- ``real-model-modules.png``: the costs panel's tree by module and layer, its first
  block opened to its layers.

Run from the repository root, with the view built (``jlpm build``)::

    python docs/pictures/make_real_model_picture.py [--chromium /usr/bin/chromium]

Each picture is kept under 300 KB (the script fails otherwise).
"""

from __future__ import annotations

import argparse
import pathlib
import shutil
import sys
import tempfile

HERE = pathlib.Path(__file__).resolve().parent
MAX_BYTES = 300_000
LIVE = "[data-olympus-live][data-olympus-rendered]"
ARGS = ["--headless", "--no-sandbox", "--disable-gpu", "--no-first-run"]


def save_report(folder: pathlib.Path) -> pathlib.Path:
    """The saved page of the train step's report (with the costs stage)."""
    sys.path.insert(0, str(HERE))
    import real_model

    import olympus_jupyter

    report = olympus_jupyter.inspect(real_model.train_step, *real_model.example(), costs=True)
    if not report.ok:
        raise SystemExit(f"the report failed: {report.failure}")
    # Uncut: the picture shows no note about the page's cap.
    return pathlib.Path(report.save(str(folder / "real_model.html"), limit=None))


def shoot(page_path: pathlib.Path, chromium: str | None) -> list[pathlib.Path]:
    """Opens the page and takes the two screenshots; returns their paths."""
    from playwright.sync_api import sync_playwright

    heatmap, modules = HERE / "real-model-heatmap.png", HERE / "real-model-modules.png"
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=chromium, args=ARGS)
        try:
            # Tall enough for the whole of real_model.py under the toolbar.
            page = browser.new_page(viewport={"width": 1100, "height": 1380})
            page.goto(page_path.as_uri())
            root = page.locator(LIVE)
            root.wait_for()
            if root.get_attribute("data-layout") != "tabs":
                root.locator('button[data-olympus-action="layout"]').click()
            # The heatmap on, by flops; the source view of the model's file.
            root.locator('select[data-olympus-action="heat"]').select_option("flops")
            root.locator('[role="tab"][data-stage="source"]').click()
            source = root.locator('[role="tabpanel"][data-stage-panel="source"]')
            source.locator(".olympus-heat-gutter [data-olympus-heat-mark]").first.wait_for()
            # The editor taller than its usual 34rem, so that the model and its train
            # step show at once, from `class Block` on.
            root.evaluate("el => el.style.setProperty('--olympus-editor-height', '58rem')")
            top = source.locator(".cm-line", has_text="class Block").first
            top.evaluate(
                """el => { const s = el.closest('.cm-scroller');
                s.scrollTop += el.getBoundingClientRect().top - s.getBoundingClientRect().top; }"""
            )
            page.mouse.move(0, 0)  # no hover on a line
            page.wait_for_timeout(300)
            root.screenshot(path=str(heatmap))
            # The costs panel's module tree, the first block opened to its layers.
            page.set_viewport_size({"width": 1200, "height": 1380})  # every column
            root.locator('[role="tab"][data-stage="costs"]').click()
            panel = root.locator('[role="tabpanel"][data-stage-panel="costs"]')
            tree = panel.locator("[data-olympus-costs-modules]")
            tree.wait_for()
            tree.locator('button[data-olympus-module-toggle="Model/Block_0"]').click()
            page.mouse.move(0, 0)
            tree.screenshot(path=str(modules))
        finally:
            browser.close()
    return [heatmap, modules]


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument(
        "--chromium",
        default=shutil.which("chromium"),
        help="the Chromium to run (default: chromium on PATH, else Playwright's own)",
    )
    args = parser.parse_args()
    with tempfile.TemporaryDirectory() as tmp:
        pictures = shoot(save_report(pathlib.Path(tmp)), args.chromium)
    for picture in pictures:
        size = picture.stat().st_size
        print(f"{picture.relative_to(HERE.parents[1])}: {size / 1000:.0f} KB")
        if size > MAX_BYTES:
            print(f"  over {MAX_BYTES // 1000} KB: make the viewport smaller", file=sys.stderr)
            return 1
    return 0


if __name__ == "__main__":
    sys.exit(main())
