"""The ``passes`` stage in the static HTML: the pass table, each pass's diff folded,
and where each source line's ops went.

Readable with no script: the passes that changed the module are a table, each with
its diff (unified, a few lines of context) in a fold; the passes that changed
nothing, and the pipelines' starts, are folded under the table; a second table
gives, for each source line, the instructions that carried it before the passes,
where they ended up, and the passes that decided it. Diffs are capped
(:data:`MAX_DIFFS` folds of :data:`MAX_DIFF_LINES` lines each) unless the report
is ``full``, with the cap said.

>>> import olympus.numpy as jnp, numpy as np
>>> from olympus_jupyter import inspect
>>> from olympus_jupyter.report.markup import concat
>>> report = inspect(lambda x: jnp.tanh(x * 2.0), np.ones(4, np.float32), passes=True,
...                  cache=False)
>>> html = str(concat(passes_section(report, "ol1", full=False)))
>>> "fusion" in html and "Where each line" in html
True
"""

from __future__ import annotations

import os

from olympus import stage_registry

from olympus_jupyter.report.data_cap import clip_message
from olympus_jupyter.report.line_diff import unified_lines
from olympus_jupyter.report.markup import h, head_row
from olympus_jupyter.report.passes_view import (
    counts,
    line_summary,
    module_lines,
    op_journey_rows,
    step_change,
)
from olympus_jupyter.report.sections import section, unavailable

__all__ = ["passes_section", "MAX_DIFFS", "MAX_DIFF_LINES"]

#: Diffs the static HTML folds in (the first passes that changed the module), and
#: the lines each shows, unless the report is ``full``.
MAX_DIFFS = 30
MAX_DIFF_LINES = 200


def _diff_block(before: list[str], after: list[str], opcodes, limit: int | None):
    lines = unified_lines(before, after, context=2, opcodes=opcodes)
    shown = lines if limit is None else lines[:limit]
    out = []
    for line in shown:
        cls = {"+": "ol-add", "-": "ol-del", "@": "ol-hunk"}.get(line[:1])
        out.append(h("span", {"class": cls} if cls else None, line, "\n"))
    cut = None
    if len(shown) < len(lines):
        cut = h(
            "p",
            {"class": "cap"},
            f"Showing {len(shown):,} of the {len(lines):,} lines "
            f"of this diff; the full diff is in the interactive view and in "
            f"report.save('report.html', limit=None).",
        )
    return [h("pre", {"class": "diff"}, out), cut]


def _row_cells(row) -> list:
    counts = f"{row['instructions_before']:,} → {row['instructions']:,}"
    lines = ""
    if row["kind"] == "changed":  # XLA may call a change what prints the same
        lines = (
            f"−{row['removed']:,} +{row['added']:,}"
            if row["removed"] or row["added"]
            else "same text"
        )
    return [
        h("td", None, row["pipeline"]),
        h("td", None, h("code", None, row["pass"])),
        h("td", None, counts),
        h("td", None, lines),
    ]


def _pass_tables(data, full: bool):
    modules = module_lines(data)
    changed, quiet = [], []
    diffs = 0
    for number, row in enumerate(data["rows"], 1):
        if row["kind"] != "changed":
            kind = {
                "start": "a pipeline's start",
                "unchanged": "changed nothing",
                "context": "the module before a kept pass",
            }[row["kind"]]
            quiet.append(
                h("tr", None, h("td", None, str(number)), _row_cells(row), h("td", None, kind))
            )
            continue
        changed.append(h("tr", None, h("td", None, str(number)), _row_cells(row)))
        found = step_change(data, modules, row["step"])
        if found is None or found[0] == found[1] or (not full and diffs >= MAX_DIFFS):
            continue
        diffs += 1
        fold = h(
            "details",
            {"class": "ol-pass-diff"},
            h("summary", None, f"diff of {row['pass']}"),
            _diff_block(*found, None if full else MAX_DIFF_LINES),
        )
        changed.append(h("tr", None, h("td", {"colspan": "5"}, fold)))
    head = h(
        "thead",
        None,
        h(
            "tr",
            None,
            [h("th", None, x) for x in ("#", "pipeline", "pass", "instructions", "lines")],
        ),
    )
    tables = [h("table", {"class": "tab passes"}, head, h("tbody", None, changed))]
    n_changed = counts(data)[0]
    if not full and n_changed > MAX_DIFFS:
        tables.append(
            h(
                "p",
                {"class": "cap"},
                f"Diffs are folded in for the first "
                f"{MAX_DIFFS} of {n_changed:,} passes; the interactive view and "
                f"report.save('report.html', limit=None) have them all.",
            )
        )
    if quiet:
        quiet_head = h(
            "thead",
            None,
            h(
                "tr",
                None,
                [h("th", None, x) for x in ("#", "pipeline", "pass", "instructions", "", "what")],
            ),
        )
        tables.append(
            h(
                "details",
                {"class": "ol-quiet"},
                h(
                    "summary",
                    None,
                    f"Passes that changed nothing, and the pipelines' starts ({len(quiet):,})",
                ),
                h("table", {"class": "tab passes"}, quiet_head, h("tbody", None, quiet)),
            )
        )
    return tables


