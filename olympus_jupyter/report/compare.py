"""``compare(before, after)``: two reports of one function, stage by stage, changes marked.

Two signatures of a function, or the function before and after a change: the
display bundle holds ``application/vnd.olympus.diff+json`` (both reports, for the
JupyterLab merge view), static HTML (a side-by-side diff per stage, readable with
no script, built by :mod:`.markup`, which escapes every name and line) and a text
summary.

>>> import olympus.numpy as jnp
>>> from olympus_jupyter import inspect
>>> f = lambda x: jnp.sin(x) * 2
>>> diff = compare(inspect(f, jnp.ones(3)), inspect(f, jnp.ones((2, 3))))
>>> diff.changed_stages()
('olympuspr', 'stablehlo', 'hlo', 'compiled')
"""

from __future__ import annotations

import dataclasses
from collections.abc import Sequence
from typing import Any

from olympus import stage_registry
from olympus_jupyter.report.display_bundle import display_bundle
from olympus_jupyter.report.html import STYLE
from olympus_jupyter.report.line_diff import LineDiff, line_diff
from olympus_jupyter.report.markup import Markup, Slot, concat, h, template
from olympus_jupyter.report.stage_report import StageReport

MEDIA_TYPE = "application/vnd.olympus.diff+json"
SCHEMA = "olympus.diff"
VERSION = 1
#: The program stages, whose texts are compared line by line.
TEXT_STAGES = tuple(s.name for s in stage_registry.program_stages())
#: Unchanged lines kept around each change; longer unchanged runs fold.
CONTEXT = 3


@dataclasses.dataclass(frozen=True)
class StageChange:
    """How one stage's text changed: lines removed and added."""

    stage: str
    removed: int
    added: int
    #: Lines of changed blocks too big to align line by line (see ``line_diff``).
    unaligned: int = 0

    @property
    def changed(self) -> bool:
        return bool(self.removed or self.added)


@dataclasses.dataclass(frozen=True)
class StageDiff:
    """Two reports of one function, compared stage by stage."""

    before: StageReport
    after: StageReport
    labels: tuple[str, str] = ("before", "after")
    _memo: dict = dataclasses.field(default_factory=dict, repr=False, compare=False)

    def line_diff(self, stage: str) -> LineDiff | None:
        """How ``stage``'s text changed, line by line (computed once); None where a
        report lacks the stage."""
        if stage not in self._memo:
            a, b = self.before.stage_text(stage), self.after.stage_text(stage)
            self._memo[stage] = (
                None if a is None or b is None else line_diff(a.splitlines(), b.splitlines())
            )
        return self._memo[stage]

    def changes(self) -> tuple[StageChange, ...]:
        """Lines removed and added in each text stage both reports hold."""
        out = []
        for stage in TEXT_STAGES:
            d = self.line_diff(stage)
            if d is not None:
                out.append(StageChange(stage, d.removed, d.added, d.unaligned))
        return tuple(out)

    def changed_stages(self) -> tuple[str, ...]:
        return tuple(c.stage for c in self.changes() if c.changed)

    def to_json(self) -> dict[str, Any]:
        """The ``application/vnd.olympus.diff+json`` form."""
        return {
            "schema": SCHEMA,
            "version": VERSION,
            "labels": list(self.labels),
            "before": self.before.to_json(),
            "after": self.after.to_json(),
        }

    def text(self) -> str:
        parts = [
            (
                f"{c.stage} -{c.removed} +{c.added}"
                + (f" ({c.unaligned} lines not aligned)" if c.unaligned else "")
            )
            if c.changed
            else f"{c.stage} unchanged"
            for c in self.changes()
        ]
        return (
            f"Olympus diff: {self.before.name} ({self.labels[0]}) vs "
            f"{self.after.name} ({self.labels[1]})\n  " + " · ".join(parts)
        )

    def html(self) -> str:
        return render_diff_html(self)

    def _repr_mimebundle_(self, include=None, exclude=None):
        forms = {MEDIA_TYPE: self.to_json, "text/html": self.html, "text/plain": self.text}
        return display_bundle(forms, include, exclude)

    def __repr__(self) -> str:
        return self.text()


def compare(
    before: StageReport, after: StageReport, labels: Sequence[str] | None = None
) -> StageDiff:
    """Compares two reports (of one function, say for two signatures)."""
    for r in (before, after):
        if not isinstance(r, StageReport):
            raise TypeError(
                f"compare() takes two StageReports (from olympus_jupyter.inspect), "
                f"got {type(r).__name__}."
            )
    labels = tuple(labels) if labels is not None else ("before", "after")
    if len(labels) != 2 or not all(isinstance(x, str) for x in labels):
        raise ValueError(f"labels must be two strings, got {labels!r}.")
    return StageDiff(before, after, labels)


#: A row of the table: a line of each side, its number and text.
_ROW = template(
    h(
        "tr",
        {"class": Slot("kind")},
        h("td", {"class": "ol-dn"}, Slot("ln")),
        h("td", {"class": Slot("lcls")}, Slot("left")),
        h("td", {"class": "ol-dn"}, Slot("rn")),
        h("td", {"class": Slot("rcls")}, Slot("right")),
    )
)


