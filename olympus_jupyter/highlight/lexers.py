"""Pygments lexers for the three languages a staged Olympus program is written in.

===========================  =========================  ======================
Stage text                   Lexer                      Aliases
===========================  =========================  ======================
``traced.olympuspr``         :class:`OlympusprLexer`    ``olympuspr``
``lowered.as_text()``        :class:`StableHLOLexer`    ``stablehlo``,
                                                        ``mlir-stablehlo``
``lowered.as_text('hlo')``,  :class:`HLOLexer`          ``hlo``
``compiled.as_text()``
===========================  =========================  ======================

They are registered as Pygments plugins (the ``pygments.lexers`` entry points of
the ``olympus`` distribution), so ``pygmentize -l hlo module.txt`` and
``pygments.lexers.get_lexer_by_name('stablehlo')`` find them.

The three share one vocabulary of token types, so one style colours every stage
alike: keywords (``Keyword``), operations and primitives (``Name.Builtin``),
types and shapes (``Keyword.Type``), values (``Name.Variable``), functions and
computations (``Name.Function``), attribute names (``Name.Attribute``), enum
values (``Name.Constant``), numbers, strings, and source locations as comments.

Highlighting is part of building a report, so the token tables are laid out for
speed (``benchmarks/bench_lexers.py`` measures them). A ``RegexLexer`` tries the
rules of a state in order until one matches, and a try that fails costs about a
third as much as a token. So the most frequent rules come first, each ahead of
other rules only where no text can match both: they start with different
characters, or a lookahead leaves the words of the other rule to it (``true=``
is no attribute name); rules that can match the same text keep their relative
order, so every character gets the type it would get from the rules in their
plain order. Tokens are as long as their type allows (runs of punctuation, a
whole ``tensor<3xf32>``, a newline with the next line's indentation, ``[]`` or
``),`` across the state they open and close); the commonest sequence is a single
match (``%x = f32[3]{0} add(``); and rules anchored at a line start are tried
only there, in a state of their own.

>>> from pygments import highlight
>>> from pygments.formatters import HtmlFormatter
>>> from pygments.lexers import get_lexer_by_name
>>> hlo = get_lexer_by_name("hlo")
>>> hlo
<pygments.lexers.HLOLexer>
>>> html = highlight("%x.1 = f32[3]{0} parameter(0)", hlo, HtmlFormatter(nowrap=True))
>>> print(html.replace('<span class="w"> </span>', ' ').strip())
<span class="nv">%x.1</span> <span class="o">=</span> <span class="kt">f32[3]{0}</span> <span class="nb">parameter</span><span class="p">(</span><span class="mi">0</span><span class="p">)</span>
"""

from __future__ import annotations

import re

from pygments.lexer import RegexLexer, bygroups, default, include, words
from pygments.token import (
    Comment,
    Keyword,
    Name,
    Number,
    Operator,
    Punctuation,
    String,
    Text,
    Whitespace,
)

__all__ = ["OlympusprLexer", "StableHLOLexer", "HLOLexer"]

# Numbers shared by the three languages (most specific first).
_FLOAT = r"-?(?:\d+\.\d*(?:[eE][-+]?\d+)?|\d+[eE][-+]?\d+)"
_SPECIAL_FLOAT = r"-?(?:inf|nan)\b"
_HEX = r"-?0[xX][0-9a-fA-F]+\b"
_INT = r"-?\d+\b"

_DQ_STRING = r'"(?:\\.|[^"\\\n])*"'
_SQ_STRING = r"'(?:\\.|[^'\\\n])*'"


def _token_pairs(tokens):
    """``[(token type, text)]`` without whitespace: what the docstring examples show."""
    return [(str(t), v) for t, v in tokens if v.strip()]


