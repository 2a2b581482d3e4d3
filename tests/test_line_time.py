"""Time per line from the compiler, before any run (olympus.line_time and the costs
stage's time column): the TPU compiler's estimated cycles by source line and module,
in seconds at the chip's clock, and a roofline from a GPU's peak figures. The tests
marked ``targets`` compile for a TPU slice and GPUs (run in .venvs/targets-<JAX>);
the others read hand-written HLO and run anywhere."""

import math

import jax
import jax.extend.backend
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

import olympus_jupyter
from olympus import jax_compat
from olympus.line_costs import CostByLine, LibraryCost, LineCost, cost_by_line_text
from olympus.line_time import (
    CYCLES,
    ROOFLINE,
    cycles_by_line_text,
    estimated_cycles,
    roofline_by_line,
    roofline_seconds,
    total_cycles,
)
from olympus_jupyter.report import costs_view
from olympus_jupyter.report.text import costs_lines
from olympus_jupyter.report.time_view import add_time, text_lines
from olympus_jupyter.report.validate import check_bundle

HERE = __file__
CPU = jax_compat.hlo_text_cost_analyzer(jax.extend.backend.get_backend("cpu"))


def meta(line: int, name: str = "op") -> str:
    return f'metadata={{op_name="{name}" source_file="/m.py" source_line={line}}}'


# A fusion of a matmul (line 3) and an add (line 4): its 1,000 cycles split by flops.
FUSED = f"""HloModule m

%fused (p0: f32[64,128], p1: f32[128,32], p2: f32[64,32]) -> f32[64,32] {{
  %p0 = f32[64,128]{{1,0}} parameter(0)
  %p1 = f32[128,32]{{1,0}} parameter(1)
  %p2 = f32[64,32]{{1,0}} parameter(2)
  %dot.1 = f32[64,32]{{1,0}} dot(%p0, %p1), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, {meta(3, "dot")}
  ROOT %add.1 = f32[64,32]{{1,0}} add(%dot.1, %p2), {meta(4, "add")}
}}

%copied (p0: f32[64,32]) -> f32[32,64] {{
  %p0 = f32[64,32]{{1,0}} parameter(0)
  ROOT %transpose.1 = f32[32,64]{{1,0}} transpose(%p0), dimensions={{1,0}}, {meta(5, "transpose")}
}}

%sum (x: f32[], y: f32[]) -> f32[] {{
  %x = f32[] parameter(0)
  %y = f32[] parameter(1)
  ROOT %s = f32[] add(%x, %y)
}}

ENTRY %main (a: f32[64,128], b: f32[128,32], c: f32[64,32]) -> f32[32,64] {{
  %a = f32[64,128]{{1,0}} parameter(0)
  %b = f32[128,32]{{1,0}} parameter(1)
  %c = f32[64,32]{{1,0}} parameter(2)
  %fusion = f32[64,32]{{1,0}} fusion(%a, %b, %c), kind=kOutput, calls=%fused, backend_config={{"window_config":{{"estimated_cycles":"1000"}}}}
  %all-reduce = f32[64,32]{{1,0}} all-reduce(%fusion), replica_groups={{}}, to_apply=%sum, {meta(6, "psum")}
  ROOT %fusion.2 = f32[32,64]{{1,0}} fusion(%all-reduce), kind=kLoop, calls=%copied, backend_config={{"estimated_cycles":"300"}}
}}
"""

