"""Pygments lexers for olympuspr, StableHLO and HLO (``olympus_jupyter.highlight.lexers``).

The hard requirement: on real programs of every stage the lexers produce no
``Token.Error``. The corpus is staged at test time (``corpus_programs.py``):
loops, conditionals, random keys, FFT, many dtypes, gradients, custom_jvp/vjp,
a convolution, contractions, reductions, gather/scatter, effects and callbacks,
symbolic shapes, a cross-platform lowering, and sharded programs (Shardy and
GSPMD, shard_map collectives, pmap) staged in a subprocess with 8 host devices.
"""

from __future__ import annotations

import os
import re
import subprocess
import sys

import pytest
from pygments.lexers import get_lexer_by_name, get_lexer_for_filename, guess_lexer
from pygments.token import Comment, Error, Keyword, Name, Number, String, Token

import corpus_programs
from corpus_programs import STAGE_LANGUAGE
from olympus_jupyter.highlight.lexers import HLOLexer, OlympusprLexer, StableHLOLexer

LEXERS = {"olympuspr": OlympusprLexer, "stablehlo": StableHLOLexer, "hlo": HLOLexer}


@pytest.fixture(scope="module")
def corpus() -> dict[tuple[str, str], str]:
    return corpus_programs.stage_texts()


def lex(language: str, text: str) -> list[tuple[int, object, str]]:
    return list(LEXERS[language]().get_tokens_unprocessed(text))


def error_report(name: str, text: str, tokens) -> list[str]:
    """One line per Error token: where, what, and the line it is on."""
    lines = text.splitlines()
    out = []
    for index, ttype, value in tokens:
        if ttype in Error:
            n = text.count("\n", 0, index)
            out.append(f"{name}:{n + 1}: Error token {value!r} in line: {lines[n][:300]!r}")
    return out


def types_of(language: str, text: str, fragment: str, *, occurrence: int = 0) -> set:
    """Token types covering ``fragment`` (its ``occurrence``-th match) in ``text``.

    A fragment that starts or ends with a name character matches only whole
    names there: ``return`` is not found in ``stablehlo.return``, nor
    ``all-reduce`` in ``%all-reduce.1``.
    """
    pattern = re.escape(fragment)
    if re.match(r"[\w]", fragment):
        pattern = r"(?<![\w.%@#^-])" + pattern
    if re.search(r"\w$", fragment):
        pattern += r"(?![\w.-])"
    starts = [m.start() for m in re.finditer(pattern, text)]
    assert len(starts) > occurrence, f"{fragment!r} not in text"
    start = starts[occurrence]
    end = start + len(fragment)
    found = set()
    for index, ttype, value in lex(language, text):
        if index < end and index + len(value) > start and value.strip():
            found.add(ttype)
    return found


def assert_type(language, text, fragment, expected, *, occurrence=0):
    found = types_of(language, text, fragment, occurrence=occurrence)
    assert found and all(t in expected for t in found), (
        f"{fragment!r}: expected {expected}, got {sorted(map(str, found))}"
    )


def first_text(corpus, stage, needle):
    """The first corpus text of ``stage`` that contains ``needle``."""
    for (prog, st), text in sorted(corpus.items()):
        if st == stage and needle in text:
            return text
    raise AssertionError(f"no {stage} text in the corpus contains {needle!r}")


# ---------------------------------------------------------------- the corpus


