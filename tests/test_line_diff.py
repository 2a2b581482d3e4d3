"""Line diffs: exact where they align, fast on big programs, and saying what they did
not align."""

import time

import numpy as np
from hypothesis import given, settings, strategies as st

import olympus.numpy as jnp
from olympus_jupyter import compare, inspect
from olympus_jupyter.report.line_diff import line_diff

lines = st.lists(st.sampled_from("abcdefgh"), max_size=40)


def rebuild(a, b, d):
    """Applies the opcodes to ``a``; checks 'equal' really is equal."""
    out, pa, pb = [], 0, 0
    for tag, i1, i2, j1, j2 in d.opcodes:
        assert (i1, j1) == (pa, pb)
        if tag == "equal":
            assert a[i1:i2] == b[j1:j2]
        out += b[j1:j2]
        pa, pb = i2, j2
    assert (pa, pb) == (len(a), len(b))
    return out


@settings(max_examples=200, deadline=None)
@given(lines, lines, st.sampled_from([0, 16, 10**9]))
def test_the_opcodes_turn_before_into_after(a, b, cells):
    d = line_diff(a, b, cells=cells)
    assert rebuild(a, b, d) == b
    assert d.removed - d.added == len(a) - len(b)


def test_with_room_to_align_it_finds_the_smallest_change():
    a = [f"line {k}" for k in range(1000)]
    b = a[:500] + ["new"] + a[500:]
    d = line_diff(a, b)
    assert (d.removed, d.added, d.unaligned) == (0, 1, 0)


def test_what_is_too_big_to_align_is_counted_not_hidden():
    a = ["x"] * 600 + ["y"] * 600
    b = ["y"] * 600 + ["x"] * 600
    d = line_diff(a, b, cells=1000)
    assert rebuild(a, b, d) == b and d.unaligned > 0


def mlp(params, x):
    for w, b in params:
        x = jnp.tanh(x @ w + b)
    return x


def test_comparing_two_big_reports_takes_well_under_a_second():
    params = [(np.ones((16, 16), np.float32), np.ones(16, np.float32))] * 200
    a = inspect(mlp, params, np.ones((4, 16), np.float32), cache=None)
    b = inspect(mlp, params, np.ones((8, 16), np.float32), cache=None)

    def timed():
        start = time.perf_counter()
        diff = compare(a, b)  # a new comparison each time: nothing of the last is kept
        diff.text(), diff.html()
        return time.perf_counter() - start, diff

    # The fastest of three: a stall of the machine (the suite runs on every core)
    # is not the comparison's time, which takes about 0.05 s here.
    runs = [timed() for _ in range(3)]
    assert min(seconds for seconds, _ in runs) < 1.0
    assert "compiled" in runs[0][1].changed_stages()


@settings(max_examples=300, deadline=None)
@given(lines, lines)
def test_a_passes_delta_holds_the_alignment_of_its_diff(a, b):
    """The passes data's delta of a module (kept ranges and new lines) gives back
    the diff it was made from: the static HTML's diffs are read from it, not made
    again (passes_view.delta_opcodes)."""
    from olympus_jupyter.report.line_diff import line_ids, unified_lines
    from olympus_jupyter.report.passes_view import _delta, delta_opcodes

    ids: dict[str, int] = {}
    delta = _delta(line_ids(a, ids), line_ids(b, ids), b)[0]
    opcodes = delta_opcodes(delta, len(a))
    assert rebuild(a, b, line_diff(a, b).__class__(opcodes)) == b
    for context in (0, 2):
        assert unified_lines(a, b, context, opcodes=opcodes) == unified_lines(a, b, context)