# A loop of 4 iterations XLA knows, its body's fusion (line 7) 100 cycles each.
LOOP = f"""HloModule m

%fdot (p0: f32[8,8]) -> f32[8,8] {{
  %p0 = f32[8,8]{{1,0}} parameter(0)
  ROOT %dot.2 = f32[8,8]{{1,0}} dot(%p0, %p0), lhs_contracting_dims={{1}}, rhs_contracting_dims={{0}}, {meta(7, "dot")}
}}

%body (p: (s32[], f32[8,8])) -> (s32[], f32[8,8]) {{
  %p = (s32[], f32[8,8]{{1,0}}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %x = f32[8,8]{{1,0}} get-tuple-element(%p), index=1
  %f = f32[8,8]{{1,0}} fusion(%x), kind=kOutput, calls=%fdot, backend_config={{"estimated_cycles":"100"}}
  %one = s32[] constant(1)
  %next = s32[] add(%i, %one)
  ROOT %t = (s32[], f32[8,8]{{1,0}}) tuple(%next, %f)
}}

%cond (p: (s32[], f32[8,8])) -> pred[] {{
  %p = (s32[], f32[8,8]{{1,0}}) parameter(0)
  %i = s32[] get-tuple-element(%p), index=0
  %n = s32[] constant(4)
  ROOT %lt = pred[] compare(%i, %n), direction=LT
}}

ENTRY %main (x: f32[8,8]) -> f32[8,8] {{
  %x = f32[8,8]{{1,0}} parameter(0)
  %zero = s32[] constant(0)
  %t = (s32[], f32[8,8]{{1,0}}) tuple(%zero, %x)
  %w = (s32[], f32[8,8]{{1,0}}) while(%t), condition=%cond, body=%body, backend_config={{"known_trip_count":{{"n":"4"}}}}
  ROOT %r = f32[8,8]{{1,0}} get-tuple-element(%w), index=1
}}
"""


def by_line(time) -> dict:
    return {r.line: r for r in time.lines}


def test_estimated_cycles_are_read_from_the_backend_config():
    assert (
        estimated_cycles(', backend_config={"window_config":{"estimated_cycles":"5967"}}') == 5967
    )
    assert estimated_cycles(', to_apply=%add, backend_config={"barrier_config":{}}') is None
    assert total_cycles(FUSED) == 1300 and total_cycles(LOOP) == 100


def test_a_fusions_cycles_go_to_the_lines_of_what_it_fused_by_their_flops():
    time = cycles_by_line_text(FUSED, CPU, clock_hz=1.5e9, chip="TPU v5e")
    rows = by_line(time)
    # Split as the per-line costs split the fusion's flops: nearly all to the matmul.
    flops = {r.line: r.flops for r in cost_by_line_text(FUSED, CPU).lines}
    fused = flops[3] + flops[4]
    assert rows[3].cycles == pytest.approx(1000 * flops[3] / fused)
    assert rows[4].cycles == pytest.approx(1000 * flops[4] / fused)
    assert rows[3].cycles > 900
    # A fusion that computes nothing (a transpose) keeps its cycles, by its bytes.
    assert rows[5].cycles == pytest.approx(300)
    assert time.cycles == pytest.approx(1300) and time.check(total_cycles(FUSED)) == ()
    assert sum(time.share(r) for r in time.lines) == pytest.approx(1.0)
    assert max(time.lines, key=time.share).line == 3
    for r in time.lines:
        assert r.seconds == pytest.approx(r.cycles / 1.5e9)
    assert time.seconds == pytest.approx(1300 / 1.5e9)
    assert time.figure == CYCLES and time.what.startswith(
        "the compiler's estimate of cycles, before any run"
    )
    assert "1.5 GHz" in time.what
    # The all-reduce has no estimate: the notes say the figures leave it out.
    assert any("no estimate for 1 instruction(s) (all-reduce)" in n for n in time.notes)


def test_without_the_chips_clock_the_time_is_cycles_alone():
    time = cycles_by_line_text(FUSED, CPU, chip="TPU v6e")
    assert time.seconds is None and all(r.seconds is None for r in time.lines)
    assert time.cycles == pytest.approx(1300)
    assert "does not know the TPU v6e's clock: cycles only" in time.what


def test_a_loop_body_counts_its_trip_count_times():
    time = cycles_by_line_text(LOOP, CPU, clock_hz=1e9)
    (row,) = time.lines
    assert (row.line, row.cycles) == (7, 400)
    assert str(row.iterations[0]) == "× 4 iterations"
    assert time.cycles == 400 and time.modules[""]["cycles"] == 400
    # The loop counter's scalar bookkeeping is not an instruction without an estimate.
    assert not any("no estimate" in n for n in time.notes)


