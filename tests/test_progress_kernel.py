"""Progress and interrupts in a real kernel: %olympus_lower says what runs while it
runs, and the kernel's interrupt stops it without leaving a report in the cache."""

import time

import pytest

from deadlines import deadline
from ipc_kernel import started_kernel

SETUP = """\
%load_ext olympus_jupyter
import time
import olympus.numpy as jnp
def slow(x):
    # A slow trace (what a big model's compile feels like), in short steps: an interrupt
    # the system hands to another thread is seen within one.
    end = time.monotonic() + SECONDS
    while time.monotonic() < end:
        time.sleep(0.05)
    return jnp.sin(x)
def magic_cache():
    return get_ipython().magics_manager.registry["OlympusMagics"].cache
"""


@pytest.fixture()
def kernel():
    with started_kernel() as (km, kc):
        yield km, kc


def run(kc, code, *, interrupt_when=None, km=None, timeout=180):
    """Executes ``code``; returns its iopub messages (interrupting the kernel once
    ``interrupt_when(messages)`` is true, if given). ``timeout`` is scaled to the
    machine (:func:`deadlines.deadline`)."""
    msg_id = kc.execute(code)
    start, interrupted, messages = time.monotonic(), False, []
    while True:
        if interrupt_when is not None and not interrupted and interrupt_when(messages):
            km.interrupt_kernel()
            interrupted = True
        try:
            msg = kc.get_iopub_msg(timeout=0.2)
        except Exception:  # noqa: BLE001 - no message yet (a timeout)
            assert time.monotonic() - start < deadline(timeout), "the kernel did not answer"
            continue
        if msg["parent_header"].get("msg_id") != msg_id:
            continue
        messages.append(msg)
        if msg["msg_type"] == "status" and msg["content"]["execution_state"] == "idle":
            return messages


def texts(messages, kind):
    return [m["content"]["data"].get("text/plain", "") for m in messages if m["msg_type"] == kind]


def stdout(messages):
    return "".join(
        m["content"]["text"]
        for m in messages
        if m["msg_type"] == "stream" and m["content"]["name"] == "stdout"
    )


def test_a_slow_report_shows_its_progress_in_the_cell_then_clears_it(kernel):
    km, kc = kernel
    run(kc, SETUP.replace("SECONDS", "2.2"))
    messages = run(kc, "%olympus_lower slow(1.0)")
    shown = texts(messages, "display_data") + texts(messages, "update_display_data")
    progress = [t for t in shown if t.startswith("Olympus: ")]
    assert progress and progress[0].startswith("Olympus: tracing the function…")
    assert "Interrupt the kernel" in progress[0]
    # The status line is emptied at the end, and the report follows it.
    assert texts(messages, "update_display_data")[-1] == ""
    reports = [
        m
        for m in messages
        if m["msg_type"] == "display_data"
        and "application/vnd.olympus.stages+json" in m["content"]["data"]
    ]
    assert len(reports) == 1


def test_a_quick_report_shows_no_progress(kernel):
    km, kc = kernel
    run(kc, SETUP.replace("SECONDS", "0"))
    messages = run(kc, "%olympus_lower slow(1.0)")
    assert not any(t.startswith("Olympus: ") for t in texts(messages, "display_data"))
    assert not [m for m in messages if m["msg_type"] == "update_display_data"]


def test_the_kernel_interrupt_stops_it_and_caches_nothing(kernel):
    km, kc = kernel
    run(kc, SETUP.replace("SECONDS", "30"))
    # Interrupted once the progress line shows (the trace has run a second).
    messages = run(
        kc,
        "%olympus_lower slow(1.0)",
        km=km,
        timeout=25,
        interrupt_when=lambda messages: any(
            t.startswith("Olympus: tracing")
            for t in texts(messages, "display_data") + texts(messages, "update_display_data")
        ),
    )
    errors = [m["content"] for m in messages if m["msg_type"] == "error"]
    assert errors and errors[0]["ename"] == "KeyboardInterrupt"
    assert any(
        t.startswith("Olympus: tracing")
        for t in texts(messages, "display_data") + texts(messages, "update_display_data")
    )
    # Nothing half-made is kept, and the kernel goes on: the same call, now quick,
    # is staged anew and cached.
    after = run(
        kc,
        "print(len(magic_cache()))\nSECONDS = 0\n"
        "def slow(x):\n    return jnp.sin(x)\n"
        "%olympus_lower slow(1.0)\nprint(len(magic_cache()))",
    )
    assert stdout(after).split() == ["0", "1"]
    assert not [m for m in after if m["msg_type"] == "error"]
