"""The folding sections a report's static HTML is made of: one per stage (see
:func:`section`), shared by :mod:`.html` and :mod:`.passes_html`."""

from __future__ import annotations

from olympus import stage_registry

from olympus_jupyter.report.markup import anchor_id, concat, h, tags

__all__ = ["section", "unavailable"]

#: A long part of the page: the list of the pieces of its HTML (see html.Pieces).
Pieces = list


def section(uid: str, key: str, title: str, body, meta: str = "", open_: bool = True) -> Pieces:
    """A folding section titled ``title`` around ``body`` (Markup, or lists of it).

    >>> concat(section("ol1", "cost", "Cost <analysis>", h("p", None, "x"), "2 rows"))
    Markup('<details class="stage" id="ol1-cost" open><summary><span class="title">Cost &lt;analysis&gt;</span> <span class="meta">2 rows</span></summary><p>x</p></details>')
    """
    start, end = tags("details", {"class": "stage", "id": anchor_id(uid, key), "open": open_})
    meta_html = concat(" ", h("span", {"class": "meta"}, meta)) if meta else None
    return [start, h("summary", None, h("span", {"class": "title"}, title), meta_html), body, end]


def unavailable(uid: str, key: str, reason: str) -> Pieces:
    """The section of a stage that could not be made, with the reason."""
    return section(
        uid,
        key,
        stage_registry.stage(key).title,
        h("p", {"class": "unavailable"}, f"Not available: {reason}."),
        "unavailable",
        open_=True,
    )
