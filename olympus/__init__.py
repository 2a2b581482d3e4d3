"""Olympus: see and control how JAX programs are compiled, stage by stage.

``olympus.jit(f).trace(*args)`` → ``.lower()`` → ``.compile()`` → call, with every
stage inspectable; ``olympus.export`` for serialized artifacts; and
``olympus.provenance`` tying every op of every stage to the Python line it came from.

>>> import olympus
>>> olympus.jit(lambda x: x + 1).trace(1.0).lower().compile()(1.0)
Array(2., dtype=float32, weak_type=True)
"""

from olympus.api import jit, make_olympuspr, pmap
from olympus import stages
from olympus.stages import Olympuspr

# What a user needs to write programs: JAX's own, under Olympus's name.
from jax import (
    Array,
    ShapeDtypeStruct,
    device_get,
    device_put,
    devices,
    eval_shape,
    grad,
    jvp,
    local_devices,
    value_and_grad,
    vjp,
    vmap,
    default_backend,
    tree,
)
from olympus import lax, numpy, random, sharding, tree_util
from olympus import export, provenance

__version__ = "0.1.0"

__all__ = [
    "jit",
    "pmap",
    "make_olympuspr",
    "stages",
    "Olympuspr",
    "export",
    "provenance",
    "Array",
    "ShapeDtypeStruct",
    "device_get",
    "device_put",
    "devices",
    "eval_shape",
    "grad",
    "jvp",
    "local_devices",
    "value_and_grad",
    "vjp",
    "vmap",
    "default_backend",
    "tree",
    "lax",
    "random",
    "sharding",
    "tree_util",
    "numpy",
]