def _row(kind: str, left: str | None, right: str | None, ln: int | None, rn: int | None) -> Markup:
    """One table row: a line of each side (``None``: no line there).

    >>> _row("ch", "a < b", None, 3, None)
    Markup('<tr class="ol-ch"><td class="ol-dn">3</td><td class="ol-dt ol-old">a &lt; b</td><td class="ol-dn"></td><td class="ol-dt ol-none"></td></tr>')
    """
    old, new = ("old", "new") if kind != "eq" else ("eq", "eq")
    return _ROW(
        kind=f"ol-{kind}",
        ln=None if left is None else ln,
        left=left,
        lcls="ol-dt ol-none" if left is None else f"ol-dt ol-{old}",
        rn=None if right is None else rn,
        right=right,
        rcls="ol-dt ol-none" if right is None else f"ol-dt ol-{new}",
    )


def _skipped(rows: list[Markup]) -> Markup:
    """A row folding ``rows`` (unchanged lines) away."""
    return h(
        "tr",
        {"class": "ol-skip"},
        h(
            "td",
            {"colspan": 4},
            h(
                "details",
                None,
                h("summary", None, f"{len(rows)} unchanged lines"),
                h("table", {"class": "ol-diff"}, rows),
            ),
        ),
    )


def side_by_side(a: str, b: str, diff: LineDiff | None = None) -> Markup:
    """A two-column table of ``a`` and ``b`` with changed lines marked; long
    unchanged runs fold into ``<details>``."""
    la, lb = a.splitlines(), b.splitlines()
    diff = diff or line_diff(la, lb)
    rows: list[Markup] = []
    for tag, i1, i2, j1, j2 in diff.opcodes:
        if tag == "equal":
            n = i2 - i1
            same = [_row("eq", la[i1 + k], lb[j1 + k], i1 + k + 1, j1 + k + 1) for k in range(n)]
            if n > 2 * CONTEXT + 2:
                rows += same[:CONTEXT]
                rows.append(_skipped(same[CONTEXT : n - CONTEXT]))
                rows += same[n - CONTEXT :]
            else:
                rows += same
            continue
        left, right = la[i1:i2], lb[j1:j2]
        for k in range(max(len(left), len(right))):
            ln = left[k] if k < len(left) else None
            r = right[k] if k < len(right) else None
            rows.append(
                _row(
                    "ch",
                    ln,
                    r,
                    i1 + k + 1 if ln is not None else None,
                    j1 + k + 1 if r is not None else None,
                )
            )
    return h("table", {"class": "ol-diff"}, rows)


def render_diff_html(diff: StageDiff) -> Markup:
    """The static HTML form: one folded section per stage, changed stages open."""
    sections = []
    changes = {c.stage: c for c in diff.changes()}
    for stage in TEXT_STAGES:
        a, b = diff.before.stage_text(stage), diff.after.stage_text(stage)
        if a is None or b is None:
            missing = diff.labels[0] if a is None else diff.labels[1]
            body = h("p", {"class": "unavailable"}, f"Not in the {missing} report.")
            meta, open_ = "unavailable", False
        else:
            c = changes[stage]
            body = side_by_side(a, b, diff.line_diff(stage))
            if c.unaligned:
                body = concat(
                    h(
                        "p",
                        {"class": "note"},
                        (
                            f"{c.unaligned:,} changed lines differ too much to align line by "
                            f"line; they are shown as blocks."
                        ),
                    ),
                    body,
                )
            meta = f"−{c.removed} +{c.added} lines" if c.changed else "unchanged"
            open_ = c.changed
        sections.append(
            h(
                "details",
                {"class": "stage", "open": open_},
                h(
                    "summary",
                    None,
                    h("span", {"class": "title"}, stage),
                    " ",
                    h("span", {"class": "meta"}, meta),
                ),
                body,
            )
        )
    (first, second), before, after = diff.labels, diff.before, diff.after
    head = h(
        "div",
        {"class": "head"},
        h("span", {"class": "name"}, before.name),
        h(
            "span",
            {"class": "meta"},
            f"{first} ({', '.join(before.platforms)}) vs {second} ({', '.join(after.platforms)})",
        ),
    )
    return h(
        "div",
        {"class": "olympus-report olympus-diff-static"},
        h("style", None, Markup(STYLE + DIFF_STYLE)),
        head,
        sections,
    )


DIFF_STYLE = """
.olympus-report .olympus-diff-static details.stage, .olympus-diff-static details.stage{overflow-x:auto}
.olympus-report table.ol-diff{border-collapse:collapse;width:100%;font-family:var(--jp-code-font-family,monospace);
font-size:var(--jp-code-font-size,12.5px);background:var(--ol-code-bg)}
.olympus-report .ol-diff td{padding:0 .5em;white-space:pre;vertical-align:top}
.olympus-report .ol-diff .ol-dn{color:var(--ol-muted);text-align:right;user-select:none;width:3em}
.olympus-report .ol-diff .ol-dt{width:50%}
.olympus-report .ol-diff .ol-old{background:hsla(0,80%,55%,.16)}
.olympus-report .ol-diff .ol-new{background:hsla(130,60%,45%,.18)}
.olympus-report .ol-diff .ol-skip td{color:var(--ol-muted);padding:.2em .5em}
""".replace("\n", "")
