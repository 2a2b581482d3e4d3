"""JupyterLab: turning the costs heatmap on, on the report of a program of about 50,000
instructions, measured in Chromium: each switch of the toolbar's heatmap choice (off →
flops, → bytes accessed, → peak memory, → off) takes <= 0.2 s, from the change to two
frames later (every view's gutter marked and painted).

Makes the report of a program of about 50,000 equations (olympuspr, StableHLO and
compiled HLO, the costs stage) from a generated module of 1,000 distinct source lines,
each run 25 times in a loop (so that 1,000 lines have costs, each tied to some 50 ops
of every stage), saved in a notebook as the cell's output. In a real JupyterLab, the
notebook is opened with the stages side by side (the source and every program stage on
screen at once), and the heatmap's choice switched in turn; each switch is timed.
The first switch on, the one a user feels first, is held to the budget on its own
(a stage line's mark is read from its op's frames when the line is shown: no table of
a stage's ops is built): the notebook is opened on a fresh page :data:`OPENINGS`
times, and the median of those first switches is judged (timed once a run, the first
switch read 112 to 200 ms in fifteen runs in CI, three of them 173 ms or more). The
switches after the first, on the first page, are judged on their median.
Most of a switch is the browser's paint of the four editors (as for a click on a source
line, which lights up every view), not the view's own work.
Run: python benchmarks/bench_heat_toggle.py [--short] [--json PATH]  (takes a few minutes)
(--short: 8 switches instead of 24; the first switch is timed on 3 fresh pages either way)
"""

import importlib.util
import json
import pathlib
import statistics
import sys
import tempfile

import numpy as np

sys.path.insert(0, str(pathlib.Path(__file__).resolve().parents[1] / "tests" / "browser"))
from labserver import (
    CHROMIUM,
    CHROMIUM_ARGS,
    Server,
    open_notebook,
    saved_outputs_notebook,
    set_layout,
)

from _results import Results, name_of, parser

BUDGET_S = 0.2
LINES = 1_000  # distinct source lines, two equations each
REPEATS = 25  # times each runs: 50,000 equations in all
STAGES = ["source", "olympuspr", "stablehlo", "compiled", "costs"]
#: Times the notebook is opened on a fresh page, its first switch timed on each.
OPENINGS = 3


def write_module(folder: pathlib.Path) -> pathlib.Path:
    """A module whose function runs ``LINES`` distinct lines ``REPEATS`` times (the
    report's source must be a file of its own, so that every line is shown)."""
    body = "\n".join(f"        x = jnp.sin(x) * {1 + (i + 1) / 1e5!r}" for i in range(LINES))
    path = folder / "heat_program.py"
    path.write_text(
        "import olympus.numpy as jnp\n\n\n"
        "def big_program(x):\n"
        f"    for _ in range({REPEATS}):\n"
        f"{body}\n"
        "    return x\n"
    )
    return path


def make_notebook(root: pathlib.Path) -> tuple[str, dict]:
    from olympus_jupyter import inspect

    spec = importlib.util.spec_from_file_location("heat_program", write_module(root))
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    report = inspect(
        module.big_program, np.ones((8,), np.float32), stages=STAGES, costs=True, cache=None
    )
    data = report.to_json()
    saved_outputs_notebook(
        root / "heat.ipynb", [data], source="%olympus_lower --costs big_program(x)"
    )
    return "heat.ipynb", data


#: Switches the heatmap's choice through ``choices`` in turn; each switch timed from the
#: change to two frames later, with the number of marks then on screen.
TOGGLE = """async (el, choices) => {
    const frames = () => new Promise(r =>
        requestAnimationFrame(() => requestAnimationFrame(r)));
    const select = el.querySelector('select[data-olympus-action="heat"]');
    const out = [];
    for (const choice of choices) {
        const t0 = performance.now();
        select.value = choice;
        select.dispatchEvent(new Event('change', { bubbles: true }));
        await frames();
        const ms = performance.now() - t0;
        const marks = el.querySelectorAll('[data-olympus-heat-mark]').length;
        out.push([choice, ms, marks]);
    }
    return JSON.stringify(out);
}"""


