"""The checks of lesson 04_reading_stablehlo: names and source locations of ops."""

from __future__ import annotations

import functools
import re

import numpy as np

from olympus_jupyter.frontends.inspection import inspect
from olympus_jupyter.teaching.checks import Verdict, attempt
from olympus_jupyter.teaching.exercises._programs import number, program


# -- exercise 1: named scopes ------------------------------------------------------------

#: The shapes the check stages the autoencoder for: every width differs, so the type of
#: an instruction's result says which half made it (the hidden width 5 is the encoder's,
#: the output width 7 and the scalar loss the decoder's).
_X, _W1, _W2 = (2, 3), (3, 5), (5, 7)
_SCOPES = ("encoder", "decoder")


def _autoencoder_reference(x, w1, w2) -> float:
    h = np.tanh(x @ w1)
    return float(np.maximum(h @ w2, 0.0).sum())


def _dims(types: tuple[str, ...]) -> tuple[int, ...] | None:
    """The dimensions of an instruction's (first) array result: ``f32[2,7]{1,0}`` → (2, 7)."""
    found = re.search(r"[a-z]\w*\[([\d,]*)\]", " ".join(types))
    if found is None:
        return None
    return tuple(int(d) for d in found.group(1).split(",") if d)


def _half(types: tuple[str, ...]) -> str | None:
    """Which half of the autoencoder made an instruction with these result types."""
    dims = _dims(types)
    if dims is None:
        return None
    return "decoder" if dims == () or _W2[1] in dims else "encoder"


def _scopes_in(name_stack: str) -> list[str]:
    return [s for s in name_stack.split("/") if s in _SCOPES]


def _line_in_function(model, op) -> str:
    """`` (line N)``: the line of the staged function that made ``op``, if one did."""
    function = model.function
    path = model.files[function.file].path
    for file, line in model.lines_for_op(op.id):
        if file == path and function.first_line <= line <= function.last_line:
            return f" (line {line})"
    return ""


def check_scoped_autoencoder(scoped_autoencoder) -> None:
    """Lesson 04, exercise 1: the encoder's and the decoder's work in named scopes.

    The check stages the answer for x: f32[2,3], w1: f32[3,5], w2: f32[5,7] and reads
    the op_name of every instruction of the optimized program that JAX named
    (``jit(...)/...``) in the report's provenance model.
    """
    rng = np.random.default_rng(0)
    x, w1, w2 = (rng.standard_normal(s).astype(np.float32) for s in (_X, _W1, _W2))
    value = attempt(scoped_autoencoder, x, w1, w2, name="scoped_autoencoder")
    verdict = Verdict()
    want = _autoencoder_reference(x, w1, w2)
    got = number(value)
    if got is None or not np.isclose(got, want, rtol=1e-4, atol=1e-4):
        verdict.stop(
            f"scoped_autoencoder(x, w1, w2) returned {value!r}; the autoencoder "
            f"gives {want:.6g}: keep its computation as it is, and only wrap its "
            f"two halves in named scopes."
        )
    report = inspect(scoped_autoencoder, x, w1, w2, cache=False)
    if (
        report.failure is not None
        or report.provenance is None
        or "compiled" not in report.provenance.stages
    ):
        verdict.stop(f"scoped_autoencoder could not be compiled: {report.failure}")
    model = report.provenance
    named = [
        op
        for op in model.stages["compiled"].ops
        if op.name != "fusion" and op.name_stack.startswith("jit(")
    ]
    wrong: list[str] = []
    for op in named:
        want_scope, scopes = _half(op.types), _scopes_in(op.name_stack)
        at = _line_in_function(model, op)
        what = f"`{op.name}` → {', '.join(op.types)}{at}, op_name {op.name_stack!r}"
        if not scopes:
            wrong.append(f"{what} names no scope.")
        elif len(set(scopes)) > 1:
            wrong.append(
                f"{what} names both scopes: the second `with` is inside the "
                f"first; put them one after the other."
            )
        elif want_scope and scopes[0] != want_scope:
            half = (
                "computes h (the hidden f32[2,5]): it is the encoder's work"
                if want_scope == "encoder"
                else "computes the output from h: it is the decoder's work"
            )
            wrong.append(f"{what} is in scope {scopes[0]!r}, but it {half}.")
    verdict.expect(
        named,
        "the optimized program has no instruction that JAX named: "
        "compute the autoencoder in scoped_autoencoder itself.",
    )
    if wrong:
        verdict.expect(
            False,
            f"{len(wrong)} of the {len(named)} instructions that JAX "
            f"named {'is' if len(wrong) == 1 else 'are'} not in the "
            f"right scope:\n  "
            + "\n  ".join(wrong[:6])
            + ("\n  …" if len(wrong) > 6 else "")
            + "\nEvery op made inside `with jax.named_scope('encoder'):` "
            "gets 'encoder' in its name stack (and so in the op_name "
            "of the instructions it becomes); an op made after the "
            "`with` block, such as a `return` outside it, gets none.",
        )
    by_scope = {
        s: sorted({op.name for op in named if s in _scopes_in(op.name_stack)}) for s in _SCOPES
    }
    verdict.close(
        f"every instruction of the optimized program that JAX named is in its "
        f"half's scope (encoder: {', '.join(by_scope['encoder'])}; decoder: "
        f"{', '.join(by_scope['decoder'])}). The scope went from the olympuspr's "
        f"name stacks to the StableHLO's locations to the op_name metadata that "
        f"XLA keeps through its passes, so a profile or an HLO dump of a big model "
        f"says which part of it an instruction belongs to."
    )


