"""Every public option takes the values a user would pass, in every frontend.

One table per frontend: the values each option takes (the report is made), and
the values it does not take with a fragment of the one error they get, which
names the option, says what was given and what is taken, and comes before
anything is staged. The frontends share one check
(:mod:`olympus_jupyter.frontends.options`), so the tables read alike.
"""

import contextlib
import io
import pathlib

import numpy as np
import pytest

import olympus.numpy as jnp
from olympus_jupyter import ReportCache, inspect
from olympus_jupyter.frontends import cli, inspection
from olympus_jupyter.frontends.options import (
    OptionError,
    OptionTypeError,
    ReportOptions,
    check_option,
    parse_options,
    split_line,
)

LEVEL = "xla_backend_optimization_level"


def g(x, n=2):
    return jnp.sin(x) * n


@pytest.fixture
def nothing_is_staged(monkeypatch):
    """Fails a test that gets as far as staging."""

    def refuse(*args, **kwargs):
        raise AssertionError("an option error must come before any staging")

    monkeypatch.setattr(inspection, "run_stages", refuse)


def quietly(thunk):
    with contextlib.redirect_stdout(io.StringIO()):
        return thunk()


# --- the one check ---------------------------------------------------------------------


def test_report_options_hold_one_canonical_form_whatever_was_written():
    assert (
        ReportOptions(platforms="cpu,tpu")
        == ReportOptions(platforms=["CPU", " tpu"])
        == ReportOptions(platforms=("cpu", "tpu"))
    )
    assert ReportOptions(static_argnums=1).static_argnums == (1,)
    assert ReportOptions(static_argnums=np.int64(1)).static_argnums == (1,)
    assert ReportOptions(static_argnums=()).static_argnums is None
    assert ReportOptions(stages="hlo").stages == ReportOptions(stages=["hlo"]).stages == ("hlo",)
    assert ReportOptions(stages="hlo,olympuspr").stages == ("olympuspr", "hlo")  # registry order
    assert (
        ReportOptions(compiler_options={LEVEL: 0}).compiler_options
        == ReportOptions(compiler_options=f"{LEVEL}=0").compiler_options
        == ((LEVEL, 0),)
    )
    assert ReportOptions(debug_info=None).debug_info is True
    hash(ReportOptions(platforms="tpu", compiler_options={LEVEL: 0}))


def test_save_paths_are_str_or_pathlib_in_a_folder_that_exists(tmp_path):
    assert ReportOptions(save=tmp_path / "r.html").save == str(tmp_path / "r.html")
    assert ReportOptions(save=str(tmp_path / "r.htm")).save == str(tmp_path / "r.htm")
    for value, error, message in (
        (tmp_path / "missing" / "r.html", OptionError, "does not exist"),
        ("r.txt", OptionError, "the report is written as HTML"),
        ("", OptionError, "save must be a path ending in .html"),
        (3, OptionTypeError, "save must be a path ending in .html (a str or a pathlib.Path)"),
        (True, OptionTypeError, "got True (bool)"),
    ):
        with pytest.raises(error) as raised:
            ReportOptions(save=value)
        assert message in str(raised.value), str(raised.value)


def test_wrong_types_are_type_errors_and_wrong_values_value_errors():
    with pytest.raises(TypeError):
        check_option("static_argnums", "1")
    with pytest.raises(ValueError):
        check_option("static_argnums", "1")
    with pytest.raises(OptionError) as error:
        check_option("timeout", -1)
    assert not isinstance(error.value, TypeError)


# --- inspect() -------------------------------------------------------------------------

INSPECT_ACCEPTS = [
    ("platform", [None, "cpu", "CPU", " cpu ", "cpu,tpu", ("cpu", "tpu"), ["cpu"], (), ""]),
    ("static_argnums", [None, 1, (1,), [1], np.int64(1), ()]),
    ("stages", [None, "hlo", "HLO", ["hlo"], ("olympuspr", "hlo"), "olympuspr,hlo", "all"]),
    ("debug_info", [True, False, None, np.bool_(False)]),
    ("compiler_options", [None, {}, {LEVEL: 0}, f"{LEVEL}=0", [(LEVEL, 0)], [f"{LEVEL}=0"]]),
    ("full", [True, False, None]),
    ("timeout", [None, 30, 30.5, np.float64(30)]),
    ("cache", [True, False, None, ReportCache()]),
]


