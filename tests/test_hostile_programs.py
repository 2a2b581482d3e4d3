"""Programs that carry markup, escapes and odd values in every place a program can
carry text: each gets a correct report whose every form shows that text as text
(HTML escaped, JSON intact, the text form plain), and earlier reports still render."""
import dataclasses
import functools
import json

import jax
import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus_jupyter import StageReport, inspect

from test_html_escaping import assert_inert

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
    ("ten-deep-pytree", lambda t: jax.tree.leaves(t)[0] * 2,
     (functools.reduce(lambda acc, _: [acc], range(10), jnp.ones(2)),), {}, None),
    ("many-arguments", lambda *xs: sum(xs), tuple(jnp.float32(k) for k in range(300)), {},
     None),
    ("int4", lambda x: x + 1, (jnp.ones(4, jnp.int4),), {}, None),
    ("float8", lambda x: x * 2, (jnp.ones(4, jnp.float8_e4m3fn),), {}, None),
    ("prng-key", lambda k: jax.random.uniform(k, (3,)), (jax.random.key(0),), {}, None),
    ("compiler-option-value", lambda x: x + 1, (jnp.ones(2),),
     {"compiler_options": {"xla_dump_hlo_module_re": MARKUP}}, None),
]


@pytest.fixture(scope="module")
def first_report():
    return inspect(lambda x: jnp.tanh(x), jnp.ones(2), cache=None)


@pytest.mark.parametrize("name, fun, args, options, shown", CASES, ids=[c[0] for c in CASES])
def test_a_hostile_or_extreme_program_gets_a_safe_report(name, fun, args, options, shown,
                                                          first_report):
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
