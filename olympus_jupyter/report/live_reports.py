"""The parts of a capped output a live notebook can fetch from the kernel.

A report's notebook output is capped (:mod:`.output_cap`): the costliest source
lines, the first lines' journeys, the first lines of each stage. The report object
in the kernel keeps everything. Where a notebook's kernel has loaded the extension
(``%load_ext olympus_jupyter``), a capped output carries ``live``: an opaque random
token for the report and, for each list it cut, how much it shows of how much; the
JupyterLab view asks the kernel for the next items of a list over a comm
(:mod:`olympus_jupyter.frontends.live_comm`), and :func:`answer` reads them from
the report.

The kernel keeps the reports of the last few capped outputs (:class:`LiveReports`,
:data:`KEEP` of them): an older output's view says its report is no longer held,
and its capped note stays. Outside IPython nothing is kept (``LIVE.enabled`` is
false until the comm target is registered).

>>> reports = LiveReports(keep=2)
>>> reports.enabled = True
>>> class Report: costs = {"lines": [{"what": "line", "flops": float(k)} for k in range(5)]}
>>> token = reports.offer(Report())
>>> page = answer(reports, {"report": token, "kind": "costs", "part": "lines",
...                         "offset": 3, "limit": 10})
>>> [row["flops"] for row in page["items"]], page["total"], page["next"]
([3.0, 4.0], 5, None)
>>> answer(reports, {"report": "nope", "kind": "costs", "part": "lines",
...                  "offset": 0, "limit": 1})["error"][:48]
'This report is no longer held by the kernel (the'
"""

from __future__ import annotations

import collections
import secrets
from collections.abc import Mapping
from typing import Any

from olympus.provenance.clip import line_count
from olympus_jupyter.report.data_cap import MAX_MESSAGE, clip_message, json_size, kept_prefix

__all__ = [
    "KEEP",
    "MAX_PAGE_ITEMS",
    "MAX_PAGE_BYTES",
    "LiveReports",
    "LIVE",
    "answer",
    "capped_parts",
    "part_items",
]

#: Reports of capped outputs the kernel keeps for their views (the most recent).
KEEP = 4

#: The most items one request may ask for.
MAX_PAGE_ITEMS = 1_000

#: Bytes of JSON one answer carries at most (at least one item, however large).
MAX_PAGE_BYTES = 1_000_000

#: The lists a capped output may cut, by kind, that the kernel serves.
KINDS = {
    "costs": ("lines", "buffers", "collectives", "modules"),
    "passes": ("journeys",),
    "stage": (),  # any program stage's text, by its name: its lines
}


class LiveReports:
    """The reports of the last ``keep`` capped outputs, by token (least recently
    shown forgotten first). ``enabled``: whether reports are kept at all (the
    comm target that reads them is registered).

    >>> reports = LiveReports(keep=1)
    >>> reports.offer(object()) is None   # not enabled: nothing is kept
    True
    >>> reports.enabled = True
    >>> a, b = object(), object()
    >>> ta = reports.offer(a); tb = reports.offer(b)
    >>> reports.get(ta) is None, reports.get(tb) is b, len(reports)
    (True, True, 1)
    """

    def __init__(self, keep: int = KEEP):
        self.keep = keep
        self.enabled = False
        self._held: collections.OrderedDict[str, Any] = collections.OrderedDict()

    def __len__(self) -> int:
        return len(self._held)

    def offer(self, report) -> str | None:
        """A new token for ``report``, kept (``None`` where not :attr:`enabled`)."""
        if not self.enabled:
            return None
        token = secrets.token_urlsafe(16)
        self.hold(token, report)
        return token

    def hold(self, token: str, report) -> None:
        """Keeps ``report`` under ``token`` as the most recent (a report shown again)."""
        if not self.enabled:
            return
        self._held[token] = report
        self._held.move_to_end(token)
        while len(self._held) > self.keep:
            self._held.popitem(last=False)

    def get(self, token: str):
        """The report under ``token``, or ``None``."""
        return self._held.get(token)

    def clear(self) -> None:
        """Forgets every report."""
        self._held.clear()


#: This kernel's reports (enabled by :func:`~olympus_jupyter.frontends.live_comm.register`).
LIVE = LiveReports()


def _stage_texts(report) -> dict[str, str]:
    out = dict(getattr(report, "texts", None) or {})
    provenance = getattr(report, "provenance", None)
    if provenance is not None:
        out.update({name: stage.text for name, stage in provenance.stages.items()})
    return out


def part_items(report, kind: str, part: str) -> list[Any] | None:
    """Every item of list ``part`` of ``kind`` as the report holds it (uncapped),
    in the order the capped output keeps them first; ``None`` where it has none.

    >>> class R: passes = {"journeys": [{"line": 1}]}; costs = None
    >>> part_items(R(), "passes", "journeys"), part_items(R(), "costs", "lines")
    ([{'line': 1}], None)
    """
    if kind == "costs":
        costs = getattr(report, "costs", None)
        if costs is None or part not in KINDS["costs"]:
            return None
        items = list(costs.get(part) or ())
        if part == "lines":  # the source lines; what no line made is always shown
            return [r for r in items if r.get("what") == "line"]
        if part == "modules":  # as the cap orders them: the costliest first
            return sorted(items, key=lambda m: (-m["flops"], -m["bytes"]))
        return items
    if kind == "passes":
        passes = getattr(report, "passes", None)
        if passes is None or part not in KINDS["passes"]:
            return None
        return list(passes.get(part) or ())
    if kind == "stage":
        text = _stage_texts(report).get(part)
        if text is None:
            return None
        lines = (
            text.split("\n") if text else []
        )  # as line_count counts them: a last newline ends a line
        return lines[:-1] if text.endswith("\n") else lines
    return None


