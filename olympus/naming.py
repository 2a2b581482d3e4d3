"""How Olympus names things users read: IR attributes, olympuspr text, errors.

JAX writes its own name into what it produces (``jax.result_info`` attributes in
StableHLO, ``jaxpr`` parameters in printed programs, "JAX transformations" in
errors). Olympus is the name users see, so every text that leaves ``olympus``
passes through one of the functions here.

>>> rename_param_names("pjit[name=f jaxpr={ lambda ; a:f32[]. let  in (a,) }]")
'pjit[name=f olympuspr={ lambda ; a:f32[]. let  in (a,) }]'
"""
from __future__ import annotations

import io
import re

from jax._src.lib.mlir import ir

JAX_PREFIX = "jax."
OLYMPUS_PREFIX = "olympus."

# A parameter of a printed equation whose value is a jaxpr: `jaxpr=`,
# `body_jaxpr=`, `cond_jaxpr=`, `call_jaxpr=`, `fun_jaxpr=`, `jvp_jaxpr_fun=`...
# Parameter names are identifiers that follow a `[`, a space or a line start.
_JAXPR_PARAM = re.compile(r"(?<![\w.])(\w*?)jaxpr(\w*)=")


def rename_param_names(text: str) -> str:
    """Renames jaxpr-valued parameters of a printed program to ``olympuspr``."""
    return _JAXPR_PARAM.sub(r"\1olympuspr\2=", text)


def olympus_attr_name(name: str) -> str:
    """``jax.result_info`` -> ``olympus.result_info``; other names unchanged."""
    if name.startswith(JAX_PREFIX):
        return OLYMPUS_PREFIX + name[len(JAX_PREFIX):]
    return name


def _rename_attr_value(attr: ir.Attribute) -> ir.Attribute:
    """Renames ``jax.*`` keys inside dictionary (and array-of-dictionary) values."""
    if isinstance(attr, ir.DictAttr):
        entries = [attr[i] for i in range(len(attr))]
        if not any(e.name.startswith(JAX_PREFIX) for e in entries):
            return attr
        return ir.DictAttr.get(
            {olympus_attr_name(e.name): _rename_attr_value(e.attr) for e in entries})
    if isinstance(attr, ir.ArrayAttr):
        items = [attr[i] for i in range(len(attr))]
        renamed = [_rename_attr_value(a) for a in items]
        if any(r is not a for r, a in zip(renamed, items)):
            return ir.ArrayAttr.get(renamed)
    return attr


def _rename_op_attributes(op: ir.Operation) -> None:
    attrs = op.attributes
    for name in list(attrs):
        try:
            value = attrs[name]
        except TypeError:
            # The bindings cannot give back some attributes (dense complex
            # constants); they hold no attribute names to rename.
            continue
        new_value = _rename_attr_value(value)
        new_name = olympus_attr_name(name)
        if new_name != name:
            del attrs[name]
        if new_name != name or new_value is not value:
            attrs[new_name] = new_value


def olympus_module(module: ir.Module) -> ir.Module:
    """A copy of ``module`` whose ``jax.*`` attributes are named ``olympus.*``.

    The module JAX keeps (and compiles) is never changed.
    """
    with module.context:
        copy = ir.Module.parse(module.operation.get_asm(binary=True,
                                                         enable_debug_info=True))
        def visit(op):
            _rename_op_attributes(op)
            return ir.WalkResult.ADVANCE
        copy.operation.walk(visit)
    return copy


def module_text(module: ir.Module, *, debug_info: bool = False) -> str:
    """Prints a module the way ``Lowered.as_text()`` does."""
    out = io.StringIO()
    module.operation.print(file=out, enable_debug_info=debug_info)
    return out.getvalue()


_TRANSFORM_REFUSAL = re.compile(
    r"Cannot apply JAX transformations to a function lowered and compiled for "
    r"a particular signature\. Detected argument of Tracer type <class '([\w.]+)'>\.?")
_X64_HINT = (" Perhaps you are calling the compiled executable with a different "
             "enable_x64 mode than when it was AOT compiled?")


def olympus_message(message: str, *, x64_changed: bool = False) -> str:
    """Rewrites a message JAX raised so that it speaks of Olympus.

    >>> olympus_message("Cannot apply JAX transformations to a function lowered "
    ...   "and compiled for a particular signature. Detected argument of Tracer "
    ...   "type <class 'jax._src.interpreters.batching.BatchTracer'>.")  # doctest: +ELLIPSIS
    "Cannot apply OLYMPUS transformations ... Tracer type <class 'olympus._src.interpreters.batching.BatchTracer'>..."
    """
    m = _TRANSFORM_REFUSAL.search(message)
    if m:
        tracer = m.group(1).replace("jax._src.", "olympus._src.", 1)
        return (
            "Cannot apply OLYMPUS transformations to a function lowered and "
            "compiled for a particular signature. Detected argument of Tracer "
            f"type <class '{tracer}'>. Transform the original function instead, "
            "e.g. olympus.jit(olympus.vmap(f)).trace(...).lower().compile().")
    if not x64_changed:
        message = message.replace(_X64_HINT, "")
    return message.replace("JAX", "OLYMPUS")
