"""Progress of long work: which step is running and for how long, once it takes a while.

A report of a small function takes a fraction of a second and shows nothing but
itself. When making one takes longer than :data:`DELAY` seconds (a big model's
XLA compile), :class:`Progress` starts calling ``show`` with a status line
every :data:`INTERVAL` seconds, from a background thread: the step running, the
time so far, the steps done, and how to stop it. The compiler's C++ releases the
interpreter while it works, so the thread runs while the main thread waits on
it. When the work ends (or is interrupted), ``done`` is called if anything was
shown, so that a frontend can clear its status.

That thread is one for the process (:class:`Scheduler`, a daemon thread started
with the first progress and kept): it sleeps until a progress is due, so that
work that ends within the delay (every report of a small function) starts and
joins no thread of its own. A thread of its own cost a report about half a
millisecond, a tenth of what the report adds to a compile.

The text is made by :func:`status_line`, a pure function of the steps and times:

>>> status_line("compile", 3.24, {"trace": 0.41, "lower": 0.12})
'Olympus: compiling with XLA… 3.2 s so far (traced in 0.41 s, lowered in 0.12 s). Interrupt the kernel (or press Ctrl+C) to stop.'

>>> lines = []
>>> with Progress(lines.append) as progress:
...     progress.step("trace")
...     print(progress.line()[:36])
Olympus: tracing the function… 0.0 s
>>> lines   # done within a second: nothing was shown
[]
"""

from __future__ import annotations

import contextvars
import logging
import math
import sys
import threading
import time
from collections.abc import Callable, Mapping

from olympus_jupyter.staging.kept_thread import KeptThread

_log = logging.getLogger(__name__)

__all__ = [
    "Progress",
    "Scheduler",
    "Silent",
    "status_line",
    "shown_in_output",
    "shown_on",
    "DELAY",
    "INTERVAL",
]

#: Seconds of work before any progress is shown.
DELAY = 1.0
#: Seconds between two status lines.
INTERVAL = 0.5

#: What each step is called while it runs, and once done.
_DOING = {
    "trace": ("tracing the function", "traced"),
    "lower": ("lowering to StableHLO", "lowered"),
    "compile": ("compiling with XLA", "compiled"),
    "report": ("reading the stages into the report", "read"),
    "display": ("making the display (data, HTML, text)", "made"),
    "save": ("writing the page", "written"),
}


def status_line(step: str, elapsed: float, done: Mapping[str, float]) -> str:
    """The status of work on ``step`` for ``elapsed`` seconds, after the steps
    ``done`` (name → seconds)."""
    doing = _DOING.get(step, (step, step))[0]
    finished = ", ".join(f"{_DOING.get(s, (s, s))[1]} in {t:.2g} s" for s, t in done.items())
    return (
        f"Olympus: {doing}… {elapsed:.1f} s so far"
        + (f" ({finished})" if finished else "")
        + ". Interrupt the kernel (or press Ctrl+C) to stop."
    )


class Scheduler(KeptThread):
    """The thread that shows every :class:`Progress` when it is due: one daemon
    thread for the process, started with the first progress that is entered (and
    again should it have died, or in a forked child), then kept, asleep until the
    next progress is due.

    >>> ticks = []
    >>> class Tick:
    ...     def _tick(self):
    ...         ticks.append("shown")
    ...         return None                  # not due again
    >>> SCHEDULER.add(Tick(), 0.0)           # due now
    >>> for _ in range(200):
    ...     if ticks: break
    ...     time.sleep(0.01)
    >>> ticks
    ['shown']
    """

    name = "olympus-progress"

    def _reset(self) -> None:
        super()._reset()
        self._due: dict = {}  # each entry's next time to show (time.monotonic)

    def add(self, entry, delay: float) -> None:
        """Calls ``entry._tick()`` in ``delay`` seconds, and again as often as it
        returns a number of seconds (``None``: not again), until :meth:`remove`."""
        with self._ready:
            self._due[entry] = time.monotonic() + delay
            self._running()
            self._ready.notify()

    def remove(self, entry) -> None:
        """No more calls of ``entry._tick()`` are started (one running goes on: the
        entry guards what it shows itself)."""
        with self._ready:
            self._due.pop(entry, None)

    def _next(self) -> list:
        """Waits until entries are due; returns them, kept as being shown (due at no
        time) until :meth:`_run` schedules them again or :meth:`remove` drops them."""
        with self._ready:
            while True:
                now = time.monotonic()
                due = [e for e, at in self._due.items() if at <= now]
                if due:
                    self._due.update(dict.fromkeys(due, math.inf))
                    return due
                soonest = min(self._due.values(), default=math.inf)
                self._ready.wait(None if soonest == math.inf else soonest - now)

    def _run(self) -> None:
        while True:
            for entry in self._next():
                try:
                    again = entry._tick()
                except Exception:  # noqa: BLE001 - an entry that fails is not shown again
                    _log.warning("a progress line failed: it is not shown again", exc_info=True)
                    again = None
                with self._ready:
                    if entry in self._due:  # not removed while it was shown
                        if again is None:
                            del self._due[entry]
                        else:
                            self._due[entry] = time.monotonic() + again


