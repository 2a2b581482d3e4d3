"""The report as an anywidget (``olympus_jupyter/report/widget_view.py``): what
marimo's display protocol gets. The browser test that drives a real marimo app is
``tests/browser/test_view_outside_lab.py::test_marimo_shows_a_report_as_the_live_view``."""

from __future__ import annotations

import json

import pytest

import olympus.numpy as jnp
from olympus_jupyter import inspect
from olympus_jupyter.report import interactive, widget_view
from olympus_jupyter.report.data import MEDIA_TYPE

from built_view import needs_view

#: A name that would end a script element, were it ever put in markup.
HOSTILE = "f</script><script>window.__pwned=1</script>"


def f(x):
    return jnp.tanh(jnp.sin(x) @ x.T)


f.__name__ = f.__qualname__ = HOSTILE


@pytest.fixture(scope="module")
def report():
    return inspect(f, jnp.ones((4, 4)), cache=None)


@needs_view
def test_marimo_gets_a_widget_holding_the_data_a_notebook_keeps(report):
    import anywidget

    shown = report._display_()
    assert isinstance(shown, anywidget.AnyWidget)
    # The data as JSON text, read back as the view reads it: the display's data
    # form (cut to the output cap as a notebook's is), the hostile name as data.
    assert json.loads(shown.data) == report._repr_mimebundle_()[MEDIA_TYPE]
    assert json.loads(shown.data)["name"] == HOSTILE
    assert shown.get_state()["data"] == shown.data  # a trait the page is sent


@needs_view
def test_the_widget_module_runs_the_built_view_once_per_page_then_mounts_it(report):
    v = interactive.viewer()
    module = report._display_()._esm
    assert module == widget_view.widget_module(v)
    assert v.code() in module  # the view itself, as the HTML form's loader unpacks it
    assert f"const VERSION = {json.dumps(v.version)};" in module
    assert "export default" in module and "api.mount(host, data)" in module
    assert "JSON.parse(text)" in module  # read as JSON, never as markup
    assert 'showReport(el, model.get("data"))' in module
    assert "innerHTML" not in module.replace(v.code(), "")


def test_without_anywidget_marimo_gets_the_static_report(report, monkeypatch):
    monkeypatch.setattr(widget_view, "_widget_class", lambda: None)
    shown = report._display_()
    assert isinstance(shown, widget_view.StaticReport)
    mime, html = shown._mime_()
    assert mime == "text/html" and type(html) is str
    assert html == report.html() and "<script" not in html


def test_without_the_built_view_marimo_gets_the_static_report(report, monkeypatch):
    monkeypatch.setattr(widget_view, "viewer", lambda: None)
    shown = report._display_()
    assert isinstance(shown, widget_view.StaticReport)
    assert shown._mime_() == ("text/html", report.html())


def test_ipython_never_asks_for_the_widget(report, monkeypatch):
    """A Jupyter notebook shows the display bundle, as before: IPython's formatter
    does not call ``_display_``."""
    from IPython.core.formatters import DisplayFormatter

    asked = []
    monkeypatch.setattr(widget_view, "display_object", lambda r: asked.append(r))
    data, _ = DisplayFormatter().format(report)
    assert MEDIA_TYPE in data and "text/html" in data
    assert asked == []
