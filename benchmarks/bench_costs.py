"""The costs stage (flops, bytes and peak memory by line; collectives): what it adds
to a report, next to one plain compile of the same program.

- On the 4-layer MLP of bench_stages.py and an attention block, the analyses add
  at most 0.3x of one compile (budget). What they add is the compile with XLA's
  buffer-assignment dumps over the plain compile (the peak is read from the dumps of
  the report's own compile, never from a second one), plus the stage's data made
  from it: every instruction costed and put down to its line, the buffers live at
  the peak read and put down to theirs, the collectives (stage_report.costs_data;
  the provenance model it reads is the report's, made with or without this stage).
  Each round lowers new functions (nothing cached) and alternates which of the two
  compiles goes first; the figure is the median over the rounds of (dumped compile -
  plain compile + data) / plain compile, each round's compiles side by side, as
  ``_timing.compare`` pairs its sides. The figure until 2026-11-25, the difference
  of the two series' medians, moved more from run to run: in twelve runs on a
  2-core machine, 0.14-0.31 on the MLP (standard deviation 0.047) against 0.18-0.24
  paired (0.017), and 0.12-0.27 (0.040) against 0.15-0.25 (0.033) on the attention
  block, the paired medians about 0.02 lower; a CI run read 0.35 on the attention
  block as its plain compile's median moved from 31 to 42 ms between runs.
- On the 50,000-equation program of bench_big_program.py, the stage's data takes at
  most 2 s (budget), in a child process of its own (a fresh process, as a user's
  first report of a big program).

Run: python benchmarks/bench_costs.py [--short] [--json PATH]
(--short: one run of the big program instead of 3; the small programs keep their 21 rounds)
"""

import json
import os
import statistics
import subprocess
import sys
import time

import numpy as np

import olympus
import olympus.numpy as jnp
from _results import Results, name_of, parser
from bench_stages import BATCH, LAYERS, WIDTH, make_mlp

BUDGET_SMALL, BUDGET_BIG = 0.3, 2.0
EQUATIONS = 50_000


def make_attention():
    def attention(x, wq, wk, wv, wo):
        q, k, v = x @ wq, x @ wk, x @ wv
        scores = q @ k.T / np.sqrt(q.shape[-1])
        weights = jnp.exp(scores - scores.max(axis=-1, keepdims=True))
        weights = weights / weights.sum(axis=-1, keepdims=True)
        return (weights @ v) @ wo

    return attention


def programs():
    rng = np.random.default_rng(0)
    f32 = lambda *s: rng.standard_normal(s).astype(np.float32)  # noqa: E731
    params = [(f32(WIDTH, WIDTH), f32(WIDTH)) for _ in range(LAYERS)]
    return {
        f"{LAYERS}-layer MLP": (make_mlp, (params, f32(BATCH, WIDTH))),
        "attention block": (
            make_attention,
            (f32(256, 128),) + tuple(f32(128, 128) for _ in range(4)),
        ),
    }


def small(rounds: int) -> dict[str, tuple[float, float, float, float]]:
    """Per program: median plain compile, median dumped compile, median data (s), and
    the median of the rounds' (dumped - plain + data) / plain."""
    from olympus.dumps import DumpNeeds, compile_dumped
    from olympus_jupyter.report.stage_report import costs_data
    from olympus_jupyter.staging.runner import StagedRun

    out = {}
    for name, (make, args) in programs().items():
        olympus.jit(make()).trace(*args).lower().compile()  # warm up
        plain, dumped, data = [], [], []
        for r in range(rounds):
            lowered = olympus.jit(make()).trace(*args).lower()
            again = olympus.jit(make()).trace(*args).lower()
            for side in ("plain", "dumped") if r % 2 else ("dumped", "plain"):
                start = time.perf_counter()
                if side == "plain":
                    lowered.compile()
                    plain.append(time.perf_counter() - start)
                else:
                    compiled, dump = compile_dumped(again, DumpNeeds(peak=True))
                    dumped.append(time.perf_counter() - start)
            model = olympus.provenance.build(compiled)  # the report's, made anyway
            run = StagedRun(name, lowered=again, compiled=compiled, dumped=dump)
            start = time.perf_counter()
            made = costs_data(run, model)
            data.append(time.perf_counter() - start)
            assert made["peak"] is not None and made["lines"], made["unavailable"]
        added = [(d - p + x) / p for d, p, x in zip(dumped, plain, data)]
        out[name] = (
            statistics.median(plain),
            statistics.median(dumped),
            statistics.median(data),
            statistics.median(added),
        )
    return out


def child() -> None:
    """The 50,000-equation program's stage data, timed in this (fresh) process."""
    from bench_big_program import make_program
    from olympus_jupyter.report.stage_report import costs_data
    from olympus_jupyter.staging import run_stages

    x = np.ones((8,), np.float32)
    run = run_stages(make_program(100, 0), (x,), read_peak=True)  # warm up
    costs_data(run, olympus.provenance.build(run.compiled))
    run = run_stages(make_program(EQUATIONS, 1), (x,), read_peak=True)
    model = olympus.provenance.build(run.compiled)
    start = time.perf_counter()
    made = costs_data(run, model)
    seconds = time.perf_counter() - start
    print(
        json.dumps(
            {"seconds": seconds, "lines": len(made["lines"]), "peak": made["peak"] is not None}
        )
    )


def big(rounds: int) -> list[float]:
    times = []
    for _ in range(rounds):
        proc = subprocess.run(
            [sys.executable, __file__, "--child"],
            capture_output=True,
            text=True,
            timeout=600,
            cwd=os.path.dirname(__file__),
        )
        if proc.returncode:
            raise SystemExit(f"the 50,000-equation child failed:\n{proc.stderr[-3000:]}")
        found = json.loads(proc.stdout.strip().splitlines()[-1])
        assert found["peak"] and found["lines"], found
        times.append(found["seconds"])
    return times


def main() -> int:
    if "--child" in sys.argv:
        child()
        return 0
    args = parser(
        __doc__,
        "one run of the big program instead of 3 (the small "
        "programs' 21 rounds take seconds: they are not cut)",
    ).parse_args()
    results = Results(name_of(__file__))
    for name, (plain, dumped, data, added) in small(21).items():
        print(
            f"{name}: plain compile {plain * 1e3:.1f} ms, with dumps {dumped * 1e3:.1f} ms, "
            f"the stage's data {data * 1e3:.1f} ms (medians): adds {added:.2f}x of a compile "
            f"(median of the rounds' own) "
            f"(budget <= {BUDGET_SMALL}) {'ok' if added <= BUDGET_SMALL else 'OVER BUDGET'}"
        )
        results.add(
            f"costs stage (dumped compile over plain, and its data) / one plain compile, {name}",
            added,
            "x",
            budget=BUDGET_SMALL,
        )
    times = big(1 if args.short else 3)
    seconds = statistics.median(times)
    print(
        f"{EQUATIONS:,}-equation program: the stage's data in {seconds:.2f} s "
        f"(runs: {', '.join(f'{t:.2f}' for t in times)}; budget <= {BUDGET_BIG} s) "
        f"{'ok' if seconds <= BUDGET_BIG else 'OVER BUDGET'}"
    )
    results.add(
        f"costs stage's data, {EQUATIONS:,}-equation program", seconds, "s", budget=BUDGET_BIG
    )
    results.write(args.json)
    return 0 if results.ok else 1


if __name__ == "__main__":
    sys.exit(main())
