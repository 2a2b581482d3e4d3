"""The ``costs`` stage of reports: where the compiled program's flops, bytes and peak
memory go, line by line (real compiles): the report's plain data and methods, the
bundle, the options of ``inspect``, the magic, the CLI and the Inspector."""

import copy
import os
import tempfile

import jax
import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus_jupyter import inspect
from olympus_jupyter.frontends.options import OptionError, ReportOptions, split_line
from olympus_jupyter.report import StageReport, builtin_kinds, stage_report
from olympus_jupyter.report.validate import BundleError
from olympus_jupyter.staging import run_stages

M, K, N = 32, 64, 16
X = np.ones((M, K), np.float32)
W = np.ones((K, N), np.float32)


def mlp(x, w):
    y = x @ w
    return jnp.tanh(y).sum()


def planted(x):
    big = jnp.outer(x, x + 1.0)
    s = jnp.sort(big, axis=1)
    return s[:, 0] * s[:, -1]


def _line(fn, k):
    return fn.__code__.co_firstlineno + k


def _row(report, fn, k):
    (found,) = [
        r for r in report.cost_by_line() if r["what"] == "line" and r["line"] == _line(fn, k)
    ]
    return found


@pytest.fixture(scope="module")
def report():
    return inspect(mlp, X, W, costs=True, cache=False)


def test_a_matmul_costs_2mnk_flops_on_its_line(report):
    row = _row(report, mlp, 1)
    assert row["flops"] == 2 * M * N * K
    assert row["file"] == __file__
    assert row["flops_share"] == pytest.approx(row["flops"] / report.costs["totals"]["flops"])
    # The tanh line has the transcendentals.
    assert _row(report, mlp, 2)["transcendentals"] == M * N


def test_the_rows_add_up_to_xla_totals_and_the_peak(report):
    rows = report.cost_by_line()
    totals = report.costs["totals"]
    for key, total in (
        ("flops", "flops"),
        ("transcendentals", "transcendentals"),
        ("bytes", "bytes accessed"),
    ):
        assert sum(r[key] for r in rows) == pytest.approx(totals[total], rel=0.01, abs=1)
    assert sum(r["peak"] for r in rows) == report.costs["peak"]["bytes"]
    assert sum(b["counted"] for b in report.peak_buffers()) == report.costs["peak"]["bytes"]
    # What XLA's cost_analysis of the compiled program says, as it says it.
    assert totals["flops"] == report.analyses.cost_compiled["flops"]
    # Arguments are a row of their own, with no line.
    (args,) = [r for r in rows if r["what"] == "arguments"]
    assert args["peak"] == X.nbytes + W.nbytes and args["file"] is None


def test_a_planted_temporary_is_the_peak_buffer_with_its_line():
    r = inspect(planted, np.ones(256, np.float32), costs=True, cache=False)
    biggest = r.peak_buffers()[0]
    assert biggest["size"] >= 256 * 256 * 4 and biggest["kind"] == "temporary"
    assert biggest["file"] == __file__ and biggest["line"] in (_line(planted, 1), _line(planted, 2))
    assert r.costs["peak"]["memory_analysis_peak"] is not None
    assert r.costs["peak"]["difference"]


def test_the_peak_is_read_from_the_same_compile(monkeypatch):
    def no_second_compile(*a, **k):
        raise AssertionError("compiled again for the peak")

    monkeypatch.setattr(builtin_kinds, "peak_memory", no_second_compile)
    run = run_stages(
        mlp, (X, W), read_peak=True, compiler_options={"xla_backend_optimization_level": 1}
    )
    assert run.peak is not None and run.peak_unread is None
    # The compiled program keeps the user's options: the dump options were for that compile.
    assert run.compiled.compiler_options == {"xla_backend_optimization_level": 1}
    r = stage_report.build_report(run, stages=("source", "costs"))
    assert r.costs["peak"]["bytes"] == run.peak.read().peak_bytes


def test_a_compiled_program_is_compiled_once_more_for_its_peak():
    compiled = olympus.jit(mlp).trace(X, W).lower().compile()
    r = inspect(compiled, costs=True, cache=False)
    assert r.costs["peak"] is not None and r.costs["unavailable"] == {}
    assert r.cost_by_line()[0]["flops"] == 2 * M * N * K


