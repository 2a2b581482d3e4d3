"""Source positions shared by all stages: user files, frames and call stacks.

Each stage reports where its ops came from in its own way (tracebacks,
MLIR locations, HLO frame tables); all of them end up in one
:class:`SourceTable`, which keeps every file, frame and call stack once so that
ops refer to a location by index.

Frames of JAX, of Olympus itself, of the Python library and of the tools that
run user code (IPython, pytest...) are not the user's: they are left out.

>>> table = SourceTable()
>>> table.location([("/home/me/model.py", 3, 4, 3, 10, "f")])
0
>>> table.frames[0].line, table.files
(3, ['/home/me/model.py'])
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import linecache
import os
import sys
from collections.abc import Callable, Iterable, Sequence

from olympus import jax_compat
from olympus.provenance.focus import Focus, anchor_position, focus_of
from olympus.provenance.parts import Frame, Location, SourceFile

#: Packages whose frames are tooling, not the user's program.
_TOOL_PACKAGES = (
    "olympus_jupyter",
    "IPython",
    "ipykernel",
    "_pytest",
    "pytest",
    "pluggy",
    "tornado",
    "zmq",
    "traitlets",
    "jupyter_client",
    "jupyter_core",
    "nbclient",
    "nbconvert",
    "ipywidgets",
    "comm",
    "debugpy",
)

#: Files up to this many lines are kept whole in the model (notebook cells, scripts).
MAX_WHOLE_FILE_LINES = 300
#: Lines kept around each line a program came from, in larger files.
CONTEXT_LINES = 8

# A raw frame: (file name, line, column, end line, end column, function).
RawFrame = tuple[str, int, int, int, int, str]


def _package_dir(module_name: str) -> str | None:
    """The folder of a loaded package, or the file of a loaded single-file module."""
    module = sys.modules.get(module_name)
    path = getattr(module, "__file__", None)
    if not path:
        return None
    if not hasattr(module, "__path__"):
        return os.path.abspath(path)
    return os.path.dirname(os.path.abspath(path)) + os.sep


def tool_prefixes() -> tuple[str, ...]:
    """Path prefixes of code that is not the user's beyond what JAX leaves out:
    Olympus itself and the tooling packages loaded in this process."""
    olympus_dir = os.path.dirname(os.path.dirname(os.path.abspath(__file__))) + os.sep
    dirs: list[str | None] = [olympus_dir]
    for name in _TOOL_PACKAGES:
        d = _package_dir(name)
        if d is not None:
            dirs.append(d)
    if "ipykernel" in sys.modules:
        # A kernel's first frame: the module that `python -m ipykernel_launcher`
        # ran as __main__ (which IPython then replaced, so it is found by name).
        dirs.append(_launcher_file())
    return tuple(d for d in dirs if d)


@functools.lru_cache(maxsize=1)
def _launcher_file() -> str | None:
    spec = importlib.util.find_spec("ipykernel_launcher")
    return os.path.abspath(spec.origin) if spec is not None and spec.origin else None


def is_user_file(path: str, exclude: Sequence[str] | None = None) -> bool:
    """Whether code in ``path`` is the user's: what JAX counts as user code, less
    Olympus itself and the tooling around it (``exclude``, default
    :func:`tool_prefixes`). The one rule for source lines and for the frames a
    failure points at.

    >>> is_user_file(__file__), is_user_file("/home/me/model.py")
    (False, True)
    """
    if not path or path.startswith("<frozen "):
        return False
    exclude = tool_prefixes() if exclude is None else tuple(exclude)
    return jax_compat.is_user_filename(path) and not path.startswith(exclude)


class SourceTable:
    """Interns files, frames and call stacks; ops refer to call stacks by index.

    ``location(raw_frames)`` takes frames innermost first, drops the frames that
    are not the user's, and returns the index of the call stack (``None`` when no
    user frame is left). ``focus`` says which of the files kept are the user's own
    code rather than a library's (:mod:`olympus.provenance.focus`).
    """

    def __init__(self, exclude: Sequence[str] | None = None, focus: Focus | None = None):
        self._exclude = tuple(tool_prefixes() if exclude is None else exclude)
        self.focus = focus_of(focus)
        self.files: list[str] = []
        self.frames: list[Frame] = []
        self.locations: list[Location] = []
        self._file_ids: dict[str, int] = {}
        self._frame_ids: dict[RawFrame, int] = {}
        self._loc_ids: dict[tuple[int, ...], int] = {}
        self._user: dict[str, bool] = {}
        self._library: list[bool] = []

    def is_user_file(self, path: str) -> bool:
        """Whether frames in ``path`` belong to the user's program (:func:`is_user_file`)."""
        user = self._user.get(path)
        if user is None:
            user = self._user[path] = is_user_file(path, self._exclude)
        return user

    def file(self, path: str) -> int:
        """Index of ``path`` in the file table (added if new)."""
        i = self._file_ids.get(path)
        if i is None:
            i = self._file_ids[path] = len(self.files)
            self.files.append(path)
        return i

    def frame(self, raw: RawFrame) -> int:
        """Index of a frame given as (file, line, column, end line, end column, function)."""
        i = self._frame_ids.get(raw)
        if i is None:
            path, line, col, end_line, end_col, fn = raw
            i = self._frame_ids[raw] = len(self.frames)
            self.frames.append(
                Frame(self.file(path), int(line), int(col), int(end_line), int(end_col), fn)
            )
        return i

    def user_frames(self, raw_frames: Iterable[RawFrame]) -> tuple[RawFrame, ...]:
        """The frames of ``raw_frames`` that are the user's."""
        return tuple(fr for fr in raw_frames if self.is_user_file(fr[0]))

    def location(self, raw_frames: Iterable[RawFrame]) -> int | None:
        """Index of the call stack made of the user frames among ``raw_frames``."""
        return self.intern(self.user_frames(raw_frames))

    def intern(self, user_frames: tuple[RawFrame, ...]) -> int | None:
        """Index of the call stack of these (already filtered) frames; ``None`` if empty."""
        if not user_frames:
            return None
        ids = tuple(self.frame(fr) for fr in user_frames)
        i = self._loc_ids.get(ids)
        if i is None:
            i = self._loc_ids[ids] = len(self.locations)
            self.locations.append(Location(ids))
        return i

    @property
    def library(self) -> tuple[bool, ...]:
        """For each file of the table, whether it is a library's (not the user's own
        code) under the table's focus."""
        if self.files:
            self.library_of(len(self.files) - 1)
        return tuple(self._library)

    def library_of(self, file: int) -> bool:
        """Whether file ``file`` of the table is a library's (each file judged once)."""
        known = self._library
        while len(known) <= file:
            known.append(not self.focus.owns(self.files[len(known)]))
        return known[file]

    def charged(self, location: int | None, frames: str = "user") -> Frame | None:
        """The frame an op at ``location`` is charged to (:func:`charged_frame`)."""
        return charged_frame(self, location, frames)

    def tables(self) -> SourceTables:
        """The tables as they stand, read-only, with the files' library flags."""
        return SourceTables(
            tuple(self.files), tuple(self.frames), tuple(self.locations), self.library
        )

    def source_files(
        self,
        extra_ranges: dict[int, list[tuple[int, int]]] | None = None,
        focus: Focus | None = None,
    ) -> tuple[SourceFile, ...]:
        """The source of every file in the table: whole if small, else the lines
        around the frames' lines and the ``extra_ranges`` (the function's lines);
        each marked ``library`` under ``focus`` (default: the table's)."""
        ranges: dict[int, list[tuple[int, int]]] = {i: [] for i in range(len(self.files))}
        for fr in self.frames:
            ranges[fr.file].append((fr.line, max(fr.line, fr.end_line or fr.line)))
        for i, extra in (extra_ranges or {}).items():
            ranges.setdefault(i, []).extend(extra)
        library = self.library if focus is None else tuple(not focus.owns(p) for p in self.files)
        return tuple(
            dataclasses.replace(read_source(path, ranges.get(i, ())), library=library[i])
            for i, path in enumerate(self.files)
        )


