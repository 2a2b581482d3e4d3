"""The provenance model: every op of every stage tied to the source line that made it."""

from __future__ import annotations

import inspect
import json
import os
import textwrap

import jax
import numpy as np
import pytest

import corpus_programs
import olympus
import olympus.numpy as jnp
from olympus import lax, provenance
from olympus.provenance import Provenance
from olympus.provenance.hlo import hlo_instructions, hlo_stage
from olympus.provenance.sources import SourceTable
from olympus.provenance.stablehlo import decode_location
from eight_devices import run_on_8_devices

F32_4 = np.ones(4, np.float32)


def line_of(fun, snippet: str) -> int:
    """The file line number of the first line of ``fun`` that contains ``snippet``."""
    lines, first = inspect.getsourcelines(fun)
    for k, text in enumerate(lines):
        if snippet in text:
            return first + k
    raise AssertionError(f"{snippet!r} is not in {fun.__name__}")


def names(model: Provenance, ids) -> list[str]:
    return [model.op(i).name for i in ids]


def text_lines(model: Provenance, stage: str, op) -> list[str]:
    lines = model.stages[stage].text.split("\n")
    return lines[op.lines[0] - 1 : op.lines[1]]


def spans_point_at_their_ops(model: Provenance) -> list[str]:
    """What is wrong with the line spans of every op of every stage (nothing, we hope)."""
    wrong = []
    printed_as = {"func.return": "return", "func.call": "call", "builtin.module": "module"}
    for stage in model.stage_names:
        ops = model.stages[stage].ops
        for op in ops:
            if op.lines is None:
                wrong.append(f"{op.id} {op.name}: no lines")
                continue
            lines = text_lines(model, stage, op)
            parent = ops[op.parent] if op.parent is not None else None
            if stage == "olympuspr":
                ok = op.name in "\n".join(lines)
            elif stage == "stablehlo":
                elided = parent is not None and parent.lines == op.lines
                ok = printed_as.get(op.name, op.name) in lines[0] or elided
            else:
                ok = (
                    len(lines) == 1 and f"%{op.label} = " in lines[0] and f" {op.name}(" in lines[0]
                )
            if not ok:
                wrong.append(f"{op.id} {op.name}: {lines[0][:80]!r}")
    return wrong + [f"{s}: {n}" for s in model.stage_names for n in model.stages[s].notes]


# -- programs ------------------------------------------------------------------


def sin_times(x, y):
    return jnp.sin(x) * y


def three_lines(x):
    y = jnp.sin(x)
    z = y * 3.0
    return jnp.exp(z)


def helper(v):
    return jnp.cos(v) + 1.0


def control_flow(x):
    a = lax.cond(x.sum() > 0, lambda v: v * 2.0, lambda v: -v, x)
    b = lax.fori_loop(0, 3, lambda i, c: c + jnp.sin(c), a)
    w = lax.while_loop(lambda c: c[0] < 5, lambda c: (c[0] + 1, c[1] * 0.5), (0, b))[1]
    c, ys = lax.scan(lambda c, v: (c + v, c * v), 0.0, w)
    d = olympus.jit(helper)(ys) + olympus.jit(helper)(b)
    return d + c


def loss(w, x):
    h = jnp.tanh(x @ w)
    return (h**2).sum()


@jax.custom_jvp
def softplus(x):
    return jnp.log1p(jnp.exp(x))


@softplus.defjvp
def _softplus_jvp(primals, tangents):
    (x,), (t,) = primals, tangents
    return softplus(x), t * jax.nn.sigmoid(x)


@jax.custom_vjp
def clip_grad(x):
    return x * 2.0


clip_grad.defvjp(lambda x: (x, None), lambda _, g: (jnp.clip(g, -1.0, 1.0),))


def custom_rules(x):
    return softplus(x).sum() + clip_grad(x).sum()


@pytest.fixture(scope="module")
def small():
    return provenance.build(olympus.jit(sin_times), F32_4, F32_4)


