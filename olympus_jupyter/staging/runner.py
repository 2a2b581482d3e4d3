"""Run the stages of a function (or pick up a stage someone already made), timing each.

:func:`run_stages` never raises for what goes wrong *inside* a stage: a function
that fails to trace, a lowering that cannot compile here. It records the
failure, naming the stage and the user's source line, so a report can show it.
Bad *options* (an unknown platform, a static argument number out of range) raise
:class:`StagingError` before anything runs.

>>> import olympus.numpy as jnp
>>> run = run_stages(lambda x: jnp.sin(x) * 2, (1.0,))
>>> sorted(run.timings), run.failure is None, run.compiled is not None
(['compile', 'lower', 'trace'], True, True)
"""
from __future__ import annotations

import dataclasses
import linecache
import os
import time
import traceback
from collections.abc import Mapping, Sequence
from typing import Any

import jax

import olympus
from olympus import platforms as _platforms
from olympus.stages import Compiled, Lowered, Traced, Wrapped, from_jax

STEPS = ("trace", "lower", "compile")


class StagingError(ValueError):
    """The request itself is wrong (options, target); nothing was staged."""


@dataclasses.dataclass(frozen=True)
class UserFrame:
    """One frame of the user's code: where an error came from."""
    file: str
    line: int
    function: str
    code: str

    def describe(self) -> str:
        return f"{self.file}:{self.line} in {self.function}"


@dataclasses.dataclass(frozen=True)
class StageFailure:
    """A stage that raised: which one, what, and the user's line it points at."""
    stage: str
    error_type: str
    message: str
    frames: tuple[UserFrame, ...] = ()

    @property
    def user_frame(self) -> UserFrame | None:
        return self.frames[-1] if self.frames else None

    def summary(self) -> str:
        where = f" at {self.user_frame.describe()}" if self.user_frame else ""
        first = self.message.strip().splitlines()[0] if self.message.strip() else ""
        return f"{self.stage} failed{where}: {self.error_type}: {first}"


@dataclasses.dataclass
class StagedRun:
    """What :func:`run_stages` made: the stage objects, their timings, any failure."""
    name: str
    wrapped: Wrapped | None = None
    traced: Traced | None = None
    lowered: Lowered | None = None
    compiled: Compiled | None = None
    timings: dict[str, float] = dataclasses.field(default_factory=dict)
    failure: StageFailure | None = None
    unavailable: dict[str, str] = dataclasses.field(default_factory=dict)
    platforms: tuple[str, ...] = ()
    fun: Any = None


_INTERNAL_DIRS = tuple(
    os.path.dirname(m.__file__) + os.sep for m in (jax, olympus))
_INTERNAL_DIRS += (os.path.dirname(__file__) + os.sep,)


def user_frames(exc: BaseException) -> tuple[UserFrame, ...]:
    """The frames of ``exc``'s traceback that are the user's code (not JAX, not Olympus)."""
    frames = []
    for fs in traceback.extract_tb(exc.__traceback__):
        path = fs.filename or ""
        if path.startswith(_INTERNAL_DIRS) or "site-packages" in path or path.startswith("<frozen"):
            continue
        code = fs.line or linecache.getline(path, fs.lineno or 0).strip()
        frames.append(UserFrame(path, fs.lineno or 0, fs.name, code))
    return tuple(frames)


def _failure(stage: str, exc: BaseException) -> StageFailure:
    from olympus.errors import strip_jax_notes
    strip_jax_notes(exc)
    return StageFailure(stage, type(exc).__name__, str(exc), user_frames(exc))


def as_wrapped(fun, static_argnums=None, static_argnames=None, compiler_options=None) -> Wrapped:
    """``fun`` ready to trace: jit-wrapped functions keep their options, plain ones are
    wrapped by ``olympus.jit`` with these. Raises :class:`StagingError` for anything else."""
    if isinstance(fun, Wrapped) or isinstance(fun, jax.stages.Wrapped):
        if static_argnums is not None or static_argnames is not None:
            raise StagingError(
                f"{getattr(fun, '__name__', 'The function')} is already jit-wrapped and keeps "
                f"its own options; drop --static-argnums/--static-argnames, or pass the "
                f"plain Python function.")
        return from_jax(fun)
    if not callable(fun):
        raise StagingError(
            f"Expected a function to stage, got {type(fun).__name__}. Pass the function "
            f"and its arguments: f(x, y).")
    try:
        return olympus.jit(fun, static_argnums=static_argnums, static_argnames=static_argnames,
                           compiler_options=compiler_options or None)
    except (TypeError, ValueError) as e:
        raise StagingError(f"Cannot jit {getattr(fun, '__name__', fun)!r}: {e}") from None


