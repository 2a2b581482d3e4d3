"""The Inspector where a frontend shows anywidgets but not ipywidgets: marimo.

marimo shows no ipywidget ("Jupyter widgets are not supported in marimo"), and the
:class:`~olympus_jupyter.frontends.inspector.Inspector` is made of them. It asks an
object for what to show through ``_display_()`` first, and the Inspector answers with
an anywidget (:func:`inspector_widget`) that draws the same controls in the page and
shows the report with the same view as everywhere else
(:mod:`olympus_jupyter.report.widget_view`). The Inspector itself stays the model:
an edit made in the page is set on the Inspector's own control (:func:`apply_edit`),
whose observers re-stage exactly as in JupyterLab; the widget then shows what the
Inspector shows (:func:`widget_state`): its controls, the new report, its status
line, why it re-staged, and a comparison as the diff's text.

Everything crosses as JSON text and is put in the page with the DOM's text
properties: nothing from the user's program is read as markup.

>>> import olympus.numpy as jnp
>>> from olympus_jupyter.frontends.inspector import Inspector
>>> inspector = Inspector(lambda x: jnp.sin(x), jnp.ones(3), stages="olympuspr")
>>> apply_edit(inspector, {"id": "arg0", "value": "f32[5]"})   # no comparison asked
''
>>> "f32[5]" in widget_state(inspector)["report"]
True
"""

from __future__ import annotations

import functools
import html.parser
import json
from collections.abc import Mapping
from typing import Any

import ipywidgets as W
import traitlets

from olympus_jupyter.frontends.options import form_options
from olympus_jupyter.report.interactive import viewer
from olympus_jupyter.report.widget_view import (
    StaticReport,
    anywidget_base,
    display_data_text,
    widget_module,
)

__all__ = [
    "EditError",
    "apply_edit",
    "display_object",
    "html_text",
    "inspector_widget",
    "widget_state",
]


class EditError(ValueError):
    """An edit the page sent that names no control of the Inspector, or a value the
    control cannot take."""


class _Text(html.parser.HTMLParser):
    """The text of a fragment of the Inspector's HTML, a list item on a line of its own."""

    def __init__(self):
        super().__init__(convert_charrefs=True)
        self.parts: list[str] = []

    def handle_starttag(self, tag, attrs):
        if tag == "li":
            self.parts.append("\n• ")

    def handle_data(self, data):
        self.parts.append(data)


def html_text(fragment: str) -> str:
    """The text a reader sees of ``fragment`` (the Inspector's status lines, made
    by :func:`~olympus_jupyter.report.markup.h`), each list item on a line.

    >>> html_text('<b>Re-traced because:</b><ul><li>x: f32[3] &rarr; f32[5]</li></ul>')
    'Re-traced because:\\n• x: f32[3] → f32[5]'
    """
    reader = _Text()
    reader.feed(str(fragment))
    reader.close()
    return "".join(reader.parts).strip()


def _is_choices(widget) -> bool:
    """Whether ``widget`` is the Inspector's row of checkboxes
    (:class:`~olympus_jupyter.frontends.inspector.Choices`: ``names`` and ``boxes``;
    not imported here, as the Inspector imports this module)."""
    return hasattr(widget, "names") and hasattr(widget, "boxes")


def _control(ident: str, widget, label: str, title: str = "") -> dict[str, Any]:
    """One control of the form, by the kind of the Inspector's widget behind it."""
    row: dict[str, Any] = {"id": ident, "label": label, "title": title}
    if _is_choices(widget):
        labels = [box.description for box in widget.boxes]
        options = [list(p) for p in zip(labels, widget.names)]
        return {**row, "kind": "choices", "options": options, "value": list(widget.value)}
    if isinstance(widget, W.Checkbox):
        return {**row, "kind": "checkbox", "value": bool(widget.value)}
    if isinstance(widget, W.Text):
        return {
            **row,
            "kind": "text",
            "value": widget.value,
            "placeholder": widget.placeholder,
            "disabled": bool(widget.disabled),
            "error": "",
        }
    # A widget of options to pick one of (ToggleButtons, Dropdown).
    options = [[str(k), v] for k, v in widget.options]
    return {**row, "kind": "choice", "options": options, "value": widget.value}