def capped_parts(whole, cut) -> list[dict[str, Any]]:
    """What the capped report ``cut`` shows of each list of ``whole`` it cut: kind,
    part, items ``shown`` (its first ones) and ``total``.

    >>> class W: costs = {"lines": [{"what": "line"}] * 5}; passes = None; texts = {}
    >>> class C: costs = {"lines": [{"what": "line"}] * 2}; passes = None; texts = {}
    >>> capped_parts(W(), C())
    [{'kind': 'costs', 'part': 'lines', 'shown': 2, 'total': 5}]
    """
    out = []
    whole_texts, cut_texts = _stage_texts(whole), _stage_texts(cut)
    for kind, parts in KINDS.items():
        if kind == "stage":  # counted, not split: a stage text may be tens of megabytes
            counts = {
                name: (line_count(cut_texts.get(name) or ""), line_count(text))
                for name, text in whole_texts.items()
            }
        else:
            counts = {}
            for part in parts:
                every = part_items(whole, kind, part)
                if every:
                    counts[part] = (len(part_items(cut, kind, part) or ()), len(every))
        for part, (shown, total) in counts.items():
            if shown < total:
                out.append({"kind": kind, "part": part, "shown": shown, "total": total})
    return out


class RequestError(ValueError):
    """A request the kernel cannot answer: its message says why."""


def _check(request: Any) -> tuple[str, str, str, int, int]:
    if not isinstance(request, Mapping):
        raise RequestError(
            "A request is an object {report, kind, part, offset, limit}; "
            f"got {type(request).__name__}."
        )
    missing = [k for k in ("report", "kind", "part", "offset", "limit") if k not in request]
    if missing:
        raise RequestError(f"The request lacks {', '.join(missing)}.")
    report, kind, part = request["report"], request["kind"], request["part"]
    offset, limit = request["offset"], request["limit"]
    if not isinstance(report, str) or not 0 < len(report) <= 64:
        raise RequestError("'report' is the token of a capped output (a short string).")
    if kind not in KINDS:
        raise RequestError(f"Unknown kind {str(kind)[:40]!r}: one of {', '.join(KINDS)}.")
    if not isinstance(part, str) or not 0 < len(part) <= 64:
        raise RequestError("'part' is the name of a list (a short string).")
    if KINDS[kind] and part not in KINDS[kind]:
        raise RequestError(
            f"Unknown part {part[:40]!r} of {kind}: one of {', '.join(KINDS[kind])}."
        )
    for name, value, low in (("offset", offset, 0), ("limit", limit, 1)):
        if isinstance(value, bool) or not isinstance(value, int) or value < low:
            raise RequestError(f"'{name}' is a whole number of at least {low}; got {value!r}.")
    return report, kind, part, offset, min(limit, MAX_PAGE_ITEMS)


def answer(reports: LiveReports, request: Any) -> dict[str, Any]:
    """The answer to ``request`` (``{report, kind, part, offset, limit}``): the items
    ``offset`` onwards of the list (``limit`` of them at most, and at most
    :data:`MAX_PAGE_BYTES` of JSON), ``total`` and ``next`` (the offset of the
    next page, ``None`` at the end); or ``{"ok": False, "error": ...}`` saying
    what was wrong. Never raises for a bad request.
    """
    try:
        token, kind, part, offset, limit = _check(request)
    except RequestError as e:
        return {"ok": False, "error": str(e)}
    report = reports.get(token)
    if report is None:
        return {
            "ok": False,
            "error": "This report is no longer held by the kernel (the kernel keeps "
            f"the reports of its last {reports.keep} capped outputs, and forgets them "
            "all when it restarts): run the cell again to fetch its details.",
        }
    try:
        items = part_items(report, kind, part)
    except Exception as e:  # noqa: BLE001 - a report of an odd shape: said, not raised
        return {"ok": False, "error": clip_message(f"Reading {kind} {part} failed: {e}", 2_000)}
    if items is None:
        return {"ok": False, "error": f"This report has no {kind} {part}."}
    page = items[offset : offset + limit]
    if kind == "stage":
        page = [clip_message(line, MAX_MESSAGE) for line in page]
    kept = max(kept_prefix(page, MAX_PAGE_BYTES), min(len(page), 1))
    page = page[:kept]
    end = offset + len(page)
    out = {
        "ok": True,
        "report": token,
        "kind": kind,
        "part": part,
        "offset": offset,
        "items": page,
        "total": len(items),
        "next": end if end < len(items) else None,
    }
    if json_size(out) > 2 * MAX_PAGE_BYTES:  # one item larger than a page: said
        return {"ok": False, "error": f"Item {offset} of {kind} {part} is too large to send."}
    return out
