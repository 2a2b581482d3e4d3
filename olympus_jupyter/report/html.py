"""The ``text/html`` form of a report: static, self-contained, readable with no script.

Every source line that made ops gets a colour; its ops carry that colour in every
stage. Source lines link (plain anchors) to what they became; each op line names
the source line it came from. Long regions and computations fold (``<details>``);
long stage texts are capped unless ``full=True``. Light and dark themes come from
CSS variables, following JupyterLab's when present. Every element is made by the
builder of :mod:`.markup`, which escapes whatever comes from the user's program or
a report's JSON; links only point inside the page. The one exception is a numbered
line of code (:func:`_line`), written directly from pieces the builder made or that
are safe by construction, since a stage has thousands.

>>> from olympus_jupyter import inspect
>>> html = render_html(inspect(lambda x: x * 2, 1.0))
>>> html.startswith('<div class="olympus-report"') and '<script' not in html
True
"""

from __future__ import annotations

import dataclasses
import os
import uuid
from collections.abc import Iterable, Sequence
from typing import Any

from olympus import stage_registry
from olympus.gpu_costs import no_cost_analysis
from olympus.provenance import Provenance, Stage
from olympus.provenance.sources import charged_frame

from olympus_jupyter.highlight.render import highlight_lines, plain_lines
from olympus_jupyter.report.device_memory import target_lines
from olympus_jupyter.report.markup import (
    Markup,
    Slot,
    anchor_id,
    ascii_html,
    concat,
    escape,
    fragment,
    h,
    head_row,
    join,
    tags,
    template,
)
from olympus_jupyter.report import cost_names, kinds
from olympus_jupyter.report.sections import section as _section
from olympus_jupyter.report.sections import unavailable as _unavailable
from olympus_jupyter.report.cost_names import format_bytes
from olympus_jupyter.report.peak_words import LIVE, live_peak, peak_summary
from olympus_jupyter.report.view_tables import PALETTE_HUES, PALETTE_SIZE

#: Lines of one stage text shown inline before the rest is left out (``full=False``).
MAX_LINES = 1500
#: Stages with more lines than this start with nested folds closed.
OPEN_FOLDS_UP_TO = 400
# The palette (its size here, its hues in _palette) is shared with the view: view_tables.py.


@dataclasses.dataclass(frozen=True)
class Fold:
    """Lines ``start``..``end`` (1-based, inclusive) that fold under line ``start``."""

    start: int
    end: int
    open: bool = True


@dataclasses.dataclass(frozen=True)
class LineMark:
    """What a stage line shows beside its code: colour slot, note, source link."""

    color: int | None = None
    note: str = ""
    href: str | None = None


# -- source colours and links -------------------------------------------------------


def caller_lines(model: Provenance | None) -> set[tuple[int, int]]:
    """Source lines that call the staged function (a notebook cell running the magic,
    a script): the frames outside the function's own lines that stand outer to one of
    its frames in some op's call stack. Ops made there belong to the function as a
    whole, not to a line of it."""
    if model is None:
        return set()
    fn = model.function
    if fn.file is None or fn.first_line is None:
        return set()
    last = fn.last_line or fn.first_line
    inside = [f.file == fn.file and fn.first_line <= f.line <= last for f in model.frames]
    found: set[int] = set()  # frames outer to the function's own, by index
    for loc in model.locations:
        frames = loc.frames
        k = len(frames) - 1
        while k >= 0 and not inside[frames[k]]:
            k -= 1
        if k >= 0:
            found.update(i for i in frames[k + 1 :] if not inside[i])
    return {(model.frames[i].file, model.frames[i].line) for i in found}


def source_colors(
    model: Provenance | None, callers: set[tuple[int, int]]
) -> dict[tuple[int, int], int]:
    """A palette slot for every (file, line) that made ops, in source order (the
    lines the function was called from get none)."""
    if model is None:
        return {}
    lines = [(e.file, e.line) for e in model.lines if (e.file, e.line) not in callers]
    return {key: k % PALETTE_SIZE for k, key in enumerate(lines)}


def _short_path(path: str) -> str:
    return os.path.basename(path) or path


def _primary_frame(model: Provenance, op):
    """The frame ``op`` is charged to: its innermost of the user's own code."""
    return charged_frame(model.source_tables(), op.location)


def _source_mark(
    model: Provenance,
    fr,
    uid: str,
    callers: set[tuple[int, int]],
    colors: dict[tuple[int, int], int],
    debug_info: bool,
) -> LineMark:
    """The colour, note and link of the ops a source frame made."""
    color = colors.get((fr.file, fr.line))
    if color is None and (fr.file, fr.line) in callers:
        return LineMark(color, "whole function" if debug_info else "")
    if not debug_info:
        return LineMark(color)
    note = f"{_short_path(model.files[fr.file].path)}:{fr.line}"
    if fr.function:
        note += f" ({fr.function})"
    return LineMark(color, note, fragment(uid, "source", fr.file, fr.line))


