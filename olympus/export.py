"""Serialized, portable artifacts of staged functions (see ``olympus.export.export``).

:func:`export` lowers an ``olympus.jit`` function to StableHLO for chosen
platforms and returns an :class:`Exported`: the program plus what is needed to
call it again (argument and result types, pytree structure, shardings).
``Exported.serialize()`` turns it into bytes that :func:`deserialize` reads back,
in another process or with another Olympus version that supports its calling
convention.

>>> import olympus, olympus.numpy as jnp, numpy as np
>>> exp = olympus.export.export(olympus.jit(jnp.sin))(np.float32(1.0))
>>> blob = exp.serialize()
>>> blob[:8]
b'OLYMPUSX'
>>> olympus.export.deserialize(blob).call(np.float32(0.0))
Array(0., dtype=float32)

Blobs are guarded (see :func:`deserialize`): a truncated or corrupted blob raises
:class:`DeserializationError`; it never reaches the C++ readers, which may crash
the process on malformed input.
"""
from __future__ import annotations

import ast
import functools
import hashlib
import os
import re
import struct
import subprocess
import sys
from collections.abc import Callable, Sequence

import jax
from jax import export as _jax_export
from jax.extend.mlir import ir

from olympus import jax_compat, naming, stages
from olympus import platforms as _platforms
from olympus.errors import boundary, strip_jax_notes

__all__ = [
    "export", "Exported", "deserialize", "DeserializationError",
    "symbolic_shape", "symbolic_args_specs", "SymbolicScope", "is_symbolic_dim",
    "DisabledSafetyCheck", "default_export_platform",
    "minimum_supported_calling_convention_version",
    "maximum_supported_calling_convention_version",
    "register_pytree_node_serialization", "register_namedtuple_serialization",
    "MAGIC", "FORMAT_VERSION", "HEADER_SIZE",
]

#: Calling convention versions this Olympus can call (and :func:`deserialize` accepts).
minimum_supported_calling_convention_version: int = (
    _jax_export.minimum_supported_calling_convention_version)
maximum_supported_calling_convention_version: int = (
    _jax_export.maximum_supported_calling_convention_version)

# Taken unchanged: they describe shapes and safety checks, not Olympus objects.
SymbolicScope = _jax_export.SymbolicScope
is_symbolic_dim = _jax_export.is_symbolic_dim
DisabledSafetyCheck = _jax_export.DisabledSafetyCheck

# --------------------------------------------------------------------------
# The envelope around a serialized export (all integers big-endian):
#
#   offset  size  field
#        0     8  MAGIC, b"OLYMPUSX"
#        8     2  FORMAT_VERSION of the envelope (uint16)
#       10     2  flags, reserved, 0 (uint16)
#       12     8  payload length in bytes (uint64)
#       20    32  SHA-256 digest of the payload
#       52     -  payload: the exported function as the engine serializes it
# --------------------------------------------------------------------------
MAGIC = b"OLYMPUSX"
FORMAT_VERSION = 1
_HEADER = struct.Struct(">8sHHQ32s")
HEADER_SIZE = _HEADER.size  # 52

# A blob without the envelope has no checksum, so its StableHLO bytecode is
# first read in a separate process: the bytecode reader can crash or hang on
# corrupted input. Seconds allowed for that check, plus one per MB of bytecode.
_RAW_CHECK_TIMEOUT_S = 30.0
# How many levels of VJP (serialize(vjp_order=...)) a blob may carry.
_MAX_VJP_DEPTH = 8


class DeserializationError(ValueError):
    """Bytes given to :func:`deserialize` are not a readable exported function.

    The message says what is wrong with them (truncated, corrupted, written by
    an unsupported version...) and what to do about it.
    """


class _Invalid(Exception):
    """Internal: a reason a payload is rejected (becomes a DeserializationError)."""


class _Unregistered(_Invalid):
    """Internal: the payload names custom pytree types not registered here (its
    reason says how to register them; nothing is wrong with the bytes)."""


