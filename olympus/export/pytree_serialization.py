"""Custom pytree types in serialized exports: registering how to write and read them.

An export whose arguments or results contain a custom pytree node can be
serialized only if its type is registered under a name that blobs carry; every
process that deserializes such blobs registers the same type under the same name.

>>> import collections, olympus, numpy as np
>>> Pair = collections.namedtuple("Pair", "a b")
>>> _ = register_namedtuple_serialization(Pair, serialized_name="doc.Pair")
>>> exp = olympus.export.export(olympus.jit(lambda p: p.a + p.b))(
...     Pair(np.float32(1), np.float32(2)))
>>> olympus.export.deserialize(exp.serialize()).in_tree
PyTreeDef(((CustomNode(namedtuple[Pair], [*, *]),), {}))
"""

from __future__ import annotations

from jax import export as _jax_export

__all__ = ["register_pytree_node_serialization", "register_namedtuple_serialization"]


def register_pytree_node_serialization(
    nodetype, *, serialized_name: str, serialize_auxdata, deserialize_auxdata, from_children=None
):
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
        nodetype,
        serialized_name=serialized_name,
        serialize_auxdata=serialize_auxdata,
        deserialize_auxdata=deserialize_auxdata,
        from_children=from_children,
    )


def register_namedtuple_serialization(nodetype, *, serialized_name: str):
    """Lets exports whose arguments or results contain the namedtuple ``nodetype`` be serialized."""
    return _jax_export.register_namedtuple_serialization(nodetype, serialized_name=serialized_name)
