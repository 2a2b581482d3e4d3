"""notebooks/08_export.ipynb: export, serialization, versions, platforms, symbolic shapes."""

import jax
import numpy as np

import olympus
from notebook_outputs import MEDIA, bundles, report_of, text


def shows(nb, code):
    reports = [report_of(c) for c in code if bundles(c)]
    assert len(reports) == 2  # the artifact inspected, and predict lowered for cpu and tpu
    artifact, both = (data[MEDIA] for data in reports)
    assert artifact["name"] == "exported_predict" and artifact["failure"] is None
    assert "call_exported" in artifact["provenance"]["stages"]["olympuspr"]["text"]
    assert "tanh" in artifact["provenance"]["stages"]["stablehlo"]["text"]
    assert both["platforms"] == ["cpu", "tpu"] and both["failure"] is None
    outputs = "".join(text(c) for c in code)
    assert "bytes, starting with b'OLYMPUSX'" in outputs
    assert "the same result: True" in outputs
    version = olympus.export.maximum_supported_calling_convention_version
    assert "and this Olympus calls versions" in outputs and f" to {version}" in outputs
    assert "refused: The blob is corrupted" in outputs
    assert "platforms: ('tpu',)" in outputs
    if jax.default_backend() != "tpu":
        assert "Cannot call the export of 'predict' here" in outputs
    assert "expected (2, 4) and called with (3, 4)" in outputs  # a concrete batch refuses 3
    assert "float32[rows,classes]" in outputs and "uses global constants: True" in outputs
    assert "called with (64, 2): a result of shape (64, 2), rows summing to 1.0" in outputs
    assert "tensor<?x?xf32>" in outputs and "shape_assertion" in outputs
    assert "Rank mismatch" in outputs


#: Per exercise: a wrong body for its solution region, and what its check must say.
WRONG = {
    "any_batch": (
        "x = np.ones((8, 4), np.float32)\n"
        "return olympus.export.export(olympus.jit(fun))(w, b, x).serialize()",
        "its batch dimension is the constant 8, so it serves only batches of 8",
    ),
    "cpu_and_tpu": (
        'return olympus.export.export(olympus.jit(fun), platforms=("tpu",))(*args)',
        "no code for 'cpu', so a CPU machine cannot call it",
    ),
}


def _symbolic_args(fun, w, b):  # an Exported, not bytes; the batch named n
    specs = olympus.export.symbolic_args_specs(
        (w, b, np.ones((1, 4), np.float32)), (None, None, "n, 4")
    )
    return olympus.export.export(olympus.jit(fun))(*specs)


def _closed_over(fun, w, b):  # the weights baked in: the server's call(w, b, x) fails
    x = olympus.ShapeDtypeStruct(olympus.export.symbolic_shape("b, 4"), np.float32)
    return olympus.export.export(olympus.jit(lambda x: fun(w, b, x)))(x).serialize()


#: Other correct answers its checks accept.
RIGHT = [
    ("check_any_batch", _symbolic_args),
    (
        "check_cpu_and_tpu",
        lambda fun, *args: olympus.export.export(olympus.jit(fun), platforms=("tpu", "cpu"))(
            *args
        ).serialize(),
    ),
]

#: Other wrong answers, and what its checks say of them.
WRONG_ANSWERS = [
    ("check_any_batch", lambda fun, w, b: olympus.jit(fun), "not an artifact"),
    ("check_any_batch", _closed_over, "the artifact takes 1 array"),
    (
        "check_any_batch",
        lambda fun, w, b: _symbolic_args(fun, w, b).serialize()[:100],
        "not an artifact olympus.export.deserialize reads: The blob is truncated",
    ),
    (
        "check_cpu_and_tpu",
        lambda fun, *args: olympus.export.export(olympus.jit(fun))(*args),
        "TPU machine cannot call it",
    ),
    (
        "check_cpu_and_tpu",
        lambda fun, *args: olympus.export.export(
            olympus.jit(lambda x: x + 1), platforms=("cpu", "tpu")
        )(*args),
        "what the CPU code of fun computes",
    ),
]
