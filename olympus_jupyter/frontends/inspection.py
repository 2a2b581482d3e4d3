"""``inspect(fn_or_stage, *args, **kwargs)``: the report of what each stage made of a function.

Accepts Python functions, ``olympus.jit``/``jax.jit``/``flax.nnx.jit``/
``equinox.filter_jit`` functions, the ``Traced``/``Lowered``/``Compiled`` objects of
JAX, Olympus, flax nnx and equinox (given alone: the stages that cannot be made from
one are unavailable, saying why; see :mod:`~olympus_jupyter.staging.targets`),
``Exported`` artifacts and serialized export bytes. Reports are kept in a :class:`ReportCache`: inspecting the same
function for the same signature and options again returns the report made the
first time (nothing is re-traced or re-compiled).

>>> import olympus.numpy as jnp
>>> report = inspect(lambda x: jnp.sin(x) * 2, 1.0)
>>> report.name, report.ok
('<lambda>', True)
"""

from __future__ import annotations

import contextlib
import types
import weakref
from collections.abc import Callable, Mapping, Sequence
from typing import Any

import jax
import numpy as np

from olympus import stage_registry
from olympus.dump_follow import DumpFollower
from olympus_jupyter.frontends.options import (
    OPTIONS,
    ReportOptions,
    check_cache,
    check_option,
    key_options,
    option_keywords,
)
from olympus_jupyter.staging.alongside import alongside
from olympus_jupyter.staging.lru import LRU
from olympus_jupyter.report.kinds import dump_needs, module_readers
from olympus_jupyter.report.stage_report import EarlyReading, StageReport, build_report
from olympus_jupyter.staging.progress import Progress, Silent, shown_in_output
from olympus_jupyter.staging.runner import StagingError, run_stages, timed_out


class ReportCache(LRU):
    """The last ``size`` reports, keyed by function, abstract signature and options.

    The function is held weakly (:func:`signature_key`): once it is gone (a cell
    that defines it again, say) its reports are forgotten when the next report is
    made (and freed beside its compile), rather than held until ``size`` newer
    ones push them out.

    >>> cache = ReportCache(size=2)
    >>> def f(x):
    ...     return x
    >>> cache.put(signature_key(f, (1.0,), {}, {}), "report of f")
    >>> len(cache)
    1
    >>> del f
    >>> cache.put(signature_key(abs, (1.0,), {}, {}), "report of abs")
    >>> len(cache)
    1
    """

    def stale(self, key) -> bool:
        held = key[0]
        return isinstance(held, weakref.ref) and held() is None


#: The cache ``inspect`` uses unless given another (``cache=False`` or ``None``
#: disables caching).
default_cache = ReportCache()


def _leaf_key(leaf):
    if hasattr(leaf, "shape") and hasattr(leaf, "dtype"):
        sharding = getattr(leaf, "sharding", None)
        try:
            hash(sharding)
        except TypeError:
            sharding = repr(sharding)
        # The dtype itself (hashable; bfloat16 and the float8 types stay apart), not
        # its name, which numpy makes in Python each time.
        return (
            "array",
            tuple(leaf.shape),
            np.dtype(leaf.dtype),
            bool(getattr(leaf, "weak_type", False)),
            sharding,
        )
    hash(leaf)  # raises TypeError for unhashable leaves: no caching
    return (type(leaf), leaf)


def _weak(target):
    """A weak reference standing for ``target`` in a key (equal while it lives), so
    that the cache keeps no function alive; the target itself where it cannot be
    referenced weakly."""
    try:
        if isinstance(target, types.MethodType):
            return weakref.WeakMethod(target)
        return weakref.ref(target)
    except TypeError:
        return target


def signature_key(target, args, kwargs, options: Mapping[str, Any]):
    """A hashable key for (function, abstract signature, options), or None if there is none.

    The function is held weakly: a cached report does not keep it alive.
    """
    try:
        leaves, tree = jax.tree_util.tree_flatten((tuple(args), dict(kwargs)))
        x64 = bool(jax.config.jax_enable_x64)  # type: ignore[attr-defined]
        key = (
            _weak(target),
            tree,
            tuple(_leaf_key(x) for x in leaves),
            tuple(sorted((k, _freeze(v)) for k, v in options.items())),
            x64,
        )
        hash(key)
        return key
    except TypeError:
        return None


def _freeze(v):
    if isinstance(v, (list, tuple)):
        return tuple(_freeze(x) for x in v)
    if isinstance(v, dict):
        return tuple(sorted((k, _freeze(x)) for k, x in v.items()))
    return v


def _exported(target):
    """An Exported, from itself or its serialized bytes."""
    from olympus import export as oexport

    if isinstance(target, (bytes, bytearray, memoryview)):
        return oexport.deserialize(bytes(target))
    return target