def _stable_id(value) -> str:
    """A test id that is the same in every worker (no object addresses)."""
    text = repr(value)
    return type(value).__name__ if " object at 0x" in text else text


@pytest.mark.parametrize(
    "option, value", [(o, v) for o, values in INSPECT_ACCEPTS for v in values], ids=_stable_id
)
def test_inspect_takes(option, value):
    static = option == "static_argnums" and value is not None and np.size(value) > 0
    args = (jnp.ones(3), 3) if static else (jnp.ones(3),)
    kwargs = {"cache": False} if option != "cache" else {}
    report = inspect(g, *args, **{option: value}, **kwargs)
    assert report.ok, report.failure


def test_inspect_takes_static_argnames_as_a_name_or_names():
    for value in ("n", ("n",), ["n"], "n,"):
        assert inspect(g, jnp.ones(3), n=3, static_argnames=value, cache=False).ok


def test_cache_true_is_the_default_cache_and_false_none_is_no_cache():
    f = lambda x: x * 3  # noqa: E731 - a function of this test's own
    first = inspect(f, 1.0, cache=True)
    assert inspect(f, 1.0) is first and inspect(f, 1.0, cache=True) is first
    assert inspect(f, 1.0, cache=False) is not first
    assert inspect(f, 1.0, cache=None) is not first
    mine = ReportCache()
    assert inspect(f, 1.0, cache=mine) is inspect(f, 1.0, cache=mine)


def test_the_report_of_a_function_gone_is_freed_beside_the_next_compile():
    import gc
    import threading
    import weakref

    mine, freed_in = ReportCache(), []

    def f(x):
        return x * 5

    old = weakref.ref(
        inspect(f, 1.0, cache=mine), lambda _: freed_in.append(threading.current_thread().name)
    )
    del f  # as a cell that defines it again drops it
    gc.collect()
    assert old() is not None and len(mine) == 1  # still held: nothing was made since
    inspect(lambda x: x + 5, 1.0, cache=mine)
    assert old() is None and len(mine) == 1
    assert freed_in == ["olympus-alongside"]  # by the worker, while XLA compiled


INSPECT_REJECTS = [
    ("platform", 3, OptionTypeError, "platform must be a platform name such as 'cpu'"),
    ("platform", ("cpu", 3), OptionTypeError, "3 (int) is not a name"),
    ("platform", b"cpu", OptionTypeError, "got b'cpu' (bytes)"),
    ("platform", "gpux", OptionError, "Unknown lowering platform 'gpux'"),
    ("static_argnums", "1", OptionTypeError, "static_argnums must be an argument position"),
    ("static_argnums", True, OptionTypeError, "got True (bool)"),
    ("static_argnums", 1.5, OptionTypeError, "got 1.5 (float)"),
    ("static_argnums", (1, "2"), OptionTypeError, "'2' (str) is not a position"),
    ("static_argnames", 3, OptionTypeError, "static_argnames must be an argument name"),
    ("static_argnames", "not a name", OptionError, "'not a name' is not a Python argument name"),
    ("stages", "llvm", OptionError, "Unknown stage 'llvm'"),
    ("stages", [], OptionError, "no stage named"),
    ("stages", 3, OptionTypeError, "stages must be stage names from source, olympuspr"),
    ("stages", ["olympuspr", None], OptionTypeError, "None (NoneType) is not a name"),
    ("debug_info", "False", OptionTypeError, "debug_info must be True or False; got 'False'"),
    ("debug_info", 0, OptionTypeError, "debug_info must be True or False; got 0 (int)"),
    ("compiler_options", "justakey", OptionError, "expected KEY=VALUE"),
    ("compiler_options", {"k": [1]}, OptionTypeError, "XLA takes a bool, int, float or str"),
    ("compiler_options", 3, OptionTypeError, "compiler_options must be a dict"),
    ("compiler_options", [("k",)], OptionTypeError, "neither KEY=VALUE nor a (key, value)"),
    ("full", "True", OptionTypeError, "full must be True or False; got 'True'"),
    ("timeout", "1", OptionTypeError, "timeout must be a positive number of seconds"),
    ("timeout", -1, OptionError, "timeout must be a positive number of seconds"),
    ("timeout", float("nan"), OptionError, "got nan"),
    ("timeout", True, OptionError, "got True"),
    ("cache", "yes", OptionTypeError, "cache must be True (the default cache), False or None"),
    ("cache", 1, OptionTypeError, "got 1 (int)"),
    ("cache", {}, OptionTypeError, "got {} (dict)"),
    ("progress", "yes", OptionTypeError, "progress must be True (shown in the output)"),
    ("progress", 1, OptionTypeError, "got 1 (int)"),
]


