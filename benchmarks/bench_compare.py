"""compare() of two reports of an MLP at 50, 100, 200 and 400 layers (budget: <= 1 s
at 200 layers, and growth about linear: 400 layers <= 2.5x the time of 200).

The two reports differ in the batch size, so every stage changes on most lines:
the hard case for a line diff. Timed: the diff summary and the static HTML form.

The growth is timed as the JAX comparisons are (``_timing.compare``): 200 and 400
layers in turn, round after round, alternating which goes first, and the median of
the rounds' ratios. Timed as two series, one after the other (until 2026-11-25),
it read 2.18 to 2.58 in six runs on a 2-core machine, three of them over budget, and
1.45 to 3.35 in one CI run's three: there a series of one size could run 1.5x
slower than the same series a minute later. In turns, the same six runs read 2.07
to 2.20.

Run: python benchmarks/bench_compare.py [--short] [--json PATH]
(--short: 50, 200 and 400 layers, 9 rounds and 3 repeats instead of 15 and 5)
"""

import statistics
import sys
import time

import numpy as np

import olympus.numpy as jnp
from olympus_jupyter import compare, inspect

from _results import Results, name_of, parser
from _timing import compare as in_turns

BUDGET_S = 1.0
GROWTH = 2.5


def mlp(params, x):
    for w, b in params:
        x = jnp.tanh(x @ w + b)
    return x


def comparing(layers: int):
    """A function that compares two reports of the ``layers``-layer MLP (made once
    here) and makes the diff's summary and static HTML."""
    params = [(np.ones((32, 32), np.float32), np.ones(32, np.float32))] * layers
    a = inspect(mlp, params, np.ones((4, 32), np.float32), cache=None)
    b = inspect(mlp, params, np.ones((8, 32), np.float32), cache=None)

    def run():
        diff = compare(a, b)
        diff.text()
        diff.html()

    return run


def time_compare(layers: int, repeats: int) -> float:
    """Median seconds of :func:`comparing`'s work at ``layers`` layers."""
    run = comparing(layers)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        run()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    short_help = "50, 200 and 400 layers (no 100), 9 rounds and 3 repeats instead of 15 and 5"
    args = parser(__doc__, short_help).parse_args()
    short = args.short
    figures = {n: time_compare(n, 3 if short else 5) for n in ((50,) if short else (50, 100))}
    turns = in_turns(comparing(400), comparing(200), rounds=9 if short else 15)
    # _timing.compare(first, second): the first side's median in olympus_s, the second's in jax_s.
    figures[200], figures[400] = turns.jax_s, turns.olympus_s
    growth = turns.ratio
    for n, t in sorted(figures.items()):
        print(f"compare(), {n}-layer MLP: {t * 1e3:.1f} ms")
    ok = figures[200] <= BUDGET_S and growth <= GROWTH
    print(
        f"200 layers: {figures[200]:.3f} s (budget <= {BUDGET_S} s); 400/200: "
        f"{growth:.2f}x (budget <= {GROWTH}x) {'ok' if ok else 'OVER BUDGET'}"
    )
    results = Results(name_of(__file__))
    results.add(
        "compare() of two 200-layer MLP reports, summary + static HTML", figures[200], "s", BUDGET_S
    )
    results.add("compare() growth, 400 layers / 200 layers", growth, "x", GROWTH)
    for n, t in figures.items():
        if n != 200:
            results.add(f"compare(), {n} layers", t * 1e3, "ms")
    results.write(args.json)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