class OlympusprLexer(RegexLexer):
    """The olympuspr language: programs as ``traced.olympuspr`` prints them.

    Keywords ``lambda``, ``let``, ``in``; primitives (``sin``, ``dot_general``,
    ``scatter-add``) are ``Name.Builtin``; variables ``a`` with types
    ``f32[3,4]``, ``key<fry>[]``, ``bf16[]``; primitive parameters
    ``[axes=(0,) olympuspr={ lambda ... }]`` with ``Name.Attribute`` keys and
    nested programs; literals ``2.0:f32[]``, ``-inf:f32[]``; the source
    information that ``pretty_print(source_info=True)`` appends, ``# f.py:2:20 (f)``,
    is a comment.

    >>> from olympus_jupyter.highlight.lexers import OlympusprLexer, _token_pairs
    >>> text = "{ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }"
    >>> for pair in _token_pairs(OlympusprLexer().get_tokens(text)):
    ...     print(*pair)
    Token.Punctuation {
    Token.Keyword lambda
    Token.Punctuation ;
    Token.Name.Variable a
    Token.Punctuation :
    Token.Keyword.Type f32[3]
    Token.Punctuation .
    Token.Keyword let
    Token.Name.Variable b
    Token.Punctuation :
    Token.Keyword.Type f32[3]
    Token.Operator =
    Token.Name.Builtin mul
    Token.Name.Variable a
    Token.Literal.Number.Float 2.0
    Token.Punctuation :
    Token.Keyword.Type f32[]
    Token.Keyword in
    Token.Punctuation (
    Token.Name.Variable b
    Token.Punctuation ,)
    Token.Punctuation }
    """

    name = "Olympuspr"
    aliases = ["olympuspr"]
    filenames = ["*.olympuspr"]
    mimetypes = ["text/x-olympuspr"]
    url = "https://docs.jax.dev/en/latest/jaxpr.html"
    version_added = ""

    #: A primitive's name: ``add``, ``custom_jvp_call``, ``scatter-add``.
    _prim = r"[a-zA-Z_][\w.]*(?:-[\w.]+)*"
    #: A value's type after ``:``: ``f32[3,4]``, ``key<fry>[]``,
    #: ``f32<host>[8@x]{V:x}`` (memory space, sharded dims, varying axes),
    #: ``Ref{f32[3]}``, ``Ref<default>{f32[8,128]}`` (a Pallas kernel's), ``Tok``.
    _type = (
        r"(?:[a-zA-Z_]\w*(?:<\w+>)?\[[^\]\n]*\](?:\{[^{}\n]*\})?"
        r"|[A-Z]\w*(?:<\w+>)?\{[^{}\n]*\}|Tok\b)"
    )
    #: NumPy dtype names, as parameters print them (``new_dtype=float32``).
    _dtype = r"(?:bool|u?int\d+|float\d+|bfloat16|complex\d+|float0|float\d+_e\w+)"
    #: Words that later rules type otherwise than names: ``float32``, ``None``, ``inf``.
    _value_word = r"(?:" + _dtype + r"|True|False|None|inf|nan)"
    #: Lines that start with a shared program (``let _where = { lambda ... } in``)
    #: or with the primitive of an equation without outputs (``debug_print[...] a``).
    _let_line = r"(let)(\s+)(" + _prim + r")(\s+)(=)"
    _let_line_types = (Keyword, Whitespace, Name.Function, Whitespace, Operator)
    _prim_line = r"([^\S\n]*)(" + _prim + r")(?=\[)"

    tokens = {
        # The start of the text; line starts after it are lexed with their newline.
        "root": [
            (r"^" + _let_line, bygroups(*_let_line_types), "top"),
            (r"^" + _prim_line, bygroups(Whitespace, Name.Builtin), "top"),
            default("top"),
        ],
        # The top-level braces open no state: nothing after them can pop too far.
        "top": [
            include("program"),
            (r"[{}]", Punctuation),
        ],
        # A nested program, the value of a parameter: ends at its closing brace.
        "nested": [
            include("program"),
            (r"\}", Punctuation, "#pop"),
            (r"\{", Punctuation),
        ],
        "program": [
            # Variables, with their types and the spaces after them: `a`,
            # `bc:f32[3]`, `_` (dropped). Not `lambda`, `let`, `in`, `float32`.
            (
                r"(?!(?:" + _value_word + r"|lambda|let|in)\b)"
                r"([a-zA-Z_]\w*)(?:(:)(" + _type + r"))?([^\S\n]*)",
                bygroups(Name.Variable, Punctuation, Keyword.Type, Whitespace),
            ),
            # A newline with the indentation after it, unless a line rule follows.
            (r"\n(?!let\s+" + _prim + r"\s+=|[^\S\n]*" + _prim + r"\[)[^\S\n]*", Whitespace),
            # The primitive of an equation, after ` = `.
            (
                r"(=)(\s+)(" + _prim + r")(\[)",
                bygroups(Operator, Whitespace, Name.Builtin, Punctuation),
                "params",
            ),
            (
                r"(=)(\s+)(" + _prim + r")([^\S\n]*)",
                bygroups(Operator, Whitespace, Name.Builtin, Whitespace),
            ),
            (r"[^\S\n]+", Whitespace),
            (r"(:)(" + _type + r")", bygroups(Punctuation, Keyword.Type)),
            (r"\[", Punctuation, "params"),
            (r"[\](),;.]+", Punctuation),
            (r"(\n)" + _let_line, bygroups(Whitespace, *_let_line_types)),
            (r"(\n)" + _prim_line, bygroups(Whitespace, Whitespace, Name.Builtin)),
            include("common"),
            (r"\blambda\b", Keyword),
            # `let` opens equations after the inputs (`... b:f32[]. let`); `in`
            # precedes the outputs `in (c,)` or ends a shared program `} in`.
            # Elsewhere they are variables (names run a..z, ba.., so `in` exists).
            (r"(?<=\. )let\b", Keyword),
            (r"\bin(?=\s*\()", Keyword),
            (r"(?<=\} )in\b", Keyword),
            (r"[a-zA-Z_]\w*", Name.Variable),
            # `<-` reads or swaps a Ref (a Pallas kernel's): `g:f32[8] <- e[...]`.
            (r"<-|[=*+\-]", Operator),
        ],
        # `[name=f olympuspr={ lambda ... } axes=(0,)]`: parameters, whose values
        # are Python reprs (ints, tuples, dtypes, enums, nested programs).
        "params": [
            (r"\s+", Whitespace),
            # Punctuation; `[]` opens and closes parameters: no state.
            (r"(?:[()},;.@]|\[\])+", Punctuation),
            # The closing bracket, with the punctuation after it (the same there).
            (r"\](?:[(),;.]|\[\])*", Punctuation, "#pop"),
            (r"(?!" + _value_word + r"\b)([a-zA-Z_]\w*)(=)", bygroups(Name.Attribute, Operator)),
            (r"\[", Punctuation, "#push"),
            (r"-?\d+(?![\w.])", Number.Integer),
            (r"(:)(" + _type + r")", bygroups(Punctuation, Keyword.Type)),
            (r"\{(?=\s*lambda\b)", Punctuation, "nested"),
            include("common"),
            # A word that starts with digits in a repr (a device kind:
            # `device_kind=NVIDIA H100 80GB HBM3`), after the numbers (`2j`).
            (r"\d+[a-zA-Z_]\w*", Name),
            (r"([a-zA-Z_]\w*)(=)", bygroups(Name.Attribute, Operator)),
            (r"[A-Z][A-Z0-9_]*\b", Name.Constant),
            (r"[a-zA-Z_]\w*", Name),
            (r"[(){},;:.@]", Punctuation),
            (r"[-+*/%<>=!?&|^~$\\`]", Operator),
            (r"[^\x00-\x7f]", Text),
        ],
        # What programs and parameters share; these overlap (`1`, `1.5`, `2j`,
        # `-inf`), so their order matters.
        "common": [
            # Source information (`source_info=True`) and name stacks.
            (r"#.*?$", Comment.Single),
            (_DQ_STRING, String.Double),
            (_SQ_STRING, String.Single),
            (r"\b" + _dtype + r"\b", Keyword.Type),
            (r"\b(?:True|False|None)\b", Keyword.Constant),
            (r"-?\d+(?:\.\d*)?(?:[eE][-+]?\d+)?j\b", Number.Float),  # complex
            (r"-?0[xX][0-9a-fA-FX]+\b", Number.Hex),  # `0xXXXX` hides addresses
            (_FLOAT, Number.Float),
            (_SPECIAL_FLOAT, Number.Float),
            (_INT, Number.Integer),
        ],
    }

    @staticmethod
    def analyse_text(text: str) -> float:
        if re.match(r"\s*(?:let\s+\w+\s+=\s+)?\{\s*lambda\b", text):
            return 0.8
        return 0.0


