"""trace -> lower -> compile of a 4-layer MLP: Olympus vs JAX (budget <= 1.05x).

Each round stages a fresh function object so neither side hits a trace cache.
Run: python benchmarks/bench_stages.py [--short] [--json PATH]
(--short: the same 31 rounds: this budget has the least margin, fewer rounds would be noise)
"""

import sys

import jax
import jax.numpy as jnp
import numpy as np

import olympus
from _results import Results, name_of, parser
from _timing import compare

BUDGET = 1.05
WIDTH, LAYERS, BATCH = 256, 4, 32


def make_mlp():
    def mlp(params, x):
        for w, b in params:
            x = jnp.tanh(x @ w + b)
        return jnp.mean(x**2)

    return mlp


def main() -> int:
    args = parser(__doc__, "the same 31 rounds (the budget has little margin)").parse_args()
    rng = np.random.default_rng(0)
    params = [
        (rng.standard_normal((WIDTH, WIDTH), np.float32), rng.standard_normal(WIDTH, np.float32))
        for _ in range(LAYERS)
    ]
    x = rng.standard_normal((BATCH, WIDTH), np.float32)
    ours = lambda: olympus.jit(make_mlp()).trace(params, x).lower().compile()  # noqa: E731 - timed alike
    theirs = lambda: jax.jit(make_mlp()).trace(params, x).lower().compile()  # noqa: E731 - timed alike
    for _ in range(3):
        ours(), theirs()
    result = compare(ours, theirs, rounds=31, number=3)
    print(result.line(f"trace->lower->compile, {LAYERS}-layer MLP", BUDGET))
    results = Results(name_of(__file__))
    results.add(
        f"trace -> lower -> compile, {LAYERS}-layer MLP ({WIDTH} wide): Olympus / JAX",
        result.ratio,
        "x",
        BUDGET,
    )
    results.add("Olympus trace -> lower -> compile", result.olympus_s * 1e3, "ms")
    results.add("JAX trace -> lower -> compile", result.jax_s * 1e3, "ms")
    results.write(args.json)
    return 0 if result.ratio <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
