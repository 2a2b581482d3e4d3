"""The Inspector as an anywidget, for marimo (``olympus_jupyter/frontends/inspector_widget.py``):
its form, the edits the page sends, and the widget's traits after each. The page
itself is driven in a real marimo app by
``tests/browser/test_view_outside_lab.py::test_the_inspector_works_in_marimo``."""

from __future__ import annotations

import json

import pytest

import olympus.numpy as jnp
from olympus_jupyter.frontends import inspector_widget as iw
from olympus_jupyter.frontends.inspector import Inspector
from olympus_jupyter.report import widget_view

from built_view import needs_view


def f(x, scale):
    return jnp.sin(x) * scale


def make():
    return Inspector(f, jnp.ones((4, 4)), 2.0, static_argnums=1, stages="olympuspr")


def by_id(inspector):
    return {row["id"]: row for row in iw.form_of(inspector)}


def test_the_form_lists_every_control_by_the_id_an_edit_names():
    rows = by_id(make())
    assert [rows["arg0"]["value"], rows["arg1"]["value"]] == ["f32[4,4]", "2.0"]
    assert rows["arg1"]["label"] == "scale (static)"
    assert rows["stages"]["value"] == ["olympuspr"]
    assert ["tpu", "tpu"] in rows["platforms"]["options"] and rows["platforms"]["value"] == []
    assert rows["dialect"]["kind"] == "choice" and rows["debug_info"]["value"] is True
    assert rows["debug_info"]["label"] == "debug info"  # the option table's label
    assert rows["compare"]["disabled"] is True  # nothing earlier to compare with
    assert rows["target"]["kind"] == "choice" and rows["target"]["value"] == ""
    assert ["this machine", ""] in rows["target"]["options"]
    assert ["v5e:4x4", "v5e:4x4"] in rows["target"]["options"]
    assert set(rows) == {
        "arg0",
        "arg1",
        "platforms",
        "target",
        "stages",
        "dialect",
        "debug_info",
        "compiler_options",
        "passes",
        "compare",
    }


def test_an_edit_sets_the_inspectors_own_control_which_restages():
    inspector = make()
    assert iw.apply_edit(inspector, {"id": "arg0", "value": "f32[8,2]"}) == ""
    assert inspector.editors[0].value == "f32[8,2]"
    state = iw.widget_state(inspector)
    assert "f32[8,2]" in state["report"]
    assert state["status"].startswith("✓ trace")
    assert "shape (4, 4) → (8, 2)" in state["why"]
    iw.apply_edit(inspector, {"id": "arg1", "value": "3.0"})  # a static value: re-traced
    assert "3.0" in inspector.report.stage_text("olympuspr")
    assert "argument 'scale': static value 2.0 → 3.0" in iw.widget_state(inspector)["why"]


def test_a_bad_value_is_shown_beside_its_box_and_nothing_restaged():
    inspector = make()
    before = inspector.report
    iw.apply_edit(inspector, {"id": "arg0", "value": "f32[4,x]"})
    assert inspector.report is before
    assert "whole numbers" in by_id(inspector)["arg0"]["error"]
    assert iw.widget_state(inspector)["status"].startswith("Not re-staged")
    inspector = make()
    iw.apply_edit(inspector, {"id": "compiler_options", "value": "no equals sign"})
    # The options' error, after both of their boxes (as the Inspector shows it).
    assert "no equals sign" in by_id(inspector)["passes"]["error"]


def test_compare_gives_the_diffs_text():
    inspector = make()
    iw.apply_edit(inspector, {"id": "arg0", "value": "f32[8,4]"})
    number = by_id(inspector)["compare"]["options"][0][1]
    text = iw.apply_edit(inspector, {"id": "compare", "value": number})
    assert text.startswith("Olympus diff:") and "f32[4,4]" in text and "f32[8,4]" in text


@pytest.mark.parametrize(
    "edit, message",
    [
        ({"id": "nothing", "value": 1}, "no control 'nothing'"),
        ({"value": 1}, "names its control by id"),
        ({"id": "arg9", "value": "f32[2]"}, "no argument 'arg9'"),
        ({"id": "arg0", "value": 3}, "arg0 takes text"),
        ({"id": "stages", "value": "olympuspr"}, "takes a list of names"),
        ({"id": "dialect", "value": None}, "dialect takes text"),
        ({"id": "debug_info", "value": "yes"}, "takes true or false"),
        ({"id": "compare", "value": 7}, "no earlier specialization numbered 7"),
    ],
)
def test_an_edit_no_control_takes_is_refused_with_what_was_wrong(edit, message):
    with pytest.raises(iw.EditError, match=message):
        iw.apply_edit(make(), edit)


@needs_view
def test_the_widget_follows_the_page_s_edits():
    inspector = make()
    widget = inspector._display_()
    assert inspector._display_() is widget  # one widget, kept by the Inspector
    assert json.loads(widget.report)["name"] == "f"
    widget.edit = json.dumps({"id": "arg0", "value": "f32[2,3]", "n": 1})  # as the page sets it
    assert "f32[2,3]" in widget.report and "(4, 4) → (2, 3)" in widget.why
    assert json.loads(widget.form)[0]["value"] == "f32[2,3]"
    number = json.loads(widget.form)[-1]["options"][0][1]
    widget.edit = json.dumps({"id": "compare", "value": number, "n": 2})
    assert widget.comparison.startswith("Olympus diff:")
    widget.edit = json.dumps({"id": "arg0", "value": "f32[3,3]", "n": 3})
    assert widget.comparison.startswith("Olympus diff:")  # kept until the next is asked for
    widget.edit = "not json"
    assert widget.status.startswith("Not applied:")
    widget.edit = json.dumps({"id": "debug_info", "value": "no", "n": 4})
    assert widget.status == "Not applied: debug_info takes true or false, got 'no'"
    assert "showReport(report, text)" in widget._esm and "INSPECTOR_CSS" in widget._esm


def test_without_anywidget_marimo_gets_the_report_s_static_html(monkeypatch):
    monkeypatch.setattr(iw, "_widget_class", lambda: None)
    inspector = make()
    shown = inspector._display_()
    assert isinstance(shown, widget_view.StaticReport)
    assert shown._mime_() == ("text/html", inspector.report.html())


def test_html_text_reads_what_a_reader_sees():
    assert iw.html_text("<i>Not re-staged: fix &lt;x&gt;.</i>") == "Not re-staged: fix <x>."
    assert iw.html_text("") == ""