#: Characters of a journey's cell the page shows (a loop's ops list thousands of labels).
MAX_CELL = 600


def _summary_cells(start: str, end: str, decided: str) -> list:
    """The cells of a journey's row: its start, end and the passes that decided it
    (:func:`~olympus_jupyter.report.passes_view.line_summary`), each clipped."""
    return [h("td", None, clip_message(text, MAX_CELL)) for text in (start, end, decided)]


def _journey_table(report, data):
    model = report.provenance
    rows = []
    for j in data["journeys"]:
        where = code = ""
        if model is not None and 0 <= j["file"] < len(model.files):
            source = model.files[j["file"]]
            where = f"{os.path.basename(source.path)}:{j['line']}"
            code = (source.line(j["line"]) or "").strip()
        rows.append(
            h(
                "tr",
                None,
                h("td", None, where),
                h("td", None, h("code", None, code)),
                _summary_cells(*line_summary(j)),
            )
        )
    head = head_row(("line", "code", "before the passes", "after the passes", "decided by"))
    return [
        h("h4", None, "Where each line's ops went"),
        h("table", {"class": "tab journeys"}, head, h("tbody", None, rows))
        if rows
        else h("p", {"class": "note"}, "No instruction came from your lines."),
    ]


#: Olympuspr equations whose journey the static page lists (all with ``full``).
MAX_OP_JOURNEYS = 200


def _op_journey_table(report, data, full: bool):
    """Where each olympuspr equation's instructions went, ops alike in one row
    (:func:`~olympus_jupyter.report.passes_view.op_journey_rows`), folded."""
    limit = 10**9 if full else MAX_OP_JOURNEYS
    rows, more = op_journey_rows(data, report.provenance, limit)
    if not rows:
        return []
    body = []
    for r in rows:
        alike = f" ×{len(r['ops']):,}" if len(r["ops"]) > 1 else ""
        where = ""
        if r["line"] is not None:
            where = f"{os.path.basename(r['path'] or '')}:{r['line']}"
        body.append(
            h(
                "tr",
                None,
                h("th", {"title": ", ".join(r["ops"][:50])}, f"{r['name']}{alike}"),
                h("td", {"title": r["path"] or ""}, where),
                _summary_cells(r["start"], r["end"], r["decided"]),
            )
        )
    head = head_row(("op", "line", "before the passes", "after the passes", "decided by"))
    said = (
        f" The first {len(rows):,} are listed, {more:,} more are not: "
        f"report.journey_of_op(op) gives each, --full lists all."
        if more
        else ""
    )
    return [
        h(
            "details",
            {"class": "ol-op-journeys"},
            h("summary", None, f"Where each olympuspr equation's ops went ({len(rows) + more:,})"),
            h("table", {"class": "tab journeys"}, head, h("tbody", None, body)),
            h(
                "p",
                {"class": "note"},
                "Ops alike (×n: a Python loop's, the same primitive on the same line) "
                f"share one journey.{said}",
            ),
        )
    ]


def passes_section(report, uid: str, full: bool):
    """The ``passes`` section of a report's static HTML."""
    data = report.passes
    if data is None:
        return unavailable(uid, "passes", report.unavailable.get("passes", "not made"))
    rows = data["rows"]
    n_changed, first, last = counts(data)
    scope = "" if data["pass_re"] == ".*" else f" whose names match {data['pass_re']!r}"
    summary = h(
        "p",
        None,
        f"{n_changed:,} passes{scope} changed the module, of the "
        f"{len(rows):,} steps XLA names; {first:,} → {last:,} instructions. XLA "
        f"writes the module only after a pass that changed it: a pass that "
        f"changed nothing shows only where XLA names it as the one that ran next.",
    )
    note = h("p", {"class": "note"}, data["note"]) if data.get("note") else None
    meta = f"{n_changed:,} of {len(rows):,} changed the module"
    return section(
        uid,
        "passes",
        stage_registry.stage("passes").title,
        [
            summary,
            note,
            _pass_tables(data, full),
            _journey_table(report, data),
            _op_journey_table(report, data, full),
        ],
        meta,
    )
