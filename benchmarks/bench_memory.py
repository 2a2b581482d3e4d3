"""Memory: a report's peak vs JAX compiling the same model, and RSS staying flat in a long session.

Budgets:

1. The peak RSS of the full report of an 8-layer transformer (what ``%olympus_lower``
   makes and displays: trace, lower, compile, provenance, analyses, and the
   JSON + HTML + text bundle) is at most 2x the peak of JAX compiling it
   (``jax.jit(f).lower(params, tokens).compile()``).
2. 200 inspections of distinct functions (new cells run one after another) leave
   RSS flat: after the 200th, at most 5 % above what it was after the 100th.
3. 200 edits of an argument's shape in one ``Inspector``: the same.

Each measurement runs in a child process of its own, so that each peak
(``ru_maxrss``) is that measurement's alone. Both children of (1) build the same
model and parameters; the report's child also imports ``olympus_jupyter``, and its
peak includes that import (its growth figure, from after imports and parameters,
does not). The current RSS of (2) and (3) is read from ``/proc/self/statm``
(``psutil`` elsewhere) after ``gc.collect()``.

``--short`` (for CI): a smaller transformer, still of 8 layers, and 40 inspections
and edits compared between the 20th and the 40th; the report cache and the
inspector's history then keep 8 entries instead of 32, so that both readings are
past those bounds (full mode uses the defaults).

When the edits leave RSS growing, the loop runs again with ``jax.clear_caches()``
after each edit: what grows then is Olympus's, what does not is JAX's own caches
(they keep what was made for every specialization of a function while the function
lives, and the inspector keeps its function alive).

Run: python benchmarks/bench_memory.py [--short] [--json PATH]
"""

from __future__ import annotations

import argparse
import contextlib
import gc
import json
import linecache
import os
import resource
import subprocess
import sys
import time

import numpy as np

import jax
import jax.numpy as jnp

from _results import Results, name_of, parser

PEAK_BUDGET = 2.0  # report's peak RSS / JAX compile's peak RSS
FLAT_BUDGET = 0.05  # RSS growth from the middle of a loop to its end

#: The transformer of (1): full and short.
BIG = {
    "full": dict(layers=8, d_model=256, d_ff=1024, seq=128, batch=4, vocab=1000),
    "short": dict(layers=8, d_model=128, d_ff=512, seq=64, batch=2, vocab=512),
}
#: The model the Inspector of (3) is opened on (tokens' batch size is what gets edited).
SMALL = dict(layers=2, d_model=64, d_ff=256, seq=32, batch=2, vocab=256)
#: Iterations of (2) and (3): RSS is compared after the middle one and the last one.
LOOPS = {"full": 200, "short": 40}
#: Entries kept by the report cache and the inspector's history (None: their defaults, 32).
BOUNDS = {"full": None, "short": 8}
HEAD_DIM = 32


# -- the model: a decoder-only transformer in plain jax.numpy --------------------------------


def init_params(cfg: dict, seed: int = 0) -> dict:
    """Parameters as a pytree of dicts (JAX arrays), scaled like a real initialization."""
    rng = np.random.default_rng(seed)
    d, ff = cfg["d_model"], cfg["d_ff"]

    def dense(n_in, n_out):
        return {
            "w": (rng.standard_normal((n_in, n_out)) / np.sqrt(n_in)).astype(np.float32),
            "b": np.zeros(n_out, np.float32),
        }

    def norm():
        return {"scale": np.ones(d, np.float32), "bias": np.zeros(d, np.float32)}

    params = {
        "embed": (rng.standard_normal((cfg["vocab"], d)) * 0.02).astype(np.float32),
        "pos": (rng.standard_normal((cfg["seq"], d)) * 0.02).astype(np.float32),
        "layers": [
            {
                "ln1": norm(),
                "qkv": dense(d, 3 * d),
                "proj": dense(d, d),
                "ln2": norm(),
                "up": dense(d, ff),
                "down": dense(ff, d),
            }
            for _ in range(cfg["layers"])
        ],
        "ln_f": norm(),
    }
    return jax.tree.map(jnp.asarray, params)


