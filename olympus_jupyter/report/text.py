"""The ``text/plain`` form of a report: a few lines for terminals and logs.

>>> from olympus_jupyter import inspect
>>> print(render_text(inspect(lambda x: x * 2, 1.0)))  # doctest: +ELLIPSIS
Olympus report: <lambda> for ...
  olympuspr 1 equations · stablehlo ... ops · compiled ... instructions
  trace ... ms · lower ... ms · compile ... ms
  ...
"""
from __future__ import annotations

import os

from olympus import stage_registry

from olympus_jupyter.report import cost_names
from olympus_jupyter.report.passes_view import counts, line_summary


def format_bytes(n: float) -> str:
    """``1536`` -> ``'1.5 KiB'``."""
    for unit in ("B", "KiB", "MiB", "GiB"):
        if abs(n) < 1024 or unit == "GiB":
            return f"{n:.0f} {unit}" if unit == "B" else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"


#: Cost figures the summary lists (the headline ones come first); the rest are counted.
MAX_COST_LINES = 8


def _printable(text: str) -> str:
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


def cost_lines(lowered, compiled, limit: int = MAX_COST_LINES) -> list[str]:
    """XLA's cost figures named for people, before → after optimization (or the one
    of the two there is), each with its unit and XLA's key in brackets; ``[]`` when
    there are none.

    >>> print("\\n".join(cost_lines({"flops": 192.0, "bytes accessed0{}": 2048.0},
    ...                              {"flops": 192.0, "bytes accessed0{}": 1024.0})))
      cost, XLA's estimate before → after optimization (lowered → compiled):
        floating-point operations  192 flops          → 192 flops          [flops]
        bytes read from operand 0  2.0 KiB (2,048 B)  → 1.0 KiB (1,024 B)  [bytes accessed0{}]
    >>> print("\\n".join(cost_lines({"utilization1{}": 2.0}, None)))
      cost, XLA's estimate before optimization (lowered):
        utilization of operand 1  2  [utilization1{}]
    """
    columns = [t for t in (lowered, compiled) if t is not None]
    keys = sorted({k for t in columns for k in t}, key=cost_names.sort_key)
    if not keys:
        return []
    rows = []
    for key in keys[:limit]:
        name = cost_names.describe(key)
        rows.append([_printable(name.label), *(name.format(t.get(key)) for t in columns),
                     f"[{_printable(key)}]" if name.known else ""])
    widths = [min(max(len(r[i]) for r in rows), 40) for i in range(len(rows[0]) - 1)]
    if lowered is not None and compiled is not None:
        title = "before → after optimization (lowered → compiled)"
    else:
        title = "before optimization (lowered)" if lowered is not None else \
            "after optimization (compiled)"
    out = [f"  cost, XLA's estimate {title}:"]
    for row in rows:
        cells = [f"{c:<{w}}" for c, w in zip(row, widths)]
        out.append(("    " + "  ".join(cells[:2]) + "".join(f"  → {c}" for c in cells[2:])
                    + f"  {row[-1]}").rstrip())
    if len(keys) > limit:
        out.append(f"    … and {len(keys) - limit} more: report.html() names every figure")
    return out


#: Source lines whose journey through XLA's passes the summary prints.
MAX_JOURNEY_LINES = 8


def pass_lines(passes, model, limit: int = MAX_JOURNEY_LINES) -> list[str]:
    """What XLA's passes did (the ``passes`` stage), and where each source line's
    instructions ended up; ``[]`` without the stage.

    >>> pass_lines({"pass_re": ".*", "rows": [{"kind": "changed", "instructions_before": 3,
    ...             "instructions": 2}], "journeys": [{"file": 0, "line": 4,
    ...             "start": [{"label": "sin.3", "opcode": "sine"}], "end": [],
    ...             "events": [{"pass": "cse", "kind": "removed"}]}]}, None)
    ['  passes: 1 of 1 steps changed the module; 3 → 2 instructions', '    line 4: sin.3 (sine) → nothing (removed)  [cse (removed)]']
    """
    if not passes:
        return []
    changed, first, last = counts(passes)
    out = [f"  passes: {changed} of {len(passes['rows'])} steps changed the module; "
           f"{first:,} → {last:,} instructions"]
    for j in passes["journeys"][:limit]:
        where = f"line {j['line']}"
        if model is not None and 0 <= j["file"] < len(model.files) and j["file"] != \
                model.function.file:
            where = f"{os.path.basename(model.files[j['file']].path)}:{j['line']}"
        start, end, decided = line_summary(j)
        out.append(_printable(f"    {where}: {start} → {end}  [{decided}]"))
    if len(passes["journeys"]) > limit:
        out.append(f"    … and {len(passes['journeys']) - limit} more lines: "
                   f"report.journey(line) gives each")
    return out


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
    peak = (report.analyses.memory or {}).get("peak_memory_in_bytes")
    if peak is not None:
        lines.append(f"  peak memory {format_bytes(peak)}")
    lines.extend(cost_lines(report.analyses.cost_lowered, report.analyses.cost_compiled))
    lines.extend(pass_lines(report.passes, model))
    for stage, reason in report.unavailable.items():
        if stage in report.stages and stage_registry.stage(stage).step == "compile" \
                and stage_registry.stage(stage).kind == "program":
            lines.append(f"  {stage}: unavailable ({reason})")
    if report.failure is not None:
        lines.append("  " + report.failure.summary())
    lines.extend(f"  note: {note}" for note in report.notes)
    return "\n".join(lines)
