"""notebooks/01_stages.ipynb: the four stages; compiling ahead of time, for a type."""

import jax

import olympus
import olympus.numpy as jnp
from notebook_outputs import MEDIA, bundles, report_of, text


def shows(nb, code):
    reports = [report_of(c) for c in code if bundles(c)]
    assert len(reports) == 4
    first = reports[0]
    assert first[MEDIA]["schema"] == "olympus.stages"
    assert first[MEDIA]["provenance"]["function"]["name"] == "f"
    assert "Source &#183; f" in first["text/html"] and "Olympus report: f" in first["text/plain"]
    static, tpu = reports[1][MEDIA], reports[2][MEDIA]
    assert "dense<14>" in static["provenance"]["stages"]["stablehlo"]["text"]
    assert tpu["platforms"] == ["tpu"] and "lowered for tpu" in tpu["unavailable"]["compiled"]
    outputs = "".join(text(c) for c in code)
    assert "Array(10, dtype=int32, weak_type=True)" in outputs
    assert "Argument 'x' compiled with int32[] and called with int32[3]" in outputs


#: Per exercise: a wrong body for its solution region, and what its check must say.
WRONG = {
    "aot_compiled_sum": (
        "return jnp.sum(x) + 1",
        "aot_compiled_sum(jnp.ones(4)) returned 5.0, but the sum of its elements is 4.0",
    ),
    "compile_for": (
        "return olympus.jit(f).trace(olympus.ShapeDtypeStruct(shape, dtype)).lower()",
        "returned a lowered program: one more stage, compile it",
    ),
}

#: Other correct answers its checks accept.
RIGHT = [
    ("check_aot_compiled_sum", lambda x: olympus.jit(jnp.sum).lower(x).compile()(x)),
    (
        "check_compile_for",
        lambda f, shape, dtype: olympus.jit(f).lower(jax.ShapeDtypeStruct(shape, dtype)).compile(),
    ),
]

#: Other wrong answers, and what its checks say of them.
WRONG_ANSWERS = [
    ("check_aot_compiled_sum", lambda x: "4", "not a number"),
    ("check_compile_for", lambda f, shape, dtype: olympus.jit(f), "not compiled yet"),
    (
        "check_compile_for",
        lambda f, shape, dtype: (
            olympus.jit(f).lower(jax.ShapeDtypeStruct(shape[::-1], dtype)).compile()
        ),
        "expected float32[2, 3]",
    ),
]
