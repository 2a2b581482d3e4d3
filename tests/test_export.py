"""Export (seed 003): portable artifacts that round-trip, and blobs that never crash us."""

import collections
import dataclasses
import hashlib
import json
import random
import re
import struct
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import export, naming
from olympus.export import DeserializationError
from olympus.platforms import PlatformError

# This machine's platform, and one it is not (tests run on any platform).
HERE = olympus.platforms.local_platform()
OTHER = "tpu" if HERE != "tpu" else "cpu"


def model(x, y):
    return {"sum": jnp.sin(x) * 2 + y.sum(), "prod": [x @ x.T]}


X = np.arange(12, dtype=np.float32).reshape(4, 3) / 10
Y = np.arange(5, dtype=np.float32)


BRANCHES = {"cpu": lambda x: x + 1, "tpu": lambda x: x - 1}


def other_branch(x):
    return x * 10


def per_platform(x):
    return olympus.lax.platform_dependent(x, **BRANCHES, default=other_branch)


def per_platform_result(x, platform=HERE):
    """What per_platform computes on ``platform``."""
    return BRANCHES.get(platform, other_branch)(x)


@pytest.fixture(scope="module")
def exported():
    return export.export(olympus.jit(model))(X, Y)


@pytest.fixture(scope="module")
def blob(exported):
    return exported.serialize()


def assert_same_tree(actual, expected):
    assert olympus.tree.structure(actual) == olympus.tree.structure(expected)
    for a, e in zip(olympus.tree.leaves(actual), olympus.tree.leaves(expected)):
        np.testing.assert_allclose(np.asarray(a), np.asarray(e), rtol=1e-6, atol=1e-6)


# --- export, serialize, deserialize, call -----------------------------------


def test_round_trip_gives_the_numbers_of_the_eager_function(exported, blob):
    restored = export.deserialize(blob)
    assert isinstance(restored, export.Exported)
    assert_same_tree(restored.call(X, Y), model(X, Y))
    assert_same_tree(exported.call(X, Y), model(X, Y))
    other_x = np.full((4, 3), -1.5, np.float32)
    assert_same_tree(restored.call(other_x, Y), model(other_x, Y))


def test_round_trip_keeps_what_the_export_records(exported, blob):
    restored = export.deserialize(blob)
    for name in (
        "fun_name",
        "platforms",
        "calling_convention_version",
        "uses_global_constants",
        "in_avals",
        "out_avals",
        "in_tree",
        "out_tree",
        "in_shardings_hlo",
        "out_shardings_hlo",
        "nr_devices",
        "module_kept_var_idx",
    ):
        assert getattr(restored, name) == getattr(exported, name), name
    assert restored.fun_name == "model"
    assert restored.platforms == (HERE,)
    assert restored.nr_devices == 1
    assert restored.uses_global_constants is False
    assert restored.in_shardings_hlo == (None, None)
    assert (
        export.minimum_supported_calling_convention_version
        <= restored.calling_convention_version
        <= export.maximum_supported_calling_convention_version
    )
    assert restored.mlir_module() == exported.mlir_module()
    assert restored._jax.mlir_module_serialized == exported._jax.mlir_module_serialized


def test_deserialize_accepts_bytearray_and_memoryview(blob):
    for form in (bytearray(blob), memoryview(blob)):
        assert export.deserialize(form).fun_name == "model"


def test_repr_names_function_types_and_platforms(exported):
    assert repr(exported) == (
        "Exported(fun_name='model', in_avals=(f32[4,3], f32[5]), "
        f"out_avals=(f32[4,4], f32[4,3]), platforms=({HERE!r},), "
        f"calling_convention_version={exported.calling_convention_version})"
    )


def test_static_arguments_are_baked_in():
    f = olympus.jit(lambda x, n: x * n, static_argnums=1)
    exp = export.export(f)(np.ones(3, np.float32), 4)
    restored = export.deserialize(exp.serialize())
    np.testing.assert_allclose(restored.call(np.ones(3, np.float32)), [4, 4, 4])


def test_a_jit_function_of_the_engine_is_accepted():
    import jax

    exp = export.export(jax.jit(lambda x: x + 1))(np.float32(1))
    assert isinstance(exp, export.Exported)
    assert export.deserialize(exp.serialize()).call(np.float32(2)) == 3


