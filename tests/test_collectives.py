"""The collectives a sharding costs, read on a real 8-device CPU mesh (a child
process: XLA must see --xla_force_host_platform_device_count=8 before JAX starts):
a bad sharding of an MLP's first matmul inserts an all-gather on that line, with its
bytes and the argument shardings that caused it; a good one inserts nothing."""

import functools
import textwrap

import pytest

from olympus.buffers import lines_by_label
from olympus.collectives import collectives, group_size, moved_bytes, shape_bytes
from olympus.provenance import Provenance
from olympus.provenance.hlo import hlo_stage
from olympus.provenance.parts import FunctionInfo
from olympus.provenance.sources import SourceTable
from eight_devices import run_on_8_devices

SCRIPT = textwrap.dedent("""
    import dataclasses, json
    import jax
    import olympus, olympus.numpy as jnp
    from olympus.collectives import collectives
    from olympus.sharding import AxisType, NamedSharding, PartitionSpec as P

    mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))

    def mlp(x, w1, w2):
        h = jnp.tanh(x @ w1)
        return h @ w2

    def report(shardings):
        specs = [olympus.ShapeDtypeStruct(s, jnp.float32, sharding=NamedSharding(mesh, p))
                 for s, p in zip(((64, 32), (32, 32), (32, 16)), shardings)]
        out = NamedSharding(mesh, P("x", None))
        compiled = olympus.jit(mlp, out_shardings=out).trace(*specs).lower().compile()
        return [dataclasses.asdict(c) for c in collectives(olympus.provenance.build(compiled))]

    def costs(shardings):
        # The same, through a report's costs stage (what the magic and views show).
        from olympus_jupyter import inspect
        specs = [olympus.ShapeDtypeStruct(s, jnp.float32, sharding=NamedSharding(mesh, p))
                 for s, p in zip(((64, 32), (32, 32), (32, 16)), shardings)]
        jitted = olympus.jit(mlp, out_shardings=NamedSharding(mesh, P("x", None)))
        r = inspect(jitted, *specs, costs=True, stages="source,partitioned,costs", cache=False)
        assert r.failure is None, r.failure
        return {"collectives": r.collectives(), "devices": r.costs["devices"],
                "inputs": r.costs["shardings"]["inputs"], "peak": r.costs["peak"],
                "rows": r.cost_by_line(), "totals": r.costs["totals"],
                "partitioned": r.stage_text("partitioned") is not None}

    first = mlp.__code__.co_firstlineno
    print(json.dumps({
        "matmul_line": first + 1,
        "good": report((P("x", None), P(), P())),        # batch-sharded: no communication
        "bad": report((P(None, "x"), P(None, "x"), P())),  # x sharded on the contraction
        "good_report": costs((P("x", None), P(), P())),
        "bad_report": costs((P(None, "x"), P(None, "x"), P())),
    }))
""")


@functools.lru_cache(maxsize=1)
def _run():
    return run_on_8_devices(SCRIPT)


def test_a_bad_sharding_costs_an_all_gather_on_its_line_and_a_good_one_nothing():
    out = _run()
    assert out["good"] == []
    gathers = [c for c in out["bad"] if c["opcode"] == "all-gather"]
    assert gathers, out["bad"]
    g = gathers[0]
    assert g["kind"] == "inserted" and g["group_size"] == 8
    assert g["lines"][0][1] == out["matmul_line"]
    # The gathered operand: x's 64 x 32 f32 whole on each device; a ring sends 7/8 of it.
    assert g["result_bytes"] == 64 * 32 * 4 and g["moved_bytes"] == 64 * 32 * 4 * 7 // 8
    assert any(s.startswith("argument 0") and '"x"' in s for s in g["shardings"]), g
    # XLA names the op it serves, or (some releases) the operand it moves.
    assert "dot_general" in g["op_name"] or g["op_name"] == "x", g["op_name"]


def test_a_report_shows_the_collectives_shardings_and_per_device_figures():
    out = _run()
    good, bad = out["good_report"], out["bad_report"]
    assert good["collectives"] == [] and good["devices"] == bad["devices"] == 8
    gathers = [c for c in bad["collectives"] if c["opcode"] == "all-gather"]
    # The line that needed it, not the lines the function was called from.
    assert gathers and [line for _, line in gathers[0]["lines"]] == [out["matmul_line"]]
    assert gathers[0]["moved_bytes"] == 64 * 32 * 4 * 7 // 8
    assert any("'x'" in s or '"x"' in s for s in bad["inputs"]), bad["inputs"]
    # Per device: the batch-sharded program holds an eighth of x (64 x 32 f32) on each.
    args = [r for r in good["rows"] if r["what"] == "arguments"]
    assert args and args[0]["peak"] == (64 * 32 + 32 * 32 + 32 * 16) * 4 - 64 * 32 * 4 * 7 // 8
    # The matmul's line costs its flops (per device: 8 rows of x each) and the rows add up.
    for report in (good, bad):
        assert sum(r["flops"] for r in report["rows"]) == pytest.approx(
            report["totals"]["flops"], rel=0.01, abs=1
        )
    matmul = [r for r in good["rows"] if r["line"] == out["matmul_line"]]
    assert matmul[0]["flops"] == 2 * 8 * 32 * 32
    assert good["partitioned"] and bad["partitioned"]


