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
import math
import time
import traceback
from collections.abc import Mapping, Sequence
from typing import Any

import jax

import olympus
from olympus import hardware as _hardware
from olympus import placement as _placement
from olympus import platforms as _platforms
from olympus import stage_registry
from olympus.dump_follow import DumpFollower
from olympus.dumps import DumpedCompile, DumpNeeds, compile_dumped, merge_needs
from olympus.provenance.focus import is_installed
from olympus.provenance.sources import is_user_file, tool_prefixes
from olympus.stages import Compiled, Lowered, Traced, Wrapped, from_jax
from olympus_jupyter.staging import targets
from olympus_jupyter.staging.alongside import alongside
from olympus_jupyter.staging.time_limit import StageTimeout, cannot_limit, check_timeout, time_limit

STEPS = stage_registry.STEPS


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
        """The frame the failure points at: the innermost of the user's own code (not
        an installed package's: :mod:`olympus.provenance.focus`), else the innermost."""
        for frame in reversed(self.frames):
            if not is_installed(frame.file):
                return frame
        return self.frames[-1] if self.frames else None

    def headline(self) -> str:
        """``Type: first line of the message``."""
        first = self.message.strip().splitlines()[0] if self.message.strip() else ""
        return f"{self.error_type}: {first}" if first else self.error_type

    def summary(self) -> str:
        where = f" at {self.user_frame.describe()}" if self.user_frame else ""
        return f"{self.stage} failed{where}: {self.headline()}"


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
    #: The hardware compiled for (an :class:`olympus.hardware.Target`), or None:
    #: this machine's devices.
    target: Any = None
    #: The mesh the arguments were placed on (axis name -> size), or None.
    mesh: Mapping[str, int] | None = None
    #: For a compile XLA refused (out of memory, say): what it wrote of the
    #: buffers before it gave up (a :class:`~olympus.buffers.PeakDump`), or None.
    refused: Any = None
    #: What XLA dumped of the compile itself (``StageRequest.dumps``): the pass
    #: pipeline and the peak's texts the report's stages read, with no compile more.
    dumped: DumpedCompile | None = None

    @property
    def peak(self):
        """The peak's texts (a :class:`~olympus.buffers.PeakDump`) read from the
        dumps of the compile, or None."""
        return self.dumped.peak if self.dumped is not None else None

    @property
    def peak_unread(self) -> str | None:
        """Why the peak could not be read from the dumps of the compile, or None."""
        return self.dumped.peak_unread if self.dumped is not None else None


def user_frames(exc: BaseException) -> tuple[UserFrame, ...]:
    """The frames of ``exc``'s traceback that are the user's code (not JAX, not
    Olympus, not the tooling: :func:`olympus.provenance.sources.is_user_file`)."""
    frames = []
    exclude = tool_prefixes()
    for fs in traceback.extract_tb(exc.__traceback__):
        path = fs.filename or ""
        if not is_user_file(path, exclude):
            continue
        code = fs.line or linecache.getline(path, fs.lineno or 0).strip()
        frames.append(UserFrame(path, fs.lineno or 0, fs.name, code))
    return tuple(frames)


def failure_of(stage: str, exc: BaseException) -> StageFailure:
    """What a report shows of ``exc`` raised by ``stage``: its type, message and the
    user's frames (JAX's traceback note dropped)."""
    from olympus.errors import strip_jax_notes

    strip_jax_notes(exc)
    return StageFailure(stage, type(exc).__name__, str(exc), user_frames(exc))


def as_wrapped(fun, static_argnums=None, static_argnames=None, compiler_options=None) -> Wrapped:
    """``fun`` ready to trace: jit-wrapped functions (``jax.jit``, ``olympus.jit``,
    ``flax.nnx.jit``, ``equinox.filter_jit``) keep their options, plain ones are
    wrapped by ``olympus.jit`` with these. Raises :class:`StagingError` for anything
    else, naming what was given and what is accepted."""
    library = targets.library_function(fun)
    if library is not None or isinstance(fun, (Wrapped, jax.stages.Wrapped)):
        if static_argnums is not None or static_argnames is not None:
            raise StagingError(
                f"{getattr(fun, '__name__', 'The function')} is already jit-wrapped and keeps "
                f"its own options; drop --static-argnums/--static-argnames, or pass the "
                f"plain Python function."
            )
        return library if library is not None else from_jax(fun)
    given = targets.stage_of(fun)
    if given is not None:
        raise StagingError(
            f"Got {given.described}: it is already specialized, and only a function is "
            f"re-staged for other arguments. Pass the {given.kind} alone to "
            f"inspect() (or the magic), or pass the function."
        )
    if not callable(fun):
        raise StagingError(
            f"Expected a function to stage, got {targets.describe(fun)}. Pass "
            f"{targets.ACCEPTED}: f(x, y)."
        )
    try:
        return olympus.jit(
            fun,
            static_argnums=static_argnums,
            static_argnames=static_argnames,
            compiler_options=compiler_options or None,
        )
    except (TypeError, ValueError) as e:
        raise StagingError(f"Cannot jit {getattr(fun, '__name__', fun)!r}: {e}") from None


