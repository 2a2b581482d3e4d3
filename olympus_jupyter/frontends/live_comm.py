"""The kernel's side of "Load more from the kernel": a Jupyter comm target that
answers a capped report's view with the next items of a list it cut.

``%load_ext olympus_jupyter`` in a Jupyter kernel registers the target
:data:`TARGET` with ipykernel's comm manager and lets capped outputs keep their
report (:data:`~olympus_jupyter.report.live_reports.LIVE`). Each request is one
comm: the view opens it with ``{report, kind, part, offset, limit}`` as its data,
the kernel sends one message back (a page of items, or ``{"ok": false, "error"}``
saying what was wrong, see :func:`~olympus_jupyter.report.live_reports.answer`)
and closes it. Outside a kernel (terminal IPython, a script) nothing is registered
and no report is kept.

>>> class Shell: kernel = None   # terminal IPython: no kernel, nothing registered
>>> register(Shell())
False
"""

from __future__ import annotations

from typing import Any

from olympus_jupyter.report import live_reports

__all__ = ["TARGET", "register", "unregister", "on_open"]

#: The comm target's name (``src/livekernel.ts`` opens comms to it).
TARGET = "olympus.live"


def on_open(comm, open_msg: dict[str, Any]) -> None:
    """Answers the request in ``open_msg``'s data on ``comm``, then closes it."""
    try:
        request = open_msg.get("content", {}).get("data")
        reply = live_reports.answer(live_reports.LIVE, request)
    except Exception as e:  # noqa: BLE001 - the comm says it and the kernel goes on
        reply = {"ok": False, "error": f"The kernel could not answer: {type(e).__name__}: {e}"}
    try:
        comm.send(reply)
    finally:
        comm.close()


def _manager():
    import comm as comm_api

    return comm_api.get_comm_manager()


def register(ipython) -> bool:
    """Registers the comm target where ``ipython`` runs in a Jupyter kernel, and keeps
    capped reports from now on; returns whether it did."""
    if getattr(ipython, "kernel", None) is None:
        return False
    _manager().register_target(TARGET, on_open)
    live_reports.LIVE.enabled = True
    return True


def unregister(ipython) -> None:
    """Removes the target and forgets the kept reports (``%unload_ext``)."""
    live_reports.LIVE.enabled = False
    live_reports.LIVE.clear()
    if getattr(ipython, "kernel", None) is None:
        return
    try:
        _manager().unregister_target(TARGET, on_open)
    except KeyError:
        pass
