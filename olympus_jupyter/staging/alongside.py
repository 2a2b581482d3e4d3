"""Work done in a thread while a step runs: a report's reading beside XLA's compile.

XLA's compile releases Python's GIL while it works, so Python work in another
thread runs beside it nearly for free: :func:`alongside` starts ``work`` in a
thread as its ``with`` block starts, and waits for it as the block ends (also when
the block raises, or is interrupted). ``work`` is best effort: whatever it raises
is dropped, and whoever needs its result makes it again the usual way (where the
error is reported as always).

>>> done = []
>>> with alongside(lambda: done.append("read")):
...     pass
>>> done
['read']
>>> with alongside(lambda: 1 / 0):   # dropped: done again later, where it is reported
...     pass
>>> with alongside(None):            # nothing to do
...     pass
"""
from __future__ import annotations

import contextlib
import threading
import time
from collections.abc import Callable, Iterator

__all__ = ["alongside"]


@contextlib.contextmanager
def alongside(work: Callable[[], object] | None) -> Iterator[None]:
    """Runs ``work`` in a thread during the ``with`` block; waits for it at the end."""
    if work is None:
        yield
        return

    def run():
        # A new thread holds the GIL at first: give it back at once, so that the
        # step it runs beside gets going (and releases the GIL) before the work does.
        time.sleep(0)
        try:
            work()
        except BaseException:  # noqa: BLE001 - best effort: made again where needed
            pass

    thread = threading.Thread(target=run, name="olympus-alongside", daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join()
