"""A small least-recently-used table: the report cache and the stage cache both keep one.

A key that is ``None`` or cannot be hashed (an unhashable static argument, say) is
never stored and never found.

>>> table = LRU(size=2)
>>> table.put("a", 1); table.put("b", 2); table.put("c", 3)
>>> table.get("a"), table.get("c"), len(table)
(None, 3, 2)
"""

from __future__ import annotations

import collections
from typing import Any


def _usable(key) -> bool:
    if key is None:
        return False
    try:
        hash(key)
        return True
    except TypeError:
        return False


class LRU:
    """The last ``size`` values put, by key."""

    def __init__(self, size: int = 32):
        self.size = size
        self._entries: collections.OrderedDict = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    def clear(self) -> None:
        """Forgets every value."""
        self._entries.clear()

    def get(self, key) -> Any:
        """The value for ``key`` (now the most recently used), or None."""
        if not _usable(key) or key not in self._entries:
            return None
        self._entries.move_to_end(key)
        return self._entries[key]

    def stale(self, key) -> bool:
        """Whether the value under ``key`` can never be asked for again (forgotten at
        the next :meth:`put`); a table whose keys refer to objects weakly says when."""
        return False

    def forget_stale(self) -> list:
        """Forgets the values that are :meth:`stale` and returns them: the caller
        decides where they are freed (the report cache frees them beside the next
        compile, where it costs nothing).

        >>> table = LRU(size=2)
        >>> table.put("a", 1)
        >>> table.forget_stale()   # an LRU of plain keys has none
        []
        """
        stale = [k for k in self._entries if self.stale(k)]
        return [self._entries.pop(k) for k in stale]

    def put(self, key, value) -> None:
        """Keeps ``value`` under ``key``, forgetting the least recently used past
        ``size``, and the values that are :meth:`stale`."""
        if not _usable(key):
            return
        self.forget_stale()
        self._entries[key] = value
        self._entries.move_to_end(key)
        while len(self._entries) > self.size:
            self._entries.popitem(last=False)