def form_of(inspector) -> list[dict[str, Any]]:
    """The Inspector's controls, as the page draws them: the arguments, then each
    option the option table gives a control (by its name), the lowered dialect
    shown, and "compare with…". Each has an ``id`` (what :func:`apply_edit`
    takes), a ``kind`` (``text``, ``checkbox``, ``choices``, ``choice``,
    ``compare``), a label, its value, and an error where it shows one."""
    rows: list[dict[str, Any]] = []
    for k, (editor, error) in enumerate(zip(inspector.editors, inspector.editor_errors)):
        row = _control(f"arg{k}", editor, editor.description, editor.tooltip or "")
        rows.append({**row, "error": html_text(error.value)})
    texts = []
    for name, control in form_options().items():
        rows.append(_control(name, inspector.controls[name], control.label, control.tooltip))
        if rows[-1]["kind"] == "text":
            texts.append(rows[-1])
    if texts:  # the options' error, after their boxes (as the Inspector shows it)
        texts[-1]["error"] = html_text(inspector.options_error.value)
    dialect = inspector.dialect
    rows.append(_control("dialect", dialect, dialect.description, dialect.tooltip or ""))
    compare = inspector.compare_with
    rows.append(
        {
            **_control("compare", compare, compare.description, compare.tooltip or ""),
            "kind": "compare",
            "disabled": bool(compare.disabled),
        }
    )
    return rows


def widget_state(inspector, comparison: str = "") -> dict[str, str]:
    """What the widget shows of ``inspector`` now, as its traits hold it (text)."""
    report = inspector.report
    data = "" if report is None else display_data_text(report)
    return {
        "form": json.dumps(form_of(inspector)),
        "report": data,
        "status": html_text(inspector.status.value),
        "why": html_text(inspector.why.value),
        "comparison": comparison,
    }


def apply_edit(inspector, edit: Mapping[str, Any]) -> str:
    """Sets the Inspector's control ``edit["id"]`` (an id of :func:`form_of`) to
    ``edit["value"]``, as a hand on that control in JupyterLab would (its observers
    re-stage); returns the comparison's text where the edit asked for one, else
    ``""``."""
    ident, value = edit.get("id"), edit.get("value")
    if not isinstance(ident, str):
        raise EditError(f"an edit names its control by id, got {ident!r}")
    if ident == "compare":
        numbers = [number for _, number in inspector.compare_with.options]
        if value not in numbers:
            raise EditError(f"no earlier specialization numbered {value!r} to compare with")
        inspector.compare_with.value = value
        diff = inspector.show_comparison()
        return diff.text() if diff is not None else "Nothing to compare with yet."
    if ident.startswith("arg") and ident[3:].isdigit():
        k = int(ident[3:])
        if k >= len(inspector.editors) or inspector.editors[k].disabled:
            raise EditError(f"no argument {ident!r} to edit")
        widget = inspector.editors[k]
    elif ident == "dialect":
        widget = inspector.dialect
    elif ident in inspector.controls:
        widget = inspector.controls[ident]
    else:
        raise EditError(f"the Inspector has no control {ident!r}")
    if _is_choices(widget):
        if not isinstance(value, list) or not all(isinstance(v, str) for v in value):
            raise EditError(f"{ident} takes a list of names, got {value!r}")
        widget.value = tuple(value)
    elif isinstance(widget, W.Checkbox):
        if not isinstance(value, bool):
            raise EditError(f"{ident} takes true or false, got {value!r}")
        widget.value = value
    else:
        widget.value = _text(ident, value)
    return ""


def _text(ident: str, value: Any) -> str:
    if not isinstance(value, str):
        raise EditError(f"{ident} takes text, got {value!r}")
    return value


