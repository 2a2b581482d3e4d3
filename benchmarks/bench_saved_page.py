"""A saved page of the sharded transformer opens in at most 3 s in Chromium (issue 33).

The report is the one a user of ``tests/real_models/transformer_linen.py`` makes of
its train step with everything on, ``inspect(step, *args, passes=True, costs=True)``
(a flax linen LM sharded fsdp 4 x tensor 2 over 8 CPU devices, so made in a child
process that sees 8 devices: ``--xla_force_host_platform_device_count=8``), written
by ``report.save(path)`` as it writes by default.

The page is then opened from ``file://`` in headless Chromium (every other request
refused, as ``tests/browser/test_view_outside_lab.py`` opens it), each time on a
fresh page of a fresh browser context (nothing cached from the last open). What is
timed is navigation start (the page's ``performance.timeOrigin``) to the report's
view rendered and interactive: the view sets ``data-olympus-rendered`` on its root
(``[data-olympus-live]``) once its first panel has painted; from that moment the
page waits for the next frame and then for the first task the main thread runs
after it, the first moment a click can be handled. The figure is the median over
the opens. Reported beside it: when the first panel painted, and a click on another
stage's tab after it, to its panel shown (which checks that the view answers).

Not met yet on a loaded 2-core machine (medians 2.94-3.26 s): in ``run_all.py``'s
not-met set until a quiet machine decides it (benchmarks/README.md).

Run: python benchmarks/bench_saved_page.py [--short] [--json PATH]
(--short: the page opened 3 times instead of 5; the report is made once either way)
"""

from __future__ import annotations

import argparse
import json
import os
import pathlib
import statistics
import subprocess
import sys
import tempfile
import time

HERE = pathlib.Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"
sys.path.insert(0, str(TESTS / "browser"))
from labserver import CHROMIUM, CHROMIUM_ARGS  # type: ignore[import-not-found]  # noqa: E402

from _results import Results, name_of, parser  # noqa: E402

BUDGET_S = 3.0
PROGRAM = "transformer_linen"
OPENS = {"short": 3, "full": 5}
CHILD_TIMEOUT_S = 1200
OPEN_TIMEOUT_MS = 120_000
#: Where the view is, once it is live and painted.
LIVE = "[data-olympus-live][data-olympus-rendered]"

#: Installed before the page's own scripts: notes the time (ms from navigation start)
#: the view's root gets ``data-olympus-rendered``, then the time of the first task
#: after the next frame (the page can take input).
WATCH = """(() => {
    const done = (rendered) => {
        window.__olympusRendered = rendered;
        requestAnimationFrame(() => setTimeout(() => {
            window.__olympusInteractive = performance.now();
        }, 0));
    };
    const seen = () => document.querySelector('[data-olympus-live][data-olympus-rendered]');
    const watch = new MutationObserver(() => {
        if (window.__olympusRendered === undefined && seen()) {
            watch.disconnect();
            done(performance.now());
        }
    });
    watch.observe(document, {subtree: true, childList: true, attributes: true,
                             attributeFilter: ['data-olympus-rendered']});
})();"""


# -- in a child with 8 devices: the report, saved ------------------------------------------


def child_save(path: str) -> dict:
    import jax

    sys.path.insert(0, str(TESTS))
    import real_models  # type: ignore[import-not-found]
    from olympus_jupyter import inspect

    program = real_models.make(PROGRAM)
    start = time.perf_counter()
    report = inspect(
        program.fn, *program.args, passes=True, costs=True, cache=False, **program.kwargs
    )
    if not report.ok:
        return dict(error=f"the report failed: {report.failure}")
    made = time.perf_counter() - start
    start = time.perf_counter()
    report.save(path)
    saved = time.perf_counter() - start
    assert report.provenance is not None, "a report with costs has its provenance model"
    compiled = report.provenance.stages.get("compiled")
    return dict(
        devices=len(jax.devices()),
        report_s=made,
        save_s=saved,
        bytes=os.path.getsize(path),
        instructions=len(compiled.ops) if compiled is not None else 0,
    )


def save_page(path: pathlib.Path) -> dict:
    env = dict(os.environ)
    env.setdefault("JAX_PLATFORMS", "cpu")
    env["XLA_FLAGS"] = (
        env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
    ).strip()
    proc = subprocess.run(
        [sys.executable, __file__, "--child", str(path)],
        env=env,
        capture_output=True,
        text=True,
        timeout=CHILD_TIMEOUT_S,
    )
    if proc.returncode != 0:
        raise SystemExit(f"making the saved page failed:\n{proc.stderr[-3000:]}")
    found = json.loads(proc.stdout.strip().splitlines()[-1])
    if "error" in found:
        raise SystemExit(found["error"])
    return found