def test_corpus_has_every_stage_and_the_constructs_it_is_meant_to_cover(corpus):
    stages = {stage for _, stage in corpus}
    assert stages == set(STAGE_LANGUAGE)
    everything = {st: "\n".join(t for (_, s), t in corpus.items() if s == st) for st in stages}
    olympuspr = everything["olympuspr"] + everything["olympuspr_source"]
    stablehlo = everything["stablehlo"] + everything["stablehlo_debug"]
    hlo = everything["hlo"] + everything["compiled"]
    for needle in [
        "lambda",
        "key<fry>[]",
        "bf16[",
        "f16[",
        "i8[",
        "u8[",
        "c64[",
        "bool[",
        "scatter-add[",
        "while[",
        "scan[",
        "cond[",
        "custom_jvp_call[",
        "custom_vjp_call[",
        "conv_general_dilated[",
        "fft[",
        "sort[",
        "top_k[",
        "olympuspr={",
        "-inf:f32[]",
        "nan:f32[]",
        "let _",
        "f32[b,4]",
        "{V:",
    ]:
        assert needle in olympuspr, needle
    assert re.search(r"# /\S+\.py:\d+:\d+ \(", everything["olympuspr_source"])
    for needle in [
        "stablehlo.while",
        '"stablehlo.case"',
        "stablehlo.fft",
        "chlo.top_k",
        "stablehlo.convolution",
        "stablehlo.dot_general",
        '"stablehlo.gather"',
        '"stablehlo.scatter"',
        '"stablehlo.sort"',
        "sdy.sharding",
        "sdy.mesh",
        "mhlo.sharding",
        '"stablehlo.all_reduce"',
        '"stablehlo.all_gather"',
        "olympus.result_info",
        "complex<f32>",
        "xbf16>",
        "xui8>",
        "xi1>",
        "!stablehlo.token",
        "tensor<?x4xf32>",
        "0x7FC00000",
        "dense<(0.0",
    ]:
        assert needle in stablehlo, needle
    assert "stablehlo.case" in everything["stablehlo_multi"]
    assert re.search(r'^#loc\d+ = loc\("', everything["stablehlo_debug"], re.M)
    for needle in [
        "HloModule",
        "ENTRY",
        "ROOT",
        "FileNames",
        "StackFrames",
        "metadata={",
        "sharding={",
        "all-reduce(",
        "all-gather(",
        "collective-permute(",
        "get-tuple-element(",
        "fusion(",
        "/*index=5*/",
        "window={size=",
        "pred[",
        "s32[]",
        "c64[",
        "token[]",
        "constant(-inf)",
        "f32[?,4]",
    ]:
        assert needle in hlo, needle


@pytest.mark.parametrize("stage", sorted(STAGE_LANGUAGE))
def test_real_programs_lex_without_errors(corpus, stage):
    language = STAGE_LANGUAGE[stage]
    texts = {prog: text for (prog, st), text in corpus.items() if st == stage}
    assert texts
    problems = []
    for prog, text in sorted(texts.items()):
        problems += error_report(f"{prog}.{stage}", text, lex(language, text))
    assert not problems, "\n".join(problems[:40])


@pytest.mark.parametrize(
    "language, probe",
    [
        ("olympuspr", "{ lambda ; a:f32[]. let b:f32[] = sin a in (b,) }\n"),
        ("stablehlo", "%0 = stablehlo.add %a, %b : tensor<f32>\n"),
        ("hlo", "ENTRY %m (x: f32[]) -> f32[] {\n  ROOT %n = f32[] negate(%x)\n}\n"),
    ],
)
def test_every_text_leaves_the_lexer_where_it_started(corpus, language, probe):
    """States opened on ``[``, ``{ lambda``, ``tensor<``, ``loc(``, ``op(`` are all closed:
    text lexed after a whole program gets the tokens it gets on its own."""
    alone = [(t, v) for _, t, v in lex(language, probe)]
    for (prog, stage), text in sorted(corpus.items()):
        if STAGE_LANGUAGE[stage] != language:
            continue
        after = [(t, v) for _, t, v in lex(language, text.rstrip("\n") + "\n" + probe)]
        assert after[-len(alone) :] == alone, f"{prog}.{stage} leaves an open state"


# ---------------------------------------------------------------- token types


