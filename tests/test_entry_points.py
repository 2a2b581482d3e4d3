"""Every entry point a user has: ``inspect()``, the magic, the Inspector and the CLI
take plain, ``jax.jit``, ``flax.nnx.jit`` and ``equinox.filter_jit`` functions, and the
stage objects users hold (``Traced``, ``Lowered``, ``Compiled`` from JAX, Olympus,
flax ``nnx`` and equinox), showing each stage that can be made from what was given
and saying why the others cannot be."""

import contextlib
import io
import sys
import textwrap

import jax
import jax.numpy as jnp
import numpy as np
import pytest

import olympus
from olympus_jupyter import inspect
from olympus_jupyter.staging import StagingError

try:  # the test extra's; not Olympus's dependencies
    import equinox as eqx
    import optax  # type: ignore[import-untyped]
    from flax import nnx

    MISSING = None
except ImportError as e:
    MISSING = str(e)

#: Tests of flax and equinox objects; the others run without them.
needs_libraries = pytest.mark.skipif(
    MISSING is not None, reason=f"flax, equinox and optax (the test extra): {MISSING}"
)

PROGRAMS = ("olympuspr", "stablehlo", "hlo", "compiled")


def quietly(thunk):
    with contextlib.redirect_stdout(io.StringIO()):
        return thunk()


def made(report) -> set[str]:
    """The program stages the report shows (a text, or ops read from one)."""
    model = report.provenance
    shown = set(report.texts) | (set(model.stages) if model is not None else set())
    return shown & set(PROGRAMS)


def stage_text(report, name: str) -> str:
    model = report.provenance
    if model is not None and name in model.stages:
        return model.stages[name].text
    return report.texts[name]


# --- the programs: small models as their users write them ------------------------------


def nnx_parts():
    class Classifier(nnx.Module):
        def __init__(self, rngs):
            self.hidden = nnx.Linear(3, 8, rngs=rngs)
            self.out = nnx.Linear(8, 2, rngs=rngs)

        def __call__(self, x):
            return self.out(nnx.relu(self.hidden(x)))

    model = Classifier(nnx.Rngs(0))
    optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)

    @nnx.jit
    def train_step(model, optimizer, x, y):
        def loss_fn(model):
            return jnp.mean((model(x) - y) ** 2)

        loss, grads = nnx.value_and_grad(loss_fn)(model)
        optimizer.update(model, grads)
        return loss

    return train_step, (model, optimizer, jnp.ones((4, 3)), jnp.zeros((4, 2)))


def eqx_parts():
    model = eqx.nn.MLP(3, 2, 8, 2, key=jax.random.PRNGKey(0))
    optimizer = optax.adam(1e-3)
    opt_state = optimizer.init(eqx.filter(model, eqx.is_array))

    @eqx.filter_jit
    def train_step(model, opt_state, x, y):
        def loss_fn(model):
            return jnp.mean((jax.vmap(model)(x) - y) ** 2)

        loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
        # The optimizer (its functions) is an argument: equinox holds it static.
        updates, opt_state = optimizer.update(grads, opt_state, eqx.filter(model, eqx.is_array))
        return eqx.apply_updates(model, updates), opt_state, loss

    def with_optimizer(model, optimizer, opt_state, x, y):
        loss_fn = lambda m: jnp.mean((jax.vmap(m)(x) - y) ** 2)  # noqa: E731
        loss, grads = eqx.filter_value_and_grad(loss_fn)(model)
        updates, opt_state = optimizer.update(grads, opt_state, eqx.filter(model, eqx.is_array))
        return eqx.apply_updates(model, updates), opt_state, loss

    args = (model, opt_state, jnp.ones((4, 3)), jnp.zeros((4, 2)))
    return train_step, args, eqx.filter_jit(with_optimizer), (model, optimizer, *args[1:])


def double_sin(x):
    return jnp.sin(x) * 2


