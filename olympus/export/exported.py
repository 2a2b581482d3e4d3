"""The exported function: :class:`Exported`, and :func:`export` and :func:`deserialize`
that make one.

:func:`export` lowers an ``olympus.jit`` function for chosen platforms;
:func:`deserialize` reads back what :meth:`Exported.serialize` wrote, through the
envelope (:mod:`olympus.export.blob_format`) and the checks
(:mod:`olympus.export.blob_checks`). Errors are worded by
:mod:`olympus.export.error_words`.

>>> import olympus, numpy as np
>>> exp = export(olympus.jit(lambda x: x + 1))(np.float32(1))
>>> deserialize(exp.serialize()).call(np.float32(2))
Array(3., dtype=float32)
"""

from __future__ import annotations

import functools
from collections.abc import Callable, Sequence

import jax
from jax import export as _jax_export

from olympus import jax_compat, naming, stages
from olympus import platforms as _platforms
from olympus.errors import boundary
from olympus.export.blob_checks import Invalid, Unregistered, read_payload
from olympus.export.blob_format import MAGIC, DeserializationError, open_envelope, seal
from olympus.export.error_words import (
    add_note,
    in_olympus_words,
    raised_by_user_code,
    short_aval,
    translate_call_error,
)

__all__ = ["Exported", "export", "deserialize", "DisabledSafetyCheck", "default_export_platform"]

# Taken unchanged: it describes safety checks, not Olympus objects.
DisabledSafetyCheck = _jax_export.DisabledSafetyCheck