def init_tokens(cfg: dict, seed: int = 1):
    rng = np.random.default_rng(seed)
    return jnp.asarray(rng.integers(0, cfg["vocab"], (cfg["batch"], cfg["seq"]), np.int32))


def layer_norm(p, x, eps=1e-5):
    mean = x.mean(-1, keepdims=True)
    var = ((x - mean) ** 2).mean(-1, keepdims=True)
    return (x - mean) * jax.lax.rsqrt(var + eps) * p["scale"] + p["bias"]


def attention(p, x):
    batch, seq, d = x.shape
    heads = d // HEAD_DIM
    qkv = x @ p["qkv"]["w"] + p["qkv"]["b"]
    q, k, v = jnp.split(qkv, 3, axis=-1)
    q, k, v = (t.reshape(batch, seq, heads, HEAD_DIM).transpose(0, 2, 1, 3) for t in (q, k, v))
    scores = q @ k.transpose(0, 1, 3, 2) / np.sqrt(HEAD_DIM).astype(np.float32)
    causal = jnp.tril(jnp.ones((seq, seq), bool))
    scores = jnp.where(causal, scores, jnp.finfo(scores.dtype).min)
    out = jax.nn.softmax(scores, axis=-1) @ v
    out = out.transpose(0, 2, 1, 3).reshape(batch, seq, d)
    return out @ p["proj"]["w"] + p["proj"]["b"]


def mlp(p, x):
    return jax.nn.gelu(x @ p["up"]["w"] + p["up"]["b"]) @ p["down"]["w"] + p["down"]["b"]


def transformer(params, tokens):
    """Logits for next-token prediction: embeddings, pre-norm blocks, tied unembedding."""
    x = params["embed"][tokens] + params["pos"][: tokens.shape[1]]
    for layer in params["layers"]:
        x = x + attention(layer, layer_norm(layer["ln1"], x))
        x = x + mlp(layer, layer_norm(layer["ln2"], x))
    return layer_norm(params["ln_f"], x) @ params["embed"].T


# -- reading memory ---------------------------------------------------------------------------


def peak_mib() -> float:
    """This process's peak RSS so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def rss_mib() -> float:
    """This process's current RSS, after a collection."""
    gc.collect()
    try:
        with open("/proc/self/statm") as fh:
            return int(fh.read().split()[1]) * os.sysconf("SC_PAGE_SIZE") / 2**20
    except OSError:
        import psutil

        return psutil.Process().memory_info().rss / 2**20


def display_bundle(report) -> int:
    """What displaying a report does: ``display(report)`` asks for its mime bundle (IPython's
    formatter calls ``_repr_mimebundle_(include=None, exclude=None)``) and the kernel sends it
    as JSON. Returns the message's size."""
    bundle = report._repr_mimebundle_(include=None, exclude=None)
    assert {"application/vnd.olympus.stages+json", "text/html", "text/plain"} <= set(bundle)
    return len(json.dumps(bundle))


class _Sink:
    """A stdout that keeps nothing (the inspector prints its reports outside a notebook)."""

    def write(self, s):
        return len(s)

    def flush(self):
        pass


# -- the children -----------------------------------------------------------------------------


def child_jax(mode: str) -> dict:
    after_import = rss_mib()
    cfg = BIG[mode]
    params, tokens = init_params(cfg), init_tokens(cfg)
    base = rss_mib()
    start = time.perf_counter()
    compiled = jax.jit(transformer).lower(params, tokens).compile()
    seconds = time.perf_counter() - start
    assert compiled is not None
    return dict(after_import=after_import, base=base, peak=peak_mib(), seconds=seconds)


def child_report(mode: str) -> dict:
    after_jax = rss_mib()
    import olympus_jupyter

    after_import = rss_mib()
    cfg = BIG[mode]
    params, tokens = init_params(cfg), init_tokens(cfg)
    base = rss_mib()
    start = time.perf_counter()
    report = olympus_jupyter.inspect(transformer, params, tokens)
    assert report.ok, report.failure
    message = display_bundle(report)
    seconds = time.perf_counter() - start
    return dict(
        after_jax=after_jax,
        after_import=after_import,
        base=base,
        peak=peak_mib(),
        seconds=seconds,
        message=message,
    )


