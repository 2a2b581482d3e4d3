"""Programs that carry markup, escapes and odd values in every place a program can
carry text: each gets a correct report whose every form shows that text as text
(HTML escaped, JSON intact, the text form plain), and earlier reports still render."""

import dataclasses
import functools
import importlib.util
import json
import os
import subprocess
import sys
import textwrap

import jax
import numpy as np
import pytest

import olympus.numpy as jnp
from olympus_jupyter import StageReport, inspect
from olympus_jupyter.report.data import MEDIA_TYPE
from olympus_jupyter.report.output_cap import MAX_OUTPUT_BYTES, output_size

from test_html_escaping import assert_inert, assert_inert_with_view

from deadlines import deadline

MARKUP = '<img src=x onerror="alert(1)">\'"&'


def with_docstring_and_comment(x):
    """<script>alert(1)</script> & friends"""
    # <img src=x onerror=alert(1)> in a comment
    return jnp.sin(x)


def with_string_constant(x):
    label = "<script>alert('constant')</script>"
    return x * len(label)


def with_named_scope(x):
    with jax.named_scope("scope<b onclick=alert(1)>"):
        return jnp.cos(x) + 1


def with_debug_print(x):
    jax.debug.print("<script>{}</script> {x}", 1, x=x)
    return x + 1


def with_named_call(x):
    inner = jax.named_call(lambda y: y * 2, name="call_<i>onmouseover=alert(1)</i>")
    return inner(x)


def with_static_value(x, tag):
    return x * len(tag)


@dataclasses.dataclass(frozen=True)
class Weird:
    """A pytree class whose name users see in a report."""

    a: jax.Array


jax.tree_util.register_dataclass(Weird, data_fields=["a"], meta_fields=[])
Weird.__qualname__ = Weird.__name__ = "Weird<script>"


def with_pytree_class(w):
    return w.a * 2


def with_callback(x):
    def host(v):
        return np.asarray(v)

    host.__qualname__ = "host<script>alert(1)</script>"
    return jax.pure_callback(host, jax.ShapeDtypeStruct(x.shape, x.dtype), x)


def raises_with_markup(x):
    raise ValueError(f"bad {MARKUP}")


class ErrorWithMarkup(Exception):
    pass


ErrorWithMarkup.__name__ = ErrorWithMarkup.__qualname__ = "Error<script>"


def raises_markup_type(x):
    raise ErrorWithMarkup("typed")


CASES = [
    ("docstring-comment", with_docstring_and_comment, (jnp.ones(3),), {}, "alert(1)"),
    ("string-constant", with_string_constant, (jnp.ones(3),), {}, None),
    ("named-scope", with_named_scope, (jnp.ones(3),), {}, "scope<b onclick=alert(1)>"),
    ("debug-print", with_debug_print, (jnp.ones(3),), {}, None),
    ("named-call", with_named_call, (jnp.ones(3),), {}, None),
    ("static-value", with_static_value, (jnp.ones(3), MARKUP), {"static_argnums": 1}, None),
    ("pytree-class", with_pytree_class, (Weird(jnp.ones(3)),), {}, None),
    ("callback", with_callback, (jnp.ones(3),), {}, None),
    ("exception-message", raises_with_markup, (jnp.ones(3),), {}, MARKUP),
    ("exception-type", raises_markup_type, (jnp.ones(3),), {}, "Error<script>"),
    ("zero-size", lambda x: x * 2, (jnp.ones((0, 3)),), {}, None),
    ("zero-d", lambda x: x + 1, (jnp.float32(1),), {}, None),
    (
        "ten-deep-pytree",
        lambda t: jax.tree.leaves(t)[0] * 2,
        (functools.reduce(lambda acc, _: [acc], range(10), jnp.ones(2)),),
        {},
        None,
    ),
    ("many-arguments", lambda *xs: sum(xs), tuple(jnp.float32(k) for k in range(300)), {}, None),
    ("int4", lambda x: x + 1, (jnp.ones(4, jnp.int4),), {}, None),
    ("float8", lambda x: x * 2, (jnp.ones(4, jnp.float8_e4m3fn),), {}, None),
    ("prng-key", lambda k: jax.random.uniform(k, (3,)), (jax.random.key(0),), {}, None),
    (
        "compiler-option-value",
        lambda x: x + 1,
        (jnp.ones(2),),
        {"compiler_options": {"xla_dump_hlo_module_re": MARKUP}},
        None,
    ),
]


@pytest.fixture(scope="module")
def first_report():
    return inspect(lambda x: jnp.tanh(x), jnp.ones(2), cache=None)


@pytest.mark.parametrize("name, fun, args, options, shown", CASES, ids=[c[0] for c in CASES])
def test_a_hostile_or_extreme_program_gets_a_safe_report(
    name, fun, args, options, shown, first_report
):
    report = inspect(fun, *args, cache=None, **options)
    page = report.html()
    assert_inert(page, *([shown] if shown else []))
    data = json.loads(json.dumps(report.to_json()))
    again = StageReport.from_json(data)  # the bundle reads back through the schema check
    assert again.name == report.name and again.failure == report.failure
    assert_inert(again.html())
    assert "\x1b" not in report.text()
    if name.startswith("exception"):
        assert not report.ok and report.failure.stage == "trace"
    else:
        assert report.ok, report.failure
    assert_inert(first_report.html())  # earlier reports still render


# -- more extreme programs ---------------------------------------------------------------


def prints_megabytes(x):
    print("<script>window.__pwned=1</script>" * 150_000)  # 5 MB to stdout while traced
    return x + 1


def with_custom_call_target(x):
    # Lowers to a custom call of a target no one registered: compiling it fails.
    call = jax.ffi.ffi_call(
        "target<img src=x onerror=alert(1)>", jax.ShapeDtypeStruct(x.shape, x.dtype)
    )
    return call(x)


