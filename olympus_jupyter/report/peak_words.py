"""The compiled program's peak memory in words, each figure named by what measured it.

Two figures answer "how much memory at the peak": the live-range peak of XLA's
buffer assignment (what is live at once, temporaries included: the ``costs``
stage reads it, ``report.costs['peak']['bytes']``) and ``memory_analysis()``'s
``peak_memory_in_bytes`` (``report.analyses.memory``), which on XLA:CPU counts the
argument, output and constant allocations and no temporaries, and on TPU those
allocations plus the peak of the values in the on-chip vector memory (VMEM), with
no temporaries in HBM, where the live-range peak adds the values of every memory
space (HBM, VMEM, SMEM) live at one point: ``report.costs['peak']['difference']``
says which, with the figures (:meth:`olympus.buffers.PeakMemory.difference`). The
report's summary shows the live-range peak first, ``memory_analysis()``'s beside
it; where the live-range peak is not known it says which figure it shows and why.

>>> costs = {"peak": {"bytes": 23_383_244}, "unavailable": {}}
>>> peak_summary({"peak_memory_in_bytes": 1_258_291}, costs)
'22.3 MiB live (buffer assignment) · 1.2 MiB memory_analysis()'
>>> peak_summary({"peak_memory_in_bytes": 1_258_291}, None)
'1.2 MiB memory_analysis() (the live-range peak of the buffer assignment needs the costs stage: costs=True)'
>>> peak_summary(None, None) is None
True
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olympus_jupyter.report.cost_names import format_bytes

__all__ = ["peak_summary", "live_peak", "LIVE", "MEMORY_ANALYSIS"]

#: How each figure is named.
LIVE = "live (buffer assignment)"
MEMORY_ANALYSIS = "memory_analysis()"


def live_peak(costs: Mapping[str, Any] | None) -> int | None:
    """The live-range peak in bytes from a report's ``costs``, or ``None``."""
    peak = (costs or {}).get("peak") or {}
    value = peak.get("bytes")
    return int(value) if isinstance(value, (int, float)) and value >= 0 else None


def peak_summary(
    memory: Mapping[str, Any] | None, costs: Mapping[str, Any] | None, sep: str = " · "
) -> str | None:
    """The peak in words from a report's ``analyses.memory`` and ``costs`` (either
    may be ``None``): the live-range peak, then ``memory_analysis()``'s, each named
    and joined by ``sep``; ``memory_analysis()``'s alone says why the live-range
    peak is missing. ``None`` when neither is known."""
    live = live_peak(costs)
    ma = (memory or {}).get("peak_memory_in_bytes")
    if ma is None:
        ma = ((costs or {}).get("peak") or {}).get("memory_analysis_peak")
    analysed = f"{format_bytes(ma)} {MEMORY_ANALYSIS}" if isinstance(ma, (int, float)) else None
    if live is not None:
        return sep.join(p for p in (f"{format_bytes(live)} {LIVE}", analysed) if p)
    if analysed is None:
        return None
    if costs is None:
        why = "the live-range peak of the buffer assignment needs the costs stage: costs=True"
    else:
        reason = (costs.get("unavailable") or {}).get("peak", "not known")
        why = f"the live-range peak is unavailable: {reason}"
    return f"{analysed} ({why})"