# --------------------------------------------------------------------------
# Exported
# --------------------------------------------------------------------------

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
                f"olympus.export.deserialize(blob).")
        self._jax = jax_exported
        # What `call` runs: without a VJP, differentiating it says how to get one.
        self._callee = jax_exported if jax_exported.has_vjp() else (
            jax_compat.exported_with_get_vjp(
                jax_exported, functools.partial(_missing_vjp, jax_exported.fun_name)))

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
        """Input shardings for ``mesh`` (a ``Mesh`` or ``AbstractMesh``), ``None`` where unspecified."""
        return tuple(self._jax.in_shardings_jax(mesh))

    def out_shardings_for(self, mesh) -> tuple:
        """Output shardings for ``mesh`` (a ``Mesh`` or ``AbstractMesh``), ``None`` where unspecified."""
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
            module = jax_compat.read_portable_artifact(
                self._jax.mlir_module_serialized)
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
        __tracebackhide__ = True  # noqa: F841
        try:
            return self._callee.call(*args, **kwargs)
        except Exception as e:
            translated = _translate_call_error(self, e)
            if translated is None:
                raise _in_olympus_words(e)
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
        except Exception as e:
            raise _in_olympus_words(e, failed=f"Cannot serialize '{self.fun_name}'")
        return _seal(payload)

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
            items = [_short(a) for a in xs]
            return "(" + ", ".join(items) + ("," if len(items) == 1 else "") + ")"
        extra = "" if self.nr_devices == 1 else f", nr_devices={self.nr_devices}"
        return (f"Exported(fun_name={self.fun_name!r}, in_avals={avals(self.in_avals)}, "
                f"out_avals={avals(self.out_avals)}, platforms={self.platforms!r}, "
                f"calling_convention_version={self.calling_convention_version}{extra})")

    __str__ = __repr__


def _missing_vjp(fun_name: str, _exported=None):
    raise ValueError(
        f"Cannot differentiate the export of '{fun_name}': it was deserialized from a "
        f"blob without its VJP. Serialize it with exp.serialize(vjp_order=1) (one order "
        f"per derivative to take) and deserialize that blob instead.")


def _short(aval) -> str:
    try:
        return aval.str_short(short_dtypes=True)
    except Exception:  # pragma: no cover - an aval kind without str_short
        return str(aval)


def _rename_symbols(text: str) -> str:
    # The engine names the wrapper of a shape-polymorphic main after itself.
    return text.replace("_wrapped_jax_export_main", "_wrapped_olympus_export_main")


def _in_olympus_words(e: BaseException, *, failed: str = "") -> BaseException:
    """``e`` itself, its message speaking of Olympus where JAX's speaks of JAX.

    Only JAX's own words change (:func:`olympus.naming.olympus_message`): what
    its messages quote (the user's names and values) and file paths stay as they
    are, and an error the user's code raised keeps its message. The type,
    attributes and traceback are ``e``'s: Olympus rewords errors, it never
    retypes them. ``failed`` (e.g. ``"Cannot serialize 'f'"``) goes before an
    engine's message, or in a note after the user's. Where a message cannot be
    replaced (a type whose ``str`` is not its argument), the Olympus wording is
    added as a note.

    >>> e = _in_olympus_words(NotImplementedError("JAX cannot do 'JAX_thing'"))
    >>> type(e).__name__, str(e)
    ('NotImplementedError', "OLYMPUS cannot do 'JAX_thing'")
    """
    strip_jax_notes(e)
    if _raised_by_user_code(e):
        if failed:
            _add_note(e, f"Olympus: {failed}: the error above was raised by the "
                         f"program's own code.")
        return e
    message = str(e)
    reworded = (f"{failed}: " if failed else "") + naming.olympus_message(message)
    if reworded != message:
        if e.args == (message,):
            e.args = (reworded,)
        else:
            _add_note(e, reworded)
    return e


def _raised_by_user_code(e: BaseException) -> bool:
    """Whether the user's code raised ``e`` (its message is theirs, not JAX's).

    JAX's exception types are JAX's; otherwise the innermost frame of the
    traceback tells. JAX may have removed its own frames from it: an engine
    error may then look like the user's, and is left as it is.
    """
    if type(e).__module__.split(".")[0] in ("jax", "jaxlib"):
        return False
    tb = e.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return jax_compat.is_user_filename(tb.tb_frame.f_code.co_filename)


