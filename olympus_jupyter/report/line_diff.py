"""Line diffs of program texts that stay fast on big programs.

``difflib`` aligns two texts in time that grows with the product of their lengths:
two stages of a 200-layer model took many seconds. :func:`line_diff` first keeps
the common start and end, then anchors on lines that occur once on each side
(patience diffing, as ``git diff --patience``), aligning only the stretches
between anchors; ``difflib`` aligns a stretch when it is small. A stretch too big
to align line by line, with nothing to anchor on, is reported as one changed block
and counted in :attr:`LineDiff.unaligned`, so a view can say what it did not align
instead of hanging.

>>> d = line_diff(["a", "b", "c", "d"], ["a", "x", "c", "d", "e"])
>>> d.opcodes
[('equal', 0, 1, 0, 1), ('replace', 1, 2, 1, 2), ('equal', 2, 4, 2, 4), ('insert', 4, 4, 4, 5)]
>>> d.removed, d.added, d.unaligned
(1, 2, 0)
"""

from __future__ import annotations

import bisect
import dataclasses
import difflib
from collections.abc import Sequence

__all__ = ["LineDiff", "line_diff", "line_ids", "id_diff", "unified_lines", "ALIGN_CELLS"]

#: The largest stretch (lines before × lines after) aligned line by line with
#: ``difflib`` when nothing anchors it; bigger ones are one changed block.
ALIGN_CELLS = 250_000
#: How deep anchoring recurses into the stretches between anchors.
_MAX_DEPTH = 64


@dataclasses.dataclass(frozen=True)
class LineDiff:
    """``opcodes`` as ``difflib.SequenceMatcher.get_opcodes()`` gives them; lines
    removed and added; and the lines (before + after) of changed blocks too big to
    align line by line."""

    opcodes: list[tuple[str, int, int, int, int]]
    unaligned: int = 0

    @property
    def removed(self) -> int:
        return sum(i2 - i1 for tag, i1, i2, _, _ in self.opcodes if tag != "equal")

    @property
    def added(self) -> int:
        return sum(j2 - j1 for tag, _, _, j1, j2 in self.opcodes if tag != "equal")


def _unique_common(
    a: Sequence[int], b: Sequence[int], a0: int, a1: int, b0: int, b1: int
) -> list[tuple[int, int]]:
    """(i, j) pairs of lines that occur exactly once in a[a0:a1] and in b[b0:b1]."""
    count_a: dict[int, int] = {}
    where_a: dict[int, int] = {}
    for i in range(a0, a1):
        x = a[i]
        count_a[x] = count_a.get(x, 0) + 1
        where_a[x] = i
    count_b: dict[int, int] = {}
    where_b: dict[int, int] = {}
    for j in range(b0, b1):
        x = b[j]
        if count_a.get(x) == 1:
            count_b[x] = count_b.get(x, 0) + 1
            where_b[x] = j
    return sorted((where_a[x], where_b[x]) for x, n in count_b.items() if n == 1)


def _longest_increasing(pairs: list[tuple[int, int]]) -> list[tuple[int, int]]:
    """The longest run of ``pairs`` (sorted by i) whose j increase too (patience sort)."""
    tails: list[int] = []  # smallest j ending an increasing run of each length
    ends: list[int] = []  # index in pairs of that end
    back = [-1] * len(pairs)
    for k, (_, j) in enumerate(pairs):
        n = bisect.bisect_left(tails, j)
        if n == len(tails):
            tails.append(j)
            ends.append(k)
        else:
            tails[n] = j
            ends[n] = k
        back[k] = ends[n - 1] if n else -1
    out = []
    k = ends[-1] if ends else -1
    while k >= 0:
        out.append(pairs[k])
        k = back[k]
    return out[::-1]