# -- exercise 2: the lines that made an op -------------------------------------------------

_LINES_PROGRAM = """\
def check_program(x, w):
    h = jnp.tanh(x @ w)
    y = h @ w.T
    z = jnp.maximum(y, 0.0)
    return (z * h.sum()).sum()
"""

#: Per StableHLO op name, the lines of the program (1 is the def) that make it.
_LINES_WANT = {
    "stablehlo.dot_general": (2, 3),
    "stablehlo.tanh": (2,),
    "stablehlo.transpose": (3,),
    "stablehlo.maximum": (4,),
    "stablehlo.multiply": (5,),
    "stablehlo.sine": (),
}


@functools.lru_cache(maxsize=1)
def _lines_report():
    """The report whose ops lesson 04's second check asks about, made once."""
    fun = program(_LINES_PROGRAM, "check_program")
    report = inspect(fun, np.ones((4, 8), np.float32), np.ones((8, 8), np.float32))
    return report, fun.__code__.co_firstlineno


def _lines_program_text(first: int) -> str:
    return "\n".join(
        f"    {first + k:>4}  {line}" for k, line in enumerate(_LINES_PROGRAM.splitlines())
    )


def _as_lines(answer) -> list[int] | None:
    """The answer as a sorted list of line numbers, if it is a collection of integers."""
    if isinstance(answer, (str, bytes)) or not hasattr(answer, "__iter__"):
        return None
    try:
        items = list(answer)
    except Exception:  # noqa: BLE001 - whatever the student returned
        return None
    if not all(isinstance(i, (int, np.integer)) and not isinstance(i, bool) for i in items):
        return None
    return sorted(int(i) for i in items)


def _lines_words(lines: list[int]) -> str:
    return (
        f"line {lines[0]}"
        if len(lines) == 1
        else f"lines {', '.join(map(str, lines[:-1]))} and {lines[-1]}"
    )


def check_lines_of(lines_of) -> None:
    """Lesson 04, exercise 2: the source lines that made the StableHLO ops of a name."""
    report, first = _lines_report()
    model = report.provenance
    stablehlo = model.stages["stablehlo"]
    verdict = Verdict()
    told_text_lines = False
    for name, offsets in _LINES_WANT.items():
        want = [first + k - 1 for k in offsets]
        answer = attempt(
            lines_of,
            report,
            name,
            name="lines_of",
            hint="Read the ops of report.provenance.stages['stablehlo'].",
        )
        got = _as_lines(answer)
        if got is None:
            verdict.expect(
                False,
                f"lines_of(report, {name!r}) returned {answer!r}; expected "
                f"a list of line numbers (ints), here {want}.",
            )
            continue
        if len(set(got)) != len(got):
            verdict.expect(
                False,
                f"lines_of(report, {name!r}) returned {answer!r}, with a "
                f"line more than once: give each line once, sorted.",
            )
            continue
        text_lines = sorted({op.lines[0] for op in stablehlo.ops if op.name == name and op.lines})
        if got == want:
            continue
        if got == text_lines and text_lines:
            if told_text_lines:
                verdict.expect(
                    False,
                    f"lines_of(report, {name!r}) returned {got}, lines of "
                    f"the StableHLO text too (expected {want}).",
                )
            else:
                told_text_lines = True
                verdict.expect(
                    False,
                    f"lines_of(report, {name!r}) returned {got}: the lines "
                    f"where those ops are printed in the StableHLO text "
                    f"(op.lines), not the source lines that made them "
                    f"(expected {want}). An op's source is its location: "
                    f"model.lines_for_op(op.id).",
                )
            continue
        missing, extra = sorted(set(want) - set(got)), sorted(set(got) - set(want))
        why = []
        if missing:
            why.append(f"{_lines_words(missing)} made {'one' if len(missing) == 1 else 'some'}")
        if extra:
            why.append(f"{_lines_words(extra)} made none")
        verdict.expect(
            False, f"lines_of(report, {name!r}) returned {got}, expected {want}: {'; '.join(why)}."
        )
    if verdict.wrong:
        verdict.wrong.append(
            "The program checked (line numbers as in its report):\n" + _lines_program_text(first)
        )
    verdict.close(
        "each StableHLO op carries its location (the line that made it, with its "
        "call stack), which the report shows beside the op; the two matrix "
        "products came from two lines, the `.T` made a transpose on its line, "
        "and an op that no line made has no line."
    )


__all__ = ["check_scoped_autoencoder", "check_lines_of"]
