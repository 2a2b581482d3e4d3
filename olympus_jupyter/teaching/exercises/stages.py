"""The checks of lesson 01_stages."""

from __future__ import annotations

import numpy as np

import olympus.numpy as jnp
from olympus.stages import Compiled, Lowered, Traced, Wrapped
from olympus_jupyter.teaching.checks import Verdict, attempt, first_line
from olympus_jupyter.teaching.exercises._programs import number


# -- 01_stages ------------------------------------------------------------------------


def check_aot_compiled_sum(aot_compiled_sum) -> None:
    """Lesson 01, exercise 1: the sum of ``x``, compiled ahead of time."""
    verdict = Verdict()
    for label, x in (("jnp.ones(4)", jnp.ones(4)), ("jnp.arange(5.0)", jnp.arange(5.0))):
        result = attempt(aot_compiled_sum, x, name="aot_compiled_sum")
        want = float(np.sum(np.asarray(x)))
        got = number(result)
        if got is None:
            verdict.stop(
                f"aot_compiled_sum({label}) returned {result!r}, not a number: "
                f"return what the compiled function returns when called on x."
            )
        verdict.expect(
            np.isclose(got, want),
            f"aot_compiled_sum({label}) returned {got}, but the sum of its elements is {want}.",
        )
    verdict.close(
        "the compiled program is made once, before the call, and is bound to "
        "f32[4]: called with jnp.ones(5) it raises a TypeError that names the "
        "argument and both types. Each shape needs its own compile (or a "
        "shape-polymorphic export: olympus.export)."
    )


def check_compile_for(compile_for) -> None:
    """Lesson 01, exercise 2: ``f`` compiled for an array type, without an array."""

    def double_sine(x):
        return jnp.sin(x) * 2

    verdict = Verdict()
    for shape, dtype in (((2, 3), jnp.float32), ((5,), jnp.int32)):
        want = f"{jnp.dtype(dtype).name}{list(shape)}"
        compiled = attempt(compile_for, double_sine, shape, dtype, name="compile_for")
        stage = {
            Wrapped: "olympus.jit(f), which is not compiled yet (it compiles when "
            "it is first called, for the types of that call)",
            Traced: "a traced program: lower it, then compile it",
            Lowered: "a lowered program: one more stage, compile it",
        }
        if not isinstance(compiled, Compiled):
            what = next(
                (text for cls, text in stage.items() if isinstance(compiled, cls)),
                f"a {type(compiled).__name__}",
            )
            verdict.stop(
                f"compile_for(f, {shape}, {jnp.dtype(dtype).name}) returned {what}; "
                f"expected the compiled program, what .compile() returns."
            )
        (avals, kwargs) = compiled.in_avals
        types = [f"{a.dtype.name}{list(a.shape)}" for a in avals]
        if not verdict.expect(
            types == [want] and not kwargs,
            f"compile_for(f, {shape}, {jnp.dtype(dtype).name}) compiled f "
            f"for {', '.join(types) or 'no argument'}; expected {want}: "
            f"trace it with olympus.ShapeDtypeStruct(shape, dtype).",
        ):
            continue
        x = np.arange(np.prod(shape), dtype=jnp.dtype(dtype)).reshape(shape)
        try:
            got = np.asarray(compiled(x))
        except Exception as e:  # noqa: BLE001 - the error is the feedback
            verdict.expect(
                False,
                f"the program compiled for {want} failed when called "
                f"with an array of that type: {type(e).__name__}: "
                f"{first_line(e)}",
            )
            continue
        verdict.expect(
            np.allclose(got, np.sin(x) * 2, atol=1e-5),
            f"the program compiled for {want} does not compute f: compile f "
            f"itself (the f given to compile_for).",
        )
    verdict.close(
        "a ShapeDtypeStruct is all that tracing needs: the program is made for a "
        "type, before any array of that type exists, and it takes every value of "
        "that type and no other."
    )


__all__ = ["check_aot_compiled_sum", "check_compile_for"]
