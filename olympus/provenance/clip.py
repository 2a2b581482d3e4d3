"""A model cut down to the first lines of each stage, and long lines to their first
characters: the part of a huge program a view can afford to carry (a notebook
output has a size cap).

Ops are in text order, so the ops that start within the first ``max_lines`` lines
of a stage are a prefix of its ops, and every op index that survives keeps its
meaning; indices that pointed past the cut (an HLO instruction's ``fusion`` or
``parent``, a computation's caller, a source line's ops) are dropped, and spans
that ran past it end at it. A line cut short (a large constant prints as one line
of megabytes) ends with how much was left out; line numbers are unchanged.

>>> def f(x):
...     for _ in range(3):
...         x = x * 2
...     return x
>>> model = olympus.provenance.build(olympus.jit(f).trace(1.0))
>>> short = clip(model, 2)
>>> model.stage("olympuspr").text.count("\\n") + 1, short.stage("olympuspr").text
(5, '{ lambda ; a:f32[]. let\\n    b:f32[] = mul a 2.0:f32[]')
>>> [op.name for op in short.stage("olympuspr").ops]
['mul']
"""

from __future__ import annotations

import dataclasses

from olympus.provenance.parts import Computation, Op, SourceLine, Stage

__all__ = ["clip", "clip_stage", "clip_text", "line_count", "longest_line"]


def line_count(text: str) -> int:
    """Lines in ``text`` (a last newline does not start another line)."""
    if not text:
        return 0
    return text.count("\n") + (0 if text.endswith("\n") else 1)


def clip_text(text: str, max_lines: int, max_chars: int | None = None) -> str:
    r"""The first ``max_lines`` lines of ``text``, each cut to ``max_chars`` characters.

    >>> clip_text("a\n" + "b" * 50 + "\nc", 2, max_chars=10)
    'a\nbbbbbbbbbb … (40 more characters)'
    """
    end = -1
    for _ in range(max_lines):
        end = text.find("\n", end + 1)
        if end < 0:
            end = len(text)
            break
    text = text[: max(end, 0)]
    if max_chars is None or len(text) <= max_chars:
        return text
    return "\n".join(
        line
        if len(line) <= max_chars
        else f"{line[:max_chars]} … ({len(line) - max_chars:,} more characters)"
        for line in text.split("\n")
    )


def longest_line(text: str) -> int:
    """The length of the longest line of ``text``."""
    return max(map(len, text.split("\n")), default=0)


def _kept(index: int | None, count: int) -> int | None:
    return index if index is not None and index < count else None


def clip_stage(stage: Stage, max_lines: int, max_chars: int | None = None) -> Stage:
    """``stage`` with its first ``max_lines`` lines of text (each ``max_chars`` at
    most) and the ops that start there."""
    if line_count(stage.text) <= max_lines:
        text = clip_text(stage.text, max_lines, max_chars)
        # clip_text only shortens: an unchanged length is the stage as it was.
        return stage if len(text) == len(stage.text) else dataclasses.replace(stage, text=text)
    count = len(stage.ops)
    for op in stage.ops:
        if op.lines is not None and op.lines[0] > max_lines:
            count = op.index
            break
    ops = tuple(
        Op(
            stage.name,
            op.index,
            op.name,
            op.types,
            None if op.lines is None else (op.lines[0], min(op.lines[1], max_lines)),
            op.location,
            op.name_stack,
            _kept(op.parent, count),
            op.sharding,
            op.label,
            op.computation,
            _kept(op.fusion, count),
            op.collective,
        )
        for op in stage.ops[:count]
    )
    computations = tuple(
        Computation(
            c.name,
            (c.lines[0], min(c.lines[1], max_lines)),
            c.entry,
            _kept(c.caller, count),
            _kept(c.fusion, count),
        )
        for c in stage.computations
        if c.lines[0] <= max_lines
    )
    ops = tuple(
        op
        if op.computation is None or op.computation < len(computations)
        else dataclasses.replace(op, computation=None)
        for op in ops
    )
    return dataclasses.replace(
        stage,
        text=clip_text(stage.text, max_lines, max_chars),
        ops=ops,
        computations=computations,
        collectives=tuple(k for k in stage.collectives if k < count),
    )


def clip(model, max_lines: int, max_chars: int | None = None):
    """``model`` with every stage clipped to its first ``max_lines`` lines, each
    ``max_chars`` characters at most."""
    stages = {name: clip_stage(stage, max_lines, max_chars) for name, stage in model.stages.items()}
    counts = {name: len(stage.ops) for name, stage in stages.items()}
    lines = []
    for line in model.lines:
        ops = {
            name: tuple(k for k in indices if k < counts.get(name, 0))
            for name, indices in line.ops.items()
        }
        ops = {name: indices for name, indices in ops.items() if indices}
        if ops or not line.ops:
            lines.append(SourceLine(line.file, line.line, ops))
    return dataclasses.replace(model, stages=stages, lines=tuple(lines))
