"""Specializations and "why did it recompile?" explanations."""
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
    assert explain(a, b) == ["argument 'x': shape (3,) → (2, 3)",
                             "argument 'y': weak type True → False (a Python scalar traces "
                             "as a weak type)"]
    c = spec(np.ones(3, jnp.bfloat16), 1.0)
    assert explain(a, c) == ["argument 'x': dtype float32 → bfloat16"]


def test_static_values_platforms_and_options():
    a = spec(np.ones(3), 1.0, kw={"n": 2}, static_argnames=("n",))
    b = spec(np.ones(3), 1.0, kw={"n": 3}, static_argnames=("n",), platforms=("tpu",),
             compiler_options={"xla_backend_optimization_level": 0})
    assert explain(a, b) == ["argument 'n': static value 2 → 3",
                             "lowering platforms this machine → tpu",
                             "compiler options {} → {'xla_backend_optimization_level': 0}"]


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
