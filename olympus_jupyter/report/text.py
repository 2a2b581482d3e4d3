"""The ``text/plain`` form of a report: a few lines for terminals and logs.

It is ASCII ("->", "..."), as is the HTML form, so that a kernel sends the display
quickly (see :func:`olympus_jupyter.report.markup.ascii_html`); what the program
itself names (a path, a function) is shown as it is. No line is longer than
:data:`MAX_WIDTH` characters: notes are wrapped, other lines (an instruction's
long name, a collective's shardings) cut short saying how much was cut
(:func:`fit_line`); ``report.stage_text(stage)`` and the report's data hold
everything.

>>> from olympus_jupyter import inspect
>>> print(render_text(inspect(lambda x: x * 2, 1.0)))  # doctest: +ELLIPSIS
Olympus report: <lambda> for ...
  olympuspr 1 equations, stablehlo ... ops, compiled ... instructions
  trace ... ms, lower ... ms, compile ... ms
  ...
"""

from __future__ import annotations

import os
import textwrap
from collections.abc import Mapping
from typing import Any

from olympus import stage_registry

from olympus_jupyter.report import cost_names, kinds, time_view
from olympus_jupyter.report.device_memory import target_lines
from olympus_jupyter.report.cost_names import format_bytes, format_flops, format_ms, format_share
from olympus_jupyter.report.costs_view import module_rows, op_groups
from olympus_jupyter.report.data_cap import clip_message
from olympus_jupyter.report.passes_view import counts, line_summary, op_journey_rows


#: The longest line the summary prints.
MAX_WIDTH = 200


def fit_line(line: str, width: int = MAX_WIDTH) -> str:
    """``line`` cut to ``width`` characters where it is longer, saying how many
    characters were cut.

    >>> fit_line("x" * 300, 40)
    'xxxxxxxxxxxxxxx... (285 more characters)'
    """
    return clip_message(line, width, "...")


def _note_lines(note: str, width: int = MAX_WIDTH) -> list[str]:
    """A note, wrapped to ``width`` (a word longer than a line is cut short).

    >>> _note_lines("the output is capped " * 3, 30)
    ['  note: the output is capped', '        the output is capped', '        the output is capped']
    """
    wrapped = textwrap.wrap(
        note,
        width,
        initial_indent="  note: ",
        subsequent_indent="        ",
        break_long_words=False,
        break_on_hyphens=False,
    )
    return [fit_line(line, width) for line in wrapped]


#: Cost figures the summary lists (the headline ones come first); the rest are counted.
MAX_COST_LINES = 8


def _printable(text: str) -> str:
    if text.isprintable():  # most are: checked at C speed
        return text
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" for c in text)


def _ascii_figure(text: str) -> str:
    """A figure as the HTML shows it, in ASCII: ``-`` for none, ``us`` for µs."""
    return text.replace("\u2014", "-").replace("\u00b5", "u")


