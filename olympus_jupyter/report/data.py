"""What the report's forms share: the bundle's media type, schema and version, and
the analyses a report holds. Imports nothing of the report layer, so every form
(and the report itself) can import it.

>>> Analyses().memory is None, VERSION
(True, 2)
"""
from __future__ import annotations

import dataclasses
from collections.abc import Mapping

__all__ = ["MEDIA_TYPE", "SCHEMA", "VERSION", "Analyses"]

MEDIA_TYPE = "application/vnd.olympus.stages+json"
SCHEMA = "olympus.stages"
#: Version 2 carries the stage table (titles, languages, kinds) and ``texts``;
#: version 1 bundles (saved notebooks from before) still read.
VERSION = 2


@dataclasses.dataclass(frozen=True)
class Analyses:
    """The compiler's estimates: cost before optimization (lowered) and after
    (compiled), and the compiled program's memory, in bytes."""
    cost_lowered: Mapping[str, float] | None = None
    cost_compiled: Mapping[str, float] | None = None
    memory: Mapping[str, int] | None = None