class StableHLOLexer(RegexLexer):
    """StableHLO, the MLIR text ``lowered.as_text()`` prints.

    ``module``, ``func.func``, ``return`` and other structure words are keywords;
    operations ``stablehlo.add``, ``"stablehlo.case"``, ``chlo.top_k``,
    ``sdy.sharding_constraint`` are ``Name.Builtin``; types ``tensor<3x4xf32>``,
    ``i32``, ``!stablehlo.token`` are ``Keyword.Type``; SSA values ``%0``, ``%arg0``,
    ``%cst_0``, ``%1#2`` are ``Name.Variable``; symbols ``@main`` are functions;
    attribute names (``olympus.result_info``, ``mhlo.sharding``, ``dims``) and
    attributes ``#sdy.sharding<...>`` are ``Name.Attribute``; enums ``LT``,
    ``DEFAULT`` are ``Name.Constant``; ``loc(...)`` and ``#loc12 = loc(...)``
    (``debug_info=True``) are comments.

    >>> from olympus_jupyter.highlight.lexers import StableHLOLexer, _token_pairs
    >>> text = "%1 = stablehlo.add %0, %arg0 : tensor<3xf32> loc(#loc3)"
    >>> for pair in _token_pairs(StableHLOLexer().get_tokens(text)):
    ...     print(*pair)
    Token.Name.Variable %1
    Token.Operator =
    Token.Name.Builtin stablehlo.add
    Token.Name.Variable %0
    Token.Punctuation ,
    Token.Name.Variable %arg0
    Token.Operator :
    Token.Keyword.Type tensor<3xf32>
    Token.Comment loc(#loc3)
    """

    name = "StableHLO"
    aliases = ["stablehlo", "mlir-stablehlo"]
    filenames = ["*.stablehlo", "*.stablehlo.mlir"]
    mimetypes = ["text/x-stablehlo"]
    url = "https://openxla.org/stablehlo/spec"
    version_added = ""

    _ident = r"[a-zA-Z_][\w$]*"
    _suffix = r"[\w$.\-]+"
    _declarations = ("module", "func.func")
    _keywords = (
        "attributes",
        "public",
        "private",
        "nested",
        "return",
        "cond",
        "do",
        "applies",
        "across",
        "init",
        "reducer",
        "dense",
        "dense_resource",
        "array",
        "sparse",
        "unit",
    )
    _scalar_type = r"(?:[su]?i\d+|f\d+|bf16|tf32|f\d+E\w+|index|none)"
    #: Dotted words that rules after the operations' type otherwise (`func.func`).
    _not_op = (
        r"(?!(?:"
        + "|".join(re.escape(w) for w in _declarations + _keywords)
        + r"|true|false|x|call|"
        + _scalar_type
        + r")\b)"
    )

    tokens = {
        "root": [
            (r"\s+", Whitespace),
            # Brackets, commas, dots; not `{-#`, `<=`, `>=`.
            (r"(?:[()\[\],.}]|\{(?!-#)|<(?!=)|>(?!=))+", Punctuation),
            (r"->|<=|>=|[=:*+?]", Operator),
            (r"%" + _suffix + r"(?:#\d+)?", Name.Variable),
            # A type without nested `<...>` in one token; the others open "type".
            (r"(?:tensor|memref|vector|tuple|complex)<[^<>]*>", Keyword.Type),
            (r"-?\d+(?![\w.])", Number.Integer),
            # Attribute names: `dims = [0]`, `olympus.result_info = "..."`.
            (
                r"(" + _ident + r"(?:\.\w+)*)(\s*)(=)(?!=)",
                bygroups(Name.Attribute, Whitespace, Operator),
            ),
            # Operations: `stablehlo.add`, `chlo.erf_inv`, `sdy.mesh`, `func.call`.
            (_not_op + r"[a-z_]\w*(?:\.\w+)+", Name.Builtin),
            (r"[A-Z][A-Z0-9_]*\b", Name.Constant),
            (r"\bx\b", Operator),  # `contracting_dims = [1] x [0]`, `[b, f]x[o, i]`
            # Locations (`debug_info=True`): `loc(...)` and `#loc3 = loc(...)`;
            # `loc(#loc3)` in one token.
            (r'\bloc\([^()"]*\)', Comment),
            (r"#loc\w*\s*=\s*loc\(", Comment, "loc"),
            (r"\bloc\(", Comment, "loc"),
            (r"#loc\w*", Comment),
            (r"\{-#|#-\}", Comment.Preproc),  # resource blobs
            (_DQ_STRING + r"(?=\()", Name.Builtin),  # generic form "stablehlo.case"(...)
            (_DQ_STRING, String.Double),
            (r"//.*?$", Comment.Single),
            (
                r"(module)(\s+)(@" + _suffix + ")",
                bygroups(Keyword.Declaration, Whitespace, Name.Namespace),
            ),
            (words(_declarations, suffix=r"\b"), Keyword.Declaration),
            (words(_keywords, suffix=r"\b"), Keyword),
            (r"\b(?:true|false)\b", Keyword.Constant),
            (r"(?:tensor|memref|vector|tuple|complex)<", Keyword.Type, "type"),
            (r"\b" + _scalar_type + r"\b", Keyword.Type),
            (r"!" + _ident + r"(?:\.\w+)*", Keyword.Type),
            (r"@" + _suffix, Name.Function),
            (r"@" + _DQ_STRING, Name.Function),
            (r"\^" + _suffix, Name.Label),
            (r"#" + _ident + r"(?:\.\w+)*", Name.Attribute),
            (_HEX, Number.Hex),
            (_FLOAT, Number.Float),
            (_INT, Number.Integer),
            (words(("call",), suffix=r"\b"), Name.Builtin),
            (r"[a-z_]\w*(?:\.\w+)+", Name.Builtin),
            (_ident, Name),
            (r"->|<=|>=|[=:*+?\-]", Operator),
            (r"[(){}\[\]<>,.]", Punctuation),
        ],
        # Inside `tensor<...>`: shapes, element types, encodings: all the type.
        "type": [
            (r"[^<>]+", Keyword.Type),
            (r">", Keyword.Type, "#pop"),
            (r"<", Keyword.Type, "#push"),
        ],
        # Inside `loc(...)`: names and strings, nested parentheses.
        "loc": [
            (r'[^()"]+', Comment),
            (r"\)", Comment, "#pop"),
            (r"\(", Comment, "#push"),
            (_DQ_STRING, Comment),
        ],
    }

    @staticmethod
    def analyse_text(text: str) -> float:
        if re.search(r"\bstablehlo\.\w+", text):
            return 1.0 if re.search(r"\bfunc\.func\b", text) else 0.5
        return 0.0