# --- shapes --------------------------------------------------------------------


def test_shape_polymorphic_export_serves_every_batch_size():
    def g(x):
        return jnp.tanh(x) @ jnp.ones((4, 2), np.float32)

    f = olympus.jit(g)
    spec = olympus.ShapeDtypeStruct(export.symbolic_shape("b, 4"), np.float32)
    exp = export.export(f)(spec)
    assert repr(exp.in_avals[0]) == "ShapedArray(float32[b,4])"
    assert exp.uses_global_constants
    restored = export.deserialize(exp.serialize())
    for batch in (2, 7):
        x = np.linspace(-1, 1, batch * 4, dtype=np.float32).reshape(batch, 4)
        out = restored.call(x)
        assert out.shape == (batch, 2)
        np.testing.assert_allclose(out, g(x), rtol=1e-6, atol=1e-6)


def test_wrong_shape_for_a_symbolic_export_is_refused():
    spec = olympus.ShapeDtypeStruct(export.symbolic_shape("b, 4"), np.float32)
    exp = export.export(olympus.jit(lambda x: x * 2))(spec)
    with pytest.raises(ValueError):
        exp.call(np.ones((3, 5), np.float32))


def test_symbolic_shape_parses_text_and_refuses_other_types():
    b, four = export.symbolic_shape("b, 4")
    assert export.is_symbolic_dim(b) and four == 4
    with pytest.raises(TypeError, match="expects a string such as 'b, 4'"):
        export.symbolic_shape(3)
    with pytest.raises(ValueError, match="syntax error"):
        export.symbolic_shape("b, ,4")


# --- platforms -----------------------------------------------------------------


def test_multi_platform_export_runs_this_platforms_code_here():
    exp = export.export(olympus.jit(per_platform), platforms=(HERE, OTHER))(np.float32(0))
    assert exp.platforms == (HERE, OTHER)
    assert exp.uses_global_constants  # the platform index is a global constant
    assert exp.call(np.float32(5)) == per_platform_result(5.0)
    restored = export.deserialize(exp.serialize())
    assert restored.platforms == (HERE, OTHER)
    assert restored.call(np.float32(5)) == per_platform_result(5.0)
    text = exp.mlir_module()
    assert 'olympus.global_constant = "_platform_index"' in text


def test_platform_names_are_spelled_as_jax_spells_them():
    exp = export.export(olympus.jit(per_platform), platforms=(HERE.upper(), f" {OTHER} "))(
        np.float32(0)
    )
    assert exp.platforms == (HERE, OTHER)


def test_export_for_a_plugin_platform_works_and_never_runs_here():
    """PJRT plugins have platform names of their own, JAX lowers for any of them."""
    exp = export.export(olympus.jit(per_platform), platforms=(HERE, "my_plugin"))(np.float32(0))
    assert exp.platforms == (HERE, "my_plugin")
    restored = export.deserialize(exp.serialize())
    assert restored.platforms == (HERE, "my_plugin")
    assert restored.call(np.float32(5)) == per_platform_result(5.0)

    plugin_only = export.deserialize(
        export.export(olympus.jit(per_platform), platforms="my_plugin")(np.float32(0)).serialize()
    )
    assert plugin_only.platforms == ("my_plugin",)
    with pytest.raises(PlatformError, match="exported for 'my_plugin'"):
        plugin_only.call(np.float32(5))
    lowered = (
        olympus.jit(per_platform).trace(np.float32(0)).lower(lowering_platforms=("my_plugin",))
    )
    assert lowered.platforms == ("my_plugin",)
    with pytest.raises(PlatformError, match="lowered for 'my_plugin'"):
        lowered.compile()


def outcome(fn):
    """('ok', result) or ('error', the exception), for comparing with the engine."""
    try:
        return "ok", fn()
    except Exception as e:  # noqa: BLE001 - any error, compared with the engine's
        return "error", e


