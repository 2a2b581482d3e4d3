"""Cutting a stage's data down to a byte budget, and lists down to the schema's limits.

A report of a real program holds more than a notebook output or a saved page can
carry: thousands of cost rows, a journey for every line, a note for every
instruction. The stage kinds (:meth:`.kinds.StageKind.cap`) cut their data with
these helpers, keeping what matters first (lists are ordered that way: the costliest
line first) and saying what was left out; the report object in the kernel keeps
everything.

- :func:`json_size`: bytes a value takes in the bundle (compact JSON);
- :func:`kept_prefix`: how many first items of a list fit in a budget;
- :func:`share_budget`: a budget shared among lists, each cut to a prefix;
- :func:`group_notes`: notes grouped by reason (``(and 1,204 more like it)``) so
  that a list never passes the schema's ``maxItems``;
- :func:`clip_message`: a string cut to the schema's ``maxLength``.

>>> kept_prefix([{"a": 1}] * 10, 40)
5
>>> group_notes(["op.1 has no location", "op.2 has no location", "odd"], limit=2)
['op.1 has no location (and 1 more like it)', 'odd']
"""

from __future__ import annotations

from collections.abc import Mapping, Sequence
from typing import Any

from olympus_jupyter.report.data import compact_json

__all__ = [
    "json_size",
    "kept_prefix",
    "share_budget",
    "group_notes",
    "clip_message",
    "MAX_MESSAGE",
]

#: The schema's ``message``: the longest string a note or a description may be.
MAX_MESSAGE = 65_536


def json_size(value: Any) -> int:
    """Bytes ``value`` takes as compact JSON (ASCII: a character is a byte).

    >>> json_size({"a": [1, 2]})
    11
    """
    return len(compact_json(value))


def kept_prefix(items: Sequence[Any], budget: float) -> int:
    """How many first items of ``items`` fit in ``budget`` bytes of JSON (each item
    and its comma).

    >>> kept_prefix(["abc", "abc", "abc"], 12)
    2
    """
    used = 0
    for k, item in enumerate(items):
        used += json_size(item) + 1
        if used > budget:
            return k
    return len(items)


def share_budget(lists: Mapping[str, Sequence[Any]], budget: float) -> dict[str, int]:
    """How many first items of each list to keep so that together they take at most
    ``budget`` bytes: a list that fits its share keeps all of it, and what it leaves
    goes to the others (the smallest lists are served first).

    >>> share_budget({"small": ["x"] * 3, "big": ["y" * 10] * 100}, 120)
    {'small': 3, 'big': 8}
    """
    sizes = {k: json_size(list(v)) for k, v in lists.items()}
    kept: dict[str, int] = {}
    left = budget
    order = sorted(lists, key=lambda k: sizes[k])
    for n, key in enumerate(order):
        share = left / (len(order) - n)
        if sizes[key] <= share:
            kept[key] = len(lists[key])
            left -= sizes[key]
        else:
            kept[key] = kept_prefix(lists[key], share)
            left -= share
    return {k: kept[k] for k in lists}


def _reason(note: str) -> str:
    """What notes of the same reason share: their words, labels and numbers aside
    (a word with a digit: ``fusion.12``, ``40``, ``1,024``), read in one pass.

    >>> _reason("fusion.12 is counted on line 40 of /src/m.py")
    '# is counted on line # of /src/m.py'
    """
    return " ".join("#" if any(c.isdigit() for c in w) else w for w in note.split(" "))


def _one_for_all(members: Sequence[str]) -> str:
    """The first of notes of one reason, saying how many more there are."""
    more_like = f" (and {len(members) - 1:,} more like it)"
    return clip_message(members[0], MAX_MESSAGE - len(more_like)) + more_like


def group_notes(notes: Sequence[str], limit: int, *, more: str = "") -> list[str]:
    """``notes`` as they are when there are at most ``limit``; else grouped by reason
    (notes that differ only in labels and numbers: one example and how many more),
    and where the groups are still too many, the first ``limit - 1`` and one note
    counting the rest (``more`` says where they all are).

    >>> group_notes(["a", "b", "c"], limit=2, more="cost_by_line(compiled).notes lists them")
    ['a', '2 more notes not shown: cost_by_line(compiled).notes lists them']
    """
    notes = [clip_message(str(n)) for n in notes]
    if len(notes) <= limit:
        return notes
    groups: dict[str, list[str]] = {}
    for note in notes:
        groups.setdefault(_reason(note), []).append(note)
    out = [
        members[0] if len(members) == 1 else _one_for_all(members) for members in groups.values()
    ]
    if len(out) <= limit:
        return out
    kept = out[: max(limit - 1, 0)]
    dropped = sum(len(m) for m in list(groups.values())[len(kept) :])
    tail = f"{dropped:,} more notes not shown" + (f": {more}" if more else "")
    return kept + [clip_message(tail)] if limit > 0 else []


def clip_message(text: str, limit: int = MAX_MESSAGE, ellipsis: str = "…") -> str:
    """``text`` cut to at most ``limit`` characters, saying how many were cut
    (after ``ellipsis``: ``"..."`` where the text must stay ASCII).

    >>> clip_message("x" * 50, 30)
    'xxxxxxxx… (42 more characters)'
    """
    if len(text) <= limit:
        return text
    cut = len(text) - limit
    for _ in range(4):  # the count's own width changes what is cut: settle it
        tail = f"{ellipsis} ({cut:,} more characters)"
        head = max(limit - len(tail), 0)
        if len(text) - head == cut:
            break
        cut = len(text) - head
    return (text[:head] + tail)[:limit]
