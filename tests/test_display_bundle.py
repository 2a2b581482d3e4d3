"""Every form a frontend gets is a plain ``str`` or plain JSON data (issue 35):
marimo, for one, takes a ``text/html`` that is a ``str`` subclass (the report's
``Markup``) for an object and fails the whole app on it."""

import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus_jupyter import compare, inspect
from olympus_jupyter.report import output_cap

PLAIN = (dict, list, str, int, float, bool, type(None))


def not_plain(value, path="") -> list[str]:
    """Where ``value`` holds anything but exact JSON types (a subclass included)."""
    if type(value) not in PLAIN:
        return [f"{path}: {type(value).__name__}"]
    if type(value) is dict:
        return [
            found
            for key, item in value.items()
            for found in (
                ([f"{path}/<key {key!r}>"] if type(key) is not str else [])
                + not_plain(item, f"{path}/{key}")
            )
        ]
    if type(value) is list:
        return [found for k, item in enumerate(value) for found in not_plain(item, f"{path}[{k}]")]
    return []


def f(x):
    return jnp.tanh(x * 2.0) + 1.0


def long_program(x):
    for _ in range(400):
        x = jnp.tanh(x) * 1.5 + jnp.sin(x)
    return x


def assert_plain(bundle):
    """``bundle`` holds the three forms, each plain all the way down."""
    assert {"text/html", "text/plain"} < set(bundle)  # and the data form
    assert len(bundle) == 3
    found = {mime: not_plain(form, mime) for mime, form in bundle.items()}
    assert found == {mime: [] for mime in found}


def test_a_reports_bundle_is_plain_with_the_extra_stages():
    report = inspect(f, np.ones((4, 4), np.float32), passes=True, costs=True, cache=None)
    assert type(report.html()).__name__ == "Markup"  # what the report builds with
    assert_plain(report._repr_mimebundle_())


def test_a_capped_bundle_is_plain(monkeypatch):
    # The capped form appends the live view's tail to the static HTML.
    monkeypatch.setattr(output_cap, "MAX_OUTPUT_BYTES", 300_000)
    report = inspect(long_program, jnp.ones((4, 4)), cache=None)
    bundle = report._repr_mimebundle_()
    assert output_cap.output_size(bundle) <= 300_000  # it was cut
    assert_plain(bundle)


@pytest.mark.parametrize("stage", ["traced", "lowered", "compiled"])
def test_a_stage_objects_bundle_is_plain(stage):
    traced = olympus.jit(f).trace(np.ones(3, np.float32))
    obj = {"traced": traced, "lowered": traced.lower(), "compiled": traced.lower().compile()}
    assert_plain(obj[stage]._repr_mimebundle_())


def test_a_comparisons_bundle_is_plain_and_keeps_include():
    a = inspect(f, np.ones(3, np.float32), cache=None)
    b = inspect(f, np.ones((2, 3), np.float32), cache=None)
    diff = compare(a, b)
    assert_plain(diff._repr_mimebundle_())
    assert list(diff._repr_mimebundle_(include={"text/plain"})) == ["text/plain"]
    assert "text/html" not in diff._repr_mimebundle_(exclude={"text/html"})
