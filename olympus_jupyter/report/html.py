"""The ``text/html`` form of a report: static, self-contained, readable with no script.

Every source line that made ops gets a colour; its ops carry that colour in every
stage. Source lines link (plain anchors) to what they became; each op line names
the source line it came from. Long regions and computations fold (``<details>``);
long stage texts are capped unless ``full=True``. Light and dark themes come from
CSS variables, following JupyterLab's when present. Everything that comes from
the user's program is escaped.

>>> from olympus_jupyter import inspect
>>> html = render_html(inspect(lambda x: x * 2, 1.0))
>>> html.startswith('<div class="olympus-report"') and '<script' not in html
True
"""
from __future__ import annotations

import dataclasses
import html as _html
import itertools
import os
import uuid
from collections.abc import Iterable, Sequence

from olympus import stage_registry
from olympus.provenance import Provenance, Stage

from olympus_jupyter.highlight.render import highlight_lines
from olympus_jupyter.report.text import format_bytes

#: Lines of one stage text shown inline before the rest is left out (``full=False``).
MAX_LINES = 1500
#: Stages with more lines than this start with nested folds closed.
OPEN_FOLDS_UP_TO = 400
PALETTE_SIZE = 10

def esc(text: object) -> str:
    """HTML-escapes anything (quotes too)."""
    return _html.escape(str(text), quote=True)


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
    callers: set[tuple[int, int]] = set()
    for loc in model.locations:
        keys = [(model.frames[i].file, model.frames[i].line) for i in loc.frames]
        inside = [k for k, (f, line) in enumerate(keys)
                  if f == fn.file and fn.first_line <= line <= last]
        if inside:
            callers.update(key for key in keys[inside[-1] + 1:]
                           if not (key[0] == fn.file and fn.first_line <= key[1] <= last))
    return callers


def source_colors(model: Provenance | None,
                  callers: set[tuple[int, int]]) -> dict[tuple[int, int], int]:
    """A palette slot for every (file, line) that made ops, in source order (the
    lines the function was called from get none)."""
    if model is None:
        return {}
    lines = [(e.file, e.line) for e in model.lines if (e.file, e.line) not in callers]
    return {key: k % PALETTE_SIZE for k, key in enumerate(lines)}


def _short_path(path: str) -> str:
    return os.path.basename(path) or path


def _primary_frame(model: Provenance, op):
    if op.location is None:
        return None
    frames = model.locations[op.location].frames
    return model.frames[frames[0]] if frames else None


def stage_marks(model: Provenance, stage: Stage, report_stage: str, uid: str,
                callers: set[tuple[int, int]],
                colors: dict[tuple[int, int], int], debug_info: bool) -> dict[int, LineMark]:
    """For each text line where an op starts: its source line's colour and a note."""
    marks: dict[int, LineMark] = {}
    ops = stage.ops
    for op in ops:
        if op.lines is None or op.lines[0] in marks:
            continue
        fr = _primary_frame(model, op)
        if fr is None:
            continue
        color = colors.get((fr.file, fr.line))
        note = ""
        href = None
        if color is None and (fr.file, fr.line) in callers:
            note = "whole function" if debug_info else ""
        elif debug_info:
            note = f"{_short_path(model.files[fr.file].path)}:{fr.line}"
            if fr.function:
                note += f" ({fr.function})"
            href = f"#{uid}-source-{fr.file}-{fr.line}"
        if op.fusion is not None:
            holder = ops[op.fusion]
            note = f"{note} · in {holder.label or holder.name}".lstrip(" ·")
        marks[op.lines[0]] = LineMark(color, note, href)
    return marks


# -- folds --------------------------------------------------------------------------

_HLO_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def table_fold(lines: Sequence[str]) -> list[Fold]:
    """The source tables of an HLO text (``FileNames`` ... ``StackFrames``), folded shut."""
    first = next((i for i, l in enumerate(lines[:50], start=1) if l.strip() == "FileNames"), None)
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
    folds = table_fold(stage.text.split("\n")) + [Fold(c.lines[0], c.lines[1], open=not (many and c.fusion is not None))
             for c in stage.computations if c.lines[1] > c.lines[0]]
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
                folds.append(Fold(start, i, open=len(lines) <= OPEN_FOLDS_UP_TO
                                  or lines[start - 1].startswith("ENTRY")))
    return folds


def _nested(folds: Iterable[Fold], limit: int) -> list[Fold]:
    """Folds clipped to ``limit`` lines, keeping only properly nested ones."""
    kept: list[Fold] = []
    stack: list[Fold] = []
    for f in sorted(folds, key=lambda f: (f.start, -f.end)):
        if f.start >= limit:
            continue
        f = dataclasses.replace(f, end=min(f.end, limit))
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