@pytest.fixture(scope="module")
def lines_model():
    return provenance.build(olympus.jit(three_lines), F32_4)


@pytest.fixture(scope="module")
def flow():
    return provenance.build(olympus.jit(control_flow), F32_4)


@pytest.fixture(scope="module")
def grads():
    w, x = np.ones((4, 3), np.float32), np.ones((2, 4), np.float32)
    return provenance.build(olympus.jit(olympus.grad(loss)), w, x)


# -- what each stage holds ------------------------------------------------------


def test_small_function_has_every_stage_with_its_ops(small):
    assert small.stage_names == ("olympuspr", "stablehlo", "compiled")
    assert small.function.name == "sin_times"
    assert small.platforms == (olympus.default_backend(),)
    assert [op.name for op in small.stages["olympuspr"].ops] == ["sin", "mul"]
    assert [op.name for op in small.stages["stablehlo"].ops] == [
        "builtin.module",
        "func.func",
        "stablehlo.sine",
        "stablehlo.multiply",
        "func.return",
    ]
    hlo = [(op.name, op.label) for op in small.stages["compiled"].ops]
    assert [n for n, _ in hlo].count("parameter") >= 2
    assert {"sine", "multiply", "fusion"} <= {n for n, _ in hlo}


def test_op_types_are_the_printed_types(small):
    assert small.op("olympuspr:0").types == ("f32[4]",)
    assert small.op("stablehlo:2").types == ("tensor<4xf32>",)
    sine = next(op for op in small.stages["compiled"].ops if op.name == "sine")
    assert sine.types == ("f32[4]{0}",)


def test_stage_texts_are_the_texts_the_stages_print():
    traced = olympus.jit(sin_times).trace(F32_4, F32_4)
    lowered = traced.lower()
    compiled = lowered.compile()
    model = provenance.build(compiled)
    assert model.stages["olympuspr"].text == traced.olympuspr.pretty_print(use_color=False)
    assert model.stages["stablehlo"].text == lowered.as_text()
    assert model.stages["compiled"].text == compiled.as_text()


def test_every_op_span_points_at_its_own_text(flow):
    assert spans_point_at_their_ops(flow) == []


CORPUS = corpus_programs._programs()


@pytest.mark.parametrize("name, fun, args, options", CORPUS, ids=[p[0] for p in CORPUS])
def test_corpus_programs_have_every_op_at_its_line(name, fun, args, options):
    traced = olympus.jit(fun, **options).trace(*args)
    lowered = traced.lower()
    try:
        last = lowered.compile()
    except Exception:  # noqa: BLE001 - a program the corpus keeps for its lowering only
        last = lowered
    model = provenance.build(last)
    assert model.stages["olympuspr"].text == traced.olympuspr.pretty_print(use_color=False)
    assert spans_point_at_their_ops(model) == []
    assert Provenance.from_json(model.to_json_str()) == model


def test_multiply_op_line_holds_stablehlo_multiply(small):
    mul = next(op for op in small.stages["stablehlo"].ops if op.name == "stablehlo.multiply")
    assert mul.lines[0] == mul.lines[1]
    assert "stablehlo.multiply" in text_lines(small, "stablehlo", mul)[0]
    assert small.ops_on_text_line("stablehlo", mul.lines[0])[-1] == mul.id


def test_ops_with_regions_span_their_region(flow):
    stablehlo = flow.stages["stablehlo"]
    case = next(op for op in stablehlo.ops if op.name == "stablehlo.case")
    inner = [op for op in stablehlo.ops if op.parent == case.index]
    assert inner and all(case.lines[0] < op.lines[0] <= op.lines[1] < case.lines[1] for op in inner)
    assert text_lines(flow, "stablehlo", case)[-1].lstrip().startswith("})")
    module = stablehlo.ops[0]
    assert module.lines == (1, len(stablehlo.text.rstrip("\n").split("\n")))


# -- source lines, across stages -----------------------------------------------


