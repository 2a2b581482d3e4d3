"""The stages of programs compiled for a TPU this machine does not have.

``olympus.hardware.target('v5e:2x2')`` gives compile-only TPU devices (libtpu
describes them); a sharded train step placed on a mesh of them compiles with the
TPU compiler here, and every stage must be right for that target: its texts
highlight without errors (TPU layouts ``{1,0:T(8,128)(2,1)S(1)}``, convolutions
``dim_labels=0bf_io0->0bf``, ``backend_config`` JSON, mesh replica groups), its
passes are credited to the passes that made them, whatever names TPU's pipelines
use, and the ``partitioned`` stage finds TPU's SPMD partitioner.
"""

from __future__ import annotations

import jax
import pytest
from jax.experimental import pallas as pl
from jax.sharding import NamedSharding, PartitionSpec as P
from pygments.token import Error

import olympus.numpy as jnp
from olympus import hardware, stage_registry
from olympus_jupyter import inspect
from olympus_jupyter.highlight.render import LEXERS
from olympus_jupyter.report.passes_view import module_texts

# Compiles for TPU with libtpu: run in the targets environment (run.sh), never skipped.
pytestmark = pytest.mark.targets


@pytest.fixture(scope="module")
def mesh():
    return hardware.target("v5e:2x2").mesh({"data": 2, "model": 2})


def spec(mesh, shape, dtype, *axes):
    return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(mesh, P(*axes)))


def block(h, params):
    w, k = params
    h = jnp.tanh(h @ w)
    conv = jax.lax.conv_general_dilated(h, k, (1,), "SAME", dimension_numbers=("NWC", "WIO", "NWC"))
    return h + conv, None


def train_step(params, x):
    """Layers of a matmul and a 1-D convolution in a scan, their gradients, an update."""

    def loss(params):
        h, _ = jax.lax.scan(block, x, params)
        return jnp.mean(h.astype(jnp.float32) ** 2)

    value, grads = jax.value_and_grad(loss)(params)
    return jax.tree.map(lambda p, g: p - 0.1 * g, params, grads), value


@pytest.fixture(scope="module")
def report(mesh):
    params = (
        spec(mesh, (2, 128, 128), jnp.bfloat16, None, None, "model"),
        spec(mesh, (2, 3, 128, 128), jnp.bfloat16),
    )
    x = spec(mesh, (8, 16, 128), jnp.bfloat16, "data")
    r = inspect(train_step, params, x, passes=True, stages="all", cache=False)
    assert r.failure is None, r.failure
    return r


def errors(language: str, text: str) -> list[str]:
    """Each Error token of ``text`` lexed as ``language``, with its line."""
    lines = text.splitlines()
    out = []
    for index, ttype, value in LEXERS[language]().get_tokens_unprocessed(text):
        if ttype in Error:
            n = text.count("\n", 0, index)
            out.append(f"{language}:{n + 1}: {value!r} in {lines[n][:300]!r}")
    return out


def stage_errors(r) -> list[str]:
    out = []
    for stage in stage_registry.program_stages():
        text = r.stage_text(stage.name)
        if text is not None:
            out += errors(stage.language, text)
    return out


def test_every_stage_of_a_tpu_train_step_highlights_without_errors(report):
    compiled = report.stage_text("compiled")
    # The TPU compiler's own syntax is there to be read.
    for needle in (":T(8,128)", "dim_labels=0bf_", "estimated_cycles", "replica_groups="):
        assert needle in compiled, needle
    assert not stage_errors(report)
    # XLA's module after each pass (the passes stage) too.
    found = [e for text in set(module_texts(report.passes)) for e in errors("hlo", text)]
    assert not found, found[:5]


def double(x_ref, o_ref):
    o_ref[...] = x_ref[...] * 2.0


def test_a_pallas_kernel_for_tpu_highlights_without_errors(mesh):
    # Its program holds Refs (`Ref<default>{f32[8,128]}`, read with `<-`); its
    # compiled HLO a Mosaic custom call.
    def kernel(x):
        return pl.pallas_call(double, out_shape=jax.ShapeDtypeStruct(x.shape, x.dtype))(x)

    f = jax.shard_map(kernel, mesh=mesh, in_specs=P("data"), out_specs=P("data"), check_vma=False)
    r = inspect(f, spec(mesh, (16, 128), jnp.float32, "data"), stages="all", cache=False)
    assert r.failure is None, r.failure
    assert "tpu_custom_call" in r.stage_text("compiled")
    if jax.__version_info__ >= (0, 10):  # JAX 0.9 prints a shard_map's body in no stage
        assert "Ref<" in r.stage_text("olympuspr")
    assert not stage_errors(r)


def test_the_partitioned_stage_is_the_program_tpus_partitioner_made(report):
    # TPU's compiler names its SPMD partitioner `tpu-spmd-partitioning`.
    assert "partitioned" not in report.unavailable, report.unavailable
    text = report.stage_text("partitioned")
    # Each device's share of the arguments, and the collectives the shardings cost.
    assert "bf16[2,128,64]" in text and "bf16[4,16,128]" in text
    assert "all-reduce(" in text


def test_each_change_of_a_tpu_compile_is_put_down_to_the_pass_that_made_it(report):
    rows = report.passes["rows"]
    changed = [r for r in rows if r["kind"] == "changed"]
    # Every row whose module differs from the one before names a pass: none is a
    # pipeline's start (TPU's partitioner runs `spmd-cleanup` after partitioning,
    # its layout assignment runs `tpu-tiling-rewriter`: their first modules hold
    # the outer pass's work).
    for r in rows:
        if r["added"] or r["removed"]:
            assert r["kind"] == "changed" and r["pass"] != "pipeline-start", r
    partitioner = next(r for r in changed if r["pass"] == "tpu-spmd-partitioning")
    assert partitioner["pipeline"] == "xla-partitioner"
    assert partitioner["instructions"] > partitioner["instructions_before"] and partitioner["added"]
    layouts = next(r for r in changed if r["pass"] == "layout-assignment" and r["added"])
    assert layouts["pipeline"] == "Layout_assignment"
    assert any(r["pass"] == "tpu_fusion" and r["added"] for r in changed)
    # A pass's own points of work (copy insertion's) are rows of their pipeline.
    assert any(r["pass"].startswith("copy-insertion (after ") for r in rows)
    # The lines' journeys name the same passes.
    passes = {e["pass"] for j in report.passes["journeys"] for e in j["events"]}
    assert "tpu-spmd-partitioning" in passes and "pipeline-start" not in passes


def test_every_stage_of_a_cuda_train_step_highlights_without_errors():
    """The same train step compiled for four H100s (JAX's CUDA plugin): Triton and
    cuBLAS fusions, NCCL collectives, the GPU compiler's passes, all without errors."""
    gpus = hardware.target("h100:4").mesh({"data": 2, "model": 2})
    params = (
        spec(gpus, (2, 128, 128), jnp.bfloat16, None, None, "model"),
        spec(gpus, (2, 3, 128, 128), jnp.bfloat16),
    )
    r = inspect(
        train_step,
        params,
        spec(gpus, (8, 16, 128), jnp.bfloat16, "data"),
        passes=True,
        stages="all",
        cache=False,
    )
    assert r.failure is None, r.failure
    assert r.platforms == ("cuda",) and "__triton" in r.stage_text("compiled")
    assert not stage_errors(r)
    found = [e for text in set(module_texts(r.passes)) for e in errors("hlo", text)]
    assert not found, found[:5]
