"""What a frontend gets from ``_repr_mimebundle_``: plain strings and plain data.

The report builds its HTML as :class:`~olympus_jupyter.report.markup.Markup`, a
``str`` subclass that says the HTML was escaped where it was made. A frontend
serializes the display bundle as it knows types, and not every one knows a
subclass: marimo refuses any ``text/html`` that is not exactly a ``str`` ("Expected
string data for mime=text/html. Got object") and takes the app down with it. So
the forms leave Olympus as exact ``str`` (and the data form as the plain JSON data
it already is); the escaping was done when the HTML was built.

>>> from olympus_jupyter.report.markup import Markup
>>> bundle = display_bundle({"text/html": Markup("<b>x</b>"), "text/plain": lambda: "x"})
>>> {mime: type(form).__name__ for mime, form in bundle.items()}
{'text/html': 'str', 'text/plain': 'str'}
>>> display_bundle({"text/html": "<b>x</b>", "text/plain": "x"}, include={"text/plain"})
{'text/plain': 'x'}
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

__all__ = ["display_bundle"]


def display_bundle(
    forms: Mapping[str, Any | Callable[[], Any]],
    include: Collection[str] | None = None,
    exclude: Collection[str] | None = None,
) -> dict[str, Any]:
    """The forms (made ones, or functions that make one, called only for a form
    kept) that ``include`` and ``exclude`` keep, as IPython's ``_repr_mimebundle_``
    takes them, each text an exact ``str``."""
    out: dict[str, Any] = {}
    for mime, form in forms.items():
        if (include is not None and mime not in include) or (exclude and mime in exclude):
            continue
        made = form() if callable(form) else form
        out[mime] = str.__str__(made) if isinstance(made, str) else made
    return out
