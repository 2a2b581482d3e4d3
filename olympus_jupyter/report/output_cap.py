"""What a notebook keeps of a report stays under a size cap.

A notebook saves every output's display bundle (the JSON the viewer reads; the
HTML: static, then that JSON again and the interactive view's script, see
:mod:`.interactive`; the text). A program of tens of thousands of operations has stage
texts of tens of megabytes; saved as they are, they would make the notebook slow
to open, to save and to send. :func:`capped_forms` keeps the bundle under
:data:`MAX_OUTPUT_BYTES` by showing the first lines of each stage (and the ops on
them, with their links to the source), and says so in the report's notes.

The data of every stage kind (the ``passes`` and ``costs`` stages, and any kind
registered with :func:`~.kinds.register_kind`) is capped too, by its handler
(:meth:`~.kinds.StageKind.cap`, :func:`cap_kinds`): the kinds together take at most
half of the data form where the whole is over the cap, each keeping what matters
first (the costliest lines, the first lines' journeys) and saying what it left out.

A saved page (``report.save(path)``) is capped the same way, at
:data:`MAX_PAGE_BYTES` (:func:`capped_page`), so that it opens quickly. The
report object itself keeps everything: ``report.save(path, limit=None)`` writes
all of it, and ``inspect(..., full=True)`` (``%olympus_lower --full``) shows it
uncapped.

>>> from olympus_jupyter import inspect
>>> import olympus.numpy as jnp
>>> def long(x):
...     for _ in range(200):
...         x = jnp.sin(x)
...     return x
>>> report = inspect(long, 1.0)
>>> forms = capped_forms(report, limit=60_000)
>>> output_size(forms) <= 60_000
True
>>> "note: This output is capped at 0.06 MB" in forms["text/plain"]
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any

from olympus import stage_registry
from olympus.provenance.clip import clip, clip_text, line_count, longest_line
from olympus_jupyter.report import kinds
from olympus_jupyter.report.data import MEDIA_TYPE, compact_json
from olympus_jupyter.report.data_cap import MAX_MESSAGE, clip_message, json_size
from olympus_jupyter.report.html import MAX_LINES, render_html
from olympus_jupyter.report.interactive import live_tail, tail_size
from olympus_jupyter.report.live_reports import capped_parts
from olympus_jupyter.report.markup import Markup

__all__ = [
    "MAX_OUTPUT_BYTES",
    "MAX_PAGE_BYTES",
    "MAX_LINE_CHARS",
    "capped_forms",
    "capped_page",
    "cap_kinds",
    "output_size",
    "clip_report",
]

#: The size a report's display bundle may take in a notebook, all forms together.
MAX_OUTPUT_BYTES = 5_000_000

#: The size of a page ``report.save()`` writes (a page of tens of megabytes takes
#: tens of seconds to open).
MAX_PAGE_BYTES = 5_000_000

#: The share of the data (one copy) the stage kinds' data may take where a report
#: is over its cap; the stage texts take the rest.
_KINDS_SHARE = 0.5

#: The first share of the static HTML's budget for the kinds' data, in bytes of
#: JSON (their HTML takes a few times their JSON: a table row per line).
_KINDS_HTML_SHARE = 0.15

#: Characters of one line shown where the output is capped (a large constant prints
#: as one line of megabytes).
MAX_LINE_CHARS = 5_000

#: Rounds of cutting before the smallest form is taken as it is.
_ROUNDS = 8


def output_size(forms: Mapping[str, Any]) -> int:
    """Bytes the forms take in a saved notebook (JSON for data, UTF-8 for text)."""
    return sum(
        len(form.encode("utf-8"))
        if isinstance(form, str)
        else len(compact_json(form))  # ASCII: a character is a byte
        for form in forms.values()
    )


def _stage_texts(report) -> dict[str, str]:
    """Each program stage text the report holds."""
    out = dict(report.texts)
    if report.provenance is not None:
        out.update({name: stage.text for name, stage in report.provenance.stages.items()})
    return out


def cap_kinds(report, budget: float):
    """``report`` with the data of its stage kinds cut to about ``budget`` bytes of
    JSON in all, each by its handler (:meth:`~.kinds.StageKind.cap`; the smallest
    are kept whole first, what they leave goes to the others), and the notes the
    handlers gave (``[]`` where all of it fits: the report as it is). A kind whose
    handler leaves its data out reads as unavailable, its note saying why."""
    held = [(h, h.data(report)) for h in kinds.kinds()]
    held = [(h, d) for h, d in held if d is not None]
    sizes = _kind_sizes(report)
    if sum(sizes.values()) <= budget:
        return report, []
    left = budget
    fields: dict[str, Any] = {}
    stage_data = dict(report.stage_data)
    unavailable = dict(report.unavailable)
    notes: list[str] = []
    order = sorted(held, key=lambda hd: sizes[hd[0].name])
    for n, (handler, data) in enumerate(order):
        share = max(left / (len(order) - n), 0.0)
        cut, note = (data, None) if sizes[handler.name] <= share else handler.cap(data, share)
        left -= json_size(cut) if cut is not None else 0
        if note:
            notes.append(note)
        if cut is None:
            unavailable[handler.name] = clip_message(
                note or "left out of this output to keep it under its size cap"
            )
        if handler.field is not None:
            fields[handler.field] = cut
        elif cut is None:
            stage_data.pop(handler.name, None)
        else:
            stage_data[handler.name] = cut
    kept = dataclasses.replace(
        report, stage_data=stage_data, unavailable=unavailable, _memo={}, **fields
    )
    return kept, notes


def clip_report(report, max_lines: int, note: str | None):
    """``report`` showing the first ``max_lines`` lines of each stage, with ``note``."""
    return dataclasses.replace(
        report,
        provenance=clip(report.provenance, max_lines, MAX_LINE_CHARS)
        if report.provenance
        else None,
        texts={
            name: clip_text(text, max_lines, MAX_LINE_CHARS) for name, text in report.texts.items()
        },
        notes=tuple(report.notes) + ((note,) if note else ()),
        _memo={},
    )


def _shown_bytes(text: str) -> int:
    """Bytes of ``text`` with its lines cut to :data:`MAX_LINE_CHARS` characters."""
    return sum(min(len(line), MAX_LINE_CHARS) for line in text.split("\n"))


def _note(
    limit: int,
    max_lines: int,
    lines: Mapping[str, int],
    widest: int,
    kind_notes: list[str] | tuple[str, ...] = (),
    *,
    page: bool = False,
) -> str:
    cut = [
        f"{stage_registry.stage(name).label} {max_lines:,} of {n:,}"
        for name, n in lines.items()
        if n > max_lines
    ]
    shown = []
    if cut:
        shown.append(f"the first lines of each long stage ({'; '.join(cut)} lines) and their ops")
    if widest > MAX_LINE_CHARS:
        shown.append(
            f"the first {MAX_LINE_CHARS:,} characters of lines longer than that "
            f"(the longest has {widest:,})"
        )
    if kind_notes:
        shown.append(
            "part of the stages' data (" + "; ".join(n.rstrip(".") for n in kind_notes) + ")"
        )
    return clip_message(
        (
            f"This page is capped at {limit / 1e6:g} MB so that it opens quickly: "
            f"it shows {' and '.join(shown) or 'what fits'}. The report object that "
            f"saved it holds everything: report.save(path, limit=None) writes it all."
            if page
            else f"This output is capped at {limit / 1e6:g} MB so that the notebook "
            f"stays small: it shows {' and '.join(shown) or 'what fits'}. The report "
            f"holds everything: report.save('report.html', limit=None) writes it all, "
            f"and inspect(..., full=True) or %olympus_lower --full shows it all here."
        ),
        MAX_MESSAGE,
    )


#: The static HTML alone (``report.html()``): the ``text/html`` form is that, then the
#: data again and the interactive view (:mod:`.interactive`), where it fits.
_STATIC = "static html"

#: A saved page (``report.save()``): the static HTML as a whole page, then the data
#: and the interactive view.
_PAGE = "page"

#: The shares of the cap, less the interactive view's script, for the data the
#: interactive views read (the data form, and its copy in the HTML form) and for the
#: static HTML (what frontends show where no script runs); the text summary is tiny.
_SHARES = {MEDIA_TYPE: 0.7, _STATIC: 0.3}

#: The HTML form carries the interactive view where its script takes at most this
#: share of the cap (the script is ~0.2 MB; the default cap is 5 MB).
_VIEW_SHARE = 0.25


@dataclasses.dataclass(frozen=True)
class _Cutting:
    """What every cut of one report shares: the cap, each stage's line count and the
    widest line of the report as it is, whether the cut is for a saved page (and
    that page's ``full`` and what follows its static HTML)."""

    limit: int
    lines: Mapping[str, int]
    widest: int
    page: bool = False
    full: bool = True
    after: Markup | None = None

    def cut(self, report, max_lines: int, kinds_budget: float | None):
        """``report`` with its kinds' data in ``kinds_budget`` bytes and the first
        ``max_lines`` lines of each stage, saying so."""
        notes: list[str] = []
        if kinds_budget is not None:
            report, notes = cap_kinds(report, kinds_budget)
        note = _note(self.limit, max_lines, self.lines, self.widest, notes, page=self.page)
        return clip_report(report, max_lines, note)

    def too_large(self, report, kinds_budget: float):
        """The summary alone: no stage texts, the kinds' data in ``kinds_budget``."""
        report, notes = cap_kinds(report, kinds_budget)
        where = "in this page" if self.page else "here"
        return dataclasses.replace(
            report,
            provenance=None,
            texts={},
            _memo={},
            notes=(
                clip_message(
                    f"This report is too large to show {where} (over "
                    f"{self.limit / 1e6:g} MB even without its stage texts)"
                    + (": " + "; ".join(n.rstrip(".") for n in notes) if notes else "")
                    + "; report.save('report.html', limit=None) writes all of it."
                ),
            ),
        )


def _form(report, mime: str, live: bool = False, cutting: _Cutting | None = None):
    """A form; the static HTML as the HTML form holds it (where the interactive view
    follows it: uncoloured, as the view colours the texts itself, and unstyled, as
    it is what shows where no script runs, and no style sheet either); a saved page
    whole."""
    if mime == _PAGE:
        assert cutting is not None
        # Coloured where no view follows: the view colours the texts itself, and
        # uncoloured they cost a fifth as much.
        return render_html(
            report,
            full=cutting.full,
            standalone=True,
            after=cutting.after,
            highlight=cutting.after is None,
        )
    return report.html(highlight=not live, unstyled=live) if mime == _STATIC else report.form(mime)


def _size(report, mime: str, form, live: bool) -> int:
    """Bytes of ``form``; for the data, of both its copies where ``live``: the data
    form, and the JSON island in the HTML (measured on the JSON text the island is
    made from, so that it is serialized once)."""
    if mime == MEDIA_TYPE:
        data_text = report.to_json_text()
        return len(data_text) + (tail_size(data_text) - tail_size("") if live else 0)
    return output_size({mime: form})


def _fit(
    report,
    mime: str,
    budget: float,
    cutting: _Cutting,
    start: int,
    kinds_budget: float,
    uncut=None,
    live: bool = False,
    fixed: int = 0,
):
    """Form ``mime`` of ``report`` with as many first lines of each stage (``start``
    at most) as fit in ``budget`` bytes, the kinds' data in ``kinds_budget`` bytes
    at most (less where the whole is over), and the report it was made from.
    ``uncut``: the form as made already, uncut, if it was. ``live``: the HTML form
    carries the view, and so the data again (:func:`_size`) and the static HTML
    uncoloured (:func:`_form`). ``fixed``: bytes of the form no cut changes (a
    page's data and view)."""
    max_lines = start
    cut, form = report, uncut
    if uncut is not None:
        size = _size(report, mime, form, live)
    if uncut is None or (size > budget and cutting.widest > MAX_LINE_CHARS):
        # First every line, long lines cut short; then fewer lines.
        cut = cutting.cut(report, max_lines, kinds_budget)
        form = _form(cut, mime, live, cutting)
        size = _size(cut, mime, form, live)
    for _ in range(_ROUNDS):
        if size <= budget or (max_lines == 0 and kinds_budget < 1):
            break
        # Stage texts (and their ops) and the kinds' data are most of the size: keep
        # less of each in proportion to how far over the budget the last try was.
        scale = max(budget - fixed, 0) / max(size - fixed, 1) * 0.9
        max_lines, kinds_budget = int(max_lines * scale), kinds_budget * scale
        cut = cutting.cut(report, max_lines, kinds_budget)
        form = _form(cut, mime, live, cutting)
        size = _size(cut, mime, form, live)
    for shrink in (1.0, 0.25, 0.0):  # what is left is not stage text: the summary alone
        if size <= budget:
            break
        cut = cutting.too_large(report, kinds_budget * shrink)
        form = _form(cut, mime, live, cutting)
        size = _size(cut, mime, form, live)
    return form, cut


def _kind_sizes(report) -> dict[str, int]:
    """Bytes of the data of each of the report's stage kinds that has some, as JSON,
    measured once for the report (a report is not changed: each cut of it is a new
    one)."""

    def measure() -> dict[str, int]:
        held = ((h.name, h.data(report)) for h in kinds.kinds())
        return {name: json_size(d) for name, d in held if d is not None}

    return report._memoized("kind sizes", measure)


def _kinds_bytes(report) -> int:
    """Bytes of the data of the report's stage kinds, as JSON."""
    return sum(_kind_sizes(report).values())


def _kinds_budget(per_copy: float, text_bytes: float) -> float:
    """The kinds' share of one copy of the data: half of it, or what the stage texts
    leave where that is more."""
    return max(per_copy * _KINDS_SHARE, per_copy * 0.9 - text_bytes)


def _cutting(report, limit: int, **page) -> tuple[_Cutting, dict[str, str], int]:
    texts = _stage_texts(report)
    lines = {name: line_count(text) for name, text in texts.items()}
    widest = max(map(longest_line, texts.values()), default=0)
    return _Cutting(limit, lines, widest, **page), texts, max(lines.values(), default=0)


def _start(longest: int, texts: Mapping[str, str], widest: int, room: float, copies: int) -> int:
    """The first try's lines: in proportion to the room for the texts (as shown:
    long lines cut short)."""
    text_bytes = sum(map(_shown_bytes if widest > MAX_LINE_CHARS else len, texts.values()))
    text_bytes *= copies
    return max(1, min(longest, int(longest * max(room, 0) / max(text_bytes, 1) * 0.9)))


#: Bytes kept for the data's ``live`` field (:mod:`.live_reports`) where it may be added.
_LIVE_BYTES = 4_000


def capped_forms(
    report, limit: int | None = None, live: Callable[[Any], str | None] | None = None
) -> dict[str, Any]:
    """The display forms of ``report``, cut to at most ``limit`` bytes in all
    where they are larger (see the module's text; ``None``: :data:`MAX_OUTPUT_BYTES`,
    read when called).

    ``live``: where given and the data is cut, called with ``report`` for a token the
    kernel keeps it under (:meth:`.live_reports.LiveReports.offer`); the data then
    carries ``live``, the token and what it shows of each list it cut
    (:func:`.live_reports.capped_parts`), for a live view to fetch the rest."""
    if limit is None:
        limit = MAX_OUTPUT_BYTES
    forms, cut = _capped_forms(report, limit - (_LIVE_BYTES if live is not None else 0))
    if live is None or cut is None:  # not cut
        return forms
    parts = capped_parts(report, cut)[:_MAX_PARTS]
    if not parts or json_size({"report": "x" * 64, "parts": parts}) > _LIVE_BYTES:
        return forms
    token = live(report)
    if token is None:
        return forms
    return {**forms, MEDIA_TYPE: {**forms[MEDIA_TYPE], "live": {"report": token, "parts": parts}}}


#: Lists a ``live`` field names at most (the schema's ``maxItems``).
_MAX_PARTS = 32


def _capped_forms(report, limit: int) -> tuple[dict[str, Any], Any]:
    """The forms, and the report the data form was made from where it was cut
    (``None``: uncut)."""
    texts = _stage_texts(report)
    # The interactive view's script, in the HTML form where it takes a small share.
    view = tail_size("")
    live = 0 < view <= limit * _VIEW_SHARE
    room = limit - view if live else limit
    copies = 2 if live else 1
    # The data form holds every stage text: where they alone are over its share,
    # it is not made uncut (at 50,000 equations that is a second or two saved).
    text_bytes = sum(map(len, texts.values()))
    kinds_bytes = _kinds_bytes(report)
    budget = room * _SHARES[MEDIA_TYPE]
    kinds_budget = _kinds_budget(budget / copies, text_bytes)
    data = None
    if (text_bytes + kinds_bytes) * copies <= budget:
        data, text = report.form(MEDIA_TYPE), report.form("text/plain")
        size = _size(report, MEDIA_TYPE, data, live) + output_size({"text/plain": text})
        if size + (view if live else 0) <= limit:  # the HTML is made only where it may fit
            static = _form(report, _STATIC, live)
            if size + (view if live else 0) + output_size({"text/html": static}) <= limit:
                html = report.form("text/html") if live else static
                return {MEDIA_TYPE: data, "text/html": html, "text/plain": text}, None
        if size > budget:
            data = None
    cutting, texts, longest = _cutting(report, limit)
    start = longest
    if data is None:  # the first try keeps lines in proportion to the share
        text_room = budget - min(kinds_bytes, kinds_budget) * copies
        start = _start(longest, texts, cutting.widest, text_room, copies)
    data, cut = _fit(
        report, MEDIA_TYPE, budget, cutting, start, kinds_budget, uncut=data, live=live
    )
    text = cut.form("text/plain")
    # The static HTML shows at most MAX_LINES of a stage however much is kept.
    static_budget = room * _SHARES[_STATIC] - output_size({"text/plain": text})
    html, _ = _fit(
        report,
        _STATIC,
        static_budget,
        cutting,
        min(longest, MAX_LINES),
        static_budget * _KINDS_HTML_SHARE,
        live=live,
    )
    if live:  # then the data as cut for the data form, and the view
        html = Markup(html + live_tail(cut.to_json_text()))
    return {MEDIA_TYPE: data, "text/html": html, "text/plain": text}, (
        None if cut is report else cut
    )


def capped_page(
    report, limit: int | None = MAX_PAGE_BYTES, *, full: bool = True, interactive: bool = True
) -> tuple[str, str | None]:
    """The standalone page of ``report`` (``report.save()``), cut to at most
    ``limit`` bytes where it is larger (``None``: never), and the JSON text of the
    data it carries (``None`` where it carries none: ``interactive=False``, or
    the view was not built). Cut, the data takes most of the page (the view
    replaces the static HTML wherever scripts run), cut as a notebook's is; the
    static HTML the rest, its stage texts uncoloured.

    >>> from olympus_jupyter import inspect
    >>> import olympus.numpy as jnp
    >>> def long(x):
    ...     for _ in range(400):
    ...         x = jnp.sin(x) * 2.0
    ...     return x
    >>> report = inspect(long, 1.0)
    >>> len(report.html(standalone=True)) > 1_000_000  # uncut
    True
    >>> page, data_text = capped_page(report, limit=600_000)
    >>> len(page.encode()) <= 600_000, "capped at 0.6 MB" in page
    (True, True)
    """
    view = tail_size("") if interactive else 0
    live = view > 0
    # Made whole where it may fit (the estimate is rough), then measured.
    if limit is None or _estimate(report, live) <= 2 * limit:
        data_text = report.to_json_text() if live else None
        page = report.html(full=full, standalone=True, interactive=interactive)
        if limit is None or len(page.encode("utf-8")) <= limit:
            return page, data_text
    room = limit - view
    cutting, texts, longest = _cutting(report, limit, page=True, full=full)
    text_bytes = sum(map(len, texts.values()))
    data_text, after = None, None
    if live:
        budget = room * _SHARES[MEDIA_TYPE]
        kinds_budget = _kinds_budget(budget, text_bytes)
        start = _start(
            longest, texts, cutting.widest, budget - min(_kinds_bytes(report), kinds_budget), 1
        )
        _, cut = _fit(report, MEDIA_TYPE, budget, cutting, start, kinds_budget)
        data_text = cut.to_json_text()
        after = live_tail(data_text)
    cutting = dataclasses.replace(cutting, after=after)
    page_budget = limit
    static_room = page_budget - (len(after) if after else 0)
    page, _ = _fit(
        report,
        _PAGE,
        page_budget,
        cutting,
        # Coloured, the texts take a few times their size.
        min(
            MAX_LINES if not full else longest,
            _start(longest, texts, cutting.widest, static_room / 6, 1),
        ),
        static_room * _KINDS_HTML_SHARE,
        fixed=len(after) if after else 0,
    )
    return page, data_text


def _estimate(report, live: bool) -> int:
    """A page's bytes, roughly and without making it: the stage texts coloured (a
    few times their size) and the kinds' data as HTML, and the data again where
    the view is carried."""
    text_bytes = sum(map(len, _stage_texts(report).values()))
    kinds_bytes = _kinds_bytes(report)
    return 5 * text_bytes + 4 * kinds_bytes + ((text_bytes + kinds_bytes) if live else 0)
