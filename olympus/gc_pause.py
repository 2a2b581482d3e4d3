"""Python's cyclic garbage collector paused for a stretch of work that makes many
objects and no cycles to collect.

The costs stage of a big program keeps hundreds of thousands of small objects (a
parsed instruction, a key, a share for each of tens of thousands of instructions)
alive until it ends. Each time the objects kept since the last full collection
pass a quarter of all the process holds (the compiled program's model, JAX's and
the notebook's objects), Python runs a full collection over all of them, and finds
nothing to free: they are alive, and what dies in between is freed by reference
counting. On a 12,000-instruction program that was 30 % of the stage's time
(``benchmarks/README.md``). :func:`paused_gc` turns the collector off for the
stretch and back on after it, as it was: whatever the work leaves as cyclic
garbage is collected by the next collection after it.

>>> import gc
>>> with paused_gc():
...     gc.isenabled()
False
>>> gc.isenabled()
True
>>> @paused_gc()  # a function's every call, as the costs stage and build_report are
... def collecting():
...     return gc.isenabled()
>>> collecting(), gc.isenabled()
(False, True)
"""

from __future__ import annotations

import contextlib
import gc
from collections.abc import Iterator

__all__ = ["paused_gc"]


@contextlib.contextmanager
def paused_gc() -> Iterator[None]:
    """The cyclic garbage collector off inside the ``with`` block, and as it was
    after it (left off where the caller had turned it off)."""
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        yield
    finally:
        if was_enabled:
            gc.enable()
