"""The full report of a 24-layer MLP vs JAX producing the same stage texts.

Budgets: building the report (all stages, provenance, analyses, and its display
bundle: JSON, HTML, text) <= 1.5x the time JAX takes to trace, lower and compile
the function and print its olympuspr/jaxpr, StableHLO (with debug info), HLO and
compiled HLO; the JSON form <= 2x the raw stage texts; re-inspecting an unchanged
function and signature (cache hit, bundle included) <= 10% of the first time.

Run: python benchmarks/bench_report.py [--short] [--json PATH]
(--short: the same 15 rounds: the report's budget has the least margin)
"""

import json
import statistics
import sys
import time

import jax
import jax.numpy as jnp
import numpy as np

from olympus_jupyter import ReportCache, inspect
from olympus_jupyter.highlight.render import _highlight

from _results import Results, name_of, parser

LAYERS, WIDTH, BATCH = 24, 512, 8
ROUNDS = 15
BUDGET_REPORT, BUDGET_JSON, BUDGET_REINSPECT = 1.5, 2.0, 0.10


def make_mlp():
    def mlp(ws, x):
        for w in ws:
            x = jnp.tanh(x @ w)
        return x

    return mlp


def jax_texts(f, ws, x):
    traced = jax.jit(f).trace(ws, x)
    lowered = traced.lower()
    compiled = lowered.compile()
    return [
        str(traced.jaxpr),
        lowered.as_text(debug_info=True),
        lowered.as_text("hlo"),
        compiled.as_text(),
    ]


def olympus_report(f, ws, x, cache):
    report = inspect(f, ws, x, cache=cache)
    return report, report._repr_mimebundle_()


def timed(fn, *args):
    """``fn(*args)`` and the seconds it took."""
    start = time.perf_counter()
    out = fn(*args)
    return out, time.perf_counter() - start


def main() -> int:
    args = parser(__doc__, f"the same {ROUNDS} rounds (little margin)").parse_args()
    ws = [jax.ShapeDtypeStruct((WIDTH, WIDTH), np.float32)] * LAYERS
    x = jax.ShapeDtypeStruct((BATCH, WIDTH), np.float32)
    jax_texts(make_mlp(), ws, x), olympus_report(make_mlp(), ws, x, None)  # warm up
    jax_t, ours_t, again_t, ratios = [], [], [], []
    for i in range(ROUNDS):
        f_jax, f_ours = make_mlp(), make_mlp()
        cache = ReportCache()
        _highlight.cache_clear()  # each round highlights its texts anew
        if i % 2:  # alternate which goes first, so drift biases neither
            texts, t_jax = timed(jax_texts, f_jax, ws, x)
        (report, bundle), t_ours = timed(olympus_report, f_ours, ws, x, cache)
        if not i % 2:
            texts, t_jax = timed(jax_texts, f_jax, ws, x)
        (again, _), t_again = timed(olympus_report, f_ours, ws, x, cache)
        assert again is report and len(texts) == 4
        jax_t.append(t_jax)
        ours_t.append(t_ours)
        again_t.append(t_again)
        ratios.append(t_ours / t_jax)
    raw = sum(len(report.stage_text(s)) for s in ("olympuspr", "stablehlo", "hlo", "compiled"))
    json_size = len(json.dumps(bundle["application/vnd.olympus.stages+json"]))
    ratio = statistics.median(ratios)
    reinspect = statistics.median(again_t) / statistics.median(ours_t)
    json_ratio = json_size / raw
    print(
        f"{LAYERS}-layer MLP (width {WIDTH}): JAX texts {statistics.median(jax_t) * 1e3:.1f} ms, "
        f"Olympus report {statistics.median(ours_t) * 1e3:.1f} ms"
    )
    print(
        f"full report vs JAX texts: ratio {ratio:.2f} (budget <= {BUDGET_REPORT})"
        f" {'ok' if ratio <= BUDGET_REPORT else 'OVER BUDGET'}"
    )
    print(
        f"JSON {json_size:,} bytes for {raw:,} bytes of stage texts: {json_ratio:.2f}x "
        f"(budget <= {BUDGET_JSON}) {'ok' if json_ratio <= BUDGET_JSON else 'OVER BUDGET'}"
    )
    print(
        f"re-inspecting: {statistics.median(again_t) * 1e3:.2f} ms = {reinspect:.1%} of the first "
        f"(budget <= {BUDGET_REINSPECT:.0%}) {'ok' if reinspect <= BUDGET_REINSPECT else 'OVER BUDGET'}"
    )
    ok = ratio <= BUDGET_REPORT and json_ratio <= BUDGET_JSON and reinspect <= BUDGET_REINSPECT
    print(f"html {len(bundle['text/html']):,} bytes")
    results = Results(name_of(__file__))
    results.add(
        f"full report of a {LAYERS}-layer MLP ({WIDTH} wide), bundle included / JAX "
        "producing the four stage texts",
        ratio,
        "x",
        BUDGET_REPORT,
    )
    results.add("JSON form / raw stage texts", json_ratio, "x", BUDGET_JSON)
    results.add(
        "re-inspecting the same function and signature / the first time",
        reinspect * 100,
        "%",
        BUDGET_REINSPECT * 100,
    )
    results.add("Olympus report", statistics.median(ours_t) * 1e3, "ms")
    results.add("JAX stage texts", statistics.median(jax_t) * 1e3, "ms")
    results.add("re-inspecting", statistics.median(again_t) * 1e3, "ms")
    results.write(args.json)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
