"""Deadlines for tests that wait on another thread or process, scaled to the machine.

A test waits for an event (a line printed, a message received), never for a fixed
time; the deadline only bounds a wait that would otherwise hang. On a loaded
machine (two copies of the suite on two cores) everything is slower, so every
deadline is scaled by :func:`scale`: the environment's ``OLYMPUS_TEST_TIME_SCALE``
when set, else the load per core when it is above one. A deadline may grow this
way; what a test asserts about behaviour does not change.

>>> deadline(10) >= 10
True
>>> wait_until(lambda: True, 1)
True
"""

from __future__ import annotations

import os
import time
from collections.abc import Callable

#: The environment variable that sets the scale (a number >= 1) outright.
SCALE_VARIABLE = "OLYMPUS_TEST_TIME_SCALE"


def scale() -> float:
    """How much longer than on an idle machine a wait may take: ``OLYMPUS_TEST_TIME_SCALE``
    if set, else the one-minute load average per core (at least 1)."""
    given = os.environ.get(SCALE_VARIABLE)
    if given:
        try:
            value = float(given)
        except ValueError:
            raise ValueError(f"{SCALE_VARIABLE}={given!r}: give a number, such as 2") from None
        return max(1.0, value)
    try:
        load = os.getloadavg()[0] / (os.cpu_count() or 1)
    except OSError:  # no load average on this system: an idle machine
        load = 1.0
    return max(1.0, load)


def deadline(seconds: float) -> float:
    """``seconds`` (what a wait takes at most on an idle machine), scaled to this one."""
    return seconds * scale()


def wait_until(ready: Callable[[], object], seconds: float, interval: float = 0.01) -> bool:
    """Calls ``ready`` every ``interval`` seconds until it returns something true (then
    True) or :func:`deadline` of ``seconds`` has passed (then False). The caller
    asserts on the result, saying what did not happen."""
    end = time.monotonic() + deadline(seconds)
    while True:
        if ready():
            return True
        if time.monotonic() >= end:
            return False
        time.sleep(interval)


def ms(seconds: float) -> float:
    """:func:`deadline` in milliseconds, as Playwright takes its timeouts."""
    return deadline(seconds) * 1000
