"""The checks of an untrusted payload, before the engine's readers see it.

A payload (what the envelope of :mod:`olympus.export.blob_format` carries) is
read in steps, each bounded, so that corrupted or crafted bytes raise
:class:`Invalid` with a reason instead of crashing or hanging the process:

1. its table of contents: how deep its VJPs nest, how large its argument and
   result structures are, which custom pytree types it names (each must be
   registered in this process, else :class:`Unregistered`);
2. the engine's own reader (``jax.export.deserialize``);
3. what the engine would find out lazily, at call time: platforms, calling
   convention version, device count, kept arguments, the argument structure,
   and the StableHLO module itself (read in a separate process first unless the
   blob is trusted), whose ``main`` must take and return the recorded types.

:func:`read_payload` runs them all and returns the engine's exported function.

>>> check_table_of_contents(b"tiny")
Traceback (most recent call last):
olympus.export.blob_checks.Invalid: it has only 4 bytes, too few for an export
"""

from __future__ import annotations

import os
import subprocess
import sys

import jax
from jax import export as _jax_export
from jax.extend.mlir import ir

from olympus import jax_compat
from olympus.errors import strip_jax_notes
from olympus.export.blob_format import (
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
)
from olympus.export.error_words import add_note, brief, short_aval

__all__ = [
    "Invalid",
    "Unregistered",
    "read_payload",
    "check_table_of_contents",
    "check_registered",
    "check_exported",
    "RAW_CHECK_TIMEOUT_S",
    "MAX_VJP_DEPTH",
]

# A blob without the envelope has no checksum, so its StableHLO bytecode is
# first read in a separate process: the bytecode reader can crash or hang on
# corrupted input. Seconds allowed for that check, plus one per MB of bytecode.
RAW_CHECK_TIMEOUT_S = 30.0
# How many levels of VJP (serialize(vjp_order=...)) a blob may carry.
MAX_VJP_DEPTH = 8


class Invalid(Exception):
    """A reason a payload is rejected (``deserialize`` makes it a DeserializationError)."""


class Unregistered(Invalid):
    """The payload names custom pytree types not registered here (its reason says
    how to register them; nothing is wrong with the bytes)."""


def read_payload(payload: bytes, *, isolated: bool, checksummed: bool):
    """The engine's Exported for ``payload``, checked throughout; raises Invalid.

    ``isolated``: read the bytecode in a separate process first. ``checksummed``: the
    bytes passed the envelope's checksum, so a failure in the user's own pytree
    functions is theirs, not corruption."""
    check_registered(check_table_of_contents(payload))
    try:
        jexp = _jax_export.deserialize(bytearray(payload))
    except Exception as e:  # noqa: BLE001 - a reader failure means corrupted bytes...
        if checksummed:  # ...unless, the bytes being intact, the user's code failed
            reraise_if_from_pytree_functions(e)
        raise Invalid(f"its table of contents cannot be read ({brief(e)})") from None
    check_exported(jexp, isolated=isolated, depth=0)
    return jexp


def check_table_of_contents(payload: bytes) -> set[str]:
    """Bounds what reading the payload's pytrees can cost; returns the names of
    the custom node types they contain.

    Flatbuffer offsets can make one node a child of many (or of itself), so a
    corrupted table of contents could describe a tree exponentially larger than
    the blob. A tree written by the serializer has at most one node per 4 bytes.
    """
    names = set()
    if len(payload) < 8:
        raise Invalid(f"it has only {len(payload)} bytes, too few for an export")
    budget = len(payload) // 4 + 64
    try:
        root = jax_compat.export_table_of_contents(payload)
        tables = [root]
        for _ in range(MAX_VJP_DEPTH):
            vjp = tables[-1].Vjp()
            if vjp is None:
                break
            tables.append(vjp)
        else:
            if tables[-1].Vjp() is not None:
                raise Invalid(f"it nests more than {MAX_VJP_DEPTH} levels of VJP")
        for table in tables:
            stack = [t for t in (table.InTree(), table.OutTree()) if t is not None]
            while stack:
                node = stack.pop()
                budget -= 1
                if budget < 0:
                    raise Invalid("its argument or result structure refers to itself")
                n = node.ChildrenLength()
                if n > len(payload):
                    raise Invalid("its argument or result structure has an impossible size")
                for i in range(n):
                    stack.append(node.Children(i))
                if jax_compat.is_custom_pytree_node(node):
                    names.add(bytes(node.CustomName() or b"").decode("utf-8"))
    except Invalid:
        raise
    except Exception as e:  # noqa: BLE001 - any error reading untrusted bytes: corrupt
        raise Invalid(f"its table of contents cannot be read ({brief(e)})") from None
    return names


def check_registered(names: set[str]) -> None:
    """Raises Unregistered naming the custom node types not registered here."""
    registry = jax_compat.pytree_deserialization_registry()
    missing = sorted(n for n in names if n not in registry)
    if missing:
        listed = ", ".join(repr(n) for n in missing)
        raise Unregistered(
            f"its arguments or results contain custom pytree nodes serialized as "
            f"{listed}, and no type is registered under that name in this process. "
            f"Before deserializing, register the type as the exporting process did: "
            f"olympus.export.register_pytree_node_serialization(T, "
            f"serialized_name={missing[0]!r}, ...) or "
            f"olympus.export.register_namedtuple_serialization(T, "
            f"serialized_name={missing[0]!r})"
        )


