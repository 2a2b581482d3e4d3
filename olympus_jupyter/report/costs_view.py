"""The ``costs`` stage of a report: where the compiled program's cost goes, by line.

The core answers three questions of a compiled program, from the program alone
(no run): which lines cost its flops and bytes (:mod:`olympus.line_costs`), what
is alive at its memory peak and which lines made it (:mod:`olympus.buffers`), and
which communication a sharding cost (:mod:`olympus.collectives`). This module
makes them the report's ``costs`` data, which the bundle carries and every form
shows (the JupyterLab view as a heatmap and a table, the static HTML as a table
with bars, the text form as the top lines):

- ``totals``: XLA's module totals (``Compiled.cost_analysis()``), which the rows
  add up to, except where a loop runs its body more than once: XLA counts each
  loop body once, the rows × its trip count; then ``counted_totals`` holds the
  totals so counted (what the rows add up to, and what shares are of) and the
  first of ``notes`` says why they differ;
- ``counted_by``, where the compiled program's backend gives no
  ``cost_analysis()`` (a CUDA program compiled here): what counted the figures
  instead, in a few words (XLA's HLO cost analysis applied to the program's
  optimized HLO: :mod:`olympus.gpu_costs`), the first of ``notes`` saying it in full;
- ``lines``: one row per source line that costs something (flops,
  transcendentals, bytes accessed, bytes live at the peak), then the
  compiler-made row (copies, layout changes: never dropped) and the arguments'
  row; ``file`` is an index into the report's source files, or ``null`` with the
  ``path`` of a file the report does not show; ``iterations``, on a row with
  instructions inside loops, how they are counted ("× 8 iterations", "per
  iteration (trip count unknown)");
- ``time``, in a report made for a target: each line's and module's time before
  any run (the TPU compiler's estimate of cycles, or a GPU's roofline), named, with
  each row's ``cycles`` and ``seconds`` (:mod:`.time_view`);
- ``peak``: the live-range peak, where it is reached, ``memory_analysis()``'s
  peak and how the two relate, bytes by kind of buffer; ``buffers``: the buffers
  live at the peak, biggest first;
- ``collectives``: each collective of the program, its replica groups, bytes per
  device and moved, the lines and shardings that caused it, and the arguments
  it moves (``arguments``, by pytree name) and the parameters it serves
  (``parameters``: the pytree leaves whose outputs its result feeds); ``shardings``: the compiled
  program's input and output shardings, with the pytree name of each
  (``input_names``, ``output_names``: ``params/Dense_0/kernel``,
  ``result/0/params/Dense_0/kernel``); ``devices``: how many devices run it
  (the figures are each device's: every device runs the same partitioned
  program).

An argument is named by its pytree path joined with ``/``
(:mod:`olympus.argument_names`): a buffer live at the peak that is an argument
(or an output written over a donated one) carries it as ``argument``, where XLA
labels it ``param.136``.

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
>>> data["shardings"]["input_names"], data["shardings"]["output_names"]
(['args/0', 'args/1'], ['result'])

A loop's body counts × its trip count; XLA's totals count it once:

>>> import jax
>>> scan = olympus.jit(lambda x, ws: jax.lax.scan(lambda c, w: (c @ w, None), x, ws)[0])
>>> compiled = scan.trace(np.ones((4, 4), np.float32), np.ones((8, 4, 4), np.float32)
...                       ).lower().compile()
>>> data = costs_json(compiled, cost_by_line(compiled), None, [], files=())
>>> data["totals"]["flops"] < data["counted_totals"]["flops"]
True
>>> [row["iterations"] for row in data["lines"] if row["flops"] >= 8 * 128]
['× 8 iterations']
>>> data["notes"][0].startswith("XLA's cost_analysis() counts each loop body once")
True
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Collection, Mapping, Sequence
from typing import Any

from olympus.argument_names import fallback_names, keypath_name
from olympus.buffers import PeakMemory
from olympus.collectives import Collective
from olympus.line_costs import CostByLine, loop_words
from olympus.module_paths import module_path, module_tree
from olympus.op_instructions import OpKey, keys_by_op, own_key
from olympus.provenance.sources import charged_frame

from olympus_jupyter.report import time_view
from olympus_jupyter.report.data import cost_row, file_index
from olympus_jupyter.report.data_cap import (
    MAX_MESSAGE,
    clip_message,
    group_notes,
    json_size,
    kept_prefix,
    share_budget,
)

__all__ = [
    "op_groups",
    "costs_json",
    "op_rows",
    "MAX_OP_COSTS",
    "cap_costs",
    "check_costs",
    "counted_totals",
    "line_rows",
    "module_rows",
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
#: Library lines a row lists beneath it (the schema's limit; the rest stay on the row).
MAX_VIA = 1000
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


def _labels(labels: Sequence[str]) -> list[str]:
    return list(dict.fromkeys(labels))[:MAX_LABELS]


_WHAT_ORDER = {"line": 0, "compiler-made": 1, "arguments": 2}


def _row_order(r: Mapping[str, Any]) -> tuple:
    """The order of the rows: source lines, the compiler-made row, the arguments';
    each kind by flops, then bytes, then peak (biggest first), then place."""
    return (
        _WHAT_ORDER[r["what"]],
        -r["flops"],
        -r["bytes"],
        -r["peak"],
        r["file"] if r["file"] is not None else math.inf,
        r["path"] or "",
        r["line"] or 0,
    )


def _rows(cost: CostByLine, peak: PeakMemory | None, files: Sequence[str]) -> list[dict]:
    rows: dict[tuple, dict] = {}

    def row(what, path, line):
        key = (what, path, line)
        if key not in rows:
            file, other = file_index(files, path)
            rows[key] = cost_row(what, file, other, line)
        return rows[key]

    for c in cost.lines:
        r = row("line" if c.file is not None else "compiler-made", c.file, c.line)
        if c.iterations:
            r["iterations"] = c.loop_note
        r["flops"] += c.flops
        r["transcendentals"] += c.transcendentals
        r["bytes"] += c.bytes_accessed
        r["instructions"] = _labels(r["instructions"] + list(c.instructions))
        for part in c.library[: MAX_VIA - len(r["via"])]:
            file, other = file_index(files, part.file)
            r["via"].append(
                {
                    "file": file,
                    "path": other,
                    "line": part.line,
                    "function": part.function,
                    "flops": part.flops,
                    "transcendentals": part.transcendentals,
                    "bytes": part.bytes_accessed,
                }
            )
    for b in peak.by_line() if peak is not None else ():
        r = row(b.what, b.file, b.line)
        r["peak"] += b.bytes
        r["buffers"] = _labels(r["buffers"] + list(b.labels))
    return sorted(rows.values(), key=_row_order)


def _buffers(peak: PeakMemory, files: Sequence[str], full: bool) -> list[dict]:
    out = []
    for b in peak.buffers if full else peak.buffers[:MAX_BUFFERS]:
        file, path = file_index(files, b.line[0] if b.line else None)
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
                "argument": b.argument,
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
        "lines": [[file_index(files, path)[0], line] for path, line in lines[:MAX_LIST]],
        # Said without its place: the lines above say it, as the report names files
        # (a notebook cell's path is a temporary file's, shown as In [n]).
        "shardings": [clip_message(s) for s in c.shardings[:MAX_LIST]],
        "arguments": [clip_message(s) for s in c.arguments[:MAX_LIST]],
        "parameters": [clip_message(s) for s in c.parameters[:MAX_LIST]],
        "text": clip_message(dataclasses.replace(c, lines=()).describe()),
    }


def _shardings(compiled, names: Sequence[str | None] | None = None) -> tuple[dict[str, list], int]:
    """The compiled program's input and output shardings, as text, with the pytree
    name of each (``None`` where not known), and the number of devices it runs on.
    The inputs' are ``names`` (:func:`olympus.argument_names.input_names`: the
    program's arguments in order, as it lists their shardings), else their paths
    in ``args_info``; an output's is its path in the result, ``result/...``."""
    import jax

    found: dict[str, list] = {"inputs": [], "outputs": [], "input_names": [], "output_names": []}
    devices = 1
    for key, attr in (("inputs", "input_shardings"), ("outputs", "output_shardings")):
        try:
            flat = jax.tree_util.tree_flatten_with_path(getattr(compiled, attr))[0]
        except Exception:  # noqa: BLE001 - a backend or release without them
            continue
        for path, s in flat:
            found[key].append(str(s))
            devices = max(devices, len(getattr(s, "device_set", ()) or ()))
            if key == "outputs":
                found["output_names"].append("/".join(["result", keypath_name(path)]).rstrip("/"))
    count = len(found["inputs"])
    if names is not None and len(names) == count:
        found["input_names"] = list(names)
    else:
        kept = fallback_names(compiled)
        found["input_names"] = kept if len(kept) == count else [None] * count
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
    input_names: Sequence[str | None] | None = None,
    ops: Mapping[str, Mapping[str, float]] | None = None,
) -> dict[str, Any]:
    """The report's ``costs`` data (see the module's text) of ``compiled`` (an
    Olympus or JAX ``Compiled``): its cost by line, its peak (``None`` when not
    known: ``unavailable['peak']`` says why) and its collectives; ``files`` are the
    report's source files' paths, which rows point into; ``callers`` the
    ``(path, line)`` the staged function was called from, left out of the lines
    of a collective; ``input_names`` the pytree name of each argument the program
    takes, in order (:func:`olympus.argument_names.input_names`), for its input
    shardings; ``ops`` what each op of olympuspr and StableHLO costs, by op id
    (:func:`olympus.op_costs.op_costs`)."""
    shardings, devices = _shardings(compiled, input_names)
    loops = cost.loops_note()
    own = list(cost.notes)
    # What counted the figures (a CUDA program's: the first of its notes) comes first.
    first = [own.pop(0)] if cost.counted_by and own else []
    notes = first + ([loops] if loops else []) + own
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
    op_list = None
    if ops is not None:
        op_list, costing = op_rows(ops, None if full else MAX_OP_COSTS)
        if len(op_list) < costing:
            notes.append(
                f"the costs of the {MAX_OP_COSTS:,} costliest of {costing:,} ops are kept "
                f"(report.cost_share_of_op(op) gives each; a full report keeps them all)"
            )
    counted = (
        {
            "counted_totals": {
                k: float(cost.counted_totals.get(k, 0.0)) for _, _, k in QUANTITIES if k
            }
        }
        if cost.loop_extra
        else {}
    )
    return {
        "devices": devices,
        "totals": {k: float(cost.totals.get(k, 0.0)) for _, _, k in QUANTITIES if k},
        **counted,
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
        "modules": [
            _module(path, a, cost.module_iterations) for path, a in sorted(cost.modules.items())
        ],
        "buffers": [] if peak is None else _buffers(peak, files, full),
        "collectives": [_collective(c, files, frozenset(callers)) for c in collectives],
        "shardings": shardings,
        "notes": group_notes(
            notes, MAX_NOTES, more="olympus.line_costs.cost_by_line(compiled).notes lists them all"
        ),
        "unavailable": dict(unavailable or {}),
        **({"ops": op_list} if op_list is not None else {}),
        **({"counted_by": cost.counted_by} if cost.counted_by else {}),
    }


