"""Jupyter inspection for Olympus: see what each compilation stage made of a function.

In a notebook: ``%load_ext olympus_jupyter`` then ``%olympus_lower f(x, y)``. From
Python: ``olympus_jupyter.inspect(f, x, y)`` returns a :class:`StageReport` that
displays itself (JSON for JupyterLab, static HTML anywhere, a text summary) and
saves as standalone HTML.

>>> import olympus_jupyter
>>> olympus_jupyter.inspect(lambda x: x + 1, 1.0).ok
True
"""

import os as _os

from olympus.errors import register_internal as _register_internal

_register_internal(_os.path.dirname(__file__))

# The imports after: this package's frames are JAX-internal before any of its code runs.
from olympus_jupyter.report.compare import StageDiff, compare  # noqa: E402
from olympus_jupyter.frontends.inspection import ReportCache, inspect  # noqa: E402
from olympus_jupyter.report.stage_report import MEDIA_TYPE, StageReport  # noqa: E402

__all__ = [
    "inspect",
    "compare",
    "StageReport",
    "StageDiff",
    "ReportCache",
    "MEDIA_TYPE",
    "Inspector",
    "Stepper",
    "load_ipython_extension",
]


def __getattr__(name):
    # The widgets import ipywidgets: only when asked for.
    if name == "Inspector":
        from olympus_jupyter.frontends.inspector import Inspector

        return Inspector
    if name == "Stepper":
        from olympus_jupyter.frontends.stepper import Stepper

        return Stepper
    raise AttributeError(f"module 'olympus_jupyter' has no attribute {name!r}")


def _jupyter_labextension_paths():
    """Where JupyterLab finds the prebuilt extension (``jupyter labextension develop``)."""
    return [{"src": "labextension", "dest": "olympus-jupyter"}]


def load_ipython_extension(ipython):
    """``%load_ext olympus_jupyter``: registers the ``%olympus_lower`` magics."""
    from olympus_jupyter.frontends.magics import register

    register(ipython)


def unload_ipython_extension(ipython):
    from olympus_jupyter.frontends.magics import unregister

    unregister(ipython)
