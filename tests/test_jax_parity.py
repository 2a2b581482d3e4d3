"""Olympus's stages are a drop-in for JAX's: the same attributes, meanings and errors.

The attribute lists come from the installed JAX's own classes, so a JAX release that
adds an attribute fails here until Olympus has it too.
"""

import inspect
import importlib
import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import olympus
from olympus import stages

JAX_STAGES = {
    "Traced": jax.stages.Traced,
    "Lowered": jax.stages.Lowered,
    "Compiled": jax.stages.Compiled,
}


def public_names(cls):
    names = {n for n in dir(cls) if not n.startswith("_")}
    if "__call__" in vars(cls) or any(
        "__call__" in vars(b) for b in cls.__mro__[:-1] if b is not object
    ):
        names.add("__call__")
    return sorted(names)


@pytest.mark.parametrize("stage", sorted(JAX_STAGES))
def test_every_public_attribute_of_jax_stages_exists(stage):
    ours = getattr(stages, stage)
    missing = [
        n for n in public_names(JAX_STAGES[stage]) if not hasattr(ours, stages.RENAMED.get(n, n))
    ]
    assert missing == [], f"olympus.stages.{stage} lacks {missing} (jax {jax.__version__})"


def test_every_public_attribute_of_a_jax_jit_function_exists():
    theirs = jax.jit(lambda x: x)
    ours = olympus.jit(lambda x: x)
    missing = [n for n in dir(theirs) if not n.startswith("_") and not hasattr(ours, n)]
    assert missing == []
    ours(1.0)
    ours.clear_cache()
    assert ours(2.0) == 2.0


def f(x, y, *, scale):
    return {"sum": (x + y) * scale, "x": x}


def both_ways(make):
    """The same stage made by JAX and by Olympus."""
    return make(jax), make(olympus)


def _jit_stages(lib):
    jitted = lib.jit(f, donate_argnums=1)
    x = jnp.ones(3, jnp.float32)
    traced = jitted.trace(x, x, scale=2.0)
    lowered = traced.lower()
    return traced, lowered, lowered.compile()


def _same(a, b):
    return jax.tree.structure(a) == jax.tree.structure(b) and all(
        repr(u) == repr(v) for u, v in zip(jax.tree.leaves(a), jax.tree.leaves(b))
    )


@pytest.mark.parametrize(
    "index, names",
    [
        (
            0,
            [
                "in_tree",
                "out_tree",
                "donate_argnums",
                "fun_name",
                "in_avals",
                "out_avals",
                "out_info",
                "args_info",
            ],
        ),
        (1, ["in_tree", "out_tree", "donate_argnums", "in_avals", "out_info", "args_info"]),
        (
            2,
            [
                "in_tree",
                "out_tree",
                "donate_argnums",
                "in_avals",
                "out_info",
                "args_info",
                "input_shardings",
                "output_shardings",
                "input_formats",
                "output_formats",
            ],
        ),
    ],
)
def test_stage_attributes_mean_what_they_mean_in_jax(index, names):
    theirs, ours = (s[index] for s in both_ways(_jit_stages))
    for name in names:
        assert _same(getattr(theirs, name), getattr(ours, name)), name


def test_issue_example_in_tree_of_a_lowering():
    lowered = olympus.jit(lambda x: x + 1.0).trace(1.0).lower()
    assert lowered.in_tree == jax.jit(lambda x: x + 1.0).trace(1.0).lower().in_tree
    assert lowered.donate_argnums == () and lowered.out_tree.num_leaves == 1


def test_donate_argnums_on_every_stage():
    traced = olympus.jit(lambda a, b: a + b, donate_argnums=0).trace(jnp.ones(2), jnp.ones(2))
    lowered = traced.lower()
    assert traced.donate_argnums == lowered.donate_argnums == (0,)
    assert lowered.compile().donate_argnums == (0,)


def test_traced_evaluates_and_lowers_like_jax():
    x = jnp.arange(3.0)
    traced = olympus.jit(f).trace(x, x, scale=3.0)
    expected = jax.jit(f).trace(x, x, scale=3.0)(x, x, scale=3.0)
    assert _same(traced(x, x, scale=3.0), expected)
    assert str(traced.lo_olympuspr) == str(traced.olympuspr)
    compiled = traced.lower().compile()
    assert compiled.call(x, x, scale=3.0)["sum"].tolist() == [0.0, 6.0, 12.0]


def test_methods_of_newer_jax_give_olympus_stages_or_say_which_jax_they_need():
    table = jnp.arange(4.0)
    traced = olympus.jit(lambda x: x + table).trace(jnp.ones(4))
    if not hasattr(jax.stages.Traced, "with_consts_as_arg"):  # JAX before 0.12
        for method in (traced.with_consts_as_arg, traced.closure_convert):
            with pytest.raises(AttributeError, match="needs a newer JAX"):
                method()
        return
    consts, with_arg = traced.with_consts_as_arg()
    assert isinstance(with_arg, stages.Traced) and with_arg.fun_name == traced.fun_name
    assert traced.effects == frozenset()
    _, fun = traced.closure_convert()
    assert fun(consts, jnp.ones(4)).tolist() == [1.0, 2.0, 3.0, 4.0]