def _add_note(e: BaseException, note: str) -> None:
    if hasattr(e, "add_note"):  # Python 3.11 and later
        e.add_note(note)


_PLATFORM_MISMATCH = re.compile(
    r"was exported for platforms '(\(.*?\))' but it is used on '(\(.*?\))'")


def _translate_call_error(exp: Exported, e: Exception) -> Exception | None:
    """An Olympus error (of ``e``'s type) saying what to do, for the engine errors
    that need more than rewording; None for others."""
    message = str(e)
    m = _PLATFORM_MISMATCH.search(message) if isinstance(e, ValueError) else None
    if m:
        try:
            exported_for = tuple(ast.literal_eval(m.group(1)))
            used_on = tuple(ast.literal_eval(m.group(2)))
        except (ValueError, SyntaxError):  # pragma: no cover - format drift
            exported_for, used_on = exp.platforms, (m.group(2),)
        both = exported_for + tuple(p for p in used_on if p not in exported_for)
        return _platforms.PlatformError(
            f"Cannot call the export of '{exp.fun_name}' here: it was exported for "
            f"{_describe(exported_for)}, but this call runs on {_describe(used_on)}. "
            f"Call it on a machine with {_describe(exported_for)} devices, or export it "
            f"again for this platform too: olympus.export.export(olympus.jit(f), "
            f"platforms={both!r})(*args).")
    if isinstance(e, NotImplementedError) and "Batching rule for 'call_exported'" in message:
        return NotImplementedError(
            f"Cannot vmap the export of '{exp.fun_name}': an exported function has a fixed "
            f"calling convention and no batching rule. Export the batched function instead, "
            f"olympus.export.export(olympus.jit(olympus.vmap(f)))(*batched_args), export it "
            f"with a symbolic batch dimension (olympus.export.symbolic_shape('b, ...')), or "
            f"loop with olympus.lax.map(exp.call, xs).")
    return None


def _describe(platforms: Sequence[str]) -> str:
    return " and ".join(repr(p) for p in platforms)


# --------------------------------------------------------------------------
# export
# --------------------------------------------------------------------------

def export(fun_jit, /, *, platforms: Sequence[str] | str | None = None,
           disabled_checks: Sequence[DisabledSafetyCheck] = ()) -> Callable[..., Exported]:
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
        except Exception as e:
            note = _platforms.unknown_platforms_note(requested)
            if note and not _raised_by_user_code(e):
                _add_note(e, note)
            raise _in_olympus_words(e)

    do_export.__name__ = f"export_{getattr(fun_jit, '__name__', 'fun')}"
    do_export.__qualname__ = do_export.__name__
    return do_export


def _jitted_of(fun):
    """The engine's jit function behind ``fun``, or a TypeError that says how to get one."""
    if isinstance(fun, stages.Wrapped):
        if fun.kind != "jit":
            raise TypeError(
                f"olympus.export.export cannot export an olympus.{fun.kind} function "
                f"({fun!r}): only olympus.jit functions can be exported. Export the "
                f"function under olympus.jit instead, with shardings for several devices: "
                f"olympus.export.export(olympus.jit(f, in_shardings=...))(*args).")
        return fun._jax
    if isinstance(fun, (stages.Traced, stages.Lowered, stages.Compiled)):
        name = type(fun).__name__
        raise TypeError(
            f"olympus.export.export expects a function wrapped by olympus.jit, got an "
            f"olympus.stages.{name} of {fun.fun_name!r}. Export works from the function "
            f"and example arguments, not from a stage: "
            f"olympus.export.export(olympus.jit(f))(*args).")
    if isinstance(fun, Exported):
        raise TypeError(
            f"olympus.export.export expects a function wrapped by olympus.jit, got an "
            f"Exported of {fun.fun_name!r}, which is already exported: call "
            f"exp.serialize() to get its bytes, or exp.call(*args) to run it.")
    if isinstance(fun, jax.stages.Wrapped):  # the engine's own jit function
        return fun
    if callable(fun):
        name = getattr(fun, "__name__", None) or type(fun).__name__
        shown = name if name.isidentifier() else "f"
        raise TypeError(
            f"olympus.export.export expects a function wrapped by olympus.jit, got the "
            f"plain function {name!r}. Wrap it: "
            f"olympus.export.export(olympus.jit({shown}))(*args).")
    raise TypeError(
        f"olympus.export.export expects a function wrapped by olympus.jit, got "
        f"{type(fun).__name__} {fun!r:.80}. Pass the function, e.g. "
        f"olympus.export.export(olympus.jit(f))(*args).")