def test_no_dump_folder_is_left(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # this process's, put back
    r = inspect(mlp, X, W, costs=True, cache=False)
    assert r.costs["peak"] is not None and os.listdir(tmp_path) == []


def test_one_device_has_no_collectives_and_one_device_shardings(report):
    assert report.collectives() == []
    assert report.costs["devices"] == 1
    assert len(report.costs["shardings"]["inputs"]) == 2


def test_the_data_round_trips_through_the_bundle(report):
    again = StageReport.from_json(report.to_json())
    assert again.costs == report.costs
    assert again.cost_by_line() == report.cost_by_line()


def test_a_bundle_pointing_outside_itself_is_refused(report):
    data = copy.deepcopy(report.to_json())
    data["costs"]["lines"][0]["file"] = 7
    with pytest.raises(BundleError, match=r"costs.lines\[0\] names source file 7"):
        StageReport.from_json(data)
    data = copy.deepcopy(report.to_json())
    data["costs"]["lines"][0]["flops"] = "<script>"
    with pytest.raises(BundleError, match="costs"):
        StageReport.from_json(data)


def test_a_report_without_the_stage_says_how_to_make_it():
    r = inspect(mlp, X, W, cache=False)
    assert r.costs is None and "costs" not in r.stages
    with pytest.raises(ValueError, match="costs=True"):
        r.cost_by_line()


def test_cross_lowered_programs_have_costs_where_they_compile_here():
    here = jax.default_backend()
    other = "tpu" if here != "tpu" else "cpu"
    away = inspect(mlp, X, W, platform=other, costs=True, cache=False)
    assert away.costs is None and "cannot exist here" in away.unavailable["costs"]


def test_the_options_take_what_users_write():
    assert "costs" in ReportOptions(costs=True).stages
    assert ReportOptions(stages="source,costs").costs is True
    assert ReportOptions(costs=False).costs is False
    assert split_line("--costs f(x)")[0].costs is True
    with pytest.raises(OptionError, match="costs"):
        ReportOptions(costs="yes")


def test_the_magic_takes_costs():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "olympus_jupyter")
    shell.user_ns.update(mlp=mlp, X=X, W=W)
    shell.run_line_magic("olympus_lower", "--costs --name rep mlp(X, W)")
    assert _row(shell.user_ns["rep"], mlp, 1)["flops"] == 2 * M * N * K


def test_the_cli_takes_costs(tmp_path):
    from olympus_jupyter.frontends.cli import main

    out = tmp_path / "r.html"
    assert main(["demo", "--costs", "-o", str(out)]) == 0
    assert "Where the cost goes" in out.read_text()


def test_the_inspector_has_costs_and_makes_them_once():
    from olympus_jupyter.frontends.inspector import Inspector

    ins = Inspector(mlp, X, W, costs=True)
    assert "costs" in ins.stages.value
    first = ins.report.costs
    assert _row(ins.report, mlp, 1)["flops"] == 2 * M * N * K
    ins.debug_info.value = False  # the display only: the same costs data
    assert ins.report.costs is first


def test_a_dump_the_user_asked_for_goes_where_they_asked(tmp_path):
    r = inspect(
        mlp,
        X,
        W,
        costs=True,
        cache=False,
        compiler_options={"xla_dump_to": str(tmp_path), "xla_dump_hlo_as_text": True},
    )
    assert r.costs["peak"] is not None
    assert any(n.endswith("after_optimizations.txt") for n in os.listdir(tmp_path))


def test_the_rows_add_up_on_every_benchmark_program(monkeypatch):
    """The programs bench_costs.py times (an MLP, an attention block) and the chain of
    bench_big_program.py (smaller): each row set adds up to XLA's totals and peak."""
    import sys

    bench = os.path.join(os.path.dirname(os.path.dirname(__file__)), "benchmarks")
    monkeypatch.syspath_prepend(bench)
    before = set(sys.modules)
    try:
        import bench_big_program
        import bench_costs

        programs = {name: (make(), args) for name, (make, args) in bench_costs.programs().items()}
        programs["chain"] = (bench_big_program.make_program(2000, 1), (np.ones(8, np.float32),))
    finally:
        for name in set(sys.modules) - before:
            if name.startswith(("bench_", "_results", "_timing")):
                del sys.modules[name]
    for name, (fun, args) in programs.items():
        r = inspect(fun, *args, costs=True, stages="source,costs", cache=False)
        rows, totals = r.cost_by_line(), r.costs["totals"]
        for key, total in (
            ("flops", "flops"),
            ("bytes", "bytes accessed"),
            ("transcendentals", "transcendentals"),
        ):
            assert sum(row[key] for row in rows) == pytest.approx(totals[total], rel=0.01, abs=1), (
                name,
                key,
            )
        assert sum(row["peak"] for row in rows) == r.costs["peak"]["bytes"], name
        assert totals["flops"] == r.analyses.cost_compiled["flops"], name