def test_source_line_maps_to_ops_of_every_stage(lines_model):
    model = lines_model
    sin_line = line_of(three_lines, "y = jnp.sin(x)")
    links = model.ops_for_line(__file__, sin_line)
    assert names(model, links["olympuspr"]) == ["sin"]
    assert names(model, links["stablehlo"]) == ["stablehlo.sine"]
    (sine,) = [model.op(i) for i in links["compiled"] if model.op(i).name == "sine"]
    hlo = model.stages["compiled"]
    assert sine.fusion is not None and hlo.ops[sine.fusion].name == "fusion"
    assert hlo.computations[sine.computation].fusion == sine.fusion

    exp_line = line_of(three_lines, "return jnp.exp(z)")
    assert names(model, model.ops_for_line(__file__, exp_line)["olympuspr"]) == ["exp"]
    assert "stablehlo.exponential" in names(
        model, model.ops_for_line(__file__, exp_line)["stablehlo"]
    )


def test_op_knows_its_source_lines_and_call_stack(lines_model):
    model = lines_model
    sin_line = line_of(three_lines, "y = jnp.sin(x)")
    assert model.lines_for_op("olympuspr:0")[0] == (__file__, sin_line)
    (frame, *_) = model.frames_of("olympuspr:0")
    assert frame.function == "three_lines"
    assert frame.column == model.source_line(__file__, sin_line).index("jnp.sin")
    # The frame of the call that built the model follows in StableHLO's call stack.
    sine = next(op for op in model.stages["stablehlo"].ops if op.name == "stablehlo.sine")
    assert model.lines_for_op(sine.id)[0] == (__file__, sin_line)
    assert any(fr.function == "lines_model" for fr in model.frames_of(sine.id))


def test_linked_ops_are_the_same_line_in_other_stages(lines_model):
    links = lines_model.linked_ops("olympuspr:0")
    assert names(lines_model, links["stablehlo"]) == ["stablehlo.sine"]
    assert "sine" in names(lines_model, links["compiled"])


def test_lines_table_lists_each_source_line_once(lines_model):
    model = lines_model
    keys = [(e.file, e.line) for e in model.lines]
    assert keys == sorted(set(keys))
    fi = model.file_index(__file__)
    body = {line_of(three_lines, s) for s in ("jnp.sin", "y * 3.0", "jnp.exp")}
    assert body <= {e.line for e in model.lines if e.file == fi}


def test_callers_option_finds_ops_of_a_called_function(flow):
    call_line = line_of(control_flow, "olympus.jit(helper)")
    own = flow.ops_for_line(__file__, call_line)
    via = flow.ops_for_line(__file__, call_line, callers=True)
    assert "cos" not in names(flow, own["olympuspr"])
    assert "cos" in names(flow, via["olympuspr"])
    assert "stablehlo.cosine" in names(flow, via["stablehlo"])


def test_source_of_user_files_is_kept(lines_model):
    model = lines_model
    fn = model.function
    assert model.files[fn.file].path == __file__
    assert (fn.first_line, fn.last_line) == (
        line_of(three_lines, "def three_lines"),
        line_of(three_lines, "return jnp.exp(z)"),
    )
    assert model.source_line(__file__, fn.first_line).startswith("def three_lines")
    assert not any(os.sep + "olympus" + os.sep + "provenance" in f.path for f in model.files)
    assert not any("site-packages" + os.sep + "jax" in f.path for f in model.files)


# -- nested programs --------------------------------------------------------------


def test_control_flow_equations_are_nested_in_their_parents(flow):
    ops = flow.stages["olympuspr"].ops

    def children(name):
        parents = [op.index for op in ops if op.name == name]
        return [[c.name for c in ops if c.parent == p] for p in parents]

    assert children("cond") == [["neg", "mul"]]
    scans_and_whiles = children("scan") + children("while")
    assert ["add", "sin", "add"] in scans_and_whiles  # fori_loop body
    assert any("lt" in body for body in scans_and_whiles)  # while_loop cond
    assert any("mul" in body for body in scans_and_whiles)  # while_loop / scan bodies
    for op in ops:
        if op.parent is not None and ops[op.parent].name != "jit":
            lo, hi = ops[op.parent].lines
            assert lo <= op.lines[0] <= op.lines[1] <= hi


