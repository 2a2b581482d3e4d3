"""How Olympus stage objects display themselves in a notebook, without importing Jupyter.

A display package registers a renderer under the ``olympus.display`` entry point
group (``olympus_jupyter`` does, as ``stages``). ``Traced``, ``Lowered`` and
``Compiled`` ask it for their display bundle; with no renderer installed they
display as their ``repr``.

>>> renderer() is None or callable(renderer())
True
"""

from __future__ import annotations

import functools
import logging
from importlib import metadata

GROUP = "olympus.display"


@functools.lru_cache(maxsize=1)
def renderer():
    """The installed stage renderer: ``f(stage, include, exclude) -> dict``, or None."""
    for entry in metadata.entry_points(group=GROUP):
        if entry.name == "stages":
            try:
                return entry.load()
            except Exception:  # a broken plugin must not break display: logged
                # Said once (the answer is cached): the stages show as their repr.
                logging.getLogger(__name__).warning(
                    "the %s renderer %r failed to load: stages display as text",
                    GROUP,
                    entry.value,
                    exc_info=True,
                )
                return None
    return None


def mimebundle(stage, include=None, exclude=None):
    """The display bundle of ``stage`` from the installed renderer, or None."""
    render = renderer()
    if render is None:
        return None
    return render(stage, include=include, exclude=exclude)
