"""A report's reading beside XLA's compile (EarlyReading, alongside) changes nothing
of the report: the same data as when everything is read after the compile, the
same failures, and no thread left behind."""

import threading
import time

import pytest

import olympus
import olympus.numpy as jnp
from deadlines import deadline
from olympus_jupyter.report.stage_report import EarlyReading, build_report
from olympus_jupyter.staging import run_stages
from olympus_jupyter.staging.alongside import NICENESS, WORKER, alongside


def _mlp(x, w1, w2):
    h = jnp.tanh(x @ w1)
    y = jnp.sin(h) * 2.0
    return (y @ w2).sum()


ARGS = (jnp.ones((4, 8)), jnp.ones((8, 8)), jnp.ones((8, 2)))
STAGES = ("source", "olympuspr", "stablehlo", "hlo", "compiled", "cost_analysis", "memory")


def _report(early):
    run = run_stages(_mlp, ARGS, beside_compile=early)
    if early is not None:  # read while the program compiled
        assert early.reading is not None and sorted(early.reading.made) == [
            "olympuspr",
            "stablehlo",
        ]
        # ... and so were the compiler input's text and the lowered cost analysis.
        assert list(early.texts) == ["hlo"] and early.cost_lowered
    return build_report(run, stages=STAGES, early=early)


def _data(report):
    data = report.to_json()
    data.pop("timings", None)
    return data


def _first_difference(a, b, path=""):
    """Where two JSON values first differ (for a readable failure), or None."""
    if type(a) is not type(b):
        return f"{path}: {a!r:.200} != {b!r:.200}"
    if isinstance(a, dict):
        for k in sorted(set(a) | set(b), key=str):
            if a.get(k) != b.get(k):
                return _first_difference(a.get(k), b.get(k), f"{path}/{k}")
        return None
    if isinstance(a, list):
        if len(a) != len(b):
            return f"{path}: {len(a)} items != {len(b)}"
        for k, (x, y) in enumerate(zip(a, b)):
            if x != y:
                return _first_difference(x, y, f"{path}[{k}]")
        return None
    return None if a == b else f"{path}: {a!r:.300} != {b!r:.300}"


def test_report_read_beside_the_compile_is_the_same():
    early = EarlyReading(STAGES)
    with_early, without = _report(early), _report(None)
    assert with_early.failure is None
    assert _first_difference(_data(with_early), _data(without)) is None
    assert with_early.texts["hlo"] == without.texts["hlo"]


def test_a_reading_of_another_run_is_not_taken():
    early = EarlyReading(STAGES)
    run_stages(_mlp, ARGS, beside_compile=early)  # read from this run's lowering
    other = run_stages(_mlp, ARGS)
    early.texts["hlo"] = "not this run's text"
    assert build_report(other, stages=STAGES, early=early).texts["hlo"] != "not this run's text"


def test_the_reading_is_used_only_for_its_own_lowering_and_stages():
    lowered = olympus.jit(_mlp).trace(*ARGS).lower()
    other = olympus.jit(_mlp).trace(*ARGS).lower()
    early = EarlyReading(("olympuspr",))
    from olympus_jupyter.staging.runner import StagedRun

    early(StagedRun("f", lowered=lowered))()
    model = olympus.provenance.build(
        other.compile(), stages=("olympuspr", "compiled"), start=early.reading
    )
    # Another lowering's reading, or one of other stages, is not taken: read afresh.
    assert model.stage_names == ("olympuspr", "compiled")
    assert early.reading.made.keys() == {"olympuspr"}  # and not read on


def test_a_failed_compile_ends_the_reading_and_shows_the_failure():
    early = EarlyReading(STAGES)
    run = run_stages(
        _mlp, ARGS, compiler_options={"xla_no_such_option": True}, beside_compile=early
    )
    report = build_report(run, stages=STAGES, early=early)
    assert report.failure is not None and report.failure.stage == "compile"
    assert "olympuspr" in report.provenance.stages
    assert [t.name for t in threading.enumerate()].count("olympus-alongside") <= 1


def test_alongside_waits_for_its_work_even_when_the_block_raises():
    ended, started = [], threading.Event()

    def work():
        started.set()
        time.sleep(0.1)
        ended.append(True)

    try:
        with alongside(work):
            # The GIL is free here: the worker starts the work (waited for, not slept
            # on: at its lower priority, on a loaded machine, that can take a while).
            assert started.wait(deadline(5))
            raise KeyError("stop")
    except KeyError:
        pass
    assert ended == [True]


def test_work_the_busy_worker_has_not_started_is_dropped_at_the_block_end():
    release, ran = threading.Event(), []
    busy = WORKER.start(lambda: release.wait(5))  # another's work, still running
    try:
        start = time.perf_counter()
        with alongside(lambda: ran.append(True)):
            pass
        assert time.perf_counter() - start < 1  # it did not wait for the other work
    finally:
        release.set()
        WORKER.finish(busy)
    time.sleep(0.05)
    assert ran == []
    started = threading.Event()
    with alongside(lambda: (started.set(), ran.append(True))):
        assert started.wait(deadline(5))
    assert ran == [True]  # the worker goes on with the next work


def test_the_worker_alone_runs_at_its_lower_priority():
    # Below the thread that started it (Linux, where a thread's priority is its own);
    # a thread started from the worker would inherit that priority (XLA's or MLIR's
    # thread pools, made on first use): reports leave every other thread as it was.
    import os
    import sys
    from olympus_jupyter.frontends.inspection import inspect

    for _ in range(2):
        inspect(_mlp, *ARGS, cache=False)
    if not sys.platform.startswith("linux"):
        pytest.skip("threads have priorities of their own on Linux only")
    mine = os.getpriority(os.PRIO_PROCESS, threading.get_native_id())
    worker = WORKER._thread.native_id
    seen = {}
    for tid in map(int, os.listdir("/proc/self/task")):
        try:
            seen[tid] = os.getpriority(os.PRIO_PROCESS, tid)
        except ProcessLookupError:  # a thread that ended meanwhile
            pass
    assert seen.pop(worker) == min(19, mine + NICENESS)
    assert set(seen.values()) == {mine}
