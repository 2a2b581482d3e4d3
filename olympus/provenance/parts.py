"""The parts of a provenance model: ops, stages, frames, call stacks, source files.

Plain dataclasses of strings, numbers and tuples (``Op`` read-only by convention,
the others frozen). Ops are named by an *op id*, ``"<stage>:<index>"``
(``"stablehlo:3"``); the stages a model may hold are the stage registry's linked
stages (:func:`olympus.stage_registry.provenance_stages`).

>>> parse_op_id('compiled:3')
('compiled', 3)
"""

from __future__ import annotations

import dataclasses
from collections.abc import Mapping

__all__ = [
    "Op",
    "Computation",
    "Stage",
    "Frame",
    "Location",
    "SourceFile",
    "SourceLine",
    "FunctionInfo",
    "op_id",
    "parse_op_id",
]


def op_id(stage: str, index: int) -> str:
    """The id of op ``index`` of ``stage``: ``op_id('compiled', 3) == 'compiled:3'``."""
    return f"{stage}:{index}"


def parse_op_id(ident: str) -> tuple[str, int]:
    """``'compiled:3'`` -> ``('compiled', 3)``; raises ``ValueError`` naming the expected form.

    >>> parse_op_id('stablehlo:12')
    ('stablehlo', 12)
    """
    stage, sep, index = str(ident).rpartition(":")
    if not sep or not stage.isidentifier() or not index.isdigit():
        raise ValueError(
            f"{ident!r} is not an op id: op ids read '<stage>:<index>', e.g. 'stablehlo:3'."
        )
    return stage, int(index)


@dataclasses.dataclass(slots=True)
class Op:
    """One op of one stage: an equation, an MLIR operation or an HLO instruction.

    (Read-only by convention: a model has many ops, and a frozen dataclass is
    several times slower to create.)

    ``lines`` are the first and last line (1-based, inclusive) of the op in its
    stage's ``text``, ``None`` if the op is not printed. ``location`` indexes
    :attr:`Provenance.locations` (the op's user call stack), ``None`` if the
    compiler kept no source for it. ``parent`` is the index of the enclosing op of
    the same stage (the ``cond`` around a branch's equations, the ``func.func``
    around an operation, the ``fusion`` or ``while`` calling an HLO computation).
    The last four fields are for HLO only.
    """

    stage: str
    index: int
    name: str
    types: tuple[str, ...] = ()
    lines: tuple[int, int] | None = None
    location: int | None = None
    name_stack: str = ""
    parent: int | None = None
    sharding: str | None = None
    label: str | None = None
    computation: int | None = None
    fusion: int | None = None
    collective: str | None = None

    @property
    def id(self) -> str:
        """The op id, ``"<stage>:<index>"``."""
        return op_id(self.stage, self.index)


@dataclasses.dataclass(frozen=True)
class Computation:
    """An HLO computation: its name, lines, and the instruction that calls it.

    ``fusion`` is the index of the ``fusion`` instruction whose fused computation
    this is (directly or through a computation that one calls), else ``None``.
    """

    name: str
    lines: tuple[int, int]
    entry: bool = False
    caller: int | None = None
    fusion: int | None = None


@dataclasses.dataclass(frozen=True)
class Stage:
    """One stage: the text the op line spans refer to, and the ops in text order.

    ``arg_shardings``/``result_shardings`` hold the entry function's argument and
    result shardings as printed (``None`` where unsharded); ``collectives`` the
    indices of collective ops (HLO); ``computations`` the HLO computations;
    ``notes`` says what could not be worked out, if anything.
    """

    name: str
    text: str
    ops: tuple[Op, ...]
    computations: tuple[Computation, ...] = ()
    arg_shardings: tuple[str | None, ...] = ()
    result_shardings: tuple[str | None, ...] = ()
    collectives: tuple[int, ...] = ()
    notes: tuple[str, ...] = ()

    def ops_on_line(self, line: int) -> tuple[int, ...]:
        """Indices of the ops whose line span holds text line ``line`` (1-based)."""
        return tuple(
            op.index
            for op in self.ops
            if op.lines is not None and op.lines[0] <= line <= op.lines[1]
        )

    def __repr__(self) -> str:
        return f"<Stage {self.name}: {len(self.ops)} ops, {self.text.count(chr(10))} lines>"


@dataclasses.dataclass(frozen=True)
class Frame:
    """A source position: file (index into :attr:`Provenance.files`), line (1-based),
    column (0-based, as Python reports it), end line and end column, and function."""

    file: int
    line: int
    column: int
    end_line: int
    end_column: int
    function: str


@dataclasses.dataclass(frozen=True)
class Location:
    """A user call stack: indices into :attr:`Provenance.frames`, innermost first."""

    frames: tuple[int, ...]


@dataclasses.dataclass(frozen=True)
class SourceFile:
    r"""A user file: its path and the parts of its text the model holds.

    ``chunks`` are ``(first line, text)`` pieces in line order: the whole file
    when it is small (``complete``), else the lines around those the program came
    from and the staged function's lines. Empty if the source could not be read.
    ``library``: the file is not the user's own code (an installed package, the
    standard library: :mod:`olympus.provenance.focus`), so ops are charged to the
    user's line that called into it.

    >>> SourceFile("m.py", ((1, "a = 1\nb = 2\n"),), complete=True).line(2)
    'b = 2'
    """

    path: str
    chunks: tuple[tuple[int, str], ...] = ()
    complete: bool = False
    library: bool = False

    def line(self, number: int) -> str | None:
        """Line ``number`` (1-based) of the file, without its newline, if held."""
        for first, text in self.chunks:
            if number >= first:
                lines = text.splitlines()
                if number - first < len(lines):
                    return lines[number - first]
        return None


@dataclasses.dataclass(frozen=True)
class SourceLine:
    """A source line (file index, line) and the ops of each stage it is the
    innermost user frame of: ``{stage: (op index, ...)}``."""

    file: int
    line: int
    ops: Mapping[str, tuple[int, ...]]


@dataclasses.dataclass(frozen=True)
class FunctionInfo:
    """The staged function: its name, and where it is defined (file index, lines)."""

    name: str
    file: int | None = None
    first_line: int | None = None
    last_line: int | None = None