X = np.ones((2, 3), np.float32)


# --- functions ---------------------------------------------------------------------------


@pytest.mark.parametrize("wrap", [lambda f: f, jax.jit, olympus.jit], ids=["plain", "jax", "oly"])
def test_plain_and_jit_functions_show_every_stage(wrap):
    report = inspect(wrap(double_sin), X, cache=False)
    assert report.ok and report.name.endswith("double_sin"), report.failure
    assert made(report) == set(PROGRAMS)
    assert not report.unavailable


@needs_libraries
def test_an_nnx_jit_train_step_shows_every_stage_and_leaves_the_model_alone():
    train_step, args = nnx_parts()
    model = args[0]
    kernel = np.asarray(model.hidden.kernel[...]).copy()
    report = inspect(train_step, *args, cache=False, costs=True)
    assert report.ok, report.failure
    assert report.name == "train_step"
    assert made(report) == set(PROGRAMS)
    for name in PROGRAMS:
        assert stage_text(report, name).strip(), name
    assert "dot_general" in stage_text(report, "olympuspr")
    assert report.cost_by_line(), "the costs stage has rows"
    with pytest.raises(StagingError, match="already jit-wrapped"):  # nnx keeps its options
        inspect(train_step, *args, static_argnums=2)
    # Staging traces; it neither runs the step nor updates the model.
    np.testing.assert_array_equal(np.asarray(model.hidden.kernel[...]), kernel)


@needs_libraries
@pytest.mark.parametrize("wrapped", [False, True], ids=["plain nnx step", "nnx.jit step"])
def test_olympus_jit_over_an_nnx_step_does_what_jax_jit_does(wrapped):
    """The core's own ``olympus.jit`` takes an nnx train step (its body or its
    ``nnx.jit`` wrapper) through every stage, and the compiled step gives JAX's answer
    and leaves the model as ``jax.jit``'s does."""

    def run(jit):
        train_step, args = nnx_parts()
        fun = train_step if wrapped else train_step.__wrapped__
        compiled = jit(fun).trace(*args).lower().compile()
        loss = compiled(*args)
        return float(loss), np.asarray(args[0].hidden.kernel[...])

    ours, theirs = run(olympus.jit), run(jax.jit)
    assert ours[0] == pytest.approx(theirs[0], rel=1e-6)
    np.testing.assert_array_equal(ours[1], theirs[1])


@needs_libraries
def test_an_nnx_jit_method_bound_to_its_module():
    class Scaler(nnx.Module):
        def __init__(self):
            self.scale = nnx.Param(jnp.full((3,), 2.0))

        @nnx.jit
        def __call__(self, x):
            return x * self.scale

    report = inspect(Scaler().__call__, X, cache=False, stages="olympuspr")
    assert report.ok, report.failure
    # The module's parameter is an argument of the program, not a constant.
    assert "f32[3]" in stage_text(report, "olympuspr").split("let")[0]


@needs_libraries
def test_an_equinox_filter_jit_train_step_with_an_optax_optimizer():
    train_step, args, with_optimizer, optimizer_args = eqx_parts()
    for fun, fargs in ((train_step, args), (with_optimizer, optimizer_args)):
        report = inspect(fun, *fargs, cache=False, costs=True)
        assert report.ok, report.failure
        assert made(report) == set(PROGRAMS)
        for name in PROGRAMS:
            assert stage_text(report, name).strip(), name
        assert report.cost_by_line()
    # Only the arrays are the program's arguments: 6 weights and biases, the
    # optimizer's count and 2 x 6 moments, x and y.
    olympuspr = stage_text(report, "olympuspr")
    # The staged program's binder (JAX 0.9 prints the sub-programs it shares first,
    # as `let relu = { lambda ... } in`).
    lines = olympuspr.splitlines()
    start = next(k for k, line in enumerate(lines) if line.lstrip().startswith("{ lambda"))
    binder = "\n".join(lines[start:]).split(".")[0]
    assert binder.count(":") == 6 + 1 + 12 + 2, binder


