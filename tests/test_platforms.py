"""Cross-platform lowering (seed 003): lower for any platform, never run the wrong code."""
import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.platforms import PlatformError


def per_platform(x):
    return olympus.lax.platform_dependent(
        x, cpu=lambda x: x + 1, tpu=lambda x: x - 1, cuda=lambda x: x * 10)


@pytest.fixture(scope="module")
def traced():
    return olympus.jit(per_platform).trace(jnp.float32(1.0))


@pytest.mark.parametrize("platforms", [("tpu",), ("cuda",), ("cpu", "tpu"), ("tpu", "cuda")])
def test_lowering_for_absent_platforms_works(traced, platforms):
    lowered = traced.lower(lowering_platforms=platforms)
    assert lowered.platforms == platforms
    text = lowered.as_text()
    assert text.startswith("module @jit_per_platform")
    if len(platforms) > 1:
        # One program for all of them, choosing by a platform index argument.
        assert "stablehlo.case" in text and "olympus.global_constant" in text


@pytest.mark.parametrize("platforms", [("tpu",), ("cuda",), ("tpu", "cuda")])
def test_compiling_without_the_local_platform_is_refused(traced, platforms):
    lowered = traced.lower(lowering_platforms=platforms)
    with pytest.raises(PlatformError) as info:
        lowered.compile()
    message = str(info.value)
    for p in platforms:
        assert repr(p) in message
    assert "would run it on 'cpu'" in message


def test_lowering_that_includes_the_local_platform_runs_its_code(traced):
    lowered = traced.lower(lowering_platforms=("cpu", "tpu"))
    compiled = lowered.compile()
    assert compiled(jnp.float32(1.0)) == 2.0  # the cpu branch: x + 1
    lowered = traced.lower(lowering_platforms=("tpu", "cpu"))
    assert lowered.compile()(jnp.float32(5.0)) == 6.0


def test_local_lowering_is_unchanged(traced):
    assert traced.lower().compile()(jnp.float32(1.0)) == 2.0
    assert traced.lower(lowering_platforms=("cpu",)).compile()(jnp.float32(1.0)) == 2.0


@pytest.mark.parametrize("bad, message", [
    (("tpuu",), "Unknown lowering platform 'tpuu'"),
    ((), "empty"),
    (("cpu", "cpu"), "listed twice"),
    ((3,), "must be strings"),
])
def test_bad_platform_names_are_clear_errors(traced, bad, message):
    with pytest.raises(PlatformError, match=message):
        traced.lower(lowering_platforms=bad)


def test_platform_names_are_normalized(traced):
    assert traced.lower(lowering_platforms=("CPU", "TPU")).platforms == ("cpu", "tpu")
    assert traced.lower(lowering_platforms="tpu").platforms == ("tpu",)


def test_cross_lowering_a_real_model(traced):
    def model(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)
    w = np.ones((8, 8), np.float32)
    x = np.ones((4, 8), np.float32)
    lowered = olympus.jit(olympus.grad(model)).trace(w, x).lower(lowering_platforms=("cuda",))
    assert "stablehlo.dot_general" in lowered.as_text()
    with pytest.raises(PlatformError):
        lowered.compile()
