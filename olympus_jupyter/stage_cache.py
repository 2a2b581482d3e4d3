"""Stage objects kept per specialization: re-trace, re-lower, re-compile only what must change.

A change of argument shape, dtype, weak type, sharding or static value needs a new
trace (and everything after it); a change of lowering platforms, a new lowering
(and compile); a change of compiler options, a new compile only. Anything else
(debug info on or off, which stages to show) needs no new stage at all.

>>> import olympus.numpy as jnp
>>> from olympus_jupyter.specialization import Specialization
>>> cache = StageCache(lambda x: jnp.sin(x))
>>> x = jnp.ones(3)
>>> run = cache.stage(Specialization.of(cache.fun, (x,)), (x,))
>>> run = cache.stage(Specialization.of(cache.fun, (x,), compiler_options={"xla_backend_optimization_level": 0}), (x,))
>>> cache.counts
{'trace': 1, 'lower': 1, 'compile': 2}
"""
from __future__ import annotations

import collections
from collections.abc import Mapping, Sequence
from typing import Any

import olympus
from olympus import platforms as _platforms
from olympus.stages import Wrapped, from_jax

from olympus_jupyter.specialization import Specialization
from olympus_jupyter.staging import StagedRun, _timed, compile_unavailable


class _LRU(collections.OrderedDict):
    def __init__(self, size: int):
        super().__init__()
        self.size = size

    def get_fresh(self, key):
        if key in self:
            self.move_to_end(key)
            return self[key]
        return None

    def put(self, key, value):
        self[key] = value
        self.move_to_end(key)
        while len(self) > self.size:
            self.popitem(last=False)


def _hashable(key) -> bool:
    try:
        hash(key)
        return True
    except TypeError:
        return False


class StageCache:
    """The stages of one function for each specialization seen (the last ``size`` of each)."""

    def __init__(self, fun, *, static_argnums: Sequence[int] = (),
                 static_argnames: Sequence[str] = (), size: int = 16):
        self.fun = fun
        if isinstance(fun, Wrapped) or hasattr(fun, "trace"):
            self.wrapped = from_jax(fun)
        else:
            self.wrapped = olympus.jit(fun, static_argnums=tuple(static_argnums) or None,
                                       static_argnames=tuple(static_argnames) or None)
        self._traced = _LRU(size)
        self._lowered = _LRU(size)
        self._compiled = _LRU(size)
        self.counts = {"trace": 0, "lower": 0, "compile": 0}

    def _step(self, step: str, table: _LRU, key, make, run: StagedRun):
        found = table.get_fresh(key) if _hashable(key) else None
        if found is not None:
            value, seconds = found
            run.timings[step] = seconds
            return value
        self.counts[step] += 1
        value = _timed(run, step, make)
        if value is not None and _hashable(key):
            table.put(key, (value, run.timings[step]))
        return value

    def stage(self, spec: Specialization, args: Sequence[Any],
              kwargs: Mapping[str, Any] | None = None, *, lower: bool = True,
              compile: bool = True) -> StagedRun:
        """The stages for ``spec`` (whose arguments are ``args``/``kwargs``), made as needed."""
        kwargs = dict(kwargs or {})
        run = StagedRun(name=getattr(self.wrapped, "__name__", "function"),
                        wrapped=self.wrapped, fun=self.wrapped.fun,
                        platforms=spec.platforms or (_platforms.local_platform(),))
        tkey = spec.args
        run.traced = self._step("trace", self._traced, tkey,
                                lambda: self.wrapped.trace(*args, **kwargs), run)
        if run.traced is None:
            return run
        run.name = run.traced.fun_name
        if not lower:
            return run
        lkey = (tkey, spec.platforms)
        run.lowered = self._step("lower", self._lowered, lkey,
                                 lambda: run.traced.lower(lowering_platforms=spec.platforms), run)
        if run.lowered is None or not compile:
            return run
        reason = compile_unavailable(run.lowered)
        if reason is not None:
            run.unavailable["compile"] = reason
            return run
        ckey = (lkey, spec.compiler_options)
        options = dict(spec.compiler_options) or None
        run.compiled = self._step("compile", self._compiled, ckey,
                                  lambda: run.lowered.compile(options), run)
        return run