def reraise_if_from_pytree_functions(e: BaseException) -> None:
    """Re-raises ``e``, with a note, if a function registered for a custom pytree
    node raised it: the user's code failed, not the blob."""
    registered = {
        getattr(f, "__code__", None)
        for _, *functions in jax_compat.pytree_deserialization_registry().values()
        for f in functions
    }
    tb = e.__traceback__
    while tb is not None and tb.tb_frame.f_code not in registered:
        tb = tb.tb_next
    if tb is None:
        return
    strip_jax_notes(e)
    add_note(
        e,
        "Olympus: deserialize rebuilds the blob's argument and result structure "
        "with the functions registered for its custom pytree nodes "
        "(deserialize_auxdata, then from_children or the node's unflatten), "
        "passing placeholders for the arrays, and one of them raised this. Make "
        "them accept any leaf (some JAX versions pass 0.0), and register each type "
        "as the exporting process did.",
    )
    raise e


def check_exported(jexp, *, isolated: bool, depth: int) -> None:
    """What the engine would find out lazily (at call time), checked now."""
    what = "its VJP" if depth else "it"
    # Any platform name: plugins have their own, and the engine may list one twice.
    if not tuple(jexp.platforms):
        raise Invalid(f"{what} names no platform")
    version = jexp.calling_convention_version
    if not (
        minimum_supported_calling_convention_version
        <= version
        <= maximum_supported_calling_convention_version
    ):
        raise Invalid(
            f"{what} uses calling convention version {version}; this Olympus supports "
            f"versions {minimum_supported_calling_convention_version} to "
            f"{maximum_supported_calling_convention_version}"
        )
    if jexp.nr_devices < 1:
        raise Invalid(f"{what} is for {jexp.nr_devices} devices")
    n_in, n_out = len(jexp.in_avals), len(jexp.out_avals)
    kept = tuple(jexp.module_kept_var_idx)
    if list(kept) != sorted(set(kept)) or any(not 0 <= i < n_in for i in kept):
        raise Invalid(f"{what} lists impossible kept arguments {kept!r} for {n_in} inputs")
    try:
        ok_tree = (
            is_args_kwargs(jexp.in_tree)
            and jexp.in_tree.num_leaves == n_in
            and jexp.out_tree.num_leaves == n_out
        )
    except Exception as e:  # noqa: BLE001 - any error reading untrusted bytes: corrupt
        raise Invalid(f"{what} has an unreadable argument structure ({brief(e)})") from None
    if not ok_tree:
        raise Invalid(
            f"{what} has argument or result structures that do not match its "
            f"{n_in} inputs and {n_out} outputs"
        )
    module_bytes = jexp.mlir_module_serialized
    if isolated:
        check_bytecode_in_subprocess(module_bytes)
    try:
        with jax_compat.make_ir_context():
            module = jax_compat.read_portable_artifact(module_bytes)
            module.operation.verify()
            check_signature(module, jexp)
    except Invalid as e:
        raise Invalid(f"{what} {e}") from None
    except Exception as e:  # noqa: BLE001 - any error parsing untrusted MLIR: corrupt
        raise Invalid(f"{what} has a StableHLO module that cannot be read ({brief(e)})") from None
    if jexp.has_vjp():
        if depth + 1 >= MAX_VJP_DEPTH:
            raise Invalid(f"it nests more than {MAX_VJP_DEPTH} levels of VJP")
        try:
            vjp = jexp.vjp()
        except Exception as e:  # noqa: BLE001 - corrupt bytes, unless the user's code raised
            if not isolated:
                reraise_if_from_pytree_functions(e)
            raise Invalid(f"its VJP cannot be read ({brief(e)})") from None
        check_exported(vjp, isolated=isolated, depth=depth + 1)


def is_args_kwargs(tree) -> bool:
    """Whether ``tree`` is the structure of ``(args, kwargs)``: a pair whose second
    item is a dict.

    Reads the structure only: no custom node's unflatten runs (it may expect
    arrays where a check would give it placeholders).

    >>> import olympus
    >>> is_args_kwargs(olympus.tree.structure(((1, 2), {"k": 3})))
    True
    >>> is_args_kwargs(olympus.tree.structure([(1, 2), {"k": 3}]))
    False
    """
    node = tree.node_data()  # (type, aux data), None for a leaf
    if node is None or node[0] is not tuple:
        return False
    children = jax.tree_util.treedef_children(tree)
    if len(children) != 2:
        return False
    kwargs = children[1].node_data()  # type: ignore[attr-defined]  # not in jaxlib's stub
    return kwargs is not None and kwargs[0] is dict


