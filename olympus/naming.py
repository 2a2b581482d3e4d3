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

from jax.extend.mlir import ir

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
        return OLYMPUS_PREFIX + name[len(JAX_PREFIX) :]
    return name


def _rename_attr_value(attr: ir.Attribute) -> ir.Attribute:
    """Renames ``jax.*`` keys inside dictionary (and array-of-dictionary) values."""
    if isinstance(attr, ir.DictAttr):
        entries = [attr[i] for i in range(len(attr))]
        if not any(e.name.startswith(JAX_PREFIX) for e in entries):
            return attr
        return ir.DictAttr.get(
            {olympus_attr_name(e.name): _rename_attr_value(e.attr) for e in entries}
        )
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


def _rename_all(root: ir.Operation) -> None:
    """Renames the ``jax.*`` attributes of ``root`` and every operation in it, in place."""

    def visit(op):
        _rename_op_attributes(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit)


def olympus_module(module: ir.Module) -> ir.Module:
    """A copy of ``module`` whose ``jax.*`` attributes are named ``olympus.*``.

    The module JAX keeps (and compiles) is never changed.
    """
    with module.context:
        copy = ir.Module.parse(
            module.operation.get_asm(
                binary=True,  # type: ignore[call-overload]
                enable_debug_info=True,
            )
        )
        _rename_all(copy.operation)
    return copy


def olympus_operation(module: ir.Module) -> ir.Operation:
    """Like :func:`olympus_module`, as the module's operation: a clone, which is
    about 15 times faster than the round trip through bytecode that makes an
    ``ir.Module`` (what Olympus prints and reads itself uses this).

    >>> import jax
    >>> op = olympus_operation(jax.jit(lambda x: x).trace(1.0).lower().compiler_ir())
    >>> "olympus.result_info" in module_text(op), "jax.result_info" in module_text(op)
    (True, False)
    """
    return renamed(clone(module))


def clone(module: ir.Module) -> ir.Operation:
    """A copy of ``module``'s operation, as it is (:func:`renamed` names it for
    Olympus): what changes the copy changes nothing of ``module``."""
    with module.context:
        return module.operation.clone()


def renamed(op: ir.Operation) -> ir.Operation:
    """``op`` (a copy made by :func:`clone`) with its ``jax.*`` attributes named
    ``olympus.*``, in place: most of the cost of :func:`olympus_operation`. It touches
    ``op`` alone, so it may run while another thread works on the module it was
    copied from (their context uniques what both make: it runs a thread pool, so
    it is made for threads)."""
    with op.context:
        _rename_all(op.operation)
    return op


def module_text(module: ir.Module | ir.Operation, *, debug_info: bool = False) -> str:
    """Prints a module (or its operation) the way ``Lowered.as_text()`` does."""
    out = io.StringIO()
    module.operation.print(file=out, enable_debug_info=debug_info)
    return out.getvalue()


_TRANSFORM_REFUSAL = re.compile(
    r"Cannot apply JAX transformations to a function lowered and compiled for "
    r"a particular signature\. Detected argument of Tracer type <class '([\w.]+)'>\.?"
)
_X64_HINT = (
    " Perhaps you are calling the compiled executable with a different "
    "enable_x64 mode than when it was AOT compiled?"
)

# What a message quotes is the user's (names, values, paths): never renamed.
# A quote opens where no letter precedes it (so "JAX's" opens nothing).
_PROTECTED = re.compile(
    "|".join(
        [
            r"<class '[^'\n]*'>",  # <class 'jax._src....BatchTracer'>
            r"(?<![\w])'[^'\n]*'(?![\w])",  # 'x', 'JAX_input'
            r'"[^"\n]*"',  # "a string value"
            r"""[^\s'"`()\[\]{},;<>]*[/\\][^\s'"`()\[\]{},;<>]*""",  # /home/me/jax_stuff.py
        ]
    )
)
# JAX's own name, as a word of its own (not part of JAX_input, JAX-based, jax.py).
_JAX_WORD = re.compile(r"(?<![\w.\-/])JAX(?![\w\-/])")
# A reference to JAX's API, e.g. jax.jit or jax.export.export.
_JAX_API = re.compile(r"(?<![\w./\-])jax((?:\.[A-Za-z_]\w*)+)")


def _olympus_has(path: str) -> bool:
    """Whether ``olympus`` + ``path`` (e.g. ``.export.export``) names something real."""
    import importlib

    obj = importlib.import_module("olympus")
    for part in path.strip(".").split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            return False
    return True


def _rename_api(m: re.Match) -> str:
    path = m.group(1)
    # The longest prefix Olympus has: jax.jit -> olympus.jit, while jax.config stays.
    parts = path.split(".")[1:]
    for n in range(len(parts), 0, -1):
        head = "." + ".".join(parts[:n])
        if _olympus_has(head):
            return "olympus" + head + path[len(head) :]
    return m.group(0)


def _rename_free_text(text: str) -> str:
    return _JAX_API.sub(_rename_api, _JAX_WORD.sub("OLYMPUS", text))


def olympus_words(message: str) -> str:
    """Speaks of Olympus where a message speaks of JAX itself, and only there.

    JAX's name as a word becomes OLYMPUS, and references to JAX's API become
    Olympus's where Olympus has the same thing; what the message quotes (the
    user's names and values), class paths and file paths stay as they are.

    >>> olympus_words("JAX transformations of 'JAX_input' in /src/jax/JAX.py")
    "OLYMPUS transformations of 'JAX_input' in /src/jax/JAX.py"
    >>> olympus_words("use `jax.jit` or jax.export.export; see jax.config")
    'use `olympus.jit` or olympus.export.export; see jax.config'
    """
    out, last = [], 0
    for m in _PROTECTED.finditer(message):
        out.append(_rename_free_text(message[last : m.start()]))
        out.append(m.group(0))
        last = m.end()
    out.append(_rename_free_text(message[last:]))
    return "".join(out)


def olympus_message(message: str, *, x64_changed: bool = False) -> str:
    """Rewrites a message JAX raised so that it speaks of Olympus (see :func:`olympus_words`).

    >>> olympus_message("Cannot apply JAX transformations to a function lowered "
    ...   "and compiled for a particular signature. Detected argument of Tracer "
    ...   "type <class 'jax._src.interpreters.batching.BatchTracer'>.")  # doctest: +ELLIPSIS
    "Cannot apply OLYMPUS transformations ... <class 'jax._src.interpreters.batching.BatchTracer'>. Transform the original function instead..."
    """
    m = _TRANSFORM_REFUSAL.search(message)
    if m:
        return (
            "Cannot apply OLYMPUS transformations to a function lowered and "
            "compiled for a particular signature. Detected argument of Tracer "
            f"type <class '{m.group(1)}'>. Transform the original function instead, "
            "e.g. olympus.jit(olympus.vmap(f)).trace(...).lower().compile()."
        )
    if not x64_changed:
        message = message.replace(_X64_HINT, "")
    return olympus_words(message)
