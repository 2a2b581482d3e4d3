"""Benchmark: building the provenance model vs JAX lowering and compiling the same function.

Budget (docs/DESIGN "Budgets"): the provenance model of a 24-layer MLP (width
512, tanh), built from already-made Traced/Lowered/Compiled stages, takes at
most 0.5x the time JAX takes to lower and compile it
(``traced.lower().compile()`` for a ``jax.jit(f).trace(x)`` made beforehand). Both are measured in this run, as
medians over fresh function objects (so that no cache answers).

    python benchmarks/bench_provenance.py [--repeats N] [--layers L] [--width W]
                                          [--short] [--json PATH]

``--short``: 5 repeats instead of 7 (unless ``--repeats`` says otherwise).

Prints both figures and their ratio; exits with status 1 when over budget.
"""

from __future__ import annotations

import statistics
import sys
import time

import _results

BUDGET = 0.5


def make_mlp(layers: int):
    """A fresh MLP function object (a new closure each call: nothing is cached)."""
    import jax.numpy as jnp

    def mlp(x, ws):
        for w in ws:
            x = jnp.tanh(x @ w)
        return x

    return mlp


def main(argv=None) -> int:
    parser = _results.parser(__doc__, "5 repeats instead of 7 (unless --repeats is given)")
    parser.add_argument("--repeats", type=int, default=None, help="7 (5 with --short)")
    parser.add_argument("--layers", type=int, default=24)
    parser.add_argument("--width", type=int, default=512)
    parser.add_argument("--batch", type=int, default=8)
    opts = parser.parse_args(argv)
    if opts.repeats is None:
        opts.repeats = 5 if opts.short else 7

    import jax
    import numpy as np

    import olympus
    from olympus import provenance

    x = jax.ShapeDtypeStruct((opts.batch, opts.width), np.float32)
    ws = [jax.ShapeDtypeStruct((opts.width, opts.width), np.float32)] * opts.layers

    # Warm up both paths once (imports, first-use caches of JAX and MLIR).
    jax.jit(make_mlp(opts.layers)).trace(x, ws).lower().compile()
    provenance.build(olympus.jit(make_mlp(opts.layers)).trace(x, ws).lower().compile())

    jax_times, build_times = [], []
    model = None
    for _ in range(opts.repeats):
        traced = jax.jit(make_mlp(opts.layers)).trace(x, ws)
        t0 = time.perf_counter()
        traced.lower().compile()
        jax_times.append(time.perf_counter() - t0)

        compiled = olympus.jit(make_mlp(opts.layers)).trace(x, ws).lower().compile()
        t0 = time.perf_counter()
        model = provenance.build(compiled)
        build_times.append(time.perf_counter() - t0)

    jax_median = statistics.median(jax_times)
    build_median = statistics.median(build_times)
    ratio = build_median / jax_median
    counts = ", ".join(f"{s} {len(model.stages[s].ops)}" for s in model.stage_names)
    size = len(model.to_json_str())
    texts = sum(len(model.stages[s].text) for s in model.stage_names)
    print(f"MLP: {opts.layers} layers, width {opts.width}, batch {opts.batch}; ops: {counts}")
    print(
        f"JAX lower+compile:       median {jax_median * 1e3:8.2f} ms "
        f"(min {min(jax_times) * 1e3:.2f}, {opts.repeats} runs)"
    )
    print(
        f"provenance.build:        median {build_median * 1e3:8.2f} ms "
        f"(min {min(build_times) * 1e3:.2f}, {opts.repeats} runs)"
    )
    print(f"JSON: {size} bytes for {texts} bytes of stage text")
    verdict = "OK" if ratio <= BUDGET else "OVER BUDGET"
    print(f"ratio build / JAX: {ratio:.3f} (budget {BUDGET}) {verdict}")
    results = _results.Results(_results.name_of(__file__))
    results.add(
        f"provenance model of a {opts.layers}-layer MLP ({opts.width} wide), from made "
        "stages / JAX lower+compile",
        ratio,
        "x",
        BUDGET,
    )
    results.add("provenance.build", build_median * 1e3, "ms")
    results.add("JAX lower+compile", jax_median * 1e3, "ms")
    results.write(opts.json)
    return 0 if ratio <= BUDGET else 1


if __name__ == "__main__":
    sys.exit(main())