def test_olympuspr_token_types(corpus):
    text = first_text(corpus, "olympuspr", "scatter-add[")
    for fragment, expected in [
        ("lambda", Keyword),
        ("let", Keyword),
        ("in (", Keyword),
        ("f32[3,4]", Keyword.Type),
        ("i32[3]", Keyword.Type),
        ("scatter-add", Name.Builtin),
        ("broadcast_in_dim", Name.Builtin),
        ("update_olympuspr", Name.Attribute),
        ("dimension_numbers", Name.Attribute),
        ("7.0", Number.Float),
        (".FILL_OR_DROP", Name.Constant),
        ("True", Keyword.Constant),
    ]:
        assert_type(
            "olympuspr",
            text,
            fragment,
            {expected} | {Token.Punctuation}
            if fragment[0] in "(." or fragment[-1] in "(."
            else {expected},
        )
    simple = "{ lambda ; a:f32[3]. let b:f32[3] = mul a 2.0:f32[] in (b,) }"
    assert_type("olympuspr", simple, "a:", {Name.Variable, Token.Punctuation})
    assert_type("olympuspr", simple, "mul", {Name.Builtin})
    assert_type("olympuspr", simple, "2.0", {Number.Float})
    assert_type("olympuspr", simple, "f32[]", {Keyword.Type})

    rand = first_text(corpus, "olympuspr_source", "key<fry>")
    assert_type("olympuspr", rand, "key<fry>[]", {Keyword.Type})
    assert_type("olympuspr", rand, "random_bits", {Name.Builtin})
    path = re.search(r"# /\S+\.py:\d+:\d+ \([^)\n]*\)", rand).group()
    assert_type("olympuspr", rand, path, {Comment.Single})
    shared = re.search(r"^let (\w+) = \{", rand, re.M)
    assert_type("olympuspr", rand, shared.group(1), {Name.Function})
    assert_type("olympuspr", rand, "let", {Keyword})

    cond = first_text(corpus, "olympuspr", "-inf:f32[]")
    assert_type("olympuspr", cond, "-inf", {Number.Float})
    assert_type("olympuspr", cond, "nan", {Number.Float})


def test_olympuspr_let_and_in_are_variables_outside_their_places():
    # Variables are named a..z, ba.., so a big program has one called `in`.
    text = "{ lambda ; in:f32[]. let let:f32[] = neg in in (let,) }"
    tokens = [(t, v) for _, t, v in lex("olympuspr", text) if v.strip()]
    assert tokens[3] == (Name.Variable, "in")
    assert (Keyword, "let") in tokens and (Name.Variable, "let") in tokens
    assert tokens[-6:-4] == [(Name.Variable, "in"), (Keyword, "in")]
    # One-line programs and print_shapes=False.
    text = "{ lambda ; a. let b = sin a; c = mul b 2.0:f32[] in (c,) }"
    assert not error_report("short", text, lex("olympuspr", text))
    assert_type("olympuspr", text, "sin", {Name.Builtin})
    assert_type("olympuspr", text, "let", {Keyword})


def test_stablehlo_token_types(corpus):
    text = first_text(corpus, "stablehlo", "stablehlo.while")
    for fragment, expected in [
        ("module", Keyword.Declaration),
        ("func.func", Keyword.Declaration),
        ("public", Keyword),
        ("return", Keyword),
        ("@main", Name.Function),
        ("%arg0", Name.Variable),
        ("%iterArg", Name.Variable),
        ("stablehlo.while", Name.Builtin),
        ("stablehlo.constant", Name.Builtin),
        ("tensor<6x4xf32>", Keyword.Type),
        ("tensor<i32>", Keyword.Type),
        ("olympus.result_info", Name.Attribute),
        ('"result"', String.Double),
        ("mhlo.num_partitions", Name.Attribute),
        ("SIGNED", Name.Constant),
        ("1.500000e+00", Number.Float),
        ("dims", Name.Attribute),
        ("i32", Keyword.Type),
    ]:
        assert_type("stablehlo", text, fragment, {expected})
    assert_type(
        "stablehlo", "%1 = stablehlo.add %0, %0 : tensor<3xf32>", "tensor<3xf32>", {Keyword.Type}
    )
    assert_type(
        "stablehlo", "%1 = stablehlo.add %0, %0 : tensor<3xf32>", "stablehlo.add", {Name.Builtin}
    )

    multi = first_text(corpus, "stablehlo_multi", "stablehlo.case")
    assert_type("stablehlo", multi, '"stablehlo.case"', {Name.Builtin})
    assert_type("stablehlo", multi, "olympus.global_constant", {Name.Attribute})

    debug = first_text(corpus, "stablehlo_debug", "#loc")
    loc_use = re.search(r"loc\(#loc\d+\)", debug).group()
    assert_type("stablehlo", debug, loc_use, {Comment})
    loc_def = re.search(r'^#loc\d+ = loc\(".*$', debug, re.M).group()
    assert_type("stablehlo", debug, loc_def, {Comment})

    sharded = corpus["sharded", "stablehlo"]
    assert_type("stablehlo", sharded, "sdy.mesh", {Name.Builtin})
    assert_type("stablehlo", sharded, "#sdy.sharding", {Name.Attribute})
    assert_type("stablehlo", sharded, "@mesh", {Name.Function})
    gspmd = first_text(corpus, "stablehlo", "mhlo.sharding")
    assert_type("stablehlo", gspmd, "mhlo.sharding", {Name.Attribute})
    assert_type("stablehlo", gspmd, '"{devices=[4,2]<=[8]}"', {String.Double})

    nan = first_text(corpus, "stablehlo", "0x7FC00000")
    assert_type("stablehlo", nan, "0x7FC00000", {Number.Hex})
    complex_ = first_text(corpus, "stablehlo", "complex<f32>")
    assert_type("stablehlo", complex_, "complex<f32>", {Keyword.Type})


