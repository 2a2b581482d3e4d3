"""The ``costs`` stage of a report: where the compiled program's cost goes, by line.

The core answers three questions of a compiled program, from the program alone
(no run): which lines cost its flops and bytes (:mod:`olympus.line_costs`), what
is alive at its memory peak and which lines made it (:mod:`olympus.buffers`), and
which communication a sharding cost (:mod:`olympus.collectives`). This module
makes them the report's ``costs`` data, which the bundle carries and every form
shows (the JupyterLab view as a heatmap and a table, the static HTML as a table
with bars, the text form as the top lines):

- ``totals``: XLA's module totals (``Compiled.cost_analysis()``), which the rows
  add up to;
- ``lines``: one row per source line that costs something (flops,
  transcendentals, bytes accessed, bytes live at the peak), then the
  compiler-made row (copies, layout changes: never dropped) and the arguments'
  row; ``file`` is an index into the report's source files, or ``null`` with the
  ``path`` of a file the report does not show;
- ``peak``: the live-range peak, where it is reached, ``memory_analysis()``'s
  peak and how the two relate, bytes by kind of buffer; ``buffers``: the buffers
  live at the peak, biggest first;
- ``collectives``: each collective of the program, its replica groups, bytes per
  device and moved, the lines and shardings that caused it; ``shardings``: the
  compiled program's input and output shardings; ``devices``: how many devices
  run it (the figures are each device's: every device runs the same
  partitioned program).

The lists stay within the schema's limits: ``notes`` are grouped by reason past
:data:`MAX_NOTES` (:func:`~.data_cap.group_notes`), a collective names at most
:data:`MAX_LIST` lines and shardings. :func:`cap_costs` cuts the data to a byte
budget for an output with a size cap: the costliest lines first, the rest counted
in a note.

>>> import olympus, olympus.numpy as jnp, numpy as np
>>> from olympus.line_costs import cost_by_line
>>> compiled = olympus.jit(lambda x, w: x @ w).trace(
...     np.ones((4, 8), np.float32), np.ones((8, 16), np.float32)).lower().compile()
>>> data = costs_json(compiled, cost_by_line(compiled), None, [], files=())
>>> data["totals"]["flops"], sum(row["flops"] for row in data["lines"])
(1024.0, 1024.0)
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from olympus.buffers import PeakMemory
from olympus.collectives import Collective
from olympus.line_costs import CostByLine

from olympus_jupyter.report.data_cap import (
    MAX_MESSAGE,
    clip_message,
    group_notes,
    json_size,
    share_budget,
)

__all__ = [
    "costs_json",
    "cap_costs",
    "check_costs",
    "line_rows",
    "peak_buffers",
    "collectives_rows",
    "MAX_LABELS",
    "MAX_BUFFERS",
    "MAX_NOTES",
    "MAX_LIST",
    "QUANTITIES",
]

#: Instruction and buffer labels a row names (the rest are counted).
MAX_LABELS = 50
#: Buffers live at the peak a report lists, biggest first, unless it is ``full``.
MAX_BUFFERS = 200
#: Notes the data holds (the schema's ``maxItems``): past it, grouped by reason.
MAX_NOTES = 1000
#: Lines and shardings a collective names (the schema's ``maxItems``).
MAX_LIST = 1000
#: The figures of a row: (key in a row, what it is, key in ``totals`` or ``None``).
QUANTITIES = (
    ("flops", "flops", "flops"),
    ("transcendentals", "transcendentals", "transcendentals"),
    ("bytes", "bytes accessed", "bytes accessed"),
    ("peak", "bytes live at the peak", None),
)


def _where(files: Sequence[str], path: str | None) -> tuple[int | None, str | None]:
    """A path as the report's file index, or ``None`` and the path itself."""
    if path is None:
        return None, None
    try:
        return list(files).index(path), None
    except ValueError:
        return None, path


def _labels(labels: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(labels))[:MAX_LABELS]


def _rows(cost: CostByLine, peak: PeakMemory | None, files: Sequence[str]) -> list[dict]:
    rows: dict[tuple, dict] = {}

    def row(what, path, line):
        key = (what, path, line)
        if key not in rows:
            file, other = _where(files, path)
            rows[key] = {
                "what": what,
                "file": file,
                "path": other,
                "line": line,
                "flops": 0.0,
                "transcendentals": 0.0,
                "bytes": 0.0,
                "peak": 0,
                "instructions": [],
                "buffers": [],
            }
        return rows[key]

    for c in cost.lines:
        r = row("line" if c.file is not None else "compiler-made", c.file, c.line)
        r["flops"] += c.flops
        r["transcendentals"] += c.transcendentals
        r["bytes"] += c.bytes_accessed
        r["instructions"] = _labels(r["instructions"] + list(c.instructions))
    for b in peak.by_line() if peak is not None else ():
        r = row(b.what, b.file, b.line)
        r["peak"] += b.bytes
        r["buffers"] = _labels(r["buffers"] + list(b.labels))
    order = {"line": 0, "compiler-made": 1, "arguments": 2}
    return sorted(
        rows.values(),
        key=lambda r: (
            order[r["what"]],
            -r["flops"],
            -r["bytes"],
            -r["peak"],
            r["file"] if r["file"] is not None else math.inf,
            r["path"] or "",
            r["line"] or 0,
        ),
    )