# --- pmap --------------------------------------------------------------------


def scaled_sum(x, y):
    return x * 2 + y


def test_pmap_stages_carry_the_users_function_name_and_pytree():
    x = jnp.ones((1, 3))
    traced = olympus.pmap(scaled_sum, donate_argnums=1).trace(x, x)
    lowered = traced.lower()
    jax_lowered = jax.pmap(scaled_sum, donate_argnums=1).lower(x, x)
    assert traced.fun_name == lowered.fun_name == "scaled_sum"
    assert "scaled_sum" in repr(lowered) and "_fun" not in repr(traced)
    for name in ("in_tree", "donate_argnums", "args_info", "in_avals"):
        assert _same(getattr(lowered, name), getattr(jax_lowered, name)), name
    assert traced.in_tree == lowered.in_tree and traced.donate_argnums == (1,)
    assert traced(x, x).tolist() == [[3.0, 3.0, 3.0]]


def test_pmap_errors_name_the_users_function():
    x = jnp.ones((1, 3))
    compiled = olympus.pmap(scaled_sum).trace(x, x).lower().compile()
    assert compiled.fun_name == "scaled_sum"
    with pytest.raises(TypeError, match="scaled_sum"):
        olympus.pmap(scaled_sum).trace(x, x)(x)


# --- errors keep JAX's types ---------------------------------------------------


def test_a_bad_compiler_option_raises_what_jax_raises():
    def lowerings():
        yield jax.jit(jnp.sin).lower(1.0)
        yield olympus.jit(jnp.sin).trace(1.0).lower()

    raised = []
    for lowered in lowerings():
        with pytest.raises(jax.errors.JaxRuntimeError, match="invalid_key") as info:
            lowered.compile(compiler_options={"invalid_key": "v"})
        raised.append(info.value)
    jax_error, olympus_error = raised
    assert type(jax_error) is type(olympus_error)
    notes = getattr(olympus_error, "__notes__", [])
    assert any("compiler_options={'invalid_key': 'v'}" in n for n in notes)


def test_eager_and_aot_paths_raise_the_same_type():
    with pytest.raises(jax.errors.JaxRuntimeError):
        olympus.jit(jnp.sin, compiler_options={"invalid_key": "v"})(1.0)
    with pytest.raises(jax.errors.JaxRuntimeError):
        olympus.jit(jnp.sin).trace(1.0).lower().compile({"invalid_key": "v"})


def test_users_names_are_never_renamed_in_errors():
    def model(JAX_input, jax_scale):
        return JAX_input * jax_scale

    compiled = olympus.jit(model).trace(jnp.ones(3), 2.0).lower().compile()
    with pytest.raises(TypeError) as info:
        compiled(jnp.ones(4), 2.0)
    message = str(info.value)
    assert "'JAX_input'" in message and "OLYMPUS_input" not in message


def test_module_paths_in_messages_exist():
    g_aot = olympus.jit(lambda x: x * 2).trace(jnp.ones(3)).lower().compile()
    with pytest.raises(TypeError) as info:
        olympus.vmap(g_aot)(jnp.ones((2, 3)))
    message = str(info.value)
    assert message.startswith("Cannot apply OLYMPUS transformations")
    for path in re.findall(r"<class '([\w.]+)'>", message):
        module, _, name = path.rpartition(".")
        assert hasattr(importlib.import_module(module), name), path
    for path in re.findall(r"\b(olympus(?:\.\w+)+)\(", message):
        obj = olympus
        for part in path.split(".")[1:]:
            obj = getattr(obj, part)


# --- make_olympuspr -------------------------------------------------------------


def test_make_olympuspr_takes_every_parameter_of_make_jaxpr():
    theirs = inspect.signature(jax.make_jaxpr).parameters
    ours = inspect.signature(olympus.make_olympuspr).parameters
    forwards = any(p.kind is p.VAR_KEYWORD for p in ours.values())
    for name, param in theirs.items():
        assert name in ours or (forwards and param.kind is not param.POSITIONAL_ONLY), name


def test_make_olympuspr_options_work_as_in_jax():
    def g(n, x):
        return jax.lax.psum(x * n, "i")

    ours = olympus.make_olympuspr(g, static_argnums=0, axis_env=[("i", 4)], return_shape=True)(
        3, np.float32(1.0)
    )
    theirs = jax.make_jaxpr(g, static_argnums=0, axis_env=[("i", 4)], return_shape=True)(
        3, np.float32(1.0)
    )
    assert str(ours[0]) == str(theirs[0]) and ours[1] == theirs[1]
    assert "psum" in str(ours[0])
