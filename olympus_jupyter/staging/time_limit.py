"""A time limit on staging: a function that hangs while it is traced is stopped.

:func:`time_limit` arms a real-time timer (``SIGALRM``) for the code in its
``with`` block and raises :class:`StageTimeout` in that code when the timer
fires: a Python loop that never ends, a ``time.sleep`` or a blocking read in the
traced function is stopped where it is, with a traceback at the user's line. Code
inside the compiler (XLA's C++) cannot be stopped midway: the exception is
raised when it returns to Python. Whatever timer and handler were set before are
put back afterwards (a user's own timer resumes with the time it had left), so
nothing of the process is changed.

Signals reach the main thread only; elsewhere (or where the platform has no
``SIGALRM``, such as Windows) asking for a limit raises :class:`ValueError`
saying so, rather than silently running without one.

>>> import time
>>> with time_limit(None):          # no limit: nothing is armed
...     pass
>>> try:
...     with time_limit(0.05):
...         time.sleep(5)
... except StageTimeout as e:
...     print(e)
Stopped after the time limit of 0.05 s (timeout=0.05). Raise it, or look for a loop that does not end at the line shown.
"""

from __future__ import annotations

import contextlib
import math
import signal
import threading
import time

__all__ = ["StageTimeout", "time_limit", "check_timeout", "cannot_limit"]


class StageTimeout(Exception):
    """Staging ran past the time limit the user set (``timeout=``)."""


def check_timeout(seconds) -> float | None:
    """``seconds`` as a positive number of seconds, or None; a clear ``ValueError`` for
    anything else (booleans, strings, zero, negative numbers, NaN).

    >>> check_timeout(2), check_timeout(None)
    (2.0, None)
    >>> check_timeout(-1)
    Traceback (most recent call last):
    ValueError: timeout must be a positive number of seconds (or None for no limit), got -1.
    """
    if seconds is None:
        return None
    if (
        isinstance(seconds, bool)
        or not isinstance(seconds, (int, float))
        or not math.isfinite(seconds)
        or seconds <= 0
    ):
        raise ValueError(
            f"timeout must be a positive number of seconds (or None for no limit), got {seconds!r}."
        )
    return float(seconds)


def cannot_limit() -> str | None:
    """Why no time limit can be set here (not the main thread, no ``SIGALRM``), or None."""
    if not hasattr(signal, "setitimer"):
        return "timeout needs SIGALRM, which this platform does not have; run without timeout."
    if threading.current_thread() is not threading.main_thread():
        return (
            "timeout works in the main thread only (it uses a signal); "
            "run without timeout in other threads."
        )
    return None


def _limit_text(seconds: float) -> str:
    return f"{seconds:g}"


@contextlib.contextmanager
def time_limit(seconds: float | None):
    """Raises :class:`StageTimeout` in the ``with`` block once ``seconds`` have passed
    (``None``: no limit, nothing armed)."""
    seconds = check_timeout(seconds)
    if seconds is None:
        yield
        return
    reason = cannot_limit()
    if reason:
        raise ValueError(reason)

    armed = [True]

    def expired(signum, frame):
        if not armed[0]:  # fired while the block was ending: nothing left to stop
            return
        raise StageTimeout(
            f"Stopped after the time limit of {_limit_text(seconds)} s "
            f"(timeout={_limit_text(seconds)}). Raise it, or look for a "
            f"loop that does not end at the line shown."
        )

    previous_handler = signal.signal(signal.SIGALRM, expired)
    previous_delay, previous_interval = signal.setitimer(signal.ITIMER_REAL, seconds)
    start = time.monotonic()
    try:
        yield
    finally:
        armed[0] = False
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous_handler)
        if previous_delay:
            # The user's own timer goes on with what it had left (at least a tick).
            left = max(previous_delay - (time.monotonic() - start), 1e-6)
            signal.setitimer(signal.ITIMER_REAL, left, previous_interval)