def test_hlo_token_types(corpus):
    compiled = corpus["sharded", "compiled"]
    for fragment, expected in [
        ("HloModule", Keyword.Namespace),
        ("ENTRY", Keyword),
        ("ROOT", Keyword),
        ("FileNames", Keyword.Declaration),
        ("StackFrames", Keyword.Declaration),
        ("f32[4,4]{1,0}", Keyword.Type),
        ("f32[]", Keyword.Type),
        ("all-reduce", Name.Builtin),
        ("parameter", Name.Builtin),
        ("fusion", Name.Builtin),
        ("%param", Name.Variable),
        ("metadata", Name.Attribute),
        ("op_name", Name.Attribute),
        ("replica_groups", Name.Attribute),
        ("kLoop", Name.Constant),
        ("%wrapped_tanh_computation", Name.Function),
        ('"jit(layer)/tanh"', String.Double),
        ("true", Keyword.Constant),
    ]:
        assert_type("hlo", compiled, fragment, {expected})
    # XLA from jaxlib 0.12 prints no shardings on a partitioned program's parameters;
    # the compiler's input always has them.
    with_shardings = compiled if "sharding=" in compiled else corpus["sharded", "hlo"]
    assert_type("hlo", with_shardings, "sharding", {Name.Attribute})
    # The header of a computation and its uses in calls=/to_apply= are functions.
    header = re.search(r"^(%\S+) \(", compiled, re.M).group(1)
    assert_type("hlo", compiled, header, {Name.Function})

    hlo = first_text(corpus, "hlo", "get-tuple-element(")
    assert_type("hlo", hlo, "get-tuple-element", {Name.Builtin})
    name = re.search(r"^  (\w+\.\d+) = ", hlo, re.M).group(1)
    assert_type("hlo", hlo, name, {Name.Variable})

    tuples = first_text(corpus, "compiled", "/*index=5*/")
    assert_type("hlo", tuples, "/*index=5*/", {Comment.Multiline})
    types = first_text(corpus, "hlo", "pred[")
    assert_type(
        "hlo", types, re.search(r"pred\[[\d,]*\](\{[\d,]*\})?", types).group(), {Keyword.Type}
    )
    assert_type("hlo", types, "s32[]", {Keyword.Type})
    inf = first_text(corpus, "compiled", "constant(-inf)")
    assert_type("hlo", inf, "-inf", {Number.Float})
    conv = first_text(corpus, "compiled", "window={size=")
    assert_type("hlo", conv, "size", {Name.Attribute})
    assert_type("hlo", conv, "3x3", {Number})


# ------------------------------------------- syntax that the corpus may not hold

