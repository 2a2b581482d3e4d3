"""Errors as users of Olympus read them.

JAX attaches a note to exceptions raised through its API ("For simplicity, JAX
has removed its internal frames..."). At Olympus's API boundary that note is
dropped (the frames are still filtered), so an error in the user's function reads
as the user's error.

>>> @boundary
... def fails():
...     raise ValueError("bad")
>>> fails()
Traceback (most recent call last):
ValueError: bad
"""

from __future__ import annotations

import functools
import os

from olympus import jax_compat

_JAX_NOTE_MARK = "JAX has removed its internal frames"


class StageUnavailable(Exception):
    """A stage that does not exist for this program (the partitioned program of a
    one-device function, say); the message says why. Raised by a stage's reader
    (see :mod:`olympus.stage_registry`); any other exception from a reader is a
    failure, and reports show it as one."""


def register_internal(path: str) -> None:
    """Marks files under ``path`` as library code, as JAX marks its own: their frames
    are left out of tracebacks and never taken for the user's source line."""
    jax_compat.register_internal_path(path)


# Olympus's own frames are as internal to the user as JAX's.
register_internal(os.path.dirname(__file__))


def strip_jax_notes(e: BaseException) -> None:
    """Removes the traceback-filtering note JAX added to ``e``, if any."""
    notes = getattr(e, "__notes__", None)
    if notes:
        kept = [n for n in notes if _JAX_NOTE_MARK not in n]
        if len(kept) != len(notes):
            if kept:
                e.__notes__ = kept
            else:
                del e.__notes__


def boundary(fun):
    """Decorates an Olympus API function so exceptions leave it without JAX's note."""

    @functools.wraps(fun)
    def wrapper(*args, **kwargs):
        __tracebackhide__ = True  # read by IPython and pytest
        try:
            return fun(*args, **kwargs)
        except Exception as e:
            strip_jax_notes(e)
            raise

    return wrapper
