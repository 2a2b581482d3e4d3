"""The checks of lesson 08_export: artifacts that serve every batch size, and every platform.

Each check reads the student's artifact with Olympus itself: it deserializes the
bytes (or takes the ``Exported``), reads its ``in_avals`` and ``platforms``, and
calls it on arrays of its own.

>>> import olympus, numpy as np
>>> def any_batch(fun, w, b):
...     x = olympus.ShapeDtypeStruct(olympus.export.symbolic_shape("n, 4"), np.float32)
...     return olympus.export.export(olympus.jit(fun))(w, b, x).serialize()
>>> check_any_batch(any_batch)  # doctest: +ELLIPSIS
Correct: one artifact, in_avals (f32[4,3], f32[3], f32[n,4]): ...
"""

from __future__ import annotations

import numpy as np

import olympus
import olympus.numpy as jnp
from olympus import jax_compat
from olympus.export import DeserializationError, Exported, deserialize, is_symbolic_dim
from olympus_jupyter.teaching.checks import Verdict, attempt, first_line

__all__ = ["check_any_batch", "check_cpu_and_tpu"]


# -- the lesson's programs (the checks' own, whatever the notebook made of its copies) --------


def predict(w, b, x):
    """Lesson 08's ``predict``: one dense layer."""
    return jnp.tanh(x @ w + b)


def per_platform(x):
    """A program whose code differs by platform, so that a call shows which code ran."""
    return olympus.lax.platform_dependent(
        x, cpu=lambda x: 3 * x + 1, tpu=lambda x: x - 1, default=lambda x: x * 10
    )


def _short(aval) -> str:
    try:
        return jax_compat.aval_short_text(aval)
    except Exception:  # noqa: BLE001 - an aval kind without str_short
        return str(aval)


def _avals(exported: Exported) -> str:
    return "(" + ", ".join(_short(a) for a in exported.in_avals) + ")"


def _artifact(answer, name: str, verdict: Verdict, hint: str) -> Exported:
    """The student's artifact as an ``Exported``: bytes are deserialized (as a server
    would), an ``Exported`` goes through bytes too, so that it is known to survive them."""
    if isinstance(answer, Exported):
        try:
            answer = answer.serialize()
        except Exception as e:  # noqa: BLE001 - the error is the feedback
            verdict.stop(
                f"serializing what {name} returned failed: {type(e).__name__}: {first_line(e)}"
            )
    if not isinstance(answer, (bytes, bytearray)):
        verdict.stop(
            f"{name} returned {type(answer).__name__}, not an artifact: "
            f"olympus.export.export(olympus.jit(fun))(*args) makes one (an "
            f"Exported), and its .serialize() the bytes a server loads. {hint}"
        )
    try:
        return deserialize(bytes(answer), trusted=True)
    except DeserializationError as e:
        verdict.stop(
            f"the bytes {name} returned are not an artifact olympus.export."
            f"deserialize reads: {first_line(e)}"
        )


def _on_cpu(*arrays):
    """``arrays`` on this machine's CPU (there is always one, beside any accelerator)."""
    cpu = olympus.devices("cpu")[0]
    return tuple(olympus.device_put(a, cpu) for a in arrays)


