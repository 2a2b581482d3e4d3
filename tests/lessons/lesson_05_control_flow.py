"""notebooks/05_control_flow.ipynb: Python control flow at trace time, staged control
flow (cond, fori_loop, while_loop, scan) and what it lowers to, a loop body's lines."""

import re

import olympus.numpy as jnp
from olympus import lax
from notebook_outputs import MEDIA, bundles, report_of, text


def _ops(data, stage):
    ops = data["provenance"]["stages"][stage]["ops"]
    values = ops["name"]["values"]
    return [values[int(c)] for c in ops["name"]["codes"].split(",")] if ops["count"] else []


def shows(nb, code):
    reports = [report_of(c)[MEDIA] for c in code if bundles(c)]
    assert len(reports) == 3  # the unrolled loop, the cond, the scan
    unrolled, branch, scan = reports
    for data in reports:
        assert data["failure"] is None
    # The Python loop for n=3: three sines, no loop.
    assert _ops(unrolled, "olympuspr").count("sin") == 3
    assert "stablehlo.while" not in _ops(unrolled, "stablehlo")
    # lax.cond: a cond equation, a stablehlo.case, one sine and one cosine in its branches.
    assert "cond" in _ops(branch, "olympuspr")
    stablehlo = _ops(branch, "stablehlo")
    assert "stablehlo.case" in stablehlo
    assert stablehlo.count("stablehlo.sine") == 1 and stablehlo.count("stablehlo.cosine") == 1
    # lax.scan: one while loop, the body's sine once.
    assert "scan" in _ops(scan, "olympuspr")
    assert _ops(scan, "stablehlo").count("stablehlo.while") == 1
    assert 'result_info = "result[1]"' in scan["provenance"]["stages"]["stablehlo"]["text"]
    outputs = "".join(text(c) for c in code)
    # The unrolled program grows with n: 2 equations an iteration.
    assert re.search(r"n= 1: +2 equations", outputs) and re.search(r"n=16: +32 equations", outputs)
    assert "TracerBoolConversionError" in outputs
    assert "select_n" in outputs  # jnp.where computes both sides, then selects
    assert "n static: olympuspr ['scan'], StableHLO ['stablehlo.while']" in outputs
    assert "n traced: olympuspr ['while'], StableHLO ['stablehlo.while']" in outputs
    assert re.search(r"olympuspr: sin +inside scan", outputs)
    assert re.search(r"compiled: sine +inside .*while", outputs)


#: Per exercise: a wrong body for its solution region, and what its check must say.
WRONG = {
    "repeat": ("for _ in range(n):\n    x = step(x)\nreturn x", "the program has no loop"),
    "rescale_jittable": ("return x * (limit / jnp.abs(x).sum())", "expected x unchanged"),
}


def _repeat_scan(step, x, n):
    return lax.scan(lambda carry, _: (step(carry), None), x, length=n)[0]


def _repeat_while(step, x, n):
    def body(state):
        i, x = state
        return i + 1, step(x)

    return lax.while_loop(lambda state: state[0] < n, body, (0, x))[1]


def _rescale_where(x, limit):
    total = jnp.abs(x).sum()
    return jnp.where(total > limit, x * (limit / total), x)


def _rescale_select(x, limit):
    total = jnp.abs(x).sum()
    scale = lax.select(total > limit, limit / total, jnp.ones_like(total))
    return x * scale


#: Other correct answers its checks accept.
RIGHT = [
    ("check_repeat", _repeat_scan),
    ("check_repeat", _repeat_while),
    ("check_rescale_jittable", _rescale_where),
    ("check_rescale_jittable", _rescale_select),
]


def _rescale_if(x, limit):
    total = jnp.abs(x).sum()
    if total > limit:
        x = x * (limit / total)
    return x


#: Other wrong answers, and what its checks say of them.
WRONG_ANSWERS = [
    (
        "check_repeat",
        lambda step, x, n: lax.fori_loop(0, n, lambda i, x: step(x), x, unroll=True),
        "the program has no loop",
    ),
    (
        "check_repeat",
        lambda step, x, n: lax.fori_loop(0, n + 1, lambda i, x: step(x), x),
        "step applied 0 times to x",
    ),
    (
        "check_repeat",
        lambda step, x, n: lax.fori_loop(
            0, n, lambda i, x: step(x), lax.fori_loop(0, 2, lambda i, x: x + 0.0, x)
        ),
        "stablehlo.while loops; expected one each",
    ),
    ("check_rescale_jittable", _rescale_if, "raised TracerBoolConversionError"),
    (
        "check_rescale_jittable",
        lambda x, limit: jnp.where(jnp.abs(x).sum() < limit, x * (limit / jnp.abs(x).sum()), x),
        "expected x scaled to the limit",
    ),
]
