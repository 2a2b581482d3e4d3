"""Syntax highlighting of stage texts and Python source, one HTML string per line.

Uses the Pygments lexers of :mod:`olympus_jupyter.highlight.lexers` (and Pygments' own
Python lexer); the HTML escapes every character of the input.

>>> highlight_lines("%0 = stablehlo.add %a, %b : tensor<f32>", "stablehlo")[0]  # doctest: +ELLIPSIS
'<span class="...">%0</span>...stablehlo.add...'
>>> highlight_lines("<script>", "python")
['<span class="o">&lt;</span><span class="n">script</span><span class="o">&gt;</span>']
"""

from __future__ import annotations

import functools

from pygments.lexers import PythonLexer
from pygments.token import STANDARD_TYPES

from olympus_jupyter.highlight.lexers import HLOLexer, OlympusprLexer, StableHLOLexer

LEXERS = {
    "olympuspr": OlympusprLexer,
    "stablehlo": StableHLOLexer,
    "hlo": HLOLexer,
    "compiled": HLOLexer,
    "python": PythonLexer,
}


@functools.lru_cache(maxsize=None)
def _lexer(language: str):
    try:
        return LEXERS[language](stripnl=False, ensurenl=False)
    except KeyError:
        raise ValueError(
            f"No highlighter for {language!r}; choose from {', '.join(LEXERS)}."
        ) from None


@functools.lru_cache(maxsize=None)
def css_class(ttype) -> str:
    """Pygments' short CSS class of a token type (that of its nearest styled parent)."""
    while ttype not in STANDARD_TYPES:
        ttype = ttype.parent
    return STANDARD_TYPES[ttype]


def highlight_lines(text: str, language: str) -> list[str]:
    """``text`` highlighted as HTML, split into its lines (no trailing newline).

    The markup is what Pygments' ``HtmlFormatter`` writes (a span with the token's
    short class), made directly: reports highlight long texts, and the formatter's
    general machinery costs as much as lexing. Results are remembered for the last
    few texts: a report shown again with other options highlights nothing anew.
    """
    if not text:
        return [""] if text == "" else []
    return list(_highlight(text, language))


def _escape(text: str) -> str:
    """``&``, ``<`` and ``>`` escaped (str.replace is many times faster than
    str.translate, on long texts and on tokens alike)."""
    return text.replace("&", "&amp;").replace("<", "&lt;").replace(">", "&gt;")


def plain_lines(text: str) -> list[str]:
    """``text`` as escaped HTML lines, not highlighted: what :func:`highlight_lines`
    gives, without the colours, at a fraction of the cost (for HTML that is only a
    fallback, such as the static part of a display whose interactive view colours
    the text itself).

    >>> plain_lines("a < b" + chr(10) + "c")
    ['a &lt; b', 'c']
    """
    if not text:
        return [""] if text == "" else []
    lines = _escape(text).split("\n")  # one pass over the text, not one per line
    if text.endswith("\n"):
        lines.pop()
    return lines


@functools.lru_cache(maxsize=32)
def _highlight(text: str, language: str) -> tuple[str, ...]:
    lines: list[str] = []
    current: list[str] = []
    append = current.append
    classes: dict = {}
    for _, ttype, value in _lexer(language).get_tokens_unprocessed(text):
        cls = classes.get(ttype)
        if cls is None:
            cls = classes[ttype] = css_class(ttype)
        if "\n" not in value:
            value = _escape(value)
            append(f'<span class="{cls}">{value}</span>' if cls else value)
            continue
        for k, piece in enumerate(value.split("\n")):
            if k:
                lines.append("".join(current))
                current = []
                append = current.append
            if piece:
                piece = _escape(piece)
                append(f'<span class="{cls}">{piece}</span>' if cls else piece)
    if current or not text.endswith("\n"):
        lines.append("".join(current))
    n = text.count("\n") + (0 if text.endswith("\n") else 1)
    return tuple(lines[:n])
