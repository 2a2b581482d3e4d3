"""The ``passes`` and ``costs`` stages read one dumped compile (issue 33): the
report's compile itself where it can dump (``inspect``), else one more for both
(a report of stages made already: the Inspector's), never one each. Compiles are
counted by wrapping ``Lowered.compile``, which every compile goes through; the
data are compared with what separate compiles give."""

import json
import os
import re
import tempfile

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus.buffers import peak_memory
from olympus.dumps import DumpNeeds, compile_dumped
from olympus.passes import pass_pipeline
from olympus.stages import Lowered
from olympus_jupyter import inspect
from olympus_jupyter.report import kinds, stage_report
from olympus_jupyter.report.passes_view import passes_json
from olympus_jupyter.staging import run_stages

X = np.ones((32, 64), np.float32)
W = np.ones((64, 16), np.float32)


def mlp(x, w):
    y = jnp.tanh(x @ w)
    s = jnp.sort(y, axis=0)
    return (s[0] * s[-1]).sum()


def _without_xla_counters(data) -> str:
    """``data`` as JSON, with the numbers XLA appends to some pass names counting the
    process's compiles (``apply-xla-transforms-3`` from JAX 0.12): two compiles of
    the same program differ only there."""
    return re.sub(r"(apply-xla-transforms)-\d+", r"\1-N", json.dumps(data, sort_keys=True))


@pytest.fixture
def compiles(monkeypatch):
    """Every compile made while the test runs: whether it dumped (``xla_dump_to``
    among its options)."""
    made: list[bool] = []
    compile_ = Lowered.compile

    def counted(self, compiler_options=None):
        made.append("xla_dump_to" in (compiler_options or {}))
        return compile_(self, compiler_options)

    monkeypatch.setattr(Lowered, "compile", counted)
    return made


@pytest.fixture
def private_tmp(tmp_path, monkeypatch):
    """The process's temporary folder for the test, to see what is left in it."""
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # put back after
    return tmp_path


def test_inspect_with_passes_and_costs_compiles_once_and_leaves_no_folder(compiles, private_tmp):
    r = inspect(mlp, X, W, passes=True, costs=True, cache=False)
    assert r.failure is None and r.passes["rows"] and r.costs["peak"] is not None
    assert r.costs["unavailable"] == {}
    assert compiles == [True]  # the report's own compile, with both dumps
    assert os.listdir(private_tmp) == []


def test_a_report_of_stages_made_already_compiles_once_more_for_both(compiles, private_tmp):
    run = run_stages(mlp, (X, W))
    assert compiles == [False]
    r = stage_report.build_report(run, stages=("source", "passes", "costs"))
    assert r.failure is None and r.passes["rows"] and r.costs["peak"] is not None
    assert compiles == [False, True]
    assert os.listdir(private_tmp) == []


def test_the_inspector_compiles_once_more_for_both(compiles):
    from olympus_jupyter.frontends.inspector import Inspector

    ins = Inspector(mlp, X, W, passes=True, costs=True)
    assert ins.report.passes["rows"] and ins.report.costs["peak"] is not None
    assert compiles == [False, True]  # its stage cache's compile, and one dumped compile


def test_costs_asked_after_passes_reads_the_kept_dump(compiles):
    run = run_stages(mlp, (X, W))
    models: dict = {}
    first = stage_report.build_report(run, stages=("source", "passes"), models=models)
    assert first.passes["rows"] and compiles == [False, True]
    then = stage_report.build_report(run, stages=("source", "costs"), models=models)
    assert then.costs["peak"] is not None and then.costs["unavailable"] == {}
    assert compiles == [False, True]  # the passes' dump held the peak too


def test_a_dump_the_user_asked_for_costs_one_compile_more_for_both(compiles, tmp_path):
    options = {"xla_dump_to": str(tmp_path), "xla_dump_hlo_as_text": True}
    r = inspect(mlp, X, W, passes=True, costs=True, cache=False, compiler_options=options)
    assert r.passes["rows"] and r.costs["peak"] is not None
    assert len(compiles) == 2  # theirs, dumped where they asked, and one for both
    assert any(n.endswith("after_optimizations.txt") for n in os.listdir(tmp_path))


@pytest.mark.parametrize("pass_re", [".*", "fusion|cse"])
def test_both_stages_read_what_separate_compiles_give(pass_re):
    lowered = olympus.jit(mlp).trace(X, W).lower()
    needs = kinds.dump_needs(("passes", "costs"), pass_re=pass_re)
    assert needs == DumpNeeds(pass_re=pass_re, peak=True)
    run = run_stages(lowered, dumps=needs)
    assert run.dumped is not None and run.dumped.pipeline is not None
    r = stage_report.build_report(run, stages=("source", "passes", "costs"), pass_re=pass_re)
    files = [f.path for f in r.provenance.files]
    # The passes: as a compile of their own gives them.
    separate = passes_json(pass_pipeline(lowered, pass_re=pass_re), files, model=r.provenance)
    assert _without_xla_counters(r.passes) == _without_xla_counters(separate)
    # The peak: the final buffer assignment, whatever the pass filter.
    alone = stage_report.build_report(
        run_stages(lowered, read_peak=True), stages=("source", "costs")
    )
    assert r.costs["peak"] == alone.costs["peak"]
    assert r.costs["lines"] == alone.costs["lines"]
    own = peak_memory(lowered)
    combined = run.dumped.peak.read()
    assert combined.peak_bytes == own.peak_bytes and combined.at == own.at
    assert [(b.label, b.size, b.kind) for b in combined.buffers] == [
        (b.label, b.size, b.kind) for b in own.buffers
    ]


def test_a_dump_answers_only_what_it_holds():
    lowered = olympus.jit(mlp).trace(X, W).lower()
    compiled, dump = compile_dumped(lowered, DumpNeeds(peak=True))
    assert dump.pipeline is None and dump.peak is not None
    assert dump.covers(DumpNeeds(peak=True)) and not dump.covers(DumpNeeds(pass_re=".*"))
    with pytest.raises(ValueError, match="no pass's module"):
        dump.passes()
    assert DumpNeeds(pass_re="a").merge(DumpNeeds(pass_re="b")) is None
    # Two pass filters cannot share a dump: each stage then gets its own.
    assert kinds.dump_needs(("passes",), pass_re="a") == DumpNeeds(pass_re="a")