@pytest.mark.parametrize(
    "platforms",
    [
        ("my_plugin",),
        ("METAL",),
        ("neuron",),
        ("oneapi",),
        ("interpreter", HERE),
        (HERE, OTHER),
        (HERE, HERE),
        (),
        ("gpu",),
        ("GPU", HERE),
    ],
    ids=repr,
)
def test_platforms_are_accepted_and_refused_as_jax_does(platforms):
    x = np.ones(3, np.float32)
    # Olympus reads names case-insensitively ('GPU' is 'gpu'); JAX, as given.
    engine = outcome(
        lambda: jax.export.export(jax.jit(jnp.sin), platforms=tuple(p.lower() for p in platforms))(
            x
        )
    )
    ours = outcome(lambda: export.export(olympus.jit(jnp.sin), platforms=platforms)(x))
    if engine[0] == "ok":
        assert ours[0] == "ok", ours[1]
        restored = export.deserialize(ours[1].serialize())
        assert restored.platforms == ours[1].platforms
        if HERE in restored.platforms:
            np.testing.assert_allclose(restored.call(x), np.sin(x), rtol=1e-6)
        else:  # never another platform's code
            with pytest.raises(PlatformError, match="Cannot call the export of 'sin' here"):
                restored.call(x)
    else:
        assert ours[0] == "error"
        assert isinstance(ours[1], type(engine[1])), (ours[1], engine[1])
        assert isinstance(ours[1], PlatformError)


def test_gpu_means_this_machines_gpu_and_is_refused_without_one():
    f = olympus.jit(lambda x: x + 1)
    if HERE in ("cuda", "rocm"):
        assert export.export(f, platforms="gpu")(np.float32(0)).platforms == (HERE,)
        return
    with pytest.raises(RuntimeError) as info:  # what the engine raises
        export.export(f, platforms=("gpu",))
    assert isinstance(info.value, PlatformError)
    message = str(info.value)
    assert "platforms names 'gpu'" in message and "platforms=('cuda',)" in message
    with pytest.raises(RuntimeError, match="lowering_platforms=\\('cuda',\\)"):
        f.trace(np.float32(0)).lower(lowering_platforms=("gpu",))


def test_platforms_that_are_not_names_are_type_errors():
    with pytest.raises(TypeError, match=r"entries must be strings, .*; got 3 \(int\)"):
        export.export(olympus.jit(per_platform), platforms=(HERE, 3))
    with pytest.raises(TypeError, match="must be a tuple of platform names"):
        export.export(olympus.jit(per_platform), platforms=3)
    # The engine takes them when exporting, and refuses them when serializing.
    engine = jax.export.export(jax.jit(jnp.sin), platforms=(3,))(np.float32(0))
    with pytest.raises(TypeError):
        engine.serialize()


def test_donation_for_platforms_that_differ_on_donation_is_not_implemented():
    """The engine's NotImplementedError stays one (not a ValueError), in Olympus's words."""
    x = np.ones(3, np.float32)
    platforms = (HERE, "interpreter")  # a plugin without donation
    engine = outcome(
        lambda: jax.export.export(jax.jit(lambda x: x * 2, donate_argnums=0), platforms=platforms)(
            x
        )
    )
    ours = outcome(
        lambda: export.export(olympus.jit(lambda x: x * 2, donate_argnums=0), platforms=platforms)(
            x
        )
    )
    assert ours[0] == engine[0]
    if engine[0] == "error":
        assert type(ours[1]) is type(engine[1])
        assert str(ours[1]) == naming.olympus_words(str(engine[1]))
    if HERE in ("cpu", "cuda", "rocm", "tpu"):  # platforms with donation
        assert isinstance(ours[1], NotImplementedError)
        assert "support donation" in str(ours[1])


def test_code_for_a_platform_without_rules_is_not_implemented_and_names_it():
    def two_platforms(x):
        return olympus.lax.platform_dependent(x, cpu=lambda x: x + 1, tpu=lambda x: x - 1)

    with pytest.raises(NotImplementedError) as info:  # as JAX raises it
        export.export(olympus.jit(two_platforms), platforms=(HERE, "tpux"))(np.float32(1))
    assert "not found for platform" in str(info.value)
    assert "no platform named 'tpux' is known in this process" in "".join(info.value.__notes__)


