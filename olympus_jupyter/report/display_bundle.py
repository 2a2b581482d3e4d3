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

Forms made plain once (:func:`plain_forms`) are given as they are, the same objects
at each display:

>>> forms = plain_forms({"text/html": Markup("<b>x</b>")})
>>> display_bundle(forms)["text/html"] is forms["text/html"]
True
"""

from __future__ import annotations

from collections.abc import Callable, Collection, Mapping
from typing import Any

__all__ = ["display_bundle", "plain_forms"]


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
        out[mime] = _plain(form() if callable(form) else form)
    return out


def plain_forms(forms: Mapping[str, Any]) -> dict[str, Any]:
    """``forms`` with each text an exact ``str`` (a made form kept for displaying
    again: the same objects each time)."""
    return {mime: _plain(form) for mime, form in forms.items()}


def _plain(form: Any) -> Any:
    """An exact ``str`` of a text (itself where it is one), else ``form``."""
    return str.__str__(form) if isinstance(form, str) else form