def _timed(run: StagedRun, step: str, thunk):
    start = time.perf_counter()
    try:
        return thunk()
    except Exception as e:  # noqa: BLE001 - recorded for the report
        run.failure = _failure(step, e)
        return None
    finally:
        run.timings[step] = time.perf_counter() - start


def _refuse_unknown_platforms(requested) -> None:
    """Reports (and the magic, widgets and CLI that make them) take only platforms JAX
    knows here, so that a typo is an error rather than a lowering for nothing. The
    core lowers for any name JAX accepts:
    ``olympus.jit(f).trace(x).lower(lowering_platforms=('myplugin',))``."""
    known = _platforms.known_platforms()
    for name in requested or ():
        if name not in known:
            raise StagingError(
                f"Unknown lowering platform {name!r}. Choose among {', '.join(known)}; "
                f"to lower for a plugin that is not installed here, use "
                f"olympus.jit(f).trace(...).lower(lowering_platforms=({name!r},)).")


def run_stages(target: Any, args: Sequence[Any] = (), kwargs: Mapping[str, Any] | None = None,
               *, static_argnums=None, static_argnames=None,
               platforms: Sequence[str] | None = None,
               compiler_options: Mapping[str, Any] | None = None,
               lower: bool = True, compile: bool = True) -> StagedRun:
    """Traces, lowers and compiles ``target`` for ``args``, timing each step.

    ``target`` may be a Python function, an ``olympus.jit``/``jax.jit`` function, or an
    Olympus or JAX ``Traced``/``Lowered``/``Compiled`` (later steps then run from it).
    ``lower=False`` stops after tracing, ``compile=False`` after lowering.
    """
    compile = compile and lower
    kwargs = dict(kwargs or {})
    try:
        requested = _platforms.normalize_platforms(platforms)
    except _platforms.PlatformError as e:
        raise StagingError(str(e)) from None
    _refuse_unknown_platforms(requested)
    options = dict(compiler_options or {})

    if isinstance(target, (jax.stages.Traced, jax.stages.Lowered, jax.stages.Compiled)):
        target = from_jax(target)
    if isinstance(target, (Traced, Lowered, Compiled)):
        if args or kwargs:
            raise StagingError(
                f"A {type(target).__name__} is already specialized: pass it without arguments.")
        return _from_stage(target, requested, options, lower, compile)

    wrapped = as_wrapped(target, static_argnums, static_argnames, options)
    run = StagedRun(name=getattr(wrapped, "__name__", "function"), wrapped=wrapped,
                    fun=wrapped.fun, platforms=requested or (_platforms.local_platform(),))
    run.traced = _timed(run, "trace", lambda: wrapped.trace(*args, **kwargs))
    if run.traced is None:
        return run
    run.name = run.traced.fun_name
    if lower:
        _lower_and_compile(run, requested, options, compile)
    return run


def _lower_and_compile(run: StagedRun, requested, options, compile: bool) -> None:
    if run.lowered is None:
        run.lowered = _timed(run, "lower",
                             lambda: run.traced.lower(lowering_platforms=requested))
        if run.lowered is None:
            return
    if not compile:
        return
    reason = compile_unavailable(run.lowered)
    if reason is not None:
        run.unavailable["compile"] = reason
        return
    run.compiled = _timed(run, "compile", lambda: run.lowered.compile(options or None))


def compile_unavailable(lowered: Lowered) -> str | None:
    """Why ``lowered`` cannot be compiled on this machine, or None if it can."""
    here = _platforms.local_platform()
    if here in lowered.platforms:
        return None
    return (f"lowered for {', '.join(lowered.platforms)}; this machine compiles for "
            f"{here}, so the compiled stages cannot exist here")


def _from_stage(stage, requested, options, lower: bool, compile: bool) -> StagedRun:
    run = StagedRun(name=stage.fun_name)
    if isinstance(stage, Compiled):
        run.compiled = stage
        run.lowered = stage.lowered
        run.traced = stage.lowered.traced if stage.lowered is not None else None
    elif isinstance(stage, Lowered):
        run.lowered = stage
        run.traced = stage.traced
    else:
        run.traced = stage
    if run.lowered is not None:
        run.platforms = run.lowered.platforms
        if requested and requested != run.lowered.platforms:
            raise StagingError(
                f"This stage was lowered for {run.lowered.platforms}; it cannot be "
                f"re-lowered for {requested}. Pass the function instead.")
    else:
        run.platforms = requested or (_platforms.local_platform(),)
    if run.compiled is None and (lower or run.lowered is not None):
        _lower_and_compile(run, requested, options, compile)
    return run