def _timed(run: StagedRun, step: str, thunk):
    start = time.perf_counter()
    try:
        return thunk()
    except Exception as e:  # noqa: BLE001 - recorded for the report
        run.failure = failure_of(step, e)
        return None
    finally:
        run.timings[step] = time.perf_counter() - start


def unknown_platform(requested) -> str | None:
    """What is wrong with ``requested`` platforms, if one is not known here: reports
    (and the magic, widgets and CLI that make them) take only platforms JAX knows, so
    that a typo is an error rather than a lowering for nothing. The core lowers for
    any name JAX accepts: ``olympus.jit(f).trace(x).lower(lowering_platforms=('p',))``.

    >>> unknown_platform(("cpu",)) is None, unknown_platform(("cpux",))[:35]
    (True, "Unknown lowering platform 'cpux'. C")
    """
    unknown = _platforms.unknown_platforms(requested or ())
    if not unknown:
        return None
    name = unknown[0]
    return (
        f"Unknown lowering platform {name!r}. Choose among "
        f"{', '.join(_platforms.known_platforms())}; to lower for a plugin that is "
        f"not installed here, use "
        f"olympus.jit(f).trace(...).lower(lowering_platforms=({name!r},))"
    )


def _refuse_unknown_platforms(requested) -> None:
    problem = unknown_platform(requested)
    if problem:
        raise StagingError(problem + ".")


@dataclasses.dataclass(frozen=True)
class StageRequest:
    """What to stage: the arguments, the lowering platforms (``None``: this
    machine's), the compiler options, and the last step to take."""

    args: tuple = ()
    kwargs: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    platforms: tuple[str, ...] | None = None
    compiler_options: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    until: str = "compile"
    #: Read the buffers live at the peak from XLA's dumps of the compile itself
    #: into ``StagedRun.peak`` (as ``dumps=DumpNeeds(peak=True)``).
    read_peak: bool = False
    #: What the report's stages need of XLA's dumps (:class:`~olympus.dumps.DumpNeeds`,
    #: merged): the compile itself dumps it (:func:`olympus.dumps.compile_dumped`)
    #: into ``StagedRun.dumped``, and the stages read it with no compile more.
    dumps: DumpNeeds | None = None
    #: Reads the per-pass modules of that dump as XLA writes them, beside the
    #: compile (:class:`~olympus.dump_follow.DumpFollower`), for the stages to find
    #: read; compared as the object it is.
    follower: DumpFollower | None = dataclasses.field(default=None, compare=False)

    def steps(self) -> tuple[str, ...]:
        return STEPS[: STEPS.index(self.until) + 1]

    def dump_needs(self) -> DumpNeeds | None:
        """What the compile dumps (``dumps`` and ``read_peak`` together), or None."""
        return merge_needs([self.dumps, DumpNeeds(peak=True) if self.read_peak else None])