def _exported_target(exported):
    """An Exported as a function to stage and its example arguments."""
    specs = [jax.ShapeDtypeStruct(a.shape, a.dtype) for a in exported.in_avals]
    args, kwargs = jax.tree_util.tree_unflatten(exported.in_tree, specs)
    fun = exported.call

    def call_exported(*a, **k):
        return fun(*a, **k)

    call_exported.__name__ = call_exported.__qualname__ = f"exported_{exported.fun_name}"
    return call_exported, tuple(args), dict(kwargs)


def symbolic_dimensions(exported) -> tuple[str, ...]:
    """The symbolic dimensions of an exported function's arguments (shape
    polymorphism), e.g. ``('batch',)``; empty when every dimension is a number."""
    found: dict[str, None] = {}
    for aval in exported.in_avals:
        for d in aval.shape:
            if not isinstance(d, int):
                found.setdefault(str(d), None)
    return tuple(found)


def _symbolic_reason(names: tuple[str, ...]) -> str:
    return (
        f"the exported function has symbolic dimensions ({', '.join(names)}): XLA "
        f"compiles a program for concrete shapes. Inspect it for some: "
        f"inspect(exported.call, np.ones(...)), with arrays of the shapes you serve"
    )


def _is_exported(target) -> bool:
    from olympus import export as oexport

    exported_types = tuple(
        t for t in (getattr(oexport, "Exported", None), getattr(jax.export, "Exported", None)) if t
    )
    return isinstance(target, (bytes, bytearray, memoryview) + exported_types)


def inspect(
    fn_or_stage: Any,
    /,
    *args: Any,
    platform: str | Sequence[str] | None = None,
    target: str | None = None,
    num_slices: int = 1,
    mesh: Mapping[str, int] | str | None = None,
    shardings: Any = None,
    static_argnums: int | Sequence[int] | None = None,
    static_argnames: str | Sequence[str] | None = None,
    stages: str | Sequence[str] | None = None,
    debug_info: bool = True,
    compiler_options: Mapping[str, Any] | str | None = None,
    full: bool = False,
    timeout: float | None = None,
    passes: bool | str | None = None,
    costs: bool = False,
    focus: str | Sequence[str] | None = None,
    cache: ReportCache | bool | None = True,
    progress: bool | Callable[[str], None] | Progress | Silent | None = None,
    **kwargs: Any,
) -> StageReport:
    """Stages ``fn_or_stage`` for ``args``/``kwargs`` and returns its :class:`StageReport`.

    The options are the table's (:mod:`olympus_jupyter.report.option_table`: those
    named here, and any a stage kind registered since, taken by keyword too); the
    other keyword arguments are passed to the function. A failure in a
    stage does not raise: the report shows it (``report.failure``). ``timeout``
    (seconds) stops staging that takes longer (a function that hangs while it is
    traced): the report shows where it was stopped, and is not cached.
    ``passes=True`` adds the ``passes`` stage: XLA's per-pass dumps of the
    report's compile, to show what each pass did and where each line's ops went
    (``report.journey(line)``); a regular expression of pass names
    (``passes='fusion|cse'``) keeps only those passes. ``costs=True`` adds the
    ``costs`` stage: where the compiled program's flops, bytes and peak memory go,
    line by line, and the collectives a sharding costs (``report.cost_by_line()``,
    ``report.peak_buffers()``, ``report.collectives()``); the buffers live at the
    peak are read from XLA's dumps of the same compile. Both read the dumps of
    that one compile (per-pass modules and buffer assignment together): no compile
    more, where the compile dumps nowhere else (``xla_dump_to`` among the compiler
    options: then one more, for both). Costs, buffers,
    collectives, journeys and the links between views are charged to the user's
    own code: each op to the innermost line of its call stack that is not in an
    installed package (flax, equinox, optax, the standard library), with those
    library lines beneath it as detail; ``focus='mypkg'`` (folders, ``.py`` files or
    module names) says which code is yours instead.
    ``progress=True`` shows which step runs and for how long once staging takes
    more than a second (in a notebook, a line of the cell's output; elsewhere, on
    standard error); a function ``progress(text)`` is given that line instead. An
    interrupt (``KeyboardInterrupt``) stops the work and caches nothing.

    Options take what a user would write: ``platform='tpu'``, ``'cpu,tpu'`` or
    ``('cpu', 'tpu')``; ``static_argnums=1`` or ``(0, 2)``; ``stages='hlo'``,
    ``['olympuspr', 'hlo']`` or ``'all'``; ``compiler_options={'key': value}`` or
    ``'key=value, key=value'``; ``cache=True`` (the default cache), ``False`` or
    ``None`` (no caching), or a :class:`ReportCache`. Anything else raises
    :class:`~olympus_jupyter.report.option_table.OptionError` (a ``ValueError``;
    ``OptionTypeError``, also a ``TypeError``, for a wrong type) naming the option,
    before anything is staged.

    >>> inspect(lambda x: x, 1.0, stages="olympuspr", cache=False).stages
    ('olympuspr',)
    """
    declared = dict(locals())  # the options named above, by keyword (a test checks them)
    given = option_keywords("inspect", declared, kwargs)
    options = ReportOptions(
        **{name: value for name, value in given.items() if "report" in OPTIONS[name].frontends}
    )
    reports = check_cache(given.get("cache", True), default_cache)
    progress = given.get("progress")
    if not isinstance(progress, (Progress, Silent)):  # a frontend's own runs as it is
        progress = check_option("progress", progress)
    stages = options.stages
    symbolic: tuple[str, ...] = ()
    target = fn_or_stage
    if _is_exported(target):
        if args or kwargs:
            raise StagingError(
                "An exported function is already specialized: pass it without arguments."
            )
        try:
            exported = _exported(target)
            target, args, kwargs = _exported_target(exported)
        except Exception as e:  # noqa: BLE001 - any reader's error, as a StagingError
            raise StagingError(f"Cannot read the exported function: {e}") from None
        symbolic = symbolic_dimensions(exported)
    key = signature_key(target, args, kwargs, key_options(options)) if reports is not None else None
    found = reports.get(key) if reports is not None else None
    if found is not None:
        return found
    # Read while XLA compiles, which releases the GIL; and free there the reports of
    # functions that are gone (a cell that defined its function again, say).
    early = EarlyReading(stages, debug_info=options.debug_info)
    gone = reports.forget_stale() if reports is not None else []
    with _progress(progress) as shown:
        run = run_stages(
            target,
            args,
            kwargs,
            static_argnums=options.static_argnums,
            static_argnames=options.static_argnames,
            platforms=options.platforms,
            hardware=options.target,
            num_slices=options.num_slices,
            mesh=options.mesh,
            shardings=options.shardings,
            compiler_options=dict(options.compiler_options),
            lower=any(s in stages for s in stage_registry.made_by("lower")),
            compile=options.needs_compile and not symbolic,
            timeout=options.timeout,
            progress=shown,
            beside_compile=_freeing(gone, early),
            # What the stages read of XLA's dumps (the passes, the peak): dumped by
            # this compile itself, so that they compile no more.
            dumps=dump_needs(stages, pass_re=options.passes or ".*", full=options.full),
            # ... and what the stages read of the per-pass modules, read as XLA
            # writes them, in the worker thread that reads beside the compile.
            follower=_follower(stages, options),
        )
        if symbolic and options.needs_compile:  # what cannot exist for symbolic shapes
            reason = _symbolic_reason(symbolic)
            run.unavailable.setdefault("compile", reason)
            run.unavailable.setdefault("hlo", reason)
        shown.step("report")
        report = build_report(
            run,
            stages=stages,
            debug_info=options.debug_info,
            full=options.full,
            early=early,
            pass_re=options.passes or ".*",
            focus=options.focus,
        )
    # Only a report made to its end is kept: an interrupt above leaves nothing behind.
    if reports is not None and not timed_out(run):
        reports.put(key, report)
    return report


