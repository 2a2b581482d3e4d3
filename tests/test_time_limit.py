"""A function that hangs while it is traced is stopped at the time limit the user
set: the report says where, nothing is cached, and the process's own signal
handler and timer are as they were."""

import math
import signal
import subprocess
import sys
import textwrap
import threading
import time

import pytest

import olympus.numpy as jnp
from olympus_jupyter import ReportCache, inspect
from olympus_jupyter.frontends.options import OptionError, split_line
from olympus_jupyter.staging import StagingError


def hangs(x):
    while True:
        time.sleep(0.01)  # the line a user should see
        x = x + 1


def spins(x):
    n = 0
    while n >= 0:  # pure Python, no sleep
        n += 1
    return x


@pytest.mark.parametrize("fun", [hangs, spins])
def test_a_hanging_trace_is_stopped_at_the_line_it_hangs_on(fun):
    start = time.monotonic()
    report = inspect(fun, 1.0, timeout=0.3, cache=None)
    assert time.monotonic() - start < 5
    assert not report.ok
    assert report.failure.stage == "trace"
    assert report.failure.error_type == "StageTimeout"
    assert "time limit of 0.3 s" in report.failure.message
    frame = report.failure.user_frame
    assert frame is not None and frame.function == fun.__name__
    assert "Stopped after the time limit" in report.html()


def test_a_stopped_report_is_not_cached():
    cache = ReportCache()
    first = inspect(hangs, 1.0, timeout=0.2, cache=cache)
    assert len(cache) == 0
    assert inspect(hangs, 1.0, timeout=0.2, cache=cache) is not first


def test_a_function_within_the_limit_is_reported_as_usual():
    report = inspect(lambda x: jnp.sin(x), 1.0, timeout=60, cache=None)
    assert report.ok


def test_the_signal_handler_and_timer_are_put_back():
    fired = []
    timer = signal.getitimer(signal.ITIMER_REAL)  # pytest-timeout's, if it runs
    previous = signal.signal(signal.SIGALRM, lambda *a: fired.append(1))
    try:
        signal.setitimer(signal.ITIMER_REAL, 2.0)
        inspect(hangs, 1.0, timeout=0.2, cache=None)
        delay, _ = signal.getitimer(signal.ITIMER_REAL)
        assert 0 < delay < 2.0  # the user's timer goes on
        assert signal.getsignal(signal.SIGALRM) is not signal.SIG_DFL
        deadline = time.monotonic() + 5
        while not fired and time.monotonic() < deadline:
            time.sleep(0.05)
        assert fired == [1]  # ... and fires its own handler
    finally:
        signal.setitimer(signal.ITIMER_REAL, 0)
        signal.signal(signal.SIGALRM, previous)
        if timer[0]:
            signal.setitimer(signal.ITIMER_REAL, *timer)


def test_no_timeout_arms_nothing():
    before = signal.getsignal(signal.SIGALRM)
    timer = signal.getitimer(signal.ITIMER_REAL)
    inspect(lambda x: x + 1, 1.0, cache=None)
    assert signal.getsignal(signal.SIGALRM) is before
    assert (signal.getitimer(signal.ITIMER_REAL) == (0.0, 0.0)) == (timer == (0.0, 0.0))


@pytest.mark.parametrize("bad", [True, 0, -1, "1", math.nan, math.inf, [1]])
def test_bad_limits_are_refused_with_a_clear_error(bad):
    with pytest.raises(StagingError, match="timeout must be a positive number of seconds"):
        inspect(lambda x: x, 1.0, timeout=bad, cache=None)


def test_outside_the_main_thread_a_limit_is_refused():
    errors = []

    def work():
        try:
            inspect(lambda x: x, 1.0, timeout=1, cache=None)
        except StagingError as e:
            errors.append(str(e))

    thread = threading.Thread(target=work)
    thread.start()
    thread.join()
    assert errors and "main thread" in errors[0]


def test_the_magic_takes_a_timeout():
    options, call = split_line("--timeout 2.5 f(x)")
    assert options.timeout == 2.5 and call == "f(x)"
    for bad in ("0", "-3", "soon"):
        with pytest.raises(OptionError, match="positive number of seconds"):
            split_line(f"--timeout {bad} f(x)")


def test_the_cli_takes_a_timeout(tmp_path):
    (tmp_path / "slow.py").write_text(
        textwrap.dedent("""
        import time

        def forever(x):
            while True:
                time.sleep(0.01)
    """)
    )
    proc = subprocess.run(
        [
            sys.executable,
            "-m",
            "olympus_jupyter",
            "report",
            "slow:forever",
            "--arg",
            "f32[2]",
            "--timeout",
            "0.5",
            "-o",
            "out.html",
        ],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 1
    assert "StageTimeout" in proc.stdout and "slow.py" in proc.stdout
    assert (tmp_path / "out.html").exists()