def _check_disabled_checks(checks) -> tuple:
    if isinstance(checks, DisabledSafetyCheck):
        checks = (checks,)
    try:
        items = tuple(checks)
    except TypeError:
        raise TypeError(
            f"disabled_checks must be a sequence of olympus.export.DisabledSafetyCheck, "
            f"got {checks!r}.") from None
    for c in items:
        if not isinstance(c, DisabledSafetyCheck):
            raise TypeError(
                f"disabled_checks entries must be olympus.export.DisabledSafetyCheck values "
                f"such as DisabledSafetyCheck.platform() or "
                f"DisabledSafetyCheck.custom_call('name'), got {c!r}.")
    return items


# --------------------------------------------------------------------------
# deserialize
# --------------------------------------------------------------------------

def _seal(payload: bytes) -> bytes:
    header = _HEADER.pack(MAGIC, FORMAT_VERSION, 0, len(payload),
                          hashlib.sha256(payload).digest())
    return header + payload


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
            "completely and read in binary mode (open(path, 'rb').read()).")
    if data.startswith(MAGIC) or (len(data) < len(MAGIC) and MAGIC.startswith(data)):
        payload = _open_envelope(data)
        try:
            return Exported(_read_payload(payload, isolated=not trusted, checksummed=True))
        except _Unregistered as e:
            raise DeserializationError(f"The blob cannot be read yet: {e}.") from None
        except _Invalid as e:
            raise DeserializationError(
                f"The blob passed its checksum but cannot be read: {e}. It was probably "
                f"written by an incompatible version of Olympus; export the function "
                f"again with this version.") from None
    try:
        return Exported(_read_payload(data, isolated=not trusted, checksummed=False))
    except _Invalid as e:
        raise DeserializationError(
            f"The blob does not start with the Olympus export header ({MAGIC!r}), so it "
            f"was read as a bare payload with no checksum, and that failed: {e}. Blobs "
            f"from Exported.serialize() start with that header: if this one came from "
            f"there, its header is damaged; otherwise it is corrupted or was written by "
            f"an incompatible version. Use an intact copy or export the function "
            f"again.") from None


def _as_bytes(blob) -> bytes:
    if isinstance(blob, bytes):
        return blob
    if isinstance(blob, (bytearray, memoryview)):
        return bytes(blob)
    if isinstance(blob, str):
        raise TypeError(
            "olympus.export.deserialize expects bytes (what Exported.serialize() returns), "
            "got a str. Read the file in binary mode: open(path, 'rb').read().")
    raise TypeError(
        f"olympus.export.deserialize expects bytes (what Exported.serialize() returns), "
        f"got {type(blob).__name__} {blob!r:.60}.")


