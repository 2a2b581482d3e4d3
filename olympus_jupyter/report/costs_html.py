"""The ``costs`` stage in the static HTML: where the compiled program's flops, bytes
and peak memory go, by source line, and the collectives a sharding costs.

Readable with no script: one table with a row per source line that costs
something (then the compiler-made and the arguments' rows, and XLA's totals,
which the rows add up to), each figure as text with its unit and its share of the
total, a bar beside it for the eye (hidden from screen readers: they read the
figures); then the peak (how big, where reached, how it relates to
``memory_analysis()``, by kind of buffer), the buffers live at it, the
collectives (or why there are none), the compiled program's shardings, and the
stage's notes and the parts that could not be made. Every figure is one
device's. The data is :mod:`.costs_view`'s; units come from :mod:`.cost_names`,
as in the text form.

>>> import numpy as np
>>> from olympus_jupyter import inspect
>>> from olympus_jupyter.report.markup import concat
>>> report = inspect(lambda x, w: x @ w, np.ones((4, 8), np.float32),
...                  np.ones((8, 16), np.float32), costs=True, cache=False)
>>> html = str(concat(costs_section(report, "ol1", full=False)))
>>> "1.0 kFLOP" in html and "XLA&#x27;s totals" not in html and "XLA's totals" in html
True
"""

from __future__ import annotations

import math
import os
from collections.abc import Mapping, Sequence
from typing import Any

from olympus import stage_registry

from olympus_jupyter.report import costs_view, time_view
from olympus_jupyter.report.cost_names import format_bytes, format_flops, format_share
from olympus_jupyter.report.markup import Markup, h, head_row
from olympus_jupyter.report.sections import section, unavailable

__all__ = ["costs_section", "where_label", "MAX_BUFFER_ROWS_OPEN"]

#: A list of buffers live at the peak longer than this starts folded.
MAX_BUFFER_ROWS_OPEN = 20

#: The table's figures: (key in a row, column heading, key in ``totals`` or None for
#: the peak, formatter).
_COLUMNS = (
    ("flops", "flops", "flops", format_flops),
    ("transcendentals", "transcendentals", "transcendentals", lambda v: format_flops(v, "ops")),
    ("bytes", "bytes accessed", "bytes accessed", format_bytes),
    ("peak", "bytes live at the peak", None, format_bytes),
)

_WHAT = {
    "compiler-made": (
        "compiler-made",
        "what the compiler added that no source line asked for: copies, "
        "layout changes, the program's own bookkeeping",
    ),
    "arguments": ("arguments", "the function's inputs, live from the start"),
}


def _number(value: Any) -> float:
    """A figure of the data as a float (0 for what is not a finite number)."""
    try:
        v = float(value)
    except (TypeError, ValueError):
        return 0.0
    return v if math.isfinite(v) else 0.0


def _files(report) -> list[str]:
    model = report.provenance
    return [f.path for f in model.files] if model is not None else []


def where_label(
    files: Sequence[str], file: int | None, path: str | None, line: int | None
) -> tuple[str, str]:
    """``(short, long)`` names of a source line: ``'m.py:12'`` and the full path with
    its line (``'In [3]:2'`` for a notebook cell's line), or ``('', '')``.

    >>> where_label(["/tmp/m.py"], 0, None, 12)
    ('m.py:12', '/tmp/m.py:12')
    >>> where_label([], None, "/lib/other.py", 3)
    ('other.py:3', '/lib/other.py:3')
    >>> where_label(["In [3]"], 0, None, 2)
    ('In [3]:2', 'In [3]:2')
    """
    full = None
    if isinstance(file, int) and 0 <= file < len(files):
        full = files[file]
    elif path is not None:
        full = str(path)
    if full is None:
        return ("", "") if line is None else (f"line {line}", f"line {line}")
    suffix = "" if line is None else f":{line}"
    return (os.path.basename(full) or full) + suffix, full + suffix


def _source_text(report, file, line) -> str:
    model = report.provenance
    if (
        model is None
        or not isinstance(file, int)
        or not 0 <= file < len(model.files)
        or not isinstance(line, int)
    ):
        return ""
    try:
        return (model.files[file].line(line) or "").strip()
    except Exception:  # noqa: BLE001 - a source that cannot be read shows no code
        return ""