def test_export_for_another_platform_only_refuses_to_run_here():
    exp = export.export(olympus.jit(per_platform), platforms=(OTHER,))(np.float32(0))
    assert exp.platforms == (OTHER,)
    restored = export.deserialize(exp.serialize())
    for e in (exp, restored):
        with pytest.raises(PlatformError) as info:
            e.call(np.float32(5))
        message = str(info.value)
        assert f"exported for {OTHER!r}" in message
        assert f"this call runs on {HERE!r}" in message
        assert f"platforms=({OTHER!r}, {HERE!r})" in message  # how to fix it
        assert isinstance(info.value, ValueError)


def test_default_export_platform_is_this_machines():
    assert export.default_export_platform() == olympus.platforms.local_platform()
    assert export.export(olympus.jit(per_platform))(np.float32(0)).platforms == (
        export.default_export_platform(),
    )


# --- what users read -------------------------------------------------------------


def test_mlir_module_speaks_olympus(exported):
    text = exported.mlir_module()
    assert text.startswith("module @jit_model")
    assert "olympus.result_info = \"result['sum']\"" in text
    assert "olympus.uses_shape_polymorphism = false" in text
    assert "jax" not in text
    assert "loc(" not in text
    assert "loc(" in exported.mlir_module(debug_info=True)


def test_mlir_module_of_a_polymorphic_export_has_no_engine_names():
    spec = olympus.ShapeDtypeStruct(export.symbolic_shape("b, 4"), np.float32)
    text = export.export(olympus.jit(lambda x: x * 2), platforms=(HERE, OTHER))(spec).mlir_module()
    assert 'olympus.global_constant = "b"' in text
    assert "@_wrapped_olympus_export_main" in text
    assert not re.search(r"\bjax\.\w+\s*=", text)  # no jax.* attribute names
    assert "_jax_" not in text


def test_exporting_a_plain_function_says_how_to_wrap_it():
    def predict(x):
        return x * 2

    with pytest.raises(TypeError) as info:
        export.export(predict)
    message = str(info.value)
    assert "plain function 'predict'" in message
    assert "olympus.export.export(olympus.jit(predict))" in message


@pytest.mark.parametrize(
    "make, expected",
    [
        (lambda: olympus.pmap(lambda x: x), "cannot export an olympus.pmap function"),
        (lambda: olympus.jit(lambda x: x).trace(1.0), "got an olympus.stages.Traced"),
        (lambda: olympus.jit(lambda x: x).trace(1.0).lower(), "got an olympus.stages.Lowered"),
        (
            lambda: olympus.jit(lambda x: x).trace(1.0).lower().compile(),
            "got an olympus.stages.Compiled",
        ),
        (lambda: export.export(olympus.jit(lambda x: x))(1.0), "already exported"),
        (lambda: 42, "got int 42"),
    ],
)
def test_exporting_anything_but_a_jit_function_is_refused(make, expected):
    with pytest.raises(TypeError) as info:
        export.export(make())
    assert expected in str(info.value)
    how_to_fix = ("olympus.export.export(olympus.jit(f", "exp.serialize()")
    assert any(fix in str(info.value) for fix in how_to_fix)


def test_disabled_checks_must_be_safety_checks():
    with pytest.raises(TypeError, match="DisabledSafetyCheck"):
        export.export(olympus.jit(per_platform), disabled_checks=("platform",))
    exp = export.export(
        olympus.jit(per_platform), disabled_checks=[export.DisabledSafetyCheck.platform()]
    )(np.float32(0))
    assert exp.disabled_safety_checks == (export.DisabledSafetyCheck.platform(),)


# --- calling inside programs -------------------------------------------------------


def test_call_composes_with_jit_and_grad():
    sq = export.export(olympus.jit(lambda x: (x**2).sum()))(np.ones(3, np.float32))
    x = np.arange(3, dtype=np.float32)
    assert olympus.jit(lambda x: sq.call(x) + 1)(x) == 6.0
    np.testing.assert_allclose(olympus.grad(sq.call)(x), 2 * x)
    restored = export.deserialize(sq.serialize(vjp_order=1))
    assert restored.has_vjp()
    np.testing.assert_allclose(olympus.grad(restored.call)(x), 2 * x)
    np.testing.assert_allclose(olympus.jit(olympus.grad(restored.call))(x), 2 * x)


