"""The checks of lesson 02_specializations."""

from __future__ import annotations

import numpy as np

import olympus.numpy as jnp
from olympus.stages import Wrapped
from olympus_jupyter.staging.specialization import Specialization, explain
from olympus_jupyter.teaching.checks import Verdict, attempt, first_line
from olympus_jupyter.teaching.exercises._programs import number


# -- 02_specializations ---------------------------------------------------------------


def _reference_normalize(x, eps, axis):
    return x / (np.linalg.norm(x, axis=axis, keepdims=True) + eps)


def normalize(x, eps, axis):
    """Lesson 02's ``normalize``: the check's own, whatever the notebook made of its copy."""
    return x / (jnp.linalg.norm(x, axis=axis, keepdims=True) + eps)


def scale(x, s):
    """Lesson 02's ``scale``."""
    return x * s


def check_jit_normalize(jit_normalize) -> None:
    """Lesson 02, exercise 1: ``normalize`` compiles once for every ``eps``."""
    jitted = attempt(jit_normalize, normalize, name="jit_normalize")
    verdict = Verdict()
    if not isinstance(jitted, Wrapped):
        verdict.stop(
            f"jit_normalize returned {type(jitted).__name__}, not olympus.jit(...) "
            f"of normalize: return normalize wrapped with olympus.jit, with the "
            f"options that make it compile once for every eps."
        )
    x = np.arange(1.0, 13.0, dtype=np.float32).reshape(3, 4)
    for eps, axis in ((1e-6, 1), (1e-3, 0)):
        try:
            got = np.asarray(jitted(x, eps, axis))
        except Exception as e:  # noqa: BLE001 - the error is the feedback
            verdict.stop(
                f"calling it with eps={eps}, axis={axis} failed: {type(e).__name__}: "
                f"{first_line(e)}\njnp.linalg.norm needs its axis as a Python int when it "
                f"is traced: what must stay static?"
            )
        verdict.expect(
            np.allclose(got, _reference_normalize(x, eps, axis), rtol=1e-5),
            f"with eps={eps}, axis={axis} it does not compute normalize: jit normalize itself.",
        )
    options = jitted.options
    argnums = options.get("static_argnums")
    argnums = () if argnums is None else (argnums,) if isinstance(argnums, int) else argnums
    argnames = options.get("static_argnames")
    argnames = () if argnames is None else (argnames,) if isinstance(argnames, str) else argnames

    def specialization(*args):
        return Specialization.of(normalize, args, static_argnums=argnums, static_argnames=argnames)

    reasons = explain(specialization(x, 1e-6, 1), specialization(x, 1e-5, 1))
    verdict.expect(
        not reasons,
        "called with eps=1e-06, then eps=1e-05, it compiles again, because "
        + "; ".join(reasons)
        + ". A static argument's value is part of the "
        "program: make only what must be static static.",
    )
    verdict.close(
        "eps is an ordinary argument, so a new value is only new data for the "
        "same program; axis stays static, because the program's shape depends on "
        "it (each axis is a program of its own, and that is right)."
    )


def check_as_scale(as_scale) -> None:
    """Lesson 02, exercise 2: one specialization for every form of a scale factor."""
    x = np.ones(3, np.float32)
    forms = (
        ("2.0", 2.0),
        ("3", 3),
        ("np.float32(0.5)", np.float32(0.5)),
        ("np.float64(1.5)", np.float64(1.5)),
        ("jnp.float32(4.0)", jnp.float32(4.0)),
    )
    verdict = Verdict()
    made = []
    for label, s in forms:
        arg = attempt(as_scale, s, name="as_scale")
        value = number(arg)
        if value is None:
            verdict.stop(f"as_scale({label}) returned {arg!r}, not a number.")
        verdict.expect(
            value == float(s),
            f"as_scale({label}) is {value}: its value must not change, only its form.",
        )
        made.append((label, arg))
    first_label, first_arg = made[0]
    first = Specialization.of(scale, (x, first_arg))
    for label, arg in made[1:]:
        reasons = explain(first, Specialization.of(scale, (x, arg)))
        verdict.expect(
            not reasons,
            f"scale(x, as_scale({first_label})) and scale(x, as_scale({label})) "
            f"are two programs: " + "; ".join(reasons) + ".",
        )
    verdict.close(
        "every form of the scale now traces alike (the same dtype, and weak or "
        "strong for all), so scale compiles once. Mixing Python scalars with NumPy "
        "or JAX scalars is a common cause of surprise recompiles."
    )


__all__ = ["check_jit_normalize", "check_as_scale"]
