"""Work done in a thread while a step runs: a report's reading beside XLA's compile.

XLA's compile releases Python's GIL while it works, so Python work in another
thread runs beside it nearly for free: :func:`alongside` hands ``work`` to the
process's worker thread as its ``with`` block starts, and waits for it as the
block ends (also when the block raises, or is interrupted). ``work`` is best
effort: whatever it raises is dropped, and whoever needs its result makes it again
the usual way (where the error is reported as always). Work the worker has not
started when the block ends (it was busy with another's) is not done at all.

The worker is one daemon thread for the process (:class:`Worker`), started with
the first work and kept, asleep between works: a thread started and joined for
each report cost it about 0.2 ms, and the new thread took the GIL from the step
it was to run beside. The kept one wakes when the work is handed to it and
takes the GIL only once the step releases it.

"Nearly for free" holds where cores are to spare: XLA compiles in threads of its
own, on every core, so on a machine with few cores the work takes CPU time from the
compile. On Linux the worker therefore runs at a lower priority (:data:`NICENESS`
more than the thread that starts it; a thread's priority is its own there), taking
what the compile leaves free. The measurements behind these choices are in
``benchmarks/README.md`` ("The reading beside the compile").

>>> import threading, time
>>> done, started = [], threading.Event()
>>> with alongside(lambda: (started.set(), done.append("read"))):
...     started.wait(60)             # a step that releases the GIL, as a compile does
True
>>> done
['read']
>>> with alongside(lambda: 1 / 0):   # dropped: done again later, where it is reported
...     time.sleep(0.05)
>>> with alongside(None):            # nothing to do
...     pass
"""

from __future__ import annotations

import collections
import contextlib
import os
import sys
import threading
from collections.abc import Callable, Iterator

from olympus_jupyter.staging.kept_thread import KeptThread

__all__ = ["alongside", "Worker", "WORKER", "NICENESS"]

#: How much lower the worker's priority is than that of the thread that starts it
#: (Linux; capped at the lowest, 19).
NICENESS = 10


def lower_priority(by: int = NICENESS) -> bool:
    """Lowers the calling thread's own priority by ``by`` nice levels, where the OS
    gives threads priorities of their own (Linux); ``True`` if it did. Nothing else
    of the process changes (elsewhere, ``setpriority`` would renice the process).

    >>> import threading
    >>> box = []
    >>> t = threading.Thread(target=lambda: box.append(lower_priority(3))); t.start(); t.join()
    >>> box == [sys.platform.startswith("linux")]
    True
    """
    if not sys.platform.startswith("linux"):
        return False
    try:
        me = threading.get_native_id()
        os.setpriority(os.PRIO_PROCESS, me, min(19, os.getpriority(os.PRIO_PROCESS, me) + by))
    except OSError:  # not allowed here: the work runs at the usual priority
        return False
    return True


class _Work:
    """One work handed to the worker: waiting, then running, then ended."""

    def __init__(self, work: Callable[[], object]):
        self.work = work
        self.started = False
        self.ended = threading.Event()


class Worker(KeptThread):
    """The thread that runs work beside a step, one work at a time, at a lower
    priority (see the module's text): one for the process (:class:`~.kept_thread.KeptThread`)."""

    name = "olympus-alongside"

    def _reset(self) -> None:
        super()._reset()
        self._waiting: collections.deque[_Work] = collections.deque()

    def start(self, work: Callable[[], object]) -> _Work:
        """Hands ``work`` to the thread; :meth:`finish` it."""
        item = _Work(work)
        with self._ready:
            self._waiting.append(item)
            self._running()
            self._ready.notify()
        return item

    def finish(self, item: _Work) -> None:
        """Waits for ``item`` to end; one not started yet is dropped instead."""
        with self._ready:
            if not item.started:
                self._waiting.remove(item)
                return
        item.ended.wait()

    def _run(self) -> None:
        lower_priority()  # the step it runs beside comes first (see the module's text)
        while True:
            with self._ready:
                while not self._waiting:
                    self._ready.wait()
                item = self._waiting.popleft()
                item.started = True
            try:
                item.work()
            except BaseException:  # noqa: BLE001 - best effort: made again where needed
                pass
            finally:
                item.ended.set()
                del item  # what the work holds is not kept until the next


#: The process's one worker for work beside a step (see :class:`Worker`).
WORKER = Worker()


@contextlib.contextmanager
def alongside(work: Callable[[], object] | None) -> Iterator[None]:
    """Runs ``work`` in the worker thread during the ``with`` block; waits for it at
    the end."""
    if work is None:
        yield
        return
    item = WORKER.start(work)
    try:
        yield
    finally:
        WORKER.finish(item)