def switch_on_a_fresh_page(browser, server: Server, name: str, choices: list[str]) -> list:
    """Opens the notebook ``name`` on a new page, its view side by side, and switches
    the heatmap through ``choices`` (:data:`TOGGLE`); the page is closed after."""
    page = browser.new_page(viewport={"width": 1400, "height": 1000})
    try:
        open_notebook(page, server, name, timeout_ms=300_000)
        view = page.locator("[data-olympus-viewer]").first
        set_layout(view, "side-by-side")
        page.wait_for_selector('[data-stage-panel="compiled"] .cm-content', timeout=120_000)
        return json.loads(view.evaluate(TOGGLE, choices))
    finally:
        page.close()


def main() -> int:
    args = parser(__doc__, "8 switches instead of 24").parse_args()
    rounds = 2 if args.short else 6
    from playwright.sync_api import sync_playwright

    root = pathlib.Path(tempfile.mkdtemp())
    name, data = make_notebook(root)
    ops = {s: st["ops"]["count"] for s, st in data["provenance"]["stages"].items()}
    costed = sum(r["what"] == "line" for r in data["costs"]["lines"])
    print(
        f"program: {ops.get('compiled', 0):,} compiled instructions, "
        + ", ".join(f"{n:,} {s} ops" for s, n in ops.items() if s != "compiled")
        + f"; {costed:,} source lines with costs; notebook "
        f"{(root / name).stat().st_size / 1e6:.1f} MB"
    )
    server = Server("lab", root, pathlib.Path(tempfile.mkdtemp()))
    try:
        with sync_playwright() as p:
            browser = p.chromium.launch(executable_path=CHROMIUM, args=CHROMIUM_ARGS)
            switches = switch_on_a_fresh_page(
                browser, server, name, ["flops", "bytes", "peak", "off"] * rounds
            )
            firsts = [switches[0][1]] + [
                switch_on_a_fresh_page(browser, server, name, ["flops"])[0][1]
                for _ in range(OPENINGS - 1)
            ]
            browser.close()
    finally:
        server.stop()
    first = statistics.median(firsts) / 1e3
    on = [ms for choice, ms, _ in switches[1:] if choice != "off"]
    off = [ms for choice, ms, _ in switches if choice == "off"]
    median = statistics.median(on) / 1e3
    marks = max(m for _, _, m in switches)
    if marks == 0 or any(m for c, _, m in switches if c == "off"):
        print("the heatmap's marks did not follow the choice")
        return 2
    print(
        f"first switch on (flops): median {first * 1e3:.0f} ms over {len(firsts)} fresh pages "
        f"(all: {', '.join(f'{ms:.0f}' for ms in firsts)} ms) (budget <= "
        f"{BUDGET_S * 1e3:.0f} ms) {'ok' if first <= BUDGET_S else 'OVER BUDGET'}"
    )
    print(
        f"switching the heatmap on or to another figure: median {median * 1e3:.0f} ms over "
        f"{len(on)}, worst {max(on):.0f} ms (budget <= {BUDGET_S * 1e3:.0f} ms) "
        f"{'ok' if median <= BUDGET_S else 'OVER BUDGET'}; {marks} marks on screen"
    )
    print(f"switching it off: median {statistics.median(off):.0f} ms")
    results = Results(name_of(__file__))
    results.add(
        f"JupyterLab heatmap of a {ops.get('compiled', 0):,}-instruction program: "
        f"switching it on or to another figure, change to two frames (median of "
        f"{len(on)})",
        median * 1e3,
        "ms",
        BUDGET_S * 1e3,
    )
    results.add(
        f"the heatmap turned on the first time, change to two frames (median of "
        f"{len(firsts)} fresh pages)",
        first * 1e3,
        "ms",
        BUDGET_S * 1e3,
    )
    results.add(
        "switching the heatmap off, change to two frames (median)", statistics.median(off), "ms"
    )
    results.write(args.json)
    return 0 if results.ok else 1


if __name__ == "__main__":
    sys.exit(main())