SNIPPETS = {
    "stablehlo": [
        # Generic form (as JAX prints in errors), blocks, multiple results.
        '"func.func"() <{arg_attrs = [{jax.global_constant = "b"}, {}], function_type = '
        '(tensor<i32>, tensor<?x4xf32>) -> tensor<4xf32>, sym_name = "main"}> ({\n'
        "^bb0(%arg0: tensor<i32>, %arg1: tensor<?x4xf32>):\n"
        '  %0:2 = "stablehlo.while"(%arg0, %arg1) ({\n'
        "  ^bb0(%a: tensor<i32>, %b: tensor<?x4xf32, #stablehlo.bounds<?, 4>>):\n"
        '    "stablehlo.return"(%a) : (tensor<i32>) -> ()\n'
        "  }) : (tensor<i32>, tensor<?x4xf32>) -> (tensor<i32>, tensor<?x4xf32>)\n"
        '  "func.return"(%0#1) : (tensor<4xf32>) -> ()\n'
        "}) : () -> ()\n",
        # Constants of every spelling, a comment, a composite, sharding rules.
        "// constants\n"
        "%t = stablehlo.create_token : !stablehlo.token\n"
        "%c0 = stablehlo.constant dense_resource<__elided__> : tensor<3xf32>\n"
        '%c1 = stablehlo.constant dense<"0x0000803F00000040"> : tensor<2xf32>\n'
        "%c2 = stablehlo.constant dense<[true, false]> : tensor<2xi1>\n"
        "%c3 = stablehlo.constant dense<(1.000000e+00,-2.000000e+00)> : tensor<complex<f32>>\n"
        "%c4 = stablehlo.constant dense<0xFF80> : tensor<bf16>\n"
        "%c5 = stablehlo.constant dense<-3> : tensor<f8E4M3FN>\n"
        '%r = stablehlo.composite "my.op" %c0 {composite_attributes = {k = 1.0 : f32}, '
        "decomposition = @my.op.impl, version = 1 : i32} : (tensor<3xf32>) -> tensor<3xf32>\n"
        '%s = stablehlo.custom_call @Sharding(%r) {mhlo.sharding = "{replicated}", '
        "sdy.sharding_rule = #sdy.op_sharding_rule<([i, j])->([i, j]) {i=3, j=4}, custom>, "
        'sdy.sharding = #sdy.sharding_per_value<[<@mesh, [{"x", ?}, {?}], replicated={"y"}>]>} '
        ': (tensor<3xf32>) -> tensor<3xf32> loc(fused["a.py":1:2, callsite("f"("b.py":3:4) '
        "at unknown)])\n"
        '{-#\n  dialect_resources: {\n    builtin: {\n      x: "0x04000000"\n    }\n  }\n#-}\n',
    ],
    "hlo": [
        "HloModule m, input_output_alias={ {}: (0, {}, may-alias) }, "
        "entry_computation_layout={(f32[8,128]{1,0:T(8,128)}, f8e4m3fn[2]{0})->f32[8,128]{1,0}}\n"
        "\n"
        "%body (p: (s32[], f32[8]{0})) -> (s32[], f32[8]{0}) {\n"
        "  %p = (s32[], f32[8]{0}) parameter(0)\n"
        "  ROOT %t = (s32[], f32[8]{0}) tuple(s32[] %i, f32[8]{0} %x), "
        "control-predecessors={%p}\n"
        "}\n"
        "\n"
        "ENTRY %main (x: f32[<=4]) -> c64[] {\n"
        "  %x = f32[<=4]{0} parameter(0), sharding={replicated}\n"
        "  %w = (s32[], f32[8]{0}) while(%t), condition=%cond, body=%body, "
        'backend_config={"known_trip_count":{"n":"5"}}\n'
        "  %cp = f32[3]{0} collective-permute(%x), channel_id=1, "
        'source_target_pairs={{0,1},{1,0}}, frontend_attributes={_xla_stream="1"}\n'
        "  %cv = f32[1,4,8,4]{3,2,1,0} convolution(%a, %b), window={size=3x3 stride=1x2 "
        "pad=1_1x0_1 rhs_dilate=2x2}, dim_labels=bf01_oi01->bf01, feature_group_count=1\n"
        "  %c1 = bf16[8,16,128]{2,1,0:T(8,128)(2,1)} convolution(%h, %k), window={size=1}, "
        "dim_labels=0bf_io0->0bf\n"
        "  %cond = (f32[]) conditional(%p, %a, %b), branch_computations={%b0, %b1}\n"
        "  %s = f32[1,4]{1,0} slice(%cv), slice={[0:1], [0:4:2]}\n"
        "  %n = f32[] constant(nan), sharding={devices=[2,2]<=[2,2]T(1,0) "
        "last_tile_dim_replicate}\n"
        "  ROOT %c = c64[] constant((1, -2)) // trailing comment\n"
        "}\n",
        # The modules XLA from jaxlib 0.12 dumps after each pass (the passes and
        # partitioned stages) print no get-tuple-element: an operand names a
        # tuple's element by the tuple and its index.
        "%body (param: (s32[], f32[4])) -> (s32[], f32[4]) {\n"
        "  %param = (s32[], f32[4]{0}) parameter(0)\n"
        '  %next = s32[] add(%param#0, %one.clone), metadata={op_name="jit(f)/add"}\n'
        "  ROOT %t = (s32[], f32[4]{0}) tuple(%next, %param#1)\n"
        "}\n"
        "ENTRY %main (x: f32[4]) -> f32[4] {\n"
        "  %w = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body\n"
        "  ROOT %out = f32[4]{0} negate(%w#1)\n"
        "}\n",
    ],
    "olympuspr": [
        "{ lambda a:f32[3]; b:f32[3] c:Ref{f32[3]}. let\n"
        "    d:f32[3] = pjit[name=<lambda> olympuspr={ lambda ; e:f32[3]. let  in (e,) }] b\n"
        "    debug_callback[callback=<function f at 0xXXXXXXXXXXXX> effect=Debug] d\n"
        "    f:c64[] = mul (1+2j):c64[] 2j:c64[]\n"
        "    g:f32[8@x,4]{U:x} = psum[axes=('x',) axis_index_groups=None] d\n"
        "    h:f32<host>[3] = device_put[devices=(None,) srcs=(None,) copy_semantics="
        "(<CopySemantics.ALIAS: 1>,)] d\n"
        "    i:f8_e4m3fn[] = convert_element_type[new_dtype=float8_e4m3fn weak_type=False] 0.5:f32[]\n"
        "    j:f32[] = pallas_call[olympuspr={ lambda ; k:Ref<default>{f32[8]}. let\n"
        "        l:f32[8] <- k[...]\n"
        "        m:f32[8], k[...] <- k[...], l\n"
        "      in () }] d\n"
        "  in (a, d, g, h) }\n",
        # A repr with a device kind of several words, one starting with digits (a
        # program placed on compile-only GPUs: olympus.hardware.target("h100:4")).
        "{ lambda ; a:f32[8]. let\n"
        "    b:f32[8] = reshard[\n"
        "      dst_sharding=NamedSharding(mesh=AbstractMesh('data': 2, axis_types=(Auto,), "
        "device_kind=NVIDIA H100 80GB HBM3, num_cores=132), spec=P(None,))\n"
        "    ] a\n"
        "  in (b,) }\n",
    ],
}


