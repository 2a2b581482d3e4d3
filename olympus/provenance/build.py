"""``build``: the provenance model of a staged function, from whichever stage you have.

A ``Compiled`` gives all three stages (it links back to its ``Lowered`` and
``Traced``), a ``Lowered`` gives olympuspr and StableHLO, a ``Traced`` (or an
``Olympuspr``) gives the olympuspr. A ``Wrapped`` (``olympus.jit(f)``) or a
plain function with example arguments is traced, lowered and compiled first.
JAX's own stage objects work too; as they do not link back to earlier stages,
each gives its own stage only.

>>> model = olympus.provenance.build(olympus.jit(lambda x: jnp.sin(x) + 1), 1.0)
>>> model.stage_names
('olympuspr', 'stablehlo', 'compiled')
"""

from __future__ import annotations

import dataclasses
import inspect
from collections.abc import Sequence
from typing import Any

import jax.stages as jax_stages

from olympus import jax_compat, stage_registry
from olympus import platforms as _platforms
from olympus import stages as ostages
from olympus.provenance.focus import Focus, focus_of
from olympus.provenance.model import FunctionInfo, Provenance, Stage, group_ops_by_line
from olympus.provenance.readers import reader
from olympus.provenance.sources import SourceTable

__all__ = ["build", "Reading", "read_before_compile"]


@dataclasses.dataclass
class _Chain:
    """The stage objects found for one function (any may be missing)."""

    closed: Any = None  # ClosedJaxpr
    lowered: Any = None  # olympus.stages.Lowered
    compiled: Any = None  # olympus.stages.Compiled
    fun: Any = None  # the Python function, when known
    name: str | None = None
    platforms: tuple[str, ...] = ()


def _code_range(code) -> tuple[int, int]:
    first = last = code.co_firstlineno
    todo = [code]
    while todo:
        c = todo.pop()
        for _, _, line in c.co_lines():
            if line is not None and line > last:
                last = line
        todo.extend(k for k in c.co_consts if inspect.iscode(k))
    return first, last


def _function_info(chain: _Chain, table: SourceTable) -> tuple[FunctionInfo, dict]:
    name = chain.name or getattr(chain.fun, "__name__", None) or "<function>"
    fun = chain.fun
    try:
        fun = inspect.unwrap(fun) if fun is not None else None
    except ValueError:
        pass
    code = getattr(fun, "__code__", None)
    if code is not None:
        first, last = _code_range(code)
        fi = table.file(code.co_filename)
        return FunctionInfo(name, fi, first, last), {fi: [(first, last)]}
    # JAX's debug info reads "f at /path/to/file.py:12".
    src = None
    if chain.closed is not None:
        src = getattr(chain.closed.jaxpr.debug_info, "func_src_info", None)
    if src and " at " in src:
        path, _, line = src.rpartition(" at ")[2].rpartition(":")
        if path and line.isdigit():
            fi = table.file(path)
            return FunctionInfo(name, fi, int(line), None), {fi: [(int(line), int(line))]}
    return FunctionInfo(name), {}


_STAGE_TYPES = (
    ostages.Compiled,
    ostages.Lowered,
    ostages.Traced,
    ostages.Olympuspr,
    jax_compat.ClosedJaxpr,
)
_JAX_STAGE_TYPES = (jax_stages.Traced, jax_stages.Lowered, jax_stages.Compiled)


def _chain(stage, args, kwargs) -> _Chain:
    if isinstance(stage, _JAX_STAGE_TYPES):
        stage = ostages.from_jax(stage)  # Olympus's names in every text
    if isinstance(stage, _STAGE_TYPES):
        if args or kwargs:
            raise TypeError(
                f"build({type(stage).__name__}, ...) takes no example arguments: the "
                f"stage already fixes them. Pass arguments only with a function, e.g. "
                f"build(olympus.jit(f), x)."
            )
        return _chain_of_stage(stage)
    if not isinstance(stage, ostages.Wrapped) and callable(stage):
        if isinstance(stage, jax_stages.Wrapped) and hasattr(stage, "trace"):
            stage = ostages.from_jax(stage)  # a jax.jit function
        else:
            stage = ostages.jitted(stage)  # as olympus.jit(f) wraps it
    if isinstance(stage, ostages.Wrapped):
        chain = _chain_of_stage(stage.trace(*args, **kwargs).lower().compile())
        chain.fun = stage.fun
        return chain
    raise TypeError(
        f"build() takes an Olympus stage (Traced, Lowered, Compiled, Olympuspr), a JAX "
        f"stage, or a function (olympus.jit(f), jax.jit(f) or f) followed by example "
        f"arguments; got {type(stage).__name__}."
    )


def _chain_of_stage(stage) -> _Chain:
    if isinstance(stage, ostages.Compiled):
        chain = _chain_of_stage(stage.lowered) if stage.lowered is not None else _Chain()
        chain.compiled = stage
        chain.name = chain.name or stage.fun_name
        return chain
    if isinstance(stage, ostages.Lowered):
        chain = _chain_of_stage(stage.traced) if stage.traced is not None else _Chain()
        chain.lowered = stage
        chain.name = chain.name or stage.fun_name
        chain.platforms = stage.platforms
        return chain
    if isinstance(stage, ostages.Traced):
        fun = stage.wrapped.fun if stage.wrapped is not None else None
        return _Chain(closed=stage.olympuspr.closed, fun=fun, name=stage.fun_name)
    if isinstance(stage, ostages.Olympuspr):
        return _Chain(closed=stage.closed)
    return _Chain(closed=stage)  # a ClosedJaxpr


