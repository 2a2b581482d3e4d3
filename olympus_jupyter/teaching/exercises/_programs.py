"""What the lessons' checks share: programs of their own, and numbers read from answers."""

from __future__ import annotations

import linecache

import numpy as np

import olympus
import olympus.numpy as jnp

__all__ = ["program", "number"]


def program(source: str, name: str):
    """The function ``name`` defined by ``source``, in a file of its own.

    Olympus ties ops to the user's lines and never to its own files (this one is
    Olympus's), so a program a check inspects is compiled under a name of its own,
    with its source where ``linecache`` (and so the report) finds it.
    """
    filename = f"<olympus exercise {name}>"
    lines = source.splitlines(True)
    linecache.cache[filename] = (len(source), None, lines, filename)
    namespace = {"jnp": jnp, "olympus": olympus}
    exec(compile(source, filename, "exec"), namespace)  # noqa: S102 - our own source
    return namespace[name]


def number(value) -> float | None:
    """``value`` as a float, if it is one number (a Python, NumPy or JAX scalar)."""
    try:
        array = np.asarray(value)
    except Exception:  # noqa: BLE001 - whatever the student returned
        return None
    if array.shape != () or array.dtype.kind not in "biuf":
        return None
    return float(array)
