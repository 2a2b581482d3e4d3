"""Reading XLA's per-pass dumps while the compile writes them.

XLA writes the module after each pass as that pass ends (:mod:`olympus.passes`),
one file after another, so most of a pipeline's modules can be read before the
compile ends. A :class:`DumpFollower` does that in a thread beside the compile:
it reads each file once XLA has begun the next one (so the file is whole; the
last once XLA has written the optimized module, after every pass), and
hands each module's text, in the order XLA wrote them, to its readers (what a
report will ask of the modules later: the journeys' instructions, a view's line
numbering and diffs), which keep what they make in the follower's ``memo``. After
the compile, :func:`olympus.passes.read_dump` takes the texts it read (each
checked against its file's size) and the pipeline keeps the memo
(``PassPipeline.memo``), so the readers' work is not done again.

The follower is best effort: what it has not read when the compile ends (every
module where the thread got no CPU, say) is read after the compile as without it,
and whatever a reader raises is dropped there, made again (and reported) by
whoever asks later. On a machine with few cores the thread takes CPU time from the
compile, which XLA spreads over every core: run it at a lower priority
(``beside``: :func:`olympus_jupyter.staging.alongside.alongside` does).

>>> lowered = olympus.jit(lambda x: jnp.tanh(x * 2.0) + 1.0).trace(np.ones(4, np.float32)).lower()
>>> seen = []
>>> follower = DumpFollower([lambda memo, previous, text: seen.append(previous is None)])
>>> from olympus.passes import dumped_compile, read_dump
>>> with dumped_compile(lowered, pass_re=".*", follower=follower) as (folder, _):
...     pipeline = read_dump(folder, ".*", follower)
>>> pipeline.memo is follower.memo, seen[:1] in ([], [True])  # the module before the passes first
(True, True)
"""

from __future__ import annotations

import contextlib
import os
import re
import threading
import time
from collections.abc import Callable, Iterator, Sequence
from typing import ContextManager

from olympus.dump_names import read_name
from olympus.provenance.hlo import instruction_count

__all__ = ["DumpFollower", "ModuleReader", "in_thread", "POLL_S"]

#: A reader of the modules as they are written: ``reader(memo, previous, text)``
#: for each module's ``text`` in order, ``previous`` the text read before it
#: (``None`` for the module before the passes).
ModuleReader = Callable[[dict, "str | None", str], object]
#: How long the thread waits for XLA's next file when it has read every whole one.
POLL_S = 0.002

# module_0018.jit_lm.0043.HLO_passes_after_scheduling.after_pipeline-start.before_x.txt
_STEP = re.compile(r"^(module_\d+\..+?)\.(\d{4}\..+)\.txt$")
_BEFORE = ".before_optimizations.txt"
_AFTER = "_after_optimizations.txt"


@contextlib.contextmanager
def in_thread(work: Callable[[], object]) -> Iterator[None]:
    """Runs ``work`` in a new thread during the ``with`` block and waits for it at
    the end: the plainest ``beside`` of a :class:`DumpFollower`.

    >>> box = []
    >>> with in_thread(lambda: box.append(1)):
    ...     pass
    >>> box
    [1]
    """
    thread = threading.Thread(target=work, name="olympus-dump-follower", daemon=True)
    thread.start()
    try:
        yield
    finally:
        thread.join()


class DumpFollower:
    """Reads the per-pass modules of one dumped compile as XLA writes them, and
    hands each to ``readers`` (see the module's text). ``beside(work)`` runs
    ``work`` beside the compile, as a context manager (:func:`in_thread` by
    default). One follower follows one compile."""

    def __init__(
        self,
        readers: Sequence[ModuleReader] = (),
        beside: Callable[[Callable[[], object]], ContextManager] = in_thread,
    ):
        self.readers = tuple(readers)
        self.beside = beside
        #: What the readers keep (a pipeline read from this dump keeps it).
        self.memo: dict = {}
        #: The folder followed, once :meth:`following` began.
        self.folder: str | None = None
        #: Each file read whole: its text and its size in bytes then.
        self.texts: dict[str, tuple[str, int]] = {}
        #: The instructions of each module read (:func:`~olympus.provenance.hlo.instruction_count`).
        self.counts: dict[str, int] = {}

    @contextlib.contextmanager
    def following(self, folder: str) -> Iterator[None]:
        """Follows ``folder`` (where XLA dumps) during the ``with`` block, the
        compile; the thread stops reading as the block ends."""
        self.folder = folder
        self.texts = {}  # another folder's (a compile made again) are not this one's
        stop = threading.Event()
        with self.beside(lambda: self._follow(folder, stop)):
            try:
                yield
            finally:
                stop.set()

    def take(self, folder: str, name: str) -> str | None:
        """The text of file ``name`` as read while it was written, if it was read
        from ``folder`` and the file has not changed size since; else None. The
        follower lets go of it (the pipeline read keeps it)."""
        if folder != self.folder:
            return None
        held = self.texts.pop(name, None)
        if held is None:
            return None
        try:
            same = os.path.getsize(os.path.join(folder, name)) == held[1]
        except OSError:
            return None
        return held[0] if same else None

    def _follow(self, folder: str, stop: threading.Event) -> None:
        prefix: str | None = None  # the module followed: the first one dumped
        order: list[tuple[int, str]] = []  # its step files, by step
        seen: set[str] = set()
        previous: str | None = None
        done = 0  # files of ``order`` handed to the readers
        while not stop.is_set():
            try:
                names = os.listdir(folder)
            except OSError:
                return
            if prefix is None:
                befores = sorted(n for n in names if n.endswith(_BEFORE))
                if not befores:
                    time.sleep(POLL_S)
                    continue
                prefix = befores[0][: -len(_BEFORE)]
            for name in names:
                if name in seen:
                    continue
                m = _STEP.match(name)
                if m is None or m.group(1) != prefix:
                    continue
                dump = read_name(m.group(2))
                if dump is not None:
                    seen.add(name)
                    order.append((dump.step, name))
            order.sort()
            # Once the optimized module is written, the passes have all run.
            ended = any(n.startswith(prefix + ".") and n.endswith(_AFTER) for n in names)
            if previous is None and order:  # the module before the passes, whole by now
                previous = self._hand(folder, prefix + _BEFORE, None)
                if previous is None:
                    return
            # Every file but the last is whole: XLA has begun the next (and the last
            # too once the passes have ended).
            while done < len(order) - (0 if ended else 1) and not stop.is_set():
                text = self._hand(folder, order[done][1], previous)
                if text is None:
                    return
                previous, done = text, done + 1
            if ended:  # nothing more to read: XLA goes on to make the code
                return
            time.sleep(POLL_S)

    def _hand(self, folder: str, name: str, previous: str | None) -> str | None:
        """Reads file ``name`` and hands its text to the readers; None where it
        cannot be read or a reader fails (the follower then stops)."""
        try:
            with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
                size = os.fstat(f.fileno()).st_size
                text = f.read()
            self.texts[name] = (text, size)
            if text not in self.counts:
                self.counts[text] = instruction_count(text)
            for reader in self.readers:
                reader(self.memo, previous, text)
        except Exception:  # noqa: BLE001 - best effort: read again after the compile
            return None
        return text
