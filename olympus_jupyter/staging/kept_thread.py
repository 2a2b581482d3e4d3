"""A daemon thread kept for the process, for the background work of reports.

The progress line's thread (:class:`~.progress.Scheduler`) and the worker that reads
beside XLA's compile (:class:`~.alongside.Worker`) are each one thread for the
process: started with their first use (again should the thread have died, or in a
forked child, which has no threads but the one that forked), then kept, asleep on
their condition between uses. A thread started and joined by each report cost it
about 0.2 ms, and took the GIL from the step it ran beside.

>>> import collections
>>> class Echo(KeptThread):
...     name = "echo"
...     def _reset(self):
...         super()._reset()
...         self.heard = collections.deque()
...     def say(self, word):
...         with self._ready:
...             self._running()
...             self.heard.append(word)
...     def _run(self):
...         pass
>>> echo = Echo()
>>> echo.say("hello"); echo._thread.join(); list(echo.heard)
['hello']
"""

from __future__ import annotations

import os
import threading

__all__ = ["KeptThread"]


class KeptThread:
    """One daemon thread named :attr:`name` that runs :meth:`_run`; a subclass keeps
    its state in :meth:`_reset` and guards it with ``self._ready`` (a condition)."""

    #: The thread's name.
    name = "olympus"

    def __init__(self):
        self._reset()
        if hasattr(os, "register_at_fork"):  # a forked child has no thread yet
            os.register_at_fork(after_in_child=self._reset)

    def _reset(self) -> None:
        """Fresh state, with no thread (a subclass adds its own)."""
        self._ready = threading.Condition(threading.Lock())
        self._thread: threading.Thread | None = None

    def _running(self) -> None:
        """Starts the thread unless it runs; call it with ``self._ready`` held."""
        if self._thread is None or not self._thread.is_alive():
            self._thread = threading.Thread(target=self._run, name=self.name, daemon=True)
            self._thread.start()

    def _run(self) -> None:
        raise NotImplementedError