def cost_lines(lowered, compiled, limit: int = MAX_COST_LINES) -> list[str]:
    """XLA's cost figures named for people, before -> after optimization (or the one
    of the two there is), each with its unit and XLA's key in brackets; ``[]`` when
    there are none.

    >>> print("\\n".join(cost_lines({"flops": 192.0, "bytes accessed0{}": 2048.0},
    ...                              {"flops": 192.0, "bytes accessed0{}": 1024.0})))
      cost, XLA's estimate before -> after optimization (lowered -> compiled):
        floating-point operations  192 flops          -> 192 flops          [flops]
        bytes read from operand 0  2.0 KiB (2,048 B)  -> 1.0 KiB (1,024 B)  [bytes accessed0{}]
    >>> print("\\n".join(cost_lines({"utilization1{}": 2.0}, None)))
      cost, XLA's estimate before optimization (lowered):
        utilization of operand 1  2  [utilization1{}]

    A figure that is no figure (:func:`~.cost_names.mark`) is shown as it came,
    with a note under the table saying what it is:

    >>> print("\\n".join(cost_lines(None, {"optimal_seconds": -2.0})))  # doctest: +ELLIPSIS
      cost, XLA's estimate after optimization (compiled):
        optimal time  -2 s (note 1)  [optimal_seconds]
        note 1: optimal time (compiled) -2 s is not a time: XLA counts -1 for each instruction ...
    """
    named = [(n, t) for n, t in (("lowered", lowered), ("compiled", compiled)) if t is not None]
    columns = [t for _, t in named]
    keys = sorted({k for t in columns for k in t}, key=cost_names.sort_key)
    if not keys:
        return []
    rows = []
    notes: list[str] = []
    for key in keys[:limit]:
        name = cost_names.describe(key)
        cells = []
        for column, t in named:
            cell = _ascii_figure(name.format(t.get(key)))
            why = cost_names.mark(key, t[key]) if key in t else None
            if why is not None:
                notes.append(f"{name.label} ({column}) {cell} is {why}")
                cell += f" (note {len(notes)})"
            cells.append(cell)
        rows.append(
            [
                _printable(name.label),
                *cells,
                f"[{_printable(key)}]" if name.known else "",
            ]
        )
    widths = [min(max(len(r[i]) for r in rows), 40) for i in range(len(rows[0]) - 1)]
    if lowered is not None and compiled is not None:
        title = "before -> after optimization (lowered -> compiled)"
    else:
        title = (
            "before optimization (lowered)"
            if lowered is not None
            else "after optimization (compiled)"
        )
    out = [f"  cost, XLA's estimate {title}:"]
    for row in rows:
        cells = [f"{c:<{w}}" for c, w in zip(row, widths)]
        out.append(
            (
                "    "
                + "  ".join(cells[:2])
                + "".join(f"  -> {c}" for c in cells[2:])
                + f"  {row[-1]}"
            ).rstrip()
        )
    if len(keys) > limit:
        out.append(f"    ... and {len(keys) - limit} more: report.html() names every figure")
    for k, note in enumerate(notes, 1):  # wrapped: a note is a sentence or two
        head = f"    note {k}: "
        wrapped = textwrap.wrap(
            _printable(note),
            MAX_WIDTH,
            initial_indent=head,
            subsequent_indent=" " * len(head),
            break_long_words=False,
            break_on_hyphens=False,
        )
        out.extend(fit_line(line) for line in wrapped)
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
    ['  passes: 1 of 1 steps changed the module; 3 -> 2 instructions', '    line 4: sin.3 (sine) -> nothing (removed)  [cse (removed)]']
    """
    if not passes:
        return []
    changed, first, last = counts(passes)
    out = [
        f"  passes: {changed} of {len(passes['rows'])} steps changed the module; "
        f"{first:,} -> {last:,} instructions"
    ]
    for j in passes["journeys"][:limit]:
        where = f"line {j['line']}"
        if (
            model is not None
            and 0 <= j["file"] < len(model.files)
            and j["file"] != model.function.file
        ):
            where = f"{os.path.basename(model.files[j['file']].path)}:{j['line']}"
        start, end, decided = line_summary(j)
        out.append(_printable(f"    {where}: {start} -> {end}  [{decided}]"))
    if len(passes["journeys"]) > limit:
        out.append(
            f"    ... and {len(passes['journeys']) - limit} more lines: "
            f"report.journey(line) gives each"
        )
    ops, more = op_journey_rows(passes, model, limit)
    if ops:
        out.append("    by op (olympuspr equations):")
    for r in ops:
        out.append(
            _printable(
                f"      {_op_head(r, 'one journey')}: {r['start']} -> {r['end']}  [{r['decided']}]"
            )
        )
    if more:
        out.append(f"      ... and {more:,} more: report.journey_of_op(op) gives each")
    return out


#: Source lines of the ``costs`` stage the summary lists, and collectives it quotes.
MAX_COST_ROWS = 5
MAX_COLLECTIVES = 3


def _number(value) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return 0.0
    return v if v == v and abs(v) != float("inf") else 0.0


def costs_lines(costs, model, limit: int = MAX_COST_ROWS) -> list[str]:
    """Where the compiled program's cost goes (the ``costs`` stage): XLA's totals and
    the peak, the source lines that cost most (their flops, bytes accessed and bytes
    live at the peak, each with its share), the compiler-made part when there is one,
    and the collectives; ``[]`` without the stage.

    >>> print("\\n".join(costs_lines({"devices": 8, "totals": {"flops": 66000.0,
    ...     "transcendentals": 0.0, "bytes accessed": 16384.0},
    ...     "peak": {"bytes": 14336}, "lines": [
    ...     {"what": "line", "file": None, "path": "/src/m.py", "line": 6, "flops": 65500.0,
    ...      "bytes": 14336.0, "peak": 2048},
    ...     {"what": "compiler-made", "file": None, "path": None, "line": None,
    ...      "flops": 0.0, "bytes": 2048.0, "peak": 0}], "collectives": [
    ...     {"text": "all-gather (inserted) at m.py:6: 4,096 B per device"}],
    ...     "unavailable": {}}, None)))
      costs: 66.0 kFLOP, 16.0 KiB accessed, 14.0 KiB live at the peak (per device on 8 devices)
        line 6 (m.py): 65.5 kFLOP (>99%), 14.0 KiB (88%), peak 2.0 KiB (14%)
        compiler-made (copies, layout changes): 0 FLOP (0%), 2.0 KiB (12%), peak 0 B (0%)
        collectives: 1
          all-gather (inserted) at m.py:6: 4,096 B per device
    """
    if not costs:
        return []
    # What the rows add up to: loop bodies × their trip counts (XLA's totals count
    # each once; the notes say by how much they differ).
    counted = costs.get("counted_totals")
    totals = counted or costs.get("totals") or {}
    flops, accessed = _number(totals.get("flops")), _number(totals.get("bytes accessed"))
    peak_data = costs.get("peak")
    peak = _number(peak_data.get("bytes")) if peak_data else 0.0
    head = f"  costs: {format_flops(flops)}, {format_bytes(accessed)} accessed"
    counted_by = costs.get("counted_by")
    if counted:
        xla = _number((costs.get("totals") or {}).get("flops"))
        whose = "XLA's cost analysis" if counted_by else "XLA's cost_analysis()"
        head += f" (loops x trip counts; {whose}: {format_flops(xla)})"
    if peak_data:
        head += f", {format_bytes(peak)} live at the peak"
    else:
        reason = (costs.get("unavailable") or {}).get("peak", "not known")
        head += f", live at the peak: unavailable ({reason})"
    devices = costs.get("devices") or 1
    if devices > 1:
        head += f" (per device on {devices} devices)"
    out = [head]
    if counted_by:  # a CUDA program's: no cost_analysis() of its own
        out.append(_printable(f"    counted by {counted_by}"))

    out.extend(time_view.text_lines(costs))  # a target's: the time column, named

    def share(value: float, total: float) -> str:
        return f" ({format_share(value / total)})" if total else ""

    def figures(r) -> str:
        f, b, p = _number(r.get("flops")), _number(r.get("bytes")), _number(r.get("peak"))
        text = f"{format_flops(f)}{share(f, flops)}, {format_bytes(b)}{share(b, accessed)}"
        text += f", peak {format_bytes(p)}{share(p, peak)}" if peak_data else ""
        return text + time_view.text_figure(costs, r)

    rows = costs.get("lines") or []
    lines = [r for r in rows if r.get("what") == "line"]
    files = [f.path for f in model.files] if model is not None else []
    for r in lines[:limit]:
        file, path = r.get("file"), r.get("path")
        name = files[file] if isinstance(file, int) and 0 <= file < len(files) else path
        where = f"line {r.get('line')}"
        if name:
            where += f" ({os.path.basename(str(name)) or name})"
        # ASCII, as the whole summary: "x 8 iterations".
        loops = f" [{str(r['iterations']).replace(chr(0xD7), 'x')}]" if r.get("iterations") else ""
        out.append(_printable(f"    {where}: {figures(r)}{loops}"))
        via = r.get("via") or []
        if via:
            v = via[0]
            vfile = v.get("file")
            vname = files[vfile] if isinstance(vfile, int) and 0 <= vfile < len(files) else None
            vname = vname or v.get("path") or "?"
            more = f" and {len(via) - 1} more library lines" if len(via) > 1 else ""
            out.append(
                _printable(
                    f"      via {_library_name(str(vname))}:{v.get('line')} "
                    f"({v.get('function')}) {format_flops(_number(v.get('flops')))}{more}"
                )
            )
    if len(lines) > limit:
        out.append(f"    ... and {len(lines) - limit} more lines: report.cost_by_line() gives each")
    for r in rows:
        if r.get("what") == "compiler-made" and any(
            _number(r.get(k)) for k in ("flops", "transcendentals", "bytes", "peak")
        ):
            out.append(f"    compiler-made (copies, layout changes): {figures(r)}")
    out.extend(_module_lines(costs, flops, limit))
    out.extend(_op_lines(costs, model, limit))
    found = costs.get("collectives") or []
    if found:
        out.append(f"    collectives: {len(found)}")
        out.extend(_printable(f"      {c.get('text', '')}") for c in found[:MAX_COLLECTIVES])
        if len(found) > MAX_COLLECTIVES:
            out.append(
                f"      ... and {len(found) - MAX_COLLECTIVES} more: "
                f"report.collectives() gives each"
            )
    return out


def _module_lines(costs, flops: float, limit: int) -> list[str]:
    """The top two levels of the module tree, by flops (``[]`` without modules)."""
    if not any(m.get("path") for m in costs.get("modules") or ()):
        return []
    nodes = module_rows(costs, None, depth=1)
    out = ["    by module:"]
    for node in nodes[:limit]:
        name = node["name"] or "(no module)"
        share = f" ({format_share(node['flops'] / flops)})" if flops else ""
        loops = f" [{node['iterations'].replace(chr(0xD7), 'x')}]" if node["iterations"] else ""
        out.append(
            _printable(
                f"      {'  ' * node['depth']}{name}: {format_flops(node['flops'])}{share}, "
                f"{format_bytes(node['bytes'])}{time_view.text_figure(costs, node)}{loops}"
            )
        )
    if len(nodes) > limit:
        out.append(f"      ... and {len(nodes) - limit} more: report.cost_by_module() gives each")
    return out


def _op_head(group: Mapping[str, Any], alike: str) -> str:
    """An op row's start: its primitive, its first op's id, the line it is charged
    to, and how many ops alike it stands for (``alike``: what they share).

    >>> _op_head({"name": "sin", "ops": ["olympuspr:2", "olympuspr:5"], "line": 4,
    ...           "path": "/tmp/m.py"}, "together")
    'sin olympuspr:2 at line 4 (m.py), 2 ops alike (together)'
    """
    line, n = group["line"], len(group["ops"])
    where = f" at line {line} ({os.path.basename(group['path'] or '')})" if line else ""
    together = f", {n:,} ops alike ({alike})" if n > 1 else ""
    return f"{group['name']} {group['ops'][0]}{where}{together}"


def _op_lines(costs, model, limit: int) -> list[str]:
    """The costliest olympuspr equations (``[]`` without the report's model or op
    costs): :func:`~olympus_jupyter.report.costs_view.op_groups`."""
    groups = op_groups(costs, model, limit)
    if not groups:
        return []
    out = ["    by op (olympuspr equations):"]
    for g in groups:
        out.append(
            _printable(
                f"      {_op_head(g, 'together')}: "
                f"{format_flops(g['flops'])} ({format_share(g['flops_share'])}), "
                f"{format_bytes(g['bytes'])} ({format_share(g['bytes_share'])})"
            )
        )
    out.append("      report.cost_share_of_op(op) gives each op's")
    return out


def _library_name(path: str) -> str:
    """A library file as its package path (``flax/nnx/nn/linear.py``), else its base name."""
    for marker in ("site-packages/", "dist-packages/"):
        if marker in path:
            return path.split(marker, 1)[1]
    return os.path.basename(path) or path


def render_text(report) -> str:
    """The summary of a :class:`~olympus_jupyter.report.StageReport`."""
    lines = [f"Olympus report: {report.name} for {', '.join(report.platforms)}"]
    lines.extend(f"  {line}" for line in target_lines(report.target))
    counts = []
    model = report.provenance
    for spec in stage_registry.provenance_stages():
        if model is not None and spec.name in model.stages:
            counts.append(f"{spec.name} {len(model.stages[spec.name].ops)} {spec.unit}")
        elif spec.name in report.unavailable and spec.name in report.stages:
            counts.append(f"{spec.name} unavailable")
    if counts:
        lines.append("  " + ", ".join(counts))
    if report.timings:
        lines.append("  " + ", ".join(f"{k} {format_ms(v)}" for k, v in report.timings.items()))
    # Each kind's lines (kinds.StageKind.text), in the order of their text_rank.
    for handler in sorted(kinds.kinds(), key=lambda k: k.text_rank):
        lines.extend(handler.text(report))
    if report.failure is not None:
        lines.append("  " + report.failure.summary())
    for note in report.notes:
        lines.extend(_note_lines(note))
    return "\n".join(fit_line(line) for text in lines for line in text.split("\n"))
