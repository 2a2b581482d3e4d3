"""Calling a Compiled on tiny inputs: Olympus vs JAX (budget <= 1.10x).

Run: python benchmarks/bench_call.py [--short] [--json PATH]   (--short: 21 rounds instead of 41)
"""

import sys

import jax
import jax.numpy as jnp

import olympus
from _results import Results, name_of, parser
from _timing import compare

BUDGET = 1.10


def main() -> int:
    args = parser(__doc__, "21 rounds instead of 41 (same calls per round)").parse_args()

    def f(x, y):
        return 2 * x + y

    x, y = jnp.float32(3.0), jnp.float32(4.0)
    ours = olympus.jit(f).trace(x, y).lower().compile()
    theirs = jax.jit(f).trace(x, y).lower().compile()
    for _ in range(1000):  # warm both dispatch paths
        ours(x, y), theirs(x, y)
    result = compare(
        lambda: ours(x, y), lambda: theirs(x, y), rounds=21 if args.short else 41, number=5000
    )
    print(result.line("Compiled call, tiny inputs", BUDGET))
    results = Results(name_of(__file__))
    results.add("calling a Compiled, two f32 scalars: Olympus / JAX", result.ratio, "x", BUDGET)
    results.add("Olympus call", result.olympus_s * 1e6, "us")
    results.add("JAX call", result.jax_s * 1e6, "us")
    results.write(args.json)
    return 0 if result.ratio <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