def stage_marks(
    model: Provenance,
    stage: Stage,
    report_stage: str,
    uid: str,
    callers: set[tuple[int, int]],
    colors: dict[tuple[int, int], int],
    debug_info: bool,
) -> dict[int, LineMark]:
    """For each text line where an op starts: its source line's colour and a note."""
    marks: dict[int, LineMark] = {}
    # Many ops share a frame, and a fusion's ops its note: each mark is made once, and
    # ops that show the same mark share the object (the blocks make each one's HTML once).
    by_frame: dict[tuple[int, int, str], LineMark] = {}
    in_fusion: dict[tuple[int, int], LineMark] = {}  # by (id of the frame's mark, fusion)
    ops = stage.ops
    for op in ops:
        if op.lines is None or op.lines[0] in marks:
            continue
        fr = _primary_frame(model, op)
        if fr is None:
            continue
        key = (fr.file, fr.line, fr.function)
        mark = by_frame.get(key)
        if mark is None:
            mark = by_frame[key] = _source_mark(model, fr, uid, callers, colors, debug_info)
        if op.fusion is not None:
            fused = in_fusion.get((id(mark), op.fusion))
            if fused is None:
                holder = ops[op.fusion]
                note = f"{mark.note} · in {holder.label or holder.name}".lstrip(" ·")
                fused = in_fusion[id(mark), op.fusion] = LineMark(mark.color, note, mark.href)
            mark = fused
        marks[op.lines[0]] = mark
    return marks


# -- folds --------------------------------------------------------------------------

_HLO_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def table_fold(lines: Sequence[str]) -> list[Fold]:
    """The source tables of an HLO text (``FileNames`` ... ``StackFrames``), folded shut."""
    first = next((i for i, ln in enumerate(lines[:50], start=1) if ln.strip() == "FileNames"), None)
    if first is None:
        return []
    last = first
    for i in range(first, len(lines)):
        line = lines[i]
        if line.strip() and not (line.strip() in _HLO_TABLES or line[:1].isdigit()):
            break
        last = i + 1
    while last > first and not lines[last - 1].strip():
        last -= 1
    return [Fold(first, last, open=False)] if last > first else []


def stage_folds(stage: Stage, n_lines: int) -> list[Fold]:
    """Foldable ranges of a provenance stage: multi-line ops and HLO computations
    (and the source tables of HLO, shut)."""
    many = n_lines > OPEN_FOLDS_UP_TO
    folds = table_fold(stage.text.split("\n")) + [
        Fold(c.lines[0], c.lines[1], open=not (many and c.fusion is not None))
        for c in stage.computations
        if c.lines[1] > c.lines[0]
    ]
    for op in stage.ops:
        if op.lines and op.lines[1] > op.lines[0]:
            top = op.parent is None or op.name in ("func.func", "builtin.module")
            folds.append(Fold(op.lines[0], op.lines[1], open=top or not many))
    return folds


def brace_folds(lines: Sequence[str]) -> list[Fold]:
    """Foldable ranges by braces: a line ending in ``{`` up to the ``}`` that closes it."""
    folds, stack = [], []
    for i, line in enumerate(lines, start=1):
        stripped = line.rstrip()
        if stripped.endswith("{"):
            stack.append(i)
        elif stripped.lstrip().startswith("}") and stack:
            start = stack.pop()
            if i > start:
                folds.append(
                    Fold(
                        start,
                        i,
                        open=len(lines) <= OPEN_FOLDS_UP_TO or lines[start - 1].startswith("ENTRY"),
                    )
                )
    return folds


def _nested(folds: Iterable[Fold], limit: int) -> list[Fold]:
    """Folds clipped to ``limit`` lines, keeping only properly nested ones."""
    kept: list[Fold] = []
    stack: list[Fold] = []
    for f in sorted(folds, key=lambda f: (f.start, -f.end)):
        if f.start >= limit:
            continue
        f = Fold(f.start, min(f.end, limit), f.open)
        while stack and stack[-1].end < f.start:
            stack.pop()
        if stack and f.end > stack[-1].end:
            continue  # crosses its parent
        if kept and kept[-1].start == f.start:
            continue  # one fold per line: the outermost
        kept.append(f)
        stack.append(f)
    return kept


# -- code blocks --------------------------------------------------------------------

#: The gap between two runs of source lines that are not next to each other.
_GAP = h("span", {"class": "ol-l ol-gap"}, h("span", {"class": "ol-n"}, "⋯"))


def _mark_html(mark: LineMark | None, line_class: str = "ol-l") -> tuple[str, str]:
    """A line's class (``line_class`` and its colour's) and what follows its code
    (its note, a link where it has one), made by the builder: a stage's lines share
    a few marks, so each is made once (see :func:`code_block`)."""
    if mark is None:
        return line_class, ""
    cls = line_class if mark.color is None else f"{line_class} ol-src{int(mark.color)}"
    if not mark.note:
        return cls, ""
    if mark.href:
        return cls, _NOTE_LINK(href=mark.href, note=mark.note)
    return cls, _NOTE(note=mark.note)


#: A line's note, linked to its source where it has a link: filled in, not built (a
#: stage has a mark for each source line and fusion its ops come from).
_NOTE_LINK = template(h("a", {"class": "ol-a", "href": Slot("href")}, Slot("note")))
_NOTE = template(h("span", {"class": "ol-a"}, Slot("note")))


def _line(cls: str, line_id: str, number: int, code: str, tail: str) -> str:
    """One numbered line, written directly (a stage has thousands). Only safe values
    come here: ``cls`` and ``tail`` from :func:`_mark_html`, ``line_id`` made by
    :func:`anchor_id` (letters, digits, ``-`` and ``_``), ``number`` an int,
    ``code`` the highlighter's HTML (it escapes).

    >>> cls, tail = _mark_html(LineMark(2, "f.py:3 (<f>)", "#ol1-source-0-3"))
    >>> _line(cls, "ol1-olympuspr-L3", 3, "a", tail)
    '<span class="ol-l ol-src2" id="ol1-olympuspr-L3"><span class="ol-n">3</span><span class="ol-t">a</span><a class="ol-a" href="#ol1-source-0-3">f.py:3 (&lt;f&gt;)</a></span>'
    """
    return (
        f'<span class="{cls}" id="{line_id}"><span class="ol-n">{number}</span>'
        f'<span class="ol-t">{code}</span>{tail}</span>'
    )