def test_shared_sub_program_is_held_once(flow):
    ops = flow.stages["olympuspr"].ops
    calls = [op for op in ops if op.name == "jit"]
    assert len(calls) == 2
    cos = [op for op in ops if op.name == "cos"]
    assert len(cos) == 1 and ops[cos[0].parent].name == "jit"
    # Printed once, before the program that calls it twice.
    assert flow.stages["olympuspr"].text.startswith("let helper = ")
    assert cos[0].lines[0] < calls[0].lines[0]
    assert flow.lines_for_op(cos[0].id)[0] == (__file__, line_of(helper, "jnp.cos"))


def test_nested_stablehlo_and_hlo_ops_know_their_parent(flow):
    stablehlo = flow.stages["stablehlo"].ops
    whiles = [op.index for op in stablehlo if op.name == "stablehlo.while"]
    assert whiles
    assert any(op.name == "stablehlo.compare" and op.parent in whiles for op in stablehlo)
    hlo = flow.stages["compiled"]
    loops = [op for op in hlo.ops if op.name == "while"]
    assert loops
    bodies = [
        c for c in hlo.computations if c.caller is not None and hlo.ops[c.caller].name == "while"
    ]
    assert bodies and all(hlo.ops[c.caller] in loops for c in bodies)
    entry = [c for c in hlo.computations if c.entry]
    assert len(entry) == 1 and entry[0].caller is None


def test_gradient_equations_map_to_the_forward_source_line(grads):
    tanh_line = line_of(loss, "jnp.tanh(x @ w)")
    on_line = names(grads, grads.ops_for_line(__file__, tanh_line)["olympuspr"])
    assert "tanh" in on_line
    assert on_line.count("dot_general") >= 2  # forward and transposed
    assert {"mul", "sub"} & set(on_line)  # tanh's derivative
    hlo_on_line = names(grads, grads.ops_for_line(__file__, tanh_line)["compiled"])
    assert "dot" in hlo_on_line or "fusion" in hlo_on_line


def test_custom_rules_have_their_nested_equations():
    traced = provenance.build(olympus.jit(custom_rules).trace(F32_4))
    ops = traced.stages["olympuspr"].ops
    nested = {(ops[op.parent].name, op.name) for op in ops if op.parent is not None}
    assert {
        ("custom_jvp_call", "exp"),
        ("custom_jvp_call", "log1p"),
        ("custom_vjp_call", "mul"),
    } <= nested
    softplus_body = line_of(softplus, "jnp.log1p")
    assert names(traced, traced.ops_for_line(__file__, softplus_body)["olympuspr"]) == [
        "exp",
        "log1p",
    ]

    grad = provenance.build(olympus.jit(olympus.grad(custom_rules)), F32_4)
    rule_line = line_of(_softplus_jvp, "sigmoid")
    # The derivative comes from the line of the custom rule that computes it.
    assert "logistic" in names(grad, grad.ops_for_line(__file__, rule_line)["olympuspr"])
    assert "stablehlo.exponential" in names(
        grad, grad.ops_for_line(__file__, rule_line)["stablehlo"]
    )


def test_shard_map_body_is_nested():
    mesh = jax.make_mesh((1,), ("i",), axis_types=(jax.sharding.AxisType.Auto,))
    fn = jax.shard_map(
        lambda v: jnp.sin(v) * 2, mesh=mesh, in_specs=jax.P("i"), out_specs=jax.P("i")
    )
    model = provenance.build(olympus.jit(fn).trace(F32_4))
    ops = model.stages["olympuspr"].ops
    (sm,) = [op for op in ops if op.name == "shard_map"]
    body = [op.name for op in ops if op.parent == sm.index]
    assert body[0] == "sin" and body[-1] == "mul"


# -- build from any stage ---------------------------------------------------------