#: The process's one progress thread (see :class:`Scheduler`).
SCHEDULER = Scheduler()


class Progress:
    """Shows the status of long work through ``show(text)``; ``done()`` once it ends.

    Use it as a context manager around the work, and call :meth:`step` when each
    step starts. Nothing is shown for work shorter than ``delay`` seconds.
    ``show`` runs on the process's progress thread (:class:`Scheduler`), in the
    context of the code that entered the ``with`` (so that a kernel routes its
    output to that cell); ``done`` runs where the ``with`` ends. An exception
    either raises stops the progress, never the work. Once the ``with`` has
    ended, nothing more is shown.
    """

    def __init__(
        self,
        show: Callable[[str], None],
        done: Callable[[], None] | None = None,
        *,
        delay: float = DELAY,
        interval: float = INTERVAL,
        clock: Callable[[], float] = time.monotonic,
    ):
        self._show, self._done = show, done
        self.delay, self.interval, self._clock = delay, interval, clock
        self._lock = threading.Lock()
        self._showing = threading.Lock()  # held while a line is shown, and to end
        self._scheduled = False
        self._context: contextvars.Context | None = None
        self._step: str | None = None
        self._step_start = 0.0
        self.times: dict[str, float] = {}
        self.shown = 0

    def step(self, name: str | None) -> None:
        """Step ``name`` starts now (the one before it, if any, is done; ``None``:
        the work is done)."""
        now = self._clock()
        with self._lock:
            if self._step is not None:
                self.times[self._step] = now - self._step_start
            self._step, self._step_start = name, now

    def line(self) -> str | None:
        """The status line now, or ``None`` before the first step."""
        with self._lock:
            if self._step is None:
                return None
            return status_line(self._step, self._clock() - self._step_start, dict(self.times))

    def _tick(self) -> float | None:
        """Shows the status line (on the scheduler's thread); seconds until the next."""
        with self._showing:
            if not self._scheduled:
                return None
            text = self.line()
            if text is not None:
                assert self._context is not None  # set by __enter__, before any tick
                try:
                    self._context.run(self._show, text)
                except Exception:  # noqa: BLE001 - a frontend that cannot show: stop
                    _log.warning(
                        "showing the progress line failed: no more is shown", exc_info=True
                    )
                    self._scheduled = False
                    return None
                self.shown += 1
            return self.interval

    def __enter__(self) -> "Progress":
        self._context = contextvars.copy_context()
        self._scheduled = True
        SCHEDULER.add(self, self.delay)
        return self

    def __exit__(self, *exc) -> None:
        SCHEDULER.remove(self)
        with self._showing:  # waits for a line being shown; none is shown after
            self._scheduled = False
        self.step(None)  # the last step's time
        if self.shown and self._done is not None:
            try:
                self._done()
            except Exception:  # noqa: BLE001 - the work is done: its progress must not fail it
                _log.warning("clearing the progress line failed", exc_info=True)


def shown_in_output() -> Progress:
    """A :class:`Progress` for the code running now: in a notebook kernel, one output
    line of the cell that updates in place and is emptied at the end; elsewhere, the
    standard error stream (see :func:`shown_on`)."""
    shell = _kernel_shell()
    if shell is None:
        return shown_on(sys.stderr)
    from IPython.display import display

    handle = None

    def show(text: str) -> None:
        nonlocal handle
        if handle is None:
            handle = display({"text/plain": text}, raw=True, display_id=True)
        else:
            handle.update({"text/plain": text}, raw=True)

    def done() -> None:
        if handle is not None:
            handle.update({"text/plain": ""}, raw=True)

    return Progress(show, done)


def shown_on(stream) -> Progress:
    """A :class:`Progress` written to ``stream``: on a terminal, one line redrawn in
    place and erased at the end; otherwise (a log) a line when a step starts and
    every ten seconds within one."""
    if getattr(stream, "isatty", lambda: False)():

        def show(text: str) -> None:
            stream.write("\r\033[K" + text)
            stream.flush()

        def done() -> None:
            stream.write("\r\033[K")
            stream.flush()

        return Progress(show, done)
    last: dict = {"step": None, "at": 0.0}

    def log(text: str) -> None:
        step = text.split("…")[0]
        now = time.monotonic()
        if step != last["step"] or now - last["at"] >= 10:
            stream.write(text + "\n")
            stream.flush()
            last.update(step=step, at=now)

    return Progress(log)


def _kernel_shell():
    """The IPython shell of a kernel (whose displays a frontend shows), or ``None``."""
    try:
        from IPython import get_ipython
    except ImportError:
        return None
    shell = get_ipython()
    return shell if shell is not None and getattr(shell, "kernel", None) is not None else None


class Silent:
    """A :class:`Progress` that shows nothing (for callers that did not ask for one)."""

    def step(self, name: str) -> None:
        pass

    def __enter__(self) -> "Silent":
        return self

    def __exit__(self, *exc) -> None:
        pass
