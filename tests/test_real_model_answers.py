"""Issue 33's answers about the user's own code, on the real-model corpus
(``tests/real_models/``): the flops sit on the user's lines, every layer of every
block has its row by module, the scan counts its 8 iterations, the CNN's weight
gradient is not charged to the optimizer, the sharded programs' argument buffers
carry their pytree names, and their gradients' collectives name the parameters
they serve."""

from __future__ import annotations


import jax
import pytest

import real_models
from eight_devices import run_on_8_devices
from olympus_jupyter import inspect

_REPORTS: dict[str, object] = {}


def report_of(name: str):
    """The costs report of corpus program ``name``, made once per session through
    ``inspect`` as a user would hand it over (its ``nnx.jit``, ``eqx.filter_jit`` or
    ``jax.jit`` step)."""
    if name not in _REPORTS:
        program = real_models.make(name)
        report = inspect(program.fn, *program.args, **program.kwargs, costs=True, cache=False)
        assert report.ok, report.failure
        _REPORTS[name] = (program, report)
    return _REPORTS[name]


def user_share(report, user_file: str) -> float:
    rows = report.cost_by_line()
    total = sum(r["flops"] for r in rows)
    return sum(r["flops"] for r in rows if r["file"] == user_file) / total


@pytest.mark.parametrize("name", ["cnn_nnx", "scan_nnx", "vit_equinox"])
def test_the_flops_sit_on_the_users_own_lines(name):
    program, report = report_of(name)
    assert user_share(report, program.user_file) >= 0.9, report.cost_by_line()[:5]
    # ... where the innermost frames put most of them in the libraries.
    inner = report.cost_by_line(frames="innermost")
    on_user = sum(r["flops"] for r in inner if r["file"] == program.user_file)
    assert on_user < 0.5 * sum(r["flops"] for r in inner)


def test_the_scan_counts_its_iterations_as_the_unrolled_program_does():
    _, scanned = report_of("scan_nnx")
    _, unrolled = report_of("scan_nnx_unrolled")
    counted = sum(r["flops"] for r in scanned.cost_by_line())
    flat = sum(r["flops"] for r in unrolled.cost_by_line())
    assert abs(counted - flat) <= 0.1 * flat, (counted, flat)
    assert scanned.costs["totals"]["flops"] < 0.5 * flat  # XLA's own figure counts once
    assert any("× 8 iterations" in r["iterations"] for r in scanned.cost_by_line())


def test_the_cnn_weight_gradient_is_not_charged_to_the_optimizer():
    """The optimizer's line costs what SGD with momentum does, a few flops per
    parameter; the weight gradients' convolutions (XLA makes them anew, without a
    location) are charged to the model's lines, not to the line they feed."""
    from flax import nnx

    program, report = report_of("cnn_nnx")
    source = open(program.user_file).read().splitlines()
    update = next(k + 1 for k, t in enumerate(source) if "optimizer.update(" in t)
    params = sum(x.size for x in jax.tree_util.tree_leaves(nnx.state(program.args[0], nnx.Param)))
    rows = report.cost_by_line()
    on_update = sum(
        r["flops"] for r in rows if r["file"] == program.user_file and r["line"] == update
    )
    assert on_update <= 10 * params, (on_update, params)
    conv_lines = [k + 1 for k, t in enumerate(source) if "self.conv" in t and "(x)" in t]
    on_convs = sum(
        r["flops"] for r in rows if r["file"] == program.user_file and r["line"] in conv_lines
    )
    assert on_convs > 100 * params, (on_convs, params)


def test_instructions_without_a_location_are_followed_back_through_the_passes():
    """Without the lowered program's help, the weight gradients' convolutions (made
    anew by XLA's convolution canonicalization, then renamed) are followed back
    through the dumped passes to the convolutions they were made from: each on its
    own layer's line, as the lowered program's shapes place them."""
    from olympus.dumps import DumpNeeds, compile_dumped
    from olympus.line_costs import cost_by_line
    from olympus.passes import origins

    program = real_models.make("cnn_nnx_jax")
    lowered = program.fn.trace(*program.args).lower()
    compiled, dump = compile_dumped(lowered, DumpNeeds(pass_re=".*"))
    pipeline = dump.passes()
    fed = cost_by_line(compiled)
    traced = cost_by_line(compiled, origins=lambda labels: origins(pipeline, labels))
    source = open(program.user_file).read().splitlines()
    conv = {k + 1 for k, t in enumerate(source) if t.strip().startswith("x =") and "self.conv" in t}

    def placed(result, why):
        return [n for n in result.notes if "no source location" in n and why in n]

    assert placed(fed, "which they feed") or placed(fed, "which it feeds"), fed.notes
    notes = placed(traced, "followed back through XLA's passes")
    assert len(notes) == 2 and not placed(traced, "feed"), traced.notes
    lines = {int(n.split(" on line ")[1].split()[0]) for n in notes}
    assert len(conv) == 2 and lines == conv, (lines, conv)  # conv1's line and conv2's