@needs_libraries
def test_specs_stand_for_arrays_for_equinox_as_for_jax():
    @eqx.filter_jit
    def scaled(x, factor):
        return x * factor

    report = inspect(scaled, jax.ShapeDtypeStruct((5,), jnp.float32), 3, cache=False)
    assert report.ok, report.failure
    assert "f32[5]" in stage_text(report, "olympuspr")


# --- stage objects -----------------------------------------------------------------------


def _nnx_fwd():
    model = nnx.Linear(3, 4, rngs=nnx.Rngs(0))

    @nnx.jit
    def forward(model, x):
        return model(x)

    return forward, (model, X)


def _eqx_fwd():
    model = eqx.nn.MLP(3, 2, 8, 1, key=jax.random.PRNGKey(0))
    return eqx.filter_jit(lambda m, x: jax.vmap(m)(x)), (model, X)


def _stage(maker: str):
    """A stage object as users make it: ``'<library> <Kind>'``."""
    library, kind = maker.split()
    if library == "olympus":
        traced = olympus.jit(double_sin).trace(X)
        return {"Traced": traced, "Lowered": traced.lower(), "Compiled": traced.lower().compile()}[
            kind
        ]
    if library == "jax":
        jitted = jax.jit(double_sin)
        return {
            "Traced": jitted.trace(X),
            "Lowered": jitted.lower(X),
            "Compiled": jitted.lower(X).compile(),
        }[kind]
    if library == "nnx":
        fun, args = _nnx_fwd()
        return {
            "Traced": lambda: fun.trace(*args),
            "Lowered": lambda: fun.lower(*args),
            "Compiled": lambda: fun.lower(*args).compile(),
        }[kind]()
    fun, args = _eqx_fwd()  # equinox: lower() and its compile()
    return {"Lowered": lambda: fun.lower(*args), "Compiled": lambda: fun.lower(*args).compile()}[
        kind
    ]()


#: What a report of each stage object shows, and the stages it says it cannot.
STAGE_OBJECTS = [
    ("olympus Traced", set(PROGRAMS), set()),
    ("olympus Lowered", set(PROGRAMS), set()),  # it keeps its Traced
    ("olympus Compiled", set(PROGRAMS), set()),  # and its Lowered
    ("jax Traced", set(PROGRAMS), set()),
    ("jax Lowered", {"stablehlo", "hlo", "compiled"}, {"olympuspr"}),
    ("jax Compiled", {"compiled"}, {"olympuspr", "stablehlo", "hlo"}),
    pytest.param(*("nnx Traced", set(PROGRAMS), set()), marks=needs_libraries),
    pytest.param(
        *("nnx Lowered", {"stablehlo", "hlo", "compiled"}, {"olympuspr"}), marks=needs_libraries
    ),
    pytest.param(
        *("nnx Compiled", {"compiled"}, {"olympuspr", "stablehlo", "hlo"}), marks=needs_libraries
    ),
    pytest.param(
        *("eqx Lowered", {"stablehlo", "hlo", "compiled"}, {"olympuspr"}), marks=needs_libraries
    ),
    pytest.param(
        *("eqx Compiled", {"compiled"}, {"olympuspr", "stablehlo", "hlo"}), marks=needs_libraries
    ),
]


def _ids(rows) -> list[str]:
    return [(row.values if hasattr(row, "values") else row)[0] for row in rows]