def test_build_gives_the_stages_it_can_reach():
    traced = olympus.jit(sin_times).trace(F32_4, F32_4)
    lowered = traced.lower()
    assert provenance.build(traced).stage_names == ("olympuspr",)
    assert provenance.build(traced.olympuspr).stage_names == ("olympuspr",)
    assert provenance.build(lowered).stage_names == ("olympuspr", "stablehlo")
    assert provenance.build(lowered.compile()).stage_names == ("olympuspr", "stablehlo", "compiled")
    assert provenance.build(sin_times, F32_4, F32_4).stage_names == (
        "olympuspr",
        "stablehlo",
        "compiled",
    )


def test_build_reads_jax_stages_too():
    jitted = jax.jit(sin_times)
    traced = jitted.trace(F32_4, F32_4)
    lowered = traced.lower()
    assert provenance.build(traced).stage_names == ("olympuspr",)
    only_hlo = provenance.build(lowered.compile())
    assert only_hlo.stage_names == ("compiled",)
    model = provenance.build(jitted, F32_4, F32_4)
    assert model.stage_names == ("olympuspr", "stablehlo", "compiled")
    assert model.function.name == "sin_times"
    # Read through Olympus's stages: the texts use Olympus's names.
    text = provenance.build(lowered).stages["stablehlo"].text
    assert "olympus.result_info" in text and "jax." not in text


def test_build_refuses_what_it_cannot_read():
    traced = olympus.jit(sin_times).trace(F32_4, F32_4)
    with pytest.raises(TypeError, match="takes no example arguments"):
        provenance.build(traced, F32_4)
    with pytest.raises(TypeError, match="build\\(\\) takes an Olympus stage"):
        provenance.build(42)


def test_complex_constants_are_read():
    model = provenance.build(olympus.jit(lambda x: x * 1j + (2 - 3j)), F32_4)
    stablehlo = model.stages["stablehlo"]
    assert not stablehlo.notes
    assert any(op.name == "stablehlo.multiply" for op in stablehlo.ops)


def test_stablehlo_falls_back_on_jax_text_when_renaming_fails(monkeypatch):
    lowered = olympus.jit(sin_times).trace(F32_4, F32_4).lower()

    def cannot_rename(self):
        raise TypeError("cannot read this attribute")

    monkeypatch.setattr(olympus.stages.Lowered, "as_text", cannot_rename)
    stablehlo = provenance.build(lowered).stages["stablehlo"]
    assert stablehlo.notes == (
        "StableHLO as JAX prints it: Olympus could not rename it "
        "(TypeError: cannot read this attribute)",
    )
    assert "jax.result_info" in stablehlo.text
    assert "stablehlo.sine" in [op.name for op in stablehlo.ops]


def test_lookups_say_what_went_wrong(small):
    with pytest.raises(ValueError, match="'<stage>:<index>'"):
        small.op("sin")
    with pytest.raises(KeyError, match="no op 'compiled:9999'"):
        small.op("compiled:9999")
    only_olympuspr = provenance.build(olympus.jit(sin_times).trace(F32_4, F32_4))
    with pytest.raises(KeyError, match="no 'compiled' stage"):
        only_olympuspr.stage("compiled")
    assert small.ops_for_line("no_such_file.py", 1) == {s: [] for s in small.stage_names}


# -- JSON ---------------------------------------------------------------------------


def test_json_round_trips(flow):
    data = flow.to_json()
    assert data["schema"] == "olympus.provenance" and data["version"] == 2
    assert Provenance.from_json(data) == flow
    assert Provenance.from_json(flow.to_json_str()) == flow
    assert Provenance.from_json(json.loads(json.dumps(data))) == flow


