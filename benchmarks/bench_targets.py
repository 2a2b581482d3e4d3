"""Reports for hardware this machine does not have (``target=``, issue 34) against
JAX's own compile-only compile of the same program for the same devices.

Budgets:

1. A report for a target, ``olympus_jupyter.inspect(step, state, tokens,
   target=..., mesh=..., shardings=..., cache=False)`` (the default report), takes at
   most 1.3x JAX's compile-only compile of the same step:
   ``jax.jit(step, donate_argnums=0).trace(*shapes).lower().compile()``, the
   shapes ``jax.ShapeDtypeStruct``s sharded over a mesh of the same target's
   devices (``olympus.hardware.target(name).mesh(axes)``). The step is a sharded
   train step (``SMALL``: an embedding, 4 pre-norm MLP blocks in a ``scan`` with
   remat, the next-token loss, a hand-written Adam, the state donated; FSDP over
   ``data``, tensor parallel over ``model``) on ``v5e:4x4`` (``data=4, model=4``),
   and the same on ``h100:8`` (``data=2, model=4``). Its blocks have no attention:
   XLA:TPU takes 4.5 to 5 s of CPU here to compile even a tiny step with
   attention, and this budget is for a compile of about a second or two, where
   what Olympus adds weighs most (the attention transformers are budget 3's).
2. A program that does not fit is reported within 2x the time of the compile that
   failed: a wider step (``TOO_BIG``: 8 blocks with attention, ``d_model`` 4096),
   data-parallel only (every device holds all the parameters and both Adam moments)
   on ``v5e:2x2``. JAX's side is its compile, which fails with
   ``RESOURCE_EXHAUSTED``; Olympus's is the report, which reads the buffers at the
   peak from XLA's dump of that failed compile.
3. The 12-layer, ``d_model`` 2048 transformer train step (causal attention and an
   MLP per block, remat in a scan, hand-written Adam, donation) inspected for
   ``v5e:4x4`` with ``costs=True``, its display bundle made as a notebook gets it
   (``_repr_mimebundle_``), takes at most the time of two of JAX's compiles of it
   (2x), and that bundle is at most 5 MB. Short mode (CI) inspects a scaled-down one
   (2 layers, ``d_model`` 1024, shorter sequences, a smaller vocabulary): the full
   one takes a minute or more per compile here.

Each side of each round traces a new function with JAX's caches cleared
(``jax.clear_caches()``) and nothing cached by Olympus (``cache=False``); the rounds
alternate which side goes first, and a figure is the median of the rounds' ratios
(``_timing``'s way). Everything runs in this one process, after a warm-up compile
that loads libtpu and the CUDA plugin's compiler.

It needs libtpu and JAX's CUDA plugin (the ``targets`` extra), which the main
environment does not have: run it with the targets environment's Python,
``.venvs/targets-<JAX version>/bin/python`` (``./run.sh --test`` makes it; run_all.py
runs this script there). Elsewhere it says so and exits 2 with no figures.

Run: .venvs/targets-<JAX>/bin/python benchmarks/bench_targets.py [--short] [--json PATH]
"""

from __future__ import annotations

import argparse
import dataclasses
import gc
import statistics
import sys
import time
from collections.abc import Callable
from typing import Any

from _results import Results, name_of, parser

BUDGET_REPORT, BUDGET_NO_FIT, BUDGET_COSTS = 1.3, 2.0, 2.0
BUDGET_BUNDLE_MB = 5.0  # output_cap.MAX_OUTPUT_BYTES, checked in main()


@dataclasses.dataclass(frozen=True)
class Model:
    """A decoder-only transformer's sizes (``batch`` and ``seq`` are the step's
    tokens)."""

    layers: int
    d_model: int
    heads: int
    seq: int
    batch: int
    vocab: int
    attention: bool = True  # else each block is its MLP alone

    def describe(self) -> str:
        heads = f"{self.heads} heads" if self.attention else "MLP blocks, no attention"
        return (
            f"{self.layers}-layer transformer (d_model {self.d_model}, {heads}, "
            f"seq {self.seq}, batch {self.batch}, vocab {self.vocab:,})"
        )


