"""XLA's pass pipeline read from a private per-pass dump: the core of the passes stage."""

import os
import tempfile

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.passes import pass_pipeline, read_dump


def mlp(w, x):
    return jnp.tanh(x @ w).sum() * 2.0


@pytest.fixture(scope="module")
def lowered():
    return olympus.jit(mlp).trace(np.ones((8, 3), np.float32), np.ones((4, 8), np.float32)).lower()


def test_the_pipeline_lists_the_passes_that_changed_the_module_in_order(lowered):
    pipeline = pass_pipeline(lowered)
    indices = [s.index for s in pipeline.steps]
    assert indices == sorted(indices) and len(set(indices)) == len(indices)
    assert pipeline.steps[0].is_pipeline_start
    changed = pipeline.changed()
    assert changed and all(not s.is_pipeline_start for s in changed)
    # On every platform XLA fuses this elementwise chain.
    assert any(s.after == "fusion" for s in changed), [s.after for s in changed]
    fusion = next(s for s in changed if s.after == "fusion")
    assert "kind=kLoop" in fusion.text and "kind=kLoop" not in pipeline.previous(fusion)
    # The module before the first pass is the compiler's input; after the last, what
    # Compiled.as_text() shows (same instructions, whatever the printing options).
    assert "dot(" in pipeline.before and pipeline.steps[0].instructions > 0
    assert "fusion" in pipeline.after


def test_a_pass_filter_keeps_only_the_passes_it_names(lowered):
    pipeline = pass_pipeline(lowered, pass_re="^fusion$")
    assert [s.after for s in pipeline.changed()] == ["fusion"]
    # The module just before it is kept too, for its diff.
    fusion = pipeline.changed()[0]
    assert pipeline.previous(fusion) != fusion.text


def test_the_dump_folder_goes_even_when_the_compile_fails(lowered, tmp_path, monkeypatch):
    # Temporary folders made in this test go where only it looks (parallel tests
    # make their own elsewhere).
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))
    pass_pipeline(lowered)
    assert os.listdir(tmp_path) == []
    with pytest.raises(Exception, match="no_such_xla_option"):
        pass_pipeline(lowered, compiler_options={"no_such_xla_option": 1})
    assert os.listdir(tmp_path) == []


def test_nothing_of_the_process_is_changed(lowered):
    flags = os.environ.get("XLA_FLAGS")
    pass_pipeline(lowered)
    assert os.environ.get("XLA_FLAGS") == flags
    # A compile after it dumps nothing anywhere: the options were that compile's own.
    olympus.jit(mlp).trace(
        np.ones((8, 3), np.float32), np.ones((4, 8), np.float32)
    ).lower().compile()


def test_a_folder_without_dumps_is_refused_with_its_name(tmp_path):
    with pytest.raises(ValueError, match="no pass dumps"):
        read_dump(tmp_path)


def twice_the_sine(m):
    a = jnp.sin(m)
    b = jnp.sin(m)
    return a * b


def test_a_line_journey_says_which_pass_fused_or_removed_its_ops():
    from olympus.passes import journey

    lowered = olympus.jit(twice_the_sine).trace(np.ones((4, 8), np.float32)).lower()
    pipeline = pass_pipeline(lowered)
    first = twice_the_sine.__code__.co_firstlineno
    here = twice_the_sine.__code__.co_filename
    a, b, product = (journey(pipeline, here, first + k) for k in (1, 2, 3))
    # b's sine is a's: common-subexpression elimination removes it.
    assert [c.opcode for c in b.start] == ["sine"] and b.end == ()
    removed = [e for e in b.events if e.kind == "removed"]
    assert removed and removed[0].pass_name == "cse", [e.describe() for e in b.events]
    # a's sine and the product are fused into one loop fusion, by the fusion pass.
    for j, opcode in ((a, "sine"), (product, "multiply")):
        fused = [e for e in j.events if e.kind == "fused"]
        assert fused and fused[0].pass_name == "fusion", [e.describe() for e in j.events]
        ends = [c for c in j.end if c.opcode == opcode]
        assert ends and ends[0].fusion is not None and ends[0].fusion_kind == "kLoop"
    assert a.end[0].fusion == next(c.fusion for c in product.end if c.opcode == "multiply")
    # Carriers step by step: one entry per step of the pipeline.
    assert len(a.carriers) == len(pipeline.steps)