@dataclasses.dataclass
class Reading:
    """Provenance stages read so far from one chain of stage objects, into the
    source table they share. :func:`build` reads them all at once;
    :func:`read_before_compile` reads those of a ``Lowered`` before it is
    compiled, and ``build(compiled, start=reading)`` reads the rest.
    """

    lowered: Any
    #: The stages asked for (None: the default ones).
    stages: tuple[str, ...] | None = None
    table: SourceTable = dataclasses.field(default_factory=SourceTable)
    made: dict[str, Stage] = dataclasses.field(default_factory=dict)
    unavailable: dict[str, str] = dataclasses.field(default_factory=dict)

    def read(self, objects: dict[str, Any]) -> "Reading":
        """Reads the stages asked for that ``objects`` (step name -> stage object)
        can give and that are not read yet, in the registry's order."""
        for spec in stage_registry.provenance_stages():
            wanted = spec.default if self.stages is None else spec.name in self.stages
            obj = objects.get(spec.step)  # type: ignore[arg-type]  # linked: has a step
            if not wanted or obj is None or spec.name in self.made or spec.name in self.unavailable:
                continue
            try:
                self.made[spec.name] = reader(spec.name)(obj, self.table, spec.name)
            except stage_registry.StageUnavailable as e:
                self.unavailable[spec.name] = str(e)
        return self


def read_before_compile(lowered, stages: Sequence[str] | None = None):
    """A function that reads the provenance stages of ``lowered`` and of its
    traced program (olympuspr, StableHLO) and returns the :class:`Reading`: it
    reads Olympus's own copy of the module (taken here), never the module that
    ``compile()`` works on, so it may run in another thread while ``lowered``
    compiles. Pass what it returns to ``build(compiled, start=...)``.

    >>> lowered = olympus.jit(lambda x: jnp.sin(x) * 2).trace(1.0).lower()
    >>> reading = read_before_compile(lowered)()
    >>> sorted(reading.made)
    ['olympuspr', 'stablehlo']
    >>> build(lowered.compile(), start=reading).stage_names
    ('olympuspr', 'stablehlo', 'compiled')
    """
    chain = _chain_of_stage(lowered)
    # Olympus's copy of the module, cloned before the compile starts (and renamed
    # with the rest of the reading).
    make_module = lowered._module_later() if stages is None or "stablehlo" in stages else None
    objects = {"trace": chain.closed, "lower": chain.lowered}
    stages = None if stages is None else tuple(stages)

    def read():
        if make_module is not None:
            make_module()
        return Reading(lowered, stages).read(objects)

    return read


def build(
    stage,
    *args,
    stages: Sequence[str] | None = None,
    start: Reading | None = None,
    focus: Focus | str | Sequence[str] | None = None,
    **kwargs,
) -> Provenance:
    """The provenance model of a staged function: every stage's ops tied to their source.

    ``stage`` is an Olympus ``Compiled`` (all three stages), ``Lowered`` (olympuspr
    and StableHLO), ``Traced`` or ``Olympuspr`` (olympuspr only), or a ``Wrapped``
    / function followed by example arguments (traced, lowered and compiled here).
    JAX's ``Traced``/``Lowered``/``Compiled`` give their own stage. ``start``: the
    stages already read from the same ``Lowered`` (:func:`read_before_compile`);
    the rest are read on into it (a reading of another lowering, or of other
    stages, is not taken). ``focus``: what is the user's own code, to which ops
    are charged (:func:`olympus.provenance.focus.focus_of`; default: every file
    that is not installed).

    >>> def f(x):
    ...     y = jnp.sin(x)
    ...     return y * 2
    >>> model = olympus.provenance.build(olympus.jit(f).trace(1.0).lower().compile())
    >>> [len(model.stages[s].ops) > 0 for s in model.stage_names]
    [True, True, True]
    >>> model.ops_for_line(model.function.file, model.function.first_line + 1)['olympuspr']
    ['olympuspr:0']
    """
    chain = _chain(stage, args, kwargs)
    stages = None if stages is None else tuple(stages)
    reading = (
        start
        if start is not None
        and start.lowered is chain.lowered
        and start.lowered is not None
        and start.stages == stages
        else Reading(chain.lowered, stages)
    )
    table = reading.table
    objects = {"trace": chain.closed, "lower": chain.lowered, "compile": chain.compiled}
    reading.read(objects)
    function, extra_ranges = _function_info(chain, table)
    platforms = chain.platforms
    if not platforms and chain.compiled is not None:
        platforms = (_platforms.local_platform(),)
    made = {
        spec.name: reading.made[spec.name]
        for spec in stage_registry.provenance_stages()
        if spec.name in reading.made
    }
    frames = tuple(table.frames)
    locations = tuple(table.locations)
    files = table.source_files(extra_ranges, focus_of(focus))
    return Provenance(
        function=function,
        platforms=tuple(platforms),
        stages=made,
        unavailable=dict(reading.unavailable),
        files=files,
        frames=frames,
        locations=locations,
        lines=group_ops_by_line(frames, locations, made.values(), tuple(f.library for f in files)),
    )