@dataclasses.dataclass(frozen=True)
class Case:
    """A train step of ``model`` for ``target`` on a mesh of ``axes``, its
    parameters sharded as ``fsdp`` says (FSDP and tensor parallel), or replicated."""

    model: Model
    target: str
    axes: dict[str, int]
    fsdp: bool = True

    def describe(self) -> str:
        mesh = ",".join(f"{k}={v}" for k, v in self.axes.items())
        how = "FSDP+TP" if self.fsdp else "data parallel, parameters replicated"
        return f"{self.model.describe()}, {self.target} ({mesh}; {how})"


#: The step of budget 1 (a compile of one to two seconds here), the step that does
#: not fit of budget 2, and the transformer of budget 3 in each mode.
SMALL = Model(layers=4, d_model=256, heads=4, seq=64, batch=16, vocab=1024, attention=False)
TOO_BIG = Model(layers=8, d_model=4096, heads=32, seq=128, batch=32, vocab=4096)
LARGE = {
    "full": Model(layers=12, d_model=2048, heads=16, seq=1024, batch=32, vocab=32768),
    "short": Model(layers=2, d_model=1024, heads=8, seq=64, batch=16, vocab=2048),
}
REPORT_CASES = (
    Case(SMALL, "v5e:4x4", {"data": 4, "model": 4}),
    Case(SMALL, "h100:8", {"data": 2, "model": 4}),
)
NO_FIT_CASE = Case(TOO_BIG, "v5e:2x2", {"data": 4}, fsdp=False)
ROUNDS = {
    "short": dict(report=7, no_fit=5, costs=3),
    "full": dict(report=15, no_fit=9, costs=3),
}


# -- the program ------------------------------------------------------------------------------


def make_train_step(m: Model) -> Callable:
    """A new train step of ``m`` (a new function each call: nothing cached): token
    embedding, ``m.layers`` pre-norm blocks (causal attention where ``m.attention``,
    a GELU MLP) in a ``lax.scan``, each rematerialized (``jax.checkpoint``), the
    next-token loss, its gradient and a hand-written Adam update; ``state`` is
    ``(params, mu, nu, step)``. Matmuls in bfloat16, parameters and moments in
    float32."""
    import jax
    import jax.numpy as jnp

    d, heads, seq = m.d_model, m.heads, m.seq
    head_dim = d // heads
    bf16 = jnp.bfloat16

    def norm(x, scale):
        return x * jax.lax.rsqrt((x * x).mean(-1, keepdims=True) + 1e-6) * scale

    def mlp(x, p):
        h = norm(x, p["ln2"]).astype(bf16)
        up = jax.nn.gelu(h @ p["w1"].astype(bf16))
        return x + (up @ p["w2"].astype(bf16)).astype(jnp.float32)

    def block(x, p):
        if not m.attention:
            return mlp(x, p), None
        h = norm(x, p["ln1"]).astype(bf16)
        qkv = (h @ p["wqkv"].astype(bf16)).reshape(*x.shape[:2], 3 * heads, head_dim)
        q, k, v = jnp.split(qkv, 3, axis=2)
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k).astype(jnp.float32) / head_dim**0.5
        causal = jnp.tril(jnp.ones((seq, seq), bool))
        weights = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1).astype(bf16)
        attended = jnp.einsum("bhqk,bkhd->bqhd", weights, v).reshape(x.shape)
        x = x + (attended @ p["wo"].astype(bf16)).astype(jnp.float32)
        return mlp(x, p), None

    def loss(params, tokens):
        x = params["embed"][tokens]
        x, _ = jax.lax.scan(jax.checkpoint(block), x, params["layers"])
        logits = (norm(x, params["ln_f"]).astype(bf16) @ params["unembed"].astype(bf16)).astype(
            jnp.float32
        )
        logp = jax.nn.log_softmax(logits[:, :-1], axis=-1)
        return -jnp.take_along_axis(logp, tokens[:, 1:, None], axis=-1).mean()

    def train_step(state, tokens):
        params, mu, nu, step = state
        value, grads = jax.value_and_grad(loss)(params, tokens)
        step = step + 1
        b1, b2, lr, eps = 0.9, 0.95, 3e-4, 1e-8
        mu = jax.tree.map(lambda m_, g: b1 * m_ + (1 - b1) * g, mu, grads)
        nu = jax.tree.map(lambda v_, g: b2 * v_ + (1 - b2) * g * g, nu, grads)
        fix1, fix2 = 1 - b1**step, 1 - b2**step
        params = jax.tree.map(
            lambda p, m_, v_: p - lr * (m_ / fix1) / (jnp.sqrt(v_ / fix2) + eps), params, mu, nu
        )
        return (params, mu, nu, step), value

    return train_step