def test_deserialized_without_vjp_says_how_to_keep_it():
    sq = export.export(olympus.jit(lambda x: (x**2).sum()))(np.ones(3, np.float32))
    restored = export.deserialize(sq.serialize())
    assert not restored.has_vjp()
    with pytest.raises(ValueError, match=r"serialize\(vjp_order=1\)"):
        restored.vjp()
    with pytest.raises(ValueError, match=r"Cannot differentiate the export of '<lambda>'"):
        olympus.grad(restored.call)(np.ones(3, np.float32))
    assert restored.call(np.ones(3, np.float32)) == 3.0


def test_vmap_of_an_export_says_what_to_do_instead(exported):
    with pytest.raises(NotImplementedError) as info:
        olympus.vmap(exported.call)(X[None], Y[None])
    assert "olympus.jit(olympus.vmap(f))" in str(info.value)


Point = collections.namedtuple("Point", ["x", "y"])
export.register_namedtuple_serialization(Point, serialized_name="tests.test_export.Point")


def test_registered_namedtuples_round_trip():
    f = olympus.jit(lambda p: Point(p.y, p.x * 2))
    exp = export.export(f)(Point(np.float32(1), np.float32(2)))
    restored = export.deserialize(exp.serialize())
    out = restored.call(Point(np.float32(3), np.float32(4)))
    assert isinstance(out, Point) and out.x == 4 and out.y == 6


class Measured:
    """A custom pytree node whose unflatten checks its children, as many do."""

    def __init__(self, value, unit):
        self.value, self.unit = value, unit


UNFLATTENED = []  # the children Measured's unflatten was given, call after call


def _unflatten_measured(unit, children):
    UNFLATTENED.append(children)
    (value,) = children
    if len(value.shape) > 2:  # reads the child's shape
        raise ValueError("Measured holds vectors or matrices")
    return Measured(value, unit)


olympus.tree_util.register_pytree_node(
    Measured, lambda m: ((m.value,), m.unit), _unflatten_measured
)
export.register_pytree_node_serialization(
    Measured,
    serialized_name="tests.test_export.Measured",
    serialize_auxdata=str.encode,
    deserialize_auxdata=bytes.decode,
)


def test_a_custom_pytree_that_reads_its_childrens_shapes_round_trips():
    f = olympus.jit(lambda m: Measured(m.value * 2, m.unit))
    blob = export.export(f)(Measured(np.ones(3, np.float32), "m")).serialize()
    engine = outcome(lambda: jax.export.deserialize(bytearray(blob[export.HEADER_SIZE :])))
    ours = outcome(lambda: export.deserialize(blob))
    if engine[0] == "error":
        # This JAX rebuilds the structure with 0.0 for every array (JAX 0.9): it
        # cannot read the blob either, and Olympus says why, not "corrupted".
        assert type(ours[1]) is type(engine[1])
        assert any("custom pytree" in n for n in getattr(ours[1], "__notes__", []))
        return
    assert ours[0] == "ok", ours[1]
    out = ours[1].call(Measured(np.arange(3, dtype=np.float32), "m"))
    assert isinstance(out, Measured) and out.unit == "m"
    np.testing.assert_allclose(out.value, [0, 2, 4])


def test_deserialize_runs_no_more_pytree_code_than_the_engine():
    """Checking a blob's structure never calls the user's unflatten on made-up leaves."""
    f = olympus.jit(lambda m: m.value.sum())
    blob = export.export(f)(Measured(np.ones((2, 2), np.float32), "kg")).serialize()
    UNFLATTENED.clear()
    try:
        jax.export.deserialize(bytearray(blob[export.HEADER_SIZE :]))
    except AttributeError:  # JAX 0.9 gives it 0.0 for every array
        pass
    by_the_engine = len(UNFLATTENED)
    UNFLATTENED.clear()
    try:
        export.deserialize(blob)
    except AttributeError:
        pass
    assert len(UNFLATTENED) == by_the_engine
    assert not any(isinstance(c, int) for children in UNFLATTENED for c in children)