def _figure(value: float, total: float, fmt) -> Markup:
    """A figure as text with its share of ``total``, and a bar (hidden from screen
    readers) for the eye."""
    share = value / total if total else 0.0
    width = max(0.0, min(100.0, share * 100))
    bar = h(
        "span",
        {"class": "ol-cbar", "aria-hidden": "true"},
        h("span", {"style": f"width:{width:.1f}%"}),
    )
    return h(
        "td",
        {"class": "ol-cfig"},
        h("span", {"class": "ol-cv"}, fmt(value)),
        h("span", {"class": "ol-cs"}, format_share(share) if total else ""),
        bar,
    )


def _totals(data, key: str = "totals") -> dict[str, float]:
    """The figures of ``data[key]`` (XLA's ``totals``, or the ``counted_totals``
    with loops × their trip counts), the peak's bytes beside them."""
    totals = data.get(key) or {}
    peak = data.get("peak") or {}
    return {
        key: _number(totals.get(total_key) if total_key else peak.get("bytes"))
        for key, _, total_key, _ in _COLUMNS
    }


#: Library lines shown beneath a row of the static table (all are in the data).
MAX_VIA_SHOWN = 3


def _via_rows(report, via, files, totals, data=None) -> list:
    """The library lines beneath a user's line: what part of its cost each made."""
    out = []
    for v in via[:MAX_VIA_SHOWN]:
        short, long = where_label(files, v.get("file"), v.get("path"), v.get("line"))
        fn = v.get("function") or ""
        code = _source_text(report, v.get("file"), v.get("line"))
        out.append(
            h(
                "tr",
                {"class": "ol-cvia"},
                h(
                    "th",
                    {"title": f"inside a library: {long}" + (f" ({fn})" if fn else "")},
                    "\u21b3 ",
                    short,
                ),
                h("td", {"class": "ol-ccode"}, h("code", None, code) if code else None),
                [
                    _figure(_number(v.get(key)), totals[key], fmt)
                    if key != "peak"
                    else h("td", {"class": "ol-cfig"})
                    for key, _, _, fmt in _COLUMNS
                ],
                _time_cell(data or {}, v),
            )
        )
    if len(via) > MAX_VIA_SHOWN:
        out.append(
            h(
                "tr",
                {"class": "ol-cvia"},
                h(
                    "th",
                    {"colspan": str(2 + len(_COLUMNS) + len(_time_head(data or {})))},
                    f"\u21b3 and {len(via) - MAX_VIA_SHOWN} more library lines: "
                    "report.cost_by_line() lists them in 'via'",
                ),
            )
        )
    return out


def _time_head(data) -> list:
    """The time column's heading, its title naming the figure (none without time)."""
    time = data.get("time")
    if not time:
        return []
    return [
        h("th", {"title": str(time.get("what") or ""), "class": "ol-ctime"}, str(time["label"]))
    ]


def _time_cell(data, row, whole: float | None = None) -> list:
    """A row's time with its share of ``whole`` (default: what the rows by line add
    up to) and a bar, as every figure (none without time)."""
    time = data.get("time")
    if not time:
        return []
    total = time_view.total(data) if whole is None else whole
    words = time_view.time_words(time, row)
    return [_figure(time_view.time_value(time, row), total, lambda _v: words)]


def _time_foot(data) -> list:
    """The time the rows add up to, under the table's totals (none without time)."""
    time = data.get("time")
    if not time:
        return []
    whole = {"cycles": time.get("cycles"), "seconds": time.get("seconds")}
    return [
        h(
            "tr",
            {"class": "ol-ctotal ol-ctime"},
            h("th", {"title": str(time.get("what") or "")}, "time, in all"),
            [h("td", None) for _ in range(1 + len(_COLUMNS))],
            h(
                "td",
                {"class": "ol-cfig"},
                h("span", {"class": "ol-cv"}, time_view.time_words(time, whole)),
                h("span", {"class": "ol-cs"}, "100%" if time_view.total(data) else ""),
            ),
        )
    ]