def with_huge_constant(x):
    return x + np.arange(2_000_000, dtype=np.float32).reshape(x.shape)  # one 16 MB line


MORE_CASES = [
    (
        "thousand-arguments",
        lambda *xs: sum(xs),
        tuple(jnp.float32(k) for k in range(1000)),
        {},
        None,
    ),
    ("megabyte-print", prints_megabytes, (jnp.ones(2),), {}, None),
    ("huge-constant", with_huge_constant, (jnp.ones((1000, 2000)),), {}, None),
]


@pytest.mark.parametrize(
    "name, fun, args, options, shown", MORE_CASES, ids=[c[0] for c in MORE_CASES]
)
def test_more_extreme_programs_get_safe_reports_under_the_output_cap(
    name, fun, args, options, shown, first_report
):
    report = inspect(fun, *args, cache=None, **options)
    assert report.ok, report.failure
    bundle = report._repr_mimebundle_()
    assert output_size(bundle) <= MAX_OUTPUT_BYTES
    assert_inert_with_view(bundle["text/html"], bundle[MEDIA_TYPE])
    StageReport.from_json(json.loads(json.dumps(bundle[MEDIA_TYPE])))
    assert_inert(first_report.html())


def test_a_custom_call_target_with_markup_fails_to_compile_with_a_safe_report(first_report):
    report = inspect(with_custom_call_target, jnp.ones(3), cache=None)
    assert not report.ok and report.failure.stage == "compile"
    page = report.html()
    assert_inert(page, "target<img src=x onerror=alert(1)>")
    StageReport.from_json(json.loads(json.dumps(report.to_json())))
    assert_inert(first_report.html())


def test_a_program_of_fifty_thousand_equations_is_shown_capped():
    def chain(x):
        for _ in range(25_000):
            x = x * 1.0001 + 0.5
        return x

    report = inspect(chain, jnp.ones(8), stages=("source", "olympuspr", "stablehlo"), cache=None)
    assert len(report.provenance.stages["olympuspr"].ops) == 50_000
    bundle = report._repr_mimebundle_()
    assert output_size(bundle) <= MAX_OUTPUT_BYTES
    assert "capped at 5 MB" in bundle["text/plain"]
    cut = StageReport.from_json(json.loads(json.dumps(bundle[MEDIA_TYPE])))
    assert 1_000 < len(cut.provenance.stages["olympuspr"].ops) < 50_000


def test_a_function_in_a_folder_named_with_markup_gets_a_safe_report(tmp_path, first_report):
    folder = tmp_path / '<img src=x onerror="alert(1)">'
    folder.mkdir()
    (folder / "model.py").write_text(
        "import olympus.numpy as jnp\n\ndef f(x):\n    return jnp.sin(x) * 2\n"
    )
    spec = importlib.util.spec_from_file_location("model_in_markup_folder", folder / "model.py")
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    report = inspect(module.f, jnp.ones(3), cache=None)
    assert report.ok
    assert any(f.path.startswith(str(folder)) for f in report.provenance.files)
    assert_inert(report.html(), str(folder / "model.py"))
    assert_inert(report.html(standalone=True, interactive=False))
    assert_inert_with_view(report.html(standalone=True))
    again = StageReport.from_json(json.loads(json.dumps(report.to_json())))
    assert again.provenance.files == report.provenance.files
    assert_inert(first_report.html())


# Every dtype JAX has without x64 (x64's are below, in a child process), and every PRNG
# key implementation.
DTYPES = [
    "bool",
    "int8",
    "int16",
    "int32",
    "uint8",
    "uint16",
    "uint32",
    "float16",
    "bfloat16",
    "float32",
    "complex64",
] + sorted(
    n for n in dir(jnp) if n.startswith(("float8_", "float4_", "int2", "uint2", "int4", "uint4"))
)


@pytest.mark.parametrize("dtype", DTYPES)
def test_every_dtype_gets_a_report(dtype):
    x = jnp.zeros((2, 3), getattr(jnp, dtype) if dtype != "bool" else jnp.bool_)
    report = inspect(lambda v: jnp.reshape(v, (3, 2)), x, cache=None)
    assert report.ok, report.failure
    StageReport.from_json(json.loads(json.dumps(report.to_json())))
    assert_inert(report.html())


@pytest.mark.parametrize("impl", ["threefry2x32", "rbg", "unsafe_rbg"])
def test_every_prng_key_implementation_gets_a_report(impl):
    key = jax.random.key(0, impl=impl)
    report = inspect(lambda k: jax.random.normal(k, (3,)), key, cache=None)
    assert report.ok, report.failure
    StageReport.from_json(json.loads(json.dumps(report.to_json())))


def test_x64_dtypes_get_reports_in_a_process_with_x64():
    script = textwrap.dedent("""
        import json
        import olympus.numpy as jnp
        from olympus_jupyter import StageReport, inspect
        for dtype in (jnp.int64, jnp.uint64, jnp.float64, jnp.complex128):
            report = inspect(lambda v: v * 2, jnp.ones(3, dtype), cache=None)
            assert report.ok, report.failure
            assert dtype.dtype.name in report.stage_text("olympuspr") or \\
                jnp.dtype(dtype).name[0] in report.stage_text("olympuspr")
            StageReport.from_json(json.loads(json.dumps(report.to_json())))
        print("ok")
    """)
    proc = subprocess.run(
        [sys.executable, "-c", script],
        capture_output=True,
        text=True,
        timeout=deadline(300),
        env={**os.environ, "JAX_ENABLE_X64": "1"},
    )
    assert proc.returncode == 0 and proc.stdout.strip().endswith("ok"), proc.stderr[-2000:]