def check_any_batch(any_batch) -> None:
    """Lesson 08, exercise 1: one artifact of ``predict`` for every batch size.

    ``any_batch(fun, w, b)`` returns the artifact (bytes or an ``Exported``) of
    ``fun(w, b, x)`` that takes ``x`` of shape ``(batch, 4)`` for every ``batch``; the
    check deserializes it, reads its ``in_avals`` and calls it on several batches.
    """
    rng = np.random.default_rng(8)
    w = rng.standard_normal((4, 3)).astype(np.float32)
    b = rng.standard_normal(3).astype(np.float32)
    hint = "Return the artifact's bytes."
    answer = attempt(any_batch, predict, w, b, name="any_batch")
    verdict = Verdict()
    exported = _artifact(answer, "any_batch", verdict, hint)
    avals = exported.in_avals
    if len(avals) != 3:
        verdict.stop(
            f"the artifact takes {len(avals)} array{'s' * (len(avals) != 1)}, "
            f"{_avals(exported)}, but the "
            f"server calls it as artifact.call(w, b, x): export fun itself, for "
            f"w, b and a batch of x."
        )
    x_aval = avals[2]
    if len(x_aval.shape) != 2:
        verdict.stop(f"its x is {_short(x_aval)}, but a batch of x has two dimensions, (batch, 4).")
    batch = x_aval.shape[0]
    if not is_symbolic_dim(batch):
        verdict.stop(
            f"the artifact's in_avals are {_avals(exported)}: its batch dimension is the "
            f"constant {batch}, so it serves only batches of {batch} (any other size is "
            f"refused when called). A dimension given by olympus.export.symbolic_shape, "
            f"e.g. symbolic_shape('b, 4'), stays symbolic: its size is taken from each "
            f"call's arguments."
        )
    for size in (1, 3, 64):
        x = rng.standard_normal((size, 4)).astype(np.float32)
        try:
            got = np.asarray(exported.call(w, b, x))
        except Exception as e:  # noqa: BLE001 - the error is the feedback
            verdict.stop(
                f"calling it with a batch of {size}, x of shape ({size}, 4), "
                f"failed: {type(e).__name__}: {first_line(e)}"
            )
        want = np.tanh(x @ w + b)
        if got.shape != want.shape or not np.allclose(got, want, atol=1e-5):
            shapes = (
                ""
                if got.shape == want.shape
                else (f", a result of shape {got.shape}, not {want.shape}")
            )
            verdict.stop(
                f"called with a batch of {size}, it does not compute "
                f"fun(w, b, x){shapes}: export fun itself, unchanged."
            )
    verdict.close(
        f"one artifact, in_avals {_avals(exported)}: the batch dimension {batch} is "
        f"symbolic, so the calls with batches of 1, 3 and 64 each took its size from x. "
        f"The program checks the shapes it is called with (a shape assertion in its "
        f"StableHLO), and XLA compiles it for each concrete size when it is called."
    )


def check_cpu_and_tpu(cpu_and_tpu) -> None:
    """Lesson 08, exercise 2: one artifact for CPU and TPU machines.

    ``cpu_and_tpu(fun, *args)`` returns the ``Exported`` (or its bytes) of
    ``olympus.jit(fun)`` for ``args``, lowered for both ``'cpu'`` and ``'tpu'`` (in any
    order; more platforms too). The check reads its ``platforms`` and calls it on this
    machine's CPU, with a program whose code differs by platform.
    """
    x = np.arange(4, dtype=np.float32)
    answer = attempt(cpu_and_tpu, per_platform, x, name="cpu_and_tpu")
    verdict = Verdict()
    exported = _artifact(answer, "cpu_and_tpu", verdict, "")
    platforms = exported.platforms
    missing = [p for p in ("cpu", "tpu") if p not in platforms]
    verdict.expect(
        not missing,
        f"its platforms are {platforms!r}: no code for "
        f"{' or '.join(repr(p) for p in missing)}, so a "
        f"{' or '.join(p.upper() for p in missing)} machine cannot call it. "
        f"export(..., platforms=...) names every platform the artifact serves.",
    )
    if len(exported.in_avals) != 1 or exported.in_avals[0].shape != x.shape:
        verdict.stop(
            f"its in_avals are {_avals(exported)}: export fun for the arguments "
            f"given, here one f32[4]."
        )
    if "cpu" in platforms:
        try:
            (here,) = _on_cpu(x)
            got = np.asarray(exported.call(here))
        except Exception as e:  # noqa: BLE001 - the error is the feedback
            verdict.stop(
                f"calling it on this machine's CPU failed: {type(e).__name__}: {first_line(e)}"
            )
        verdict.expect(
            np.array_equal(got, 3 * x + 1),
            f"called on this machine's CPU it returned {got.tolist()}, not "
            f"{(3 * x + 1).tolist()}, what the CPU code of fun computes: "
            f"export fun itself.",
        )
    verdict.close(
        f"its platforms are {platforms!r}: one artifact holds each platform's code (a "
        f"stablehlo.case on the platform's index) and, called here, ran the CPU's code; on "
        f"a TPU it runs the TPU's. Lowering for a TPU needs no TPU, only its compiler "
        f"needs one."
    )