def test_sizes_groups_and_estimates():
    assert shape_bytes("(f32[2,3]{1,0}, s8[4]{0}, token[])") == 28
    assert group_size("{{0,1},{2,3},{4,5},{6,7}}") == 2
    assert group_size("[4,2]<=[8]") == 2 and group_size(None) is None
    assert group_size("mesh['a'=2,'b'=4] {'a','b'}") == 8
    assert moved_bytes("reduce-scatter", 100, 4) == 300
    assert moved_bytes("collective-permute", 100, None) == 100
    assert moved_bytes("all-reduce", 100, 1) == 0


# An FSDP weight's all-gather overlapped with the matmul before its use, as XLA:TPU
# from jaxlib 0.12 compiles it (cut down): an asynchronous collective fusion, a copy
# of the all-gather in its start, in the work it overlaps (line 11's matmul) and in
# its done, one channel for all, each named after the weight it moves and without a
# source line. The done's result, the gathered weight, goes into a fusion whose line
# is its root's (line 13), and is used inside by line 12's matmul.
ASYNC_COLLECTIVE_FUSION = """\
HloModule jit_mlp, num_partitions=4

FileNames
1 "/src/mlp.py"

FunctionNames
1 "mlp"

FileLocations
1 {file_name_id=1 function_name_id=1 line=11 end_line=11 column=8 end_column=20}
2 {file_name_id=1 function_name_id=1 line=12 end_line=12 column=8 end_column=20}
3 {file_name_id=1 function_name_id=1 line=13 end_line=13 column=11 end_column=17}

StackFrames
1 {file_location_id=1 parent_frame_id=1}
2 {file_location_id=2 parent_frame_id=1}
3 {file_location_id=3 parent_frame_id=1}


%start (param_0: bf16[64,256]) -> (bf16[64,256], bf16[256,256], u32[]) {
  %param_0 = bf16[64,256]{1,0} parameter(0)
  %all-gather.1 = bf16[256,256]{1,0} all-gather(%param_0), channel_id=4, replica_groups=[1,4]<=[4], dimensions={0}, use_global_device_ids=true, metadata={op_name="w2"}
  ROOT %custom-call.1 = (bf16[64,256]{1,0}, bf16[256,256]{1,0}, u32[]) custom-call(%all-gather.1), custom_call_target="AsyncCollectiveStart"
}

%overlapped (param_0.1: bf16[64,256], param_1.1: bf16[256,256], param_2.1: u32[], param_3.1: f32[8,256], param_4.1: f32[256,256]) -> (f32[8,256], bf16[64,256], bf16[256,256], u32[]) {
  %param_3.1 = f32[8,256]{1,0} parameter(3)
  %param_4.1 = f32[256,256]{1,0} parameter(4)
  %dot.1 = f32[8,256]{1,0} dot(%param_3.1, %param_4.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(mlp)/dot_general" stack_frame_id=1}
  %param_0.1 = bf16[64,256]{1,0} parameter(0)
  %param_1.1 = bf16[256,256]{1,0} parameter(1)
  %all-gather.2 = bf16[256,256]{1,0} all-gather(%param_0.1), channel_id=4, replica_groups=[1,4]<=[4], dimensions={0}, use_global_device_ids=true, metadata={op_name="w2"}
  %param_2.1 = u32[] parameter(2)
  ROOT %tuple.1 = (f32[8,256]{1,0}, bf16[64,256]{1,0}, bf16[256,256]{1,0}, u32[]) tuple(%dot.1, %param_0.1, %all-gather.2, %param_2.1)
}

%done (param_0.2: bf16[64,256], param_1.2: bf16[256,256], param_2.2: u32[]) -> bf16[256,256] {
  %param_0.2 = bf16[64,256]{1,0} parameter(0)
  %param_1.2 = bf16[256,256]{1,0} parameter(1)
  %all-gather.3 = bf16[256,256]{1,0} all-gather(%param_0.2), channel_id=4, replica_groups=[1,4]<=[4], dimensions={0}, use_global_device_ids=true, metadata={op_name="w2"}
  %param_2.2 = u32[] parameter(2)
  ROOT %custom-call.2 = bf16[256,256]{1,0} custom-call(%param_0.2, %param_1.2, %all-gather.3, %param_2.2), custom_call_target="AsyncCollectiveDone"
}

%layers (param_0.3: f32[8,256], param_1.3: bf16[256,256], param_2.3: f32[256,256]) -> f32[8,256] {
  %param_0.3 = f32[8,256]{1,0} parameter(0)
  %param_1.3 = bf16[256,256]{1,0} parameter(1)
  %convert.1 = f32[256,256]{1,0} convert(%param_1.3)
  %dot.2 = f32[8,256]{1,0} dot(%param_0.3, %convert.1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(mlp)/dot_general" stack_frame_id=2}
  %param_2.3 = f32[256,256]{1,0} parameter(2)
  ROOT %dot.3 = f32[8,256]{1,0} dot(%dot.2, %param_2.3), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="jit(mlp)/dot_general" stack_frame_id=3}
}

ENTRY %main (x: f32[8,256], w1: f32[256,256], w2: bf16[64,256], w3: f32[256,256]) -> f32[8,256] {
  %x = f32[8,256]{1,0} parameter(0), metadata={op_name="x"}
  %w1 = f32[256,256]{1,0} parameter(1), metadata={op_name="w1"}
  %w2 = bf16[64,256]{1,0} parameter(2), metadata={op_name="w2"}
  %w3 = f32[256,256]{1,0} parameter(3), metadata={op_name="w3"}
  %async-collective-start = (bf16[64,256]{1,0}, bf16[256,256]{1,0}, u32[]) fusion(%w2), kind=kCustom, calls=%start
  %get-tuple-element.0 = bf16[64,256]{1,0} get-tuple-element(%async-collective-start), index=0
  %get-tuple-element.1 = bf16[256,256]{1,0} get-tuple-element(%async-collective-start), index=1
  %get-tuple-element.2 = u32[] get-tuple-element(%async-collective-start), index=2
  %fusion.1 = (f32[8,256]{1,0}, bf16[64,256]{1,0}, bf16[256,256]{1,0}, u32[]) fusion(%get-tuple-element.0, %get-tuple-element.1, %get-tuple-element.2, %x, %w1), kind=kCustom, calls=%overlapped, metadata={op_name="jit(mlp)/dot_general" stack_frame_id=1}
  %h = f32[8,256]{1,0} get-tuple-element(%fusion.1), index=0, metadata={op_name="jit(mlp)/dot_general" stack_frame_id=1}
  %get-tuple-element.3 = bf16[64,256]{1,0} get-tuple-element(%fusion.1), index=1
  %get-tuple-element.4 = bf16[256,256]{1,0} get-tuple-element(%fusion.1), index=2
  %get-tuple-element.5 = u32[] get-tuple-element(%fusion.1), index=3
  %async-collective-done = bf16[256,256]{1,0} fusion(%get-tuple-element.3, %get-tuple-element.4, %get-tuple-element.5), kind=kCustom, calls=%done, metadata={op_name="w2"}
  ROOT %out = f32[8,256]{1,0} fusion(%h, %async-collective-done, %w3), kind=kOutput, calls=%layers, metadata={op_name="jit(mlp)/dot_general" stack_frame_id=3}
}
"""


