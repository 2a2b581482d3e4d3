"""The provenance model as plain data: stages, their ops, and the source they came from.

Everything here is a dataclass of strings, numbers, tuples and mappings, read-only
(``Op`` by convention, the others frozen): a model is built once
(:func:`olympus.provenance.build`) and read by any number of views.
Ops are named by an *op id*, ``"<stage>:<index>"`` (``"stablehlo:3"``), and tied
to source through a shared table: ``frames`` (file, line, column, function),
``locations`` (call stacks of frames, innermost first) and ``files``.

>>> model = olympus.provenance.build(olympus.jit(lambda x: x * 2).trace(1.0))
>>> model.stage_names
('olympuspr',)
>>> model.op('olympuspr:0').name
'mul'
"""

from __future__ import annotations

import dataclasses
import functools
import os
from collections.abc import Iterable, Mapping
from typing import Any

from olympus import stage_registry
from olympus.provenance import serialize
from olympus.provenance.parts import (
    Computation,
    Frame,
    FunctionInfo,
    Location,
    Op,
    SourceFile,
    SourceLine,
    Stage,
    op_id,
    parse_op_id,
)
from olympus.provenance.sources import SourceTables, charged_frame

#: The stages a model may hold, in compilation order: the registry's linked stages.
STAGES = tuple(s.name for s in stage_registry.provenance_stages())

__all__ = [
    "STAGES",
    "Op",
    "Computation",
    "Stage",
    "Frame",
    "Location",
    "SourceFile",
    "SourceLine",
    "FunctionInfo",
    "Provenance",
    "op_id",
    "parse_op_id",
    "group_ops_by_line",
]