def _time_intro(data) -> list:
    """What the time column is, said before the table (none without time)."""
    time = data.get("time")
    if not time:
        return []
    return [
        h(
            "p",
            {"class": "note ol-ctime-what"},
            f"{time['label'][:1].upper()}{time['label'][1:]}: {time.get('what', '')}.",
            [[" ", h("span", None, f"{n[:1].upper()}{n[1:]}.")] for n in time.get("notes") or ()],
        )
    ]


def _line_table(report, data, files) -> list:
    xla = _totals(data)
    # Shares are of what the rows add up to: loop bodies × their trip counts.
    counted = data.get("counted_totals")
    totals = _totals(data, "counted_totals") if counted else xla
    rows = []
    for r in data.get("lines") or ():
        what = r.get("what")
        if what in _WHAT:
            label, title = _WHAT[what]
            first = h("th", {"title": title}, label)
            code = ""
        else:
            short, long = where_label(files, r.get("file"), r.get("path"), r.get("line"))
            loops = r.get("iterations")
            first = h(
                "th",
                {"title": long},
                short,
                h("span", {"class": "ol-citer"}, " ", str(loops)) if loops else None,
            )
            code = _source_text(report, r.get("file"), r.get("line"))
        rows.append(
            h(
                "tr",
                {"class": f"ol-c-{what}" if what in _WHAT else None},
                first,
                h("td", {"class": "ol-ccode"}, h("code", None, code) if code else None),
                [_figure(_number(r.get(key)), totals[key], fmt) for key, _, _, fmt in _COLUMNS],
                _time_cell(data, r),
            )
        )
        rows.extend(_via_rows(report, r.get("via") or (), files, totals, data))

    def total_cells(figures, shares: bool):
        return [
            h(
                "td",
                {"class": "ol-cfig"},
                h("span", {"class": "ol-cv"}, fmt(figures[key])),
                h("span", {"class": "ol-cs"}, "100%" if shares and figures[key] else ""),
            )
            for key, _, _, fmt in _COLUMNS
        ]

    counted_by = data.get("counted_by")
    whose = f"{counted_by}:" if counted_by else "Compiled.cost_analysis() of"
    foot = [
        h(
            "tr",
            {"class": "ol-ctotal"},
            h(
                "th",
                {
                    "title": f"{whose} the whole program (each loop body counted once); "
                    "the peak is the live-range peak below"
                },
                "XLA's totals",
            ),
            h("td", None),
            total_cells(xla, not counted),
        )
    ]
    if counted:
        foot.append(
            h(
                "tr",
                {"class": "ol-ctotal ol-ccounted"},
                h(
                    "th",
                    {
                        "title": "XLA's totals with each loop body counted × its trip "
                        "count: what the rows add up to, and what shares are of"
                    },
                    "counted (loops × trip counts)",
                ),
                h("td", None),
                total_cells(totals, True),
            )
        )
    foot.extend(_time_foot(data))
    head = h(
        "thead",
        None,
        h(
            "tr",
            None,
            h("th", None, "line"),
            h("th", None, "code"),
            [h("th", None, label) for _, label, _, _ in _COLUMNS],
            _time_head(data),
        ),
    )
    table = h("table", {"class": "tab ol-costs ol-clines"}, head, h("tbody", None, rows, foot))
    out: list = [table if rows else h("p", {"class": "note"}, "No line costs anything.")]
    sums = {
        key: sum(_number(r.get(key)) for r in data.get("lines") or ()) for key, _, _, _ in _COLUMNS
    }
    off = [
        label
        for key, label, _, _ in _COLUMNS
        if not math.isclose(sums[key], totals[key], rel_tol=1e-6, abs_tol=0.5)
        and (key != "peak" or data.get("peak"))
    ]
    if off:
        out.append(
            h(
                "p",
                {"class": "note"},
                "The rows do not add up to the totals for: ",
                ", ".join(off),
                ".",
            )
        )
    return out