def test_an_unregistered_custom_pytree_says_how_to_register_it():
    class Unit:
        def __init__(self, v):
            self.v = v

    olympus.tree_util.register_pytree_node(Unit, lambda u: ((u.v,), None), lambda _, c: Unit(*c))
    exp = export.export(olympus.jit(lambda u: u.v + 1))(Unit(np.float32(1)))
    with pytest.raises(ValueError, match="unregistered type"):  # the engine's words
        exp.serialize()
    blob = export.export(olympus.jit(lambda m: m.value + 1))(
        Measured(np.float32(1), "s")
    ).serialize()
    payload = bytearray(blob[export.HEADER_SIZE :])
    name = b"tests.test_export.Measured"
    payload = bytes(payload).replace(name, b"tests.test_export.Measurex")
    message = reject(
        export.MAGIC + blob[8:20] + hashlib.sha256(payload).digest() + payload,
        "serialized as 'tests.test_export.Measurex'",
        "serialized_name='tests.test_export.Measurex'",
    )
    assert "incompatible version" not in message


def test_user_names_with_jax_words_survive_in_export_errors():
    a = olympus.ShapeDtypeStruct(export.symbolic_shape("b"), np.float32)
    b = olympus.ShapeDtypeStruct(export.symbolic_shape("b"), np.float32)  # another scope

    def JAX_model(d):
        return d["jax.export JAX"] * 2 + d["jax.jit"].sum()

    with pytest.raises(ValueError) as info:
        export.export(olympus.jit(JAX_model))({"jax.export JAX": a, "jax.jit": b})
    message = str(info.value)
    assert "when exporting JAX_model" in message
    assert "args[0]['jax.export JAX']" in message and "args[0]['jax.jit']" in message
    assert __file__ in message  # where the shapes were made, as the engine says

    class JAXBox:
        def __init__(self, v):
            self.v = v

    JAXBox.__module__, JAXBox.__qualname__ = "my_jax.export_utils", "JAXBox"
    olympus.tree_util.register_pytree_node(
        JAXBox, lambda x: ((x.v,), None), lambda _, c: JAXBox(*c)
    )
    exp = export.export(olympus.jit(lambda box: box.v * 2))(JAXBox(np.float32(1)))
    with pytest.raises(ValueError) as info:
        exp.serialize()
    assert "<class 'my_jax.export_utils.JAXBox'>" in str(info.value)
    assert str(info.value).startswith("Cannot serialize '<lambda>': ")


def test_engine_errors_are_reworded_in_place_and_users_errors_not_at_all():
    engine = NotImplementedError("Argument 'JAX_x' is not a valid JAX type for jax.jit")
    assert export._in_olympus_words(engine) is engine  # same object, type, traceback
    assert str(engine) == "Argument 'JAX_x' is not a valid OLYMPUS type for olympus.jit"

    def users_code():
        raise ValueError("my JAX model failed in jax.jit")

    try:
        users_code()
    except ValueError as e:
        assert export._in_olympus_words(e, failed="Cannot serialize 'f'") is e
        assert str(e) == "my JAX model failed in jax.jit"
        assert e.__notes__ == [
            "Olympus: Cannot serialize 'f': the error above was raised by the program's own code."
        ]


class AuxError(ValueError):
    """A user's error type whose constructor takes more than a message."""

    def __init__(self, field, reason):
        super().__init__(f"{field}: {reason} (see jax.export)")
        self.field = field


class Strict:
    def __init__(self, v):
        self.v = v


def _refuse(aux):
    raise AuxError("unit", "cannot be serialized")


olympus.tree_util.register_pytree_node(Strict, lambda s: ((s.v,), "aux"), lambda _, c: Strict(*c))
export.register_pytree_node_serialization(
    Strict,
    serialized_name="tests.test_export.Strict",
    serialize_auxdata=_refuse,
    deserialize_auxdata=bytes.decode,
)


def test_errors_keep_their_type_and_attributes():
    exp = export.export(olympus.jit(lambda s: s.v))(Strict(np.float32(1)))
    with pytest.raises(AuxError) as info:
        exp.serialize()
    assert type(info.value) is AuxError and info.value.field == "unit"
    assert str(info.value) == "unit: cannot be serialized (see jax.export)"  # the user's words
    assert "Cannot serialize '<lambda>'" in "".join(info.value.__notes__)


# --- the envelope --------------------------------------------------------------