def test_a_roofline_is_the_larger_of_flops_over_peak_and_bytes_over_bandwidth():
    assert roofline_seconds(2e12, 1e9, 1e15, 1e12) == (0.002, "flops")
    assert roofline_seconds(2e9, 1e9, 1e15, 1e12) == (0.001, "bytes")
    assert roofline_seconds(0.0, 0.0, 1e15, 1e12) == (0.0, "bytes")
    cost = CostByLine(
        (
            LineCost(
                "/m.py",
                3,
                2e12,
                0.0,
                1e9,
                ("dot.1",),
                (LibraryCost("/lib.py", 9, "dense", 2e12, 0.0, 5e8),),
            ),
            LineCost("/m.py", 4, 1e9, 0.0, 4e9, ("add.1",)),
        ),
        {},
        modules={"Dense": {"flops": 2e12, "transcendentals": 0.0, "bytes accessed": 1e9}},
    )
    time = roofline_by_line(cost, peak_flops=1e15, hbm_bandwidth=1e12, chip="H100")
    rows = by_line(time)
    assert (rows[3].seconds, rows[3].bound) == (0.002, "flops")
    assert (rows[4].seconds, rows[4].bound) == (0.004, "bytes")
    assert rows[3].library[0].seconds == 0.002
    assert time.figure == ROOFLINE and time.cycles is None and time.seconds == 0.006
    assert time.modules["Dense"]["seconds"] == 0.002
    assert time.what.startswith("roofline estimate from the H100's peak FLOP/s")


def _costs_data():
    return {
        "lines": [
            {
                "what": "line",
                "file": 0,
                "path": None,
                "line": 3,
                "flops": 8.0,
                "transcendentals": 0.0,
                "bytes": 96.0,
                "peak": 0,
                "instructions": [],
                "buffers": [],
                "via": [],
            },
            {
                "what": "compiler-made",
                "file": None,
                "path": None,
                "line": None,
                "flops": 0.0,
                "transcendentals": 0.0,
                "bytes": 32.0,
                "peak": 0,
                "instructions": [],
                "buffers": [],
                "via": [],
            },
        ],
        "modules": [{"path": "", "flops": 8.0, "transcendentals": 0.0, "bytes": 128.0}],
        "totals": {"flops": 8.0, "transcendentals": 0.0, "bytes accessed": 128.0},
        "peak": None,
        "devices": 1,
        "collectives": [],
        "notes": [],
        "unavailable": {},
    }


def test_the_time_column_in_the_data_rows_and_text():
    time = cycles_by_line_text(FUSED, CPU, clock_hz=1.5e9, chip="TPU v5e")
    data = _costs_data()
    add_time(data, time, ["/m.py"])
    assert data["time"]["figure"] == "cycles" and data["time"]["cycles"] == pytest.approx(1300)
    rows = costs_view.line_rows(data, ["/m.py"])
    assert [r["line"] for r in rows if r["what"] == "line"][0] == 3
    assert {r["line"] for r in rows if r["what"] == "line"} == {3, 4, 5}  # 4, 5: time alone
    assert sum(r["time_share"] for r in rows) == pytest.approx(1.0)
    assert all(r["seconds"] == pytest.approx(r["cycles"] / 1.5e9) for r in rows)
    (node,) = costs_view.module_rows(data)
    assert (node["cycles"], node["time_share"]) == pytest.approx((1300, 1.0))
    text = "\n".join(costs_lines(data, None))
    assert "time: 1.3 k cycles, 867 ns in all, the compiler's estimate of cycles" in text
    assert "line 3: 8 FLOP (100%), 96 B (75%), time 985 cycles, 656 ns (76%)" in text
    assert text.isascii()
    assert text_lines({"lines": []}) == []


def test_a_report_of_this_machines_devices_has_no_time():
    report = olympus_jupyter.inspect(
        lambda x, w: x @ w,
        np.ones((4, 8), np.float32),
        np.ones((8, 2), np.float32),
        costs=True,
        cache=False,
    )
    assert "time" not in report.costs
    assert all("cycles" not in r and "time_share" not in r for r in report.cost_by_line())
    assert all("time_share" not in r for r in report.cost_by_module())
    assert "    time:" not in report.text() and "ol-ctime" not in str(report.html())