#: A notebook cell defining a function; each run of the loop makes a new one.
CELL = '''\
def block_{k}(params, x):
    """Cell {k}: one pre-norm transformer block, scaled by {k}."""
    layer = params["layers"][0]
    h = layer_norm(layer["ln1"], x)
    x = x + attention(layer, h) * {k}.0
    h = layer_norm(layer["ln2"], x)
    return x + mlp(layer, h) / {k}.0
'''


def run_cell(k: int):
    """Runs cell ``k`` as IPython would: its source is kept in ``linecache`` under a file name
    of its own (which IPython keeps for the session), its code run in the user's namespace."""
    source = CELL.format(k=k)
    filename = f"/tmp/ipykernel_{os.getpid()}/cell_{k}.py"
    linecache.cache[filename] = (len(source), None, source.splitlines(True), filename)
    namespace = dict(layer_norm=layer_norm, attention=attention, mlp=mlp)
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - a cell, as IPython runs it
    return namespace[f"block_{k}"]


def child_inspections(mode: str) -> dict:
    import olympus_jupyter
    from olympus_jupyter.frontends.inspection import default_cache

    n = LOOPS[mode]
    cache = olympus_jupyter.ReportCache(size=BOUNDS[mode]) if BOUNDS[mode] else default_cache
    params = init_params(SMALL)
    x = jnp.zeros((SMALL["batch"], SMALL["seq"], SMALL["d_model"]), jnp.float32)
    readings = {}
    start = time.perf_counter()
    for k in range(1, n + 1):
        fun = run_cell(k)
        report = olympus_jupyter.inspect(fun, params, x, cache=cache)
        assert report.ok, report.failure
        display_bundle(report)
        del fun, report  # the next run of the cell rebinds the name
        if k % (n // 8) == 0:
            readings[k] = rss_mib()
    return dict(readings=readings, seconds=time.perf_counter() - start)


def child_edits(mode: str, clear_jax_caches: bool = False) -> dict:
    from olympus_jupyter.frontends.inspector import Inspector

    n = LOOPS[mode]
    bounds = {"history_size": BOUNDS[mode]} if BOUNDS[mode] else {}
    params, tokens = init_params(SMALL), init_tokens(SMALL)
    readings = {}
    start = time.perf_counter()
    with contextlib.redirect_stdout(_Sink()):
        ins = Inspector(transformer, params, tokens, **bounds)
        editor = ins.editors[-1]
        assert editor.description == "tokens", editor.description
        for k in range(1, n + 1):
            before = ins.cache.counts["compile"]
            editor.value = f"i32[{SMALL['batch'] + k},{SMALL['seq']}]"  # a new batch size
            assert ins.cache.counts["compile"] == before + 1, "the edit made no new report"
            assert ins.report.ok, ins.report.failure
            if clear_jax_caches:
                jax.clear_caches()
            if k % (n // 8) == 0:
                readings[k] = rss_mib()
    history = len(ins.history)
    return dict(readings=readings, seconds=time.perf_counter() - start, history=history)


CHILDREN = {
    "jax": child_jax,
    "report": child_report,
    "inspections": child_inspections,
    "edits": child_edits,
    "edits-cleared": lambda mode: child_edits(mode, clear_jax_caches=True),
}


# -- the parent -------------------------------------------------------------------------------


def run_child(name: str, mode: str) -> dict:
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "--child", name, "--mode", mode],
        stdout=subprocess.PIPE,
        text=True,
        check=True,
    )
    return json.loads(out.stdout.strip().splitlines()[-1])


