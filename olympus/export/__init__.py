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

The package holds one module per job, each importing only those listed before it:

- :mod:`~olympus.export.blob_format`: the envelope (magic, version, length,
  SHA-256) and the calling convention versions this Olympus reads;
- :mod:`~olympus.export.error_words`: the engine's errors in Olympus's words;
- :mod:`~olympus.export.blob_checks`: the checks of untrusted payloads;
- :mod:`~olympus.export.symbolic_shapes`: shapes with symbolic dimensions;
- :mod:`~olympus.export.pytree_serialization`: custom pytree types in blobs;
- :mod:`~olympus.export.exported`: :class:`Exported`, :func:`export` and
  :func:`deserialize`.
"""

from olympus.export.blob_format import (
    FORMAT_VERSION,
    HEADER_SIZE,
    MAGIC,
    DeserializationError,
    maximum_supported_calling_convention_version,
    minimum_supported_calling_convention_version,
)
from olympus.export.error_words import in_olympus_words as _in_olympus_words  # noqa: F401
from olympus.export.exported import (
    DisabledSafetyCheck,
    Exported,
    default_export_platform,
    deserialize,
    export,
)
from olympus.export.pytree_serialization import (
    register_namedtuple_serialization,
    register_pytree_node_serialization,
)
from olympus.export.symbolic_shapes import (
    SymbolicScope,
    is_symbolic_dim,
    symbolic_args_specs,
    symbolic_shape,
)

__all__ = [
    "export",
    "Exported",
    "deserialize",
    "DeserializationError",
    "symbolic_shape",
    "symbolic_args_specs",
    "SymbolicScope",
    "is_symbolic_dim",
    "DisabledSafetyCheck",
    "default_export_platform",
    "minimum_supported_calling_convention_version",
    "maximum_supported_calling_convention_version",
    "register_pytree_node_serialization",
    "register_namedtuple_serialization",
    "MAGIC",
    "FORMAT_VERSION",
    "HEADER_SIZE",
]