def next_step(
    run: StagedRun, step: str, request: StageRequest, *, timed=None, beside_compile=None
) -> bool:
    """Takes one step (``'trace'``, ``'lower'`` or ``'compile'``) from what ``run``
    holds, timing it; ``False`` when it failed or cannot happen on this machine.

    This is the trace → lower → compile loop's body, for :func:`run_stages`, the
    stage cache (whose ``timed`` looks the step up first) and the stepper.
    ``timed(run, step, make)`` runs ``make()`` and records its time and failure.
    ``beside_compile(run)``, called just before the compile, may return work to
    run in a thread while XLA compiles (:func:`~.alongside.alongside`).
    """
    timed = timed or _timed
    if step == "trace":
        # A run is made with its function; a missing one fails in timed(), recorded.
        run.traced = timed(
            run,
            "trace",
            lambda: run.wrapped.trace(  # type: ignore[union-attr]
                *request.args, **request.kwargs
            ),
        )
        if run.traced is not None:
            run.name = run.traced.fun_name
        return run.traced is not None
    if step == "lower":
        run.lowered = timed(
            run,
            "lower",
            lambda: run.traced.lower(  # type: ignore[union-attr]
                lowering_platforms=request.platforms
            ),
        )
        if run.lowered is not None:  # where the arguments are placed: a target's too
            run.platforms = run.lowered.platforms
        return run.lowered is not None
    assert run.lowered is not None  # advance() compiles only what lowered
    reason = compile_unavailable(run.lowered)
    if reason is not None:
        run.unavailable["compile"] = reason
        return False
    options = dict(request.compiler_options) or None

    needs = request.dump_needs()
    if run.target is not None:  # will it fit: the peak per device, and what fills it
        needs = merge_needs([needs, DumpNeeds(peak=True)])

    def keep_refused(dump) -> None:
        run.refused = dump

    def compile_it():
        # A compile the user asked to dump somewhere dumps there, as asked: what the
        # stages need is then dumped by a compile of its own (build_report does).
        if needs is None or any(k.startswith("xla_dump") for k in options or ()):
            return run.lowered.compile(options)  # type: ignore[union-attr]  # checked above
        compiled, run.dumped = compile_dumped(
            run.lowered, needs, options, refused=keep_refused, follower=request.follower
        )
        return compiled

    with alongside(beside_compile(run) if beside_compile is not None else None):
        run.compiled = timed(run, "compile", compile_it)
    return run.compiled is not None


def _steps_taken(run: StagedRun) -> int:
    """How many steps ``run`` holds the result of: the index of the next step."""
    held = [run.traced, run.lowered, run.compiled]
    return max((k + 1 for k, stage in enumerate(held) if stage is not None), default=0)


def advance(run: StagedRun, request: StageRequest, *, timed=None, beside_compile=None) -> StagedRun:
    """Takes the steps ``request`` asks for that ``run`` does not hold yet, in order,
    stopping at the first that fails."""
    for step in request.steps()[_steps_taken(run) :]:
        if not next_step(run, step, request, timed=timed, beside_compile=beside_compile):
            break
    return run


def run_stages(
    target: Any,
    args: Sequence[Any] = (),
    kwargs: Mapping[str, Any] | None = None,
    *,
    static_argnums=None,
    static_argnames=None,
    platforms: Sequence[str] | None = None,
    compiler_options: Mapping[str, Any] | None = None,
    lower: bool = True,
    compile: bool = True,
    timeout: float | None = None,
    progress=None,
    beside_compile=None,
    read_peak: bool = False,
    dumps: DumpNeeds | None = None,
    follower: DumpFollower | None = None,
    hardware: Any = None,
    num_slices: int = 1,
    mesh: Mapping[str, int] | Sequence[tuple[str, int]] | None = None,
    shardings: Any = None,
) -> StagedRun:
    """Traces, lowers and compiles ``target`` for ``args``, timing each step.

    ``target`` may be a Python function, an ``olympus.jit``/``jax.jit`` function, or an
    Olympus or JAX ``Traced``/``Lowered``/``Compiled`` (later steps then run from it).
    ``lower=False`` stops after tracing, ``compile=False`` after lowering.
    ``timeout`` (seconds) stops the steps once that long has passed: the step
    running then fails with :class:`StageTimeout`, at the line it was stopped
    (see :mod:`~olympus_jupyter.staging.time_limit` for what can be stopped).
    ``progress`` (a :class:`~olympus_jupyter.staging.progress.Progress`) is told
    when each step starts. ``beside_compile(run)`` may return work to run while
    XLA compiles (see :func:`next_step`). ``read_peak`` reads the buffers live
    at the peak from XLA's dumps of that compile (``StagedRun.peak``); ``dumps``
    (:class:`~olympus.dumps.DumpNeeds`) is what the report's stages need of XLA's
    dumps, read from that compile too (``StagedRun.dumped``): the per-pass modules
    and the peak, with no compile more; ``follower``
    (:class:`~olympus.dump_follow.DumpFollower`) reads those modules while XLA
    writes them. ``hardware`` (a target name such as
    ``'v5e:4x4'``, with ``num_slices``) compiles for that hardware without it: the
    arguments are placed on ``mesh`` (axis name -> size) of its devices, sharded
    as ``shardings`` says (:func:`olympus.placement.place`); ``mesh`` or
    ``shardings`` without it place them on this machine's devices.
    """
    try:
        timeout = check_timeout(timeout)
    except ValueError as e:
        raise StagingError(str(e)) from None
    if timeout is not None and cannot_limit():
        raise StagingError(cannot_limit())
    try:
        requested = _platforms.normalize_platforms(platforms)
    except _platforms.PlatformError as e:
        raise StagingError(str(e)) from None
    _refuse_unknown_platforms(requested)
    request = StageRequest(
        tuple(args),
        dict(kwargs or {}),
        requested,
        dict(compiler_options or {}),
        "compile" if compile and lower else "lower" if lower else "trace",
        read_peak=read_peak,
        dumps=dumps,
        follower=follower,
    )

    given = targets.stage_of(target)
    placed = place_arguments(
        request.args,
        request.kwargs,
        hardware=hardware,
        num_slices=num_slices,
        mesh=mesh,
        shardings=shardings,
        platforms=request.platforms,
        given=given,
    )
    if placed is not None:
        request = dataclasses.replace(request, args=placed.args, kwargs=placed.kwargs)
    if given is not None:
        if request.args or request.kwargs:
            raise StagingError(
                f"Got {given.described} with arguments: it is already specialized, "
                f"pass it without arguments (or pass the function with them)."
            )
        return _advance_within(
            run_from_stage(given, requested), request, timeout, progress, beside_compile
        )

    wrapped = as_wrapped(target, static_argnums, static_argnames, request.compiler_options)
    run = StagedRun(
        name=getattr(wrapped, "__name__", "function"),
        wrapped=wrapped,
        fun=wrapped.fun,
        platforms=requested or (_platforms.local_platform(),),
    )
    if placed is not None:
        placed.mark(run)
    return _advance_within(run, request, timeout, progress, beside_compile)


