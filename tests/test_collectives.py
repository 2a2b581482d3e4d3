"""The collectives a sharding costs, read on a real 8-device CPU mesh (a child
process: XLA must see --xla_force_host_platform_device_count=8 before JAX starts):
a bad sharding of an MLP's first matmul inserts an all-gather on that line, with its
bytes and the argument shardings that caused it; a good one inserts nothing."""

import functools
import textwrap

import pytest

from olympus.collectives import group_size, moved_bytes, shape_bytes
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
