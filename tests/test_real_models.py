"""The real-model corpus (``tests/real_models/``): flax ``nnx`` and linen, equinox
and optax train steps as their users write them. Each program is lowered and
compiled by the wrapper its user jits with (``jax.jit``, ``nnx.jit``,
``eqx.filter_jit``: each has ``.lower``), has flops, and runs a step to a finite
loss; the sharded programs (the linen transformer, the ``nnx`` decoder with
``optax.MultiSteps``) do so on 8 devices, in a child process, with collectives in
their compiled programs. ``olympus_jupyter.inspect`` is checked here
on the programs jitted by ``jax.jit`` (the framework wrappers are issue 33's
"every entry point" work, tested with it)."""

from __future__ import annotations

import math
import pathlib
from typing import Any

import jax
import numpy as np
import pytest

import real_models
from eight_devices import run_on_8_devices

TESTS = pathlib.Path(__file__).resolve().parent

#: Where each program's step output holds the loss (None: the output is the loss).
LOSS_AT = {
    "cnn_nnx": None,
    "cnn_nnx_jax": 0,
    "scan_nnx": None,
    "scan_nnx_unrolled": None,
    "vit_equinox": 2,
    "transformer_linen": 1,
    "decoder_nnx": 2,
}


def jax_cost_analysis(compiled) -> dict:
    """``cost_analysis()`` of a compiled step: JAX's and flax ``nnx``'s ``Compiled``
    have it, equinox's holds JAX's as ``.compiled``."""
    if hasattr(compiled, "cost_analysis"):
        return compiled.cost_analysis()
    return compiled.compiled.cost_analysis()


_STAGED: dict[str, dict] = {}


def staged(name: str) -> dict:
    """Program ``name`` made, lowered and compiled as its user would, and one step run
    with the compiled step (once per test session)."""
    if name not in _STAGED:
        program = real_models.make(name)
        fn: Any = program.fn  # jax.jit, nnx.jit, eqx.filter_jit: each has .lower
        lowered = fn.lower(*program.args, **program.kwargs)
        compiled = lowered.compile()
        out = compiled(*program.args, **program.kwargs)
        at = LOSS_AT[name]
        _STAGED[name] = dict(
            program=program,
            flops=jax_cost_analysis(compiled)["flops"],
            loss=float(out if at is None else out[at]),
        )
    return _STAGED[name]


@pytest.mark.parametrize("name", sorted(real_models.SINGLE_DEVICE))
def test_each_program_compiles_with_flops_and_trains_a_step(name):
    result = staged(name)
    program = result["program"]
    assert program.name == name
    assert pathlib.Path(program.user_file).parent == TESTS / "real_models"
    assert result["flops"] > 0, (name, jax.default_backend())
    assert math.isfinite(result["loss"]) and result["loss"] > 0, result["loss"]


def test_the_scan_and_its_unrolled_twin_are_the_same_program():
    """Same weights, same arithmetic: the same loss, so that their costs can be
    compared (the scan's body runs 8 times)."""
    scanned, unrolled = staged("scan_nnx"), staged("scan_nnx_unrolled")
    np.testing.assert_allclose(scanned["loss"], unrolled["loss"], rtol=1e-5)
    model = scanned["program"].args[0]
    assert model.blocks.linear.kernel.shape[0] == len(unrolled["program"].args[0].blocks) == 8


@pytest.mark.parametrize("name", sorted(real_models.EIGHT_DEVICES))
def test_the_sharded_programs_need_8_devices_and_say_so(name):
    if len(jax.devices()) >= 8:
        pytest.skip(f"this process sees {len(jax.devices())} devices")
    with pytest.raises(RuntimeError, match="needs 8 devices.*device_count=8"):
        real_models.make(name)


def test_inspect_reports_the_jax_jit_programs_costs():
    from olympus_jupyter import inspect

    result = staged("cnn_nnx_jax")
    program = result["program"]
    report = inspect(program.fn, *program.args, costs=True, cache=False)
    assert report.ok, report.failure
    assert "costs" in report.stages
    rows = report.cost_by_line()
    # XLA's totals are what it counts for the same program; the rows add up to them
    # with each loop body counted × its trip count (the pooling's loops, here).
    costs = report.costs
    assert costs["totals"]["flops"] == pytest.approx(result["flops"], rel=1e-6)
    counted = costs.get("counted_totals") or costs["totals"]
    assert sum(r["flops"] for r in rows) == pytest.approx(counted["flops"], rel=1e-6)


SHARDED = """
import json, math, sys
sys.path.insert(0, {tests!r})
import jax
import real_models

program = real_models.make("transformer_linen")
state, tokens = program.args
compiled = program.fn.lower(*program.args).compile()
hlo = compiled.as_text()
kernel = state.params["block_0"]["Mlp_0"]["up"]["kernel"]
out = dict(
    devices=len(jax.devices()),
    mesh=dict(tokens.sharding.mesh.shape),
    up_kernel=list(kernel.value.sharding.spec),
    tokens=list(tokens.sharding.spec),
    flops=compiled.cost_analysis()["flops"],
    collectives={{op: hlo.count(op + "(") + hlo.count(op + "-start(")
                 for op in ("all-gather", "all-reduce", "reduce-scatter")}},
)
from olympus_jupyter import inspect
report = inspect(program.fn, *program.args, costs=True, cache=False)
out["report_ok"] = report.ok
out["failure"] = str(report.failure)
if report.ok:
    out["report_flops"] = sum(r["flops"] for r in report.cost_by_line())
    out["report_collectives"] = len(report.collectives())
# Last: the step donates the state.
new_state, loss = compiled(*program.args)
out["loss"] = float(loss)
out["step"] = int(new_state.step)
print(json.dumps(out))
"""