#: The tags around a fold, open or shut: its lines are added one by one in between.
_FOLD = {shown: tags("details", {"class": "ol-fold", "open": shown}) for shown in (True, False)}
_SUMMARY = tags("summary")
_CODE = tags("div", {"class": "code"})

#: A long part of the page (a code block, a section) is the list of the pieces of its
#: HTML (Markup, or more such lists) in order: the element around them (``h()``)
#: joins them once, so a long text is not copied again at each level it is nested in.
Pieces = list


def code_block(
    uid: str,
    stage: str,
    highlighted: Sequence[str],
    marks: dict[int, LineMark],
    folds: list[Fold],
    limit: int,
) -> Pieces:
    """Lines as HTML, with ``<details>`` around each fold (summary = its first line).

    >>> concat(code_block("ol1", "stablehlo", ["a {", "b", "}"], {}, [Fold(1, 3)], 10))  # doctest: +ELLIPSIS
    Markup('<div class="code"><details class="ol-fold" open><summary><span class="ol-l" id="ol1-stablehlo-L1">...</span></summary>...</details></div>')
    """
    shown = min(len(highlighted), limit)
    starts = {f.start: f for f in _nested(folds, shown)}
    out: list[str] = [_CODE[0]]
    closing: list[int] = []
    ids = anchor_id(uid, stage) + "-L"  # an id made by anchor_id, then digits, is one too
    made: dict[LineMark | None, tuple[str, str]] = {}  # each mark's HTML, made once
    for number in range(1, shown + 1):
        mark = marks.get(number)
        parts = made.get(mark)
        if parts is None:
            parts = made[mark] = _mark_html(mark)
        line = _line(parts[0], f"{ids}{number}", number, highlighted[number - 1], parts[1])
        fold = starts.get(number)
        if fold is not None:
            out += _FOLD[fold.open][0], _SUMMARY[0], line, _SUMMARY[1]
            closing.append(fold.end)
        else:
            out.append(line)
        while closing and closing[-1] == number:
            closing.pop()
            out.append(_FOLD[True][1])
    out.extend(_FOLD[True][1] for _ in closing)
    out.append(_CODE[1])
    return [Markup("".join(out))]  # each piece was escaped where it was made


def pre_block(
    uid: str,
    stage: str,
    lines: Sequence[str],
    marks: dict[int, LineMark],
    limit: int,
    shut: Sequence[Fold] = (),
) -> Pieces:
    """Lines as one numbered ``<pre>``, each op's first line naming (and linking to)
    its source line after two spaces: HTML that reads the same with no style sheet
    (GitHub drops a report's ``<style>``, as JupyterLab's sanitizer does in an
    untrusted notebook), for the display's fallback (``render_html(unstyled=True)``).
    Only the lines that start an op are elements, to link to; the other lines are
    text. The regions ``shut`` (not nested: an HLO text's source tables,
    :func:`table_fold`) are each a ``<details>``, shut, its first line the summary,
    between the ``<pre>`` blocks of the lines around it; nothing else folds (each
    stage's section does).

    >>> mark = LineMark(0, "f.py:3", "#ol1-source-0-3")
    >>> print(concat(pre_block("ol1", "stablehlo", ["a {", "b", "}"], {2: mark}, 10)))
    <pre class="ol-pre">1  a {
    2  <span class="ol-op ol-src0" id="ol1-stablehlo-L2">b</span>  <a class="ol-a" href="#ol1-source-0-3">f.py:3</a>
    3  }</pre>
    >>> print(concat(pre_block("ol1", "hlo", ["m", "FileNames", "1 a.py", "x"], {}, 10,
    ...                        [Fold(2, 3, open=False)])))
    <pre class="ol-pre">1  m</pre><details class="ol-fold"><summary>2  FileNames</summary><pre class="ol-pre">3  1 a.py</pre></details><pre class="ol-pre">4  x</pre>
    """
    rows = _pre_rows(uid, stage, lines, marks, limit)
    pieces: list[Markup] = []
    at = 0  # rows before this one are placed
    for fold in sorted(shut, key=lambda f: f.start):
        first, last = fold.start - 1, min(fold.end, len(rows))
        if first < at or first >= last:  # nested, or past what is shown
            continue
        if first > at:
            pieces.append(_pre(rows[at:first]))
        pieces.append(_shut(rows[first], rows[first + 1 : last]))
        at = last
    if at < len(rows) or not pieces:
        pieces.append(_pre(rows[at:]))
    return pieces


def _shut(summary: str, rows: Sequence[str]) -> Markup:
    """Rows of :func:`pre_block` folded shut under ``summary`` (its first row)."""
    return Markup(f'<details class="ol-fold"><summary>{summary}</summary>{_pre(rows)}</details>')


def _pre_rows(
    uid: str, stage: str, lines: Sequence[str], marks: dict[int, LineMark], limit: int
) -> list[str]:
    """The rows of :func:`pre_block`, each escaped where it was made."""
    shown = min(len(lines), limit)
    width = len(str(shown))
    ids = anchor_id(uid, stage) + "-L"  # an id made by anchor_id, then digits, is one too
    # Each mark's HTML, made once: by the mark's identity, as the lines that show the
    # same mark share it (stage_marks), and a stage has hundreds of such lines.
    made: dict[int, tuple[str, str]] = {}
    out: list[str] = []
    append, mark_of = out.append, marks.get
    for number, line in enumerate(lines[:shown], start=1):
        head = str(number).rjust(width)
        mark = mark_of(number)
        if mark is None:
            append(f"{head}  {line}")
            continue
        parts = made.get(id(mark))
        if parts is None:
            parts = made[id(mark)] = _mark_html(mark, "ol-op")
        append(_pre_line(head, parts[0], f"{ids}{number}", line, parts[1]))
    return out