def test_each_nnx_layer_has_its_row_by_module():
    """nnx pushes no name scopes: the module tree reads the attributes the model's
    lines call (``self.conv1(x)``), so each layer of the CNN has its own row, the
    weight gradients' convolutions included, and the scan's block its own, counted
    × its 8 iterations."""
    _, report = report_of("cnn_nnx")
    rows = {r["path"]: r for r in report.cost_by_module()}
    layers = ["conv1", "bn1", "conv2", "bn2", "linear1", "linear2"]
    for layer in layers:
        assert rows.get(f"CNN/{layer}", {}).get("flops", 0) > 0, (
            sorted(rows),
            report.costs["notes"],
        )
    assert sum(rows[f"CNN/{k}"]["flops"] for k in layers) <= rows["CNN"]["flops"] * (1 + 1e-9)
    # The convolutions' forward and both backward passes: most of the step.
    assert rows["CNN/conv1"]["flops_share"] + rows["CNN/conv2"]["flops_share"] > 0.5
    top = [r for r in report.cost_by_module(depth=0)]
    total = report.costs.get("counted_totals", report.costs["totals"])["flops"]
    assert sum(r["flops"] for r in top) == pytest.approx(total, rel=1e-6)

    _, scanned = report_of("scan_nnx")
    by_path = {r["path"]: r for r in scanned.cost_by_module()}
    assert {"Block/linear", "Block/norm"} <= set(by_path), sorted(by_path)
    # The scanned block is one module path for its 8 layers: its row says so.
    for path in ("Block", "Block/linear", "Block/norm"):
        assert by_path[path]["iterations"] == "× 8 iterations", by_path[path]
    assert by_path["ScannedMLP/head"]["iterations"] == ""
    assert "Block: " in scanned.text() and "[x 8 iterations]" in scanned.text()


SHARDED = r"""
import json, sys
sys.path.insert(0, {tests!r})
import jax
import real_models
from olympus.argument_names import keypath_name
from olympus_jupyter import inspect
program = real_models.make("transformer_linen")
report = inspect(program.fn, *program.args, costs=True, cache=False)
assert report.ok, report.failure
rows = report.cost_by_line()
total = sum(r["flops"] for r in rows)
mine = sum(r["flops"] for r in rows if r["file"] == program.user_file)
print(json.dumps({{
    "share": mine / total,
    "modules": [m["path"] for m in report.cost_by_module() if m["flops"] > 0],
    "arguments": [b["argument"] for b in report.peak_buffers() if b["kind"] == "argument"],
    "collectives": [c["arguments"] for c in report.collectives()],
    "served": [[c["opcode"], c["parameters"], c["text"]] for c in report.collectives()],
    "params": [keypath_name(p) for p, _ in
               jax.tree_util.tree_flatten_with_path(program.args[0].params)[0]],
    "devices": report.costs["devices"],
    "bundle": len(json.dumps(report.to_json())),
}}))
"""