class Exported:
    """A function lowered to StableHLO for chosen platforms, ready to serialize or call.

    Made by :func:`export` or :func:`deserialize`. ``call`` runs it (also inside
    ``olympus.jit`` and ``olympus.grad``); ``serialize`` gives bytes for
    :func:`deserialize`; ``mlir_module()`` shows the program.

    >>> import olympus, numpy as np
    >>> exp = olympus.export.export(olympus.jit(lambda x: x * 2))(np.ones(3, np.float32))
    >>> exp  # platforms: this machine's, e.g. ('cpu',)
    Exported(fun_name='<lambda>', in_avals=(f32[3],), out_avals=(f32[3],), platforms=(...,), calling_convention_version=...)
    >>> exp.platforms == (olympus.export.default_export_platform(),)
    True
    >>> exp.call(np.arange(3, dtype=np.float32))
    Array([0., 2., 4.], dtype=float32)
    """

    __slots__ = ("_jax", "_callee", "__weakref__")

    def __init__(self, jax_exported):
        if not isinstance(jax_exported, _jax_export.Exported):
            raise TypeError(
                f"Exported wraps the engine's exported function; got "
                f"{type(jax_exported).__name__}. Make one with "
                f"olympus.export.export(olympus.jit(f))(*args) or "
                f"olympus.export.deserialize(blob)."
            )
        self._jax = jax_exported
        # What `call` runs: without a VJP, differentiating it says how to get one.
        self._callee = (
            jax_exported
            if jax_exported.has_vjp()
            else (
                jax_compat.exported_with_get_vjp(
                    jax_exported, functools.partial(_missing_vjp, jax_exported.fun_name)
                )
            )
        )

    # What the program is and how to call it -------------------------------
    @property
    def fun_name(self) -> str:
        """The name of the exported function (for messages)."""
        return self._jax.fun_name

    @property
    def platforms(self) -> tuple[str, ...]:
        """The platforms the program was lowered for, e.g. ``('cpu', 'tpu')``, as JAX
        names them (a plugin's name included)."""
        return tuple(self._jax.platforms)

    @property
    def calling_convention_version(self) -> int:
        """Version of the convention by which callers invoke the serialized module."""
        return self._jax.calling_convention_version

    @property
    def uses_global_constants(self) -> bool:
        """Whether the module takes global constants (symbolic dimensions or a
        platform index) that are fixed when it is called."""
        return self._jax.uses_global_constants

    @property
    def in_avals(self) -> tuple:
        """Flat input types (shapes may contain symbolic dimensions)."""
        return tuple(self._jax.in_avals)

    @property
    def out_avals(self) -> tuple:
        """Flat output types (shapes may contain symbolic dimensions)."""
        return tuple(self._jax.out_avals)

    @property
    def in_tree(self):
        """Pytree structure of ``(args, kwargs)``."""
        return self._jax.in_tree

    @property
    def out_tree(self):
        """Pytree structure of the result."""
        return self._jax.out_tree

    @property
    def in_shardings_hlo(self) -> tuple:
        """Flat input shardings as HLO shardings (``None``: unspecified)."""
        return tuple(self._jax.in_shardings_hlo)

    @property
    def out_shardings_hlo(self) -> tuple:
        """Flat output shardings as HLO shardings (``None``: unspecified)."""
        return tuple(self._jax.out_shardings_hlo)

    @property
    def nr_devices(self) -> int:
        """Number of devices the program was lowered for."""
        return self._jax.nr_devices

    @property
    def module_kept_var_idx(self) -> tuple[int, ...]:
        """Indices of the flat inputs the module takes (unused ones are dropped)."""
        return tuple(self._jax.module_kept_var_idx)

    @property
    def ordered_effects(self) -> tuple:
        return tuple(self._jax.ordered_effects)

    @property
    def unordered_effects(self) -> tuple:
        return tuple(self._jax.unordered_effects)

    @property
    def disabled_safety_checks(self) -> tuple:
        return tuple(self._jax.disabled_safety_checks)

    @property
    def mlir_module_serialized(self) -> bytes:
        """The program as portable StableHLO bytecode (what the blob carries)."""
        return self._jax.mlir_module_serialized

    def in_shardings_for(self, mesh) -> tuple:
        """Input shardings for ``mesh`` (a ``Mesh`` or ``AbstractMesh``), ``None`` where
        unspecified."""
        return tuple(self._jax.in_shardings_jax(mesh))

    def out_shardings_for(self, mesh) -> tuple:
        """Output shardings for ``mesh`` (a ``Mesh`` or ``AbstractMesh``), ``None`` where
        unspecified."""
        return tuple(self._jax.out_shardings_jax(mesh))

    def mlir_module(self, *, debug_info: bool = False) -> str:
        """The program as StableHLO text, with Olympus's attribute names.

        ``debug_info=True`` adds source locations.

        >>> import olympus, numpy as np
        >>> exp = olympus.export.export(olympus.jit(lambda x: x + 1))(np.float32(1))
        >>> print(exp.mlir_module())
        module @jit__lambda attributes {mhlo.num_partitions = 1 : i32, mhlo.num_replicas = 1 : i32, olympus.uses_shape_polymorphism = false} {
          func.func public @main(%arg0: tensor<f32>) -> (tensor<f32> {olympus.result_info = "result"}) {
            %cst = stablehlo.constant dense<1.000000e+00> : tensor<f32>
            %0 = stablehlo.add %arg0, %cst : tensor<f32>
            return %0 : tensor<f32>
          }
        }
        """
        with jax_compat.make_ir_context():
            module = jax_compat.read_portable_artifact(self._jax.mlir_module_serialized)
            text = naming.module_text(naming.olympus_operation(module), debug_info=debug_info)
        return _rename_symbols(text)

    # Calling ----------------------------------------------------------------
    def call(self, *args, **kwargs):
        """Runs the exported function on arrays with the structure it was exported for.

        Works eagerly and under ``olympus.jit`` and ``olympus.grad`` (for a
        deserialized export, ``grad`` needs ``serialize(vjp_order=1)``).
        Symbolic dimensions take their sizes from the arguments.

        >>> import olympus, numpy as np
        >>> exp = olympus.export.export(olympus.jit(lambda x: x.sum()))(np.ones(3, np.float32))
        >>> olympus.jit(lambda x: exp.call(x) + 1)(np.ones(3, np.float32))
        Array(4., dtype=float32)
        """
        __tracebackhide__ = True
        try:
            return self._callee.call(*args, **kwargs)
        except Exception as e:  # noqa: BLE001 - reworded, or raised as it is
            translated = translate_call_error(self.fun_name, self.platforms, e)
            if translated is None:
                raise in_olympus_words(e)
            raise translated from None

    # Serialization -------------------------------------------------------
    def serialize(self, vjp_order: int = 0) -> bytes:
        """The export as bytes for :func:`deserialize`: the Olympus envelope around the program.

        ``vjp_order=n`` also stores ``n`` orders of the VJP, so that the
        deserialized function can be differentiated ``n`` times.

        >>> import olympus, olympus.numpy as jnp, numpy as np
        >>> exp = olympus.export.export(olympus.jit(jnp.cos))(np.float32(0))
        >>> blob = exp.serialize()
        >>> olympus.export.deserialize(blob).fun_name
        'cos'
        """
        if not isinstance(vjp_order, int) or isinstance(vjp_order, bool) or vjp_order < 0:
            raise TypeError(f"vjp_order must be an int >= 0, got {vjp_order!r}.")
        try:
            payload = bytes(self._jax.serialize(vjp_order=vjp_order))
        except Exception as e:  # noqa: BLE001 - re-raised in Olympus's words
            raise in_olympus_words(e, failed=f"Cannot serialize '{self.fun_name}'")
        return seal(payload)

    # Differentiation ---------------------------------------------------------
    def has_vjp(self) -> bool:
        """Whether :meth:`vjp` is available (after deserialize: ``serialize(vjp_order>=1)``)."""
        return self._jax.has_vjp()

    def vjp(self) -> "Exported":
        """The exported VJP: takes the primal inputs then one cotangent per output."""
        if not self._jax.has_vjp():
            _missing_vjp(self.fun_name, self._jax)
        return Exported(self._jax.vjp())

    def __repr__(self) -> str:
        def avals(xs):
            items = [short_aval(a) for a in xs]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"

        extra = "" if self.nr_devices == 1 else f", nr_devices={self.nr_devices}"
        return (
            f"Exported(fun_name={self.fun_name!r}, in_avals={avals(self.in_avals)}, "
            f"out_avals={avals(self.out_avals)}, platforms={self.platforms!r}, "
            f"calling_convention_version={self.calling_convention_version}{extra})"
        )

    __str__ = __repr__