def _pre_line(head: str, cls: str, line_id: str, code: str, tail: str) -> str:
    """A line of a ``<pre>`` block that is an anchor: ``head`` (its number, aligned),
    then its code as an element, then ``tail`` (its note) after two spaces. Only safe
    values come here, as to :func:`_line`."""
    return f'{head}  <span class="{cls}" id="{line_id}">{code}</span>{"  " if tail else ""}{tail}'


def _pre(lines: Sequence[str]) -> Markup:
    """The lines of :func:`pre_block` (each escaped where it was made) as its ``<pre>``."""
    return Markup('<pre class="ol-pre">' + "\n".join(lines) + "</pre>")


def _capped_note(total: int, shown: int, stage: str) -> Markup | None:
    if total <= shown:
        return None
    return h(
        "p",
        {"class": "cap"},
        f"Showing the first {shown:,} of {total:,} lines of this stage. The full text is in ",
        h("code", None, f"report.stage_text({stage!r})"),
        ", in the interactive JupyterLab view, and in ",
        h("code", None, "report.save('report.html', limit=None)"),
        " (or ",
        h("code", None, "%olympus_lower --full"),
        ").",
    )


# -- sections -------------------------------------------------------------------------


def _op_summary(names: list[str]) -> str:
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    parts = [f"{n}×{c}" if c > 1 else n for n, c in counts.items()]
    return ", ".join(parts[:4]) + (", …" if len(parts) > 4 else "")


def _source_lines(src, numbers: list[int]) -> list[str | None]:
    r"""Lines ``numbers`` of source file ``src`` (``src.line(n)`` of each), each
    chunk split once: a file of thousands of lines is read in one pass.

    >>> from olympus.provenance.parts import SourceFile
    >>> _source_lines(SourceFile("m.py", ((3, "a\nb\n"),)), [1, 3, 4, 5])
    [None, 'a', 'b', None]
    """
    split = [(first, text.splitlines()) for first, text in src.chunks]
    out: list[str | None] = []
    for n in numbers:
        found = None
        for first, lines in split:  # as SourceFile.line reads them
            if n >= first and n - first < len(lines):
                found = lines[n - first]
                break
        out.append(found)
    return out


def source_section(report, uid: str, colors, callers, unstyled: bool = False) -> Pieces | None:
    model = report.provenance
    if model is None:
        return None
    fn = model.function
    wanted: dict[int, set[int]] = {}
    for entry in model.lines:
        if (entry.file, entry.line) not in callers:
            wanted.setdefault(entry.file, set()).add(entry.line)
    if fn.file is not None and fn.first_line is not None:
        last = fn.last_line or fn.first_line
        wanted.setdefault(fn.file, set()).update(range(fn.first_line, last + 1))
    by_line = {(e.file, e.line): e for e in model.lines}
    stages = [s.name for s in stage_registry.provenance_stages() if s.name in report.stages]
    blocks: list[Markup] = []
    order = sorted(wanted, key=lambda f: (f != fn.file, f))
    for fi in order:
        src = model.files[fi]
        numbers = sorted(n for n in wanted[fi] if n > 0)
        texts = _source_lines(src, numbers)
        if not numbers or all(t is None for t in texts):
            continue
        code = "\n".join(t or "" for t in texts)
        highlighted = highlight_lines(code, "python") if code else []
        rows = []
        prev = None
        width = len(str(numbers[-1]))
        for n, hl in zip(numbers, highlighted + [""] * (len(numbers) - len(highlighted))):
            if prev is not None and n != prev + 1:
                rows.append(f"{'':>{width}}  \u22ef" if unstyled else _GAP)
            prev = n
            entry = by_line.get((fi, n))
            if unstyled and entry is None:  # text, with no anchor: nothing made ops here
                rows.append(f"{n:>{width}}  {hl}")
                continue
            base = "ol-op" if unstyled else "ol-l"  # see pre_block and code_block
            cls = base if entry is None else f"{base} ol-src{colors[(fi, n)]}"
            links: list[Markup | str] = []
            if entry is not None:
                for rs in stages:
                    idx = entry.ops.get(rs, ())
                    if not idx or rs not in model.stages:
                        continue
                    st = model.stages[rs]
                    first = next((st.ops[i].lines[0] for i in idx if st.ops[i].lines), None)
                    label = f"{rs}: {_op_summary([st.ops[i].name for i in idx])}"
                    if first is not None:
                        links.append(h("a", {"href": fragment(uid, rs, f"L{first}")}, label))
                    else:
                        links.append(label)
            tail = h("span", {"class": "ol-a"}, join(" · ", links)) if links else ""
            line_id = anchor_id(uid, "source", fi, n)
            if unstyled:
                rows.append(_pre_line(str(n).rjust(width), cls, line_id, hl, tail))
            else:
                rows.append(Markup(_line(cls, line_id, n, hl, tail)))
        code_html = _pre(rows) if unstyled else h("div", {"class": "code"}, rows)
        blocks += h("div", {"class": "file"}, src.path), code_html
    if not blocks:
        body: Markup | list[Markup] = h(
            "p", {"class": "unavailable"}, "The source of this function could not be read."
        )
    else:
        body = blocks
    where = ""
    if fn.file is not None:
        where = f"{_short_path(model.files[fn.file].path)}:{fn.first_line}"
    return _section(uid, "source", f"Source · {fn.name}", body, where)


