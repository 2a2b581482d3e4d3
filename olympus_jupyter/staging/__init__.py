"""Staging: run a function's stages (trace, lower, compile), time them, cache them.

The bottom layer of ``olympus_jupyter``: it imports ``olympus`` and nothing above it
(reports, frontends). :func:`run_stages` stages a function once;
:class:`~olympus_jupyter.staging.cache.StageCache` keeps stages per specialization
and re-makes only what a change needs; :mod:`~olympus_jupyter.staging.specialization`
says why a function would recompile.

>>> run_stages(lambda x: x * 2, (1.0,)).compiled is not None
True
"""

from olympus_jupyter.staging.runner import (
    StagedRun,
    StageFailure,
    StagingError,
    UserFrame,
    as_wrapped,
    run_stages,
)

__all__ = ["run_stages", "as_wrapped", "StagedRun", "StageFailure", "StagingError", "UserFrame"]