def _missing_vjp(fun_name: str, _exported=None):
    raise ValueError(
        f"Cannot differentiate the export of '{fun_name}': it was deserialized from a "
        f"blob without its VJP. Serialize it with exp.serialize(vjp_order=1) (one order "
        f"per derivative to take) and deserialize that blob instead."
    )


def _rename_symbols(text: str) -> str:
    # The engine names the wrapper of a shape-polymorphic main after itself.
    return text.replace("_wrapped_jax_export_main", "_wrapped_olympus_export_main")


# --------------------------------------------------------------------------
# export
# --------------------------------------------------------------------------


def export(
    fun_jit,
    /,
    *,
    platforms: Sequence[str] | str | None = None,
    disabled_checks: Sequence[DisabledSafetyCheck] = (),
) -> Callable[..., Exported]:
    """Returns a function that exports ``fun_jit`` for example arguments.

    ``fun_jit`` is an ``olympus.jit`` function. The returned function takes what
    ``trace`` takes (values, ``olympus.ShapeDtypeStruct``s, shapes with symbolic
    dimensions from :func:`symbolic_shape`, static arguments) and returns an
    :class:`Exported`.

    ``platforms`` (default: this machine's) takes every name JAX takes: the
    built-in ``'cpu'``, ``'cuda'``, ``'rocm'``, ``'tpu'`` and PJRT plugins' names,
    including platforms this machine lacks (see
    :func:`olympus.platforms.normalize_platforms`). With several, the program
    chooses by platform when called; it is never run with another platform's code.
    Errors keep the type JAX gives them (a ``NotImplementedError`` stays one).

    >>> import olympus, numpy as np
    >>> f = olympus.jit(lambda x: x * 2)
    >>> spec = olympus.ShapeDtypeStruct(olympus.export.symbolic_shape("b, 4"), np.float32)
    >>> here = olympus.export.default_export_platform()  # e.g. 'cpu'
    >>> exp = olympus.export.export(f, platforms=(here, "tpu"))(spec)
    >>> exp.platforms == (here, "tpu"), exp.in_avals
    (True, (ShapedArray(float32[b,4]),))
    >>> exp.call(np.ones((2, 4), np.float32)).shape
    (2, 4)
    """
    jitted = _jitted_of(fun_jit)
    requested = _platforms.normalize_platforms(platforms, argument="platforms")
    checks = _check_disabled_checks(disabled_checks)
    jax_export = _jax_export.export(jitted, platforms=requested, disabled_checks=checks)

    @boundary
    def do_export(*args, **kwargs) -> Exported:
        try:
            return Exported(jax_export(*args, **kwargs))
        except Exception as e:  # noqa: BLE001 - re-raised in Olympus's words, with a note
            note = _platforms.unknown_platforms_note(requested)
            if note and not raised_by_user_code(e):
                add_note(e, note)
            raise in_olympus_words(e)

    do_export.__name__ = f"export_{getattr(fun_jit, '__name__', 'fun')}"
    do_export.__qualname__ = do_export.__name__
    return do_export