def test_the_sharded_transformer_answers_about_the_users_model():
    import pathlib

    tests = str(pathlib.Path(__file__).resolve().parent)
    found = run_on_8_devices(SHARDED.format(tests=tests), timeout=600)
    assert found["devices"] == 8
    assert found["share"] >= 0.9, found["share"]
    modules = set(found["modules"])
    blocks = sorted({p.rsplit("/", 1)[0] for p in modules if p.endswith("/Mlp_0")})
    assert len(blocks) >= 2, sorted(modules)[:20]
    for block in blocks:  # each Dense of each block: a row of its own, with flops
        for layer in ("Mlp_0/up", "Mlp_0/down", "Attention_0/query", "Attention_0/out"):
            assert f"{block}/{layer}" in modules, (block, layer, sorted(modules)[:30])
    assert not [p for p in modules if "Decoder/Decoder" in p]  # a module named once
    assert any(a.startswith("state/params/block_") for a in found["arguments"]), found["arguments"][
        :10
    ]
    assert any(names for names in found["collectives"]), found["collectives"][:5]
    # The gradients' all-reduce names the parameters it serves: actual leaves of
    # state.params (or the loss, result/1, which the mean over the batch sums).
    params = set(found["params"])
    assert "block_0/Mlp_0/up/kernel/value" in params, sorted(params)[:5]
    served = {n for _, names, _ in found["served"] for n in names}
    assert {
        "block_0/Mlp_0/up/kernel/value",
        "block_3/Attention_0/query/kernel/value",
        "embed/embedding/value",
    } <= served, sorted(served)[:10]
    assert served <= params | {"result/1"}, sorted(served - params)
    assert any("serving block_0/" in text for opcode, names, text in found["served"] if names), (
        found["served"][:3]
    )


DECODER = r"""
import json, sys
sys.path.insert(0, {tests!r})
import jax
import real_models
from olympus.argument_names import keypath_name
from olympus_jupyter import inspect
from olympus_jupyter.report.output_cap import MAX_OUTPUT_BYTES, output_size
program = real_models.make("decoder_nnx")
report = inspect(program.fn, *program.args, passes=True, costs=True, cache=False)
assert report.ok, report.failure
rows = report.cost_by_line()
total = sum(r["flops"] for r in rows)
mine = sum(r["flops"] for r in rows if r["file"] == program.user_file)
html = report.html()
print(json.dumps({{
    "share": mine / total,
    "arguments": [b["argument"] for b in report.peak_buffers() if b["kind"] == "argument"],
    "served": [[c["opcode"], c["parameters"], c["arguments"]] for c in report.collectives()],
    "params": [keypath_name(p) for p, _ in
               jax.tree_util.tree_flatten_with_path(program.args[0])[0]],
    "html_served": "parameters served" in html and "blocks/0/up/kernel/value" in html,
    "bundle": output_size(report._repr_mimebundle_(include=None, exclude=None)),
    "cap": MAX_OUTPUT_BYTES,
    "modules": {{r["path"]: r["flops_share"] for r in report.cost_by_module()}},
}}))
"""


def test_the_fsdp_decoder_answers_about_the_users_model():
    """The ``nnx`` decoder (fsdp, remat, ``optax.MultiSteps``, donation): the flops
    on the user's lines, argument buffers by pytree name, the combined all-reduce of
    the gradients naming every parameter it serves (and the loss it averages), the
    parameters' all-gathers none, and the bundle with passes and costs under the
    cap."""
    import pathlib

    tests = str(pathlib.Path(__file__).resolve().parent)
    found = run_on_8_devices(DECODER.format(tests=tests), timeout=600)
    assert found["share"] >= 0.9, found["share"]
    arguments = set(found["arguments"])
    assert any(a.startswith("params/blocks/") for a in arguments), sorted(arguments)[:10]
    params = set(found["params"])
    assert "blocks/0/up/kernel/value" in params and len(params) == 34, sorted(params)[:5]
    served = {n for _, names, _ in found["served"] for n in names}
    # Every parameter's gradient is summed over the devices, and said so.
    assert params <= served, sorted(params - served)
    assert served <= params | {"result/2"}, sorted(served - params)
    for opcode, names, moved in found["served"]:
        if opcode == "all-gather":  # a parameter gathered for the passes: no one leaf
            assert moved and not names, (opcode, names, moved)
    assert found["html_served"]
    assert found["bundle"] <= found["cap"], found["bundle"]
    # Its layers by module, read from the calls its lines make (nnx pushes no scopes,
    # and this sharded module keeps no end columns); the blocks, called in a loop
    # through nnx.remat, share one path.
    modules = found["modules"]
    layers = ("Block/attention/qkv", "Block/attention/proj", "Block/up", "Block/down")
    for layer in layers:
        assert modules.get(layer, 0) > 0, sorted(modules)
    if tuple(int(p) for p in jax.__version__.split(".")[:2]) >= (0, 10):
        # JAX 0.9's metadata keeps fewer frames of this remat, sharded step: there
        # the blocks hold a quarter of the flops by module (by line they are exact).
        for layer in layers:
            assert modules[layer] > 0.05, (layer, modules[layer])
        assert modules.get("", 0) < 0.1, modules.get("")