def _open_envelope(data: bytes) -> bytes:
    """Checks the envelope and returns its payload."""
    if len(data) < HEADER_SIZE:
        raise DeserializationError(
            f"The blob is truncated: it has {len(data)} bytes, fewer than the "
            f"{HEADER_SIZE}-byte Olympus export header. The file was cut short while "
            f"writing or copying; use an intact copy or export the function again.")
    magic, version, flags, length, digest = _HEADER.unpack_from(data)
    if version != FORMAT_VERSION:
        raise DeserializationError(
            f"The blob uses Olympus export format version {version}; this Olympus reads "
            f"version {FORMAT_VERSION}. Deserialize it with the Olympus version that wrote "
            f"it, or export the function again with this one.")
    if flags != 0:
        raise DeserializationError(
            f"The blob's header is corrupted: its reserved field is {flags:#06x}, "
            f"expected 0. Use an intact copy or export the function again.")
    actual = len(data) - HEADER_SIZE
    if actual < length:
        raise DeserializationError(
            f"The blob is truncated: its header announces a payload of {length} bytes "
            f"but only {actual} follow. The file was cut short while writing or copying; "
            f"use an intact copy or export the function again.")
    if actual > length:
        if hashlib.sha256(data[HEADER_SIZE:HEADER_SIZE + length]).digest() == digest:
            raise DeserializationError(
                f"The blob has {actual - length} unexpected bytes after its {length}-byte "
                f"payload: several blobs were concatenated or the file was appended to. "
                f"Pass exactly the bytes that Exported.serialize() returned.")
        raise DeserializationError(
            f"The blob is corrupted: it is {actual - length} bytes longer than its header "
            f"announces and its payload does not match the checksum in its header. "
            f"Use an intact copy or export the function again.")
    payload = data[HEADER_SIZE:]
    found = hashlib.sha256(payload).digest()
    if found != digest:
        raise DeserializationError(
            f"The blob is corrupted: the SHA-256 of its payload ({found.hex()[:16]}...) "
            f"does not match the checksum in its header ({digest.hex()[:16]}...). Some "
            f"bytes changed after it was written; use an intact copy or export the "
            f"function again.")
    return payload


def _read_payload(payload: bytes, *, isolated: bool, checksummed: bool):
    """The engine's Exported for ``payload``, checked throughout; raises _Invalid.

    ``isolated``: read the bytecode in a separate process first. ``checksummed``: the
    bytes passed the envelope's checksum, so a failure in the user's own pytree
    functions is theirs, not corruption."""
    _check_registered(_check_table_of_contents(payload))
    try:
        jexp = _jax_export.deserialize(bytearray(payload))
    except Exception as e:  # a reader failure means corrupted bytes...
        if checksummed:  # ...unless, the bytes being intact, the user's code failed
            _reraise_if_from_pytree_functions(e)
        raise _Invalid(f"its table of contents cannot be read ({_brief(e)})") from None
    _check_exported(jexp, isolated=isolated, depth=0)
    return jexp


def _brief(e: BaseException) -> str:
    text = naming.olympus_message(str(e)).strip().splitlines()
    first = text[0] if text else ""
    if len(first) > 200:
        first = first[:200] + "..."
    # Builtin exception names tell something; the engine's own would only confuse.
    name = type(e).__name__ if type(e).__module__ == "builtins" else "error"
    return f"{name}: {first}" if first else name


def _check_table_of_contents(payload: bytes) -> set[str]:
    """Bounds what reading the payload's pytrees can cost; returns the names of
    the custom node types they contain.

    Flatbuffer offsets can make one node a child of many (or of itself), so a
    corrupted table of contents could describe a tree exponentially larger than
    the blob. A tree written by the serializer has at most one node per 4 bytes.
    """
    names = set()
    if len(payload) < 8:
        raise _Invalid(f"it has only {len(payload)} bytes, too few for an export")
    budget = len(payload) // 4 + 64
    try:
        root = jax_compat.export_table_of_contents(payload)
        tables = [root]
        for _ in range(_MAX_VJP_DEPTH):
            vjp = tables[-1].Vjp()
            if vjp is None:
                break
            tables.append(vjp)
        else:
            if tables[-1].Vjp() is not None:
                raise _Invalid(f"it nests more than {_MAX_VJP_DEPTH} levels of VJP")
        for table in tables:
            stack = [t for t in (table.InTree(), table.OutTree()) if t is not None]
            while stack:
                node = stack.pop()
                budget -= 1
                if budget < 0:
                    raise _Invalid("its argument or result structure refers to itself")
                n = node.ChildrenLength()
                if n > len(payload):
                    raise _Invalid("its argument or result structure has an impossible size")
                for i in range(n):
                    stack.append(node.Children(i))
                if jax_compat.is_custom_pytree_node(node):
                    names.add(bytes(node.CustomName() or b"").decode("utf-8"))
    except _Invalid:
        raise
    except Exception as e:
        raise _Invalid(f"its table of contents cannot be read ({_brief(e)})") from None
    return names