def check_signature(module: ir.Module, jexp) -> None:
    """The module's ``main`` takes and returns what the recorded types say."""
    main = None
    for view in module.body.operations:
        op = view.operation
        if (
            op.name == "func.func"
            and "sym_name" in op.attributes
            and ir.StringAttr(op.attributes["sym_name"]).value == "main"
        ):
            main = op
            break
    if main is None:
        raise Invalid("has a StableHLO module without a 'main' function")
    ftype = ir.FunctionType(ir.TypeAttr(main.attributes["function_type"]).value)
    inputs, results = list(ftype.inputs), list(ftype.results)
    n_tokens = len(jexp.ordered_effects)
    prefix = (1 if len(jexp.platforms) > 1 else 0) + n_tokens
    kept = [jexp.in_avals[i] for i in jexp.module_kept_var_idx]
    if len(inputs) != prefix + len(kept):
        raise Invalid(
            f"has a module whose 'main' takes {len(inputs)} arguments, but "
            f"{prefix + len(kept)} are recorded"
        )
    if len(results) != n_tokens + len(jexp.out_avals):
        raise Invalid(
            f"has a module whose 'main' returns {len(results)} results, but "
            f"{n_tokens + len(jexp.out_avals)} are recorded"
        )
    for k, (aval, t) in enumerate(zip(kept, inputs[prefix:])):
        _check_type(aval, t, f"takes argument {jexp.module_kept_var_idx[k]}")
    for k, (aval, t) in enumerate(zip(jexp.out_avals, results[n_tokens:])):
        _check_type(aval, t, f"returns result {k}")
    attr = module.operation.attributes
    if "mhlo.num_partitions" in attr and "mhlo.num_replicas" in attr:
        n = (
            ir.IntegerAttr(attr["mhlo.num_partitions"]).value
            * ir.IntegerAttr(attr["mhlo.num_replicas"]).value
        )
        if n != jexp.nr_devices:
            raise Invalid(f"has a module for {n} devices, but {jexp.nr_devices} are recorded")
    if "jax.uses_shape_polymorphism" in attr:
        uses = ir.BoolAttr(attr["jax.uses_shape_polymorphism"]).value
        if uses != bool(jexp.uses_global_constants):
            raise Invalid(
                "records uses_global_constants="
                f"{jexp.uses_global_constants} but its module says {uses}"
            )


def _check_type(aval, ir_type: ir.Type, what: str) -> None:
    shape, dtype = getattr(aval, "shape", None), getattr(aval, "dtype", None)
    if shape is None or dtype is None:
        return
    try:
        if jax.dtypes.issubdtype(dtype, jax.dtypes.extended):
            aval = jax_compat.physical_aval(aval)
            shape, dtype = aval.shape, aval.dtype
        expected = jax_compat.dtype_to_ir_type(dtype)
    except Exception:  # noqa: BLE001 - a type Olympus cannot map: nothing to compare against
        return
    try:
        tensor = ir.RankedTensorType(ir_type)
    except Exception:  # noqa: BLE001 - any error reading an untrusted type: a mismatch
        raise Invalid(
            f"has a module whose 'main' {what} as {ir_type}, but {short_aval(aval)} is recorded"
        ) from None
    ok = tensor.rank == len(shape) and tensor.element_type == expected
    if ok:
        for i, d in enumerate(shape):
            if jax_compat.is_constant_dim(d) and (
                tensor.is_dynamic_dim(i) or tensor.get_dim_size(i) != d
            ):
                ok = False
                break
    if not ok:
        raise Invalid(
            f"has a module whose 'main' {what} as {ir_type}, but {short_aval(aval)} is recorded"
        )


def check_bytecode_in_subprocess(module_bytes: bytes) -> None:
    """Reads the StableHLO bytecode in a child process: a crash or a hang of the
    bytecode reader stays there and becomes a reason the blob is rejected."""
    timeout = RAW_CHECK_TIMEOUT_S + len(module_bytes) / 1e6
    env = dict(os.environ, PYTHONSAFEPATH="1")
    try:
        proc = subprocess.run(
            [sys.executable, "-c", jax_compat.PORTABLE_ARTIFACT_CHECK_SCRIPT],
            input=module_bytes,
            capture_output=True,
            timeout=timeout,
            env=env,
        )
    except subprocess.TimeoutExpired:
        raise Invalid(
            f"has a StableHLO module whose reading did not finish in "
            f"{timeout:.0f} s (the bytecode is corrupted)"
        ) from None
    except OSError as e:
        raise Invalid(
            f"could not be checked in a separate process ({e}); wrap it with "
            f"the Olympus envelope to read it without one"
        ) from None
    if proc.returncode != 0:
        how = (
            f"signal {-proc.returncode}"
            if proc.returncode < 0
            else f"exit status {proc.returncode}"
        )
        raise Invalid(
            f"has a StableHLO module that crashed the bytecode reader ({how}); "
            f"the bytecode is corrupted"
        )
    reply = proc.stdout.decode("utf-8", "replace")
    if reply.startswith("OK"):
        return
    if reply.startswith("ERR "):
        raise Invalid(f"has a StableHLO module that cannot be read ({reply[4:]})")
    raise Invalid("has a StableHLO module that the checking process could not read")