def test_json_stays_small(flow):
    data = flow.to_json()
    texts = sum(len(s["text"]) for s in data["stages"].values())
    sources = sum(len(text) for f in data["files"] for _, text in f["chunks"])
    size = len(flow.to_json_str())
    # Everything but the texts it carries (stages and sources) is under their size.
    assert size - texts - sources < texts
    # Frames are held once: ops refer to call stacks by index.
    assert len(data["frames"]) == len({tuple(f) for f in data["frames"]})
    assert all(
        isinstance(op.location, int)
        for op in Provenance.from_json(data).stages["compiled"].ops
        if op.location is not None
    )
    # Columns are compact strings, not one JSON value per op.
    ops = data["stages"]["compiled"]["ops"]
    assert isinstance(ops["location"], str) and isinstance(ops["lines"], str)
    assert set(ops["name"]) == {"values", "codes"} and isinstance(ops["name"]["codes"], str)
    assert all(isinstance(v, str) for e in data["lines"] for v in e["ops"].values())


def test_json_columns_decode():
    from olympus.provenance.serialize import (
        _decode_dict,
        _encode_dict,
        _encode_spans,
        decode_indices,
        encode_indices,
    )

    assert encode_indices([0, 1, 2, 3, 4, 7, 9, 10]) == "0-4,7,9-10"
    assert decode_indices("0-4,7,9-10") == (0, 1, 2, 3, 4, 7, 9, 10)
    assert encode_indices([5, 3]) == "5,3" and decode_indices("") == ()
    col = _encode_dict(["a", "b", "a", None, "c"], None)
    assert col == {"values": ["a", "b", "c"], "codes": "0,1,0,,2"}
    assert _decode_dict(col, None, tuples=False) == ["a", "b", "a", None, "c"]
    assert _encode_spans([(2, 2), (4, 9), None]) == "2,4:9,"


def test_json_refuses_other_documents(small):
    data = small.to_json()
    with pytest.raises(ValueError, match="expected schema 'olympus.provenance'"):
        Provenance.from_json({**data, "schema": "something.else"})
    with pytest.raises(ValueError, match="version 99"):
        Provenance.from_json({**data, "version": 99})


# -- readers on their own -------------------------------------------------------

HLO_TEXT = """\
HloModule jit_f, entry_computation_layout={(f32[8]{0})->(f32[8]{0}, f32[])}, num_partitions=2

FileNames
1 "/src/model.py"

FunctionNames
1 "main"
2 "layer"

FileLocations
1 {file_name_id=1 function_name_id=1 line=30 end_line=30 column=4 end_column=12}
2 {file_name_id=1 function_name_id=2 line=12 end_line=12 column=8 end_column=20}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=2}


%add (a: f32[], b: f32[]) -> f32[] {
  %a = f32[] parameter(0)
  %b = f32[] parameter(1)
  ROOT %sum = f32[] add(%a, %b), metadata={op_name="jit(f)/re\\"duce" stack_frame_id=2}
}

%fused_computation (p: f32[8]) -> f32[] {
  %p = f32[8]{0} parameter(0)
  %zero = f32[] constant(0)
  ROOT %r = f32[] reduce(%p, %zero), dimensions={0}, to_apply=%add, metadata={op_name="jit(f)/reduce_sum" stack_frame_id=2}
}

ENTRY %main (x: f32[8]) -> (f32[8], f32[]) {
  %x = f32[8]{0} parameter(0), sharding={devices=[2]<=[2]}, metadata={op_name="x"}
  %fusion = f32[] fusion(%x), kind=kLoop, calls=%fused_computation, metadata={op_name="jit(f)/reduce_sum" stack_frame_id=2}
  %ar-start = f32[] all-reduce-start(%fusion), replica_groups={{0,1}}, to_apply=%add, metadata={op_name="jit(f)/reduce_sum" stack_frame_id=2}
  %ar-done = f32[] all-reduce-done(%ar-start)
  %ps = f32[] all-reduce(%ar-done), replica_groups={{0,1}}, to_apply=%add, metadata={op_name="jit(f)/shard_map/psum"}
  ROOT %t = (f32[8]{0:T(8,128)}, f32[]) tuple(%x, %ps), sharding={{replicated}, {maximal device=0}}
}
"""