def _check_registered(names: set[str]) -> None:
    """Raises _Unregistered naming the custom node types not registered here."""
    registry = jax_compat.pytree_deserialization_registry()
    missing = sorted(n for n in names if n not in registry)
    if missing:
        listed = ", ".join(repr(n) for n in missing)
        raise _Unregistered(
            f"its arguments or results contain custom pytree nodes serialized as "
            f"{listed}, and no type is registered under that name in this process. "
            f"Before deserializing, register the type as the exporting process did: "
            f"olympus.export.register_pytree_node_serialization(T, "
            f"serialized_name={missing[0]!r}, ...) or "
            f"olympus.export.register_namedtuple_serialization(T, "
            f"serialized_name={missing[0]!r})")


def _reraise_if_from_pytree_functions(e: BaseException) -> None:
    """Re-raises ``e``, with a note, if a function registered for a custom pytree
    node raised it: the user's code failed, not the blob."""
    registered = {getattr(f, "__code__", None)
                  for _, *functions in jax_compat.pytree_deserialization_registry().values()
                  for f in functions}
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code not in registered:
        tb = tb.tb_next
    if tb is None:
        return
    strip_jax_notes(e)
    _add_note(e, "Olympus: deserialize rebuilds the blob's argument and result structure "
                 "with the functions registered for its custom pytree nodes "
                 "(deserialize_auxdata, then from_children or the node's unflatten), "
                 "passing placeholders for the arrays, and one of them raised this. Make "
                 "them accept any leaf (some JAX versions pass 0.0), and register each type "
                 "as the exporting process did.")
    raise e


def _check_exported(jexp, *, isolated: bool, depth: int) -> None:
    """What the engine would find out lazily (at call time), checked now."""
    what = "its VJP" if depth else "it"
    # Any platform name: plugins have their own, and the engine may list one twice.
    if not tuple(jexp.platforms):
        raise _Invalid(f"{what} names no platform")
    version = jexp.calling_convention_version
    if not (minimum_supported_calling_convention_version <= version
            <= maximum_supported_calling_convention_version):
        raise _Invalid(
            f"{what} uses calling convention version {version}; this Olympus supports "
            f"versions {minimum_supported_calling_convention_version} to "
            f"{maximum_supported_calling_convention_version}")
    if jexp.nr_devices < 1:
        raise _Invalid(f"{what} is for {jexp.nr_devices} devices")
    n_in, n_out = len(jexp.in_avals), len(jexp.out_avals)
    kept = tuple(jexp.module_kept_var_idx)
    if list(kept) != sorted(set(kept)) or any(not 0 <= i < n_in for i in kept):
        raise _Invalid(f"{what} lists impossible kept arguments {kept!r} for {n_in} inputs")
    try:
        ok_tree = (_is_args_kwargs(jexp.in_tree) and jexp.in_tree.num_leaves == n_in
                   and jexp.out_tree.num_leaves == n_out)
    except Exception as e:
        raise _Invalid(f"{what} has an unreadable argument structure ({_brief(e)})") from None
    if not ok_tree:
        raise _Invalid(f"{what} has argument or result structures that do not match its "
                       f"{n_in} inputs and {n_out} outputs")
    module_bytes = jexp.mlir_module_serialized
    if isolated:
        _check_bytecode_in_subprocess(module_bytes)
    try:
        with jax_compat.make_ir_context():
            module = jax_compat.read_portable_artifact(module_bytes)
            module.operation.verify()
            _check_signature(module, jexp)
    except _Invalid as e:
        raise _Invalid(f"{what} {e}") from None
    except Exception as e:
        raise _Invalid(f"{what} has a StableHLO module that cannot be read "
                       f"({_brief(e)})") from None
    if jexp.has_vjp():
        if depth + 1 >= _MAX_VJP_DEPTH:
            raise _Invalid(f"it nests more than {_MAX_VJP_DEPTH} levels of VJP")
        try:
            vjp = jexp.vjp()
        except Exception as e:
            if not isolated:
                _reraise_if_from_pytree_functions(e)
            raise _Invalid(f"its VJP cannot be read ({_brief(e)})") from None
        _check_exported(vjp, isolated=isolated, depth=depth + 1)