def default_export_platform() -> str:
    """The platform :func:`export` lowers for when none is named: this machine's.

    >>> import olympus
    >>> olympus.export.default_export_platform() == olympus.platforms.local_platform()
    True
    """
    return _jax_export.default_export_platform()


def _jitted_of(fun):
    """The engine's jit function behind ``fun``, or a TypeError that says how to get one."""
    if isinstance(fun, stages.Wrapped):
        if fun.kind != "jit":
            raise TypeError(
                f"olympus.export.export cannot export an olympus.{fun.kind} function "
                f"({fun!r}): only olympus.jit functions can be exported. Export the "
                f"function under olympus.jit instead, with shardings for several devices: "
                f"olympus.export.export(olympus.jit(f, in_shardings=...))(*args)."
            )
        return fun._jax
    if isinstance(fun, (stages.Traced, stages.Lowered, stages.Compiled)):
        name = type(fun).__name__
        raise TypeError(
            f"olympus.export.export expects a function wrapped by olympus.jit, got an "
            f"olympus.stages.{name} of {fun.fun_name!r}. Export works from the function "
            f"and example arguments, not from a stage: "
            f"olympus.export.export(olympus.jit(f))(*args)."
        )
    if isinstance(fun, Exported):
        raise TypeError(
            f"olympus.export.export expects a function wrapped by olympus.jit, got an "
            f"Exported of {fun.fun_name!r}, which is already exported: call "
            f"exp.serialize() to get its bytes, or exp.call(*args) to run it."
        )
    if isinstance(fun, jax.stages.Wrapped):  # the engine's own jit function
        return fun
    if callable(fun):
        name = getattr(fun, "__name__", None) or type(fun).__name__
        shown = name if name.isidentifier() else "f"
        raise TypeError(
            f"olympus.export.export expects a function wrapped by olympus.jit, got the "
            f"plain function {name!r}. Wrap it: "
            f"olympus.export.export(olympus.jit({shown}))(*args)."
        )
    raise TypeError(
        f"olympus.export.export expects a function wrapped by olympus.jit, got "
        f"{type(fun).__name__} {fun!r:.80}. Pass the function, e.g. "
        f"olympus.export.export(olympus.jit(f))(*args)."
    )


def _check_disabled_checks(checks) -> tuple:
    if isinstance(checks, DisabledSafetyCheck):
        checks = (checks,)
    try:
        items = tuple(checks)
    except TypeError:
        raise TypeError(
            f"disabled_checks must be a sequence of olympus.export.DisabledSafetyCheck, "
            f"got {checks!r}."
        ) from None
    for c in items:
        if not isinstance(c, DisabledSafetyCheck):
            raise TypeError(
                f"disabled_checks entries must be olympus.export.DisabledSafetyCheck values "
                f"such as DisabledSafetyCheck.platform() or "
                f"DisabledSafetyCheck.custom_call('name'), got {c!r}."
            )
    return items


