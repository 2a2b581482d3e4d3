"""Stage objects kept per specialization: re-trace, re-lower, re-compile only what must change.

A change of argument shape, dtype, weak type, sharding or static value needs a new
trace (and everything after it); a change of lowering platforms, a new lowering
(and compile); a change of compiler options, a new compile only. Anything else
(debug info on or off, which stages to show) needs no new stage at all.

>>> import olympus.numpy as jnp
>>> from olympus_jupyter.staging.specialization import Specialization
>>> cache = StageCache(lambda x: jnp.sin(x))
>>> x = jnp.ones(3)
>>> run = cache.stage(Specialization.of(cache.fun, (x,)), (x,))
>>> run = cache.stage(Specialization.of(cache.fun, (x,), compiler_options={"xla_backend_optimization_level": 0}), (x,))
>>> cache.counts
{'trace': 1, 'lower': 1, 'compile': 2}
"""

from __future__ import annotations

import functools
from collections.abc import Mapping, Sequence
from typing import Any

from olympus import platforms as _platforms
from olympus.stages import Wrapped

from olympus_jupyter.staging.lru import LRU
from olympus_jupyter.staging.specialization import Specialization
from olympus_jupyter.staging.runner import (
    STEPS,
    Placed,
    StagedRun,
    StageRequest,
    StagingError,
    _timed,
    advance,
    as_wrapped,
    run_from_stage,
)
from olympus_jupyter.staging.targets import stage_of


class StageCache:
    """The stages of one function for each specialization seen (the last ``size`` of each)."""

    def __init__(
        self,
        fun,
        *,
        static_argnums: Sequence[int] = (),
        static_argnames: Sequence[str] = (),
        size: int = 16,
    ):
        self.fun = fun
        self._static = (tuple(static_argnums) or None, tuple(static_argnames) or None)
        #: A stage object given instead of a function (a Lowered, say): only the
        #: steps after it are made, for each platform and compiler options asked.
        self.given = stage_of(fun)
        if self.given is not None and any(self._static):
            raise StagingError(
                f"Got {self.given.described}: it is already specialized; drop "
                f"static_argnums/static_argnames."
            )
        self.wrapped = None if self.given is not None else as_wrapped(fun, *self._static)
        self._tables = {step: LRU(size) for step in STEPS}
        self._wrappers = LRU(size)
        self.counts = {"trace": 0, "lower": 0, "compile": 0}

    def _step(self, step: str, table: LRU, key, make, run: StagedRun):
        found = table.get(key)
        if found is not None:
            value, seconds = found
            run.timings[step] = seconds
            return value
        self.counts[step] += 1
        value = _timed(run, step, make)
        if value is not None:
            table.put(key, (value, run.timings[step]))
        return value

    @property
    def function(self):
        """The Python function staged (None for a stage object given)."""
        return self.wrapped.fun if self.wrapped is not None else None

    def _wrapper(self, key) -> Wrapped:
        """The jit function that stages specialization ``key``: for a plain function, one
        of its own, so that what JAX keeps for it (JAX's caches hold every trace,
        lowering and executable of a function while the function lives) goes when
        this cache lets go of the specialization; a jit function is staged as given."""
        assert self.wrapped is not None  # a function was given
        if self.wrapped.fun is not self.fun:
            return self.wrapped
        wrapped = self._wrappers.get(key)
        if wrapped is None:
            wrapped = as_wrapped(_own_function(self.fun), *self._static)
            self._wrappers.put(key, wrapped)
        return wrapped

    def stage(
        self,
        spec: Specialization,
        args: Sequence[Any],
        kwargs: Mapping[str, Any] | None = None,
        *,
        lower: bool = True,
        compile: bool = True,
        progress=None,
        placed: Placed | None = None,
    ) -> StagedRun:
        """The stages for ``spec`` (whose arguments are ``args``/``kwargs``), made as
        needed; ``progress`` (a :class:`~olympus_jupyter.staging.progress.Progress`)
        is told when each step starts; ``placed``: where ``args`` were placed
        (:func:`~olympus_jupyter.staging.runner.place_arguments`), for the report."""
        request = StageRequest(
            tuple(args),
            dict(kwargs or {}),
            spec.platforms,
            dict(spec.compiler_options),
            "compile" if compile and lower else "lower" if lower else "trace",
        )
        if self.given is not None:
            # Raises StagingError for other platforms than the stage's.
            run = run_from_stage(self.given, spec.platforms)
        else:
            assert self.wrapped is not None
            run = StagedRun(
                name=getattr(self.wrapped, "__name__", "function"),
                wrapped=self._wrapper(spec.args),
                fun=self.wrapped.fun,
                platforms=spec.platforms or (_platforms.local_platform(),),
            )
        if placed is not None:
            placed.mark(run)
        # A step's key holds everything it depends on: a later step's, the earlier's too
        # (the same shardings on another target's devices are another program).
        keys: dict[str, tuple] = {"trace": (spec.args, spec.target)}
        keys["lower"] = (keys["trace"], spec.platforms)
        keys["compile"] = (keys["lower"], spec.compiler_options)

        def cached(run: StagedRun, step: str, make):
            if progress is not None:
                progress.step(step)
            return self._step(step, self._tables[step], keys[step], make, run)

        return advance(run, request, timed=cached)


def _own_function(fun):
    """A function that calls ``fun`` and reads as it (name, signature, source), but
    is an object of its own for JAX's caches."""

    @functools.wraps(fun)
    def staged(*args, **kwargs):
        return fun(*args, **kwargs)

    return staged