def _is_args_kwargs(tree) -> bool:
    """Whether ``tree`` is the structure of ``(args, kwargs)``: a pair whose second
    item is a dict.

    Reads the structure only: no custom node's unflatten runs (it may expect
    arrays where a check would give it placeholders).

    >>> import olympus
    >>> _is_args_kwargs(olympus.tree.structure(((1, 2), {"k": 3})))
    True
    >>> _is_args_kwargs(olympus.tree.structure([(1, 2), {"k": 3}]))
    False
    """
    node = tree.node_data()  # (type, aux data), None for a leaf
    if node is None or node[0] is not tuple:
        return False
    children = jax.tree_util.treedef_children(tree)
    if len(children) != 2:
        return False
    kwargs = children[1].node_data()
    return kwargs is not None and kwargs[0] is dict


def _check_signature(module: ir.Module, jexp) -> None:
    """The module's ``main`` takes and returns what the recorded types say."""
    main = None
    for op in module.body.operations:
        op = op.operation
        if op.name == "func.func" and "sym_name" in op.attributes and \
                ir.StringAttr(op.attributes["sym_name"]).value == "main":
            main = op
            break
    if main is None:
        raise _Invalid("has a StableHLO module without a 'main' function")
    ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    inputs, results = list(ftype.inputs), list(ftype.results)
    n_tokens = len(jexp.ordered_effects)
    prefix = (1 if len(jexp.platforms) > 1 else 0) + n_tokens
    kept = [jexp.in_avals[i] for i in jexp.module_kept_var_idx]
    if len(inputs) != prefix + len(kept):
        raise _Invalid(f"has a module whose 'main' takes {len(inputs)} arguments, but "
                       f"{prefix + len(kept)} are recorded")
    if len(results) != n_tokens + len(jexp.out_avals):
        raise _Invalid(f"has a module whose 'main' returns {len(results)} results, but "
                       f"{n_tokens + len(jexp.out_avals)} are recorded")
    for k, (aval, t) in enumerate(zip(kept, inputs[prefix:])):
        _check_type(aval, t, f"takes argument {jexp.module_kept_var_idx[k]}")
    for k, (aval, t) in enumerate(zip(jexp.out_avals, results[n_tokens:])):
        _check_type(aval, t, f"returns result {k}")
    attr = module.operation.attributes
    if "mhlo.num_partitions" in attr and "mhlo.num_replicas" in attr:
        n = (ir.IntegerAttr(attr["mhlo.num_partitions"]).value
             * ir.IntegerAttr(attr["mhlo.num_replicas"]).value)
        if n != jexp.nr_devices:
            raise _Invalid(f"has a module for {n} devices, but {jexp.nr_devices} are "
                           f"recorded")
    if "jax.uses_shape_polymorphism" in attr:
        uses = ir.BoolAttr(attr["jax.uses_shape_polymorphism"]).value
        if uses != bool(jexp.uses_global_constants):
            raise _Invalid("records uses_global_constants="
                           f"{jexp.uses_global_constants} but its module says {uses}")


def _check_type(aval, ir_type: ir.Type, what: str) -> None:
    shape, dtype = getattr(aval, "shape", None), getattr(aval, "dtype", None)
    if shape is None or dtype is None:
        return
    try:
        if jax.dtypes.issubdtype(dtype, jax.dtypes.extended):
            aval = jax_compat.physical_aval(aval)
            shape, dtype = aval.shape, aval.dtype
        expected = jax_compat.dtype_to_ir_type(dtype)
    except Exception:  # a type Olympus cannot map: nothing to compare against
        return
    try:
        tensor = ir.RankedTensorType(ir_type)
    except Exception:
        raise _Invalid(f"has a module whose 'main' {what} as {ir_type}, but "
                       f"{_short(aval)} is recorded") from None
    ok = tensor.rank == len(shape) and tensor.element_type == expected
    if ok:
        for i, d in enumerate(shape):
            if jax_compat.is_constant_dim(d) and (tensor.is_dynamic_dim(i)
                                             or tensor.get_dim_size(i) != d):
                ok = False
                break
    if not ok:
        raise _Invalid(f"has a module whose 'main' {what} as {ir_type}, but "
                       f"{_short(aval)} is recorded")