def test_an_async_collective_fusion_without_lines_is_charged_to_the_line_using_its_result():
    table = SourceTable(exclude=())
    stage = hlo_stage(ASYNC_COLLECTIVE_FUSION, table, name="compiled")
    model = Provenance(
        function=FunctionInfo("mlp"),
        platforms=("tpu",),
        stages={"compiled": stage},
        files=table.source_files(),
        frames=tuple(table.frames),
        locations=tuple(table.locations),
    )
    (gather,) = collectives(model)  # one all-gather in three copies
    assert (gather.label, gather.opcode, gather.op_name) == ("all-gather.1", "all-gather", "w2")
    assert gather.result_bytes == 256 * 256 * 2 and gather.group_size == 4
    # Not the start's (nothing uses its result but its part), nor the overlapped
    # work's (line 11), nor the fusion's that takes the gathered weight (line 13):
    # line 12's matmul, inside that fusion, uses it.
    assert gather.lines == (("/src/mlp.py", 12),)


def test_the_buffers_of_a_collective_without_lines_are_put_down_to_the_line_using_it():
    # The buffers the peak lists by line (olympus.buffers): the all-gather's, held by
    # its start and its done, are line 12's, where the peak of an FSDP step is.
    table = SourceTable(exclude=())
    stage = hlo_stage(ASYNC_COLLECTIVE_FUSION, table, name="compiled")
    lines = lines_by_label(stage, table.tables())
    for label in ("async-collective-start", "async-collective-done"):
        assert lines[label] == (("/src/mlp.py", 12),), label
    # What has lines of its own keeps them; what no source made stays the compiler's.
    assert lines["fusion.1"] == (("/src/mlp.py", 11),) and lines["out"][0] == ("/src/mlp.py", 13)
    assert lines["get-tuple-element.0"] == ()