class _Differ:
    def __init__(self, a: Sequence[int], b: Sequence[int], cells: int):
        self.a, self.b, self.cells = a, b, cells
        self.ops: list[tuple[str, int, int, int, int]] = []
        self.unaligned = 0

    def emit(self, tag: str, i1: int, i2: int, j1: int, j2: int) -> None:
        if i1 == i2 and j1 == j2:
            return
        if self.ops and self.ops[-1][0] == tag:
            t, p1, _, q1, _ = self.ops.pop()
            i1, j1 = p1, q1
        self.ops.append((tag, i1, i2, j1, j2))

    def changed(self, a0: int, a1: int, b0: int, b1: int) -> None:
        tag = "replace" if a0 < a1 and b0 < b1 else "delete" if a0 < a1 else "insert"
        self.emit(tag, a0, a1, b0, b1)

    def diff(self, a0: int, a1: int, b0: int, b1: int, depth: int = 0) -> None:
        a, b = self.a, self.b
        start = a0
        while a0 < a1 and b0 < b1 and a[a0] == b[b0]:
            a0 += 1
            b0 += 1
        self.emit("equal", start, a0, b0 - (a0 - start), b0)
        end_a, end_b = a1, b1
        while a1 > a0 and b1 > b0 and a[a1 - 1] == b[b1 - 1]:
            a1 -= 1
            b1 -= 1
        self.middle(a0, a1, b0, b1, depth)
        self.emit("equal", a1, end_a, b1, end_b)

    def middle(self, a0: int, a1: int, b0: int, b1: int, depth: int) -> None:
        if a0 == a1 or b0 == b1:
            self.changed(a0, a1, b0, b1)
            return
        if (a1 - a0) * (b1 - b0) <= self.cells:
            matcher = difflib.SequenceMatcher(None, self.a[a0:a1], self.b[b0:b1], autojunk=False)
            for tag, i1, i2, j1, j2 in matcher.get_opcodes():
                self.emit(tag, a0 + i1, a0 + i2, b0 + j1, b0 + j2)
            return
        anchors = (
            _longest_increasing(_unique_common(self.a, self.b, a0, a1, b0, b1))
            if depth < _MAX_DEPTH
            else []
        )
        if not anchors:
            self.changed(a0, a1, b0, b1)
            self.unaligned += (a1 - a0) + (b1 - b0)
            return
        i, j = a0, b0
        for ai, bj in anchors:
            if ai != i or bj != j:  # most anchors follow the one before: no gap
                self.diff(i, ai, j, bj, depth + 1)
            self.emit("equal", ai, ai + 1, bj, bj + 1)
            i, j = ai + 1, bj + 1
        self.diff(i, a1, j, b1, depth + 1)


def line_diff(a: Sequence[str], b: Sequence[str], *, cells: int = ALIGN_CELLS) -> LineDiff:
    """How the lines ``a`` became the lines ``b`` (see the module's docstring)."""
    ids: dict[str, int] = {}
    return id_diff(line_ids(a, ids), line_ids(b, ids), cells=cells)


def line_ids(lines: Sequence[str], ids: dict[str, int]) -> list[int]:
    """``lines`` as numbers, one per distinct line, kept in ``ids``: texts numbered
    with the same ``ids`` are diffed as numbers (:func:`id_diff`), each text
    numbered once however many diffs it is a side of.

    >>> ids = {}
    >>> line_ids(["a", "b", "a"], ids), line_ids(["b", "c"], ids)
    ([0, 1, 0], [1, 2])
    """
    return [ids.setdefault(line, len(ids)) for line in lines]


def id_diff(a: Sequence[int], b: Sequence[int], *, cells: int = ALIGN_CELLS) -> LineDiff:
    """:func:`line_diff` of texts numbered by :func:`line_ids` (with one ``ids``).

    >>> ids = {}
    >>> id_diff(line_ids(["a", "b"], ids), line_ids(["a", "c"], ids)).opcodes
    [('equal', 0, 1, 0, 1), ('replace', 1, 2, 1, 2)]
    """
    differ = _Differ(a, b, cells)
    differ.diff(0, len(a), 0, len(b))
    return LineDiff(differ.ops, differ.unaligned)


class _Given(difflib.SequenceMatcher):
    """A matcher whose opcodes are given (line_diff's), for difflib's grouping."""

    def __init__(self, opcodes: list[tuple[str, int, int, int, int]]):
        super().__init__(None, [], [])
        self._given = opcodes

    def get_opcodes(self):
        return list(self._given)


def _range(start: int, stop: int) -> str:
    """A hunk's range as unified diffs write it (an empty one names the line before)."""
    length = stop - start
    return f"{start + 1 if length else start}" + ("" if length == 1 else f",{length}")


def unified_lines(
    a: Sequence[str],
    b: Sequence[str],
    context: int = 3,
    opcodes: list[tuple[str, int, int, int, int]] | None = None,
) -> list[str]:
    """The lines of a unified diff of ``a`` to ``b`` (hunks ``@@ -i,n +j,m @@``, then
    `` ``, ``-`` and ``+`` lines; no file headers), aligned by :func:`line_diff`, so
    that it stays fast on big texts (or by ``opcodes``, an alignment already made),
    and grouped into hunks as difflib groups them.

    >>> unified_lines(["a", "b", "c"], ["a", "x", "c"], context=1)
    ['@@ -1,3 +1,3 @@', ' a', '-b', '+x', ' c']
    >>> unified_lines(["a", "b"], ["a", "b", "c"], context=0)
    ['@@ -2,0 +3 @@', '+c']
    """
    out: list[str] = []
    if opcodes is None:
        opcodes = line_diff(a, b).opcodes
    for group in _Given(opcodes).get_grouped_opcodes(context):
        i1, i2, j1, j2 = group[0][1], group[-1][2], group[0][3], group[-1][4]
        out.append(f"@@ -{_range(i1, i2)} +{_range(j1, j2)} @@")
        for tag, x1, x2, y1, y2 in group:
            if tag == "equal":
                out.extend(" " + line for line in a[x1:x2])
                continue
            out.extend("-" + line for line in a[x1:x2])
            out.extend("+" + line for line in b[y1:y2])
    return out