@dataclasses.dataclass(frozen=True)
class Placed:
    """A request's arguments placed on a mesh of a target's devices (or of this
    machine's, ``target`` None)."""

    target: Any
    axes: dict[str, int]
    args: tuple
    kwargs: dict

    def mark(self, run: "StagedRun") -> None:
        """Says on ``run`` where its arguments are: the target, its platform, the mesh."""
        run.target, run.mesh = self.target, self.axes
        if self.target is not None:
            run.platforms = (self.target.platform,)


def place_arguments(
    args: Sequence[Any],
    kwargs: Mapping[str, Any],
    *,
    hardware: Any = None,
    num_slices: int = 1,
    mesh: Mapping[str, int] | Sequence[tuple[str, int]] | None = None,
    shardings: Any = None,
    platforms: Sequence[str] | None = None,
    given: targets.Given | None = None,
) -> Placed | None:
    """``args``/``kwargs`` placed on the target (a name, see :mod:`olympus.hardware`;
    None: this machine's devices), ``mesh`` and ``shardings`` asked for
    (:func:`olympus.placement.place`), or None where none of them is; a
    :class:`StagingError` says what is wrong with them (``platforms``: those asked
    for besides, which must be the target's; ``given``: a stage given instead of a
    function, which is placed already)."""
    if hardware is None and mesh is None and shardings is None and num_slices == 1:
        return None
    if given is not None:
        raise StagingError(
            f"Got {given.described}: it is already placed on its devices, so target=, "
            f"mesh= and shardings= cannot apply. Pass the function with its arguments."
        )
    try:
        axes = _placement.parse_mesh(mesh)
        if hardware is None:
            if num_slices != 1:
                raise StagingError("num_slices= needs target=: the slices of which hardware?")
            target, made = None, _local_mesh(axes)
        else:
            named = hardware.name if isinstance(hardware, _hardware.Target) else hardware
            platform = _hardware.parse_target(named)[0]
            if platforms and tuple(platforms) != (platform,):
                raise StagingError(
                    f"platform={','.join(platforms)} and target={hardware!r} "
                    f"disagree: a target is compiled for its own platform ({platform!r}). "
                    f"Drop platform=."
                )
            target = _hardware.target(hardware, num_slices=num_slices)
            made = target.mesh(axes)
        placed_args, placed_kwargs = _placement.place(args, kwargs, made, shardings)
    except (_hardware.TargetError, _placement.PlacementError) as e:
        raise StagingError(str(e)) from None
    return Placed(target, _placement.mesh_axes(made), placed_args, placed_kwargs)


