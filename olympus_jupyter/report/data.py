"""What the report's forms share: the bundle's media type, schema and version, and
the analyses a report holds. Imports nothing of the report layer, so every form
(and the report itself) can import it.

>>> Analyses().memory is None, VERSION
(True, 3)
"""

from __future__ import annotations

import dataclasses
import json
from collections.abc import Mapping, Sequence
from typing import Any

import orjson

__all__ = ["MEDIA_TYPE", "SCHEMA", "VERSION", "Analyses", "compact_json"]

MEDIA_TYPE = "application/vnd.olympus.stages+json"
SCHEMA = "olympus.stages"
#: Version 2 carries the stage table (titles, languages, kinds) and ``texts``;
#: version 3 names each stage's view in the table, holds the data of registered stage
#: kinds in ``data`` and calls the cost analysis ``cost_analysis`` (``cost`` before).
#: Version 1 and 2 bundles (saved notebooks from before) still read.
VERSION = 3


@dataclasses.dataclass(frozen=True)
class Analyses:
    """The compiler's estimates: cost before optimization (lowered) and after
    (compiled), and the compiled program's memory, in bytes."""

    cost_lowered: Mapping[str, float] | None = None
    cost_compiled: Mapping[str, float] | None = None
    memory: Mapping[str, int] | None = None


def compact_json(data: Any) -> str:
    """``data`` as compact JSON text in ASCII: what the HTML form embeds and the output
    cap measures. orjson writes it (as jupyter_client's ``Session`` serializes a
    kernel's messages where orjson is installed, so the two agree); where the text
    holds characters beyond ASCII, or orjson refuses the data (a key that is not a
    string, an integer beyond 64 bits), the standard library writes it, with
    ``\\u`` escapes.

    >>> compact_json({"name": "f", "sizes": [1, 2.5], "none": None})
    '{"name":"f","sizes":[1,2.5],"none":null}'
    >>> text = compact_json({"name": "\u00fcber"})
    >>> text.isascii(), json.loads(text) == {"name": "\u00fcber"}
    (True, True)
    """
    try:
        text = orjson.dumps(data).decode()
    except TypeError:  # orjson.JSONEncodeError: what it cannot write
        text = None
    if text is None or not text.isascii():
        text = json.dumps(data, separators=(",", ":"))
    return text


def file_index(files: Sequence[str], path: str | None) -> tuple[int | None, str | None]:
    """A path as the report's file index, or ``None`` and the path itself (a file
    the report's provenance does not hold); ``(None, None)`` for no path.

    >>> file_index(["/a.py", "/b.py"], "/b.py"), file_index(["/a.py"], "/c.py")
    ((1, None), (None, '/c.py'))
    """
    if path is None:
        return None, None
    try:
        return list(files).index(path), None
    except ValueError:
        return None, path


def cost_row(what: str, file: int | None, path: str | None, line: int | None) -> dict:
    """A row of the costs stage's ``lines`` that costs nothing yet (the costs' and
    the time's views add to it).

    >>> cost_row("line", 0, None, 3)["flops"], cost_row("line", 0, None, 3)["buffers"]
    (0.0, [])
    """
    return {
        "what": what,
        "file": file,
        "path": path,
        "line": line,
        "flops": 0.0,
        "transcendentals": 0.0,
        "bytes": 0.0,
        "peak": 0,
        "instructions": [],
        "buffers": [],
        "via": [],
    }
