"""Per-line costs of CUDA programs compiled here without a GPU (olympus.gpu_costs):
``cost_analysis()`` is None for them, so the rows are XLA's HLO cost analysis (the
CPU backend's) applied to the CUDA compiler's optimized HLO, with cuBLAS and cuDNN
calls counted as the dot or convolution each computes and an asynchronous
collective's ``-done`` charged with its ``-start``. The rows add up to that
analysis's totals, each matmul and convolution is counted exactly, every form says
what counted the figures, and the figures agree with the cost analysis the same
program has where one is given (a TPU compile, a CPU compile). Each program is small:
it compiles in a second or so."""

import html
import re
from pathlib import Path

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

import olympus
import olympus_jupyter
from olympus import gpu_costs, hardware, jax_compat
from olympus.gpu_targets import gpu_target
from olympus.line_costs import cost_by_line, cost_by_line_text
from olympus.provenance.hlo import hlo_stage
from olympus.provenance.sources import SourceTable
from olympus_jupyter.report.validate import check_bundle

# Compiles for CUDA with JAX's plugin (and for TPU with libtpu): run in the targets
# environment (run.sh), never skipped.
pytestmark = pytest.mark.targets

B, D, F = 256, 512, 1024  # the MLP's batch, model and hidden widths
#: How far a CUDA program's flops may be from another platform's cost_analysis() of
#: the same program: the GPU's own extra work (a split-K matmul's partial sums added
#: up, converts around Triton's kernels) is under 1% of a matmul-heavy program.
TOLERANCE = 0.01


def mlp(x, w1, w2):
    h = x @ w1
    h = jnp.tanh(h)
    return h @ w2


def _mesh(t):
    return t.mesh({"data": 2, "model": 2})


def _mlp_args(mesh, dtype=jnp.float32):
    """Megatron's MLP on a data x model mesh: the batch split over ``data``, the
    hidden width over ``model`` (the second matmul's partial sums all-reduced)."""

    def arg(shape, spec):
        return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(mesh, spec))

    return (
        arg((B, D), P("data", None)),
        arg((D, F), P(None, "model")),
        arg((F, D), P("model", None)),
    )


def _costed(f, *args, compiler_options=None):
    """The compiled program, its compiled stage (to name each instruction) and its
    cost by line read from that stage."""
    compiled = olympus.jit(f).trace(*args).lower().compile(compiler_options=compiler_options)
    table = SourceTable()
    stage = hlo_stage(compiled.as_text(), table, name="compiled")
    return compiled, stage, cost_by_line(compiled, parsed=(stage, table.tables()))


def _by_opcode(stage, costs, opcode):
    """Each instruction of ``opcode``'s figures (what is charged by it), by label."""
    return {
        stage.ops[i].label: figures
        for (name, i), figures in costs.by_source.items()
        if name == "compiled" and stage.ops[i].name == opcode
    }


def _custom_calls(stage, costs, targets):
    text = stage.text
    found = {}
    for label, figures in _by_opcode(stage, costs, "custom-call").items():
        line = next(
            x for x in text.splitlines() if re.match(rf"\s*(ROOT )?%{re.escape(label)} =", x)
        )
        target = re.search(r'custom_call_target="([^"]+)"', line).group(1)
        assert target in targets, target
        found[label] = (target, figures)
    return found


def _counted_here(costs):
    assert costs.counted_by == gpu_costs.COUNTED_BY
    assert costs.notes[0] == gpu_costs.COUNTED_BY_NOTE
    assert costs.check() == (), costs.check()
    assert costs.sums()["flops"] == pytest.approx(costs.totals["flops"], rel=1e-9)