def _peak(data, files) -> list:
    peak = data.get("peak")
    if not peak:
        reason = (data.get("unavailable") or {}).get("peak", "not known")
        return [
            h("h4", None, "The peak"),
            h("p", {"class": "unavailable"}, f"Not available: {reason}."),
        ]
    total = _number(peak.get("bytes"))
    at = peak.get("at")
    parts = [f"{format_bytes(total)} ({total:,.0f} B) live at once at the peak"]
    sentence = [
        h("p", None, parts, ", reached at ", h("code", None, str(at)), ".")
        if at is not None
        else h("p", None, parts, ".")
    ]
    ma = peak.get("memory_analysis_peak")
    if ma is not None:
        sentence.append(
            h(
                "p",
                None,
                "memory_analysis() peak: ",
                f"{format_bytes(_number(ma))} ({_number(ma):,.0f} B).",
            )
        )
    if peak.get("difference"):
        sentence.append(h("p", {"class": "note"}, str(peak["difference"])))
    by_kind = peak.get("by_kind") or {}
    kinds = [
        h("tr", None, h("th", None, str(kind)), _figure(_number(v), total, format_bytes))
        for kind, v in sorted(by_kind.items(), key=lambda kv: -_number(kv[1]))
    ]
    table = (
        h(
            "table",
            {"class": "tab ol-costs"},
            h(
                "thead",
                None,
                h("tr", None, h("th", None, "kind of buffer"), h("th", None, "bytes at the peak")),
            ),
            h("tbody", None, kinds),
        )
        if kinds
        else None
    )
    return [h("h4", None, "The peak"), sentence, table, _buffers(data, files)]


def _buffers(data, files) -> list:
    buffers = data.get("buffers") or []
    if not buffers:
        return []
    rows = []
    for b in buffers:
        short, long = where_label(files, b.get("file"), b.get("path"), b.get("line"))
        label = str(b.get("label"))
        if b.get("index") not in (None, "{}", ""):
            label += f" {b['index']}"
        kind = str(b.get("kind"))
        argument = b.get("argument")
        if b.get("aliased_argument") is not None:
            kind += f" (reuses argument {b['aliased_argument']}"
            kind += f": {argument})" if argument else ")"
        # An argument by its pytree name, XLA's label (param.136) beside it.
        name = (
            [h("code", None, str(argument)), " ", h("span", {"class": "ol-clabel"}, label)]
            if argument and b.get("kind") == "argument"
            else h("code", None, label)
        )
        rows.append(
            h(
                "tr",
                None,
                h("th", None, name),
                h("td", None, kind),
                h("td", None, h("code", None, str(b.get("shape") or ""))),
                h("td", None, format_bytes(_number(b.get("size")))),
                h("td", {"title": long or None}, short or "—"),
            )
        )
    head = head_row(("buffer", "kind", "shape", "size", "line"))
    cap = [
        h("p", {"class": "cap"}, note)
        for note in data.get("notes") or ()
        if isinstance(note, str) and "buffers live at the peak are listed" in note
    ]
    return [
        h(
            "details",
            {"class": "ol-cfold", "open": len(rows) <= MAX_BUFFER_ROWS_OPEN},
            h("summary", None, f"Buffers live at the peak ({len(rows):,})"),
            h("table", {"class": "tab ol-costs ol-cbuf"}, head, h("tbody", None, rows)),
            cap,
        )
    ]


def _collectives(data, files) -> list:
    found = data.get("collectives") or []
    devices = data.get("devices") or 1
    title = h("h4", None, "Collectives")
    if not found:
        why = (
            "The program runs on one device: it communicates with no other."
            if devices <= 1
            else f"None: the compiler inserted no communication between the {devices} "
            f"devices for these shardings, and the program asks for none."
        )
        return [title, h("p", {"class": "note"}, why)]
    rows = []
    for c in found:
        lines = [where_label(files, f, None, line) for f, line in (c.get("lines") or ())]
        rows.append(
            h(
                "tr",
                None,
                h(
                    "th",
                    {"title": str(c.get("label") or "")},
                    h("code", None, str(c.get("opcode"))),
                ),
                h("td", None, str(c.get("kind"))),
                h("td", None, h("code", None, str(c.get("replica_groups") or ""))),
                h("td", None, str(c.get("group_size") or "")),
                h("td", None, format_bytes(_number(c.get("result_bytes")))),
                h("td", None, format_bytes(_number(c.get("moved_bytes")))),
                h(
                    "td",
                    None,
                    [h("span", {"class": "ol-cl", "title": long}, short) for short, long in lines],
                ),
                h(
                    "td",
                    {"class": "ol-cargs"},
                    [h("code", None, str(a)) for a in c.get("arguments") or ()],
                ),
                h(
                    "td",
                    {"class": "ol-cargs ol-cserves"},
                    [h("code", None, str(a)) for a in c.get("parameters") or ()],
                ),
                h(
                    "td",
                    {"class": "ol-cshard"},
                    [h("code", None, str(s)) for s in c.get("shardings") or ()],
                ),
            )
        )
    head = head_row(
        (
            "collective",
            "inserted / requested",
            "replica groups",
            "group size",
            "bytes per device",
            "bytes moved",
            "lines",
            "arguments moved",
            "parameters served",
            "shardings",
        )
    )
    return [title, h("table", {"class": "tab ol-costs ol-ccoll"}, head, h("tbody", None, rows))]