# --------------------------------------------------------------------------
# deserialize
# --------------------------------------------------------------------------


@boundary
def deserialize(blob: bytes | bytearray | memoryview, *, trusted: bool = False) -> Exported:
    """Reads back what :meth:`Exported.serialize` wrote.

    Everything is checked before the program is handed to the compiler's
    readers: the envelope (magic bytes, format version, length, SHA-256 of the
    payload), then the payload itself (its table of contents, the StableHLO
    module and that the module's signature matches the recorded types). Bad
    bytes raise :class:`DeserializationError`, saying what is wrong.

    Every blob JAX reads is read: for any platform name (plugins' included),
    with any registered custom pytree nodes. The argument and result structure
    is checked without running their unflatten functions; JAX itself runs them
    to rebuild the structure, and an error they raise is raised as it is, with
    a note. A custom node type not registered in this process (see
    :func:`register_pytree_node_serialization`) is named in a
    :class:`DeserializationError` that says how to register it.

    The envelope's SHA-256 detects corruption; it does not prove where a blob came
    from, since anyone can compute it for bytes of their choosing. So unless
    ``trusted=True``, the StableHLO of every blob is first read in a separate
    process (a fraction of a second), so that crafted or corrupted bytecode cannot
    crash or hang this one. Pass ``trusted=True`` only for blobs this machine wrote
    or that come from a source you trust as you would trust its code.

    Bytes without the Olympus envelope (as the engine serializes on its own) are
    read on a best-effort basis, with no checksum to rely on.

    >>> import olympus, olympus.numpy as jnp, numpy as np
    >>> blob = olympus.export.export(olympus.jit(jnp.tanh))(np.float32(0)).serialize()
    >>> olympus.export.deserialize(blob[:-3])
    Traceback (most recent call last):
    olympus.export.DeserializationError: The blob is truncated: ...
    """
    data = _as_bytes(blob)
    if not data:
        raise DeserializationError(
            "Cannot deserialize an empty blob: expected the bytes that "
            "Exported.serialize() returned. Check that the file was written "
            "completely and read in binary mode (open(path, 'rb').read())."
        )
    if data.startswith(MAGIC) or (len(data) < len(MAGIC) and MAGIC.startswith(data)):
        payload = open_envelope(data)
        try:
            return Exported(read_payload(payload, isolated=not trusted, checksummed=True))
        except Unregistered as e:
            raise DeserializationError(f"The blob cannot be read yet: {e}.") from None
        except Invalid as e:
            raise DeserializationError(
                f"The blob passed its checksum but cannot be read: {e}. It was probably "
                f"written by an incompatible version of Olympus; export the function "
                f"again with this version."
            ) from None
    try:
        return Exported(read_payload(data, isolated=not trusted, checksummed=False))
    except Invalid as e:
        raise DeserializationError(
            f"The blob does not start with the Olympus export header ({MAGIC!r}), so it "
            f"was read as a bare payload with no checksum, and that failed: {e}. Blobs "
            f"from Exported.serialize() start with that header: if this one came from "
            f"there, its header is damaged; otherwise it is corrupted or was written by "
            f"an incompatible version. Use an intact copy or export the function "
            f"again."
        ) from None


def _as_bytes(blob) -> bytes:
    if isinstance(blob, bytes):
        return blob
    if isinstance(blob, (bytearray, memoryview)):
        return bytes(blob)
    if isinstance(blob, str):
        raise TypeError(
            "olympus.export.deserialize expects bytes (what Exported.serialize() returns), "
            "got a str. Read the file in binary mode: open(path, 'rb').read()."
        )
    raise TypeError(
        f"olympus.export.deserialize expects bytes (what Exported.serialize() returns), "
        f"got {type(blob).__name__} {blob!r:.60}."
    )
