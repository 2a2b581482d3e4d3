"""Real programs staged with Olympus, as text of every stage: a corpus for tests.

``stage_texts()`` gives ``{(program, stage): text}``: the programs of
``_programs()`` (loops, conditionals, random keys, FFT, dtypes, gradients,
custom_jvp/vjp, convolution, contractions, reductions, gather/scatter, effects
and callbacks, symbolic shapes...), a complex-constant program, a lowering for
``('cpu', 'tpu')``, and the sharded programs of ``_sharded_in_this_process()``
(Shardy and GSPMD shardings, shard_map collectives, pmap), which run in a
subprocess with 8 host devices (``sharded_stage_texts()``: XLA_FLAGS must be
set before JAX starts). Stages:

``olympuspr``, ``olympuspr_source`` (``source_info=True``),
``olympuspr_name_stack`` (``source_info=True, name_stack=True``), ``stablehlo``,
``stablehlo_debug`` (``debug_info=True``), ``hlo`` (``lowered.as_text('hlo')``),
``compiled`` (optimized HLO; not for symbolic shapes). The cross-platform
lowering has ``stablehlo_multi`` and ``stablehlo_multi_debug``.

``python tests/corpus_programs.py sharded`` prints the sharded texts as JSON
(what the subprocess does); ``python tests/corpus_programs.py DIR`` writes every
text to DIR, to look at.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys

from deadlines import deadline

#: Which lexer (by alias) reads which stage.
STAGE_LANGUAGE = {
    "olympuspr": "olympuspr",
    "olympuspr_source": "olympuspr",
    "olympuspr_name_stack": "olympuspr",
    "stablehlo": "stablehlo",
    "stablehlo_debug": "stablehlo",
    "stablehlo_multi": "stablehlo",
    "stablehlo_multi_debug": "stablehlo",
    "hlo": "hlo",
    "compiled": "hlo",
}


def _programs():
    """(name, function, args, jit options) of each program in the corpus."""
    import numpy as np
    import jax
    from jax import custom_jvp as jax_custom_jvp
    from jax.nn import sigmoid as jax_nn_sigmoid
    import olympus
    import olympus.numpy as jnp
    from olympus import lax, random

    f32 = jnp.ones((3, 4), jnp.float32)
    vec = jnp.arange(8, dtype=jnp.float32)

    def loops(x):
        a = lax.fori_loop(0, 5, lambda i, c: c * 1.5 + i, x)
        b = lax.while_loop(lambda c: c[0] < 10, lambda c: (c[0] + 1, c[1] * 2.0), (0, a))[1]
        c, ys = lax.scan(lambda c, x: (c + x, c * x), jnp.zeros(4), x)
        return b.sum() + c.sum() + ys.sum()

    def conditionals(x, i):
        a = lax.cond(x.sum() > 0, lambda v: v * 2, lambda v: -v, x)
        b = lax.switch(i, [jnp.sin, jnp.cos, lambda v: v**3], x)
        return jnp.where(a > b, a, jnp.nan) + jnp.where(x < 0, -jnp.inf, jnp.inf)

    def rand(seed):
        key = random.PRNGKey(seed)
        k1, k2 = random.split(key)
        typed = random.key(seed)
        t1, _ = random.split(typed)
        return (
            random.normal(k1, (3, 4))
            + random.uniform(k2, (3, 4))
            + random.bernoulli(t1, 0.3, (3, 4))
        )

    def fft(x):
        return jnp.fft.fft(x).real + jnp.fft.ifft(x).imag, jnp.fft.rfft(x)

    def dtypes(x):
        b = x.astype(jnp.bfloat16) * 3
        h = x.astype(jnp.float16) / 7
        i8 = x.astype(jnp.int8) >> 1
        u8 = x.astype(jnp.uint8) & 0x7F
        c = lax.complex(x, 2 * x) * x.astype(jnp.complex64)
        p = (x > 0.5) | (x < -0.5)
        i64 = jnp.uint32(0xFFFFFFFF) ^ x.astype(jnp.uint32)
        return b, h, i8, u8, c, p, i64, jnp.float32(1e-30) * x, jnp.float32(3.4e38) + x

    def loss(w, x):
        return jnp.tanh(x @ w).sum() ** 2

    def grads(w, x):
        g = olympus.grad(loss)(w, x)
        v, g2 = olympus.value_and_grad(loss, argnums=1)(w, x)
        t = olympus.jvp(jnp.sin, (x,), (jnp.ones_like(x),))[1]
        m = olympus.vmap(lambda r: r @ w)(x)
        return g, v, g2, t, m

    @jax_custom_jvp
    def softplus(x):
        return jnp.log1p(jnp.exp(x))

    @softplus.defjvp
    def softplus_jvp(primals, tangents):
        (x,), (t,) = primals, tangents
        return softplus(x), t * jax_nn_sigmoid(x)

    def custom(x):
        return olympus.grad(lambda v: softplus(v).sum())(x) + softplus(x)

    def conv(img, ker):
        return lax.conv_general_dilated(
            img,
            ker,
            window_strides=(1, 2),
            padding="SAME",
            rhs_dilation=(1, 1),
            dimension_numbers=("NCHW", "OIHW", "NCHW"),
        )

    def contractions(a, b, c):
        d = lax.dot_general(a, b, (((1,), (0,)), ((), ())), preferred_element_type=jnp.float32)
        return d, jnp.einsum("bij,bjk->bik", c, c), jnp.einsum("i,i->", a[0], a[0])

    def reductions(x):
        vals, idx = lax.top_k(x, 3)
        return (
            jnp.argmax(x, axis=1),
            jnp.cumsum(x, axis=0),
            jnp.sort(x, axis=-1),
            vals,
            idx,
            x.max(),
            jnp.argsort(x[0]),
            jnp.prod(x),
            jnp.any(x > 2),
        )

    def gather_scatter(x, idx):
        y = x[idx]
        z = x.at[idx[0]].set(7.0)
        w = x.at[1:3, 2].add(1.0)
        return y, z, w, x[:, ::2], jnp.take_along_axis(x, idx[:, None] % 4, axis=1)

    def misc(x):
        y = lax.reduce_window(x, -jnp.inf, lax.max, (2, 2), (1, 1), "VALID")
        z = jnp.pad(x, ((1, 1), (0, 2)), constant_values=-1.0)
        s = olympus.lax.stop_gradient(x)
        return y, z, jnp.concatenate([x, s]), jnp.linalg.norm(x), x.T.reshape(2, 6)

    @jax.custom_vjp
    def clip_gradient(x):
        return x

    clip_gradient.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1.0, 1.0),))
    table = np.linspace(-1, 1, 12, dtype=np.float32).reshape(3, 4)

    def effects(x):
        # An ordered effect (tokens), a host callback, a closed-over constant.
        jax.debug.print("x = {x}, sum: {s}", x=x, s=x.sum(), ordered=True)
        y = jax.pure_callback(
            lambda v: np.asarray(v) * 2, jax.ShapeDtypeStruct(x.shape, x.dtype), x
        )
        g = olympus.grad(lambda v: (clip_gradient(v) * table).sum())(x)
        return g + y + table + clip_gradient(x)

    (batch,) = jax.export.symbolic_shape("b")

    def symbolic(x):
        return jnp.sin(x).sum(0) * x.shape[0]

    return [
        ("loops", loops, (jnp.ones((6, 4)),), {}),
        ("conditionals", conditionals, (vec, 1), {}),
        ("random", rand, (0,), {}),
        ("fft", fft, (vec,), {}),
        ("dtypes", dtypes, (f32,), {}),
        ("grads", grads, (jnp.ones((4, 2)), jnp.ones((5, 4))), {}),
        ("custom_jvp", custom, (vec,), {}),
        ("conv", conv, (jnp.ones((1, 3, 8, 8)), jnp.ones((4, 3, 3, 3))), {}),
        (
            "contractions",
            contractions,
            (jnp.ones((3, 4), jnp.bfloat16), jnp.ones((4, 5), jnp.bfloat16), jnp.ones((2, 3, 3))),
            {},
        ),
        ("reductions", reductions, (np.random.RandomState(0).rand(4, 6).astype("f4"),), {}),
        ("gather_scatter", gather_scatter, (f32, jnp.array([2, 0, 1])), {}),
        ("misc", misc, (f32,), {}),
        ("static", lambda x, n: x * n, (2.0, 3), {"static_argnums": 1}),
        ("donated", lambda x: x + 1, (f32,), {"donate_argnums": 0}),
        ("effects", effects, (f32,), {}),
        ("symbolic", symbolic, (jax.ShapeDtypeStruct((batch, 4), jnp.float32),), {}),
    ]


def _stages(wrapped, args, *, compile=True):
    traced = wrapped.trace(*args)
    lowered = traced.lower()
    texts = {
        "olympuspr": str(traced.olympuspr),
        "olympuspr_source": traced.olympuspr.pretty_print(source_info=True),
        "olympuspr_name_stack": traced.olympuspr.pretty_print(source_info=True, name_stack=True),
        "stablehlo": lowered.as_text(),
        "stablehlo_debug": lowered.as_text(debug_info=True),
        "hlo": lowered.as_text("hlo"),
    }
    if compile:
        texts["compiled"] = lowered.compile().as_text()
    return texts


def local_stage_texts() -> dict[tuple[str, str], str]:
    """Texts of every stage of the programs that run in this process."""
    import olympus
    import olympus.numpy as jnp

    texts = {}
    for name, fun, args, options in _programs():
        # Symbolic shapes lower (`tensor<?x4xf32>`) but do not compile.
        compile = name != "symbolic"
        for stage, text in _stages(olympus.jit(fun, **options), args, compile=compile).items():
            texts[name, stage] = text
    # Complex constants (`dense<(0.000000e+00,1.000000e+00)>`). Olympus's
    # Lowered.as_text() raises on them (naming._rename_op_attributes cannot read
    # a complex DenseElementsAttr), so the StableHLO text here is JAX's own.
    lowered = olympus.jit(lambda x: x * 1j + (2 - 3j)).trace(jnp.ones(3)).lower()
    texts["complex_constant", "stablehlo"] = lowered._jax.as_text()
    texts["complex_constant", "stablehlo_debug"] = lowered._jax.as_text(debug_info=True)
    texts["complex_constant", "hlo"] = lowered.as_text("hlo")
    texts["complex_constant", "compiled"] = lowered.compile().as_text()
    # A lowering for two platforms: one module holding both, chosen by stablehlo.case.
    multi = olympus.jit(lambda x: jnp.sin(x) @ x.T).trace(jnp.ones((3, 4)))
    lowered = multi.lower(lowering_platforms=("cpu", "tpu"))
    texts["multi_platform", "stablehlo_multi"] = lowered.as_text()
    texts["multi_platform", "stablehlo_multi_debug"] = lowered.as_text(debug_info=True)
    return texts


def _sharded_in_this_process() -> dict[str, str]:
    """Sharded and pmap programs; needs 8 host devices (set before importing JAX)."""
    import jax
    import olympus
    import olympus.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P

    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)
    xs = NamedSharding(mesh, P("x", "y"))
    ws = NamedSharding(mesh, P("y", None))

    def layer(x, w):
        h = jnp.tanh(x @ w)
        return h.sum(), jax.lax.with_sharding_constraint(h, NamedSharding(mesh, P("x")))

    f = olympus.jit(layer, in_shardings=(xs, ws))
    args = (jnp.ones((16, 8)), jnp.ones((8, 4)))
    texts = {f"sharded/{k}": v for k, v in _stages(f, args).items()}

    # The same without Shardy: GSPMD's `mhlo.sharding = "{devices=[4,2]<=[8]}"`.
    jax.config.update("jax_use_shardy_partitioner", False)
    try:
        g = olympus.jit(layer, in_shardings=(xs, ws))
        texts.update({f"sharded_gspmd/{k}": v for k, v in _stages(g, args).items()})
    finally:
        jax.config.update("jax_use_shardy_partitioner", True)

    # Collectives in a shard_map: all-gather, collective-permute, all-reduce (pmax).
    def collectives(x):
        y = jax.lax.all_gather(x, "x", tiled=True)
        z = jax.lax.ppermute(x, "x", perm=[(i, (i + 1) % 4) for i in range(4)])
        return y.sum(0, keepdims=True) + z + jax.lax.pmax(x, "y")

    sm = jax.shard_map(collectives, mesh=mesh, in_specs=P("x", "y"), out_specs=P("x", "y"))
    texts.update(
        {f"shard_map/{k}": v for k, v in _stages(olympus.jit(sm), (jnp.ones((8, 4)),)).items()}
    )

    p = olympus.pmap(lambda x: jax.lax.psum(x * 2, "i"), axis_name="i")
    texts.update({f"pmap/{k}": v for k, v in _stages(p, (jnp.ones((8, 3)),)).items()})
    return texts


def sharded_stage_texts(timeout: float = 120) -> dict[tuple[str, str], str]:
    """Runs the sharded programs in a subprocess with 8 host devices."""
    env = dict(os.environ)
    env["XLA_FLAGS"] = (
        env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
    ).strip()
    env["JAX_PLATFORMS"] = "cpu"
    out = subprocess.run(
        [sys.executable, os.path.abspath(__file__), "sharded"],
        env=env,
        capture_output=True,
        text=True,
        timeout=deadline(timeout),
    )
    if out.returncode != 0:
        raise RuntimeError(f"staging the sharded programs failed:\n{out.stderr[-4000:]}")
    raw = json.loads(out.stdout)
    return {tuple(k.split("/", 1)): v for k, v in raw.items()}


@functools.lru_cache(maxsize=None)
def stage_texts() -> dict[tuple[str, str], str]:
    """All texts: ``{(program, stage): text}``."""
    texts = local_stage_texts()
    texts.update(sharded_stage_texts())
    return texts


if __name__ == "__main__":
    if sys.argv[1:] == ["sharded"]:
        json.dump(_sharded_in_this_process(), sys.stdout)
    else:  # write every text to a folder, for looking at them
        folder = sys.argv[1] if len(sys.argv) > 1 else "corpus_out"
        os.makedirs(folder, exist_ok=True)
        for (prog, stage), text in stage_texts().items():
            with open(os.path.join(folder, f"{prog}.{stage}.txt"), "w") as fh:
                fh.write(text)
