"""Cross-platform lowering (seed 003): lower for any platform, never run the wrong code."""

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.platforms import PlatformError, local_platform


def per_platform(x):
    return olympus.lax.platform_dependent(
        x,
        cpu=lambda x: x + 1,
        tpu=lambda x: x - 1,
        cuda=lambda x: x * 10,
        default=lambda x: x * 100,
    )


def expected(platform, x):
    """What per_platform(x) gives when it runs on ``platform``."""
    return {"cpu": x + 1, "tpu": x - 1, "cuda": x * 10}.get(platform, x * 100)


# The tests ask JAX where they run, and lower for platforms this machine lacks.
HERE = local_platform()
ABSENT = tuple(p for p in ("tpu", "cuda", "cpu", "rocm") if p != HERE)[:2]


@pytest.fixture(scope="module")
def traced():
    return olympus.jit(per_platform).trace(jnp.float32(1.0))


@pytest.mark.parametrize(
    "platforms", [ABSENT[:1], ABSENT[1:], (HERE, ABSENT[0]), ABSENT], ids=lambda p: "-".join(p)
)
def test_lowering_for_absent_platforms_works(traced, platforms):
    lowered = traced.lower(lowering_platforms=platforms)
    assert lowered.platforms == platforms
    text = lowered.as_text()
    assert text.startswith("module @jit_per_platform")
    if len(platforms) > 1:
        # One program for all of them, choosing by a platform index argument.
        assert "stablehlo.case" in text and "olympus.global_constant" in text


@pytest.mark.parametrize("platforms", [ABSENT[:1], ABSENT[1:], ABSENT], ids=lambda p: "-".join(p))
def test_compiling_without_the_local_platform_is_refused(traced, platforms):
    lowered = traced.lower(lowering_platforms=platforms)
    with pytest.raises(PlatformError) as info:
        lowered.compile()
    message = str(info.value)
    for p in platforms:
        assert repr(p) in message
    assert f"would run it on {HERE!r}" in message


def test_lowering_that_includes_the_local_platform_runs_its_code(traced):
    lowered = traced.lower(lowering_platforms=(HERE, ABSENT[0]))
    assert lowered.compile()(jnp.float32(1.0)) == expected(HERE, 1.0)
    lowered = traced.lower(lowering_platforms=(ABSENT[0], HERE))
    assert lowered.compile()(jnp.float32(5.0)) == expected(HERE, 5.0)


def test_local_lowering_is_unchanged(traced):
    assert traced.lower().compile()(jnp.float32(1.0)) == expected(HERE, 1.0)
    assert traced.lower(lowering_platforms=(HERE,)).compile()(jnp.float32(1.0)) == expected(
        HERE, 1.0
    )


def test_only_names_that_are_not_strings_are_refused_as_in_jax(traced):
    with pytest.raises(TypeError, match="must be strings"):
        traced.lower(lowering_platforms=(3,))
    # JAX lowers for any name (a plugin need not be installed); so does Olympus,
    # and compiling such a lowering here is refused.
    assert traced.lower(lowering_platforms=("tpuu",)).platforms == ("tpuu",)
    with pytest.raises(PlatformError, match="'tpuu'"):
        traced.lower(lowering_platforms=("tpuu",)).compile()
    assert traced.lower(lowering_platforms=()).platforms == (HERE,)


def test_platform_names_are_normalized(traced):
    assert traced.lower(lowering_platforms=("CPU", "TPU")).platforms == ("cpu", "tpu")
    assert traced.lower(lowering_platforms="tpu").platforms == ("tpu",)


def test_cross_lowering_a_real_model(traced):
    def model(w, x):
        return jnp.sum(jnp.tanh(x @ w) ** 2)

    w = np.ones((8, 8), np.float32)
    x = np.ones((4, 8), np.float32)
    lowered = olympus.jit(olympus.grad(model)).trace(w, x).lower(lowering_platforms=ABSENT[:1])
    assert "stablehlo.dot_general" in lowered.as_text()
    with pytest.raises(PlatformError):
        lowered.compile()