def test_a_sharded_mlp_on_four_h100s_costs_each_matmul_exactly():
    """No row is 0 FLOP any more: each device's two matmuls are 2·M·N·K each (the
    shares of 128 rows × 512 of the hidden width), the rows add up to the totals,
    and the all-reduce of the second matmul's partial sums is charged on that
    matmul's line with its -done's bytes, which XLA's totals count."""
    t = gpu_target("h100", 4)
    compiled, stage, costs = _costed(mlp, *_mlp_args(_mesh(t)))
    assert compiled.cost_analysis() is None  # what the CUDA plugin gives
    _counted_here(costs)
    m, k, n = B // 2, D, F // 2  # per device
    dots = _by_opcode(stage, costs, "dot")
    assert sorted(f["flops"] for f in dots.values()) == [2 * m * k * n, 2 * m * n * k]
    first = mlp.__code__.co_firstlineno
    rows = {row.line - first: row for row in costs.lines if row.line is not None}
    assert all(row.flops > 0 or row.transcendentals > 0 for row in rows.values())
    # The matmul's line: its dot, and the partial sums of a split-K kernel (under 1%).
    assert 2 * m * k * n <= rows[1].flops <= (1 + TOLERANCE) * 2 * m * k * n
    assert rows[2].transcendentals == m * n  # tanh, one per element
    size = m * D * 4  # the f32 partial sums of one device's rows
    names = {op.name for op in stage.ops}
    (reduce,) = [op for op in stage.ops if op.name in ("all-reduce", "all-reduce-start")]
    if reduce.name == "all-reduce-start":
        # XLA from jaxlib 0.9 and 0.10: an asynchronous all-reduce, costed with its
        # -done (each reads and writes the partial sums).
        assert "all-reduce-done" in names
        done_bytes = 4 * size
    else:
        # From 0.12: a synchronous all-reduce in an asynchronous fusion (fusion-start,
        # -done; a Triton collective kernel), the pair costed together and charged
        # by what it fuses: the all-reduce reads and writes the partial sums, the
        # -done reads them again (and the pointer of the start's tuple).
        start = stage.ops[stage.computations[reduce.computation].caller]
        assert start.name == "fusion-start" and "fusion-done" in names
        done_bytes = 3 * size
    # Charged by the collective's own source location (no note says it took another's).
    figures = costs.by_source["compiled", reduce.index]
    assert not [n for n in costs.notes if reduce.label in n], costs.notes
    assert done_bytes <= figures["bytes accessed"] <= done_bytes + 64
    assert figures["flops"] == m * D  # the sums' additions
    assert reduce.label in rows[3].instructions  # the second matmul's line


