"""What a notebook keeps of a report stays under a size cap.

A notebook saves every output's display bundle (the JSON the viewer reads; the
HTML: static, then that JSON again and the interactive view's script, see
:mod:`.interactive`; the text). A program of tens of thousands of operations has stage
texts of tens of megabytes; saved as they are, they would make the notebook slow
to open, to save and to send. :func:`capped_forms` keeps the bundle under
:data:`MAX_OUTPUT_BYTES` by showing the first lines of each stage (and the ops on
them, with their links to the source), and says so in the report's notes. The
report object itself keeps everything: ``report.save(path)`` writes all of it,
and ``inspect(..., full=True)`` (``%olympus_lower --full``) shows it uncapped.

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
from collections.abc import Mapping
from typing import Any

from olympus import stage_registry
from olympus.provenance.clip import clip, clip_text, line_count, longest_line
from olympus_jupyter.report.data import MEDIA_TYPE, compact_json
from olympus_jupyter.report.html import MAX_LINES
from olympus_jupyter.report.interactive import live_tail, tail_size
from olympus_jupyter.report.markup import Markup

__all__ = ["MAX_OUTPUT_BYTES", "MAX_LINE_CHARS", "capped_forms", "output_size", "clip_report"]

#: The size a report's display bundle may take in a notebook, all forms together.
MAX_OUTPUT_BYTES = 5_000_000

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


def _note(limit: int, max_lines: int, lines: Mapping[str, int], widest: int) -> str:
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
    return (
        f"This output is capped at {limit / 1e6:g} MB so that the notebook stays small: "
        f"it shows {' and '.join(shown) or 'what fits'}. The report holds everything: "
        f"report.save('report.html') writes it all, and inspect(..., full=True) or "
        f"%olympus_lower --full shows it all here."
    )


#: The static HTML alone (``report.html()``): the ``text/html`` form is that, then the
#: data again and the interactive view (:mod:`.interactive`), where it fits.
_STATIC = "static html"

#: The shares of the cap, less the interactive view's script, for the data the
#: interactive views read (the data form, and its copy in the HTML form) and for the
#: static HTML (what frontends show where no script runs); the text summary is tiny.
_SHARES = {MEDIA_TYPE: 0.7, _STATIC: 0.3}

#: The HTML form carries the interactive view where its script takes at most this
#: share of the cap (the script is ~0.2 MB; the default cap is 5 MB).
_VIEW_SHARE = 0.25


def _form(report, mime: str, live: bool = False):
    """A form; the static HTML as the HTML form holds it (where the interactive view
    follows it: uncoloured, as the view colours the texts itself, and unstyled, as
    it is what shows where no script runs, and no style sheet either)."""
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
    lines: Mapping[str, int],
    widest: int,
    limit: int,
    start: int,
    uncut=None,
    live: bool = False,
):
    """Form ``mime`` of ``report`` with as many first lines of each stage (``start``
    at most) as fit in ``budget`` bytes, and the report it was made from.
    ``uncut``: the form as made already, uncut, if it was. ``live``: the HTML form
    carries the view, and so the data again (:func:`_size`) and the static HTML
    uncoloured (:func:`_form`)."""
    max_lines = start
    cut, form = report, uncut
    if uncut is not None:
        size = _size(report, mime, form, live)
    if uncut is None or (size > budget and widest > MAX_LINE_CHARS):
        # First every line, long lines cut short; then fewer lines.
        cut = clip_report(report, max_lines, _note(limit, max_lines, lines, widest))
        form = _form(cut, mime, live)
        size = _size(cut, mime, form, live)
    for _ in range(_ROUNDS):
        if size <= budget or max_lines == 0:
            break
        # Stage texts (and their ops) are most of the size: keep fewer lines in
        # proportion to how far over the budget the last try was.
        max_lines = int(max_lines * budget / size * 0.9)
        cut = clip_report(report, max_lines, _note(limit, max_lines, lines, widest))
        form = _form(cut, mime, live)
        size = _size(cut, mime, form, live)
    if size > budget:  # what is left is not stage text: the summary alone
        cut = dataclasses.replace(
            report,
            provenance=None,
            texts={},
            _memo={},
            notes=(
                f"This report is too large to show here (over {limit / 1e6:g} MB even "
                f"without its stage texts); report.save('report.html') writes it.",
            ),
        )
        form = _form(cut, mime, live)
    return form, cut


def capped_forms(report, limit: int = MAX_OUTPUT_BYTES) -> dict[str, Any]:
    """The display forms of ``report``, cut to at most ``limit`` bytes in all
    where they are larger (see the module's text)."""
    texts = _stage_texts(report)
    # The interactive view's script, in the HTML form where it takes a small share.
    view = tail_size("")
    live = 0 < view <= limit * _VIEW_SHARE
    room = limit - view if live else limit
    # The data form holds every stage text: where they alone are over its share,
    # it is not made uncut (at 50,000 equations that is a second or two saved).
    text_bytes = sum(map(len, texts.values())) * (2 if live else 1)
    budget = room * _SHARES[MEDIA_TYPE]
    data = None
    if text_bytes <= budget:
        data, text = report.form(MEDIA_TYPE), report.form("text/plain")
        size = _size(report, MEDIA_TYPE, data, live) + output_size({"text/plain": text})
        if size + (view if live else 0) <= limit:  # the HTML is made only where it may fit
            static = _form(report, _STATIC, live)
            if size + (view if live else 0) + output_size({"text/html": static}) <= limit:
                html = report.form("text/html") if live else static
                return {MEDIA_TYPE: data, "text/html": html, "text/plain": text}
    lines = {name: line_count(text) for name, text in texts.items()}
    widest = max(map(longest_line, texts.values()), default=0)
    longest = max(lines.values(), default=0)
    start = longest
    if data is None:  # the first try keeps lines in proportion to the share
        if widest > MAX_LINE_CHARS:  # of the texts as shown: long lines cut short
            text_bytes = sum(map(_shown_bytes, texts.values())) * (2 if live else 1)
        start = max(1, min(longest, int(longest * budget / text_bytes * 0.9)))
    data, cut = _fit(report, MEDIA_TYPE, budget, lines, widest, limit, start, uncut=data, live=live)
    text = cut.form("text/plain")
    # The static HTML shows at most MAX_LINES of a stage however much is kept.
    html, _ = _fit(
        report,
        _STATIC,
        room * _SHARES[_STATIC] - output_size({"text/plain": text}),
        lines,
        widest,
        limit,
        min(longest, MAX_LINES),
        live=live,
    )
    if live:  # then the data as cut for the data form, and the view
        html = Markup(html + live_tail(cut.to_json_text()))
    return {MEDIA_TYPE: data, "text/html": html, "text/plain": text}
