"""What a widget of Olympus shows in its ``Output`` area, set as the area's outputs.

Displaying inside ``with output:`` routes the kernel's display messages to the area by
message id, which clients that run notebooks headless (nbclient, and so nbconvert's
execution and nbgrader's autograding) follow by waiting on the cell until its time
limit: a cell that made or updated a widget then takes its whole time limit.
Setting the area's ``outputs`` sends the same content as widget state instead.

>>> import ipywidgets as W
>>> area = W.Output()
>>> show_in(area, {"text/plain": "hello"})
>>> area.outputs[0]["data"]
{'text/plain': 'hello'}
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

__all__ = ["show_in"]


def show_in(area, shown: Any) -> None:
    """Makes ``shown`` the only content of Output widget ``area``: a mime bundle (a
    mapping of media type to data), or an object with ``_repr_mimebundle_`` (a report,
    a diff)."""
    if isinstance(shown, Mapping):
        data = dict(shown)
    else:
        found = shown._repr_mimebundle_()
        data = dict(found[0] if isinstance(found, tuple) else found)
    area.outputs = ({"output_type": "display_data", "data": data, "metadata": {}},)