def test_the_sharded_transformer_compiles_with_collectives_on_8_devices():
    out = run_on_8_devices(SHARDED.format(tests=str(TESTS)), timeout=600)
    assert out["devices"] == 8 and out["mesh"] == {"fsdp": 4, "tensor": 2}
    # The logical axis rules: a kernel's ("embed", "mlp") on (fsdp, tensor), the
    # batch on fsdp.
    assert out["up_kernel"] == ["fsdp", "tensor"]
    assert out["tokens"] == ["fsdp", None]
    assert out["flops"] > 0
    # fsdp gathers the parameters; the gradients are reduced.
    assert out["collectives"]["all-gather"] > 0, out["collectives"]
    assert out["collectives"]["all-reduce"] + out["collectives"]["reduce-scatter"] > 0
    assert math.isfinite(out["loss"]) and out["step"] == 1
    assert out["report_ok"], out["failure"]
    assert out["report_flops"] == pytest.approx(out["flops"], rel=1e-6)
    assert out["report_collectives"] > 0


DECODER = """
import json, math, sys
sys.path.insert(0, {tests!r})
import jax
import numpy as np
import real_models

program = real_models.make("decoder_nnx")
params, opt_state, tokens = program.args
compiled = program.fn.lower(*program.args).compile()
hlo = compiled.as_text()
kernel = params["blocks"][0]["up"]["kernel"].value
out = dict(
    devices=len(jax.devices()),
    mesh=dict(tokens.sharding.mesh.shape),
    up_kernel=list(kernel.sharding.spec),
    tokens=list(tokens.sharding.spec),
    counter=[str(opt_state.mini_step.dtype), list(opt_state.mini_step.sharding.spec)],
    donated="input_output_alias" in hlo.split("\\n", 1)[0],
    flops=compiled.cost_analysis()["flops"],
    collectives={{op: hlo.count(" " + op + "(") + hlo.count(" " + op + "-start(")
                 for op in ("all-gather", "all-reduce", "reduce-scatter", "all-to-all",
                            "collective-permute")}},
)
from olympus_jupyter import inspect
report = inspect(program.fn, *program.args, costs=True, cache=False)
out["report_ok"] = report.ok
out["failure"] = str(report.failure)
if report.ok:
    out["report_flops"] = sum(r["flops"] for r in report.cost_by_line())
    out["report_collectives"] = len(report.collectives())
# Last: the steps donate the parameters and the optimizer state.
before = np.asarray(kernel)
losses, changed = [], []
for _ in range(4):
    old = params
    params, opt_state, loss = compiled(params, opt_state, tokens)
    losses.append(float(loss))
    changed.append(not np.array_equal(np.asarray(params["blocks"][0]["up"]["kernel"].value), before))
out["donated_deleted"] = old["blocks"][0]["up"]["kernel"].value.is_deleted()
out["losses"], out["changed"] = losses, changed
out["steps"] = [int(opt_state.gradient_step), int(opt_state.mini_step)]
print(json.dumps(out))
"""


_DECODER_RUN: dict[str, Any] = {}


def decoder_run() -> dict[str, Any]:
    """What the ``DECODER`` child found (run once per test session)."""
    if not _DECODER_RUN:
        _DECODER_RUN.update(run_on_8_devices(DECODER.format(tests=str(TESTS)), timeout=600))
    return _DECODER_RUN


def test_the_fsdp_decoder_accumulates_and_donates_on_8_devices():
    """The ``nnx`` decoder: fsdp over 8 devices, ``optax.MultiSteps`` (int32 step
    counters in its state, the adamw step on every 4th call), its arguments donated;
    Olympus reports it with its flops and collectives."""
    out = decoder_run()
    assert out["devices"] == 8 and out["mesh"] == {"fsdp": 8}
    assert out["up_kernel"] == ["fsdp", None] and out["tokens"] == ["fsdp", None]
    assert out["counter"] == ["int32", []]  # MultiSteps' counters: replicated scalars
    assert out["donated"], "the donated state aliases the outputs"
    assert out["flops"] > 0
    # fsdp gathers the parameters for the forward and backward passes; the
    # gradients are summed over the devices.
    assert out["collectives"]["all-gather"] > 0, out["collectives"]
    assert out["collectives"]["all-reduce"] + out["collectives"]["reduce-scatter"] > 0
    assert out["report_ok"], out["failure"]
    # Each collective of the compiled program is one of the report's.
    assert out["report_collectives"] == sum(out["collectives"].values()), out
    assert out["report_flops"] == pytest.approx(out["flops"], rel=1e-5)
    # Three micro-batches accumulate; the fourth call takes the adamw step.
    assert all(math.isfinite(x) and x > 0 for x in out["losses"]), out["losses"]
    assert out["changed"] == [False, False, False, True], out["changed"]
    assert out["steps"] == [1, 0]
    assert out["donated_deleted"]


@pytest.mark.xfail(
    strict=True,
    reason="the decoder's rows add up to 69 flops (1.6e-6) over cost_analysis(): "
    "costed alone (olympus/line_costs.py), each fusion reading optax.MultiSteps' "
    "mini-step counter (its select between accumulating and applying; 68 flops in "
    "all) and the combined gradient all-reduce count 1 flop more than in XLA's "
    "analysis of the whole module (found with this program; open)",
)
def test_the_fsdp_decoders_rows_add_up_to_cost_analysis_within_1e_6():
    out = decoder_run()
    assert out["report_ok"], out["failure"]
    assert out["report_flops"] == pytest.approx(out["flops"], rel=1e-6)