def _buffers(peak: PeakMemory, files: Sequence[str], full: bool) -> list[dict]:
    out = []
    for b in peak.buffers if full else peak.buffers[:MAX_BUFFERS]:
        file, path = _where(files, b.line[0] if b.line else None)
        out.append(
            {
                "label": b.label,
                "index": b.index,
                "size": b.size,
                "counted": b.bytes,
                "kind": b.kind,
                "shape": b.shape,
                "file": file,
                "path": path,
                "line": b.line[1] if b.line else None,
                "aliased_argument": b.aliased_argument,
            }
        )
    return out


def _collective(c: Collective, files: Sequence[str], callers) -> dict[str, Any]:
    # The lines that made it, not those the staged function was called from.
    lines = [w for w in c.lines if w not in callers] or list(c.lines[:1])
    return {
        "label": c.label,
        "opcode": c.opcode,
        "kind": c.kind,
        "replica_groups": c.replica_groups,
        "group_size": c.group_size,
        "result_bytes": c.result_bytes,
        "moved_bytes": c.moved_bytes,
        "op_name": c.op_name,
        "lines": [[_where(files, path)[0], line] for path, line in lines[:MAX_LIST]],
        # Said without its place: the lines above say it, as the report names files
        # (a notebook cell's path is a temporary file's, shown as In [n]).
        "shardings": [clip_message(s) for s in c.shardings[:MAX_LIST]],
        "text": clip_message(dataclasses.replace(c, lines=()).describe()),
    }


def _shardings(compiled) -> tuple[dict[str, list[str]], int]:
    """The compiled program's input and output shardings, as text, and the number of
    devices it runs on."""
    import jax

    found: dict[str, list[str]] = {"inputs": [], "outputs": []}
    devices = 1
    for key, attr in (("inputs", "input_shardings"), ("outputs", "output_shardings")):
        try:
            leaves = jax.tree_util.tree_leaves(getattr(compiled, attr))
        except Exception:  # noqa: BLE001 - a backend or release without them
            continue
        for s in leaves:
            found[key].append(str(s))
            devices = max(devices, len(getattr(s, "device_set", ()) or ()))
    return found, devices


def costs_json(
    compiled,
    cost: CostByLine,
    peak: PeakMemory | None,
    collectives: Sequence[Collective],
    files: Sequence[str],
    *,
    full: bool = False,
    unavailable: Mapping[str, str] | None = None,
    callers: Collection[tuple[str, int]] = (),
) -> dict[str, Any]:
    """The report's ``costs`` data (see the module's text) of ``compiled`` (an
    Olympus or JAX ``Compiled``): its cost by line, its peak (``None`` when not
    known: ``unavailable['peak']`` says why) and its collectives; ``files`` are the
    report's source files' paths, which rows point into; ``callers`` the
    ``(path, line)`` the staged function was called from, left out of the lines
    of a collective."""
    shardings, devices = _shardings(compiled)
    notes = list(cost.notes)
    if peak is not None and not full and len(peak.buffers) > MAX_BUFFERS:
        notes.append(
            f"the {MAX_BUFFERS} biggest of the {len(peak.buffers)} buffers live "
            f"at the peak are listed (a full report lists them all)"
        )
    if devices > 1:
        notes.append(
            f"the program runs on {devices} devices; every figure is one "
            f"device's (each runs the same partitioned program)"
        )
    return {
        "devices": devices,
        "totals": {k: float(cost.totals.get(k, 0.0)) for _, _, k in QUANTITIES if k},
        "peak": None
        if peak is None
        else {
            "bytes": peak.peak_bytes,
            "at": peak.at,
            "memory_analysis_peak": peak.memory_analysis_peak,
            "difference": peak.difference(),
            "by_kind": peak.by_kind(),
        },
        "lines": _rows(cost, peak, files),
        "buffers": [] if peak is None else _buffers(peak, files, full),
        "collectives": [_collective(c, files, frozenset(callers)) for c in collectives],
        "shardings": shardings,
        "notes": group_notes(
            notes, MAX_NOTES, more="olympus.line_costs.cost_by_line(compiled).notes lists them all"
        ),
        "unavailable": dict(unavailable or {}),
    }


#: What the kernel's report offers for each list :func:`cap_costs` may cut.
_WHOLE = {
    "lines": ("source lines (those that cost least)", "report.cost_by_line()"),
    "buffers": ("buffers live at the peak (the smallest)", "report.peak_buffers()"),
    "collectives": ("collectives", "report.collectives()"),
    "inputs": ("input shardings", "report.costs['shardings']"),
    "outputs": ("output shardings", "report.costs['shardings']"),
    "notes": ("notes", "report.costs['notes']"),
}