class HLOLexer(RegexLexer):
    """XLA HLO text: ``lowered.as_text('hlo')`` and ``compiled.as_text()``.

    ``HloModule``, ``ENTRY``, ``ROOT`` and the source-table headings
    (``FileNames``, ``StackFrames``...) are keywords; opcodes (``add``,
    ``get-tuple-element``, ``all-reduce``, ``fusion``) are ``Name.Builtin``;
    shapes with layouts ``f32[3,4]{1,0}``, ``pred[]``, ``s32[]``, ``bf16[2]``
    are ``Keyword.Type``; instructions ``%add.1`` / ``add.1`` are
    ``Name.Variable``; computations (headers, ``calls=``, ``to_apply=``) are
    ``Name.Function``; attribute names (``metadata``, ``sharding``,
    ``dimensions``) are ``Name.Attribute``; ``/*index=5*/`` is a comment.

    >>> from olympus_jupyter.highlight.lexers import HLOLexer, _token_pairs
    >>> text = "  ROOT %add.1 = f32[3]{0} add(%x, %y), metadata={op_name=\\"f\\"}"
    >>> for pair in _token_pairs(HLOLexer().get_tokens(text)):
    ...     print(*pair)
    Token.Keyword ROOT
    Token.Name.Variable %add.1
    Token.Operator =
    Token.Keyword.Type f32[3]{0}
    Token.Name.Builtin add
    Token.Punctuation (
    Token.Name.Variable %x
    Token.Punctuation ,
    Token.Name.Variable %y
    Token.Punctuation ),
    Token.Name.Attribute metadata
    Token.Operator =
    Token.Punctuation {
    Token.Name.Attribute op_name
    Token.Operator =
    Token.Literal.String.Double "f"
    Token.Punctuation }
    """

    name = "HLO"
    aliases = ["hlo"]
    filenames = ["*.hlo"]
    mimetypes = ["text/x-hlo"]
    url = "https://openxla.org/xla/operation_semantics"
    version_added = ""

    #: Instruction and computation names: `add.1`, `get-tuple-element.3`,
    #: `xla.sdy.manual_computation_body.2`, `%fused_computation`.
    _name = r"[a-zA-Z_][\w.]*(?:-[\w.]+)*"
    #: A value an operand names: an instruction, or an element of the tuple one
    #: gives, ``%param#0``: the modules XLA from jaxlib 0.12 dumps after each pass
    #: (the passes and partitioned stages) print no get-tuple-element, its operand
    #: and index are the name. ``#N`` repeated is taken too (a nested tuple's).
    _value = _name + r"(?:#\d+)*"
    #: An opcode: `add`, `get-tuple-element`, `all-reduce-start`.
    _opcode = r"[a-z][\w.]*(?:-[\w.]+)*"
    #: A shape: element type, dimensions, layout (`f32[3,4]{1,0:T(8,128)}`).
    _shape_type = r"(?:pred|token|opaque|bf16|tf32|c64|c128|[suf]\d+(?:e\d+m\d+\w*)?)"
    _shape = r"\b" + _shape_type + r"\[[^\]\n]*\](?:\{[^{}\n]*\})?"

    #: The headings of the source tables at the end of compiled modules.
    _tables = r"(?:FileNames|FunctionNames|FileLocations|StackFrames)\b"
    #: Words that rules after the fast ones type otherwise: ``true``, ``inf``.
    _keyword_value = r"(?:true|false|inf|nan)\b"
    #: ``calls=%f``, ``to_apply=%f``: the attributes naming a computation.
    _calls = (
        r"(?:to_apply|calls|condition|body|true_computation|false_computation"
        r"|scatter|select|comparator)"
    )
    #: The most common line, after its indentation, in one match:
    #: ``ROOT %x = f32[3]{0} add(`` (every part as the rules of "line" take it).
    _instruction = (
        r"(?:(ROOT)([^\S\n]+))?(%?" + _name + r")([^\S\n]*)(=)([^\S\n]+)"
        r"(" + _shape + r")([^\S\n]+)(" + _opcode + r")(\()"
    )
    _instruction_types = (
        Keyword,
        Whitespace,
        Name.Variable,
        Whitespace,
        Operator,
        Whitespace,
        Keyword.Type,
        Whitespace,
        Name.Builtin,
        Punctuation,
    )

    tokens = {
        # The start of a line, after its indentation (which the newline takes):
        # each rule goes on to "line". The rules anchored with `^` match only
        # where a line starts unindented.
        "root": [
            (
                r"(?!" + _tables + r")" + _instruction,
                bygroups(*_instruction_types),
                ("line", "operands"),
            ),
            (r"(?:[(){}\[\],.>]|<(?!=))+", Punctuation, "line"),
            # Computation headers.
            (r"^(?!" + _tables + r")%?" + _name + r"(?=\s+[({])", Name.Function, "line"),
            (r"^" + _tables, Keyword.Declaration, "line"),
            # Instructions: `  ROOT %name = shape opcode(operands), attr=value`.
            (
                r"(\s*)(%?" + _name + r")(\s*)(=)",
                bygroups(Whitespace, Name.Variable, Whitespace, Operator),
                "line",
            ),
            (
                r"(\s*)(ROOT)(\s+)(%?" + _name + r")(\s*)(=)",
                bygroups(Whitespace, Keyword, Whitespace, Name.Variable, Whitespace, Operator),
                "line",
            ),
            (
                r"^(HloModule)(\s+)(" + _name + ")",
                bygroups(Keyword.Namespace, Whitespace, Name.Namespace),
                "line",
            ),
            (
                r"^(ENTRY)(\s+)(%?" + _name + ")",
                bygroups(Keyword, Whitespace, Name.Function),
                "line",
            ),
            default("line"),
        ],
        # The rest of a line.
        "line": [
            (r"(?:[(){}\[\],.>]|<(?!=))+", Punctuation),
            (r"[^\S\n]+", Whitespace),
            # Attributes: `metadata={op_name="f"}`; not `calls=%f`, `true=`.
            (
                r"(?!" + _keyword_value + r"|" + _calls + r"=|(?:branch|called)_computations=)"
                r"(" + _name + r")(=)",
                bygroups(Name.Attribute, Operator),
            ),
            # The newline, with the indentation of the next line.
            (r"\n[^\S\n]*", Whitespace, "#pop"),
            (_DQ_STRING, String.Double),
            (r"-?\d+(?![\w.])", Number.Integer),
            (_shape, Keyword.Type),
            # Parameters in a computation's header: `(param_0: f32[3], x.1: s32[])`.
            (
                r"(?!" + _keyword_value + r")(" + _name + r")(:)",
                bygroups(Name.Variable, Punctuation),
            ),
            (r"->|<=|[=:*+?]", Operator),
            (r"(" + _opcode + r")(\()", bygroups(Name.Builtin, Punctuation), "operands"),
            # Called computations.
            (
                r"(" + _calls + r")(=)(%?" + _name + ")",
                bygroups(Name.Attribute, Operator, Name.Function),
            ),
            (
                r"((?:branch|called)_computations)(=)(\{)",
                bygroups(Name.Attribute, Operator, Punctuation),
                "computations",
            ),
            (r"\bk[A-Z]\w*(?![\w.(=:-])", Name.Constant),  # kLoop, kInput
            (r"%" + _value, Name.Variable),
            include("common"),
            (r"(" + _name + r")(=)", bygroups(Name.Attribute, Operator)),
            (r"(" + _name + r")(:)", bygroups(Name.Variable, Punctuation)),
            (r"\b(?:ENTRY|ROOT)\b", Keyword),
            (r"\bk[A-Z]\w*", Name.Constant),
            (r"[A-Z][A-Z0-9_]+\b", Name.Constant),  # LT, TOTALORDER, API_VERSION_...
            (_name, Name),
            # Dimension labels that start with a spatial dimension (TPU's 1-D
            # convolutions): `dim_labels=0bf_io0->0bf`.
            (r"\d+[a-zA-Z_]\w*", Name),
        ],
        "operands": [
            # The closing parenthesis, with the punctuation after it (the same
            # in "line" and in "operands").
            (r"\)(?:[{}\[\],.>]|<(?!=))*", Punctuation, "#pop"),
            (
                r"%" + _value + r"|(?!" + _keyword_value + r"|" + _shape_type + r"\[)" + _value,
                Name.Variable,
            ),
            (r"(?:[{}\[\],.>]|<(?!=))+", Punctuation),
            (r"-?\d+(?![\w.])", Number.Integer),
            (r"\s+", Whitespace),
            (r"\(", Punctuation, "#push"),
            include("common"),
            (_name, Name.Variable),
        ],
        "computations": [
            (r"\}", Punctuation, "#pop"),
            (r"\n", Whitespace),
            (r"[^\S\n]+", Whitespace),
            (r"%?" + _name, Name.Function),
            (r",", Punctuation),
        ],
        # What "line" and "operands" share; these overlap (`true(`, `-1`, `->`),
        # so their order matters.
        "common": [
            (r"/\*.*?\*/", Comment.Multiline),
            (r"//.*?$", Comment.Single),
            (_SQ_STRING, String.Single),
            (_DQ_STRING, String.Double),
            (_shape, Keyword.Type),
            (r"#[a-zA-Z_][\w.]*", Name.Attribute),  # `#sdy.mesh<...>` in attributes
            (r"@[\w.\-]+", Name.Function),
            (r"\b(?:true|false)\b", Keyword.Constant),
            # Window and convolution dimensions: `size=3x3 pad=1_1x0_1`.
            (r"\d+(?:_\d+)?(?:x\d+(?:_\d+)?)+\b|\d+_\d+\b", Number),
            (_HEX, Number.Hex),
            (_FLOAT, Number.Float),
            (_SPECIAL_FLOAT, Number.Float),
            (_INT, Number.Integer),
            (r"->|<=|[=:*+?\-]", Operator),
            (r"[(){}\[\]<>,.]", Punctuation),
        ],
    }

    @staticmethod
    def analyse_text(text: str) -> float:
        if re.match(r"\s*HloModule\b", text):
            return 1.0
        return 0.0
