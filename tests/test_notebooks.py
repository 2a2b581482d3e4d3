"""Notebooks run in a real kernel (nbclient): each magic option, and errors that leave
the kernel usable. The course's lessons (notebooks/) are test_course.py's."""

import json

import pytest

from notebook_runner import run_notebook
from notebook_outputs import MEDIA, errors, notebook, report_of, text
from jax_facts import jax_refuses_unhashable_static_arguments_when_tracing
from olympus.platforms import local_platform

HERE = local_platform()  # the kernel runs on this machine too
OTHER = "tpu" if HERE != "tpu" else "cpu"


def execute(nb, cwd, allow_errors=False):
    return run_notebook(nb, cwd, allow_errors=allow_errors)


def usage_error(cell) -> str:
    """IPython prints a UsageError on stderr, in one line, with no traceback."""
    lines = [
        o["text"]
        for o in cell.get("outputs", [])
        if o["output_type"] == "stream"
        and o["name"] == "stderr"
        and o["text"].startswith("UsageError: ")
    ]
    assert len(lines) == 1 and not errors(cell), cell.get("outputs")
    return lines[0]


@pytest.fixture(scope="module")
def options_run(tmp_path_factory):
    cwd = tmp_path_factory.mktemp("magics")
    nb = notebook(
        "import olympus, olympus.numpy as jnp\n%load_ext olympus_jupyter\n"
        "def f(x, n=2):\n    return jnp.sin(x) * n\nx = jnp.ones(3)",
        "%olympus_lower f(x)",  # 1
        "%olympus_lower --platform tpu f(x)",  # 2
        f"%olympus_lower --platform {HERE},tpu f(x)",  # 3
        "%olympus_lower --static-argnums 1 f(x, 3)",  # 4
        "%olympus_lower --static-argnames n f(x, n=5)",  # 5
        "%olympus_lower --stages olympuspr,compiled f(x)",  # 6
        "%olympus_lower --no-debug-info f(x)",  # 7
        "%olympus_lower --compiler-option xla_backend_optimization_level=0 f(x)",  # 8
        "%olympus_lower --save saved.html --name rep f(x)",  # 9
        "print(type(rep).__name__, rep.name)",  # 10
        "%%olympus_lower --stages source,olympuspr\n"
        "def g(a):\n    b = a @ a.T\n    return jnp.exp(b)\ng(jnp.ones((2, 3)))",  # 11
        "print(g(jnp.ones((1, 1))))",  # 12
        "jf = olympus.jit(f, static_argnums=1)\n%olympus_lower jf(x, 4)",  # 13
        "import jax\n%olympus_lower jax.jit(f)(x)",  # 14
        "print(get_ipython().find_line_magic('olympus_lower').__doc__)\n"
        "print(get_ipython().find_cell_magic('olympus_lower').__doc__)",  # 15 (what ? shows)
        "olympus.jit(f).trace(x).lower()",  # 16
    )
    return execute(nb, cwd), cwd


def test_line_magic_shows_all_stages(options_run):
    nb, _ = options_run
    data = report_of(nb.cells[1])
    report = data[MEDIA]
    assert report["stages"] == [
        "source",
        "olympuspr",
        "stablehlo",
        "hlo",
        "compiled",
        "cost_analysis",
        "memory",
    ]
    assert set(report["provenance"]["stages"]) == {"olympuspr", "stablehlo", "compiled"}
    assert report["analyses"]["memory"]["peak_memory_in_bytes"] > 0
    assert set(report["timings"]) == {"trace", "lower", "compile"}
    assert "stablehlo.sine" in data["text/html"]


def test_platform_option(options_run):
    nb, _ = options_run
    tpu = report_of(nb.cells[2])
    assert tpu[MEDIA]["platforms"] == ["tpu"]
    assert "Not available: lowered for tpu" in tpu["text/html"]
    both = report_of(nb.cells[3])[MEDIA]
    assert both["platforms"] == [HERE, "tpu"] and "compiled" in both["provenance"]["stages"]


def test_static_options(options_run):
    nb, _ = options_run
    by_num = report_of(nb.cells[4])[MEDIA]["provenance"]["stages"]["olympuspr"]["text"]
    by_name = report_of(nb.cells[5])[MEDIA]["provenance"]["stages"]["olympuspr"]["text"]
    assert "3.0" in by_num and "5.0" in by_name


def test_stages_option(options_run):
    nb, _ = options_run
    data = report_of(nb.cells[6])
    assert data[MEDIA]["stages"] == ["olympuspr", "compiled"]
    assert "Compiled HLO" in data["text/html"] and "StableHLO · lowered" not in data["text/html"]


def test_no_debug_info_option(options_run):
    nb, _ = options_run
    with_info, without = report_of(nb.cells[1]), report_of(nb.cells[7])
    assert without[MEDIA]["debug_info"] is False
    marker = "(f)</a>"
    assert marker in with_info["text/html"] and marker not in without["text/html"]