def cap_costs(data: Mapping[str, Any], budget: float) -> tuple[Mapping[str, Any], str | None]:
    """``data`` cut to about ``budget`` bytes of JSON: the costliest source lines
    first (the compiler-made and arguments rows, the totals and the peak always
    stay), the biggest buffers, the first collectives and shardings, each list cut
    in proportion, and a note (also the last of ``notes``) counting what was left
    out; the data as it is where it fits.

    >>> data = {"lines": [{"what": "line", "flops": float(k)} for k in range(100)],
    ...         "buffers": [], "collectives": [], "notes": [],
    ...         "shardings": {"inputs": [], "outputs": []}}
    >>> cut, note = cap_costs(data, 1000)
    >>> len(cut["lines"]) < 100, cut["notes"][-1] == note, "report.cost_by_line()" in note
    (True, True, True)
    """
    size = json_size(data)
    if size <= budget:
        return data, None
    shardings = data.get("shardings") or {"inputs": [], "outputs": []}
    lists: dict[str, list] = {
        "lines": [r for r in data["lines"] if r["what"] == "line"],
        "buffers": list(data["buffers"]),
        "collectives": list(data["collectives"]),
        "inputs": list(shardings["inputs"]),
        "outputs": list(shardings["outputs"]),
        "notes": list(data["notes"]),
    }
    # What stays whole (totals, peak, the compiler-made and arguments rows), and room
    # for the note said here.
    fixed = size - sum(json_size(v) for v in lists.values()) + 2 * MAX_MESSAGE // 16
    kept = share_budget(lists, max(budget - fixed, 0))
    cut = {k: lists[k][: kept[k]] for k in lists}
    left_out = [
        f"{len(lists[k]) - kept[k]:,} of {len(lists[k]):,} {what} ({where} gives each)"
        for k, (what, where) in _WHOLE.items()
        if kept[k] < len(lists[k])
    ]
    note = clip_message(
        f"costs: left out to keep this output under its size cap: {'; '.join(left_out)} "
        "in the kernel that made the report (a saved page has what is shown; the totals "
        "count everything)",
        MAX_MESSAGE // 8,
    )
    notes = group_notes(cut["notes"], MAX_NOTES - 1)  # and the note said here
    return {
        **data,
        "lines": cut["lines"] + [r for r in data["lines"] if r["what"] != "line"],
        "buffers": cut["buffers"],
        "collectives": cut["collectives"],
        "shardings": {"inputs": cut["inputs"], "outputs": cut["outputs"]},
        "notes": [*notes, note],
    }, note


# -- reading it back (the report's methods) ---------------------------------------------


def _path(files: Sequence[str], file: int | None, path: str | None) -> str | None:
    return files[file] if file is not None else path


def line_rows(data: Mapping[str, Any], files: Sequence[str]) -> list[dict[str, Any]]:
    """The rows of ``data['lines']`` as plain data a user reads: ``file`` the path (or
    the ``In [n]`` label of a notebook cell), ``None`` for the compiler-made and
    arguments rows, with each figure's share of its total."""
    peak = (data.get("peak") or {}).get("bytes") or 0
    totals = data["totals"]
    out = []
    for r in data["lines"]:
        row = {"what": r["what"], "file": _path(files, r["file"], r["path"]), "line": r["line"]}
        for key, _, total_key in QUANTITIES:
            total = totals.get(total_key, 0.0) if total_key else peak
            row[key] = r[key]
            row[f"{key}_share"] = r[key] / total if total else 0.0
        row["instructions"] = list(r["instructions"])
        row["buffers"] = list(r["buffers"])
        out.append(row)
    return out


def peak_buffers(data: Mapping[str, Any], files: Sequence[str]) -> list[dict[str, Any]]:
    """The buffers live at the peak, biggest first, each with the path of the line
    that made it (``None`` for arguments and what the compiler made)."""
    return [{**b, "file": _path(files, b["file"], b.get("path"))} for b in data["buffers"]]


def collectives_rows(data: Mapping[str, Any], files: Sequence[str]) -> list[dict[str, Any]]:
    """The collectives, each line as ``(path, line)``."""
    return [
        {
            **c,
            "lines": [(_path(files, f, None), line) for f, line in c["lines"]],
            "shardings": list(c["shardings"]),
        }
        for c in data["collectives"]
    ]


def check_costs(data: Mapping[str, Any], files: int) -> None:
    """Raises ``ValueError`` naming what is wrong when ``data`` (a bundle's ``costs``,
    past the schema) points outside the report: a file index past its ``files``
    source files."""

    def check_file(where: str, index):
        if index is not None and not 0 <= index < files:
            raise ValueError(f"{where} names source file {index}; the report has {files}")

    for k, r in enumerate(data["lines"]):
        check_file(f"costs.lines[{k}]", r["file"])
    for k, b in enumerate(data["buffers"]):
        check_file(f"costs.buffers[{k}]", b["file"])
    for k, c in enumerate(data["collectives"]):
        for f, _ in c["lines"]:
            check_file(f"costs.collectives[{k}].lines", f)
