"""The command line, end to end: ``python -m olympus_jupyter report|demo``."""

import queue
import subprocess
import sys
import textwrap
import threading
import time

import pytest

from deadlines import deadline


def run(args, cwd):
    return subprocess.run(
        [sys.executable, "-m", "olympus_jupyter", *args],
        cwd=cwd,
        capture_output=True,
        text=True,
        timeout=deadline(300),
    )


@pytest.fixture
def project(tmp_path):
    (tmp_path / "model.py").write_text(
        textwrap.dedent("""
        import olympus.numpy as jnp

        def layer(w, x):
            hidden = x @ w
            return jnp.tanh(hidden)

        def broken(w, x):
            return x @ w.T @ w  # shapes that do not fit

        NOT_A_FUNCTION = 3
    """)
    )
    return tmp_path


def test_report_writes_a_standalone_page(project):
    proc = run(
        ["report", "model:layer", "--arg", "f32[16,16]", "--arg", "f32[4,16]", "-o", "report.html"],
        project,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Olympus report: layer for cpu" in proc.stdout and "wrote report.html" in proc.stdout
    page = (project / "report.html").read_text()
    assert page.startswith("<!DOCTYPE html>")
    # Its only scripts are the interactive view's: the report's data and the loader
    # (tests/test_standalone_view.py); the static HTML has none.
    assert page.count("<script") == page.count('<script type="application/json"') * 2 <= 2
    import html
    import re

    # The page is ASCII: "·" is written "&#183;".
    source = html.unescape(re.sub(r"<[^>]+>", "", page)).split("Source · layer")[1]
    source = source.split("olympuspr: traced program")[0]
    assert "hidden = x @ w" in source and "return jnp.tanh(hidden)" in source
    assert "stablehlo.dot_general" in page and "Memory analysis" in page


def test_report_for_another_platform(project):
    proc = run(
        [
            "report",
            "model:layer",
            "--arg",
            "f32[16,16]",
            "--arg",
            "f32[4,16]",
            "--platform",
            "tpu",
            "-o",
            "tpu.html",
        ],
        project,
    )
    assert proc.returncode == 0, proc.stderr
    assert "Not available: lowered for tpu" in (project / "tpu.html").read_text()


def test_demo(tmp_path):
    proc = run(["demo", "-o", "demo.html"], tmp_path)
    assert proc.returncode == 0, proc.stderr
    assert (tmp_path / "demo.html").read_text().startswith("<!DOCTYPE html>")


def test_passes(project):
    proc = run(
        [
            "report",
            "model:layer",
            "--arg",
            "f32[16,16]",
            "--arg",
            "f32[4,16]",
            "--passes",
            "fusion|cse",
            "-o",
            "p.html",
        ],
        project,
    )
    assert proc.returncode == 0, proc.stderr
    assert "passes:" in proc.stdout and "Where each line" in (project / "p.html").read_text()


@pytest.mark.parametrize(
    "args, message",
    [
        (["report", "nosuchmodule:f", "-o", "r.html"], "cannot find module 'nosuchmodule'"),
        (["report", "model:missing", "-o", "r.html"], "module 'model' has no 'missing'"),
        (["report", "model:NOT_A_FUNCTION", "-o", "r.html"], "is not a function (it is a int)"),
        (["report", "model", "-o", "r.html"], "expected MODULE:FUNCTION"),
        (
            ["report", "model:layer", "--arg", "f32[16,x]", "-o", "r.html"],
            "dimensions of 'f32[16,x]'",
        ),
        (["report", "model:layer", "--arg", "q8[3]", "-o", "r.html"], "Unknown dtype 'q8'"),
        (
            ["report", "model:layer", "--arg", "f32[2]", "--platform", "tpux", "-o", "r.html"],
            "Unknown lowering platform 'tpux'",
        ),
        (["report", "model:layer", "-o", "r.txt"], "ending in .html"),
        (["demo", "-o", "no/such/dir/r.html"], "does not exist"),
        (
            ["report", "model:layer", "--timeout", "soon", "-o", "r.html"],
            "argument --timeout: expected a positive number of seconds, got 'soon'",
        ),
        (["demo", "--stages", "llvm", "-o", "r.html"], "unknown stage 'llvm'; choose from source"),
        (["demo", "--passes", "(", "-o", "r.html"], "is not a regular expression"),
    ],
)
def test_bad_input_is_one_line_and_nonzero(project, args, message):
    proc = run(args, project)
    assert proc.returncode == 2
    assert proc.stderr.count("\n") == 1 and proc.stderr.startswith("error: "), proc.stderr
    assert message in proc.stderr and "Traceback" not in proc.stderr


def test_a_function_that_fails_to_stage_still_gets_a_report(project):
    proc = run(
        ["report", "model:broken", "--arg", "f32[3,4]", "--arg", "f32[2,3]", "-o", "broken.html"],
        project,
    )
    assert proc.returncode == 1
    assert "trace failed at" in proc.stdout and "model.py" in proc.stdout
    assert "Trace failed" in (project / "broken.html").read_text()


def test_terminal_escape_sequences_from_a_program_never_reach_the_terminal(tmp_path):
    (tmp_path / "hostile.py").write_text(
        textwrap.dedent("""
        def clears_the_screen(x):
            raise ValueError("\\x1b[2J\\x1b]0;pwned\\x07 gone")
    """)
    )
    proc = run(["report", "hostile:clears_the_screen", "--arg", "f32[2]", "-o", "r.html"], tmp_path)
    assert proc.returncode == 1
    assert "\x1b" not in proc.stdout + proc.stderr and "\x07" not in proc.stdout
    assert "\\x1b[2J" in proc.stdout  # shown, harmlessly


@pytest.fixture
def slow_project(tmp_path):
    # Sleeps in short steps, as Python work does between bytecodes: a Ctrl+C that the
    # system hands to another thread of the process (XLA's, the progress thread) is
    # seen within a step, where one long sleep would only end when its time is up.
    (tmp_path / "slow.py").write_text(
        textwrap.dedent("""
        import sys
        import time
        import olympus.numpy as jnp

        def slow(x):
            print("slow: running", file=sys.stderr, flush=True)
            end = time.monotonic() + float(open("seconds.txt").read())
            while time.monotonic() < end:
                time.sleep(0.05)
            return jnp.sin(x)
    """)
    )
    return tmp_path


def test_slow_work_shows_its_progress_on_stderr(slow_project):
    (slow_project / "seconds.txt").write_text("2.2")
    proc = run(["report", "slow:slow", "--arg", "f32[3]", "-o", "r.html"], slow_project)
    assert proc.returncode == 0, proc.stderr
    # Not a terminal: a line when a step starts (no escape sequences), none on stdout.
    lines = [line for line in proc.stderr.splitlines() if line.startswith("Olympus: ")]
    assert lines and lines[0].startswith("Olympus: tracing the function…")
    assert "\x1b" not in proc.stderr and "Olympus: " not in proc.stdout


def test_ctrl_c_stops_the_cli_with_one_line_and_no_page(slow_project):
    import signal

    (slow_project / "seconds.txt").write_text("60")
    proc = subprocess.Popen(
        [
            sys.executable,
            "-m",
            "olympus_jupyter",
            "report",
            "slow:slow",
            "--arg",
            "f32[3]",
            "-o",
            "r.html",
        ],
        cwd=slow_project,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        # As in a terminal: Ctrl+C's default action, even where the suite itself was
        # started with SIGINT ignored (a background job of a non-interactive shell),
        # which a child inherits and which would keep Python from raising
        # KeyboardInterrupt at all.
        preexec_fn=lambda: signal.signal(signal.SIGINT, signal.SIG_DFL),
    )
    lines: queue.Queue = queue.Queue()
    reader = threading.Thread(target=lambda: [lines.put(line) for line in proc.stderr], daemon=True)
    reader.start()
    seen: list[str] = []
    try:
        # Ctrl+C once the function runs and the progress line says so (the CLI starts
        # Python and JAX first: on a loaded machine, many seconds).
        end = time.monotonic() + deadline(120)
        while not (
            "slow: running\n" in seen
            and any(line.startswith("Olympus: tracing the function…") for line in seen)
        ):
            try:
                seen.append(lines.get(timeout=max(0.0, end - time.monotonic())))
            except queue.Empty:
                raise AssertionError(f"no progress line in {deadline(120):.0f} s: {seen}") from None
        proc.send_signal(signal.SIGINT)
        proc.wait(timeout=deadline(60))
        reader.join(timeout=deadline(10))
    finally:
        proc.kill()
        proc.stdout.close()
    err = "".join(seen + list(lines.queue))
    assert proc.returncode == 130, err
    assert err.strip().splitlines()[-1] == "interrupted: no report written"
    assert "Traceback" not in err
    assert not (slow_project / "r.html").exists()