# The Inspector's ``render``: its controls as a form, its status lines, the comparison
# as text, and the report (``showReport``, from widget_view's prelude). An edit is
# sent as JSON text in the ``edit`` trait, numbered so that the same edit twice is a
# change. Every text goes in with textContent or a property: nothing as markup.
INSPECTOR_RENDER = """
function el(doc, tag, props, ...children) {
  const node = doc.createElement(tag);
  for (const [k, v] of Object.entries(props || {})) {
    if (k === "className" || k === "textContent" || k === "title" || k === "value" ||
        k === "checked" || k === "disabled" || k === "placeholder" || k === "type") {
      node[k] = v;
    } else {
      node.setAttribute(k, String(v));
    }
  }
  for (const child of children) {
    if (child !== null && child !== undefined) node.append(child);
  }
  return node;
}

export default {
  async render({ model, el: host }) {
    const doc = host.ownerDocument;
    let sent = 0;
    const send = (id, value) => {
      sent += 1;
      model.set("edit", JSON.stringify({ id, value, n: sent }));
      model.save_changes();
    };
    const form = el(doc, "div", { className: "olympus-inspector-form" });
    const status = el(doc, "div", { className: "olympus-inspector-status", "aria-live": "polite" });
    const why = el(doc, "div", { className: "olympus-inspector-why" });
    const comparison = el(doc, "pre", { className: "olympus-inspector-comparison" });
    const report = el(doc, "div", { className: "olympus-inspector-report" });
    for (const node of [why, comparison]) node.style.whiteSpace = "pre-wrap";
    const style = el(doc, "style", { textContent: INSPECTOR_CSS });
    host.replaceChildren(style, el(doc, "div", { className: "olympus-inspector-widget" },
                                   form, status, why, comparison, report));

    const row = (label, ...controls) =>
      el(doc, "div", { className: "olympus-inspector-row" },
         el(doc, "span", { className: "olympus-inspector-label", textContent: label }), ...controls);

    function control(spec) {
      if (spec.kind === "text") {
        const input = el(doc, "input", {
          type: "text", value: spec.value, disabled: !!spec.disabled, title: spec.title || "",
          placeholder: spec.placeholder || "", "data-olympus-control": spec.id,
          "aria-label": spec.label,
        });
        input.addEventListener("change", () => send(spec.id, input.value));
        const error = spec.error
          ? el(doc, "span", { className: "olympus-inspector-error", textContent: spec.error })
          : null;
        return row(spec.label, input, error);
      }
      if (spec.kind === "checkbox") {
        const box = el(doc, "input", {
          type: "checkbox", checked: !!spec.value, "data-olympus-control": spec.id,
          "aria-label": spec.label,
        });
        box.addEventListener("change", () => send(spec.id, box.checked));
        return row(spec.label, box);
      }
      if (spec.kind === "choices") {
        const boxes = spec.options.map(([label, name]) => {
          const box = el(doc, "input", {
            type: "checkbox", checked: spec.value.includes(name),
            "data-olympus-control": `${spec.id}:${name}`, "aria-label": `${spec.label}: ${label}`,
          });
          box.addEventListener("change", () =>
            send(spec.id, spec.options.map(([, n]) => n).filter((n) =>
              n === name ? box.checked : spec.value.includes(n))));
          return el(doc, "label", {}, box, ` ${label} `);
        });
        return row(spec.label, ...boxes);
      }
      if (spec.kind === "choice" || spec.kind === "compare") {
        const select = el(doc, "select", {
          disabled: !!spec.disabled, "data-olympus-control": spec.id, "aria-label": spec.label,
        });
        for (const [label, value] of spec.options) {
          const option = el(doc, "option", { textContent: label, value: String(value) });
          option.selected = value === spec.value;
          select.append(option);
        }
        const pick = () => {
          const chosen = spec.options[select.selectedIndex];
          if (chosen) send(spec.id, chosen[1]);
        };
        if (spec.kind === "choice") {
          select.addEventListener("change", pick);
          return row(spec.label, select);
        }
        const button = el(doc, "button", {
          type: "button", textContent: "Compare", disabled: !!spec.disabled,
          "data-olympus-control": "compare-button",
        });
        button.addEventListener("click", pick);
        return row(spec.label, select, button);
      }
      return null;
    }

    function drawForm() {
      let specs = [];
      try {
        specs = JSON.parse(model.get("form") || "[]");
      } catch (err) {
        form.replaceChildren(el(doc, "p", { textContent: `Olympus: the controls do not read (${err}).` }));
        return;
      }
      form.replaceChildren(el(doc, "b", { textContent: "Arguments" }),
                           ...specs.map(control).filter(Boolean));
    }
    const drawText = () => {
      status.textContent = model.get("status");
      why.textContent = model.get("why");
      comparison.textContent = model.get("comparison");
      comparison.hidden = !model.get("comparison");
    };
    const drawReport = () => {
      const text = model.get("report");
      if (text) return showReport(report, text);
      report.replaceChildren();
    };
    model.on("change:form", drawForm);
    for (const name of ["status", "why", "comparison"]) model.on(`change:${name}`, drawText);
    model.on("change:report", drawReport);
    drawForm();
    drawText();
    await drawReport();
  },
};
"""


