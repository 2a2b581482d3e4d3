"""Per-line cost: the compiled program's flops, transcendentals and bytes accessed by
source line, adding up to XLA's module totals (real compiles)."""

import jax
import numpy as np
import pytest
from jax import lax

import olympus
import olympus.numpy as jnp
from olympus.line_costs import KEYS, CostByLine, LineCost, cost_by_line, cost_by_line_text

with open(__file__) as _f:
    _SOURCE = _f.read().split("\n")


def line_of(marker: str) -> int:
    """The line of this file that ends with ``# marker``."""
    (found,) = [n + 1 for n, text in enumerate(_SOURCE) if text.endswith(f"# {marker}")]
    return found


def row(costs: CostByLine, marker: str) -> LineCost:
    (found,) = [r for r in costs.lines if r.file == __file__ and r.line == line_of(marker)]
    return found


def compiled(f, *args):
    return olympus.jit(f).trace(*args).lower().compile()


def f32(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


# -- programs ---------------------------------------------------------------


def matmul(a, b):
    return a @ b  # matmul


def chain(x):
    y = x * 2.0 + 1.0  # chain-1
    z = y * y - x  # chain-2
    return z / 3.0  # chain-3


def transcendental(x):
    y = jnp.tanh(x)  # tanh
    return jnp.exp(y) + 1.0  # exp


def mlp(params, x):
    for w, b in params:
        x = jnp.tanh(x @ w + b)  # mlp-layer
    return jnp.mean(x**2)  # mlp-loss


def attention(q, k, v):
    return jax.nn.softmax(q @ k.T, axis=-1) @ v  # attention


def scan(xs, w):
    def body(c, x):
        c = jnp.tanh(c @ w + x)  # scan-body
        return c, jnp.sum(c)

    return lax.scan(body, jnp.zeros(w.shape[0], w.dtype), xs)


def mlp_params(width=256, layers=4, batch=32):
    return [(f32(width, width), f32(width)) for _ in range(layers)], f32(batch, width)


PROGRAMS = {
    "mlp": lambda: compiled(mlp, *mlp_params()),
    "mlp-grad": lambda: compiled(jax.grad(mlp), *mlp_params(64, 3, 8)),
    "attention": lambda: compiled(attention, f32(128, 64), f32(128, 64), f32(128, 64)),
    "scan": lambda: compiled(scan, f32(10, 64), f32(64, 64)),
    "chain": lambda: compiled(chain, f32(16, 16)),
}


# -- tests --------------------------------------------------------------------


def test_a_matmul_costs_2mnk_flops_on_its_line():
    m, k, n = 32, 48, 24
    costs = cost_by_line(compiled(matmul, f32(m, k), f32(k, n)))
    mine = row(costs, "matmul")
    assert mine.flops == pytest.approx(2 * m * n * k, rel=1e-6)
    assert mine.instructions
    assert costs.lines[0] == mine  # biggest flops first
    assert costs.check() == ()


def test_an_elementwise_chain_fused_into_one_fusion_spreads_over_its_lines():
    c = compiled(chain, f32(16, 16))
    text = c.as_text()
    entry = text[text.index("ENTRY") :]
    assert entry.count(" fusion(") == 1  # XLA fused the chain into one fusion
    costs = cost_by_line(c)
    n = 16 * 16
    # x*2+1; y*y-x; /3 (one multiply or divide per element): 2, 2 and 1 flop each.
    assert row(costs, "chain-1").flops == pytest.approx(2 * n)
    assert row(costs, "chain-2").flops == pytest.approx(2 * n)
    assert row(costs, "chain-3").flops == pytest.approx(n)
    # The fusion's bytes (read x once, write z once) are spread over the lines too.
    assert all(row(costs, m).bytes_accessed > 0 for m in ("chain-1", "chain-2", "chain-3"))
    assert costs.check() == ()


def test_a_transcendental_counts_on_its_line():
    costs = cost_by_line(compiled(transcendental, f32(8, 32)))
    assert row(costs, "tanh").transcendentals == pytest.approx(8 * 32)
    assert row(costs, "exp").transcendentals == pytest.approx(8 * 32)
    assert row(costs, "tanh").flops == 0
    assert costs.check() == ()


@pytest.mark.parametrize("name", sorted(PROGRAMS))
def test_the_lines_add_up_to_xla_module_totals(name):
    c = PROGRAMS[name]()
    costs = cost_by_line(c)
    totals = c.cost_analysis()
    for key in KEYS:
        want = float(totals.get(key, 0.0))
        assert costs.totals.get(key, 0.0) == want
        # XLA counts a loop body once; the rows count it × its trip count, and
        # add up to XLA's totals plus what that adds (nothing without a loop).
        counted = costs.counted_totals.get(key, 0.0)
        assert costs.sums()[key] == pytest.approx(counted, rel=0.01, abs=1.0), key
        if name != "scan":
            assert counted == want and not costs.loops
    if name == "scan":
        assert costs.counted_totals["flops"] > 9 * costs.totals["flops"]
        assert "counts each loop body once" in (costs.loops_note() or "")
    assert costs.check() == ()
    # Rows: user lines first (biggest flops first), the compiler-made row last.
    user = [r for r in costs.lines if not r.compiler_made]
    assert [r.flops for r in user] == sorted((r.flops for r in user), reverse=True)
    assert all(not r.compiler_made for r in costs.lines[:-1])
    assert all(any(r.get(k) for k in KEYS) for r in costs.lines)
    assert all(r.instructions for r in costs.lines)


def test_the_heavy_lines_of_each_program_are_its_own():
    costs = cost_by_line(PROGRAMS["mlp"]())
    layer = row(costs, "mlp-layer")
    assert layer.flops >= 4 * 2 * 32 * 256 * 256
    assert layer.transcendentals == 4 * 32 * 256
    costs = cost_by_line(PROGRAMS["attention"]())
    assert row(costs, "attention").flops >= 2 * (2 * 128 * 128 * 64)
    assert row(costs, "attention").transcendentals >= 128 * 128
    costs = cost_by_line(PROGRAMS["scan"]())
    body = row(costs, "scan-body")
    # The body's matmul (its dot, which XLA leaves without metadata on the CPU) and
    # tanh are on the body's line, × the 10 iterations.
    assert body.flops >= 10 * 2 * 64 * 64 and body.flops >= 0.95 * costs.counted_totals["flops"]
    assert body.transcendentals == costs.counted_totals["transcendentals"] == 10 * 64
    assert body.loop_note == "× 10 iterations"


def test_what_has_no_user_line_is_the_compiler_made_row_never_dropped():
    text = """HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %sine = f32[4]{0} sine(%x), metadata={op_name="jit(f)/sin" source_file="m.py" source_line=3}
  ROOT %copy = f32[4]{0} copy(%sine)
}
"""
    client = jax.extend.backend.get_backend("cpu")
    from olympus import jax_compat

    costs = cost_by_line_text(text, jax_compat.hlo_text_cost_analyzer(client))
    assert [(r.file, r.line) for r in costs.lines] == [("m.py", 3), (None, None)]
    made = costs.compiler_made
    assert made is costs.lines[-1] and made.instructions == ("copy",)
    assert made.bytes_accessed == 2 * 4 * 4  # read and written
    assert costs.lines[0].transcendentals == 4
    assert costs.check() == ()


def test_an_instruction_xla_cannot_cost_alone_is_in_the_notes_with_the_reason():
    text = """HloModule m

ENTRY %main (x: f32[4]) -> f32[4] {
  %x = f32[4]{0} parameter(0)
  %sine = f32[4]{0} sine(%x), metadata={op_name="jit(f)/sin" source_file="m.py" source_line=3}
  ROOT %copy = f32[4]{0} copy(%sine)
}
"""
    from olympus import jax_compat

    xla = jax_compat.hlo_text_cost_analyzer(jax.extend.backend.get_backend("cpu"))

    def analyse(module: str):
        if "sine(" in module and "copy(" not in module:  # the sine alone
            raise RuntimeError("UNIMPLEMENTED: no sine here\nthe rest of XLA's message")
        return xla(module)

    costs = cost_by_line_text(text, analyse)
    assert (
        "XLA's cost analysis failed on 1 instruction(s) alone (sine): "
        "RuntimeError: UNIMPLEMENTED: no sine here"
    ) in costs.notes
    assert any("1 instruction(s) XLA could not cost alone (sine)" in n for n in costs.notes)


def test_check_says_what_does_not_add_up():
    r = LineCost("m.py", 1, 10.0, 0.0, 8.0, ("add",))
    costs = CostByLine((r,), {"flops": 20.0, "transcendentals": 0.0, "bytes accessed": 8.0})
    (problem,) = costs.check()
    assert problem.startswith("flops")


def test_a_jax_compiled_works_too():
    c = jax.jit(matmul).trace(f32(4, 8), f32(8, 2)).lower().compile()
    assert cost_by_line(c).lines[0].flops == 2 * 4 * 8 * 2
