"""A program of 50,000 equations: the report (made as the magic makes it, display
bundle included) vs JAX's own trace, lower and compile of it (budget <= 2x), and
the size of the output a notebook saves (budget <= 5 MB, the cap the report says
it applied).

Each side gets a new function each round (JAX caches what it traced and compiled
for a function it has seen), and the sides alternate which goes first.

Run: python benchmarks/bench_big_program.py [--short]   (--short: one round instead of three)

The budget is for 50,000 equations: below that XLA's compile is cheap next to the
work of reading every op, so the ratio is not comparable.
"""
import argparse
import statistics
import sys
import time

import jax
import numpy as np

import olympus.numpy as jnp
from olympus_jupyter import inspect
from olympus_jupyter.report.data import MEDIA_TYPE
from olympus_jupyter.report.output_cap import MAX_OUTPUT_BYTES, output_size

BUDGET = 2.0


def make_program(equations: int, k: int):
    """``equations`` elementwise equations in a chain (two per step), a new function
    each time."""
    def chain(x):
        for _ in range(equations // 2):
            x = x * 1.0001 + k
        return x
    return chain


def jax_side(equations, k, x):
    return jax.jit(make_program(equations, k)).trace(x).lower().compile()


def olympus_side(equations, k, x):
    report = inspect(make_program(equations, k), x, cache=None)
    return report, report._repr_mimebundle_()


def main() -> int:
    parser = argparse.ArgumentParser()
    parser.add_argument("--short", action="store_true", help="one round instead of three")
    args = parser.parse_args()
    equations, rounds = 50_000, 1 if args.short else 3
    x = np.ones((8,), np.float32)
    ours, theirs, ratios, size, report = [], [], [], 0, None
    for r in range(rounds):
        order = ("jax", "olympus") if r % 2 else ("olympus", "jax")
        times = {}
        for side in order:
            start = time.perf_counter()
            if side == "jax":
                jax_side(equations, 2 * r, x)
            else:
                report, bundle = olympus_side(equations, 2 * r + 1, x)
                size = output_size(bundle)
            times[side] = time.perf_counter() - start
        ours.append(times["olympus"])
        theirs.append(times["jax"])
        ratios.append(times["olympus"] / times["jax"])
    ratio = statistics.median(ratios)
    ops = len(report.provenance.stages["olympuspr"].ops)
    print(f"{ops:,} equations; report + display bundle {statistics.median(ours):.2f} s, "
          f"JAX trace+lower+compile {statistics.median(theirs):.2f} s: ratio {ratio:.2f} "
          f"(rounds: {', '.join(f'{r:.2f}' for r in ratios)}; budget <= {BUDGET}) "
          f"{'ok' if ratio <= BUDGET else 'OVER BUDGET'}")
    full = output_size(report.forms())
    notes = report._repr_mimebundle_()[MEDIA_TYPE].get("notes", [])
    verdict = "ok" if size <= MAX_OUTPUT_BYTES else "OVER BUDGET"
    print(f"saved output {size / 1e6:.2f} MB (uncapped it would be {full / 1e6:.1f} MB; "
          f"budget <= {MAX_OUTPUT_BYTES / 1e6:g} MB) {verdict}")
    print(f"note shown: {notes[-1][:120] + '...' if notes else '(none)'}")
    return 0 if ratio <= BUDGET and size <= MAX_OUTPUT_BYTES else 1


if __name__ == "__main__":
    sys.exit(main())
