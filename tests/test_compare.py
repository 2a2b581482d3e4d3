"""Comparing two reports of one function: the diff bundle."""

import html.parser
import json

import pytest

import olympus.numpy as jnp
from olympus_jupyter import StageDiff, compare, inspect
from olympus_jupyter.report.compare import MEDIA_TYPE


def f(x):
    return jnp.sin(x) * 2


def test_two_signatures_differ_in_every_text_stage():
    diff = compare(
        inspect(f, jnp.ones(3)), inspect(f, jnp.ones((2, 3))), labels=("f32[3]", "f32[2,3]")
    )
    assert isinstance(diff, StageDiff)
    assert diff.changed_stages() == ("olympuspr", "stablehlo", "hlo", "compiled")
    bundle = diff._repr_mimebundle_()
    data = bundle[MEDIA_TYPE]
    assert data["schema"] == "olympus.diff" and data["version"] == 1
    assert data["labels"] == ["f32[3]", "f32[2,3]"]
    assert data["before"]["schema"] == data["after"]["schema"] == "olympus.stages"
    json.dumps(data)
    assert "ol-old" in bundle["text/html"] and "ol-new" in bundle["text/html"]
    assert "olympuspr -" in bundle["text/plain"]


def test_same_report_has_no_changes_and_long_runs_fold():
    def g(x):
        for _ in range(6):
            x = jnp.tanh(x @ x)
        return x

    a = inspect(g, jnp.ones((4, 4)), cache=None)
    diff = compare(a, a)
    assert diff.changed_stages() == ()
    assert "unchanged lines</summary>" in diff.html()


def test_a_change_in_the_function_is_marked():
    def before(x):
        return jnp.sin(x)

    def after(x):
        return jnp.cos(x)

    diff = compare(inspect(before, 1.0), inspect(after, 1.0))
    page = diff.html()
    assert "stablehlo.sine" in page and "stablehlo.cosine" in page


def test_escapes_everything():
    def h(x):
        return x + 1

    h.__name__ = "<script>alert(1)</script>"
    diff = compare(inspect(h, 1.0, cache=None), inspect(h, 2, cache=None), labels=("<b>", "<i>"))

    class Tags(html.parser.HTMLParser):
        found = set()

        def handle_starttag(self, tag, attrs):
            self.found.add(tag)

    parser = Tags()
    parser.feed(diff.html())
    assert not {"script", "b", "i"} & parser.found


def test_bad_input():
    report = inspect(f, 1.0)
    with pytest.raises(TypeError, match="two StageReports"):
        compare(report, f)
    with pytest.raises(ValueError, match="two strings"):
        compare(report, report, labels=("a",))
