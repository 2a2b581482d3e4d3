"""The checks of lesson 03_passes."""

from __future__ import annotations

import functools
import re

import numpy as np

from olympus_jupyter.frontends.inspection import inspect
from olympus_jupyter.teaching.checks import Verdict, attempt
from olympus_jupyter.teaching.exercises._programs import program


# -- 03_passes ------------------------------------------------------------------------

_PASSES_PROGRAM = """\
def check_program(x):
    s = jnp.sin(x) * 2.0
    t = jnp.sin(x)
    return jnp.exp(s + t)
"""


@functools.lru_cache(maxsize=1)
def _passes_report():
    """The report (with the passes stage) that lesson 03's checks ask about, made once."""
    fun = program(_PASSES_PROGRAM, "check_program")
    report = inspect(fun, np.ones((8, 128), np.float32), passes=True)
    return report, fun.__code__.co_firstlineno


def _passes_program_text() -> str:
    return "\n    " + "\n    ".join(_PASSES_PROGRAM.splitlines())


_JOURNEY_HINT = (
    "Remember that report.journey returns None for a line that made no "
    "instruction (such as the def line)."
)


def check_removed_by(removed_by) -> None:
    """Lesson 03, exercise 1: the pass that removed a line."""
    report, first = _passes_report()
    answers = {
        k: attempt(removed_by, report, first + k, name="removed_by", hint=_JOURNEY_HINT)
        for k in (0, 1, 2, 3)
    }
    verdict = Verdict()
    verdict.expect(
        answers[0] is None,
        f"The def line made no instruction (its journey is None), so nothing "
        f"removed it: expected None, got {answers[0]!r}.",
    )
    verdict.expect(
        answers[1] is None,
        f"Line `s = jnp.sin(x) * 2.0` is still in the optimized program (its "
        f"journey's end is not empty): a pass may have removed one of its "
        f"instructions, not its work. Expected None, got {answers[1]!r}.",
    )
    verdict.expect(
        answers[2] == "cse",
        f"Line `t = jnp.sin(x)` computes what the line above already computes: "
        f"common-subexpression elimination (the pass 'cse') removes it. "
        f"Expected 'cse', got {answers[2]!r}.",
    )
    verdict.expect(
        answers[3] is None,
        f"The return line is still in the optimized program: expected None, got {answers[3]!r}.",
    )
    if verdict.wrong:
        verdict.wrong.append("The program checked:" + _passes_program_text())
    verdict.close(
        "cse removed the copy of sin(x): it found the sine of `t = jnp.sin(x)` "
        "equal to the one of the line above, kept one and removed the other (where "
        "s + t used t, it now uses s); the other lines are still there, or made "
        "nothing."
    )


def check_fusion_kind(fusion_kind) -> None:
    """Lesson 03, exercise 2: the kind of the fusion that holds a line."""
    report, first = _passes_report()
    kinds = set(re.findall(r"fusion\(.*kind=(k\w+)", report.stage_text("compiled")))
    answers = {
        k: attempt(fusion_kind, report, first + k, name="fusion_kind", hint=_JOURNEY_HINT)
        for k in (0, 1, 2, 3)
    }
    verdict = Verdict()
    verdict.expect(
        answers[0] is None,
        f"The def line made no instruction (its journey is None): expected None, "
        f"got {answers[0]!r}.",
    )
    verdict.expect(
        answers[2] is None,
        f"Line `t = jnp.sin(x)` was removed by CSE: its journey's end is empty, "
        f"no fusion holds it. Expected None, got {answers[2]!r}.",
    )
    for k in (1, 3):
        verdict.expect(
            answers[k] in kinds,
            f"Line {k + 1} of the program ended in a fusion of the optimized "
            f"program, whose kinds are {sorted(kinds)}; got {answers[k]!r}. Take "
            f"the fusion_kind of a carrier in the journey's end whose fusion is "
            f"not None.",
        )
    if verdict.wrong:
        verdict.wrong.append("The program checked:" + _passes_program_text())
    verdict.close(
        f"the elementwise lines ended in a {answers[3]} fusion: sin, *, + and exp "
        f"fused into a single loop over the output that reads x once and writes the "
        f"result once, with no array in between; the removed line is in none."
    )


__all__ = ["check_removed_by", "check_fusion_kind"]