def arguments(case: Case) -> tuple[tuple, tuple]:
    """The step's arguments as shapes (``(state, tokens)``) and a sharding for each
    (a pytree of ``PartitionSpec``s, as ``inspect``'s ``shardings=`` takes)."""
    import jax
    import jax.numpy as jnp
    from jax.sharding import PartitionSpec as P

    m = case.model
    d, ff, n = m.d_model, 4 * m.d_model, m.layers

    def f32(*shape):
        return jax.ShapeDtypeStruct(shape, jnp.float32)

    params = {
        "embed": f32(m.vocab, d),
        "unembed": f32(d, m.vocab),
        "ln_f": f32(d),
        "layers": {
            "ln1": f32(n, d),
            "ln2": f32(n, d),
            "wqkv": f32(n, d, 3 * d),
            "wo": f32(n, d, d),
            "w1": f32(n, d, ff),
            "w2": f32(n, ff, d),
        },
    }
    if not m.attention:  # the MLP's alone
        params["layers"] = {k: params["layers"][k] for k in ("ln2", "w1", "w2")}
    if case.fsdp:  # weights' rows over data (FSDP), their columns over model (TP)
        specs = {
            "embed": P("model", "data"),
            "unembed": P("data", "model"),
            "ln_f": P(),
            "layers": {
                "ln1": P(),
                "ln2": P(),
                "wqkv": P(None, "data", "model"),
                "wo": P(None, "model", "data"),
                "w1": P(None, "data", "model"),
                "w2": P(None, "model", "data"),
            },
        }
        specs["layers"] = {k: specs["layers"][k] for k in params["layers"]}
    else:  # every device holds everything
        specs = jax.tree.map(lambda _: P(), params)
    state = (params, params, params, jax.ShapeDtypeStruct((), jnp.int32))
    tokens = jax.ShapeDtypeStruct((m.batch, m.seq), jnp.int32)
    return (state, tokens), ((specs, specs, specs, P()), P("data", None))


# -- the two sides ----------------------------------------------------------------------------


def jax_compile(case: Case, parts: dict[str, float] | None = None):
    """JAX's own compile-only compile: the shapes sharded over a mesh of the target's
    devices, then ``trace -> lower -> compile``; the seconds of each step go in
    ``parts`` (``place``, ``trace``, ``lower``, ``compile``: the compile's also when
    it fails)."""
    import jax
    from jax.sharding import NamedSharding, PartitionSpec

    from olympus import hardware

    parts = {} if parts is None else parts
    start = time.perf_counter()
    args, specs = arguments(case)
    mesh = hardware.target(case.target).mesh(case.axes)
    placed = jax.tree.map(
        lambda a, s: jax.ShapeDtypeStruct(a.shape, a.dtype, sharding=NamedSharding(mesh, s)),
        args,
        specs,
        is_leaf=lambda x: isinstance(x, PartitionSpec),
    )
    step = jax.jit(make_train_step(case.model), donate_argnums=0)
    parts["place"], start = time.perf_counter() - start, time.perf_counter()
    traced = step.trace(*placed)
    parts["trace"], start = time.perf_counter() - start, time.perf_counter()
    lowered = traced.lower()
    parts["lower"], start = time.perf_counter() - start, time.perf_counter()
    try:
        return lowered.compile()
    finally:
        parts["compile"] = time.perf_counter() - start


def olympus_report(case: Case, **options: Any):
    """Olympus's report of the same step for the same target."""
    import jax

    import olympus_jupyter

    args, specs = arguments(case)
    step = jax.jit(make_train_step(case.model), donate_argnums=0)
    return olympus_jupyter.inspect(
        step,
        *args,
        target=case.target,
        mesh=case.axes,
        shardings=specs,
        cache=False,
        **options,
    )


def jax_failed_compile(case: Case, parts: dict[str, float] | None = None) -> str:
    """JAX's compile of a step that does not fit: its error (RESOURCE_EXHAUSTED)."""
    try:
        jax_compile(case, parts)
    except Exception as e:  # noqa: BLE001 - XLA's out-of-memory error is the point
        return str(e)
    raise AssertionError(f"{case.describe()} fits: it was meant not to")