def test_hlo_reader_reads_instructions_and_tables():
    table = SourceTable(exclude=())
    stage = hlo_stage(HLO_TEXT, table)
    ops = {op.label: op for op in stage.ops}
    assert list(ops) == [
        "a",
        "b",
        "sum",
        "p",
        "zero",
        "r",
        "x",
        "fusion",
        "ar-start",
        "ar-done",
        "ps",
        "t",
    ]
    assert ops["sum"].name_stack == 'jit(f)/re"duce'
    assert ops["t"].types == ("(f32[8]{0:T(8,128)}, f32[])",)
    assert ops["t"].sharding == "{{replicated}, {maximal device=0}}"
    assert stage.arg_shardings == ("{devices=[2]<=[2]}",)
    # Frame 2 ("layer", line 12) was called from frame 1 ("main", line 30).
    frames = [table.frames[i] for i in table.locations[ops["r"].location].frames]
    assert [(f.function, f.line, f.column) for f in frames] == [("layer", 12, 8), ("main", 30, 4)]
    assert ops["x"].location is None
    # Fusion membership reaches computations that fused ones call.
    assert ops["r"].fusion == ops["fusion"].index == ops["p"].fusion
    assert ops["sum"].fusion == ops["fusion"].index
    assert ops["fusion"].fusion is None and ops["r"].parent == ops["fusion"].index
    assert [stage.ops[i].label for i in stage.collectives] == ["ar-start", "ar-done", "ps"]
    assert (ops["ar-start"].collective, ops["ps"].collective) == ("inserted", "requested")
    entry = stage.computations[ops["x"].computation]
    assert entry.entry and entry.name == "main" and entry.lines[1] == len(HLO_TEXT.splitlines())


# A loop as the modules XLA from jaxlib 0.12 dumps after each pass print it (the
# passes and partitioned stages): no get-tuple-element, an element of a tuple is
# named by the tuple and its index, ``%param#0``.
HLO_TUPLE_ELEMENTS = """\
HloModule jit_f, num_partitions=2

%body (param: (s32[], f32[4])) -> (s32[], f32[4]) {
  %param = (s32[], f32[4]{0}) parameter(0)
  %one = s32[] constant(1)
  %next = s32[] add(%param#0, %one), metadata={op_name="jit(f)/while/body/add" stack_frame_id=1}
  %ag = f32[8]{0} all-gather(%param#1), channel_id=1, replica_groups=[1,2]<=[2], dimensions={0}
  %half = f32[4]{0} slice(%ag), slice={[0:4]}
  ROOT %tuple = (s32[], f32[4]{0}) tuple(%next, %half)
}

%cond (param.1: (s32[], f32[4])) -> pred[] {
  %param.1 = (s32[], f32[4]{0}) parameter(0)
  %three = s32[] constant(3)
  ROOT %lt = pred[] compare(%param.1#0, %three), direction=LT
}

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0), sharding={devices=[2]<=[2]}
  %zero = s32[] constant(0)
  %init = (s32[], f32[4]{0}) tuple(%zero, %x)
  %while = (s32[], f32[4]{0}) while(%init), condition=%cond, body=%body
  ROOT %out = f32[4]{0} negate(%while#1), sharding={devices=[2]<=[2]}
}
"""


def test_hlo_readers_read_operands_that_name_a_tuple_element():
    labels = "param one next ag half tuple param.1 three lt x zero init while out".split()
    stage = hlo_stage(HLO_TUPLE_ELEMENTS, SourceTable(exclude=()))
    ops = {op.label: op for op in stage.ops}
    assert list(ops) == labels
    assert ops["next"].name == "add" and ops["next"].types == ("s32[]",)
    assert ops["next"].name_stack == "jit(f)/while/body/add"
    assert ops["lt"].name == "compare" and ops["out"].name == "negate"
    assert [stage.ops[i].label for i in stage.collectives] == ["ag"]
    assert ops["next"].parent == ops["lt"].parent == ops["while"].index
    assert stage.arg_shardings == ("{devices=[2]<=[2]}",)
    assert stage.result_shardings == ("{devices=[2]<=[2]}",)
    # The reader of the dumps after each pass reads the same instructions.
    read = hlo_instructions(HLO_TUPLE_ELEMENTS, SourceTable())
    assert [(i.label, i.name) for i in read.instructions] == [
        (op.label, op.name) for op in stage.ops
    ]
    assert read.instructions[labels.index("while")].calls == (
        ("condition", "cond"),
        ("body", "body"),
    )


