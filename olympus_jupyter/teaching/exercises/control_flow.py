"""The checks of lesson 05_control_flow: staged loops and branches."""

from __future__ import annotations

import collections
import functools

import numpy as np

import olympus
from olympus.provenance import build as build_provenance
from olympus_jupyter.teaching.checks import Verdict, attempt, first_line
from olympus_jupyter.teaching.exercises._programs import program


# -- exercise 1: a loop that does not grow with n -------------------------------------------

_STEP_PROGRAM = """\
def step(x):
    return jnp.cos(x) * 0.5 + x * 0.25
"""

#: The trip counts the check stages the answer for: the program must not grow with n.
_TRIPS = (3, 40)


@functools.lru_cache(maxsize=1)
def _step():
    return program(_STEP_PROGRAM, "step")


def _repeat_reference(x: np.ndarray, n: int) -> np.ndarray:
    for _ in range(n):
        x = np.cos(x) * np.float32(0.5) + x * np.float32(0.25)
    return x


def _short(a) -> str:
    """An array in a few characters: its values rounded, on one line."""
    a = np.asarray(a)
    if a.dtype.kind not in "biuf":
        return repr(a.tolist() if a.shape else a.item())
    return np.array2string(a, precision=3, separator=", ", max_line_width=10_000)


_LOOP_HINT = (
    "Use olympus.lax.fori_loop(0, n, lambda i, x: step(x), x) (or lax.scan, lax.while_loop)."
)


def check_repeat(repeat) -> None:
    """Lesson 05, exercise 1: ``step`` applied ``n`` times, as one staged loop.

    The check stages ``lambda x: repeat(step, x, n)`` for two trip counts and counts
    the StableHLO ops and the ``stablehlo.while`` loops of each program.
    """
    step = _step()
    x = np.linspace(-2.0, 2.0, 8, dtype=np.float32)
    verdict = Verdict()
    for n in (0,) + _TRIPS:
        got = np.asarray(attempt(repeat, step, x, n, name="repeat", hint=_LOOP_HINT))
        want = _repeat_reference(x, n)
        if got.shape != want.shape or not np.allclose(got, want, rtol=1e-5, atol=1e-5):
            verdict.stop(
                f"repeat(step, x, {n}) returned {_short(got)}; step applied {n} "
                f"time{'' if n == 1 else 's'} to x = {_short(x)} gives "
                f"{_short(want)}{' (x itself)' if n == 0 else ''}."
            )
    counts = {}
    for n in _TRIPS:
        traced = attempt(
            lambda: olympus.jit(lambda x: repeat(step, x, n)).trace(x),
            name="repeat",
            hint=_LOOP_HINT,
        )
        model = build_provenance(traced.lower())
        names = collections.Counter(op.name for op in model.stages["stablehlo"].ops)
        counts[n] = (
            sum(names.values()),
            names["stablehlo.while"],
            len(model.stages["olympuspr"].ops),
        )
    (small, loops_small, eqns_small), (big, loops_big, eqns_big) = (counts[n] for n in _TRIPS)
    a, b = _TRIPS
    if loops_small == 0 and loops_big == 0:
        grows = (
            f"for n={a} the StableHLO has {small} ops and for n={b} {big}: " if big > small else ""
        )
        verdict.expect(
            False,
            f"the program has no loop: {grows}the Python loop ran while "
            f"tracing, and each of its iterations was staged out one "
            f"after the other (unrolled). A staged loop is one op, "
            f"stablehlo.while, whose body holds step once. {_LOOP_HINT}",
        )
    else:
        verdict.expect(
            loops_small == 1 and loops_big == 1,
            f"the programs for n={a} and n={b} have {loops_small} and "
            f"{loops_big} stablehlo.while loops; expected one each: one "
            f"staged loop whose body calls step once.",
        )
        verdict.expect(
            small == big,
            f"the program grows with n: {small} StableHLO ops for n={a}, "
            f"{big} for n={b}. Only the trip count may change with n, not the "
            f"program: call step inside the loop's body, not in a Python loop.",
        )
    verdict.close(
        f"for n={a} and n={b} the StableHLO has the same {small} ops, one "
        f"stablehlo.while among them ({eqns_small} olympuspr equations, nested "
        f"ones included): step is traced once, into the loop's body, and n is "
        f"only the trip count. The Python loop would have traced step n times."
    )


# -- exercise 2: a branch on a traced value ------------------------------------------------


def _rescale_reference(x: np.ndarray, limit: float) -> np.ndarray:
    total = np.abs(x).sum()
    return x * (np.float32(limit) / total) if total > limit else x


#: (x, limit, what the case is): the check runs one compiled program on each.
_RESCALE_CASES = (
    (np.array([1.0, -2.0, 3.0, 4.0], np.float32), 5.0, "its total 10 is above the limit 5"),
    (np.array([1.0, -1.0, 0.5, 0.0], np.float32), 10.0, "its total 2.5 is under the limit 10"),
    (np.array([0.5, 0.5, -3.0, 0.0], np.float32), 1.0, "its total 4 is above the limit 1"),
)

_BRANCH_HINT = (
    "Under jit, `total > limit` is a traced boolean: Python's `if` needs True or "
    "False while tracing, which a traced value has not. Stage the branch: "
    "olympus.lax.cond(pred, if_true, if_false, x), or jnp.where(pred, a, b)."
)


def check_rescale_jittable(rescale_jittable) -> None:
    """Lesson 05, exercise 2: a branch on a traced value, in one compiled program.

    The check compiles ``rescale_jittable`` once, with ``x`` and ``limit`` both traced,
    and runs that one program on cases that take each branch.
    """
    x_type = olympus.ShapeDtypeStruct((4,), np.dtype("float32"))
    limit_type = olympus.ShapeDtypeStruct((), np.dtype("float32"))
    traced = attempt(
        lambda: olympus.jit(rescale_jittable).trace(x_type, limit_type),
        name="rescale_jittable",
        hint=_BRANCH_HINT,
    )
    verdict = Verdict()
    try:
        compiled = traced.lower().compile()
    except Exception as e:  # noqa: BLE001 - the student's program
        verdict.stop(
            f"rescale_jittable traced, but did not compile: {type(e).__name__}: {first_line(e)}"
        )
    for x, limit, case in _RESCALE_CASES:
        want = _rescale_reference(x, limit)
        got = np.asarray(compiled(x, np.float32(limit)))
        branch = "scaled to the limit" if np.abs(x).sum() > limit else "unchanged"
        verdict.expect(
            got.shape == want.shape and np.allclose(got, want, rtol=1e-5),
            f"for x={x.tolist()}, limit={limit:g} ({case}) the program returned "
            f"{got.tolist()}; expected x {branch}: {want.tolist()}.",
        )
    names = {op.name for op in build_provenance(traced).stages["olympuspr"].ops}
    if "cond" in names:
        how = (
            "lax.cond staged both branches as sub-programs of one `cond` equation "
            "(stablehlo.case in the StableHLO): the program holds both, and each call "
            "runs only the one the traced predicate picks"
        )
    elif "select_n" in names:
        how = (
            "jnp.where (select_n) computes both sides for every element and keeps one: "
            "fine for cheap branches; lax.cond runs only one, which matters when a "
            "branch is expensive"
        )
    else:
        how = "the branch is staged in the program"
    verdict.close(
        f"one program, compiled once with x and limit traced, takes each branch "
        f"on its own inputs: {how}."
    )


__all__ = ["check_repeat", "check_rescale_jittable"]