def test_compiler_option(options_run):
    nb, _ = options_run
    assert report_of(nb.cells[8])[MEDIA]["failure"] is None


def test_save_and_name_options(options_run):
    nb, cwd = options_run
    saved = (cwd / "saved.html").read_text()
    assert saved.startswith("<!DOCTYPE html>")
    assert "StageReport f" in text(nb.cells[10])


def test_cell_magic_keeps_definitions(options_run):
    nb, _ = options_run
    report = report_of(nb.cells[11])[MEDIA]
    assert report["name"] == "g" and report["stages"] == ["source", "olympuspr"]
    assert not errors(nb.cells[12]) and "2.7182817" in text(nb.cells[12])


def test_jitted_functions_keep_their_options(options_run):
    nb, _ = options_run
    assert "4.0" in report_of(nb.cells[13])[MEDIA]["provenance"]["stages"]["olympuspr"]["text"]
    assert report_of(nb.cells[14])[MEDIA]["failure"] is None


def test_help_documents_options_with_examples(options_run):
    nb, _ = options_run
    help_text = text(nb.cells[15])
    for option in (
        "--platform",
        "--static-argnums",
        "--static-argnames",
        "--stages",
        "--no-debug-info",
        "--compiler-option",
        "--save",
        "--name",
        "examples:",
    ):
        assert option in help_text


def test_stage_objects_display_themselves(options_run):
    nb, _ = options_run
    data = report_of(nb.cells[16])
    assert "stablehlo" in data[MEDIA]["provenance"]["stages"]
    assert "compiled" not in data[MEDIA]["provenance"]["stages"]  # displaying never compiles


def test_errors_are_clear_and_the_kernel_stays_usable(tmp_path):
    cells = [
        "import olympus, olympus.numpy as jnp\n%load_ext olympus_jupyter\nx = jnp.ones(3)\n"
        "def bad(x):\n    if x.sum() > 0:\n        return x\n    return -x",
        "%olympus_lower bad(x)",  # trace failure -> report
        "%olympus_lower --platfrm tpu bad(x)",  # bad option -> UsageError
        "%olympus_lower --platform gpux bad(x)",  # bad platform -> UsageError
        "%olympus_lower bad",  # not a call -> UsageError
        "%olympus_lower missing(x)",  # unknown name -> NameError
        "%olympus_lower --static-argnums 1 (lambda a, b: a)(x, [1])",  # unhashable static
        f"%olympus_lower --platform {OTHER} jnp.sin(x)",  # cannot compile here -> report
        "%%olympus_lower\ndef h(y):\n    return y +\nh(1)",  # syntax error in the cell
    ]
    probe = "print('still usable', 1 + 1)"
    sources = [cells[0]]
    for c in cells[1:]:
        sources += [c, probe]
    nb = execute(notebook(*sources), tmp_path, allow_errors=True)
    out = nb.cells
    for i in range(2, len(out), 2):
        assert "still usable 2" in text(out[i]), i
    trace = report_of(out[1])[MEDIA]["failure"]
    assert trace["stage"] == "trace" and trace["type"] == "TracerBoolConversionError"
    assert (
        trace["frames"][-1]["function"] == "bad" and "if x.sum() > 0" in trace["frames"][-1]["code"]
    )
    assert "Trace failed" in report_of(out[1])["text/html"]
    for i, needle in (
        (3, "unrecognized arguments: --platfrm"),
        (5, "Unknown lowering platform 'gpux'"),
        (7, "is not a call"),
        (9, "Evaluating 'missing(x)' failed: NameError"),
    ):
        assert needle in usage_error(out[i]), i
    static = report_of(out[11])[MEDIA]["failure"]
    if jax_refuses_unhashable_static_arguments_when_tracing():
        assert static["stage"] == "trace" and "Non-hashable" in static["message"]
    else:
        assert static is None
    other = report_of(out[13])[MEDIA]
    assert other["failure"] is None and f"lowered for {OTHER}" in other["unavailable"]["compiled"]
    assert "does not parse" in usage_error(out[15])
    json.dumps([report_of(out[i]) for i in (1, 11, 13)])  # bundles are JSON


def test_interactive_option_shows_the_inspector(tmp_path):
    nb = execute(
        notebook(
            "import olympus.numpy as jnp\n%load_ext olympus_jupyter\n"
            "def f(x):\n    return jnp.sin(x)\nx = jnp.ones(3)",
            "%olympus_lower --interactive --name w f(x)",
            "w.editors[0].value = 'f32[5]'\nprint(w.report.stage_text('olympuspr'))",
            "%olympus_lower --interactive --save r.html f(x)",
        ),
        tmp_path,
        allow_errors=True,
    )
    views = [
        o
        for o in nb.cells[1].outputs
        if "application/vnd.jupyter.widget-view+json" in o.get("data", {})
    ]
    assert len(views) == 1
    assert "f32[5]" in text(nb.cells[2])
    assert "leave it out with --interactive" in usage_error(nb.cells[3])