def test_a_bad_progress_is_refused_even_where_the_report_is_cached():
    cache = ReportCache()
    inspect(g, jnp.ones(3), cache=cache)
    with pytest.raises(OptionTypeError, match="progress must be"):
        inspect(g, jnp.ones(3), cache=cache, progress="yes")


@pytest.mark.parametrize("option, value, error, message", INSPECT_REJECTS, ids=repr)
def test_inspect_refuses(nothing_is_staged, option, value, error, message):
    with pytest.raises(error) as raised:
        inspect(g, jnp.ones(3), **{option: value})
    assert message in str(raised.value)
    assert repr(value) in str(raised.value) or option == "platform"  # what was given


# --- the magic -------------------------------------------------------------------------


@pytest.fixture(scope="module")
def shell(tmp_path_factory):
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "olympus_jupyter")
    shell.run_cell(
        "import olympus.numpy as jnp\nx = jnp.ones(3)\n"
        "def f(x, n=2):\n    return jnp.sin(x) * n\n"
        "def explode(*a):\n    raise AssertionError('the call was evaluated')\n"
    )
    shell.user_ns["folder"] = tmp_path_factory.mktemp("saved")
    return shell


def magic(shell, line):
    return quietly(lambda: shell.run_line_magic("olympus_lower", line))


MAGIC_ACCEPTS = [
    ("--platform cpu", dict(platforms=("cpu",))),
    ("--platform CPU,tpu", dict(platforms=("cpu", "tpu"))),
    ("--platform=cpu", dict(platforms=("cpu",))),
    ("--static-argnums 1", dict(static_argnums=(1,))),
    ("--static-argnames n", dict(static_argnames=("n",))),
    ("--stages hlo", dict(stages=("hlo",))),
    ("--stages olympuspr,hlo", dict(stages=("olympuspr", "hlo"))),
    ("--stages all", dict(stages=ReportOptions(stages="all").stages)),
    ("--no-debug-info", dict(debug_info=False)),
    (f"--compiler-option {LEVEL}=0", dict(compiler_options=((LEVEL, 0),))),
    ("--name rep", dict(name="rep")),
    ("--full", dict(full=True)),
    ("--timeout 30", dict(timeout=30.0)),
    ("--timeout 2.5", dict(timeout=2.5)),
]


@pytest.mark.parametrize("flags, expected", MAGIC_ACCEPTS, ids=repr)
def test_the_magic_takes(shell, flags, expected):
    options, call = split_line(f"{flags} f(x, 3)")
    assert call == "f(x, 3)"
    for field, value in expected.items():
        assert getattr(options, field) == value
    assert parse_options(flags) == options  # the cell magic's first line
    magic(shell, f"{flags} f(x, 3)")


def test_the_magic_saves_to_a_path_in_a_folder_that_exists(shell):
    folder = shell.user_ns["folder"]
    magic(shell, f"--save {folder}/r.html f(x)")
    magic(shell, f"--save '{folder}/with space.html' f(x)")
    assert (folder / "r.html").exists() and (folder / "with space.html").exists()


def test_the_magic_stages_the_call_as_typed(shell):
    # IPython expands {expression} in a magic's line unless the magic declines: the set
    # literal {n, n} would become the tuple (10, 10), and the call another one.
    shell.run_cell("import jax\nn = 10\nscale = jax.jit(lambda s, k: s * k, static_argnums=1)")
    magic(shell, "--name as_typed scale(x, len({n, n}) * 7)")
    text = shell.user_ns["as_typed"].stage_text("olympuspr")
    assert "7.0" in text and "14.0" not in text
    quietly(lambda: shell.run_cell("%%olympus_lower --name typed_cell\nscale(x, len({n, n}) * 7)"))
    assert "7.0" in shell.user_ns["typed_cell"].stage_text("olympuspr")