# -- in Chromium ------------------------------------------------------------------------------


def open_once(browser, path: pathlib.Path) -> dict:
    """Opens the page on a fresh context; ms from navigation start to the view rendered,
    to it interactive, and a tab click to its panel shown."""
    context = browser.new_context(viewport={"width": 1400, "height": 1000})
    try:
        page = context.new_page()
        page.add_init_script(WATCH)
        page.route(
            "**/*",
            lambda route: (
                route.continue_() if route.request.url.startswith("file:") else route.abort()
            ),
        )
        page.goto(path.as_uri(), wait_until="commit", timeout=OPEN_TIMEOUT_MS)
        page.wait_for_function(
            "() => window.__olympusInteractive !== undefined", timeout=OPEN_TIMEOUT_MS
        )
        rendered, interactive = page.evaluate(
            "() => [window.__olympusRendered, window.__olympusInteractive]"
        )
        root = page.locator(LIVE).first
        tabs = root.locator('[role="tab"][data-stage]')
        stages = [tabs.nth(i).get_attribute("data-stage") for i in range(tabs.count())]
        other = next((s for s in ("compiled", "stablehlo", "olympuspr") if s in stages), None)
        click_ms = None
        if other is not None:
            start = time.perf_counter()
            root.locator(f'[role="tab"][data-stage="{other}"]').first.click()
            root.locator(f'[data-stage-panel="{other}"]').first.wait_for(state="visible")
            click_ms = (time.perf_counter() - start) * 1e3
        return dict(rendered=rendered, interactive=interactive, click=click_ms, tabs=stages)
    finally:
        context.close()


def main() -> int:
    options = parser(__doc__, "the page opened 3 times instead of 5")
    options.add_argument("--child", metavar="PATH", help=argparse.SUPPRESS)
    args = options.parse_args()
    if args.child:
        print(json.dumps(child_save(args.child)))
        return 0
    from playwright.sync_api import sync_playwright

    opens = OPENS["short" if args.short else "full"]
    folder = pathlib.Path(tempfile.mkdtemp())
    path = folder / f"{PROGRAM}.html"
    made = save_page(path)
    print(
        f"{PROGRAM} ({made['devices']} devices, {made['instructions']:,} compiled "
        f"instructions): report with passes and costs {made['report_s']:.1f} s, saved in "
        f"{made['save_s']:.1f} s, page {made['bytes'] / 1e6:.2f} MB",
        flush=True,
    )
    runs = []
    with sync_playwright() as p:
        browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
        try:
            for _ in range(opens):
                runs.append(open_once(browser, path))
                print(
                    f"  open: rendered {runs[-1]['rendered']:.0f} ms, interactive "
                    f"{runs[-1]['interactive']:.0f} ms, tab click "
                    + (f"{runs[-1]['click']:.0f} ms" if runs[-1]["click"] is not None else "-"),
                    flush=True,
                )
        finally:
            browser.close()
    path.unlink()
    folder.rmdir()
    seconds = statistics.median(r["interactive"] for r in runs) / 1e3
    rendered = statistics.median(r["rendered"] for r in runs) / 1e3
    each = [r["interactive"] / 1e3 for r in runs]
    clicks = [r["click"] for r in runs if r["click"] is not None]
    verdict = "ok" if seconds <= BUDGET_S else "OVER BUDGET"
    print(
        f"saved page of {PROGRAM} ({made['bytes'] / 1e6:.2f} MB): navigation start to the "
        f"view rendered and interactive, median {seconds:.2f} s over {opens} opens "
        f"(all: {', '.join(f'{r:.2f}' for r in each)} s; rendered "
        f"{rendered:.2f} s) (budget <= {BUDGET_S:g} s) {verdict}"
    )
    results = Results(name_of(__file__))
    results.add(
        f"saved page of the sharded transformer ({PROGRAM}, passes and costs) opened in "
        f"Chromium, navigation start to the view rendered and interactive (median of {opens})",
        seconds,
        "s",
        BUDGET_S,
    )
    results.add("the view's first panel painted (median)", rendered, "s")
    results.add("the saved page's size", made["bytes"] / 1e6, "MB")
    if clicks:
        results.add(
            "a stage tab clicked to its panel shown (median)", statistics.median(clicks), "ms"
        )
    results.write(args.json)
    return 0 if results.ok else 1


if __name__ == "__main__":
    sys.exit(main())