def _line_html(uid: str, stage: str, number: int, code: str, mark: LineMark | None) -> str:
    cls = "ol-l" if mark is None or mark.color is None else f"ol-l ol-src{mark.color}"
    note = ""
    if mark is not None and mark.note:
        if mark.href:
            note = f'<a class="ol-a" href="{esc(mark.href)}">{esc(mark.note)}</a>'
        else:
            note = f'<span class="ol-a">{esc(mark.note)}</span>'
    return (f'<span class="{cls}" id="{uid}-{stage}-L{number}"><span class="ol-n">{number}</span>'
            f'<span class="ol-t">{code}</span>{note}</span>')


def code_block(uid: str, stage: str, highlighted: Sequence[str], marks: dict[int, LineMark],
               folds: list[Fold], limit: int) -> str:
    """Lines as HTML, with ``<details>`` around each fold (summary = its first line)."""
    shown = min(len(highlighted), limit)
    out: list[str] = []
    folds = _nested(folds, shown)
    starts = {f.start: f for f in folds}
    closing: list[int] = []
    for number in range(1, shown + 1):
        line = _line_html(uid, stage, number, highlighted[number - 1], marks.get(number))
        fold = starts.get(number)
        if fold is not None:
            out.append(f'<details class="ol-fold"{" open" if fold.open else ""}><summary>{line}</summary>')
            closing.append(fold.end)
        else:
            out.append(line)
        while closing and closing[-1] == number:
            closing.pop()
            out.append("</details>")
    out.extend("</details>" for _ in closing)
    return f'<div class="code">{"".join(out)}</div>'


def _capped_note(total: int, shown: int, stage: str) -> str:
    if total <= shown:
        return ""
    return (f'<p class="cap">Showing the first {shown:,} of {total:,} lines of this stage. '
            f"The full text is in <code>report.stage_text({stage!r})</code>, in the interactive "
            f"JupyterLab view, and in <code>report.save('report.html')</code> "
            f"(or <code>%olympus_lower --full</code>).</p>")


# -- sections -------------------------------------------------------------------------

def _section(uid: str, key: str, title: str, body: str, meta: str = "", open_: bool = True) -> str:
    meta_html = f' <span class="meta">{esc(meta)}</span>' if meta else ""
    return (f'<details class="stage" id="{uid}-{key}"{" open" if open_ else ""}>'
            f'<summary><span class="title">{esc(title)}</span>{meta_html}</summary>'
            f"{body}</details>")


def _unavailable(uid: str, key: str, reason: str) -> str:
    return _section(uid, key, stage_registry.stage(key).title,
                    f'<p class="unavailable">Not available: {esc(reason)}.</p>',
                    "unavailable", open_=True)


def _op_summary(names: list[str]) -> str:
    counts: dict[str, int] = {}
    for n in names:
        counts[n] = counts.get(n, 0) + 1
    parts = [f"{n}×{c}" if c > 1 else n for n, c in counts.items()]
    return ", ".join(parts[:4]) + (", …" if len(parts) > 4 else "")


def source_section(report, uid: str, colors, callers) -> str:
    model = report.provenance
    if model is None:
        return ""
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
    blocks = []
    order = sorted(wanted, key=lambda f: (f != fn.file, f))
    for fi in order:
        src = model.files[fi]
        numbers = sorted(n for n in wanted[fi] if n > 0)
        texts = [src.line(n) for n in numbers]
        if not numbers or all(t is None for t in texts):
            continue
        code = "\n".join(t or "" for t in texts)
        highlighted = highlight_lines(code, "python") if code else []
        rows = []
        prev = None
        for n, hl in zip(numbers, highlighted + [""] * (len(numbers) - len(highlighted))):
            if prev is not None and n != prev + 1:
                rows.append('<span class="ol-l ol-gap"><span class="ol-n">⋯</span></span>')
            prev = n
            entry = by_line.get((fi, n))
            cls = "ol-l" if entry is None else f"ol-l ol-src{colors[(fi, n)]}"
            links = []
            if entry is not None:
                for rs in stages:
                    idx = entry.ops.get(rs, ())
                    if not idx or rs not in model.stages:
                        continue
                    st = model.stages[rs]
                    first = next((st.ops[i].lines[0] for i in idx if st.ops[i].lines), None)
                    label = f"{rs}: {_op_summary([st.ops[i].name for i in idx])}"
                    if first is not None:
                        links.append(f'<a href="#{uid}-{rs}-L{first}">{esc(label)}</a>')
                    else:
                        links.append(esc(label))
            note = f'<span class="ol-a">{" · ".join(links)}</span>' if links else ""
            rows.append(f'<span class="{cls}" id="{uid}-source-{fi}-{n}"><span class="ol-n">{n}'
                        f'</span><span class="ol-t">{hl}</span>{note}</span>')
        blocks.append(f'<div class="file">{esc(src.path)}</div><div class="code">{"".join(rows)}</div>')
    if not blocks:
        body = '<p class="unavailable">The source of this function could not be read.</p>'
    else:
        body = "".join(blocks)
    where = ""
    if fn.file is not None:
        where = f"{_short_path(model.files[fn.file].path)}:{fn.first_line}"
    return _section(uid, "source", f"Source · {fn.name}", body, where)