def test_mlir_locations_decode_to_op_name_and_call_stack():
    from jax._src.lib.mlir import ir

    with ir.Context():
        inner = ir.Location.name("layer", childLoc=ir.Location.file("/src/m.py", 12, 8))
        outer = ir.Location.name("main", childLoc=ir.Location.file("/src/m.py", 30, 4))
        loc = ir.Location.name("jit(f)/mul", childLoc=ir.Location.callsite(inner, [outer]))
        name, frames = decode_location(loc)
        assert name == "jit(f)/mul"
        assert [(f[5], f[1], f[2]) for f in frames] == [("layer", 12, 8), ("main", 30, 4)]
        fused = ir.Location.fused([ir.Location.unknown(), loc])
        assert decode_location(fused) == (name, frames)
        assert decode_location(ir.Location.unknown()) == (None, ())


# -- sharded programs (8 CPU devices, in a subprocess) -------------------------------

SHARDED = textwrap.dedent("""
    import json
    import jax
    import olympus, olympus.numpy as jnp
    from jax.sharding import NamedSharding, PartitionSpec as P
    from olympus import provenance

    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(jax.sharding.AxisType.Auto,) * 2)

    def layer(x, w):
        h = x @ w
        return jnp.tanh(h)

    f = olympus.jit(layer, in_shardings=(NamedSharding(mesh, P("x", "y")),
                                         NamedSharding(mesh, P("y", None))),
                    out_shardings=NamedSharding(mesh, P("x", None)))
    model = provenance.build(f, jnp.ones((16, 8)), jnp.ones((8, 4)))
    assert provenance.Provenance.from_json(model.to_json_str()) == model
    matmul_line = 11
    print(json.dumps({
        "devices": len(jax.devices()),
        "stablehlo_args": model.stages["stablehlo"].arg_shardings,
        "stablehlo_results": model.stages["stablehlo"].result_shardings,
        "hlo_args": model.stages["compiled"].arg_shardings,
        "collectives": [[op.name, op.collective, model.lines_for_op(op.id)[0][1]]
                        for op in model.collectives()],
        "matmul_hlo": [model.op(i).name for i in
                       model.ops_for_line("<string>", matmul_line)["compiled"]],
    }))
""")


def test_sharded_program_keeps_shardings_and_lists_inserted_collectives():
    facts = run_on_8_devices(SHARDED, timeout=180)
    assert facts["devices"] == 8
    assert facts["stablehlo_args"] == [
        '#sdy.sharding<@mesh, [{"x"}, {"y"}]>',
        '#sdy.sharding<@mesh, [{"y"}, {}]>',
    ]
    assert facts["stablehlo_results"] == ['#sdy.sharding<@mesh, [{"x"}, {}]>']
    assert facts["hlo_args"][0] == "{devices=[4,2]<=[8]}"
    # Contracting the dimension sharded over "y" needs an all-reduce the compiler adds,
    # and it is tied to the line of the matmul.
    assert ["all-reduce", "inserted", 11] in facts["collectives"]
    assert "all-reduce" in facts["matmul_hlo"] and "dot" in facts["matmul_hlo"]


def test_a_few_characters_cannot_decode_to_millions_of_indices(small):
    data = small.to_json()
    data["lines"][0]["ops"]["olympuspr"] = "0-99999999"
    with pytest.raises(ValueError, match="op index 99999999 is out of range"):
        Provenance.from_json(data)
    data = small.to_json()
    data["stages"]["olympuspr"]["ops"]["count"] = 10**9
    with pytest.raises(ValueError, match="claims 1000000000 ops"):
        Provenance.from_json(data)