# -- compiled for a TPU slice and GPUs (the targets environment) --------------------


def model(x, w1, w2):
    h = jnp.tanh(x @ w1)  # the first matmul
    return h @ w2  # the second matmul


FIRST = model.__code__.co_firstlineno + 1
SECOND = FIRST + 1
X = jax.ShapeDtypeStruct((1024, 2048), jnp.bfloat16)
W1 = jax.ShapeDtypeStruct((2048, 4096), jnp.bfloat16)
W2 = jax.ShapeDtypeStruct((4096, 256), jnp.bfloat16)
MESH = dict(mesh="data=2,model=2", shardings=(P("data", None), P(None, "model"), P("model", None)))


@pytest.mark.targets
def test_on_a_tpu_slice_the_compilers_cycles_by_line_add_up_and_are_seconds_at_its_clock():
    report = olympus_jupyter.inspect(model, X, W1, W2, target="v5e:2x2", costs=True, **MESH)
    time = report.costs["time"]
    assert time["figure"] == "cycles" and time["clock_hz"] == 1.5e9
    assert time["what"].startswith("the compiler's estimate of cycles, before any run")
    rows = report.cost_by_line()
    lines = {r["line"]: r for r in rows if r["file"] == HERE}
    # The first matmul (2·512·2048·2048 flops a device) takes the largest share.
    assert max(rows, key=lambda r: r["time_share"])["line"] == FIRST
    assert lines[FIRST]["time_share"] > lines[SECOND]["time_share"] > 0
    assert sum(r["time_share"] for r in rows) == pytest.approx(1.0)
    for r in rows:
        assert r["seconds"] == pytest.approx(r["cycles"] / 1.5e9)
    # Every estimate of the compiled program, given to lines once each (no loop).
    compiled = report.stage_text("compiled")
    assert sum(r["cycles"] for r in rows) == pytest.approx(total_cycles(compiled))
    assert time["cycles"] == pytest.approx(total_cycles(compiled))
    assert time["seconds"] == pytest.approx(time["cycles"] / 1.5e9)
    modules = report.cost_by_module()
    assert sum(m["cycles"] for m in modules if m["depth"] == 0) == pytest.approx(time["cycles"])
    # Every form names the figure; the bundle carries it.
    assert "the compiler's estimate of cycles, before any run" in report.text()
    html = str(report.html())
    assert "time (compiler&#x27;s estimate)" in html or "time (compiler's estimate)" in html
    check_bundle(report.to_json())


@pytest.mark.targets
def test_on_gpus_each_lines_time_is_a_roofline_from_the_gpus_figures():
    from olympus import hardware

    report = olympus_jupyter.inspect(model, X, W1, W2, target="h100:4", costs=True, **MESH)
    time = report.costs["time"]
    figures = hardware.target("h100:4").per_device()
    peak, bandwidth = figures["peak_flops"], figures["hbm_bandwidth"]
    assert (time["figure"], time["peak_flops"], time["hbm_bandwidth"]) == (
        "roofline",
        peak,
        bandwidth,
    )
    assert time["what"].startswith("roofline estimate from the NVIDIA H100 SXM 80GB's peak FLOP/s")
    rows = [r for r in report.cost_by_line() if r["what"] != "arguments"]
    assert any(r["file"] == HERE and r["seconds"] > 0 for r in rows)
    for r in rows:
        compute = (r["flops"] + r["transcendentals"]) / peak
        memory = r["bytes"] / bandwidth
        assert r["seconds"] == pytest.approx(max(compute, memory))
        if r["seconds"]:
            assert r["bound"] == ("flops" if compute >= memory else "bytes")
    assert sum(r["time_share"] for r in rows) == pytest.approx(1.0)
    assert math.isclose(time["seconds"], sum(r["seconds"] for r in rows), rel_tol=1e-9)
    assert "roofline estimate from the NVIDIA H100" in report.text()
    check_bundle(report.to_json())