def text_stage_section(report, uid: str, key: str, colors, callers,
                       full: bool) -> str:
    model = report.provenance
    spec = stage_registry.stage(key)
    limit = 10**12 if full else MAX_LINES
    if not spec.linked:
        text = report.texts.get(key)
        if text is None:
            return _unavailable(uid, key, report.unavailable.get(key, f"not {spec.step}ed"))
        lines = text.rstrip("\n").split("\n")
        highlighted = highlight_lines("\n".join(lines[:limit]), spec.language)
        body = code_block(uid, key, highlighted, {}, brace_folds(lines), limit)
        return _section(uid, key, spec.title,
                        body + _capped_note(len(lines), min(limit, len(lines)), key),
                        f"{len(lines):,} lines")
    if model is None or key not in model.stages:
        return _unavailable(uid, key, report.unavailable.get(key, "not made"))
    stage = model.stages[key]
    lines = stage.text.rstrip("\n").split("\n")
    highlighted = highlight_lines("\n".join(lines[:limit]), spec.language)
    marks = stage_marks(model, stage, key, uid, callers, colors, report.debug_info)
    body = code_block(uid, key, highlighted, marks, stage_folds(stage, len(lines)), limit)
    meta = f"{len(stage.ops):,} {spec.unit} · {len(lines):,} lines"
    if spec.step in report.timings:
        meta += f" · {spec.step} {report.timings[spec.step] * 1e3:.1f} ms"
    extra = ""
    if stage.collectives:
        names = ", ".join(sorted({stage.ops[i].name for i in stage.collectives}))
        extra = f'<p class="note">Collectives inserted by the compiler: {esc(names)}.</p>'
    return _section(uid, key, stage_registry.stage(key).title,
                    extra + body + _capped_note(len(lines), min(limit, len(lines)), key), meta)


_COST_FIRST = ("flops", "transcendentals", "bytes accessed", "optimal_seconds", "utilization")


def _fmt_number(v) -> str:
    if v is None:
        return "—"
    if float(v).is_integer():
        return f"{int(v):,}"
    return f"{v:,.4g}"


def cost_section(report, uid: str) -> str:
    a = report.analyses
    if not a.cost_lowered and not a.cost_compiled:
        return _unavailable(uid, "cost", report.unavailable.get(
            "cost", "this backend reports no cost analysis"))
    before, after = a.cost_lowered or {}, a.cost_compiled or {}
    keys = sorted(set(before) | set(after),
                  key=lambda k: (k not in _COST_FIRST,
                                 _COST_FIRST.index(k) if k in _COST_FIRST else 0, k))
    rows = []
    for k in keys:
        b, c = before.get(k), after.get(k)
        change = ""
        if b not in (None, 0) and c is not None:
            change = f"{(c - b) / b * 100:+.0f}%"
        rows.append(f"<tr><th>{esc(k)}</th><td>{_fmt_number(b)}</td><td>{_fmt_number(c)}</td>"
                    f"<td>{esc(change)}</td></tr>")
    table = ('<table class="tab"><thead><tr><th>metric</th><th>before optimization (lowered)</th>'
             '<th>after optimization (compiled)</th><th>change</th></tr></thead>'
             f'<tbody>{"".join(rows)}</tbody></table>')
    return _section(uid, "cost", stage_registry.stage("cost").title, table)


_MEMORY_ROWS = (
    ("argument_size_in_bytes", "arguments"),
    ("output_size_in_bytes", "outputs"),
    ("temp_size_in_bytes", "temporaries"),
    ("alias_size_in_bytes", "aliased (outputs reusing arguments)"),
    ("generated_code_size_in_bytes", "generated code"),
    ("peak_memory_in_bytes", "peak"),
)