def _follower(stages, options) -> DumpFollower | None:
    """What reads the per-pass modules of the report's compile while XLA writes
    them (:class:`~olympus.dump_follow.DumpFollower`), or None where no stage
    reads them."""
    readers = module_readers(
        stages, pass_re=options.passes or ".*", full=options.full, focus=options.focus
    )
    return DumpFollower(readers, beside=alongside) if readers else None


def _freeing(gone: list, early: EarlyReading):
    """``early``'s work beside the compile, after freeing ``gone`` (what a cache
    forgot), which is then freed there rather than on the way to the display."""

    def beside(run):
        work = early(run)

        def free_then_read():
            gone.clear()
            if work is not None:
                work()

        return free_then_read

    return beside


def _progress(value):
    """What ``inspect(progress=...)`` asks for (checked): nothing, the output's line, a
    function, or a :class:`Progress` a frontend runs itself (its ``with`` spans more
    work)."""
    if isinstance(value, (Progress, Silent)):
        return contextlib.nullcontext(value)
    if not value:
        return Silent()
    return shown_in_output() if value is True else Progress(value)


def stage_bundle(stage, include=None, exclude=None) -> dict:
    """The display bundle of an Olympus stage object (its report): the ``olympus.display`` hook.

    A stage shows what exists so far: displaying a ``Lowered`` never compiles it.
    """
    from olympus.stages import Lowered, Traced

    made = {Traced: ("trace",), Lowered: ("trace", "lower")}.get(type(stage), stage_registry.STEPS)
    stages = tuple(
        s.name
        for s in stage_registry.all_stages()
        if s.default and (s.step is None or s.step in made)
    )
    return inspect(stage, stages=stages)._repr_mimebundle_(include=include, exclude=exclude)


__all__ = ["inspect", "ReportCache", "default_cache", "signature_key", "stage_bundle"]
