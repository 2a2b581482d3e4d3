"""Arguments placed on a mesh of a target's devices, to compile for that hardware.

:func:`place` turns a call's arguments into what JAX traces for a target
(:mod:`olympus.hardware`): each array (a NumPy or JAX array, a
``jax.ShapeDtypeStruct``, a leaf of a whole parameter pytree from
``jax.eval_shape``) becomes a ``ShapeDtypeStruct`` of its shape and dtype,
sharded over the target's mesh. Nothing is allocated: a model of billions of
parameters is placed as shapes. Other leaves (Python numbers, strings, ``None``)
are left as they are.

The sharding of each argument comes from ``shardings``, a tuple with an entry
per positional argument (and a mapping for keyword arguments), each entry a
``PartitionSpec``, a ``NamedSharding`` or ``None`` (replicated), or a pytree of
them matching a prefix of the argument (a spec per parameter). Without an
entry, an argument keeps the sharding it carries: a ``NamedSharding`` on the
user's own mesh is laid onto the target's mesh by axis name; anything else is
replicated.

>>> import jax, numpy as np
>>> from jax.sharding import PartitionSpec as P
>>> mesh = jax.make_mesh((1,), ("data",))
>>> args, kwargs = place((np.ones((4, 2)), 3), {}, mesh, (P("data"), None))
>>> args[0].shape, args[0].sharding.spec == P("data"), args[1]
((4, 2), True, 3)
>>> parse_mesh("data=4, model=2")
{'data': 4, 'model': 2}
>>> parse_shardings("data,None; None,model") == (P("data", None), P(None, "model"))
True
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import numpy as np
from jax.sharding import NamedSharding, PartitionSpec

__all__ = [
    "PlacementError",
    "Shardings",
    "place",
    "parse_mesh",
    "parse_shardings",
    "mesh_axes",
    "is_spec",
]


class PlacementError(ValueError):
    """Arguments that cannot be placed as asked: says which and how to fix it."""


_AXIS = re.compile(r"^\s*([A-Za-z_][A-Za-z0-9_]*)\s*=\s*([0-9]+)\s*$")


def parse_mesh(
    value: Mapping[str, int] | Sequence[tuple[str, int]] | str | None,
) -> dict[str, int] | None:
    """Mesh axes as ``{name: size}``, from a mapping, ``(name, size)`` pairs or the
    text ``'data=4,model=2'``.

    >>> parse_mesh({"batch": 8})
    {'batch': 8}
    >>> parse_mesh("data:4")
    Traceback (most recent call last):
    olympus.placement.PlacementError: mesh 'data:4' is not axes: write NAME=SIZE, several as 'data=4,model=2'.
    """
    if value is None:
        return None
    if isinstance(value, str):
        items = []
        for part in value.split(","):
            match = _AXIS.match(part)
            if match is None:
                raise PlacementError(
                    f"mesh {value!r} is not axes: write NAME=SIZE, several as 'data=4,model=2'."
                )
            items.append((match[1], int(match[2])))
        value = dict(items)
    if isinstance(value, (list, tuple)) and all(
        isinstance(p, (list, tuple)) and len(p) == 2 for p in value
    ):  # (name, size) pairs, as the option table keeps a mesh
        value = dict(value)
    if not isinstance(value, Mapping) or not value:
        raise PlacementError(
            f"mesh must be axes such as {{'data': 4, 'model': 2}} or 'data=4,model=2'; got {value!r}."
        )
    axes = {}
    for name, size in value.items():
        if not isinstance(name, str) or not name.isidentifier():
            raise PlacementError(
                f"mesh axis names must be identifiers such as 'data'; got {name!r}."
            )
        if isinstance(size, bool) or not isinstance(size, (int, np.integer)) or size < 1:
            raise PlacementError(f"mesh axis {name!r} must have a size of 1 or more; got {size!r}.")
        axes[name] = int(size)
    return axes


def parse_shardings(text: str) -> tuple[PartitionSpec, ...]:
    """A ``PartitionSpec`` per argument from the command line's text: arguments
    apart by ``;``, dimensions by ``,``, ``None`` (or ``_``) for a dimension not
    sharded, an empty entry for a replicated argument, ``data+model`` for a
    dimension sharded over two axes.

    >>> parse_shardings("; data+model") == (PartitionSpec(), PartitionSpec(("data", "model")))
    True
    """
    specs = []
    for entry in text.split(";"):
        dims: list[Any] = []
        for dim in filter(None, (d.strip() for d in entry.split(","))):
            if dim in ("None", "_"):
                dims.append(None)
                continue
            names = tuple(n.strip() for n in dim.split("+"))
            if not all(n.isidentifier() for n in names):
                raise PlacementError(
                    f"shardings {text!r}: {dim!r} is not a mesh axis name; write axis names "
                    f"or None per dimension, arguments apart by ';' (e.g. 'data,None; None,model')."
                )
            dims.append(names[0] if len(names) == 1 else names)
        specs.append(PartitionSpec(*dims))
    return tuple(specs)


@dataclasses.dataclass(frozen=True)
class Shardings:
    """The ``shardings`` a user gave, frozen: hashable, so that a report made for
    them is cached, and compared by value (dicts of specs included).

    >>> given = ({"w": PartitionSpec("model")}, None)
    >>> Shardings.of(given).tree == given, hash(Shardings.of(given)) == hash(Shardings.of(given))
    (True, True)
    """

    leaves: tuple
    treedef: Any

    @classmethod
    def of(cls, value) -> "Shardings":
        if isinstance(value, Shardings):
            return value
        leaves, treedef = jax.tree_util.tree_flatten(value, is_leaf=is_spec)
        for leaf in leaves:
            if not is_spec(leaf):
                raise PlacementError(
                    f"shardings must hold PartitionSpecs, NamedShardings or None (in "
                    f"tuples, lists or dicts matching the arguments); got {leaf!r} "
                    f"({type(leaf).__name__})."
                )
        return cls(tuple(leaves), treedef)

    @property
    def tree(self):
        return jax.tree_util.tree_unflatten(self.treedef, self.leaves)


def mesh_axes(mesh: jax.sharding.Mesh) -> dict[str, int]:
    """``{axis name: size}`` of a mesh."""
    return dict(zip(mesh.axis_names, mesh.devices.shape))


def is_spec(x) -> bool:
    """Whether ``x`` is one sharding: a ``PartitionSpec``, a ``NamedSharding`` or None."""
    return x is None or isinstance(x, (PartitionSpec, NamedSharding))


def _is_array(x) -> bool:
    return isinstance(x, (jax.Array, np.ndarray, np.generic, jax.ShapeDtypeStruct))


def _spec_on(mesh: jax.sharding.Mesh, spec, where: str) -> NamedSharding:
    """``spec`` (a PartitionSpec, a NamedSharding on any mesh, or None) on ``mesh``."""
    if spec is None:
        spec = PartitionSpec()
    if isinstance(spec, NamedSharding):
        spec = spec.spec
    for dim in spec:
        for axis in dim if isinstance(dim, tuple) else (dim,):
            if axis is not None and axis not in mesh.axis_names:
                raise PlacementError(
                    f"{where} is sharded over mesh axis {axis!r}, which the target's mesh "
                    f"({', '.join(f'{k}={v}' for k, v in mesh_axes(mesh).items())}) does not "
                    f"have. Name the mesh's axes with mesh= (e.g. mesh='{axis}=N,...'), or "
                    f"shard over its own axes."
                )
    return NamedSharding(mesh, spec)


def _placed_leaf(leaf, spec, mesh, where: str, given: bool):
    if not _is_array(leaf):
        return leaf
    if not given:  # the argument's own sharding, laid onto the target's mesh
        own = getattr(leaf, "sharding", None)
        spec = own if isinstance(own, NamedSharding) else None
    return jax.ShapeDtypeStruct(tuple(leaf.shape), leaf.dtype, sharding=_spec_on(mesh, spec, where))


def _placed(value, spec_tree, mesh, where: str, given: bool):
    """One argument placed with its entry of ``shardings`` (a prefix tree of specs)."""
    if not given:
        return jax.tree_util.tree_map(
            lambda leaf: _placed_leaf(leaf, None, mesh, where, False), value
        )
    try:
        return jax.tree_util.tree_map(
            lambda spec, sub: jax.tree_util.tree_map(
                lambda leaf: _placed_leaf(leaf, spec, mesh, where, True), sub
            ),
            spec_tree,
            value,
            is_leaf=is_spec,
        )
    except ValueError as e:
        raise PlacementError(
            f"the sharding given for {where} does not match its structure: give one "
            f"PartitionSpec, or a pytree of them matching a prefix of the argument ({e})."
        ) from None


def place(
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    mesh: jax.sharding.Mesh,
    shardings: Sequence[Any] | Mapping[str, Any] | Any = None,
) -> tuple[tuple, dict]:
    """``(args, kwargs)`` placed on ``mesh`` (see the module's docstring).

    ``shardings``: ``None`` (each argument keeps its own sharding, else is
    replicated), a tuple with an entry per positional argument, a mapping for
    keyword arguments (``{'params': P(...)}``) or a ``(tuple, mapping)`` pair.
    """
    if isinstance(shardings, Shardings):
        shardings = shardings.tree
    positional, named = _split_shardings(shardings, len(args))
    placed_args = tuple(
        _placed(
            a,
            positional[k] if k < len(positional) else None,
            mesh,
            f"argument {k}",
            k < len(positional),
        )
        for k, a in enumerate(args)
    )
    unknown = sorted(set(named) - set(kwargs))
    if unknown:
        raise PlacementError(
            f"shardings name keyword argument(s) {', '.join(map(repr, unknown))} that the call "
            f"does not pass (it passes: {', '.join(map(repr, kwargs)) or 'none'})."
        )
    placed_kwargs = {
        k: _placed(v, named.get(k), mesh, f"argument {k!r}", k in named) for k, v in kwargs.items()
    }
    return placed_args, placed_kwargs


def _split_shardings(shardings, count: int) -> tuple[tuple, dict]:
    if shardings is None:
        return (), {}
    if is_spec(shardings):  # one spec: for the one argument
        return (shardings,), {}
    if isinstance(shardings, Mapping):
        return (), dict(shardings)
    if (
        isinstance(shardings, tuple)
        and len(shardings) == 2
        and isinstance(shardings[1], Mapping)
        and not is_spec(shardings[0])
    ):
        return tuple(shardings[0]), dict(shardings[1])
    if isinstance(shardings, (list, tuple)):
        if len(shardings) > count:
            raise PlacementError(
                f"shardings has {len(shardings)} entries for a call with {count} positional "
                f"argument(s): give one entry per argument (None: replicated)."
            )
        return tuple(shardings), {}
    raise PlacementError(
        f"shardings must be a PartitionSpec per argument (a tuple), a mapping for keyword "
        f"arguments, or None; got {shardings!r} ({type(shardings).__name__})."
    )