def _named(shardings: Sequence, names: Sequence) -> list:
    """Each sharding, after the pytree name of what it shards where known."""
    out = []
    for k, s in enumerate(shardings):
        name = names[k] if k < len(names) else None
        out.append(
            h(
                "li",
                None,
                [h("code", {"class": "ol-cname"}, str(name)), ": "] if name else None,
                h("code", None, str(s)),
            )
        )
    return out


#: The module tree's levels the static table shows (all are in the data).
MODULE_DEPTH_SHOWN = 3
#: Its rows, at most.
MAX_MODULE_ROWS = 200


def _module_table(report, data) -> list:
    """The cost by module and layer: the tree, its top levels, indented."""
    if not any(m.get("path") for m in data.get("modules") or ()):
        return []
    nodes = costs_view.module_rows(data, report.provenance, MODULE_DEPTH_SHOWN - 1)
    # The modules' time adds up to the top level's (a roofline's differs from the lines').
    time_whole = sum(
        time_view.time_value(data.get("time") or {}, n) for n in nodes if not n["depth"]
    )
    # What the modules add up to: loop bodies counted × their trip counts.
    totals = _totals(data, "counted_totals" if data.get("counted_totals") else "totals")
    rows = []
    for node in nodes[:MAX_MODULE_ROWS]:
        name = node["name"] or "(no module: made outside any)"
        rows.append(
            h(
                "tr",
                {"class": "ol-cmod", "data-depth": str(node["depth"])},
                h(
                    "th",
                    {
                        "title": node["path"] or name,
                        "style": f"padding-left:{node['depth'] * 1.2}em",
                    },
                    name,
                    h("span", {"class": "ol-citer"}, " ", node["iterations"])
                    if node["iterations"]
                    else None,
                ),
                [_figure(_number(node.get(key)), totals[key], fmt) for key, _, _, fmt in _COLUMNS],
                h("td", {"class": "ol-cfig"}, str(node["collectives"] or "")),
                _time_cell(data, node, time_whole),
            )
        )
    head = h(
        "thead",
        None,
        h(
            "tr",
            None,
            h("th", None, "module"),
            [h("th", None, label) for _, label, _, _ in _COLUMNS],
            h("th", None, "collectives"),
            _time_head(data),
        ),
    )
    out = [
        h("h4", None, "By module and layer"),
        h("table", {"class": "tab ol-costs ol-cmods"}, head, h("tbody", None, rows)),
    ]
    if len(nodes) > MAX_MODULE_ROWS or any(
        n["depth"] >= MODULE_DEPTH_SHOWN for n in costs_view.module_rows(data, None)
    ):
        out.append(
            h(
                "p",
                {"class": "note"},
                f"The top {MODULE_DEPTH_SHOWN} levels are shown; report.cost_by_module() "
                "gives every node.",
            )
        )
    return out


#: The costliest olympuspr equations the static table lists.
MAX_OP_ROWS = 20


