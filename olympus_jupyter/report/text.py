"""The ``text/plain`` form of a report: a few lines for terminals and logs.

>>> from olympus_jupyter import inspect
>>> print(render_text(inspect(lambda x: x * 2, 1.0)))  # doctest: +ELLIPSIS
Olympus report: <lambda> for ...
  olympuspr 1 equations · stablehlo ... ops · compiled ... instructions
  trace ... ms · lower ... ms · compile ... ms
  ...
"""
from __future__ import annotations

from olympus import stage_registry


def format_bytes(n: float) -> str:
    """``1536`` -> ``'1.5 KiB'``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


def render_text(report) -> str:
    """The summary of a :class:`~olympus_jupyter.report.StageReport`."""
    lines = [f"Olympus report: {report.name} for {', '.join(report.platforms)}"]
    counts = []
    model = report.provenance
    for spec in stage_registry.provenance_stages():
        if model is not None and spec.name in model.stages:
            counts.append(f"{spec.name} {len(model.stages[spec.name].ops)} {spec.unit}")
        elif spec.name in report.unavailable and spec.name in report.stages:
            counts.append(f"{spec.name} unavailable")
    if counts:
        lines.append("  " + " · ".join(counts))
    if report.timings:
        lines.append("  " + " · ".join(f"{k} {v * 1e3:.1f} ms" for k, v in report.timings.items()))
    facts = []
    cost = report.analyses.cost_compiled or report.analyses.cost_lowered
    if cost and "flops" in cost:
        facts.append(f"flops {cost['flops']:g}")
    peak = (report.analyses.memory or {}).get("peak_memory_in_bytes")
    if peak is not None:
        facts.append(f"peak memory {format_bytes(peak)}")
    if facts:
        lines.append("  " + " · ".join(facts))
    for stage, reason in report.unavailable.items():
        if stage in report.stages and stage_registry.stage(stage).step == "compile" \
                and stage_registry.stage(stage).kind == "program":
            lines.append(f"  {stage}: unavailable ({reason})")
    if report.failure is not None:
        lines.append("  " + report.failure.summary())
    lines.extend(f"  note: {note}" for note in report.notes)
    return "\n".join(lines)