def text_stage_section(
    report,
    uid: str,
    key: str,
    colors,
    callers,
    full: bool,
    highlight: bool = True,
    unstyled: bool = False,
) -> Pieces:
    model = report.provenance
    spec = stage_registry.stage(key)
    limit = 10**12 if full else MAX_LINES
    as_html = highlight_lines if highlight else (lambda text, _language: plain_lines(text))
    if not spec.linked:
        text = report.texts.get(key)
        if text is None:
            return _unavailable(uid, key, report.unavailable.get(key, f"not {spec.step}ed"))
        lines = text.rstrip("\n").split("\n")
        highlighted = as_html("\n".join(lines[:limit]), spec.language)  # type: ignore[arg-type]
        body = (
            pre_block(uid, key, highlighted, {}, limit, table_fold(lines))
            if unstyled
            else code_block(uid, key, highlighted, {}, brace_folds(lines), limit)
        )
        return _section(
            uid,
            key,
            spec.title,
            [body, _capped_note(len(lines), min(limit, len(lines)), key)],
            f"{len(lines):,} lines",
        )
    if model is None or key not in model.stages:
        return _unavailable(uid, key, report.unavailable.get(key, "not made"))
    stage = model.stages[key]
    lines = stage.text.rstrip("\n").split("\n")
    highlighted = as_html("\n".join(lines[:limit]), spec.language)  # type: ignore[arg-type]
    marks = stage_marks(model, stage, key, uid, callers, colors, report.debug_info)
    body = (
        pre_block(uid, key, highlighted, marks, limit, table_fold(lines))
        if unstyled
        else code_block(uid, key, highlighted, marks, stage_folds(stage, len(lines)), limit)
    )
    meta = f"{len(stage.ops):,} {spec.unit} · {len(lines):,} lines"
    if spec.step in report.timings:
        meta += f" · {spec.step} {report.timings[spec.step] * 1e3:.1f} ms"
    extra = None
    if stage.collectives:
        names = ", ".join(sorted({stage.ops[i].name for i in stage.collectives}))
        extra = h("p", {"class": "note"}, f"Collectives inserted by the compiler: {names}.")
    return _section(
        uid,
        key,
        stage_registry.stage(key).title,
        [extra, body, _capped_note(len(lines), min(limit, len(lines)), key)],
        meta,
    )


def _table(cls: str, head: Sequence[str], rows: list[Markup]) -> Markup:
    return h(
        "table",
        {"class": cls},
        head_row(head),
        h("tbody", None, rows),
    )


def cost_section(report, uid: str) -> Pieces:
    a = report.analyses
    if not a.cost_lowered and not a.cost_compiled:
        return _unavailable(
            uid,
            "cost_analysis",
            report.unavailable.get("cost_analysis", "this backend reports no cost analysis"),
        )
    before, after = a.cost_lowered or {}, a.cost_compiled or {}
    keys = sorted(set(before) | set(after), key=cost_names.sort_key)
    rows = []
    notes: list[Markup] = []  # what each figure that is no figure is (cost_names.mark)

    def figure(name, column: str, table) -> Any:
        shown = name.format(table.get(name.key))
        why = cost_names.mark(name.key, table[name.key]) if name.key in table else None
        if why is None:
            return shown
        notes.append(
            h(
                "p",
                None,
                h("b", None, f"note {len(notes) + 1}"),
                f": {name.label} ({column}) {shown} is {why}",
            )
        )
        return [shown, " ", h("sup", {"class": "ol-mark", "title": why}, f"note {len(notes)}")]

    for k in keys:
        name = cost_names.describe(k)
        b, c = before.get(k), after.get(k)
        change = ""
        if (
            b not in (None, 0)
            and c is not None
            and cost_names.mark(k, b) is None
            and cost_names.mark(k, c) is None
        ):
            change = f"{(c - b) / b * 100:+.0f}%"
        rows.append(
            _COST_ROW(
                key=k,
                title=f"{name.explanation}\nXLA key: {k}",
                label=name.label,
                raw=_COST_KEY(key=k) if name.known else None,
                before=figure(name, "lowered", before),
                after=figure(name, "compiled", after),
                change=change,
            )
        )
    head = h(
        "thead",
        None,
        h(
            "tr",
            None,
            h("th", None, "figure"),
            h("th", {"title": cost_names.LOWERED_NOTE}, "before optimization (lowered)"),
            h("th", {"title": cost_names.COMPILED_NOTE}, "after optimization (compiled)"),
            h("th", None, "change"),
        ),
    )
    table = h("table", {"class": "tab cost"}, head, h("tbody", None, rows))
    legend = h(
        "div",
        {"class": "note legend"},
        [h("p", None, h("b", None, label), ": ", text) for label, text in cost_names.legend(keys)],
    )
    # A CUDA program's figures before optimization alone (JAX 0.12): why none after.
    said = no_cost_analysis(report.platforms, lowered=True) if not after else None
    return _section(
        uid,
        "cost_analysis",
        stage_registry.stage("cost_analysis").title,
        [
            table,
            h("p", {"class": "note"}, f"after optimization (compiled): unavailable ({said})")
            if said
            else None,
            h("div", {"class": "note marks"}, notes) if notes else None,
            h("p", {"class": "note"}, cost_names.STAGES_NOTE),
            legend,
        ],
    )


