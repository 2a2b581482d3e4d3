"""Loops counted: a ``while`` body's (a ``scan``'s, a ``fori_loop``'s) costs × its
trip count where XLA knows it, nested loops multiplying; per iteration, and said
so, where it does not. XLA's ``cost_analysis()`` counts each body once, so the
rows then add up to ``counted_totals`` and ``loops_note()`` says why."""

import jax
import numpy as np
import pytest
from jax import lax

import olympus.numpy as jnp
from olympus.line_costs import KEYS, CostByLine, Iterations, Loop, LineCost, cost_by_line

with open(__file__) as _f:
    _SOURCE = _f.read().split("\n")

STEPS, WIDTH = 8, 32


def line_of(marker: str) -> int:
    """The line of this file that ends with ``# marker``."""
    (found,) = [n + 1 for n, text in enumerate(_SOURCE) if text.endswith(f"# {marker}")]
    return found


def row(costs: CostByLine, marker: str) -> LineCost:
    (found,) = [r for r in costs.lines if r.file == __file__ and r.line == line_of(marker)]
    return found


def costs_of(f, *args) -> CostByLine:
    return cost_by_line(jax.jit(f).trace(*args).lower().compile())


def f32(*shape):
    return np.random.default_rng(0).standard_normal(shape).astype(np.float32)


def scanned(x, ws):
    def body(c, w):
        return jnp.tanh(c @ w), None  # scan-body

    return lax.scan(body, x, ws)[0]


def unrolled(x, ws):
    for k in range(ws.shape[0]):
        x = jnp.tanh(x @ ws[k])  # unrolled-body
    return x


def fori(x, w):
    return lax.fori_loop(0, STEPS, lambda k, c: jnp.tanh(c @ w), x)  # fori-body


def nested(x, ws):
    def body(c, w):
        return lax.fori_loop(0, 3, lambda k, c: jnp.tanh(c @ w), c), None  # inner-body

    return lax.scan(body, x, ws)[0]


def unknown(x, n):
    def body(carry):
        c, k = carry
        return jnp.tanh(c @ c), k + 1  # while-body

    return lax.while_loop(lambda carry: carry[1] < n, body, (x, 0))[0]  # while-loop


def one_matmul_flops(m=WIDTH):
    return 2 * m * m * m


def test_a_scan_counts_its_body_times_its_trip_count_as_the_unrolled_program_does():
    x, ws = f32(WIDTH, WIDTH), f32(STEPS, WIDTH, WIDTH)
    looped, flat = costs_of(scanned, x, ws), costs_of(unrolled, x, ws)
    body = row(looped, "scan-body")
    assert body.flops == pytest.approx(STEPS * one_matmul_flops(), rel=0.01)
    assert body.transcendentals == STEPS * WIDTH * WIDTH
    assert body.loop_note == "× 8 iterations"
    assert body.iterations == (Iterations(STEPS),)
    # XLA's own totals count the body once; the counted ones as the unrolled program.
    assert looped.totals["flops"] < 2 * one_matmul_flops()
    for key in ("flops", "transcendentals"):
        assert looped.counted_totals[key] == pytest.approx(flat.totals[key], rel=0.1), key
        assert looped.sums()[key] == pytest.approx(looped.counted_totals[key], rel=1e-6)
    assert looped.check() == ()
    assert [loop.trips for loop in looped.loops] == [STEPS]
    note = looped.loops_note()
    assert note is not None and "counts each loop body once" in note and "8 iterations" in note
    assert looped.loop_extra["flops"] == pytest.approx(
        looped.counted_totals["flops"] - looped.totals["flops"]
    )
    # The unrolled program has no loop: nothing to say, XLA's totals are the rows'.
    assert flat.loops == () and flat.loops_note() is None and flat.loop_extra == {}
    assert row(flat, "unrolled-body").loop_note == ""


def test_a_fori_loop_counts_its_body_times_its_trip_count():
    costs = costs_of(fori, f32(WIDTH, WIDTH), f32(WIDTH, WIDTH))
    body = row(costs, "fori-body")
    assert body.flops == pytest.approx(STEPS * one_matmul_flops(), rel=0.01)
    assert body.loop_note == "× 8 iterations"
    assert costs.check() == ()


def test_nested_loops_multiply():
    costs = costs_of(nested, f32(WIDTH, WIDTH), f32(STEPS, WIDTH, WIDTH))
    inner = row(costs, "inner-body")
    assert inner.flops == pytest.approx(3 * STEPS * one_matmul_flops(), rel=0.01)
    assert inner.loop_note == "× 24 iterations"
    assert len(costs.loops) == 2 and {loop.trips for loop in costs.loops} == {3, STEPS}
    (within,) = [loop for loop in costs.loops if loop.trips == 3]
    assert within.around == Iterations(STEPS)
    assert costs.counted_totals["flops"] == pytest.approx(costs.sums()["flops"], rel=1e-6)
    assert costs.check() == ()


