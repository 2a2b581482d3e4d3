"""Symbolic dimensions: one export for every size of a named dimension.

A shape such as ``"b, 4"`` gives a dimension ``b`` that the exported program takes
at call time from its arguments. :func:`symbolic_shape` parses one shape,
``symbolic_args_specs`` makes specs for a whole argument tree; ``SymbolicScope``
(for constraints shared by several shapes) and ``is_symbolic_dim`` are the
engine's, unchanged.

>>> import olympus, numpy as np
>>> spec = olympus.ShapeDtypeStruct(symbolic_shape("b, 4"), np.float32)
>>> spec.shape
(b, 4)
>>> [is_symbolic_dim(d) for d in spec.shape]
[True, False]
"""

from __future__ import annotations

from collections.abc import Sequence

from jax import export as _jax_export

from olympus.errors import boundary

__all__ = ["symbolic_shape", "symbolic_args_specs", "SymbolicScope", "is_symbolic_dim"]

# Taken unchanged: they describe shapes, not Olympus objects.
SymbolicScope = _jax_export.SymbolicScope
is_symbolic_dim = _jax_export.is_symbolic_dim
symbolic_args_specs = _jax_export.symbolic_args_specs


@boundary
def symbolic_shape(
    shape_spec: str | None,
    *,
    constraints: Sequence[str] = (),
    scope: SymbolicScope | None = None,
    like: Sequence[int | None] | None = None,
) -> tuple:
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
            f"{type(shape_spec).__name__} {shape_spec!r:.60}."
        )
    return tuple(
        _jax_export.symbolic_shape(shape_spec, constraints=constraints, scope=scope, like=like)
    )
