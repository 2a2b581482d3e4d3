"""Checking a report bundle on the way in vs building the report (budget <= 5%).

The report of a 24-layer MLP (512 wide) is built from scratch (trace, lower,
compile, provenance, all forms); then its JSON bundle is validated against the schema, as
``StageReport.from_json`` does for a bundle from a saved notebook or a file.

Run: python benchmarks/bench_validation.py [--short] [--json PATH]   (--short: the same 5 rounds)
"""

import statistics
import sys
import time

import numpy as np

import olympus.numpy as jnp
from olympus_jupyter import inspect
from olympus_jupyter.report.validate import check_bundle

from _results import Results, name_of, parser

BUDGET = 0.05
LAYERS, WIDTH = 24, 512


def make_mlp(k):
    """A new function each round, so that every report is built from scratch (JAX
    caches what it traced and compiled for a function it has seen)."""

    def mlp(params, x):
        for w, b in params:
            x = jnp.tanh(x @ w + b)
        return x * k

    return mlp


def main() -> int:
    args = parser(__doc__, "the same (5 rounds are short already)").parse_args()
    params = [
        (np.ones((WIDTH, WIDTH), np.float32), np.ones(WIDTH, np.float32)) for _ in range(LAYERS)
    ]
    x = np.ones((8, WIDTH), np.float32)
    builds, checks = [], []
    for k in range(5):
        start = time.perf_counter()
        report = inspect(make_mlp(k + 1), params, x, cache=None)
        data = report.to_json()
        report.html()
        builds.append(time.perf_counter() - start)
        start = time.perf_counter()
        check_bundle(data)
        checks.append(time.perf_counter() - start)
    build, check = statistics.median(builds), statistics.median(checks)
    ratio = check / build
    print(
        f"bundle validation: {check * 1e3:.2f} ms vs building the report "
        f"{build * 1e3:.1f} ms: ratio {ratio:.3f} (budget <= {BUDGET}) "
        f"{'ok' if ratio <= BUDGET else 'OVER BUDGET'}"
    )
    results = Results(name_of(__file__))
    results.add(
        f"validating the bundle of a {LAYERS}-layer MLP report / building the report",
        ratio * 100,
        "%",
        BUDGET * 100,
    )
    results.add("bundle validation", check * 1e3, "ms")
    results.add("building the report", build * 1e3, "ms")
    results.write(args.json)
    return 0 if ratio <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