def test_a_filter_no_pass_matches_gives_the_module_and_no_steps(lowered):
    pipeline = pass_pipeline(lowered, pass_re="^no-such-pass$")
    assert pipeline.steps == () and pipeline.changed() == ()
    assert "dot(" in pipeline.before and pipeline.after


def test_journeys_of_many_lines_read_each_module_once_and_agree_with_one_at_a_time():
    from olympus.passes import journey, journeys

    lowered = olympus.jit(twice_the_sine).trace(np.ones((4, 8), np.float32)).lower()
    pipeline = pass_pipeline(lowered)
    here = twice_the_sine.__code__.co_filename
    every = journeys(pipeline)  # every line with an instruction before the passes
    first = twice_the_sine.__code__.co_firstlineno
    assert {(here, first + k) for k in (1, 2, 3)} <= set(every)
    for key, j in every.items():
        assert journey(pipeline, *key) == j


def test_the_dumps_names_put_each_change_down_to_the_pass_that_made_it(tmp_path):
    """Dumps named as TPU's compiler names them: its partitioner partitions, then
    runs `spmd-cleanup`; its layout assignment runs `tpu-tiling-rewriter`, which
    dumps points of its own work; some work runs outside any pipeline."""
    from olympus_jupyter.report.passes_view import passes_json

    def module(n):
        return f"HloModule m\nENTRY %e () -> f32[] {{\n  ROOT %c = f32[] constant({n})\n}}\n"

    dumps = [
        ("0014.xla-partitioner.after_pipeline-start.before_shardy-xla", 0),
        ("0016.spmd-cleanup.after_pipeline-start.before_dce", 1),
        ("0017.spmd-cleanup.after_dce.before_tuple-simplifier", 2),
        ("0019.xla-partitioner.after_tpu-spmd-partitioning.before_tpu-call-inliner", 2),
        ("0031.Layout_assignment.after_pipeline-start.before_layout-assignment", 2),
        ("0032.tpu-tiling-rewriter.before_tiling_rewriter", 3),
        ("0033.tpu-tiling-rewriter.after_tiling_propagation", 4),
        ("0034.tpu-tiling-rewriter.after_tiling_conversion_copy_insertion", 4),
        ("0036.Layout_assignment.after_layout-assignment.before_pipeline-end", 4),
        ("0072.final_rematerialization.after_pipeline-start.before_remat", 4),
        ("0073.Pre_memory_space_assignment.after_pipeline-start.before_hoister", 5),
    ]
    prefix = "module_0000.jit_step.cl_933746096."
    (tmp_path / f"{prefix}before_optimizations.txt").write_text(module(0))
    for rest, n in dumps:
        (tmp_path / f"{prefix}{rest}.txt").write_text(module(n))
    pipeline = read_dump(tmp_path)
    assert [s.index for s in pipeline.steps] == [int(rest[:4]) for rest, _ in dumps]
    credits = [(c.kind, c.pipeline, c.name) for c in pipeline.credits()]
    outside = "work outside XLA's pass pipelines, before Pre_memory_space_assignment"
    assert credits == [
        ("start", "xla-partitioner", "pipeline-start"),
        ("changed", "xla-partitioner", "tpu-spmd-partitioning"),
        ("changed", "spmd-cleanup", "dce"),
        ("changed", "xla-partitioner", "tpu-spmd-partitioning"),
        ("start", "Layout_assignment", "pipeline-start"),
        ("changed", "Layout_assignment", "layout-assignment"),
        ("changed", "Layout_assignment", "tpu-tiling-rewriter (after tiling propagation)"),
        (
            "unchanged",
            "Layout_assignment",
            "tpu-tiling-rewriter (after tiling conversion copy insertion)",
        ),
        ("changed", "Layout_assignment", "layout-assignment"),
        ("start", "final_rematerialization", "pipeline-start"),
        ("changed", "", outside),
    ]
    rows = passes_json(pipeline, files=())["rows"]
    # Passes named as the next to run, where their pipeline's next dump is not
    # after them, changed nothing (dce's and layout-assignment's are: they did).
    unchanged = [r["pass"] for r in rows if r["kind"] == "unchanged" and r["step"] is None]
    assert unchanged == ["shardy-xla", "tuple-simplifier", "tpu-call-inliner", "remat", "hoister"]