def test_envelope_layout(blob):
    magic, version, flags, length, digest = struct.unpack_from(">8sHHQ32s", blob)
    assert magic == b"OLYMPUSX" == export.MAGIC
    assert version == export.FORMAT_VERSION == 1
    assert flags == 0
    assert export.HEADER_SIZE == 52
    payload = blob[52:]
    assert length == len(payload)
    assert digest == hashlib.sha256(payload).digest()


def test_a_bare_engine_payload_is_read_best_effort(blob):
    restored = export.deserialize(blob[export.HEADER_SIZE :])
    assert_same_tree(restored.call(X, Y), model(X, Y))


def reject(data, *fragments):
    with pytest.raises(DeserializationError) as info:
        export.deserialize(data)
    for fragment in fragments:
        assert fragment in str(info.value)
    return str(info.value)


@pytest.mark.parametrize("cut", [1, 7, 8, 30, 51, 52, 53, 400, -1])
def test_truncated_blobs_are_rejected(blob, cut):
    reject(blob[:cut], "truncated")


def test_empty_and_random_bytes_are_rejected():
    reject(b"", "empty")
    rng = random.Random(1)
    for size in (1, 16, 52, 200, 3000):
        reject(rng.randbytes(size))
    reject(bytes(100))


@pytest.mark.parametrize("where", [60, 200, 700, -10])
def test_flipped_payload_bytes_are_caught_by_the_checksum(blob, where):
    data = bytearray(blob)
    data[where] ^= 0x40
    reject(bytes(data), "corrupted", "SHA-256")


def test_damaged_header_fields_are_named(blob):
    data = bytearray(blob)
    data[9] = 2  # format version
    reject(bytes(data), "format version 2", "reads version 1")
    data = bytearray(blob)
    data[11] = 1  # reserved flags
    reject(bytes(data), "reserved")
    data = bytearray(blob)
    data[19] ^= 1  # length
    reject(bytes(data), "payload")
    data = bytearray(blob)
    data[25] ^= 1  # digest
    reject(bytes(data), "SHA-256")
    data = bytearray(blob)
    data[0] = ord("X")  # magic: read as a bare payload, which fails
    reject(bytes(data), "does not start with the Olympus export header")


def test_concatenated_blobs_are_rejected(blob):
    reject(blob + blob, "unexpected bytes after")


def test_a_checksummed_payload_that_lies_about_its_types_is_rejected(exported):
    lying = dataclasses.replace(
        exported._jax,
        in_avals=(exported._jax.in_avals[0].update(shape=(3, 3)), exported._jax.in_avals[1]),
    )
    message = reject(export.Exported(lying).serialize(), "passed its checksum")
    assert "takes argument 0 as tensor<4x3xf32>, but f32[3,3] is recorded" in message
    future = dataclasses.replace(exported._jax, calling_convention_version=99)
    reject(export.Exported(future).serialize(), "calling convention version 99")


def test_wrong_input_types_are_type_errors():
    with pytest.raises(TypeError, match=r"open\(path, 'rb'\)"):
        export.deserialize("OLYMPUSX...")
    with pytest.raises(TypeError, match="got NoneType"):
        export.deserialize(None)


# --- fuzzing, in a process of its own ---------------------------------------------