@dataclasses.dataclass(frozen=True)
class SourceTables:
    """The tables of a :class:`SourceTable`, read-only: file paths, frames and call
    stacks, indexed as a stage's ops refer to them. What reads an op's location
    (:func:`olympus.buffers.lines_by_label`, :func:`olympus.line_costs.cost_by_line`)
    takes either; a provenance model gives its own
    (:meth:`~olympus.provenance.Provenance.source_tables`), so that a stage it holds
    is not read again.

    >>> table = SourceTable()
    >>> at = table.location([("/home/me/model.py", 3, 4, 3, 10, "f")])
    >>> tables = SourceTables(tuple(table.files), tuple(table.frames), tuple(table.locations))
    >>> frame = tables.frames[tables.locations[at].frames[0]]
    >>> tables.files[frame.file], frame.line
    ('/home/me/model.py', 3)
    """

    files: tuple[str, ...]
    frames: tuple[Frame, ...]
    locations: tuple[Location, ...]
    #: For each file, whether it is a library's rather than the user's own code.
    library: tuple[bool, ...] = ()

    def library_of(self, file: int) -> bool:
        """Whether file ``file`` is a library's (``False`` past the flags given)."""
        return self.library[file] if file < len(self.library) else False

    def charged(self, location: int | None, frames: str = "user") -> Frame | None:
        """The frame an op at ``location`` is charged to (:func:`charged_frame`)."""
        return charged_frame(self, location, frames)