@pytest.mark.parametrize("maker, shown, missing", STAGE_OBJECTS, ids=_ids(STAGE_OBJECTS))
def test_a_stage_object_shows_what_can_be_made_from_it_and_why_not_the_rest(maker, shown, missing):
    report = inspect(_stage(maker), cache=False)
    assert report.ok, report.failure
    assert made(report) == shown
    for name in shown:
        assert stage_text(report, name).strip(), name
    assert set(report.unavailable) & set(PROGRAMS) == missing
    kind = maker.split()[1]
    library = {"olympus": "Olympus", "jax": "JAX", "nnx": "flax nnx", "eqx": "equinox"}[
        maker.split()[0]
    ]
    for name in missing:
        reason = report.unavailable[name]
        assert f"given a{'n' if library[0] in 'eO' else ''} {library} {kind}" in reason, reason
        assert "not kept by it" in reason and "pass the function" in reason
    # The text form names each, with its reason.
    text = report.text()
    for name in missing:
        assert f"{name}: unavailable (given " in text, text


@pytest.mark.parametrize(
    "maker",
    [
        "jax Lowered",
        pytest.param("eqx Lowered", marks=needs_libraries),
        pytest.param("nnx Lowered", marks=needs_libraries),
    ],
)
def test_costs_and_passes_compile_a_lowered_again(maker):
    report = inspect(_stage(maker), cache=False, costs=True, passes=True)
    assert report.ok, report.failure
    rows = report.cost_by_line()
    assert rows and sum(r["flops"] for r in rows) > 0
    assert report.passes is not None and report.passes["rows"]
    assert "olympuspr" in report.unavailable  # still says why


def test_a_compiled_alone_has_costs_but_no_passes_and_says_why():
    report = inspect(_stage("jax Compiled"), cache=False, costs=True, passes=True)
    assert report.ok, report.failure
    assert report.name == "jit_double_sin"
    assert report.cost_by_line()
    assert report.passes is None
    assert "needs its Lowered" in report.unavailable["passes"]
    assert report.costs is not None
    assert "keeps no Lowered" in report.costs["unavailable"]["peak"]


# --- bad input ---------------------------------------------------------------------------


def test_bad_targets_say_what_was_given_and_what_is_accepted():
    with pytest.raises(StagingError, match=r"got int 3\. Pass a function .*flax\.nnx\.jit") as e:
        inspect(3)
    assert "Traced, Lowered or Compiled" in str(e.value)
    with pytest.raises(StagingError, match="Got a JAX Lowered with arguments"):
        inspect(_stage("jax Lowered"), X)
    local = olympus.platforms.local_platform()
    with pytest.raises(StagingError, match=f"made for {local}; it cannot be staged again for tpu"):
        inspect(_stage("jax Compiled"), platform="tpu")


# --- the magic, the CLI, the Inspector -------------------------------------------------


@pytest.fixture(scope="module")
def shell():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "olympus_jupyter")
    return shell


def magic(shell, line):
    return quietly(lambda: shell.run_line_magic("olympus_lower", line))


@needs_libraries
def test_the_magic_takes_library_functions_and_stage_objects(shell):
    nnx_step, nnx_args = nnx_parts()
    eqx_step, eqx_args, _, _ = eqx_parts()
    shell.user_ns.update(
        nnx_step=nnx_step,
        nnx_args=nnx_args,
        eqx_step=eqx_step,
        eqx_args=eqx_args,
        lowered=_stage("eqx Lowered"),
        stages={"compiled": _stage("jax Compiled")},
    )
    magic(shell, "--name rep_nnx nnx_step(*nnx_args)")
    magic(shell, "--name rep_eqx eqx_step(*eqx_args)")
    magic(shell, "--costs --name rep_lowered lowered")
    magic(shell, "--name rep_compiled stages['compiled']")
    for name in ("rep_nnx", "rep_eqx"):
        report = shell.user_ns[name]
        assert report.ok and made(report) == set(PROGRAMS), (name, report.failure)
    lowered = shell.user_ns["rep_lowered"]
    assert lowered.ok and made(lowered) == {"stablehlo", "hlo", "compiled"}
    assert "given an equinox Lowered" in lowered.unavailable["olympuspr"]
    assert lowered.cost_by_line()
    assert made(shell.user_ns["rep_compiled"]) == {"compiled"}


