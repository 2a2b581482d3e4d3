"""The report with the passes and costs stages vs a plain trace+lower+compile (issue 33).

Budget: ``inspect(f, *args, passes=True, costs=True)`` with its display bundle (JSON,
HTML, text: what a notebook waits for) takes at most 2x the time JAX takes to
trace, lower and compile the same function (``jax.jit(f).trace(...).lower().compile()``),
on the 4-layer MLP of bench_stages.py and on an 8-layer transformer (bench_memory.py's,
its short size in both modes). Both stages read one dumped compile: the report's own,
made with XLA's per-pass dumps and buffer assignment together (olympus.dumps), so the
report compiles once. Also: no dump folder is left behind (budget 0).

Each round makes new functions (nothing cached) and times both sides, alternating
which goes first; the figure is the median of the rounds' ratios (``_timing.compare``).

Run: python benchmarks/bench_passes_costs.py [--short] [--json PATH]
(--short: 5 rounds instead of 11)
"""

import statistics
import sys
import time

import jax
import numpy as np

from _dump_folders import dump_folders
from _results import Results, name_of, parser
from _timing import compare
from bench_memory import BIG, init_params, init_tokens, transformer
from bench_stages import BATCH, LAYERS, WIDTH, make_mlp
from olympus_jupyter import inspect

BUDGET, BUDGET_LEFT = 2.0, 0


def make_transformer():
    def lm(params, tokens):
        return transformer(params, tokens)

    return lm


def programs():
    rng = np.random.default_rng(0)
    params = [
        (rng.standard_normal((WIDTH, WIDTH), np.float32), rng.standard_normal(WIDTH, np.float32))
        for _ in range(LAYERS)
    ]
    x = rng.standard_normal((BATCH, WIDTH), np.float32)
    cfg = BIG["short"]
    return {
        f"{LAYERS}-layer MLP ({WIDTH} wide)": (make_mlp, (params, x)),
        f"{cfg['layers']}-layer transformer (d_model {cfg['d_model']}, seq {cfg['seq']})": (
            make_transformer,
            (init_params(cfg), init_tokens(cfg)),
        ),
    }


def report_with_bundle(make, args, compiles: list[float]):
    """The report and its bundle; ``compiles`` gets the seconds of its compile."""
    report = inspect(make(), *args, passes=True, costs=True, cache=False)
    assert report.failure is None and report.passes and report.costs, report.failure
    compiles.append(report.timings["compile"])
    return report._repr_mimebundle_()


def plain(make, args, compiles: list[float]):
    """JAX's trace+lower+compile; ``compiles`` gets the seconds of the compile."""
    lowered = jax.jit(make()).trace(*args).lower()
    start = time.perf_counter()
    compiled = lowered.compile()
    compiles.append(time.perf_counter() - start)
    return compiled


def main() -> int:
    args = parser(__doc__, "5 rounds instead of 11").parse_args()
    rounds = 5 if args.short else 11
    results = Results(name_of(__file__))
    before = dump_folders()  # a report's own are removed once read
    for name, (make, fargs) in programs().items():
        ours, theirs = [], []  # each side's compile, round by round
        report_with_bundle(make, fargs, []), plain(make, fargs, [])  # warm up
        r = compare(
            lambda: report_with_bundle(make, fargs, ours),
            lambda: plain(make, fargs, theirs),
            rounds=rounds,
        )
        dumped = statistics.median(o / t for o, t in zip(ours, theirs))
        print(
            f"{name}: report with passes and costs, bundle included, "
            f"{r.olympus_s * 1e3:.0f} ms; JAX trace+lower+compile {r.jax_s * 1e3:.0f} ms; "
            f"ratio {r.ratio:.2f} (budget <= {BUDGET}) "
            f"{'ok' if r.ratio <= BUDGET else 'OVER BUDGET'}; its one compile, "
            f"with both dumps, {dumped:.2f}x JAX's compile"
        )
        results.add(
            f"report with passes and costs, bundle included / JAX trace+lower+compile, {name}",
            r.ratio,
            "x",
            budget=BUDGET,
        )
        results.add(
            f"the report's one compile, with both dumps / JAX's compile, {name}",
            dumped,
            "x",
        )
        results.add(f"report with passes and costs, {name}", r.olympus_s * 1e3, "ms")
        results.add(f"JAX trace+lower+compile, {name}", r.jax_s * 1e3, "ms")
    left = dump_folders() - before
    print(f"dump folders left behind: {len(left)}")
    results.add("dump folders left behind", len(left), "", budget=BUDGET_LEFT)
    results.write(args.json)
    return 0 if results.ok else 1


if __name__ == "__main__":
    sys.exit(main())