MAGIC_REJECTS = [
    ("--platform gpux", "argument --platform: Unknown lowering platform 'gpux'"),
    ("--static-argnums x", "argument --static-argnums: expected argument positions"),
    ("--static-argnames 3a", "'3a' is not a Python argument name"),
    ("--stages llvm", "argument --stages: unknown stage 'llvm'; choose from source,olympuspr"),
    ("--compiler-option justakey", "argument --compiler-option: expected KEY=VALUE"),
    ("--save r.txt", "argument --save: the report is written as HTML"),
    ("--save no/such/folder/r.html", "does not exist"),
    ("--name 1x", "argument --name: expected a Python variable name, got '1x'"),
    ("--name class", "expected a Python variable name, got 'class'"),
    ("--timeout soon", "argument --timeout: expected a positive number of seconds, got 'soon'"),
    ("--timeout 0", "expected a positive number of seconds, got '0'"),
    ("--interactive --save r.html", "--save writes a static report; leave it out with"),
    ("--interactive --timeout 2", "--timeout limits a static report; leave it out with"),
    ("--platfrm tpu", "unrecognized arguments: --platfrm"),
]


@pytest.mark.parametrize("flags, message", MAGIC_REJECTS, ids=repr)
def test_the_magic_refuses(shell, flags, message):
    from IPython.core.error import UsageError

    with pytest.raises(OptionError) as raised:
        split_line(f"{flags} explode(x)")
    assert message in str(raised.value)
    with pytest.raises(UsageError) as usage:  # before the call is evaluated
        magic(shell, f"{flags} explode(x)")
    assert message in str(usage.value) and "evaluated" not in str(usage.value)


# --- the widgets ------------------------------------------------------------------------


def layer(w, x):
    return jnp.tanh(x @ w)


def scaled(x, n):
    return x * n


INSPECTOR_ACCEPTS = [
    ("platform", None, lambda ins: ins.platforms.value == ()),
    ("platform", "tpu", lambda ins: ins.platforms.value == ("tpu",)),
    ("platform", "cpu,tpu", lambda ins: ins.platforms.value == ("cpu", "tpu")),
    ("platform", ["TPU", "cpu"], lambda ins: ins.platforms.value == ("cpu", "tpu")),
    ("stages", "olympuspr", lambda ins: ins.report.stages == ("olympuspr", "stablehlo")),
    (
        "stages",
        ["olympuspr", "hlo"],
        lambda ins: ins.report.stages == ("olympuspr", "hlo") and ins.dialect.value == "hlo",
    ),
    ("stages", "all", lambda ins: "partitioned" in ins.stages.value),
    ("debug_info", False, lambda ins: ins.report.debug_info is False),
    ("debug_info", None, lambda ins: ins.report.debug_info is True),
    ("compiler_options", {LEVEL: 0}, lambda ins: ins.compiler_options.value == f"{LEVEL}=0"),
    ("compiler_options", f"{LEVEL}=0", lambda ins: ins.compiler_options.value == f"{LEVEL}=0"),
    ("history_size", 3, lambda ins: ins.history_size == 3),
    ("history_bytes", 2**20, lambda ins: ins.history_bytes == 2**20),
]


@pytest.mark.parametrize(
    "option, value, holds", INSPECTOR_ACCEPTS, ids=lambda v: repr(v) if not callable(v) else ""
)
def test_the_inspector_takes(option, value, holds):
    from olympus_jupyter import Inspector

    ins = quietly(lambda: Inspector(layer, jnp.ones((4, 4)), jnp.ones((2, 4)), **{option: value}))
    assert ins.report is not None and holds(ins)


@pytest.mark.parametrize(
    "static",
    [
        dict(static_argnums=1),
        dict(static_argnums=(1,)),
        dict(static_argnums=[1]),
        dict(static_argnames="n"),
        dict(static_argnames=("n",)),
    ],
    ids=repr,
)
def test_the_widgets_take_static_arguments_as_one_or_several(static):
    from olympus_jupyter import Inspector, Stepper

    ins = quietly(lambda: Inspector(scaled, jnp.ones(2), 3, **static))
    assert ins.editors[1].description == "n (static)" and ins.report.ok
    if "static_argnums" in static:
        stepper = Stepper(scaled, jnp.ones(2), 3, **static)
        quietly(lambda: [stepper.next_step() for _ in range(4)])
        assert stepper.result.tolist() == [3.0, 3.0]