#: A row of the cost table (one per figure): its label for people, XLA's key beside
#: it (small) for experts, and what the figure counts on hover (and in the legend).
_COST_ROW = template(
    h(
        "tr",
        {"data-key": Slot("key")},
        h("th", {"title": Slot("title")}, Slot("label"), Slot("raw")),
        h("td", None, Slot("before")),
        h("td", None, Slot("after")),
        h("td", None, Slot("change")),
    )
)
_COST_KEY = template(h("span", {"class": "meta key"}, " ", h("code", None, Slot("key"))))


_MEMORY_ROWS = (
    ("argument_size_in_bytes", "arguments"),
    ("output_size_in_bytes", "outputs"),
    ("temp_size_in_bytes", "temporaries"),
    ("alias_size_in_bytes", "aliased (outputs reusing arguments)"),
    ("generated_code_size_in_bytes", "generated code"),
    ("peak_memory_in_bytes", "peak (memory_analysis())"),
)


#: The row of the live-range peak in the memory table (not one of XLA's keys).
_LIVE_KEY = "olympus:live_peak"


def memory_section(report, uid: str) -> Pieces:
    mem = report.analyses.memory
    if not mem:
        return _unavailable(
            uid,
            "memory",
            report.unavailable.get("memory", "this backend reports no memory analysis"),
        )
    rows_spec = list(_MEMORY_ROWS) + [
        (k, k.replace("_size_in_bytes", "").replace("_", " "))
        for k in mem
        if k.startswith("host_") and mem[k]
    ]
    # The live-range peak of the buffer assignment (the costs stage), temporaries
    # included, before memory_analysis()'s peak: the two are different measures.
    live = live_peak(report.costs)
    figures = dict(mem)
    if live is not None:
        rows_spec.insert(len(_MEMORY_ROWS) - 1, (_LIVE_KEY, f"peak {LIVE}"))
        figures[_LIVE_KEY] = live
    biggest = max([figures.get(k, 0) for k, _ in rows_spec] + [1])
    rows = []
    for key, label in rows_spec:
        v = figures.get(key, 0)
        width = 0 if not v else max(1, round(v / biggest * 100))
        rows.append(
            h(
                "tr",
                None,
                h("th", None, label),
                h("td", None, format_bytes(v)),
                h("td", {"class": "bar"}, h("span", {"style": f"width:{width}%"})),
            )
        )
    table = _table("tab mem", ("memory", "size", ""), rows)
    words = peak_summary(mem, report.costs)
    meta = f"peak {words}" if words else ""
    return _section(uid, "memory", stage_registry.stage("memory").title, table, meta)


def failure_box(report) -> Markup | None:
    f = report.failure
    if f is None:
        return None
    where = None
    frame = f.user_frame
    if frame is not None:
        where = [
            h(
                "p",
                None,
                "at ",
                h("code", None, f"{frame.file}:{frame.line}"),
                " in ",
                h("code", None, frame.function),
            ),
            h("pre", None, frame.code) if frame.code else None,
        ]
    return h(
        "div",
        {"class": "failure", "role": "alert"},
        h(
            "p",
            None,
            h("b", None, f"{f.stage.capitalize()} failed"),
            ": ",
            h("code", None, f.error_type),
        ),
        where,
        h("pre", None, f.message),
    )


def header(report, uid: str) -> Markup:
    timings = " · ".join(f"{k} {v * 1e3:.1f} ms" for k, v in report.timings.items())
    nav = join(" ", [h("a", {"href": fragment(uid, s)}, s) for s in report.stages])
    return h(
        "div",
        {"class": "head"},
        h("span", {"class": "name"}, report.name),
        " ",
        h(
            "span",
            {"class": "meta"},
            "for ",
            ", ".join(report.platforms),
            f" · {timings}" if timings else None,
        ),
        [h("div", {"class": "target"}, line) for line in target_lines(report.target)],
        h("nav", None, nav),
    )


# -- the whole report -----------------------------------------------------------------

_PAGE_STYLE = Markup(
    "body{margin:1.5rem;background:var(--ol-page,#fff)}"
    "@media (prefers-color-scheme: dark){body{background:#0d1117}}"
)


def render_html(
    report,
    *,
    full: bool = False,
    standalone: bool = False,
    after: Markup | None = None,
    highlight: bool = True,
    unstyled: bool = False,
) -> Markup:
    """The report as one ``<div>`` of static HTML (a whole page when ``standalone``),
    then ``after`` (the interactive view's data and loader, :mod:`.interactive`).
    ``highlight=False`` leaves the stage texts uncoloured (a fallback that the
    interactive view replaces where scripts run: most of the cost of the HTML).
    ``unstyled=True`` writes the source and the stage texts as numbered
    ``<pre>`` text (:func:`pre_block`), which reads the same where the style sheet
    is dropped (GitHub, an untrusted notebook): the display's fallback."""
    uid = "ol" + uuid.uuid4().hex[:8]
    callers = caller_lines(report.provenance)  # once: every section asks
    colors = source_colors(report.provenance, callers)
    parts = [
        header(report, uid),
        [h("p", {"class": "note"}, n) for n in report.notes],
        failure_box(report),
    ]
    context = kinds.HtmlContext(
        uid=uid, colors=colors, callers=callers, full=full, highlight=highlight, unstyled=unstyled
    )
    for key in report.stages:  # each stage's section, by its kind's handler
        parts.append(kinds.kind(key).html(report, context))
    # In ASCII (characters beyond it as references): see ascii_html.
    body = ascii_html(
        h(
            "div",
            {"class": "olympus-report", "id": uid, "data-olympus-report": "1"},
            h("style", None, Markup(STYLE)),
            parts,
        )
    )
    if not standalone:
        return concat(body, after) if after else body
    head = h(
        "head",
        None,
        h("meta", {"charset": "utf-8"}),
        h("meta", {"name": "viewport", "content": "width=device-width, initial-scale=1"}),
        h("title", None, ascii_html(escape(f"Olympus report: {report.name}"))),
        h("style", None, _PAGE_STYLE),
    )
    return concat(
        Markup("<!DOCTYPE html>"), h("html", {"lang": "en"}, head, h("body", None, body, after))
    )