#: The ops whose costs a report carries (``ops``), the costliest, unless ``full``.
MAX_OP_COSTS = 5000


def op_rows(
    ops: Mapping[str, Mapping[str, float]], limit: int | None = None
) -> tuple[list[dict[str, Any]], int]:
    """The ``ops`` of the data: each op that costs something, costliest first (the
    first ``limit`` of them, where given), and how many ops cost something. Ops
    alike share their figures (one mapping): each figure is sorted once.

    >>> op_rows({"olympuspr:0": {"flops": 8.0, "transcendentals": 0.0, "bytes accessed": 4.0},
    ...          "olympuspr:1": {"flops": 0.0, "transcendentals": 0.0, "bytes accessed": 0.0}})
    ([{'op': 'olympuspr:0', 'flops': 8.0, 'transcendentals': 0.0, 'bytes': 4.0}], 1)
    """
    shared: dict[int, tuple[Mapping[str, float], list[str]]] = {}
    for ident, a in ops.items():
        held = shared.get(id(a))  # not setdefault: no pair made for every op
        if held is None:
            shared[id(a)] = (a, [ident])
        else:
            held[1].append(ident)
    alike: dict[tuple[float, float, float], list[str]] = {}
    for a, idents in shared.values():
        figures = (
            float(a.get("flops", 0.0)),
            float(a.get("transcendentals", 0.0)),
            float(a.get("bytes accessed", 0.0)),
        )
        if any(figures):
            alike.setdefault(figures, []).extend(idents)
    rows: list[dict[str, Any]] = []
    costing = sum(map(len, alike.values()))
    for flops, transcendentals, nbytes in sorted(alike, key=lambda f: (-f[0], -f[2], -f[1])):
        for ident in sorted(alike[flops, transcendentals, nbytes]):
            if limit is not None and len(rows) >= limit:
                return rows, costing
            rows.append(
                {"op": ident, "flops": flops, "transcendentals": transcendentals, "bytes": nbytes}
            )
    return rows, costing