def _op_table(report, data) -> list:
    """The costliest olympuspr equations, ops alike in one row
    (:func:`~olympus_jupyter.report.costs_view.op_groups`)."""
    groups = costs_view.op_groups(data, report.provenance, MAX_OP_ROWS)
    if not groups:
        return []
    totals = _totals(data, "counted_totals" if data.get("counted_totals") else "totals")
    rows = []
    for g in groups:
        short, full = where_label([], None, g["path"], g["line"])
        alike = f" ×{len(g['ops']):,}" if len(g["ops"]) > 1 else ""
        rows.append(
            h(
                "tr",
                {"class": "ol-cop"},
                h("th", {"title": ", ".join(g["ops"][:50])}, f"{g['name']}{alike}"),
                h("td", {"title": full}, short),
                [
                    _figure(_number(g.get(key)), totals[key], fmt)
                    for key, _, _, fmt in _COLUMNS
                    if key != "peak"
                ],
            )
        )
    head = h(
        "thead",
        None,
        h(
            "tr",
            None,
            h("th", None, "op"),
            h("th", None, "line"),
            [h("th", None, label) for key, label, _, _ in _COLUMNS if key != "peak"],
        ),
    )
    return [
        h("h4", None, "By op (olympuspr equations)"),
        h("table", {"class": "tab ol-costs ol-cops"}, head, h("tbody", None, rows)),
        h(
            "p",
            {"class": "note"},
            "Ops alike (×n: a Python loop's, the same primitive on the same line) share "
            "their instructions; their row is all of theirs. "
            "report.cost_share_of_op(op) gives each op's.",
        ),
    ]


def _shardings(data) -> list:
    shardings = data.get("shardings") or {}
    items = [
        h(
            "li",
            None,
            f"{name} ({len(shardings.get(key) or ())}): ",
            h(
                "ul",
                None,
                _named(shardings.get(key) or (), shardings.get(f"{key[:-1]}_names") or ()),
            )
            if shardings.get(key)
            else "none",
        )
        for key, name in (("inputs", "inputs"), ("outputs", "outputs"))
    ]
    devices = data.get("devices") or 1
    per = (
        "One device runs the program."
        if devices <= 1
        else f"{devices} devices run the program (the notes say how the figures count them)."
    )
    return [
        h("h4", None, "Shardings and devices"),
        h("p", None, per),
        h("ul", {"class": "ol-cshard"}, items),
    ]


def _meta(data) -> str:
    totals = _totals(data, "counted_totals" if data.get("counted_totals") else "totals")
    meta = [f"{format_flops(totals['flops'])}", f"{format_bytes(totals['bytes'])} accessed"]
    if data.get("counted_totals"):
        meta[0] += " (loops × trip counts)"
    if data.get("peak"):
        meta.append(f"peak {format_bytes(totals['peak'])}")
    devices = data.get("devices") or 1
    if devices > 1:
        meta.append(f"per device on {devices} devices")
    return " · ".join(meta)


def costs_section(report, uid: str, full: bool):
    """The ``costs`` section of a report's static HTML (``full`` is taken for the
    other sections' sake: the data is capped, or not, when the report is made)."""
    data: Mapping[str, Any] | None = report.costs
    if data is None:
        return unavailable(uid, "costs", report.unavailable.get("costs", "not made"))
    files = _files(report)
    intro = h(
        "p",
        None,
        "XLA's estimates for the compiled program, each instruction's "
        "figures given to the source line it came from (a fusion's to the lines of "
        "what it fused), a loop body's × its trip count where XLA knows it. Shares "
        "are of the totals the rows add up to; the peak's of the bytes live at the "
        "peak.",
    )
    notes = [h("p", {"class": "note"}, str(n)) for n in data.get("notes") or ()]
    counted_by = data.get("counted_by")
    # A CUDA program's: said first, not only among the notes below.
    said = (
        h("p", {"class": "note ol-ccounted-by"}, f"These figures are counted by {counted_by}.")
        if counted_by
        else None
    )
    missing = [
        h("p", {"class": "unavailable"}, f"Not available: {part}: {reason}.")
        for part, reason in (data.get("unavailable") or {}).items()
    ]
    body = [
        intro,
        said,
        _time_intro(data),
        missing,
        _line_table(report, data, files),
        _module_table(report, data),
        _op_table(report, data),
        _peak(data, files),
        _collectives(data, files),
        _shardings(data),
        notes,
    ]
    return section(
        uid,
        "costs",
        stage_registry.stage("costs").title,
        h("div", {"class": "ol-cbody"}, body),
        _meta(data),
    )
