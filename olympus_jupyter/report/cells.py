"""Notebook cells as the user wrote them: ``In [3]``, not ``/tmp/ipykernel_1/23.py``.

IPython compiles each cell under a file name of its own (a temporary path in
ipykernel) and puts the code it *ran* in ``linecache``: a line such as
``%olympus_lower f(x)`` is there as ``get_ipython().run_line_magic(...)``. A report
made in a kernel shows the cell the way the user typed it instead: its label is
``In [n]`` and, where the typed cell has as many lines as the code that ran (line
magics and shell escapes are rewritten line for line), its text is the typed one,
so that line numbers still match. The file names and execution counts come from
IPython's compiler, the typed text from its input history.

>>> from olympus.provenance.parts import SourceFile
>>> cells = {"/tmp/ipykernel_1/23.py": Cell(3, "%olympus_lower f(x)\\n")}
>>> relabel(SourceFile("/tmp/ipykernel_1/23.py",
...                    ((1, "get_ipython().run_line_magic('olympus_lower', 'f(x)')\\n"),),
...                    complete=True), cells)
SourceFile(path='In [3]', chunks=((1, '%olympus_lower f(x)\\n'),), complete=True, library=False)
"""

from __future__ import annotations

import dataclasses
import linecache
from collections.abc import Iterable, Mapping

from olympus.provenance.parts import SourceFile

__all__ = ["Cell", "notebook_cells", "relabel", "relabel_frame"]


@dataclasses.dataclass(frozen=True)
class Cell:
    """A cell that ran: its execution count and the text typed (``None``: unknown)."""

    number: int
    typed: str | None

    @property
    def label(self) -> str:
        return f"In [{self.number}]"


def notebook_cells(paths: Iterable[str], shell=None) -> dict[str, Cell]:
    """The cells of this IPython session among ``paths`` (file name → cell); empty
    outside IPython or where IPython does not say which cell a file is."""
    if shell is None:
        try:
            from IPython import get_ipython
        except ImportError:
            return {}
        shell = get_ipython()
    # IPython's CachingCompiler keeps the file name of each cell and its count
    # (IPython >= 8); its input history keeps what was typed, by count.
    numbers = getattr(getattr(shell, "compile", None), "_filename_map", None)
    if not isinstance(numbers, Mapping):
        return {}
    history = getattr(getattr(shell, "history_manager", None), "input_hist_raw", None) or []
    cells = {}
    for path in paths:
        number = numbers.get(path)
        if not isinstance(number, int):
            continue
        typed = history[number] if 0 <= number < len(history) else None
        cells[path] = Cell(number, typed if isinstance(typed, str) else None)
    return cells


def _lines(text: str) -> list[str]:
    return text.splitlines(keepends=True)


def relabel(source: SourceFile, cells: Mapping[str, Cell]) -> SourceFile:
    """``source`` as the cell it is, if it is one (see the module's text)."""
    cell = cells.get(source.path)
    if cell is None:
        return source
    chunks = source.chunks
    # The code that ran: linecache's, or the source held where it is whole (a cell
    # no longer in linecache).
    ran = linecache.getlines(source.path) or (
        _lines("".join(text for _, text in chunks)) if source.complete else []
    )
    typed = _typed_lines(cell, ran)
    if typed is not None:
        chunks = tuple(
            (first, "".join(typed[first - 1 : first - 1 + len(_lines(text))]))
            for first, text in chunks
        )
    return dataclasses.replace(source, path=cell.label, chunks=chunks)


def _typed_lines(cell: Cell, ran: list[str]) -> list[str] | None:
    """The typed lines of ``cell``, where they stand line for line for the lines of
    the code that ran (``ran``)."""
    if cell.typed is None:
        return None
    typed = _lines(cell.typed)
    return typed if ran and len(typed) == len(ran) else None


def relabel_frame(frame, cells: Mapping[str, Cell]):
    """A frame (a dataclass with ``file``, ``line`` and ``code``) in a cell, as the
    cell was typed; other frames as they are."""
    cell = cells.get(frame.file)
    if cell is None:
        return frame
    typed = _typed_lines(cell, linecache.getlines(frame.file))
    code = frame.code
    if typed is not None and 1 <= frame.line <= len(typed):
        code = typed[frame.line - 1].strip()
    return dataclasses.replace(frame, file=cell.label, code=code)