INSPECTOR_REJECTS = [
    ("platform", "gpux", "Unknown lowering platform 'gpux'"),
    ("platform", 3, "platform must be a platform name"),
    ("stages", "llvm", "Unknown stage 'llvm'"),
    ("static_argnums", "1", "static_argnums must be an argument position"),
    ("debug_info", "no", "debug_info must be True or False; got 'no'"),
    ("compiler_options", "justakey", "expected KEY=VALUE"),
    ("history_size", 0, "history_size must be a positive whole number of entries; got 0"),
    ("history_size", "5", "history_size must be a positive whole number of entries; got '5'"),
    ("history_bytes", -1, "history_bytes must be a positive whole number of bytes; got -1"),
]


@pytest.mark.parametrize("option, value, message", INSPECTOR_REJECTS, ids=repr)
def test_the_inspector_refuses(monkeypatch, option, value, message):
    from olympus_jupyter import Inspector
    from olympus_jupyter.staging.cache import StageCache

    monkeypatch.setattr(StageCache, "stage", lambda *a, **k: pytest.fail("staged"))
    with pytest.raises(OptionError) as raised:
        Inspector(layer, jnp.ones((4, 4)), jnp.ones((2, 4)), **{option: value})
    assert message in str(raised.value)


@pytest.mark.parametrize(
    "value, message",
    [
        ("1", "static_argnums must be an argument position such as 1"),
        (True, "got True (bool)"),
    ],
    ids=repr,
)
def test_the_stepper_refuses(value, message):
    from olympus_jupyter import Stepper

    with pytest.raises(OptionError) as raised:
        Stepper(scaled, jnp.ones(2), 3, static_argnums=value)
    assert message in str(raised.value)


# --- the command line -------------------------------------------------------------------


@pytest.fixture
def project(tmp_path, monkeypatch):
    (tmp_path / "options_model.py").write_text(
        "import olympus.numpy as jnp\n\ndef layer(w, x):\n    return jnp.tanh(x @ w)\n"
    )
    monkeypatch.chdir(tmp_path)
    return tmp_path


CLI_ACCEPTS = [
    ["--platform", "cpu"],
    ["--platform", "CPU,tpu"],
    ["--platform=tpu"],
    ["--stages", "hlo"],
    ["--stages", "olympuspr,hlo"],
    ["--stages", "all"],
    ["--timeout", "30"],
    ["--timeout", "2.5"],
    ["--no-debug-info"],
]


@pytest.mark.parametrize("flags", CLI_ACCEPTS, ids=" ".join)
def test_the_cli_takes(project, flags, capsys):
    code = cli.main(
        [
            "report",
            "options_model:layer",
            "--arg",
            "f32[4,4]",
            "--arg",
            "f32[2,4]",
            *flags,
            "-o",
            "r.html",
        ]
    )
    assert code == 0, capsys.readouterr().err
    assert (project / "r.html").exists()


@pytest.mark.parametrize("output", ["r.html", "sub/r.htm", "{tmp}/abs.html"])
def test_the_cli_writes_where_it_is_told(project, output, capsys):
    (project / "sub").mkdir()
    output = output.format(tmp=project)
    assert cli.main(["demo", "--stages", "olympuspr", "-o", output]) == 0
    assert pathlib.Path(project, output).exists()


CLI_REJECTS = [
    (["--platform", "gpux"], "argument --platform: Unknown lowering platform 'gpux'"),
    (["--platform", "cpu,3"], "argument --platform: Unknown lowering platform '3'"),
    (["--stages", "llvm"], "argument --stages: unknown stage 'llvm'; choose from source,"),
    (
        ["--timeout", "soon"],
        "argument --timeout: expected a positive number of seconds, got 'soon'",
    ),
    (["--timeout", "-1"], "expected a positive number of seconds, got '-1'"),
    (["-o", "r.txt"], "argument -o/--output: the report is written as HTML"),
    (["-o", "no/such/dir/r.html"], "does not exist"),
]


@pytest.mark.parametrize("flags, message", CLI_REJECTS, ids=repr)
def test_the_cli_refuses(project, flags, message, capsys, monkeypatch):
    monkeypatch.setattr(cli, "load_function", lambda t: pytest.fail("got past the options"))
    argv = ["report", "options_model:layer", "--arg", "f32[4,4]", "--arg", "f32[2,4]"]
    argv += flags if "-o" in flags else [*flags, "-o", "r.html"]
    with pytest.raises(SystemExit) as exit_:
        cli.main(argv)
    err = capsys.readouterr().err
    assert exit_.value.code == 2
    assert err.startswith("error: ") and err.count("\n") == 1, err
    assert message in err
