"""Specializations and "why did it recompile?" explanations."""

import jax
import numpy as np

import olympus
import olympus.numpy as jnp
from olympus_jupyter.staging.specialization import Specialization, explain


def f(x, y, n=1):
    return x * y * n


def spec(*args, **kwargs):
    return Specialization.of(f, args, kwargs.pop("kw", None), **kwargs)


def test_same_specialization_needs_nothing_new():
    a = spec(np.ones(3, np.float32), np.ones(3, np.float32))
    b = spec(np.zeros(3, np.float32), np.full(3, 7, np.float32))
    assert explain(a, b) == []


def test_each_property_of_each_argument_is_named():
    a = spec(np.ones(3, np.float32), 1.0)
    b = spec(np.ones((2, 3), np.float32), np.float32(1.0))
    assert explain(a, b) == [
        "argument 'x': shape (3,) → (2, 3)",
        "argument 'y': weak type True → False (a Python scalar traces as a weak type)",
    ]
    c = spec(np.ones(3, jnp.bfloat16), 1.0)
    assert explain(a, c) == ["argument 'x': dtype float32 → bfloat16"]


def test_static_values_platforms_and_options():
    a = spec(np.ones(3), 1.0, kw={"n": 2}, static_argnames=("n",))
    b = spec(
        np.ones(3),
        1.0,
        kw={"n": 3},
        static_argnames=("n",),
        platforms=("tpu",),
        compiler_options={"xla_backend_optimization_level": 0},
    )
    assert explain(a, b) == [
        "argument 'n': static value 2 → 3",
        "lowering platforms this machine → tpu",
        "compiler options {} → {'xla_backend_optimization_level': 0}",
    ]


def test_pytrees_name_their_leaves():
    a = Specialization.of(lambda p, x: x, ({"w": np.ones((2, 2)), "b": np.ones(2)}, 1.0))
    b = Specialization.of(lambda p, x: x, ({"w": np.ones((3, 2)), "b": np.ones(2)}, 1.0))
    assert explain(a, b) == ["argument 'p['w']': shape (2, 2) → (3, 2)"]
    assert a.describe() == "p['b']: f32[2], p['w']: f32[2,2], x: f32[]~"


def test_arguments_that_come_and_go():
    a = Specialization.of(lambda *xs: xs, (np.ones(2),))
    b = Specialization.of(lambda *xs: xs, (np.ones(2), np.ones(2)))
    assert explain(a, b) == ["argument 'args[1]' is new (f32[2])"]
    assert explain(b, a) == ["argument 'args[1]' is gone (was f32[2])"]


def test_sharding_differences_are_named():
    from olympus.sharding import NamedSharding, PartitionSpec as P

    mesh = olympus.sharding.Mesh(np.array(olympus.devices()[:1]), ("x",))
    sharded = olympus.ShapeDtypeStruct((4,), jnp.float32, sharding=NamedSharding(mesh, P("x")))
    replicated = olympus.ShapeDtypeStruct((4,), jnp.float32, sharding=NamedSharding(mesh, P()))
    a = Specialization.of(f, (sharded, 1.0))
    b = Specialization.of(f, (replicated, 1.0))
    assert explain(a, b) == ["argument 'x': sharding P('x') → P()"]


def test_a_tuple_and_a_list_of_the_same_leaves_are_different_programs():
    def f(pair):
        return pair[0] + pair[1]

    x = jnp.ones(3)
    as_tuple = Specialization.of(f, ((x, x),))
    as_list = Specialization.of(f, ([x, x],))
    assert as_tuple != as_list
    assert explain(as_tuple, as_list) == ["argument 'pair': pytree (*, *) → [*, *]"]
    # JAX agrees: the second call compiles again.
    jitted = jax.jit(f)
    jitted((x, x))
    jitted([x, x])
    assert jitted._cache_size() == 2


class Sloppy:
    """Equal to every Sloppy, but hashed by identity."""

    def __eq__(self, other):
        return isinstance(other, Sloppy)

    def __hash__(self):
        return id(self)


def test_static_values_differ_when_jax_takes_them_for_different():
    def f(x, n):
        return x * (2 if isinstance(n, Sloppy) else n)

    x = jnp.ones(3)
    one_int = Specialization.of(f, (x, 1), static_argnums=(1,))
    one_float = Specialization.of(f, (x, 1.0), static_argnums=(1,))
    assert explain(one_int, one_float) == ["argument 'n': static value 1 → 1.0"]
    assert one_int != one_float
    a, b = Sloppy(), Sloppy()
    with_a = Specialization.of(f, (x, a), static_argnums=(1,))
    with_b = Specialization.of(f, (x, b), static_argnums=(1,))
    assert with_a != with_b and explain(with_a, with_b) != []
    jitted = jax.jit(f, static_argnums=1)
    for n in (1, 1.0, a, b):
        jitted(x, n)
    assert jitted._cache_size() == 4  # JAX compiled for each