def _local_mesh(axes: dict[str, int] | None) -> jax.sharding.Mesh:
    """A mesh of this machine's devices with these axes (one over all by default)."""
    devices = jax.devices()
    axes = axes or {"devices": len(devices)}
    size = math.prod(axes.values())
    if size != len(devices):
        raise StagingError(
            f"mesh {','.join(f'{k}={v}' for k, v in axes.items())} has {size} devices; "
            f"this machine has {len(devices)}. Give sizes whose product is "
            f"{len(devices)}, or target= a hardware with {size} devices."
        )
    return jax.make_mesh(tuple(axes.values()), tuple(axes))


def _advance_within(
    run: StagedRun, request: StageRequest, timeout: float | None, progress=None, beside_compile=None
) -> StagedRun:
    """:func:`advance` under a time limit; a limit that runs out between two steps
    fails the step that would have come next."""
    timed = None
    if progress is not None:

        def timed(run, step, make):
            progress.step(step)
            return _timed(run, step, make)

    try:
        with time_limit(timeout):
            return advance(run, request, timed=timed, beside_compile=beside_compile)
    except StageTimeout as e:
        step = STEPS[min(_steps_taken(run), len(STEPS) - 1)]
        run.failure = run.failure or failure_of(step, e)
        return run


def timed_out(run_or_report) -> bool:
    """Whether a run (or a report of one) was stopped by its time limit: such a
    result says nothing about the program, so it is not kept in a cache."""
    failure = run_or_report.failure
    return failure is not None and failure.error_type == StageTimeout.__name__


def compile_unavailable(lowered: Lowered) -> str | None:
    """Why ``lowered`` cannot be compiled on this machine, or None if it can."""
    here = _platforms.local_platform()
    try:
        _platforms.check_compilable(lowered.platforms, lowered.fun_name, lowered.device_platform)
        return None
    except _platforms.PlatformError:
        pass
    return (
        f"lowered for {', '.join(lowered.platforms)}; this machine compiles for "
        f"{here}, so the compiled stages cannot exist here"
    )


def run_from_stage(given: targets.Given, requested) -> StagedRun:
    """A run holding the stage given and the stages it links back to; the stages
    that cannot be made from it are unavailable, each saying why
    (:func:`~olympus_jupyter.staging.targets.unmade`)."""
    stage = given.stage
    run = StagedRun(name=_stage_name(stage))
    if isinstance(stage, Compiled):
        run.compiled = stage
        run.lowered = stage.lowered
        run.traced = stage.lowered.traced if stage.lowered is not None else None
    elif isinstance(stage, Lowered):
        run.lowered = stage
        run.traced = stage.traced
    else:
        run.traced = stage
    run.unavailable.update(targets.unmade(given))
    made_for = (
        run.lowered.platforms
        if run.lowered is not None
        else _compiled_platforms(run.compiled)
        if run.compiled is not None
        else None
    )
    if made_for:
        run.platforms = made_for
        if requested and requested != made_for:
            raise StagingError(
                f"Got {given.described} made for {', '.join(made_for)}; it cannot be "
                f"staged again for {', '.join(requested)}. Drop the platform option, "
                f"or pass the function instead."
            )
    else:
        run.platforms = requested or (_platforms.local_platform(),)
    return run


def _stage_name(stage) -> str:
    """The function's name a stage knows; for a ``Compiled`` that keeps no
    ``Lowered``, its HLO module's name (``jit_f``)."""
    name = stage.fun_name
    if isinstance(stage, Compiled) and stage.lowered is None:
        try:
            first = (stage.as_text() or "").partition("\n")[0]
        except Exception:  # noqa: BLE001 - the name only
            first = ""
        if first.startswith("HloModule "):
            name = first.split()[1].rstrip(",") or name
    return name


def _compiled_platforms(compiled: Compiled) -> tuple[str, ...]:
    """The platforms of the devices a ``Compiled`` runs on (read from its input
    shardings; empty when it takes no argument)."""
    found: dict[str, None] = {}
    for sharding in jax.tree_util.tree_leaves(compiled.input_shardings):
        for device in getattr(sharding, "device_set", ()):
            # Spelled as lowerings spell it ('gpu' is 'cuda' or 'rocm').
            spelled = _platforms.normalize_platforms(device.platform) or (device.platform,)
            found.setdefault(spelled[0], None)
    return tuple(found)