def test_the_cell_magic_ends_with_a_stage_object(shell):
    quietly(
        lambda: shell.run_cell_magic(
            "olympus_lower",
            "--name rep_cell",
            "import jax, jax.numpy as jnp\nlowered_here = jax.jit(jnp.cos).lower(1.0)\nlowered_here\n",
        )
    )
    assert made(shell.user_ns["rep_cell"]) == {"stablehlo", "hlo", "compiled"}


def test_the_magic_still_asks_for_a_call_for_anything_else(shell):
    from IPython.core.error import UsageError

    shell.user_ns["n"] = 3
    with pytest.raises(UsageError, match="is not a call.*Compiled is given alone"):
        magic(shell, "n")


@needs_libraries
def test_the_cli_takes_a_stage_object_and_an_nnx_function(tmp_path, monkeypatch):
    from olympus_jupyter.frontends.cli import main

    (tmp_path / "entry_model.py").write_text(
        textwrap.dedent("""
        import jax, jax.numpy as jnp
        from flax import nnx

        @nnx.jit
        def scaled(x):
            return jnp.tanh(x) * 2

        lowered = jax.jit(scaled).lower(jnp.ones((4, 4)))
        NOT_A_FUNCTION = 3
        """)
    )
    monkeypatch.chdir(tmp_path)
    monkeypatch.setattr(sys, "path", list(sys.path))
    out = io.StringIO()
    with contextlib.redirect_stdout(out):
        assert main(["report", "entry_model:lowered", "-o", "low.html"]) == 0
        assert main(["report", "entry_model:scaled", "--arg", "f32[4,4]", "-o", "f.html"]) == 0
    text = out.getvalue()
    assert "olympuspr: unavailable (given a JAX Lowered" in text
    local = olympus.platforms.local_platform()
    assert f"Olympus report: scaled for {local}\n  olympuspr " in text
    assert (tmp_path / "low.html").stat().st_size and (tmp_path / "f.html").stat().st_size
    err = io.StringIO()
    with contextlib.redirect_stderr(err):
        assert main(["report", "entry_model:NOT_A_FUNCTION", "-o", "x.html"]) == 2
    assert "or a Traced, Lowered or Compiled" in err.getvalue()


@needs_libraries
def test_the_inspector_takes_library_functions_and_a_lowered():
    from olympus_jupyter.frontends.inspector import Inspector

    eqx_step, eqx_args, _, _ = eqx_parts()
    nnx_step, nnx_args = nnx_parts()
    shown = set(PROGRAMS) - {"hlo"}  # the Inspector shows StableHLO or HLO (a toggle)
    for fun, args in ((nnx_step, nnx_args), (eqx_step, eqx_args)):
        ins = quietly(lambda: Inspector(fun, *args))
        assert ins.report.ok and made(ins.report) == shown, ins.report.failure
    # equinox's non-array leaves (the MLP's activation) are held, not edited.
    held = [e.description for e in ins.editors if e.disabled]
    assert any("activation" in d for d in held), held
    ins.editors[-1].value = "f32[6,2]"  # y: a batch of 6 (and x below)
    ins.editors[-2].value = "f32[6,3]"
    assert ins.report.ok and "6,3" in stage_text(ins.report, "olympuspr")

    lowered = quietly(lambda: Inspector(_stage("jax Lowered")))
    assert made(lowered.report) == {"stablehlo", "compiled"}
    assert "given a JAX Lowered" in lowered.report.unavailable["olympuspr"]
    quietly(lambda: setattr(lowered.compiler_options, "value", "xla_backend_optimization_level=0"))
    assert lowered.cache.counts == {"trace": 0, "lower": 0, "compile": 2}
    with pytest.raises(StagingError, match="with arguments"):
        Inspector(_stage("jax Lowered"), X)