FUZZ = textwrap.dedent(r"""
    import json, random, sys
    import numpy as np
    import olympus, olympus.numpy as jnp
    from olympus import export
    from olympus.platforms import PlatformError

    export.blob_checks.RAW_CHECK_TIMEOUT_S = 10.0
    f = olympus.jit(lambda x, y: {"a": jnp.sin(x) * 2 + y.sum(), "b": [x @ x.T]})
    exp = export.export(f)(np.ones((4, 3), np.float32), np.arange(5, dtype=np.float32))
    blob = exp.serialize()
    raw = blob[export.HEADER_SIZE:]
    rng = random.Random(20240613)

    def mutate(data):
        while True:
            b = bytearray(data)
            kind = rng.choice(["truncate", "flip", "splice", "insert", "overwrite"])
            if kind == "truncate":
                b = b[:rng.randrange(len(b))]
            elif kind == "flip":
                for _ in range(rng.randint(1, 8)):
                    b[rng.randrange(len(b))] ^= 1 << rng.randrange(8)
            elif kind == "splice":
                p, n = rng.randrange(len(b)), rng.randint(1, 64)
                b[p:p + n] = rng.randbytes(n)
            elif kind == "insert":
                p = rng.randrange(len(b))
                b[p:p] = rng.randbytes(rng.randint(1, 32))
            else:
                b[rng.randrange(len(b))] = rng.randrange(256)
            if bytes(b) != data:
                return kind, bytes(b)

    variants = [("envelope", "truncate", blob[:n]) for n in range(export.HEADER_SIZE + 1)]
    variants += [("envelope", "flip", blob[:i] + bytes([blob[i] ^ 0x80]) + blob[i + 1:])
                 for i in range(export.HEADER_SIZE)]
    variants += [("envelope",) + mutate(blob) for _ in range(300)]
    variants += [("raw",) + mutate(raw) for _ in range(40)]

    counts, failures = {}, []
    for i, (source, kind, data) in enumerate(variants):
        try:
            restored = export.deserialize(data)
        except export.DeserializationError:
            outcome = "rejected"
        except Exception as e:
            outcome = "failed"
            failures.append([i, source, kind, "deserialize raised " + type(e).__name__,
                             str(e)[:300]])
        else:
            try:
                args, kwargs = restored.in_tree.unflatten(
                    [np.zeros(a.shape, a.dtype) for a in restored.in_avals])
                out = restored.call(*args, **kwargs)
                shapes = [x.shape for x in olympus.tree.leaves(out)]
                assert shapes == [a.shape for a in restored.out_avals], shapes
                outcome = "accepted and callable"
            except PlatformError:
                outcome = "accepted, for another platform"
            except Exception as e:
                outcome = "failed"
                failures.append([i, source, kind, "call raised " + type(e).__name__, str(e)[:300]])
        key = source + ": " + outcome
        counts[key] = counts.get(key, 0) + 1
    print(json.dumps({"total": len(variants), "counts": counts, "failures": failures}))
""")


def test_fuzzed_blobs_never_crash_the_process():
    proc = subprocess.run([sys.executable, "-c", FUZZ], capture_output=True, text=True, timeout=240)
    assert proc.returncode == 0, (
        f"the fuzzing process died with status {proc.returncode} (negative: a signal)\n"
        f"{proc.stderr[-3000:]}"
    )
    report = json.loads(proc.stdout.strip().splitlines()[-1])
    assert report["failures"] == []
    counts = report["counts"]
    assert sum(counts.values()) == report["total"] == 53 + 52 + 300 + 40
    # Every damaged envelope is caught before the payload is read.
    assert counts["envelope: rejected"] == 53 + 52 + 300
    assert counts.get("raw: rejected", 0) > 0
    assert set(counts) <= {
        "envelope: rejected",
        "raw: rejected",
        "raw: accepted and callable",
        "raw: accepted, for another platform",
    }


def spy_on_child_processes(monkeypatch) -> list:
    calls = []
    real = export.blob_checks.subprocess.run

    def run(*args, **kwargs):
        calls.append(args)
        return real(*args, **kwargs)

    monkeypatch.setattr(export.blob_checks.subprocess, "run", run)
    return calls


def test_a_forged_envelope_around_crafted_bytecode_is_read_in_isolation(exported, monkeypatch):
    # Anyone can wrap bytes of their choosing in an envelope with a valid checksum.
    crafted = exported._jax.mlir_module_serialized[:24] + bytes(range(256)) * 8
    forged = export.Exported(
        dataclasses.replace(exported._jax, mlir_module_serialized=crafted)
    ).serialize()
    assert forged[:8] == export.MAGIC
    children = spy_on_child_processes(monkeypatch)
    reject(forged, "passed its checksum", "StableHLO module")
    assert len(children) == 1  # the bytecode was read in a separate process first


def test_only_trusted_blobs_are_read_in_this_process(blob, monkeypatch):
    children = spy_on_child_processes(monkeypatch)
    export.deserialize(blob)
    assert len(children) == 1
    restored = export.deserialize(blob, trusted=True)
    assert len(children) == 1
    assert_same_tree(restored.call(X, Y), model(X, Y))
