"""notebooks/04_reading_stablehlo.ipynb: source locations, named scopes, argument and
result names, and the provenance model's way from an op to its line."""

import re

import jax

import olympus.numpy as jnp
from notebook_outputs import MEDIA, bundles, report_of, text


def shows(nb, code):
    reports = [report_of(c)[MEDIA] for c in code if bundles(c)]
    assert len(reports) == 3  # mlp with annotations, mlp without, the scoped block
    annotated, bare, block = reports
    for data in reports:
        assert data["failure"] is None
    assert annotated["debug_info"] and not bare["debug_info"]
    assert "stablehlo.dot_general" in annotated["provenance"]["stages"]["stablehlo"]["text"]
    # The scoped block: both names in the StableHLO's and the optimized program's ops.
    stages = block["provenance"]["stages"]
    for stage in ("stablehlo", "compiled"):
        names = stages[stage]["ops"]["name_stack"]["values"]
        assert any("/project/" in n for n in names) and any("/normalize/" in n for n in names)
    outputs = "".join(text(c) for c in code)
    assert "loc(#loc" in outputs and 'loc("x")' in outputs  # the raw debug info
    assert "'project'" in outputs and "'jit(block)/normalize/" in outputs  # per stage
    assert "loc(\"params['w']\")" in outputs and "result_info = \"result['loss']\"" in outputs
    # Each op's line, from the provenance model; the relu's ops (in a private function,
    # or inlined) have the line that called it.
    assert re.search(r"stablehlo.dot_general +line 1 of mlp: h = jnp.tanh\(x @ w1\)", outputs)
    assert re.search(r"stablehlo.dot_general +line 2 of mlp: y = h @ w2", outputs)
    assert re.search(r"stablehlo.maximum +line 3 of mlp: return jax.nn.relu", outputs)
    assert "stablehlo: ['stablehlo.dot_general']" in outputs


#: Per exercise: a wrong body for its solution region, and what its check must say.
WRONG = {
    "scoped_autoencoder": (
        'with jax.named_scope("encoder"):\n'
        "    h = jnp.tanh(x @ w1)\n"
        'with jax.named_scope("decoder"):\n'
        "    y = h @ w2\n"
        "return jax.nn.relu(y).sum()",
        "names no scope",
    ),
    "lines_of": (
        "model = report.provenance\n"
        "return sorted({op.lines[0] for op in model.stages['stablehlo'].ops "
        "if op.name == name})",
        "the lines where those ops are printed in the StableHLO text",
    ),
}


def _scoped_other_way(x, w1, w2):
    with jax.named_scope("encoder"):
        hidden = jnp.tanh(jnp.matmul(x, w1))
    with jax.named_scope("decoder"):
        out = jnp.maximum(jnp.dot(hidden, w2), 0.0)
        total = jnp.sum(out)
    return total  # returning a value makes no op: nothing outside the scopes


def _scoped_decorated(x, w1, w2):
    @jax.named_scope("encoder")
    def encode(x):
        return jnp.tanh(x @ w1)

    @jax.named_scope("decoder")
    def decode(h):
        return jax.nn.relu(h @ w2).sum()

    return decode(encode(x))


def _lines_from_table(report, name):
    model = report.provenance
    stage = model.stages["stablehlo"]
    return [
        entry.line
        for entry in model.lines
        if any(stage.ops[i].name == name for i in entry.ops.get("stablehlo", ()))
    ]


def _lines_from_frames(report, name):
    model = report.provenance
    out = []
    for op in model.stages["stablehlo"].ops:
        if op.name == name and op.location is not None:
            frame = model.frames[model.locations[op.location].frames[0]]
            if frame.line not in out:
                out.append(frame.line)
    return tuple(sorted(out))


#: Other correct answers its checks accept.
RIGHT = [
    ("check_scoped_autoencoder", _scoped_other_way),
    ("check_scoped_autoencoder", _scoped_decorated),
    ("check_lines_of", _lines_from_table),
    ("check_lines_of", _lines_from_frames),
]


def _nested(x, w1, w2):
    with jax.named_scope("encoder"):
        h = jnp.tanh(x @ w1)
        with jax.named_scope("decoder"):
            return jax.nn.relu(h @ w2).sum()


def _tanh_in_decoder(x, w1, w2):
    with jax.named_scope("encoder"):
        h = x @ w1
    with jax.named_scope("decoder"):
        return jax.nn.relu(jnp.tanh(h) @ w2).sum()


#: Other wrong answers, and what its checks say of them.
WRONG_ANSWERS = [
    ("check_scoped_autoencoder", _nested, "names both scopes"),
    ("check_scoped_autoencoder", _tanh_in_decoder, "it computes h (the hidden f32[2,5])"),
    (
        "check_scoped_autoencoder",
        lambda x, w1, w2: (jnp.tanh(x @ w1) @ w2).sum(),
        "the autoencoder gives",
    ),
    ("check_lines_of", lambda report, name: [report.provenance.function.first_line], "made none"),
    ("check_lines_of", lambda report, name: [2, 2], "with a line more than once"),
]
