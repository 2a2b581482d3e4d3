"""Costs, buffers, journeys and links go to the user's own lines, with the library
lines beneath them as detail (issue 33): a library here is a module loaded from a
``site-packages`` folder made for the test, and flax, equinox and optax as users
call them."""

from __future__ import annotations

import importlib.util
import os
import sys
import textwrap

import jax
import jax.numpy as jnp
import pytest

import olympus

from olympus.line_costs import cost_by_line
from olympus.provenance import build
from olympus.provenance.focus import Focus, focus_of
from olympus_jupyter import inspect
from olympus_jupyter.report.option_table import OptionError

LIBRARY = """
import jax.numpy as jnp


def dense(w, x):
    y = x @ w
    return jnp.tanh(y)
"""


@pytest.fixture
def fakelib(tmp_path):
    """A module of an installed package, loaded from a site-packages folder, and
    a user's module calling it; nothing is left in ``sys.modules`` after."""
    lib_dir = tmp_path / "venv" / "lib" / "site-packages" / "fakelib"
    lib_dir.mkdir(parents=True)
    (lib_dir / "__init__.py").write_text(LIBRARY)
    user = tmp_path / "project" / "model.py"
    user.parent.mkdir()
    user.write_text(
        textwrap.dedent(
            """
            import fakelib


            def step(w1, w2, x):
                h = fakelib.dense(w1, x)
                out = fakelib.dense(w2, h)
                return (out * 2.0).sum()
            """
        )
    )
    loaded = {}
    for name, path in (("fakelib", lib_dir / "__init__.py"), ("olympus_test_model", user)):
        spec = importlib.util.spec_from_file_location(name, path)
        module = importlib.util.module_from_spec(spec)
        sys.modules[name] = module
        spec.loader.exec_module(module)
        loaded[name] = module
    try:
        yield loaded["olympus_test_model"], str(user), str(lib_dir / "__init__.py")
    finally:
        for name in loaded:
            sys.modules.pop(name, None)


def _args():
    return jnp.ones((16, 32)), jnp.ones((32, 8)), jnp.ones((4, 16))


def _lines(rows, path):
    return {r["line"] for r in rows if r["file"] == path}


def test_focus_rules():
    assert Focus().owns("/home/me/model.py")
    assert not Focus().owns(os.__file__)
    assert not Focus().owns("/opt/venv/lib/python3.11/site-packages/flax/linear.py")
    only = focus_of(["/home/me/lib"])
    assert only.owns("/home/me/lib/x.py") and not only.owns("/home/me/model.py")
    assert focus_of("json").owns(sys.modules["json"].__file__)
    with pytest.raises(ValueError, match="neither a folder"):
        focus_of("no_such_module_for_olympus")


def test_costs_land_on_the_user_lines_with_the_library_beneath(fakelib):
    model, user, lib = fakelib
    compiled = jax.jit(model.step).trace(*_args()).lower().compile()
    costs = cost_by_line(compiled)
    assert costs.check() == ()
    own = {r.line: r for r in costs.lines if r.file == user}
    assert set(own) >= {6, 7}, costs.lines  # the two calls of fakelib.dense
    assert not [r for r in costs.lines if r.file == lib]
    # The matmul of each call is listed beneath it, on the library's line.
    for line in (6, 7):
        via = {(c.file, c.line) for c in own[line].library}
        assert (lib, 6) in via, own[line].library
        assert sum(c.flops for c in own[line].library) <= own[line].flops + 1e-6
    # The library's own line holds them all when asked for the innermost frames.
    inner = cost_by_line(compiled, frames="innermost")
    assert inner.check() == ()
    lib_rows = {r.line: r.flops for r in inner.lines if r.file == lib}
    assert lib_rows[6] == pytest.approx(own[6].library[0].flops + own[7].library[0].flops)
    with pytest.raises(ValueError, match="frames="):
        cost_by_line(compiled, frames="outer")


def test_the_model_links_and_reports_charge_the_user_lines(fakelib):
    model, user, lib = fakelib
    prov = build(olympus.jit(model.step).trace(*_args()).lower().compile())
    lib_file = prov.file_index(lib)
    assert prov.files[lib_file].library and not prov.files[prov.file_index(user)].library
    assert not [e for e in prov.lines if e.file == lib_file]
    assert prov.ops_for_line(user, 6)["compiled"]
    assert prov.ops_for_line(lib, 6, callers=True)["compiled"]  # reachable as a caller
    some = prov.ops_for_line(user, 6)["olympuspr"][0]
    assert prov.linked_ops(some) == prov.ops_for_line(user, 6)
    assert prov.lines_for_op(some)[0] == (lib, 6)
    assert prov.lines_for_op(some, frames="user")[0] == (user, 6)

    report = inspect(jax.jit(model.step), *_args(), costs=True, passes=True, cache=False)
    assert report.ok, report.failure
    rows = report.cost_by_line()
    assert {6, 7} <= _lines(rows, user) and not _lines(rows, lib)
    row6 = next(r for r in rows if r["file"] == user and r["line"] == 6)
    assert row6["via"] and row6["via"][0]["file"] == lib and row6["via"][0]["line"] == 6
    assert _lines(report.cost_by_line(frames="innermost"), lib)
    total = report.costs["totals"]["flops"]
    assert sum(r["flops"] for r in report.cost_by_line("innermost")) == pytest.approx(total)
    journey = report.journey(6, file=user)
    assert journey is not None and journey["start"]
    assert report.to_json()  # the bundle, with `via` and the files' flags, is valid

    mine = inspect(
        jax.jit(model.step), *_args(), costs=True, cache=False, focus=os.path.dirname(lib)
    )
    # The library is the focus: its lines are charged; the user's calls of it are not
    # (line 8, with no frame of the focus in its stack, keeps its innermost line).
    assert _lines(mine.cost_by_line(), lib) and not {6, 7} & _lines(mine.cost_by_line(), user)


def test_a_bad_focus_says_what_it_takes():
    with pytest.raises(OptionError, match="focus"):
        inspect(lambda x: x, 1.0, focus="no_such_module_for_olympus", cache=False)
    with pytest.raises(OptionError, match="focus"):
        inspect(lambda x: x, 1.0, focus=3, cache=False)


def test_flax_and_optax_costs_land_on_the_users_model():
    optax = pytest.importorskip("optax")
    nnx = pytest.importorskip("flax.nnx")

    class MLP(nnx.Module):
        def __init__(self, rngs):
            self.l1 = nnx.Linear(64, 128, rngs=rngs)
            self.l2 = nnx.Linear(128, 10, rngs=rngs)

        def __call__(self, x):
            return self.l2(nnx.relu(self.l1(x)))

    graphdef, params = nnx.split(MLP(nnx.Rngs(0)))
    tx = optax.adam(1e-3)

    def loss_fn(params, x, y):
        logits = nnx.merge(graphdef, params)(x)
        return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()

    def step(params, opt_state, x, y):
        loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    args = (params, tx.init(params), jnp.ones((32, 64)), jnp.zeros((32,), jnp.int32))
    report = inspect(jax.jit(step), *args, costs=True, cache=False)
    rows = report.cost_by_line()
    total = report.costs["totals"]["flops"]
    mine = sum(r["flops"] for r in rows if r["file"] == __file__)
    assert mine >= 0.9 * total, rows[:5]
    before = report.cost_by_line(frames="innermost")
    assert sum(r["flops"] for r in before if r["file"] == __file__) < 0.5 * total