def _palette() -> str:
    rules = []
    for k, hue in enumerate(PALETTE_HUES):
        rules.append(
            f".olympus-report .ol-src{k}{{background:hsla({hue},75%,55%,.16);"
            f"box-shadow:inset 3px 0 hsl({hue},70%,50%)}}"
        )
    return "".join(rules)


STYLE = (
    """
.olympus-report{--ol-fg:var(--jp-content-font-color1,#1f2328);--ol-muted:var(--jp-content-font-color2,#59636e);
--ol-bg:var(--jp-layout-color0,#fff);--ol-code-bg:var(--jp-cell-editor-background,#f6f8fa);
--ol-border:var(--jp-border-color2,#d1d9e0);--ol-link:var(--jp-content-link-color,#0969da);
--ol-bad:var(--jp-error-color1,#cf222e);--ol-bad-bg:var(--jp-rendermime-error-background,#ffebe9);
--ol-kw:#8250df;--ol-op:#0550ae;--ol-ty:#953800;--ol-num:#0a3069;--ol-str:#0a3069;--ol-com:#6e7781;--ol-var:#1f2328;
color:var(--ol-fg);background:var(--ol-bg);font-family:var(--jp-ui-font-family,system-ui,sans-serif);
font-size:13px;line-height:1.4;max-width:100%}
@media (prefers-color-scheme:dark){.olympus-report{--ol-fg:var(--jp-content-font-color1,#e6edf3);
--ol-muted:var(--jp-content-font-color2,#9198a1);--ol-bg:var(--jp-layout-color0,#0d1117);
--ol-code-bg:var(--jp-cell-editor-background,#161b22);--ol-border:var(--jp-border-color2,#3d444d);
--ol-link:var(--jp-content-link-color,#4493f8);--ol-bad-bg:var(--jp-rendermime-error-background,#3c1618);
--ol-kw:#d2a8ff;--ol-op:#79c0ff;--ol-ty:#ffa657;--ol-num:#a5d6ff;--ol-str:#a5d6ff;--ol-com:#8b949e;--ol-var:#e6edf3}}
body[data-jp-theme-light="true"] .olympus-report{--ol-kw:#8250df;--ol-op:#0550ae;--ol-ty:#953800;--ol-num:#0a3069;--ol-str:#0a3069;--ol-com:#6e7781;--ol-var:#1f2328}
body[data-jp-theme-light="false"] .olympus-report{--ol-kw:#d2a8ff;--ol-op:#79c0ff;--ol-ty:#ffa657;--ol-num:#a5d6ff;--ol-str:#a5d6ff;--ol-com:#8b949e;--ol-var:#e6edf3}
.olympus-report a{color:var(--ol-link);text-decoration:none}
.olympus-report a:hover{text-decoration:underline}
.olympus-report pre.diff{margin:.3em 0;padding:.4em;overflow:auto;background:var(--ol-code-bg);font-family:var(--jp-code-font-family,monospace);font-size:12px}
.olympus-report .ol-add{background:rgba(46,160,67,.18)}
.olympus-report .ol-del{background:rgba(248,81,73,.18)}
.olympus-report .ol-hunk{color:var(--ol-muted)}
.olympus-report .head{display:flex;flex-wrap:wrap;gap:.3em 1em;align-items:baseline;padding:.3em 0 .5em}
.olympus-report .name{font-weight:600;font-size:1.15em;font-family:var(--jp-code-font-family,monospace)}
.olympus-report .meta{color:var(--ol-muted)}
.olympus-report nav a{margin-right:.7em}
.olympus-report details.stage{border:1px solid var(--ol-border);border-radius:6px;margin:.4em 0;background:var(--ol-bg)}
.olympus-report details.stage>summary{cursor:pointer;padding:.35em .6em;font-weight:600}
.olympus-report details.stage>summary .meta{font-weight:400;margin-left:.6em}
.olympus-report .file{font-family:var(--jp-code-font-family,monospace);color:var(--ol-muted);padding:.2em .6em;font-size:.92em}
.olympus-report .code{background:var(--ol-code-bg);font-family:var(--jp-code-font-family,ui-monospace,monospace);
font-size:var(--jp-code-font-size,12.5px);overflow-x:auto;padding:.3em 0;border-top:1px solid var(--ol-border)}
.olympus-report .ol-l{display:block;white-space:pre;padding-right:1em;min-width:max-content}
.olympus-report .ol-l .ol-n{display:inline-block;min-width:3.2em;padding-right:.8em;text-align:right;color:var(--ol-muted);user-select:none}
.olympus-report .ol-l .ol-a{margin-left:2em;color:var(--ol-muted);font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:.92em}
.olympus-report .ol-l.ol-gap{color:var(--ol-muted)}
.olympus-report .ol-l:target{outline:2px solid var(--ol-link);outline-offset:-2px}
.olympus-report pre.ol-pre{margin:0;padding:.3em .6em;background:var(--ol-code-bg);overflow-x:auto;
font-family:var(--jp-code-font-family,ui-monospace,monospace);font-size:var(--jp-code-font-size,12.5px);
border-top:1px solid var(--ol-border)}
.olympus-report .ol-pre .ol-a{color:var(--ol-muted);font-family:var(--jp-ui-font-family,system-ui,sans-serif);font-size:.92em}
.olympus-report .ol-op:target{outline:2px solid var(--ol-link)}
.olympus-report details.ol-fold>summary{list-style:none;cursor:pointer;display:block}
.olympus-report details.ol-fold>summary::-webkit-details-marker{display:none}
.olympus-report details.ol-fold>summary .ol-n::before{content:"\\25BE  ";color:var(--ol-muted)}
.olympus-report details.ol-fold:not([open])>summary .ol-t::after{content:" \\2026  }";color:var(--ol-muted)}
.olympus-report details.ol-fold:not([open])>summary .ol-n::before{content:"\\25B8  "}
.olympus-report .tab{border-collapse:collapse;margin:.5em .6em;font-variant-numeric:tabular-nums}
.olympus-report .tab th,.olympus-report .tab td{border-bottom:1px solid var(--ol-border);padding:.2em .8em;text-align:right}
.olympus-report .tab th:first-child{text-align:left;font-weight:400}
.olympus-report .tab thead th{font-weight:600}
.olympus-report .mem .bar{width:14em;text-align:left}
.olympus-report .mem .bar span{display:inline-block;height:.8em;background:var(--ol-link);border-radius:2px;vertical-align:middle}
.olympus-report .ol-costs td.ol-cfig{white-space:nowrap}
.olympus-report .ol-costs .ol-cs{display:inline-block;min-width:2.8em;margin-left:.4em;color:var(--ol-muted)}
.olympus-report .ol-costs .ol-cbar{display:inline-block;width:4em;height:.7em;margin-left:.3em;background:var(--ol-code-bg);box-shadow:inset 0 0 0 1px var(--ol-border);border-radius:2px;vertical-align:middle;overflow:hidden}
.olympus-report .ol-costs .ol-cbar span{display:block;height:100%;background:var(--ol-link)}
.olympus-report .ol-costs .ol-ccode{text-align:left;max-width:30em;overflow:hidden;text-overflow:ellipsis;white-space:nowrap}
.olympus-report .ol-costs .ol-ctotal>*{font-weight:600;border-top:2px solid var(--ol-border)}
.olympus-report .ol-costs .ol-cvia>*{font-size:90%;opacity:.8}
.olympus-report .ol-costs .ol-cvia th{font-weight:400;padding-left:1.5em}
.olympus-report .ol-costs .ol-c-compiler-made th,.olympus-report .ol-costs .ol-c-arguments th{font-style:italic}
.olympus-report .ol-cbody{padding:0 .6em .4em}
.olympus-report .ol-cbody>p,.olympus-report .ol-cbody>h4,.olympus-report .ol-cbody>ul{margin:.4em .6em}
.olympus-report .ol-cbody>h4{margin-top:.9em}
.olympus-report .ol-clines thead th:nth-child(2),.olympus-report .ol-cbuf th,.olympus-report .ol-cbuf td,.olympus-report .ol-ccoll th,.olympus-report .ol-ccoll td{text-align:left}
.olympus-report .ol-cshard code{display:block;white-space:pre-wrap;overflow-wrap:anywhere}
.olympus-report ul.ol-cshard li>code{display:inline}
.olympus-report .ol-cargs code{display:block;overflow-wrap:anywhere}
.olympus-report .ol-clabel{color:var(--ol-muted);font-size:.9em}
.olympus-report details.ol-cfold>summary{cursor:pointer;margin:.4em .8em}
.olympus-report .ol-costs .ol-cl{display:block;white-space:nowrap}
.olympus-report .ol-costs .ol-citer{font-weight:400;font-size:.85em;color:var(--ol-muted);white-space:nowrap}
.olympus-report .ol-ccoll th code{white-space:nowrap}
.olympus-report .failure{border:1px solid var(--ol-bad);background:var(--ol-bad-bg);border-radius:6px;padding:.3em .8em;margin:.4em 0}
.olympus-report .failure pre{white-space:pre-wrap;margin:.3em 0;font-family:var(--jp-code-font-family,monospace)}
.olympus-report .unavailable,.olympus-report .cap,.olympus-report .note{color:var(--ol-muted);margin:.4em .8em}
.olympus-report .k,.olympus-report .kd,.olympus-report .kn,.olympus-report .kr,.olympus-report .ow{color:var(--ol-kw)}
.olympus-report .nb,.olympus-report .bp,.olympus-report .nf,.olympus-report .fm{color:var(--ol-op)}
.olympus-report .kt,.olympus-report .nc{color:var(--ol-ty)}
.olympus-report .m,.olympus-report .mi,.olympus-report .mf,.olympus-report .mh,.olympus-report .il,.olympus-report .no{color:var(--ol-num)}
.olympus-report .s,.olympus-report .s1,.olympus-report .s2,.olympus-report .sa,.olympus-report .sd,.olympus-report .se{color:var(--ol-str)}
.olympus-report .c,.olympus-report .c1,.olympus-report .cm,.olympus-report .cp,.olympus-report .ch,.olympus-report .cs{color:var(--ol-com);font-style:italic}
.olympus-report .na,.olympus-report .nd{color:var(--ol-ty)}
""".replace("\n", "")
    + _palette()
)
