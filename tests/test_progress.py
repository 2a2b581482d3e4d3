"""Progress of long staging: the step running and the time so far, shown only when slow."""

import threading
import time

import olympus.numpy as jnp
from olympus_jupyter.staging.progress import Progress, status_line
from olympus_jupyter.staging.runner import run_stages

from deadlines import wait_until


def slow_to_trace(x):
    time.sleep(0.6)  # a Python loop or a blocking read while traced: the GIL is free
    return jnp.sin(x)


def test_slow_staging_shows_the_step_running_and_the_time_so_far():
    lines, cleared = [], []

    def tracing_since(seconds):
        return [
            line
            for line in lines
            if "tracing" in line and float(line.split("… ")[1].split(" s")[0]) >= seconds
        ]

    def slow_until_shown(x):
        slow_to_trace(x)
        # The progress thread may run late on a loaded machine: the trace goes on
        # until it has shown the time so far (0.6 s would do on an idle one).
        assert wait_until(lambda: tracing_since(0.3), 30), lines
        return x

    with Progress(lines.append, lambda: cleared.append(True), delay=0.2, interval=0.1) as progress:
        run = run_stages(slow_until_shown, (1.0,), progress=progress)
    assert run.failure is None and run.compiled is not None
    assert lines and all(line.startswith("Olympus: ") for line in lines)
    assert any("tracing the function…" in line for line in lines)
    assert "Interrupt the kernel" in lines[0]
    # The time so far grows from one line to the next while the step runs.
    tracing = [float(line.split("… ")[1].split(" s")[0]) for line in lines if "tracing" in line]
    assert tracing == sorted(tracing) and tracing[-1] >= 0.3
    assert cleared == [True]
    assert set(progress.times) == {"trace", "lower", "compile"}
    assert progress.times["trace"] >= 0.6


def test_quick_staging_shows_nothing():
    lines, cleared = [], []
    with Progress(lines.append, lambda: cleared.append(True)) as progress:
        run_stages(lambda x: x + 1, (1.0,), progress=progress)
    assert lines == [] and cleared == []


def test_a_frontend_that_fails_to_show_never_stops_the_work():
    def broken(text):
        raise RuntimeError("the display went away")

    with Progress(broken, delay=0.05, interval=0.05) as progress:
        run = run_stages(slow_to_trace, (1.0,), progress=progress)
    assert run.failure is None and run.compiled is not None


def test_a_frontend_that_fails_to_show_is_logged_once_with_its_reason(caplog):
    tried = threading.Event()

    def broken(text):
        tried.set()
        raise RuntimeError("the display went away")

    with Progress(broken, delay=0.0, interval=0.01) as progress:
        progress.step("trace")
        assert tried.wait(timeout=60)
    # The `with` ends once the line being shown is done with, its failure logged.
    failed = [r for r in caplog.records if "showing the progress line failed" in r.getMessage()]
    assert len(failed) == 1 and "the display went away" in caplog.text
    assert progress.shown == 0


def test_interrupted_work_stops_its_progress_and_nothing_shows_after():
    lines = []

    def interrupted(x):
        assert wait_until(lambda: len(lines) >= 2, 30), lines  # some lines have shown
        raise KeyboardInterrupt

    try:
        with Progress(lines.append, delay=0.05, interval=0.02) as progress:
            run_stages(interrupted, (1.0,), progress=progress)
    except KeyboardInterrupt:
        pass
    else:
        raise AssertionError("a KeyboardInterrupt must reach the caller")
    shown = len(lines)
    assert shown >= 2 and progress.shown == shown
    time.sleep(0.15)  # seven intervals more
    assert len(lines) == shown


def test_every_progress_shares_the_one_progress_thread():
    for _ in range(3):  # the first may start it
        with Progress(lambda text: None):
            pass
    before = threading.active_count()
    lines = []
    for k in range(20):
        with Progress(lines.append, delay=0.01, interval=0.01) as progress:
            progress.step("trace")
            if k % 5 == 0:  # some show lines
                shown = len(lines)
                assert wait_until(lambda: len(lines) > shown, 30), k
    assert threading.active_count() == before
    assert [t.name for t in threading.enumerate()].count("olympus-progress") == 1
    assert lines


def test_status_line_names_each_step_and_what_is_done():
    assert status_line("trace", 1.25, {}).startswith("Olympus: tracing the function… 1.2 s so far.")
    line = status_line("report", 2.0, {"trace": 0.5, "lower": 0.25, "compile": 12.0})
    assert "reading the stages into the report… 2.0 s so far" in line
    assert "(traced in 0.5 s, lowered in 0.25 s, compiled in 12 s)" in line
