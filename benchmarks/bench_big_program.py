"""A program of 50,000 equations: the report (made as the magic makes it, display
bundle included) vs JAX's own trace, lower and compile of it (budget <= 2x), and
the size of the output a notebook saves (budget <= 5 MB, the cap the report says
it applied).

Each side of each round runs in a child process of its own, as a user's first
inspection of a big program runs in a fresh kernel: in one process the second
of two compiles of a program this size is about twice as fast as the first (XLA
and the allocator are warm), which would favour whichever side went second. The
rounds alternate which side goes first; the ratio is the median of the rounds'.
A child times only the work (trace to report), after its imports and a small
program that warms both JAX and Olympus up.

Run: python benchmarks/bench_big_program.py [--short] [--json PATH]
(--short: one round instead of three)

The budget is for 50,000 equations: below that XLA's compile is cheap next to the
work of reading every op, so the ratio is not comparable.
"""

import argparse
import json
import os
import statistics
import subprocess
import sys
import time

from _results import Results, name_of, parser

BUDGET = 2.0
EQUATIONS = 50_000


def make_program(equations: int, k: int):
    """``equations`` elementwise equations in a chain (two per step), a new function
    each time."""

    def chain(x):
        for _ in range(equations // 2):
            x = x * 1.0001 + k
        return x

    return chain


def child(side: str, equations: int) -> dict:
    """Times one side in this process: JAX's trace, lower and compile, or the report
    and its display bundle."""
    import jax
    import numpy as np

    x = np.ones((8,), np.float32)
    if side == "jax":

        def work(n, k):
            return jax.jit(make_program(n, k)).trace(x).lower().compile()
    else:
        from olympus_jupyter import inspect

        def work(n, k):
            report = inspect(make_program(n, k), x, cache=None)
            return report, report._repr_mimebundle_()

    work(100, 0)  # warm-up: first-use costs of either library are not the program's
    start = time.perf_counter()
    out = work(equations, 1)
    seconds = time.perf_counter() - start
    result = {"seconds": seconds}
    if side == "olympus":
        from olympus_jupyter.report.data import MEDIA_TYPE
        from olympus_jupyter.report.output_cap import output_size

        report, bundle = out
        notes = bundle[MEDIA_TYPE].get("notes", [])
        result.update(
            ops=len(report.provenance.stages["olympuspr"].ops),
            size=output_size(bundle),
            full=output_size(report.forms()),
            note=notes[-1] if notes else "",
        )
    return result


def run_child(side: str, equations: int) -> dict:
    out = subprocess.run(
        [sys.executable, __file__, "--child", side, str(equations)],
        check=True,
        capture_output=True,
        text=True,
        env={**os.environ, "PYTHONHASHSEED": "0"},
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def main() -> int:
    options = parser(__doc__, "one round instead of three")
    options.add_argument("--child", nargs=2, metavar=("SIDE", "EQUATIONS"), help=argparse.SUPPRESS)
    args = options.parse_args()
    if args.child:
        print(json.dumps(child(args.child[0], int(args.child[1]))))
        return 0
    from olympus_jupyter.report.output_cap import MAX_OUTPUT_BYTES

    rounds = 1 if args.short else 3
    ours, theirs, ratios, last = [], [], [], None
    for r in range(rounds):
        order = ("jax", "olympus") if r % 2 else ("olympus", "jax")
        times = {}
        for side in order:
            result = run_child(side, EQUATIONS)
            times[side] = result["seconds"]
            if side == "olympus":
                last = result
        ours.append(times["olympus"])
        theirs.append(times["jax"])
        ratios.append(times["olympus"] / times["jax"])
    ratio = statistics.median(ratios)
    print(
        f"{last['ops']:,} equations; report + display bundle {statistics.median(ours):.2f} s, "
        f"JAX trace+lower+compile {statistics.median(theirs):.2f} s: ratio {ratio:.2f} "
        f"(rounds: {', '.join(f'{r:.2f}' for r in ratios)}; budget <= {BUDGET}) "
        f"{'ok' if ratio <= BUDGET else 'OVER BUDGET'}"
    )
    size = last["size"]
    verdict = "ok" if size <= MAX_OUTPUT_BYTES else "OVER BUDGET"
    print(
        f"saved output {size / 1e6:.2f} MB (uncapped it would be {last['full'] / 1e6:.1f} MB; "
        f"budget <= {MAX_OUTPUT_BYTES / 1e6:g} MB) {verdict}"
    )
    note = last["note"]
    print(f"note shown: {note[:120] + '...' if note else '(none)'}")
    results = Results(name_of(__file__))
    results.add(
        f"{EQUATIONS:,} equations: report + display bundle / JAX trace+lower+compile, "
        "each in a fresh process",
        ratio,
        "x",
        BUDGET,
    )
    results.add(
        f"{EQUATIONS:,} equations: saved output (display bundle, all forms)",
        size / 1e6,
        "MB",
        MAX_OUTPUT_BYTES / 1e6,
    )
    results.add("report + display bundle", statistics.median(ours), "s")
    results.add("JAX trace+lower+compile", statistics.median(theirs), "s")
    results.write(args.json)
    return 0 if ratio <= BUDGET and size <= MAX_OUTPUT_BYTES else 1


if __name__ == "__main__":
    sys.exit(main())