def memory_section(report, uid: str) -> str:
    mem = report.analyses.memory
    if not mem:
        return _unavailable(uid, "memory", report.unavailable.get(
            "memory", "this backend reports no memory analysis"))
    rows_spec = list(_MEMORY_ROWS) + [
        (k, k.replace("_size_in_bytes", "").replace("_", " "))
        for k in mem if k.startswith("host_") and mem[k]]
    biggest = max([mem.get(k, 0) for k, _ in rows_spec] + [1])
    rows = []
    for key, label in rows_spec:
        v = mem.get(key, 0)
        width = 0 if not v else max(1, round(v / biggest * 100))
        rows.append(f'<tr><th>{esc(label)}</th><td>{esc(format_bytes(v))}</td>'
                    f'<td class="bar"><span style="width:{width}%"></span></td></tr>')
    table = ('<table class="tab mem"><thead><tr><th>memory</th><th>size</th><th></th></tr>'
             f'</thead><tbody>{"".join(rows)}</tbody></table>')
    return _section(uid, "memory", stage_registry.stage("memory").title, table)


def failure_box(report) -> str:
    f = report.failure
    if f is None:
        return ""
    where = ""
    frame = f.user_frame
    if frame is not None:
        code = f"<pre>{esc(frame.code)}</pre>" if frame.code else ""
        where = (f'<p>at <code>{esc(frame.file)}:{frame.line}</code> in '
                 f'<code>{esc(frame.function)}</code></p>{code}')
    return (f'<div class="failure" role="alert"><p><b>{esc(f.stage.capitalize())} failed</b>: '
            f'<code>{esc(f.error_type)}</code></p>{where}<pre>{esc(f.message)}</pre></div>')


def header(report, uid: str) -> str:
    timings = " · ".join(f"{esc(k)} {v * 1e3:.1f} ms" for k, v in report.timings.items())
    nav = " ".join(f'<a href="#{uid}-{s}">{esc(s)}</a>' for s in report.stages)
    return (f'<div class="head"><span class="name">{esc(report.name)}</span>'
            f' <span class="meta">for {esc(", ".join(report.platforms))}'
            f'{" · " + timings if timings else ""}</span><nav>{nav}</nav></div>')


# -- the whole report -----------------------------------------------------------------

def render_html(report, *, full: bool = False, standalone: bool = False) -> str:
    """The report as one ``<div>`` of static HTML (a whole page when ``standalone``)."""
    uid = "ol" + uuid.uuid4().hex[:8]
    callers = caller_lines(report.provenance)  # once: every section asks
    colors = source_colors(report.provenance, callers)
    parts = [header(report, uid), failure_box(report)]
    analyses = {"cost": cost_section, "memory": memory_section}
    for key in report.stages:
        kind = stage_registry.stage(key).kind
        if kind == "source":
            parts.append(source_section(report, uid, colors, callers))
        elif kind == "program":
            parts.append(text_stage_section(report, uid, key, colors, callers, full))
        else:
            parts.append(analyses[key](report, uid))
    body = (f'<div class="olympus-report" id="{uid}" data-olympus-report="1">'
            f"<style>{STYLE}</style>{''.join(parts)}</div>")
    if not standalone:
        return body
    return ("<!DOCTYPE html><html lang=\"en\"><head><meta charset=\"utf-8\">"
            f"<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
            f"<title>Olympus report: {esc(report.name)}</title>"
            "<style>body{margin:1.5rem;background:var(--ol-page,#fff)}"
            "@media (prefers-color-scheme: dark){body{background:#0d1117}}</style>"
            f"</head><body>{body}</body></html>")


def _palette() -> str:
    hues = [210, 30, 130, 280, 0, 175, 50, 320, 95, 250]
    rules = []
    for k, h in itertools.islice(enumerate(hues), PALETTE_SIZE):
        rules.append(f".olympus-report .ol-src{k}{{background:hsla({h},75%,55%,.16);"
                     f"box-shadow:inset 3px 0 hsl({h},70%,50%)}}")
    return "".join(rules)


STYLE = """
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
.olympus-report details.ol-fold>summary{list-style:none;cursor:pointer;display:block}
.olympus-report details.ol-fold>summary::-webkit-details-marker{display:none}
.olympus-report details.ol-fold>summary .ol-n::before{content:"▾ ";color:var(--ol-muted)}
.olympus-report details.ol-fold:not([open])>summary .ol-t::after{content:" … }";color:var(--ol-muted)}
.olympus-report details.ol-fold:not([open])>summary .ol-n::before{content:"▸ "}
.olympus-report .tab{border-collapse:collapse;margin:.5em .6em;font-variant-numeric:tabular-nums}
.olympus-report .tab th,.olympus-report .tab td{border-bottom:1px solid var(--ol-border);padding:.2em .8em;text-align:right}
.olympus-report .tab th:first-child{text-align:left;font-weight:400}
.olympus-report .tab thead th{font-weight:600}
.olympus-report .mem .bar{width:14em;text-align:left}
.olympus-report .mem .bar span{display:inline-block;height:.8em;background:var(--ol-link);border-radius:2px;vertical-align:middle}
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
""".replace("\n", "") + _palette()
