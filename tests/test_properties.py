"""Property: a compiled function computes what the function computes eagerly."""

import numpy as np
from hypothesis import given, settings, strategies as st
from hypothesis.extra import numpy as hnp

import olympus
import olympus.numpy as jnp

DTYPES = [np.float32, np.int32, np.int8, np.uint8, np.bool_, np.complex64, np.float16]
FUNCTIONS = {
    "affine": lambda x: 2 * x + x,
    "sum_keep": lambda x: jnp.sum(x, axis=-1, keepdims=True) if x.ndim else x,
    "reverse": lambda x: x[::-1] if x.ndim else x,
    "square_where": lambda x: jnp.where(x == x, x * x, x),
    "transpose_cumsum": lambda x: jnp.cumsum(x.T, axis=0) if x.ndim else x,
}


def arrays():
    return st.sampled_from(DTYPES).flatmap(
        lambda dt: hnp.arrays(
            dt, hnp.array_shapes(min_dims=0, max_dims=3, max_side=5), elements=_elements(dt)
        )
    )


def _elements(dt):
    if dt == np.bool_:
        return st.booleans()
    if np.issubdtype(dt, np.integer):
        info = np.iinfo(dt)
        return st.integers(max(info.min, -50), min(info.max, 50))
    if np.issubdtype(dt, np.complexfloating):
        return st.complex_numbers(
            max_magnitude=100, allow_nan=False, allow_infinity=False, width=64
        )
    return st.floats(-100, 100, width=16 if dt == np.float16 else 32)


@settings(max_examples=60, deadline=None)
@given(x=arrays(), name=st.sampled_from(sorted(FUNCTIONS)))
def test_compiled_equals_eager(x, name):
    fun = FUNCTIONS[name]
    if x.dtype == np.bool_ and name in ("affine", "square_where", "transpose_cumsum"):
        x = x.astype(np.int32)
    expected = fun(jnp.asarray(x))
    spec = olympus.ShapeDtypeStruct(x.shape, x.dtype)
    compiled = olympus.jit(fun).trace(spec).lower().compile()
    got = compiled(x)
    assert got.shape == expected.shape and got.dtype == expected.dtype
    np.testing.assert_allclose(np.asarray(got), np.asarray(expected), rtol=2e-3, atol=1e-3)


@settings(max_examples=20, deadline=None)
@given(shape=hnp.array_shapes(min_dims=1, max_dims=2, max_side=6), seed=st.integers(0, 2**16))
def test_compiled_gradients_equal_eager(shape, seed):
    x = np.random.default_rng(seed).standard_normal(shape).astype(np.float32)
    loss = lambda v: jnp.sum(jnp.tanh(v) ** 2)  # noqa: E731 - a short test function
    expected = olympus.grad(loss)(x)
    got = olympus.jit(olympus.grad(loss)).trace(x).lower().compile()(x)
    np.testing.assert_allclose(got, expected, rtol=1e-5, atol=1e-6)