def test_the_sharded_mlp_agrees_with_its_tpu_compile():
    """The same program on four TPU v5e chips, whose cost_analysis() XLA gives: the
    same flops per device, within TOLERANCE (the rows on TPU add up to it exactly)."""
    gpu = _costed(mlp, *_mlp_args(_mesh(gpu_target("h100", 4))))[2]
    tpu_compiled, _, tpu = _costed(mlp, *_mlp_args(_mesh(hardware.target("v5e:2x2"))))
    xla = tpu_compiled.cost_analysis()["flops"]
    assert tpu.counted_by is None and tpu.check() == ()
    assert gpu.totals["flops"] == pytest.approx(xla, rel=TOLERANCE)
    assert gpu.sums()["flops"] == pytest.approx(xla, rel=TOLERANCE)
    assert gpu.sums()["transcendentals"] == tpu.sums()["transcendentals"] == (B // 2) * (F // 2)


def test_one_h100_agrees_with_the_cpu_compile():
    """One device: the CPU compile of the same program gives its cost_analysis()."""
    one = Mesh(np.array(gpu_target("h100", 1).devices), ("d",))
    args = [
        jax.ShapeDtypeStruct(shape, jnp.float32, sharding=NamedSharding(one, P()))
        for shape in ((B, D), (D, F), (F, D))
    ]
    gpu = _costed(mlp, *args)[2]
    _counted_here(gpu)
    local = [jnp.ones(a.shape, a.dtype) for a in args]
    cpu = jax.jit(mlp).trace(*local).lower().compile().cost_analysis()
    assert gpu.totals["flops"] == pytest.approx(cpu["flops"], rel=TOLERANCE)
    assert gpu.totals["transcendentals"] == cpu["transcendentals"]


@pytest.mark.parametrize("dtype", [jnp.float32, jnp.bfloat16])
def test_cublas_matmuls_are_costed_as_the_dots_they_compute(dtype):
    """With Triton's gemms off, XLA calls cuBLAS (``__cublas$lt$matmul``), which
    XLA's CPU analysis counts at -1: each call is costed as its dot, from its own
    dimensions, its result the first of its tuple (not the workspace)."""
    t = gpu_target("h100", 4)
    options = {"xla_gpu_enable_triton_gemm": False}
    _, stage, costs = _costed(mlp, *_mlp_args(_mesh(t), dtype), compiler_options=options)
    _counted_here(costs)
    calls = _custom_calls(stage, costs, gpu_costs.GEMM_TARGETS)
    assert len(calls) == 2, calls
    m, k, n = B // 2, D, F // 2
    first = min(calls.values(), key=lambda c: c[1]["flops"])[1]  # x @ w1: no convert fed in
    assert first["flops"] == 2 * m * k * n
    itemsize = jnp.dtype(dtype).itemsize
    assert first["bytes accessed"] == (m * k + k * n + m * n) * itemsize
    assert not any("does not know" in note for note in costs.notes), costs.notes

    # A batched matmul: the gemm's batch dimensions too.
    one = Mesh(np.array(gpu_target("h100", 1).devices), ("d",))
    a = jax.ShapeDtypeStruct((16, 128, 64), dtype, sharding=NamedSharding(one, P()))
    b = jax.ShapeDtypeStruct((16, 64, 256), dtype, sharding=NamedSharding(one, P()))
    _, stage, costs = _costed(
        lambda a, b: jnp.einsum("bij,bjk->bik", a, b), a, b, compiler_options=options
    )
    (call,) = _custom_calls(stage, costs, gpu_costs.GEMM_TARGETS).values()
    assert call[1]["flops"] == 2 * 16 * 128 * 64 * 256
    _counted_here(costs)


def conv(x, k):
    return jax.lax.conv_general_dilated(
        x, k, (1, 1), "VALID", dimension_numbers=("NHWC", "HWIO", "NHWC")
    )


def test_cudnn_convolutions_forward_and_backward_are_costed_exactly():
    """cuDNN's calls carry the forward convolution's window and labels whatever they
    compute; each (forward, backward to the input, backward to the filter) is costed
    as the forward convolution of the same products: 2·N·Ho·Wo·Cout·Kh·Kw·Cin each,
    and the gradient's total is what the CPU compile of the same program counts
    (within TOLERANCE: its elementwise ops fuse differently)."""
    one = Mesh(np.array(gpu_target("h100", 1).devices), ("d",))
    xs, ks = (8, 18, 18, 32), (3, 3, 32, 64)
    x = jax.ShapeDtypeStruct(xs, jnp.float32, sharding=NamedSharding(one, P()))
    k = jax.ShapeDtypeStruct(ks, jnp.float32, sharding=NamedSharding(one, P()))
    products = 2 * 8 * 16 * 16 * 64 * 3 * 3 * 32

    _, stage, costs = _costed(conv, x, k)
    _counted_here(costs)
    (call,) = _custom_calls(stage, costs, gpu_costs.CONVOLUTION_TARGETS).values()
    assert call[1]["flops"] == products

    grad = jax.grad(lambda x, k: jnp.sum(conv(x, k) ** 2), argnums=(0, 1))
    _, stage, costs = _costed(grad, x, k)
    _counted_here(costs)
    calls = _custom_calls(stage, costs, gpu_costs.CONVOLUTION_TARGETS)
    kinds = {target for target, _ in calls.values()}
    assert {"__cudnn$convBackwardInput", "__cudnn$convBackwardFilter"} <= kinds, kinds
    assert [figures["flops"] for _, figures in calls.values()] == [products] * len(calls)
    cpu = jax.jit(grad).trace(jnp.ones(xs), jnp.ones(ks)).lower().compile().cost_analysis()
    # cuDNN's epilogue scales the forward result (the loss's 2·y) at no flops.
    assert costs.totals["flops"] == pytest.approx(cpu["flops"], rel=TOLERANCE)
    assert costs.totals["flops"] - len(calls) * products < 0.01 * products


def test_what_xla_cannot_cost_is_counted_as_nothing_and_said():
    """A custom-call the analysis does not know (a kernel of one's own) counts -1 in
    XLA's analysis: here it is nothing, and the notes name it."""
    text = """HloModule m, entry_computation_layout={(f32[64,32]{1,0}, f32[32,16]{1,0})->f32[64,16]{1,0}}

ENTRY %main (a: f32[64,32], b: f32[32,16]) -> f32[64,16] {
  %a = f32[64,32]{1,0} parameter(0)
  %b = f32[32,16]{1,0} parameter(1)
  %k = f32[64,32]{1,0} custom-call(%a), custom_call_target="my_kernel"
  ROOT %d = f32[64,16]{1,0} dot(%k, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
}
"""
    cpu = jax_compat.hlo_text_cost_analyzer(jax.extend.backend.get_backend("cpu"))
    costs = cost_by_line_text(text, gpu_costs.cuda_analyzer(cpu))
    assert [row.flops for row in costs.lines] == [2 * 64 * 32 * 16]
    assert min(row.bytes_accessed for row in costs.lines) >= 0
    assert any(
        "custom-call my_kernel" in note and "counted as nothing" in note for note in costs.notes
    ), costs.notes


def test_every_form_of_a_report_says_what_counted_the_figures():
    """The report of the brief's program: rows that cost something, the figures
    named as XLA's HLO cost analysis of the CUDA program (not a GPU's
    cost_analysis()) in the data, the text and the HTML, and the cost_analysis
    stage saying why it has nothing to show."""

    def f(x, w):
        return jnp.tanh(x @ w)

    x, w = np.ones((256, 512), np.float32), np.ones((512, 1024), np.float32)
    report = olympus_jupyter.inspect(
        f,
        x,
        w,
        target="h100:4",
        mesh="data=2,model=2",
        shardings=(P("data", None), P(None, "model")),
        costs=True,
        cache=False,
    )
    assert report.failure is None, report.failure
    data = report.to_json()
    check_bundle(data)
    costs = data["costs"]
    assert costs["counted_by"] == gpu_costs.COUNTED_BY
    assert costs["notes"][0] == gpu_costs.COUNTED_BY_NOTE
    line = next(r for r in costs["lines"] if r["what"] == "line")
    assert line["flops"] >= 2 * 128 * 512 * 512 and line["bytes"] > 0
    assert sum(r["flops"] for r in costs["lines"]) == pytest.approx(costs["totals"]["flops"])

    text = report.text()
    assert f"counted by {gpu_costs.COUNTED_BY}" in text
    # The cost_analysis stage: on JAX 0.9 and 0.10 a CUDA target's compile-only client
    # analyses no module, so there is no figure before optimization or after; on 0.12
    # it cannot either, and olympus.jax_compat.hlo_cost_analysis has the CPU analyse
    # the unoptimized module: figures before optimization, none after.
    cost = data["analyses"]["cost"]
    assert cost["compiled"] is None
    if cost["lowered"] is None:
        why = gpu_costs.NO_COST_ANALYSIS
        assert f"cost_analysis: unavailable ({why})" in text
    else:
        why = gpu_costs.NO_COMPILED_COST_ANALYSIS
        assert f"after optimization (compiled): unavailable ({why})" in text
    user_rows = [
        row for row in text.split("by op")[0].splitlines() if row.strip().startswith("line ")
    ]
    assert user_rows and not any(" 0 FLOP (0%)" in row for row in user_rows), user_rows
    page = html.unescape(str(report.html()))
    assert f"These figures are counted by {gpu_costs.COUNTED_BY}" in page
    assert why in page
    assert report.from_json(data).to_json()["costs"]["counted_by"] == gpu_costs.COUNTED_BY


def test_the_view_says_why_a_cuda_report_has_no_cost_analysis_as_python_does():
    """The JupyterLab view words it itself where a bundle gives no reason: the
    same words as the text and the static HTML (no figures at all, or none after
    optimization)."""
    source = (Path(__file__).parents[1] / "src" / "analysisview.ts").read_text()
    for name, words in (
        ("NO_CUDA_COST_ANALYSIS", gpu_costs.NO_COST_ANALYSIS),
        ("NO_CUDA_COMPILED_COST_ANALYSIS", gpu_costs.NO_COMPILED_COST_ANALYSIS),
    ):
        declared = source.split(f"const {name} =", 1)[1].split(";\n", 1)[0]
        literals = re.findall(r"'([^']*)'|\"([^\"]*)\"", declared)
        assert "".join(a or b for a, b in literals) == words, name