@pytest.mark.parametrize(
    "language, snippet",
    [(language, snippet) for language, snippets in SNIPPETS.items() for snippet in snippets],
)
def test_other_syntax_lexes_without_errors(language, snippet):
    assert not error_report(language, snippet, lex(language, snippet))


def test_snippet_token_types():
    stablehlo, constants = SNIPPETS["stablehlo"]
    assert_type("stablehlo", stablehlo, '"func.func"', {Name.Builtin})
    assert_type("stablehlo", stablehlo, "^bb0", {Name.Label})
    assert_type("stablehlo", stablehlo, "%0#1", {Name.Variable})
    assert_type("stablehlo", stablehlo, "tensor<?x4xf32, #stablehlo.bounds<?, 4>>", {Keyword.Type})
    assert_type("stablehlo", constants, "// constants", {Comment.Single})
    assert_type("stablehlo", constants, "!stablehlo.token", {Keyword.Type})
    assert_type("stablehlo", constants, "@Sharding", {Name.Function})
    assert_type("stablehlo", constants, "f8E4M3FN", {Keyword.Type})
    assert_type("stablehlo", constants, "-3", {Number.Integer})
    assert_type("stablehlo", constants, "0xFF80", {Number.Hex})
    assert_type("stablehlo", constants, "true", {Keyword.Constant})
    loc = constants[constants.index("loc(fused") : constants.index("])\n") + 2]
    assert_type("stablehlo", constants, loc, {Comment})

    hlo, elements = SNIPPETS["hlo"]
    assert_type("hlo", hlo, "f32[8,128]{1,0:T(8,128)}", {Keyword.Type})
    assert_type("hlo", hlo, "f8e4m3fn[2]{0}", {Keyword.Type})
    assert_type("hlo", hlo, "f32[<=4]{0}", {Keyword.Type})
    assert_type("hlo", hlo, "%body", {Name.Function})
    assert_type("hlo", hlo, "%body", {Name.Function}, occurrence=1)
    assert_type("hlo", hlo, "%b1", {Name.Function})
    assert_type("hlo", hlo, "collective-permute", {Name.Builtin})
    assert_type("hlo", hlo, "control-predecessors", {Name.Attribute})
    assert_type("hlo", hlo, "nan", {Number.Float})
    assert_type("hlo", hlo, "// trailing comment", {Comment.Single})
    for value in ("%param#0", "%param#1", "%w#1"):
        assert_type("hlo", elements, value, {Name.Variable})

    olympuspr, device_kind = SNIPPETS["olympuspr"]
    assert_type("olympuspr", device_kind, "80GB", {Name})
    assert_type("olympuspr", olympuspr, "Ref{f32[3]}", {Keyword.Type})
    assert_type("olympuspr", olympuspr, "f32[8@x,4]{U:x}", {Keyword.Type})
    assert_type("olympuspr", olympuspr, "f32<host>[3]", {Keyword.Type})
    assert_type("olympuspr", olympuspr, "f8_e4m3fn[]", {Keyword.Type})
    assert_type("olympuspr", olympuspr, "float8_e4m3fn", {Keyword.Type})
    assert_type("olympuspr", olympuspr, "debug_callback", {Name.Builtin})
    assert_type("olympuspr", olympuspr, "2j", {Number.Float})
    assert_type("olympuspr", olympuspr, "d", {Name.Variable}, occurrence=1)


