"""The report as an anywidget: the interactive view where a frontend runs widgets, not an output's scripts.

marimo shows an output's ``text/html`` without running its scripts, so there the
report's HTML form stays the static report. marimo runs front-end code through
anywidget instead (as JupyterLab, Notebook 7, VS Code and Colab also do), and it
asks an object for what to show through its display protocol, ``_display_()``,
before anything else. :meth:`StageReport._display_` gives it :func:`display_object`:

- where anywidget is installed (a dependency of Olympus), a ``ReportWidget``
  (:func:`report_widget`):
  the same view as everywhere else (``olympus_jupyter/static/viewer.js``, the
  JupyterLab extension's view bundled with CodeMirror and its styles), mounted on
  the widget's element with the report's data, the data a notebook would keep (cut
  to the output cap as it is);
- else, or where the view was not built, the static report, as ``text/html``
  through marimo's ``_mime_()`` protocol.

The data goes to the page as JSON text in a widget trait, and the view reads it with
``JSON.parse``: never as markup. IPython does not ask for ``_display_``: a Jupyter
notebook shows the display bundle (:meth:`StageReport._repr_mimebundle_`), as before.

>>> from olympus_jupyter import inspect
>>> shown = inspect(lambda x: x * 2, 1.0)._display_()
>>> type(shown).__name__ in ("ReportWidget", "StaticReport")
True
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import json
from typing import Any

from olympus_jupyter.report.interactive import Viewer, viewer

__all__ = [
    "StaticReport",
    "anywidget_base",
    "display_data_text",
    "display_object",
    "report_widget",
    "widget_module",
]


@dataclasses.dataclass(frozen=True)
class StaticReport:
    """The static report, for a frontend's ``_mime_()`` protocol (marimo's), as an
    exact ``str`` (marimo refuses a subclass: :mod:`.display_bundle`).

    >>> from olympus_jupyter.report.markup import Markup
    >>> type(StaticReport(Markup("<p>x</p>"))._mime_()[1]) is str
    True
    """

    html: str

    def __post_init__(self):
        object.__setattr__(self, "html", str.__str__(self.html))

    def _mime_(self) -> tuple[str, str]:
        return "text/html", self.html


# The modules anywidget imports start with the view's script (run once per page and
# version, as the HTML form's loader runs it, sharing its table of versions) and a
# function that shows a report's data (JSON text) in an element; then each widget's
# own ``render``.
_PRELUDE_HEAD = "const VERSION = {version};\n"
_PRELUDE = """
function olympusViewer() {
  const w = globalThis;
  const made = w.__olympusViewers || (w.__olympusViewers = {});
  if (!made[VERSION]) {
    runViewer.call(w);
    made[VERSION] = Promise.resolve(w.olympusViewer);
  }
  return made[VERSION];
}

// Shows the report whose data is the JSON text `text` in `host` (emptied first),
// read with JSON.parse: never as markup. What fails is said in the element, as text.
async function showReport(host, text) {
  const say = (message) => {
    const p = host.ownerDocument.createElement("p");
    p.textContent = message;
    host.replaceChildren(p);
  };
  host.replaceChildren();
  for (const name of [...host.getAttributeNames()]) {
    if (name.startsWith("data-olympus")) host.removeAttribute(name);
  }
  let data;
  try {
    data = JSON.parse(text);
  } catch (err) {
    say(`Olympus: this report's data does not read (${err}).`);
    return;
  }
  try {
    const api = await olympusViewer();
    api.mount(host, data);
  } catch (err) {
    say(`Olympus: no interactive view here (${err}); report.html() has the static report.`);
  }
}
"""

#: The report widget's ``render``: the report, shown again when its data changes.
REPORT_RENDER = """
export default {
  async render({ model, el }) {
    const show = () => showReport(el, model.get("data"));
    model.on("change:data", show);
    await show();
    return () => model.off("change:data", show);
  },
};
"""


@functools.lru_cache(maxsize=4)
def widget_module(v: Viewer, render: str = REPORT_RENDER) -> str:
    """The ES module of a widget for view ``v``: its script as a function, run once
    per page, ``showReport(element, json_text)``, then ``render`` (the widget's
    ``export default``; the report widget's by default)."""
    return (
        _PRELUDE_HEAD.format(version=json.dumps(v.version))
        + "function runViewer() {\n"
        + v.code()
        + "\n}\n"
        + _PRELUDE
        + render
    )


@functools.cache
def anywidget_base() -> type | None:
    """anywidget's ``AnyWidget``, where it is installed, else ``None`` (imported only
    when a frontend asks for a widget: importing it costs a notebook's start)."""
    if importlib.util.find_spec("anywidget") is None:
        return None
    import anywidget

    return anywidget.AnyWidget


def display_data_text(report) -> str:
    """The data form of ``report``'s display (cut to the output cap, as a notebook
    keeps it) as compact JSON text: what a widget shows. Made once per report."""
    from olympus_jupyter.report.data import MEDIA_TYPE, compact_json

    return report._memoized(
        "display-data-text", lambda: compact_json(report._repr_mimebundle_()[MEDIA_TYPE])
    )


@functools.cache
def _widget_class() -> type | None:
    """The report widget's class, made where anywidget is installed."""
    base = anywidget_base()
    if base is None:
        return None
    import traitlets

    class ReportWidget(base):  # type: ignore[valid-type, misc]  # anywidget.AnyWidget
        """An Olympus report's interactive view, as an anywidget."""

        #: The report's data (the ``application/vnd.olympus.stages+json`` form), as
        #: compact JSON text.
        data = traitlets.Unicode("").tag(sync=True)

    return ReportWidget


def report_widget(data_text: str, v: Viewer) -> Any:
    """A ``ReportWidget`` showing the report whose data is the JSON text
    ``data_text``, with view ``v``; ``None`` where anywidget is not installed."""
    cls = _widget_class()
    if cls is None:
        return None
    return cls(_esm=widget_module(v), data=data_text)


def display_object(report) -> Any:
    """What a frontend's display protocol shows for ``report``: its widget
    (:func:`report_widget`) where the view was built and anywidget is installed,
    else its static HTML."""
    v = viewer()
    if v is not None and _widget_class() is not None:
        return report_widget(display_data_text(report), v)
    return StaticReport(report.html())