def charged_frame(tables, location: int | None, frames: str = "user") -> Frame | None:
    """The frame of call stack ``location`` that an op there is charged to:
    its innermost frame of the user's own code (``frames="user"``), with the
    library frames inside it as detail, or its innermost frame whatever its file
    (``"innermost"``). ``None`` for no location. ``tables``: a :class:`SourceTable`
    or :class:`SourceTables`.

    >>> table = SourceTable()
    >>> at = table.location([("/venv/site-packages/flax/linear.py", 287, 0, 287, 9, "__call__"),
    ...                      ("/home/me/model.py", 12, 4, 12, 20, "f")])
    >>> table.charged(at).line, table.charged(at, "innermost").line
    (12, 287)
    """
    if location is None:
        return None
    stack = tables.locations[location].frames
    if not stack:
        return None
    if frames == "innermost":
        return tables.frames[stack[0]]
    if frames != "user":
        raise ValueError(f"frames={frames!r}: choose 'user' (the default) or 'innermost'.")
    k = anchor_position([tables.frames[i].file for i in stack], lambda f: not tables.library_of(f))
    return tables.frames[stack[k]]


def charged_lines(tables, frames: str = "user") -> Callable[[int | None], tuple[str, int] | None]:
    """A reader of the line an op at a location is charged to (:func:`charged_frame`)
    as ``(path, line)``, ``None`` for no location; each location read once (many ops
    share one), for as long as the reader is kept.

    >>> table = SourceTable()
    >>> at = table.location([("/home/me/model.py", 12, 4, 12, 20, "f")])
    >>> line_of = charged_lines(table)
    >>> line_of(at), line_of(None)
    (('/home/me/model.py', 12), None)
    """

    @functools.cache
    def line_of(location: int | None) -> tuple[str, int] | None:
        frame = charged_frame(tables, location, frames)
        return None if frame is None else (tables.files[frame.file], frame.line)

    return line_of


def library_frames(tables, location: int | None) -> tuple[Frame, ...]:
    """The frames of ``location`` inside the one it is charged to (the library
    lines beneath the user's line), innermost first; empty when the op's own line
    is the user's."""
    if location is None:
        return ()
    charged = charged_frame(tables, location)
    stack = [tables.frames[i] for i in tables.locations[location].frames]
    return tuple(stack[: stack.index(charged)]) if charged in stack else ()


def compose(own: tuple[RawFrame, ...], caller: tuple[RawFrame, ...]) -> tuple[RawFrame, ...]:
    """The full call stack of an op of a sub-program, given the stack of its caller.

    JAX records some sub-programs' frames relative to the sub-program (a ``jit``
    inside a ``jit``; a private function in StableHLO): those are continued by the
    caller's stack. Frames that already reach into the caller's stack are kept as
    they are; an op with no user frame of its own takes its caller's.

    >>> f = lambda line: ("m.py", line, 0, line, 0, "f")
    >>> compose((f(3),), (f(10), f(20)))
    (('m.py', 3, 0, 3, 0, 'f'), ('m.py', 10, 0, 10, 0, 'f'), ('m.py', 20, 0, 20, 0, 'f'))
    >>> compose((f(3), f(20)), (f(10), f(20))) == (f(3), f(20))
    True
    """
    if not caller:
        return own
    if not own:
        return caller
    outer = own[-1]
    for k, fr in enumerate(caller):
        if fr == outer:
            return own + caller[k + 1 :]
    return own + caller


def read_source(path: str, ranges: Iterable[tuple[int, int]] = ()) -> SourceFile:
    r"""The source of ``path`` (through ``linecache``, which also knows notebook
    cells): whole if it is small, else the given line ranges with some context.

    >>> import os, tempfile
    >>> with tempfile.NamedTemporaryFile("w", suffix=".py", delete=False) as fh:
    ...     _ = fh.write("".join(f"x{i} = {i}\n" for i in range(1, 1001)))
    >>> src = read_source(fh.name, [(500, 500), (990, 991)])
    >>> src.complete, [(first, text.count("\n")) for first, text in src.chunks], src.line(500)
    (False, [(492, 17), (982, 18)], 'x500 = 500')
    >>> os.remove(fh.name)
    """
    all_lines = linecache.getlines(path)
    if not all_lines:
        return SourceFile(path)
    n = len(all_lines)
    if n <= MAX_WHOLE_FILE_LINES:
        return SourceFile(path, ((1, "".join(all_lines)),), complete=True)
    spans = sorted(
        (max(1, lo - CONTEXT_LINES), min(n, hi + CONTEXT_LINES))
        for lo, hi in ranges
        if lo and lo > 0 and lo <= n
    )
    merged: list[list[int]] = []
    for lo, hi in spans:
        if merged and lo <= merged[-1][1] + 1:
            merged[-1][1] = max(merged[-1][1], hi)
        else:
            merged.append([lo, hi])
    return SourceFile(path, tuple((lo, "".join(all_lines[lo - 1 : hi])) for lo, hi in merged))