def _check_bytecode_in_subprocess(module_bytes: bytes) -> None:
    timeout = _RAW_CHECK_TIMEOUT_S + len(module_bytes) / 1e6
    env = dict(os.environ, PYTHONSAFEPATH="1")
    try:
        proc = subprocess.run([sys.executable, "-c", jax_compat.PORTABLE_ARTIFACT_CHECK_SCRIPT],
                              input=module_bytes, capture_output=True, timeout=timeout,
                              env=env)
    except subprocess.TimeoutExpired:
        raise _Invalid(f"has a StableHLO module whose reading did not finish in "
                       f"{timeout:.0f} s (the bytecode is corrupted)") from None
    except OSError as e:
        raise _Invalid(f"could not be checked in a separate process ({e}); wrap it with "
                       f"the Olympus envelope to read it without one") from None
    if proc.returncode != 0:
        how = (f"signal {-proc.returncode}" if proc.returncode < 0
               else f"exit status {proc.returncode}")
        raise _Invalid(f"has a StableHLO module that crashed the bytecode reader ({how}); "
                       f"the bytecode is corrupted")
    reply = proc.stdout.decode("utf-8", "replace")
    if reply.startswith("OK"):
        return
    if reply.startswith("ERR "):
        raise _Invalid(f"has a StableHLO module that cannot be read ({reply[4:]})")
    raise _Invalid("has a StableHLO module that the checking process could not read")


# --------------------------------------------------------------------------
# Shapes, platforms, versions, pytrees
# --------------------------------------------------------------------------

@boundary
def symbolic_shape(shape_spec: str | None, *, constraints: Sequence[str] = (),
                   scope: SymbolicScope | None = None,
                   like: Sequence[int | None] | None = None) -> tuple:
    """A shape with symbolic dimensions, parsed from text such as ``"b, 4"``.

    Use it in ``olympus.ShapeDtypeStruct`` to export one program for every size
    of the named dimensions. ``constraints`` such as ``"b >= 2"`` bound them.

    >>> import olympus
    >>> olympus.export.symbolic_shape("b, 4")
    (b, 4)
    >>> olympus.export.symbolic_shape("2*n + 1")
    (2*n + 1,)
    """
    if shape_spec is not None and not isinstance(shape_spec, str):
        raise TypeError(
            f"symbolic_shape expects a string such as 'b, 4', got "
            f"{type(shape_spec).__name__} {shape_spec!r:.60}.")
    return _jax_export.symbolic_shape(shape_spec, constraints=constraints,
                                      scope=scope, like=like)


symbolic_args_specs = _jax_export.symbolic_args_specs


def default_export_platform() -> str:
    """The platform :func:`export` lowers for when none is named: this machine's.

    >>> import olympus
    >>> olympus.export.default_export_platform() == olympus.platforms.local_platform()
    True
    """
    return _jax_export.default_export_platform()


def register_pytree_node_serialization(nodetype, *, serialized_name: str,
                                       serialize_auxdata, deserialize_auxdata,
                                       from_children=None):
    """Lets exports whose arguments or results contain ``nodetype`` be serialized.

    ``nodetype`` must be a registered pytree node; ``serialized_name`` names it
    in blobs; ``serialize_auxdata`` turns its auxiliary data into ``bytes`` and
    ``deserialize_auxdata`` back. Usable as a class decorator with
    ``functools.partial``. Register it in every process that deserializes such
    blobs. When deserializing, JAX rebuilds nodes from placeholder leaves (the
    recorded array types; ``0.0`` on JAX 0.9): ``from_children``, or the node's
    unflatten function, must accept them.
    """
    return _jax_export.register_pytree_node_serialization(
        nodetype, serialized_name=serialized_name, serialize_auxdata=serialize_auxdata,
        deserialize_auxdata=deserialize_auxdata, from_children=from_children)


def register_namedtuple_serialization(nodetype, *, serialized_name: str):
    """Lets exports whose arguments or results contain the namedtuple ``nodetype`` be serialized."""
    return _jax_export.register_namedtuple_serialization(
        nodetype, serialized_name=serialized_name)
