"""Syntax highlighting of stage texts and Python source, one HTML string per line.

Uses the Pygments lexers of :mod:`olympus_jupyter.lexers` (and Pygments' own
Python lexer); the HTML escapes every character of the input.

>>> highlight_lines("%0 = stablehlo.add %a, %b : tensor<f32>", "stablehlo")[0]  # doctest: +ELLIPSIS
'<span class="...">%0</span>...stablehlo.add...'
>>> highlight_lines("<script>", "python")
['<span class="o">&lt;</span><span class="n">script</span><span class="o">&gt;</span>']
"""
from __future__ import annotations

import functools

from pygments import highlight
from pygments.formatters import HtmlFormatter
from pygments.lexers import PythonLexer

from olympus_jupyter.lexers import HLOLexer, OlympusprLexer, StableHLOLexer

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
        raise ValueError(f"No highlighter for {language!r}; choose from "
                         f"{', '.join(LEXERS)}.") from None


_FORMATTER = HtmlFormatter(nowrap=True)


def highlight_lines(text: str, language: str) -> list[str]:
    """``text`` highlighted as HTML, split into its lines (no trailing newline)."""
    if not text:
        return [""] if text == "" else []
    html = highlight(text, _lexer(language), _FORMATTER)
    lines = html.split("\n")
    n = text.count("\n") + (0 if text.endswith("\n") else 1)
    return lines[:n]