def bundle_bytes(report) -> int:
    """The display bundle as a notebook gets it (capped: ``_repr_mimebundle_``)."""
    from olympus_jupyter.report.output_cap import output_size

    return output_size(report._repr_mimebundle_(include=None, exclude=None))


@dataclasses.dataclass
class Paired:
    """The rounds of two sides timed in turn: seconds per round and side, and each
    round's parts (JAX's steps; the report's ``timings`` and what is left)."""

    olympus: list[float] = dataclasses.field(default_factory=list)
    jax: list[float] = dataclasses.field(default_factory=list)
    parts: dict[str, list[dict[str, float]]] = dataclasses.field(
        default_factory=lambda: {"olympus": [], "jax": []}
    )
    last: Any = None  # Olympus's side's last result

    @property
    def ratio(self) -> float:
        return statistics.median(o / j for o, j in zip(self.olympus, self.jax))

    def line(self, what: str, budget: float) -> str:
        verdict = "ok" if self.ratio <= budget else "OVER BUDGET"
        return (
            f"{what}: olympus {statistics.median(self.olympus):.2f} s, "
            f"jax {statistics.median(self.jax):.2f} s, ratio {self.ratio:.2f} "
            f"(rounds: {', '.join(f'{o / j:.2f}' for o, j in zip(self.olympus, self.jax))}; "
            f"budget <= {budget:.2f}) {verdict}"
        )

    def parts_line(self) -> str:
        """The median seconds of each side's parts, where the time goes."""

        def medians(side: str) -> str:
            rounds = self.parts[side]
            names = list(dict.fromkeys(k for r in rounds for k in r))
            return ", ".join(
                f"{k} {statistics.median(r.get(k, 0.0) for r in rounds):.2f}" for k in names
            )

        return f"  parts (median s): jax {medians('jax')}; olympus {medians('olympus')}"


def paired(
    olympus_side: Callable[[dict], Any], jax_side: Callable[[dict], Any], rounds: int
) -> Paired:
    """Both sides ``rounds`` times, alternating which goes first, JAX's caches
    cleared before each. Each side is given a dict for its parts; the Olympus side
    returns its report, whose ``timings`` (and the time left beside them, ``rest``)
    are its parts."""
    import jax

    out = Paired()
    for r in range(rounds):
        for side in ("jax", "olympus") if r % 2 else ("olympus", "jax"):
            jax.clear_caches()
            gc.collect()
            parts: dict[str, float] = {}
            start = time.perf_counter()
            result = (olympus_side if side == "olympus" else jax_side)(parts)
            seconds = time.perf_counter() - start
            getattr(out, side).append(seconds)
            if side == "olympus":
                out.last = result
                parts = {**result.timings, **parts}
                parts["rest"] = seconds - sum(parts.values())
            out.parts[side].append(parts)
    return out


# -- the budgets ------------------------------------------------------------------------------


def check_report(report, case: Case) -> None:
    assert report.ok, f"no report of {case.describe()}: {report.failure}"
    assert report.device_memory()["fits"] is True, report.device_memory()


def report_budget(results: Results, case: Case, rounds: int) -> None:
    timed = paired(lambda _: olympus_report(case), lambda p: jax_compile(case, p), rounds)
    check_report(timed.last, case)
    print(timed.line(f"report for {case.describe()}", BUDGET_REPORT))
    print(timed.parts_line(), flush=True)
    results.add(
        f"default report for {case.target}, a sharded train step of {case.model.layers} MLP "
        "blocks / JAX's compile-only compile",
        timed.ratio,
        "x",
        BUDGET_REPORT,
    )
    results.add(f"JAX compile-only compile for {case.target}", statistics.median(timed.jax), "s")


def no_fit_budget(results: Results, case: Case, rounds: int) -> None:
    errors: list[str] = []

    def jax_side(parts):
        errors.append(jax_failed_compile(case, parts))

    timed = paired(lambda _: olympus_report(case), jax_side, rounds)
    assert "RESOURCE_EXHAUSTED" in errors[-1], errors[-1][:500]
    report = timed.last
    answer = report.device_memory()
    assert report.failure is not None and answer["fits"] is False, answer
    assert answer["peak_source"] == "XLA out of memory" and answer["largest"], answer
    print(f"  {answer['words'].splitlines()[0][:160]}")
    print(timed.line(f"report of {case.describe()} (does not fit)", BUDGET_NO_FIT))
    print(timed.parts_line(), flush=True)
    results.add(
        f"report of a train step that does not fit {case.target} / JAX's failing compile",
        timed.ratio,
        "x",
        BUDGET_NO_FIT,
    )
    results.add("JAX's failing compile", statistics.median(timed.jax), "s")


