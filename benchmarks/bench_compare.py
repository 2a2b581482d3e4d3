"""compare() of two reports of an MLP at 50, 100, 200 and 400 layers (budget: <= 1 s
at 200 layers, and growth about linear: 400 layers <= 2.5x the time of 200).

The two reports differ in the batch size, so every stage changes on most lines:
the hard case for a line diff. Timed: the diff summary and the static HTML form.

Run: python benchmarks/bench_compare.py [--short] [--json PATH]
(--short: 50, 200 and 400 layers, 3 repeats each instead of 5)
"""
import statistics
import sys
import time

import numpy as np

import olympus.numpy as jnp
from olympus_jupyter import compare, inspect

from _results import Results, name_of, parser

BUDGET_S = 1.0
GROWTH = 2.5


def mlp(params, x):
    for w, b in params:
        x = jnp.tanh(x @ w + b)
    return x


def time_compare(layers: int, repeats: int) -> float:
    params = [(np.ones((32, 32), np.float32), np.ones(32, np.float32))] * layers
    a = inspect(mlp, params, np.ones((4, 32), np.float32), cache=None)
    b = inspect(mlp, params, np.ones((8, 32), np.float32), cache=None)
    times = []
    for _ in range(repeats):
        start = time.perf_counter()
        diff = compare(a, b)
        diff.text()
        diff.html()
        times.append(time.perf_counter() - start)
    return statistics.median(times)


def main() -> int:
    short_help = "50, 200 and 400 layers (no 100), 3 repeats each instead of 5"
    args = parser(__doc__, short_help).parse_args()
    short = args.short
    sizes = (50, 200, 400) if short else (50, 100, 200, 400)
    figures = {n: time_compare(n, 3 if short else 5) for n in sizes}
    for n, t in figures.items():
        print(f"compare(), {n}-layer MLP: {t * 1e3:.1f} ms")
    growth = figures[400] / figures[200]
    ok = figures[200] <= BUDGET_S and growth <= GROWTH
    print(f"200 layers: {figures[200]:.3f} s (budget <= {BUDGET_S} s); 400/200: "
          f"{growth:.2f}x (budget <= {GROWTH}x) {'ok' if ok else 'OVER BUDGET'}")
    results = Results(name_of(__file__))
    results.add("compare() of two 200-layer MLP reports, summary + static HTML", figures[200], "s",
                BUDGET_S)
    results.add("compare() growth, 400 layers / 200 layers", growth, "x", GROWTH)
    for n, t in figures.items():
        if n != 200:
            results.add(f"compare(), {n} layers", t * 1e3, "ms")
    results.write(args.json)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