def flat(
    what: str, result: dict, n: int, judged: bool = True, results: Results | None = None
) -> bool:
    readings = {int(k): v for k, v in result["readings"].items()}
    mid, end = readings[n // 2], readings[n]
    growth = (end - mid) / mid
    ok = growth <= FLAT_BUDGET
    trace = ", ".join(f"{k}: {v:.0f}" for k, v in sorted(readings.items()))
    verdict = (
        f"(budget <= {FLAT_BUDGET * 100:.0f} %) {'ok' if ok else 'OVER BUDGET'}"
        if judged
        else "(not judged)"
    )
    print(
        f"{what}: RSS after #{n // 2} {mid:.1f} MiB, after #{n} {end:.1f} MiB: growth "
        f"{growth * 100:+.2f} % {verdict}"
    )
    print(
        f"  RSS (MiB) along the loop: {trace}; {result['seconds']:.1f} s"
        + (f"; history kept {result['history']} entries" if "history" in result else "")
    )
    if results is not None:
        results.add(
            f"RSS growth, {what}, from #{n // 2} to #{n}",
            growth * 100,
            "%",
            FLAT_BUDGET * 100 if judged else None,
        )
    return ok


def main() -> int:
    options = parser(__doc__, "fewer iterations, a smaller model")
    options.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    options.add_argument("--mode", choices=("full", "short"), help=argparse.SUPPRESS)
    args = options.parse_args()
    if args.child:
        print(json.dumps(CHILDREN[args.child](args.mode)))
        return 0

    mode = "short" if args.short else "full"
    cfg, n = BIG[mode], LOOPS[mode]
    start = time.perf_counter()
    ok = True
    results = Results(name_of(__file__))

    a, b = run_child("jax", mode), run_child("report", mode)
    ratio = b["peak"] / a["peak"]
    ok &= ratio <= PEAK_BUDGET
    model = (
        f"{cfg['layers']}-layer transformer (d_model {cfg['d_model']}, "
        f"{cfg['d_model'] // HEAD_DIM} heads, seq {cfg['seq']}, batch {cfg['batch']}, "
        f"vocab {cfg['vocab']})"
    )
    print(
        f"peak RSS, {model}: olympus report {b['peak']:.1f} MiB, jax compile "
        f"{a['peak']:.1f} MiB, ratio {ratio:.2f} (budget <= {PEAK_BUDGET:.2f}) "
        f"{'ok' if ratio <= PEAK_BUDGET else 'OVER BUDGET'}"
    )
    print(
        f"  jax:     RSS {a['after_import']:.1f} MiB after import jax, {a['base']:.1f} MiB "
        f"with params; compile adds {a['peak'] - a['base']:.1f} MiB at its peak "
        f"({a['seconds']:.2f} s)"
    )
    print(
        f"  olympus: RSS {b['after_jax']:.1f} MiB after import jax, {b['after_import']:.1f} MiB "
        f"after import olympus_jupyter (+{b['after_import'] - b['after_jax']:.1f}), "
        f"{b['base']:.1f} MiB with params; report + bundle add {b['peak'] - b['base']:.1f} MiB "
        f"at its peak ({b['seconds']:.2f} s, {b['message'] / 2**20:.1f} MiB display message)"
    )
    results.add(f"peak RSS, full report of an {model} / JAX compiling it", ratio, "x", PEAK_BUDGET)
    results.add("peak RSS, Olympus report", b["peak"], "MiB")
    results.add("peak RSS, JAX compile", a["peak"], "MiB")

    kept = f"{BOUNDS[mode] or 32} kept"
    ok &= flat(
        f"{n} inspections of distinct functions ({kept})",
        run_child("inspections", mode),
        n,
        results=results,
    )
    edits_ok = flat(
        f"{n} shape edits in one Inspector ({kept})", run_child("edits", mode), n, results=results
    )
    if not edits_ok:
        flat(
            "  the same edits, jax.clear_caches() after each (what Olympus itself keeps)",
            run_child("edits-cleared", mode),
            n,
            judged=False,
        )
    ok &= edits_ok
    print(f"({mode} mode, {time.perf_counter() - start:.0f} s in all)")
    results.write(args.json)
    return 0 if ok else 1


if __name__ == "__main__":
    sys.exit(main())