@dataclasses.dataclass(frozen=True)
class Provenance:
    """Every stage of one staged function, each op tied to the source it came from.

    Build one with :func:`olympus.provenance.build`; render it any way; store it
    with :meth:`to_json`. Query it with :meth:`op`, :meth:`ops_for_line`,
    :meth:`lines_for_op`, :meth:`linked_ops` and :meth:`ops_on_text_line`.

    >>> def f(x):
    ...     return jnp.cos(x) + 1
    >>> model = olympus.provenance.build(olympus.jit(f), 1.0)
    >>> line = model.function.first_line + 1
    >>> ids = model.ops_for_line(model.function.file, line)
    >>> ids['olympuspr'], model.op(ids['olympuspr'][0]).name
    (['olympuspr:0', 'olympuspr:1'], 'cos')
    >>> model.linked_ops('olympuspr:0')['stablehlo'] == ids['stablehlo']
    True
    """

    function: FunctionInfo
    platforms: tuple[str, ...]
    stages: Mapping[str, Stage]
    files: tuple[SourceFile, ...] = ()
    frames: tuple[Frame, ...] = ()
    locations: tuple[Location, ...] = ()
    lines: tuple[SourceLine, ...] = ()
    #: Stages that were asked for and do not exist for this program, with the reason.
    unavailable: Mapping[str, str] = dataclasses.field(default_factory=dict)

    # -- looking things up ------------------------------------------------------

    @property
    def stage_names(self) -> tuple[str, ...]:
        """The stages this model holds, in compilation order."""
        return tuple(s for s in STAGES if s in self.stages)

    def stage(self, name: str) -> Stage:
        """The stage ``name``; ``KeyError`` naming the stages held if absent."""
        try:
            return self.stages[name]
        except KeyError:
            raise KeyError(
                f"This model has no {name!r} stage; it holds "
                f"{', '.join(self.stage_names) or 'no stage'}. Build it from a later "
                f"stage (e.g. build(compiled)) to get more stages."
            ) from None

    def source_tables(self) -> SourceTables:
        """The files (their paths), frames and call stacks the ops' locations index, as
        the :class:`~olympus.provenance.sources.SourceTable` that read them held them:
        for readers of a stage's locations (the cost by line, the peak's buffers) that
        take the stage as the model read it, rather than read the program again.

        >>> def f(x):
        ...     return jnp.cos(x) + 1
        >>> model = olympus.provenance.build(olympus.jit(f), 1.0)
        >>> tables = model.source_tables()
        >>> op = model.stages['olympuspr'].ops[0]
        >>> frame = tables.frames[tables.locations[op.location].frames[0]]
        >>> tables.files[frame.file] == model.files[model.function.file].path
        True
        """
        return self._tables

    @functools.cached_property
    def _tables(self) -> SourceTables:
        return SourceTables(
            tuple(f.path for f in self.files),
            self.frames,
            self.locations,
            tuple(f.library for f in self.files),
        )

    def op(self, ident: str) -> Op:
        """The op with id ``ident`` (``'compiled:3'``)."""
        stage, index = parse_op_id(ident)
        ops = self.stage(stage).ops
        if not 0 <= index < len(ops):
            raise KeyError(f"Stage {stage!r} has {len(ops)} ops; there is no op {ident!r}.")
        return ops[index]

    def file_index(self, path: str | int) -> int | None:
        """Index of a file given by index, path, or a unique path suffix (a base name)."""
        if isinstance(path, int):
            return path if 0 <= path < len(self.files) else None
        for i, f in enumerate(self.files):
            if f.path == path:
                return i
        norm = os.path.normpath(os.path.abspath(path)) if os.sep in path else None
        if norm is not None:
            for i, f in enumerate(self.files):
                if f.path == norm:
                    return i
        tail = [
            i
            for i, f in enumerate(self.files)
            if f.path.endswith(os.sep + path) or f.path.endswith("/" + path)
        ]
        return tail[0] if len(tail) == 1 else None

    def frames_of(self, ident: str) -> tuple[Frame, ...]:
        """The user call stack of op ``ident``, innermost frame first."""
        loc = self.op(ident).location
        if loc is None:
            return ()
        return tuple(self.frames[i] for i in self.locations[loc].frames)

    def lines_for_op(self, ident: str, frames: str = "innermost") -> list[tuple[str, int]]:
        """The source lines op ``ident`` came from, as ``(path, line)``: the line
        that made it first, then the lines that called into it. With
        ``frames="user"`` from the line it is charged to (the innermost of the
        user's own code), leaving out the library lines inside it.

        >>> def double(x):
        ...     return x * 2
        >>> model = olympus.provenance.build(olympus.jit(double).trace(1.0))
        >>> model.lines_for_op('olympuspr:0')[0][1] == model.function.first_line + 1
        True
        """
        out: list[tuple[str, int]] = []
        stack = self.frames_of(ident)
        if frames == "user" and stack:
            charged = charged_frame(self.source_tables(), self.op(ident).location)
            stack = stack[stack.index(charged) :] if charged in stack else stack
        for fr in stack:
            key = (self.files[fr.file].path, fr.line)
            if key not in out:
                out.append(key)
        return out

    def ops_for_line(
        self, file: str | int, line: int, *, callers: bool = False
    ) -> dict[str, list[str]]:
        """Ids of the ops of each stage made by source line ``line`` of ``file``.

        ``file`` is a path, a file index or a unique base name. An op is made by
        the line of its innermost user frame; with ``callers=True`` a line also
        counts for every op whose call stack passes through it (the call of a
        helper function gives all of the helper's ops).
        """
        fi = self.file_index(file)
        out: dict[str, list[str]] = {s: [] for s in self.stage_names}
        if fi is None:
            return out
        if not callers:
            for entry in self.lines:
                if entry.file == fi and entry.line == line:
                    for stage, idx in entry.ops.items():
                        out[stage] = [op_id(stage, i) for i in idx]
            return out
        hits = {
            i
            for i, loc in enumerate(self.locations)
            if any(self.frames[f].file == fi and self.frames[f].line == line for f in loc.frames)
        }
        for stage in self.stage_names:
            out[stage] = [op.id for op in self.stages[stage].ops if op.location in hits]
        return out

    def linked_ops(self, ident: str) -> dict[str, list[str]]:
        """Ops of every stage charged to the same source line as op ``ident``."""
        fr = charged_frame(self.source_tables(), self.op(ident).location)
        if fr is None:
            return {s: [] for s in self.stage_names}
        return self.ops_for_line(fr.file, fr.line)

    def ops_on_text_line(self, stage: str, line: int) -> list[str]:
        """Ids of the ops whose span in ``stage``'s text holds ``line`` (1-based)."""
        return [op_id(stage, i) for i in self.stage(stage).ops_on_line(line)]

    def collectives(self) -> list[Op]:
        """The collective HLO instructions (all-reduce, all-gather, ...), in text order."""
        if "compiled" not in self.stages:
            return []
        compiled = self.stages["compiled"]
        return [compiled.ops[i] for i in compiled.collectives]

    def source_line(self, file: str | int, line: int) -> str | None:
        """The text of a source line, when the model holds it."""
        fi = self.file_index(file)
        return None if fi is None else self.files[fi].line(line)

    # -- JSON -------------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The model as JSON-ready data (schema ``olympus.provenance``, see docs/provenance.md).

        >>> model = olympus.provenance.build(olympus.jit(lambda x: x + 1).trace(1.0))
        >>> Provenance.from_json(model.to_json()) == model
        True
        """
        return serialize.to_json(self)

    def to_json_str(self, *, indent: int | None = None) -> str:
        """The model as a JSON string (compact unless ``indent`` is given)."""
        return serialize.dumps(self.to_json(), indent=indent)

    @classmethod
    def from_json(cls, data: Mapping[str, Any] | str) -> "Provenance":
        """Reads a model back from :meth:`to_json` data (or its string form)."""
        return cls(**serialize.fields_from_json(data))

    # -- display ----------------------------------------------------------------

    def summary(self) -> str:
        """A few lines saying what the model holds."""
        parts = [f"{s} {len(self.stages[s].ops)} ops" for s in self.stage_names]
        lines = [
            f"Provenance of {self.function.name!r} for {', '.join(self.platforms) or '?'}: "
            f"{', '.join(parts) or 'no stage'}; {len(self.lines)} source lines"
        ]
        coll = self.collectives()
        if coll:
            lines.append("collectives: " + ", ".join(f"{op.name} ({op.collective})" for op in coll))
        return "\n".join(lines)

    def __repr__(self) -> str:
        return f"<{self.summary().splitlines()[0]}>"


def group_ops_by_line(
    frames: tuple[Frame, ...],
    locations: tuple[Location, ...],
    stages: Iterable[Stage],
    library: tuple[bool, ...] = (),
) -> tuple[SourceLine, ...]:
    """The ``lines`` table: each source line that some op is charged to (its
    innermost frame of the user's own code; ``library`` flags the files that are
    not), with those ops per stage; sorted by file and line."""
    table: dict[tuple[int, int], dict[str, list[int]]] = {}
    tables = SourceTables((), frames, locations, library)
    primary = [charged_frame(tables, i) for i in range(len(locations))]
    for stage in stages:
        for op in stage.ops:
            if op.location is None:
                continue
            fr = primary[op.location]
            if fr is None:
                continue
            per_stage = table.setdefault((fr.file, fr.line), {})
            per_stage.setdefault(stage.name, []).append(op.index)
    return tuple(
        SourceLine(f, ln, {s: tuple(v) for s, v in table[f, ln].items()}) for f, ln in sorted(table)
    )