# ---------------------------------------------------------------- registration


def test_lexers_are_registered_with_pygments():
    assert type(get_lexer_by_name("olympuspr")) is OlympusprLexer
    assert type(get_lexer_by_name("stablehlo")) is StableHLOLexer
    assert type(get_lexer_by_name("mlir-stablehlo")) is StableHLOLexer
    assert type(get_lexer_by_name("hlo")) is HLOLexer
    assert type(get_lexer_for_filename("f.olympuspr")) is OlympusprLexer
    assert type(get_lexer_for_filename("f.stablehlo.mlir")) is StableHLOLexer
    assert type(get_lexer_for_filename("f.hlo")) is HLOLexer
    for lexer in LEXERS.values():
        assert lexer.__doc__ and lexer.mimetypes and lexer.filenames


def test_guess_lexer_recognizes_each_stage(corpus):
    assert type(guess_lexer(corpus["loops", "hlo"])) is HLOLexer
    assert type(guess_lexer(corpus["loops", "compiled"])) is HLOLexer
    assert type(guess_lexer(corpus["loops", "stablehlo_debug"])) is StableHLOLexer
    assert type(guess_lexer(corpus["loops", "olympuspr"])) is OlympusprLexer


def test_pygmentize_highlights_an_hlo_file(corpus, tmp_path):
    path = tmp_path / "module.hlo"
    path.write_text(corpus["sharded", "compiled"])
    script = os.path.join(os.path.dirname(sys.executable), "pygmentize")
    command = [script] if os.path.exists(script) else [sys.executable, "-m", "pygments"]
    out = subprocess.run(
        command + ["-l", "hlo", "-f", "html", str(path)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert '<span class="kn">HloModule</span>' in out.stdout
    assert '<span class="nb">all-reduce</span>' in out.stdout
    assert '<span class="kt">f32[4,4]{1,0}</span>' in out.stdout
    assert 'class="err"' not in out.stdout
    # And the file name alone picks the lexer.
    out = subprocess.run(
        command + ["-f", "raw", str(path)], capture_output=True, text=True, timeout=60
    )
    assert out.returncode == 0, out.stderr
    assert "Token.Keyword.Type\t'f32[4,4]{1,0}'" in out.stdout
    assert "Token.Error" not in out.stdout