#: What the kernel's report offers for each list :func:`cap_costs` may cut.
_WHOLE = {
    "lines": ("source lines (those that cost least)", "report.cost_by_line()"),
    "buffers": ("buffers live at the peak (the smallest)", "report.peak_buffers()"),
    "collectives": ("collectives", "report.collectives()"),
    "modules": ("modules (those that cost least)", "report.cost_by_module()"),
    "inputs": ("input shardings", "report.costs['shardings']"),
    "outputs": ("output shardings", "report.costs['shardings']"),
    "notes": ("notes", "report.costs['notes']"),
}


#: Room kept for the note that says the ops were cut (a few hundred characters).
_NOTE_ROOM = 1024


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
    ops = data.get("ops")
    if ops:  # the ops' costs go first: the kernel's report gives each
        rest = {**data, "ops": []}
        spare = budget - json_size(rest) - _NOTE_ROOM
        if spare > 0:
            kept_ops = kept_prefix(ops, spare)
            note = clip_message(
                f"costs: left out to keep this output under its size cap: the costs of "
                f"{len(ops) - kept_ops:,} of {len(ops):,} ops (those that cost least; "
                f"report.cost_share_of_op(op) gives each in the kernel that made the report)",
                MAX_MESSAGE // 8,
            )
            notes = group_notes(list(data["notes"]), MAX_NOTES - 1)
            return {**data, "ops": ops[:kept_ops], "notes": [*notes, note]}, note
        cut, said = cap_costs(rest, budget)
        also = (
            f"the costs of {len(ops):,} ops are left out too "
            f"(report.cost_share_of_op(op) gives each)"
        )
        if said is None:
            note = clip_message(
                f"costs: left out to keep this output under its size cap: {also}", MAX_MESSAGE // 8
            )
            notes = group_notes(list(cut["notes"]), MAX_NOTES - 1)
        else:
            note = clip_message(f"{said}; {also}", MAX_MESSAGE // 8)
            notes = list(cut["notes"][:-1])
        return {**cut, "notes": [*notes, note]}, note
    shardings = data.get("shardings") or {"inputs": [], "outputs": []}
    lists: dict[str, list] = {
        "lines": [r for r in data["lines"] if r["what"] == "line"],
        "buffers": list(data["buffers"]),
        "collectives": list(data["collectives"]),
        "modules": sorted(data.get("modules") or (), key=lambda m: (-m["flops"], -m["bytes"])),
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
        **({"modules": cut["modules"]} if "modules" in data else {}),
        "shardings": {
            **shardings,
            "inputs": cut["inputs"],
            "outputs": cut["outputs"],
            **{
                f"{k}_names": list(shardings[f"{k}_names"][: len(cut[k + "s"])])
                for k in ("input", "output")
                if f"{k}_names" in shardings
            },
        },
        "notes": [*notes, note],
    }, note


# -- reading it back (the report's methods) ---------------------------------------------


def _path(files: Sequence[str], file: int | None, path: str | None) -> str | None:
    return files[file] if file is not None else path


def counted_totals(data: Mapping[str, Any]) -> Mapping[str, float]:
    """What the rows of ``data`` (a report's ``costs``) add up to: XLA's totals, or
    where loops run their bodies more than once, the totals counted so."""
    return data.get("counted_totals") or data["totals"]


def line_rows(
    data: Mapping[str, Any], files: Sequence[str], frames: str = "user"
) -> list[dict[str, Any]]:
    """The rows of ``data['lines']`` as plain data a user reads: ``file`` the path (or
    the ``In [n]`` label of a notebook cell), ``None`` for the compiler-made and
    arguments rows, with each figure's share of its total (the counted totals,
    loops × their trip counts: :func:`counted_totals`) and ``iterations``, how the
    row counts loops ("× 8 iterations"; ``""`` outside any loop).

    ``frames="user"`` (the default): a row is a line of the user's own code, and
    ``via`` lists the library lines beneath it that made part of its cost (flax's
    ``Dense``...), each with its figures. ``frames="innermost"``: each instruction's
    cost on its innermost line, a library's or not (the rows before Olympus
    charged the user's code); the peak's bytes stay on the user's lines.
    """
    if frames not in ("user", "innermost"):
        raise ValueError(f"frames={frames!r}: choose 'user' (the default) or 'innermost'.")
    peak = (data.get("peak") or {}).get("bytes") or 0
    totals = counted_totals(data)
    source = data["lines"] if frames == "user" else _innermost_rows(data["lines"])
    out = []
    for r in source:
        row = {"what": r["what"], "file": _path(files, r["file"], r["path"]), "line": r["line"]}
        for key, _, total_key in QUANTITIES:
            total = totals.get(total_key, 0.0) if total_key else peak
            row[key] = r[key]
            row[f"{key}_share"] = r[key] / total if total else 0.0
        row["iterations"] = r.get("iterations", "")
        row["instructions"] = list(r["instructions"])
        row["buffers"] = list(r["buffers"])
        row["via"] = [
            {
                "file": _path(files, v["file"], v["path"]),
                "line": v["line"],
                "function": v["function"],
                "flops": v["flops"],
                "transcendentals": v["transcendentals"],
                "bytes": v["bytes"],
                **({k: v.get(k) for k in time_view.TIME_KEYS} if "time" in data else {}),
            }
            for v in r.get("via", ())
        ]
        row.update(time_view.row_fields(data, r))  # a target's: the time column
        out.append(row)
    time_view.shares(data, out, summed=frames != "user")
    return out


def _innermost_rows(rows: Sequence[Mapping[str, Any]]) -> list[dict[str, Any]]:
    """The rows with each library part moved to its own line (rows of the same line
    merged), what is left on a user line staying there; biggest flops first."""
    out: dict[tuple, dict[str, Any]] = {}

    def row(what, file, path, line) -> dict[str, Any]:
        key = (what, file, path, line)
        if key not in out:
            out[key] = cost_row(what, file, path, line)
        return out[key]

    for r in rows:
        own = row(r["what"], r["file"], r["path"], r["line"])
        left = {k: r[k] - sum(v[k] for v in r.get("via", ())) for k in _MOVED}
        for k in _MOVED:
            own[k] += max(left[k], 0.0)
        for k in time_view.TIME_KEYS:  # a target's time moves as the figures do
            if r.get(k) is not None:
                inside = sum(v.get(k) or 0.0 for v in r.get("via", ()))
                own[k] = own.get(k, 0.0) + max(r[k] - inside, 0.0)
        own["peak"] += r["peak"]
        if r.get("iterations"):
            own["iterations"] = r["iterations"]
        own["instructions"] = _labels(own["instructions"] + list(r["instructions"]))
        own["buffers"] = _labels(own["buffers"] + list(r["buffers"]))
        for v in r.get("via", ()):
            lib = row("line", v["file"], v["path"], v["line"])
            for k in _MOVED:
                lib[k] += v[k]
            for k in time_view.TIME_KEYS:
                if v.get(k) is not None:
                    lib[k] = lib.get(k, 0.0) + v[k]
    kept = [
        r for r in out.values() if any(r.get(k) for k in (*_MOVED, "peak", *time_view.TIME_KEYS))
    ]
    return sorted(kept, key=_row_order)


_MOVED = ("flops", "transcendentals", "bytes")


def _module(path: str, figures: Mapping[str, float], looped: Mapping) -> dict[str, Any]:
    """A module path's own figures as data, with how its loops are counted where
    some of its instructions are in one (``iterations``, as a line's)."""
    out: dict[str, Any] = {
        "path": path,
        "flops": float(figures.get("flops", 0.0)),
        "transcendentals": float(figures.get("transcendentals", 0.0)),
        "bytes": float(figures.get("bytes accessed", 0.0)),
    }
    if looped.get(path):
        out["iterations"] = loop_words(looped[path])
    return out


def loop_note(notes: Sequence[str]) -> str:
    """How a module tree node counts loops, from its modules' ``iterations`` (``""``
    for a module outside loops): each distinct part once, ``once`` first where
    some are outside any loop and others in one; ``""`` where none is in a loop.

    >>> loop_note(["× 8 iterations", "", "× 8 iterations"])
    'once + × 8 iterations'
    >>> loop_note(["", ""]), loop_note(["× 8 iterations", "× 2 iterations"])
    ('', '× 8 iterations + × 2 iterations')
    """
    parts = [part for note in notes for part in (note.split(" + ") if note else ["once"])]
    distinct = list(dict.fromkeys(parts))
    if distinct in ([], ["once"]):
        return ""
    return " + ".join(sorted(distinct, key=lambda p: p != "once"))


def module_rows(
    data: Mapping[str, Any], provenance=None, depth: int | None = None
) -> list[dict[str, Any]]:
    """The cost by module: one dict per node of the module tree (``path`` such as
    ``Model/Block_0/Dense_0``, ``""`` for what no module made; ``depth``; ``name``),
    in depth-first order, each with its subtree's ``flops``, ``transcendentals`` and
    ``bytes`` and their shares of XLA's totals, and where the report's model names
    the instructions, ``peak`` (bytes live at the peak its instructions made) and
    ``collectives`` (how many), and ``iterations``, how its instructions inside
    loops are counted (:func:`loop_note`: "× 8 iterations" for a layer scanned 8
    times, whose figures are all 8 iterations'; ``""`` outside loops). The top
    level adds up to the totals. ``depth``: the nodes down to that depth only (0:
    the top level)."""
    leaves: dict[str, dict[str, float]] = {}
    # Each node's modules' loop notes: a module's goes to its node and every one above.
    looped: dict[str, list[str]] = {}
    for m in data.get("modules", ()):
        leaf = leaves.setdefault(
            m["path"], dict.fromkeys(("flops", "transcendentals", "bytes"), 0.0)
        )
        for k in ("flops", "transcendentals", "bytes"):
            leaf[k] += m[k]
        for k in time_view.TIME_KEYS:  # a target's time
            if m.get(k) is not None:
                leaf[k] = leaf.get(k, 0.0) + m[k]
        parts = m["path"].split("/") if m["path"] else [""]
        for upto in range(1, len(parts) + 1):
            looped.setdefault("/".join(parts[:upto]), []).append(m.get("iterations", ""))
    stage = (
        provenance.stages.get("compiled")
        if provenance is not None and hasattr(provenance, "stages")
        else None
    )
    if stage is not None:
        # By name stack, as the view computes them from the compiled ops
        # (src/moduletree.ts): an nnx model's buffers and collectives, which have
        # no scope, stay at the top level ("") while its flops are by layer.
        paths = {op.label: module_path(op.name_stack) for op in stage.ops if op.label}
        for b in data.get("buffers", ()):
            if b.get("kind") == "temporary" or b.get("kind") == "output":
                path = paths.get(b["label"])
                if path is not None:
                    leaf = leaves.setdefault(path, {})
                    leaf["peak"] = leaf.get("peak", 0.0) + b.get("counted", b.get("size", 0))
        for c in data.get("collectives", ()):
            path = paths.get(c["label"], module_path(c.get("op_name") or ""))
            leaf = leaves.setdefault(path, {})
            leaf["collectives"] = leaf.get("collectives", 0.0) + 1
    totals = data.get("counted_totals") or data["totals"]  # what the leaves add up to
    peak = (data.get("peak") or {}).get("bytes") or 0
    out = []
    for node in module_tree(leaves):
        if depth is not None and node.depth > depth:
            continue
        row: dict[str, Any] = {"path": node.path, "name": node.name, "depth": node.depth}
        for key, _, total_key in QUANTITIES:
            value = node.figures.get(key, 0.0)
            total = totals.get(total_key, 0.0) if total_key else peak
            row[key] = int(value) if key == "peak" else value
            row[f"{key}_share"] = value / total if total else 0.0
        row["collectives"] = int(node.figures.get("collectives", 0))
        row["iterations"] = loop_note(looped.get(node.path, ()))
        row.update(time_view.module_fields(data, node.figures))
        out.append(row)
    time_view.shares(data, [r for r in out if r["depth"] == 0], out, summed=True)
    return out


def op_groups(
    data: Mapping[str, Any], provenance, limit: int, stage: str = "olympuspr"
) -> list[dict[str, Any]]:
    """The ``limit`` costliest ops of ``stage`` in the data's ``ops``, costliest first,
    named from the report's model (``[]`` without one): each with ``ops`` (their
    ids: ops alike, as a Python loop makes them, share their instructions and so
    their figures, :mod:`olympus.op_instructions`, and make one row), ``name`` (the
    primitive), ``path`` and ``line`` (the user's line it was charged to, as the
    rows by line are: ``None`` for none), and the ``flops``, ``transcendentals`` and
    ``bytes`` of their instructions (alike ops': all of theirs) with their shares
    of the totals the rows by line add up to.

    >>> import olympus, olympus.numpy as jnp, numpy as np
    >>> from olympus_jupyter import inspect
    >>> def f(x):
    ...     for _ in range(3):
    ...         x = jnp.sin(x)
    ...     return x @ x
    >>> report = inspect(f, np.ones((4, 4), np.float32), costs=True, cache=False)
    >>> [(g["name"], len(g["ops"]), round(g["flops_share"], 2))
    ...  for g in op_groups(report.costs, report.provenance, 5)]
    [('dot_general', 1, 1.0), ('sin', 3, 0.0)]
    """
    stages = getattr(provenance, "stages", None)
    if not stages or stage not in stages:
        return []
    tables = provenance.source_tables()
    ops = stages[stage].ops
    totals = counted_totals(data)
    stacks: dict = {}
    groups: dict[Any, dict[str, Any]] = {}
    last = None
    for row in data.get("ops") or ():
        kind, _, index = str(row.get("op", "")).rpartition(":")
        if kind != stage or not index.isdigit() or int(index) >= len(ops):
            continue
        figures = tuple(float(row.get(k, 0.0)) for k in ("flops", "transcendentals", "bytes"))
        if len(groups) >= limit and figures != last:
            break  # alike ops have the same figures: they come one after another
        last = figures
        op = ops[int(index)]
        alike = own_key(tables, op, stacks=stacks)  # None: no location, alike to none
        key = (alike if alike is not None else op.id, figures)
        if key in groups or len(groups) >= limit:
            continue
        frame = charged_frame(tables, op.location)
        path = None
        if frame is not None:  # as the report names the file (a cell: "In [3]")
            held = provenance.files
            path = held[frame.file].path if frame.file < len(held) else tables.files[frame.file]
        group = groups[key] = {
            "ops": [op.id],
            "name": op.name,
            "path": path,
            "line": None if frame is None else frame.line,
        }
        for k, v in zip(("flops", "transcendentals", "bytes"), figures):
            total = float(totals.get("bytes accessed" if k == "bytes" else k, 0.0))
            group[k] = v
            group[f"{k}_share"] = v / total if total else 0.0
    # Every op alike, from the model: the data may keep only the costliest ops.
    keys = [k for k, _ in groups if isinstance(k, OpKey)]
    if keys:
        found = keys_by_op(provenance, (stage,), among=[(k.name, k.stack) for k in keys])
        for (k, _), group in groups.items():
            if isinstance(k, OpKey) and found.owners_of(k):
                group["ops"] = list(found.owners_of(k))
    return list(groups.values())


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
        for v in r.get("via", ()):
            check_file(f"costs.lines[{k}].via", v["file"])
    for k, b in enumerate(data["buffers"]):
        check_file(f"costs.buffers[{k}]", b["file"])
    for k, c in enumerate(data["collectives"]):
        for f, _ in c["lines"]:
            check_file(f"costs.collectives[{k}].lines", f)