#: The form's layout: a column of labels, controls beside them (the page's colours;
#: constant: no report data goes in it).
INSPECTOR_CSS = """
.olympus-inspector-widget { display: flex; flex-direction: column; gap: 6px; font-size: 13px; }
.olympus-inspector-form { display: flex; flex-direction: column; gap: 4px; }
.olympus-inspector-row { display: flex; flex-wrap: wrap; align-items: center; gap: 4px 10px; }
.olympus-inspector-label { min-width: 9em; text-align: right; color: #59636e; }
.olympus-inspector-row input[type="text"] {
  min-width: 18em; padding: 2px 6px; border: 1px solid #8c959f; border-radius: 4px;
  font-family: ui-monospace, monospace; background: transparent; color: inherit;
}
.olympus-inspector-row select, .olympus-inspector-row button {
  padding: 2px 6px; border: 1px solid #8c959f; border-radius: 4px;
  background: transparent; color: inherit;
}
.olympus-inspector-error { color: #cf222e; }
.olympus-inspector-comparison { margin: 0; padding: 6px; border: 1px solid #d1d9e0; }
"""


@functools.cache
def _inspector_render() -> str:
    """:data:`INSPECTOR_RENDER` with its style sheet: put in the widget's element
    itself, as marimo draws a widget in a shadow root, which a page's style does
    not reach."""
    return f"const INSPECTOR_CSS = {json.dumps(INSPECTOR_CSS)};\n" + INSPECTOR_RENDER


@functools.cache
def _widget_class() -> type | None:
    """The widget's class, where anywidget is installed."""
    base = anywidget_base()
    if base is None:
        return None

    class InspectorWidget(base):  # type: ignore[valid-type, misc]  # anywidget.AnyWidget
        """The Inspector's controls and report, as an anywidget (see the module)."""

        form = traitlets.Unicode("[]").tag(sync=True)
        report = traitlets.Unicode("").tag(sync=True)
        status = traitlets.Unicode("").tag(sync=True)
        why = traitlets.Unicode("").tag(sync=True)
        comparison = traitlets.Unicode("").tag(sync=True)
        #: The page's last edit, JSON text: ``{"id": ..., "value": ..., "n": ...}``.
        edit = traitlets.Unicode("").tag(sync=True)

    return InspectorWidget


def inspector_widget(inspector) -> Any:
    """The anywidget showing ``inspector`` (see the module), or ``None`` where
    anywidget is not installed or the view was not built."""
    cls, v = _widget_class(), viewer()
    if cls is None or v is None:
        return None
    widget = cls(_esm=widget_module(v, _inspector_render()), **widget_state(inspector))

    def edited(change):
        try:
            edit = json.loads(change["new"])
            comparison = apply_edit(inspector, edit if isinstance(edit, dict) else {})
        except (ValueError, traitlets.TraitError) as e:  # what no control takes
            widget.status = f"Not applied: {e}"
            return
        # A comparison stays until the next is asked for, as in JupyterLab's Inspector.
        with widget.hold_sync():
            for name, value in widget_state(inspector, comparison or widget.comparison).items():
                setattr(widget, name, value)

    widget.observe(edited, names="edit")
    return widget


def display_object(inspector) -> Any:
    """What marimo shows for ``inspector``: its widget (:func:`inspector_widget`,
    made once and kept by the Inspector, so that it lives as long as the Inspector:
    marimo forgets a widget nothing holds, and with it the page's edits), else its
    report's static HTML (or its status line, before any report)."""
    widget = getattr(inspector, "_page_widget", None)
    if widget is None:
        widget = inspector._page_widget = inspector_widget(inspector)
    if widget is not None:
        return widget
    if inspector.report is not None:
        return StaticReport(inspector.report.html())
    return StaticReport(str(inspector.status.value))
