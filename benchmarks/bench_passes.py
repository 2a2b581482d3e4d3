"""The passes stage on the 4-layer MLP of bench_stages.py: XLA's pass pipeline read
from a per-pass dump (one more compile) vs one plain compile (budget <= 3x), and the
stage's data on top of it (the pass table, each step's module as a delta, and the
journeys of every source line through the passes: budget <= 0.5x of that compile);
no dump folder is left behind (where a report makes them: `_dump_folders.py`).

Each round lowers a new function (nothing cached) and times, in turn: its plain
compile, the pass pipeline (the compile with dumps, and reading them), and the
journeys of the function's lines; rounds alternate which of the two compiles goes
first.

Run: python benchmarks/bench_passes.py [--short] [--json PATH]
"""

import inspect as pyinspect
import statistics
import sys
import time

import numpy as np

import olympus
from _dump_folders import dump_folders
from _results import Results, name_of, parser
from bench_stages import BATCH, LAYERS, WIDTH, make_mlp
from olympus.passes import pass_pipeline
from olympus_jupyter.report.passes_view import passes_json

BUDGET_PIPELINE, BUDGET_JOURNEYS = 3.0, 0.5


def main() -> int:
    args = parser(__doc__, "5 rounds instead of 11").parse_args()
    rounds = 5 if args.short else 11
    rng = np.random.default_rng(0)
    params = [
        (rng.standard_normal((WIDTH, WIDTH), np.float32), rng.standard_normal(WIDTH, np.float32))
        for _ in range(LAYERS)
    ]
    x = rng.standard_normal((BATCH, WIDTH), np.float32)
    fun = make_mlp()
    path = pyinspect.getsourcefile(fun)
    source, first = pyinspect.getsourcelines(fun)
    lines = range(first, first + len(source))
    olympus.jit(make_mlp()).trace(params, x).lower().compile()  # warm up
    before = dump_folders()  # each pipeline removes its own once read
    compiles, pipelines, journey_times = [], [], []
    for r in range(rounds):
        lowered = olympus.jit(make_mlp()).trace(params, x).lower()
        again = olympus.jit(make_mlp()).trace(params, x).lower()
        order = ("plain", "passes") if r % 2 else ("passes", "plain")
        for side in order:
            start = time.perf_counter()
            if side == "plain":
                lowered.compile()
                compiles.append(time.perf_counter() - start)
            else:
                pipeline = pass_pipeline(again)
                pipelines.append(time.perf_counter() - start)
        start = time.perf_counter()
        data = passes_json(pipeline, [path])
        journey_times.append(time.perf_counter() - start)
    left = dump_folders() - before
    compile_s = statistics.median(compiles)
    pipeline_ratio = statistics.median(pipelines) / compile_s
    journey_ratio = statistics.median(journey_times) / compile_s
    found = [j for j in data["journeys"] if j["line"] in lines]
    events = sum(len(j["events"]) for j in found)
    print(
        f"{LAYERS}-layer MLP ({WIDTH} wide): plain compile {compile_s * 1e3:.1f} ms; pass "
        f"pipeline {statistics.median(pipelines) * 1e3:.1f} ms ({len(pipeline.steps)} steps): "
        f"ratio {pipeline_ratio:.2f} (budget <= {BUDGET_PIPELINE}) "
        f"{'ok' if pipeline_ratio <= BUDGET_PIPELINE else 'OVER BUDGET'}"
    )
    print(
        f"the stage's data: pass table of {len(data['rows'])} rows, deltas, journeys of "
        f"{len(found)} lines ({events} events): "
        f"{statistics.median(journey_times) * 1e3:.1f} ms = {journey_ratio:.2f}x the compile "
        f"(budget <= {BUDGET_JOURNEYS}) {'ok' if journey_ratio <= BUDGET_JOURNEYS else 'OVER BUDGET'}"
    )
    print(f"dump folders left behind: {len(left)}")
    results = Results(name_of(__file__))
    results.add(
        f"pass pipeline (compile with per-pass dumps, read) / one plain compile, "
        f"{LAYERS}-layer MLP",
        pipeline_ratio,
        "x",
        budget=BUDGET_PIPELINE,
    )
    results.add(
        "the stage's data (pass table, module deltas, journeys of every line) / one plain compile",
        journey_ratio,
        "x",
        budget=BUDGET_JOURNEYS,
    )
    results.add("dump folders left behind", len(left), "", budget=0)
    results.write(args.json)
    return 0 if results.ok else 1


if __name__ == "__main__":
    sys.exit(main())