def costs_budget(results: Results, case: Case, rounds: int) -> None:
    parts: dict[str, list[float]] = {"inspect": [], "bundle": []}
    sizes: list[int] = []

    def olympus_side(its_parts):
        start = time.perf_counter()
        report = olympus_report(case, costs=True)
        parts["inspect"].append(time.perf_counter() - start)
        check_report(report, case)
        start = time.perf_counter()
        sizes.append(bundle_bytes(report))
        its_parts["bundle"] = time.perf_counter() - start
        parts["bundle"].append(its_parts["bundle"])
        return report

    timed = paired(olympus_side, lambda p: jax_compile(case, p), rounds)
    m = case.model
    print(
        f"  inspect(costs=True) {statistics.median(parts['inspect']):.2f} s, display bundle "
        f"{statistics.median(parts['bundle']):.2f} s ({sizes[-1] / 1e6:.2f} MB)"
    )
    print(timed.line(f"report with costs of {case.describe()}", BUDGET_COSTS))
    print(timed.parts_line(), flush=True)
    name = f"{m.layers}-layer transformer (d_model {m.d_model})"
    results.add(
        f"{name} for {case.target} with costs, display bundle included / JAX's compile",
        timed.ratio,
        "x",
        BUDGET_COSTS,
    )
    results.add(f"{name} with costs: the display bundle", max(sizes) / 1e6, "MB", BUDGET_BUNDLE_MB)
    results.add(f"{name}: JAX's compile", statistics.median(timed.jax), "s")
    results.add(f"{name}: inspect(costs=True)", statistics.median(parts["inspect"]), "s")


# -- the command ------------------------------------------------------------------------------


def targets_missing() -> str | None:
    """Why this environment cannot compile for the targets (None when it can)."""
    import importlib.util

    missing = [
        what
        for module, what in (("libtpu", "libtpu"), ("jax_plugins.xla_cuda12", "JAX's CUDA plugin"))
        if importlib.util.find_spec(module.split(".")[0]) is None
        or (module != "libtpu" and importlib.util.find_spec(module) is None)
    ]
    if not missing:
        return None
    import jax

    return (
        f"{' and '.join(missing)} not installed in {sys.executable}: run this benchmark "
        f"with .venvs/targets-{jax.__version__}/bin/python (./run.sh --test makes it), "
        "as run_all.py does"
    )


def main() -> int:
    options = parser(
        __doc__,
        "fewer rounds, and a 2-layer, d_model 1024 transformer for the costs budget "
        "instead of the 12-layer, d_model 2048 one",
    )
    options.add_argument(
        "--only",
        nargs="+",
        choices=("report", "no_fit", "costs"),
        help=argparse.SUPPRESS,
    )
    args = options.parse_args()
    why = targets_missing()
    if why:
        print(f"bench_targets.py: {why}", file=sys.stderr)
        return 2
    from olympus_jupyter.report.output_cap import MAX_OUTPUT_BYTES

    assert MAX_OUTPUT_BYTES / 1e6 == BUDGET_BUNDLE_MB, "the bundle's budget is the cap"
    mode = "short" if args.short else "full"
    rounds = ROUNDS[mode]
    only = set(args.only or ("report", "no_fit", "costs"))
    results = Results(name_of(__file__))
    start = time.perf_counter()
    for case in REPORT_CASES:  # warm-up: libtpu and the CUDA plugin loaded, first compiles
        jax_compile(case), olympus_report(case)
    if "report" in only:
        for case in REPORT_CASES:
            report_budget(results, case, rounds["report"])
    if "no_fit" in only:
        no_fit_budget(results, NO_FIT_CASE, rounds["no_fit"])
    if "costs" in only:
        costs_budget(
            results, Case(LARGE[mode], "v5e:4x4", {"data": 4, "model": 4}), rounds["costs"]
        )
    print(
        f"({mode} mode, {time.perf_counter() - start:.0f} s in all) "
        + ("all budgets met" if results.ok else "OVER BUDGET")
    )
    results.write(args.json)
    return 0 if results.ok else 1


if __name__ == "__main__":
    sys.exit(main())