def test_a_loop_of_unknown_trip_count_is_counted_per_iteration_and_says_so():
    costs = costs_of(unknown, f32(WIDTH, WIDTH), 5)
    body = costs.lines[0]
    # JAX 0.9 gives the body's instructions the while_loop's line; later, the body's.
    assert body.line in (line_of("while-body"), line_of("while-loop"))
    assert body.flops == pytest.approx(one_matmul_flops(), rel=0.01)  # one iteration's
    assert body.loop_note == "per iteration (trip count unknown)"
    assert [loop.trips for loop in costs.loops] == [None]
    assert costs.loop_extra == {}
    assert costs.counted_totals == pytest.approx(costs.totals)
    note = costs.loops_note()
    assert note is not None and "per iteration" in note
    assert costs.check() == ()


def test_check_names_what_loops_add_when_the_rows_do_not_add_up():
    r = LineCost("m.py", 1, 10.0, 0.0, 8.0, ("add",), iterations=(Iterations(8),))
    costs = CostByLine(
        (r,),
        {"flops": 2.0, "transcendentals": 0.0, "bytes accessed": 8.0},
        loops=(Loop("while.1", 8),),
        loop_extra={"flops": 14.0},
    )
    (problem,) = costs.check()
    assert (
        problem
        == "flops: lines sum to 10, XLA's total is 2 + 14 counting loops × their trip counts"
    )
    assert {k: costs.counted_totals[k] for k in KEYS} == {
        "flops": 16.0,
        "transcendentals": 0.0,
        "bytes accessed": 8.0,
    }


def test_a_row_with_instructions_in_and_out_of_loops_says_both():
    r = LineCost("m.py", 1, 10.0, 0.0, 8.0, ("add",), iterations=(Iterations(), Iterations(8)))
    assert r.loop_note == "once + × 8 iterations"


# -- flax nnx.scan over layers ------------------------------------------------------

LAYERS, FEATURES, BATCH = 8, 64, 16


def test_an_nnx_scan_over_mlp_layers_counts_as_the_unrolled_model():
    pytest.importorskip("flax")
    from flax import nnx

    class Block(nnx.Module):
        def __init__(self, rngs):
            self.linear = nnx.Linear(FEATURES, FEATURES, rngs=rngs)

        def __call__(self, x):
            return nnx.gelu(self.linear(x))

    @nnx.split_rngs(splits=LAYERS)
    @nnx.vmap(in_axes=(0,), out_axes=0)
    def stacked(rngs):
        return Block(rngs)

    @nnx.scan(in_axes=(nnx.Carry, 0), out_axes=nnx.Carry)
    def through(x, block):
        return block(x)

    scanned_model = stacked(nnx.Rngs(0))
    layers = [Block(nnx.Rngs(k)) for k in range(LAYERS)]
    x = f32(BATCH, FEATURES)

    graph, state = nnx.split(scanned_model)

    def scan_forward(state, x):
        return through(x, nnx.merge(graph, state))

    graphs, states = zip(*(nnx.split(layer) for layer in layers))

    def unrolled_forward(states, x):
        for g, s in zip(graphs, states):
            x = nnx.merge(g, s)(x)
        return x

    looped = costs_of(scan_forward, state, x)
    flat = costs_of(unrolled_forward, list(states), x)
    assert [loop.trips for loop in looped.loops] == [LAYERS]
    # XLA's totals say one layer; counted, the scan costs what the 8 layers do.
    assert looped.totals["flops"] < 0.2 * flat.totals["flops"]
    assert looped.counted_totals["flops"] == pytest.approx(flat.totals["flops"], rel=0.1)
    assert looped.sums()["flops"] == pytest.approx(looped.counted_totals["flops"], rel=1e-6)
    assert looped.check() == ()
    heaviest = looped.lines[0]
    assert heaviest.loop_note == f"× {LAYERS} iterations"
    assert heaviest.flops >= LAYERS * 2 * BATCH * FEATURES * FEATURES


def test_a_backend_that_cannot_cost_alone_scales_the_counted_loops_too():
    # The CPU's counts (here: a loop body of 10 flops × 8) in a backend's units,
    # whose total for the same module is twice the CPU's.
    from olympus.line_costs import _scaled

    cpu = CostByLine(
        (LineCost("m.py", 1, 80.0, 0.0, 8.0, ("dot",), iterations=(Iterations(8),)),),
        {"flops": 10.0, "transcendentals": 0.0, "bytes accessed": 8.0},
        loops=(Loop("while.1", 8),),
        loop_extra={"flops": 70.0},
    )
    backend = _scaled(cpu, {"flops": 20.0, "transcendentals": 0.0, "bytes accessed": 8.0}, ())
    assert backend.totals["flops"] == 20.0
    assert backend.lines[0].flops == 160.0 and backend.loop_extra == {"flops": 140.0}
    assert backend.lines[0].iterations == (Iterations(8),) and backend.loops == cpu.loops
    assert backend.check() == ()
