"""The stages of compilation, one class each: ``Wrapped`` → ``Traced`` → ``Lowered`` → ``Compiled``.

Each stage wraps the matching JAX object and adds what Olympus promises on top
of it: names users read as OLYMPUS, platform checks before compiling, and a
link back to the stage it came from (so tools can walk the whole chain).

>>> import olympus
>>> traced = olympus.jit(lambda x: x * 2).trace(olympus.ShapeDtypeStruct((3,), 'float32'))
>>> lowered = traced.lower()
>>> compiled = lowered.compile()
>>> compiled.lowered is lowered and lowered.traced is traced
True
>>> compiled(np.ones(3, np.float32))
Array([2., 2., 2.], dtype=float32)
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax
import jax.stages as jax_stages
from jax import tree_util

from olympus import jax_compat, naming, platforms as _platforms
from olympus.errors import boundary, strip_jax_notes

ArgInfo = jax_stages.ArgInfo

__all__ = [
    "Wrapped",
    "Traced",
    "Lowered",
    "Compiled",
    "ArgInfo",
    "Olympuspr",
    "MemoryAnalysis",
    "RENAMED",
]

#: JAX's stage attributes that Olympus names otherwise, as the spec renames them.
RENAMED = {"jaxpr": "olympuspr", "lojax": "lo_olympuspr"}


def _newer_jax(name: str, stage: str):
    return AttributeError(
        f"{stage}.{name} needs a newer JAX than {jax.__version__}, whose stages have "
        f"it; upgrade jax (Olympus supports {jax_compat.SUPPORTED[0]} to "
        f"{jax_compat.SUPPORTED[1]}, exclusive)."
    )


def _forward(jax_obj, name: str, stage: str):
    try:
        return getattr(jax_obj, name)
    except AttributeError:
        if hasattr(type(jax_obj), name):
            raise
        raise _newer_jax(name, stage) from None


class Olympuspr:
    """A staged-out program in the olympuspr language (a closed program with constants).

    Prints like the spec shows; ``eqns``, ``in_avals``, ``out_avals`` and
    ``consts`` give the parts.

    >>> import olympus
    >>> print(olympus.make_olympuspr(lambda x: x + 1)(1.0))
    { lambda ; a:f32[]. let b:f32[] = add a 1.0:f32[] in (b,) }
    """

    __slots__ = ("_closed",)

    def __init__(self, closed_jaxpr):
        self._closed = closed_jaxpr

    @property
    def eqns(self):
        return self._closed.jaxpr.eqns

    @property
    def in_avals(self):
        return self._closed.in_avals

    @property
    def out_avals(self):
        return self._closed.out_avals

    @property
    def consts(self):
        return self._closed.consts

    @property
    def invars(self):
        return self._closed.jaxpr.invars

    @property
    def outvars(self):
        return self._closed.jaxpr.outvars

    @property
    def closed(self):
        """The underlying JAX ``ClosedJaxpr`` (for code that needs JAX's own type)."""
        return self._closed

    def pretty_print(self, *, source_info: bool = False, name_stack: bool = False, **kwargs) -> str:
        """The program as text; ``source_info=True`` appends each equation's source line."""
        kwargs.setdefault("use_color", False)
        text = self._closed.pretty_print(source_info=source_info, name_stack=name_stack, **kwargs)
        return naming.rename_param_names(text)

    def __str__(self) -> str:
        return self.pretty_print()

    def __repr__(self) -> str:
        return self.pretty_print()

    def __eq__(self, other):
        return isinstance(other, Olympuspr) and self._closed == other._closed

    def __hash__(self):
        return hash(self._closed)


def _unwrap_jax(x):
    return getattr(x, "_jax", x)


class Wrapped:
    """A function ready to be traced, lowered and compiled: what ``olympus.jit`` returns.

    Calling it compiles just in time, as ``jax.jit`` does; ``trace``, ``lower`` and
    ``eval_shape`` give explicit control over the stages.
    """

    def __init__(self, fun, jitted, options: dict[str, Any], *, kind: str = "jit", trace_impl=None):
        self._fun = fun
        self._jax = jitted
        self._kind = kind
        self._trace_impl = trace_impl
        self.options = dict(options)
        functools.update_wrapper(self, fun, updated=())

    @property
    def fun(self):
        """The Python function this wraps."""
        return self._fun

    @property
    def kind(self) -> str:
        """The transformation that made it: ``'jit'`` or ``'pmap'``."""
        return self._kind

    def __call__(self, *args, **kwargs):
        try:
            return self._jax(*args, **kwargs)
        except Exception as e:
            strip_jax_notes(e)
            raise

    @boundary
    def trace(self, *args, **kwargs) -> "Traced":
        """Traces the function for these arguments (values or ``ShapeDtypeStruct``s).

        Static arguments must be concrete and hashable; they are not passed again
        to the compiled function.
        """
        if self._trace_impl is not None:
            jax_traced, signature = self._trace_impl(*args, **kwargs)
        else:
            jax_traced, signature = self._jax.trace(*args, **kwargs), None
        return Traced(jax_traced, wrapped=self, signature=signature)

    def lower(self, *args, **kwargs) -> "Lowered":
        """Shortcut for ``self.trace(*args, **kwargs).lower()``."""
        return self.trace(*args, **kwargs).lower()

    @boundary
    def eval_shape(self, *args, **kwargs):
        """Output shapes and dtypes for these arguments, without compiling."""
        return jax.eval_shape(self._jax, *args, **kwargs)

    def clear_cache(self) -> None:
        """Forgets the programs compiled for calls of this function (as JAX's does)."""
        self._jax.clear_cache()

    def __get__(self, obj, objtype=None):
        # Behave like a function when used as a method.
        if obj is None:
            return self
        return functools.partial(self, obj)

    def __repr__(self) -> str:
        return f"<olympus.{self._kind} of {getattr(self._fun, '__qualname__', self._fun)!r}>"


def jitted(fun, **options) -> Wrapped:
    """``fun`` compiled by ``jax.jit(fun, **options)``, as a :class:`Wrapped`: what
    ``olympus.jit`` returns once it has checked ``fun`` and gathered its options
    (:func:`olympus.api.jit`). Modules below the API (the provenance builder) wrap
    plain functions with it.

    >>> jitted(lambda x: x + 1).trace(1.0).lower().compile()(1.0)
    Array(2., dtype=float32, weak_type=True)
    """
    target = fun._jax if isinstance(fun, Wrapped) else fun
    return Wrapped(fun, jax.jit(target, **options), options, kind="jit")


@dataclasses.dataclass(frozen=True)
class _UserSignature:
    """What the user called, where JAX's traced program takes something else.

    ``olympus.pmap`` traces JAX's inner jit of the mapped function, which takes
    the flat arguments and is named ``_fun``; its stages show the user's name,
    argument pytree and donations instead.
    """

    fun_name: str
    args_info: Any
    in_avals: Any  # the tree of argument types, shaped like args_info
    out_tree: Any = None  # a thunk giving the result pytree, where JAX's differs


class Traced:
    """A function traced for fixed argument types: ready to lower.

    ``olympuspr`` is the staged-out program; ``lower()`` translates it to StableHLO.
    Every attribute of ``jax.stages.Traced`` is here, with the same meaning
    (``jaxpr`` is named ``olympuspr``, ``lojax`` ``lo_olympuspr``).
    """

    __slots__ = ("_jax", "wrapped", "_signature", "__weakref__")

    def __init__(
        self, jax_traced, *, wrapped: Wrapped | None = None, signature: _UserSignature | None = None
    ):
        self._jax = jax_traced
        self.wrapped = wrapped
        self._signature = signature

    @property
    def olympuspr(self) -> Olympuspr:
        """The staged-out program (JAX's ``Traced.jaxpr``)."""
        return Olympuspr(self._jax.jaxpr)

    @property
    def lo_olympuspr(self) -> Olympuspr:
        """The program with high-level types lowered to arrays (JAX's ``Traced.lojax``)."""
        return Olympuspr(_forward(self._jax, "lojax", "Traced").jaxpr)

    @property
    def fun_name(self) -> str:
        return self._signature.fun_name if self._signature else self._jax.fun_name

    @property
    def args_info(self):
        """A pytree of :class:`ArgInfo` (type, donated?) shaped like ``(args, kwargs)``."""
        return self._signature.args_info if self._signature else self._jax.args_info

    @property
    def in_tree(self):
        """Tree structure of the pair (positional arguments, keyword arguments)."""
        if self._signature:
            return tree_util.tree_structure(self._signature.args_info)
        return self._jax.in_tree

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        """Flat indices of the donated arguments."""
        return tuple(i for i, a in enumerate(tree_util.tree_leaves(self.args_info)) if a.donated)

    @property
    def in_avals(self):
        """Tree of input types."""
        return self._signature.in_avals if self._signature else self._jax.in_avals

    @property
    def out_info(self):
        return self._jax.out_info

    @property
    def out_avals(self):
        return self._jax.out_avals

    @property
    def out_tree(self):
        """Tree structure of the result."""
        if self._signature and self._signature.out_tree:
            return self._signature.out_tree()
        return self._jax.out_tree

    @property
    def effects(self):
        """The program's side effects (JAX 0.12 and later)."""
        return _forward(self._jax, "effects", "Traced")

    def __call__(self, *args, **kwargs):
        """Evaluates the traced program on arguments (no compilation)."""
        if self._signature:
            leaves, tree = tree_util.tree_flatten((args, kwargs))
            if tree != self.in_tree:
                raise TypeError(
                    f"The traced '{self.fun_name}' takes arguments structured as "
                    f"{self.in_tree}, got {tree}."
                )
            out = self._jax(*leaves)
            if self._signature.out_tree is not None:  # JAX 0.9: the inner jit's are flat
                out = tree_util.tree_unflatten(self._signature.out_tree(), out)
            return out
        return self._jax(*args, **kwargs)

    def closure_convert(self):
        """``(consts, fun)``: the captured constants made an explicit first argument
        of ``fun`` (JAX 0.12 and later)."""
        return _forward(self._jax, "closure_convert", "Traced")()

    def with_consts_as_arg(self):
        """``(consts, traced)``: an equivalent Traced taking the constants as a leading
        argument (JAX 0.12 and later)."""
        consts, traced = _forward(self._jax, "with_consts_as_arg", "Traced")()
        return consts, Traced(traced)

    def physicalize(self, ctx) -> "Traced":
        """The program with extended types replaced by their physical arrays (JAX 0.12
        and later)."""
        return Traced(_forward(self._jax, "physicalize", "Traced")(ctx))

    @boundary
    def lower(self, *, lowering_platforms: tuple[str, ...] | None = None) -> "Lowered":
        """Lowers to StableHLO, for this machine or for ``lowering_platforms``.

        Lowering for platforms this machine lacks works (``('tpu',)``,
        ``('cpu', 'tpu')``...); compiling such a lowering is checked, see
        :meth:`Lowered.compile`.
        """
        requested = _platforms.normalize_platforms(lowering_platforms)
        jl = self._jax.lower(lowering_platforms=requested)
        if self._signature:
            out_tree = self._signature.out_tree
            jl = jax_compat.relabel_lowered(
                jl, self._signature.args_info, out_tree() if out_tree else None
            )
        return Lowered(
            jl,
            traced=self,
            # Unrequested: where the arguments are placed (a target's devices too).
            platforms=requested
            or jax_compat.lowering_platforms(jl)
            or (_platforms.local_platform(),),
            explicit_platforms=requested is not None,
        )

    def __repr__(self) -> str:
        return f"<olympus.stages.Traced of {self.fun_name!r}>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        """A stage report in a notebook (when olympus_jupyter is installed)."""
        from olympus.display import mimebundle

        return mimebundle(self, include=include, exclude=exclude)


class _Signature:
    """What JAX's ``Lowered`` and ``Compiled`` both say of the signature, read from the
    JAX stage an Olympus stage wraps (its ``_jax``)."""

    __slots__ = ()
    _jax: Any  # the JAX stage, in the slots of each subclass

    @property
    def args_info(self):
        return self._jax.args_info

    @property
    def out_info(self):
        return self._jax.out_info

    @property
    def in_avals(self):
        return self._jax.in_avals

    @property
    def in_tree(self):
        """Tree structure of the pair (positional arguments, keyword arguments)."""
        return self._jax.in_tree

    @property
    def out_tree(self):
        """Tree structure of the result."""
        return self._jax.out_tree

    @property
    def donate_argnums(self) -> tuple[int, ...]:
        """Flat indices of the donated arguments."""
        return self._jax.donate_argnums


class Lowered(_Signature):
    """A program lowered to the compiler's input language (StableHLO), ready to compile.

    Every attribute of ``jax.stages.Lowered`` is here, with the same meaning.
    """

    __slots__ = (
        "_jax",
        "traced",
        "platforms",
        "_explicit_platforms",
        "_olympus_module",
        "_hlo_module",
        "__weakref__",
    )

    def __init__(
        self,
        jax_lowered,
        *,
        traced: Traced | None = None,
        platforms: tuple[str, ...] = (),
        explicit_platforms: bool = False,
    ):
        self._jax = jax_lowered
        self.traced = traced
        self.platforms = tuple(platforms)
        self._explicit_platforms = explicit_platforms
        self._olympus_module: Any = None  # an ir.Operation, once made
        self._hlo_module = None

    @property
    def fun_name(self) -> str:
        if self.traced is not None:
            return self.traced.fun_name
        return jax_compat.lowering_name(self._jax) or "<lowered>"

    def _module(self):
        """Olympus's copy of the StableHLO module (``jax.*`` attributes named
        ``olympus.*``), made once."""
        return self._module_later()()

    def _module_later(self):
        """A function that makes :meth:`_module`'s copy: the module is cloned now
        (the clone reads JAX's module, which ``compile()`` works on); the function
        renames the clone's attributes (most of the cost), which touches the clone
        alone, so it may run in another thread while ``compile()`` works.

        >>> lowered = olympus.jit(lambda x: x + 1).trace(1.0).lower()
        >>> make = lowered._module_later()
        >>> make() is lowered._module()
        True
        """
        if self._olympus_module is not None:
            made = self._olympus_module
            return lambda: made
        copy = naming.clone(self._jax.compiler_ir("stablehlo"))

        def make():
            if self._olympus_module is None:
                self._olympus_module = naming.renamed(copy)
            return self._olympus_module

        return make

    def compiler_ir(self, dialect: str | None = None):
        """The lowered program as an MLIR module (``'stablehlo'``, default) or ``'hlo'``.

        The StableHLO module is Olympus's own copy: changing it changes nothing
        that ``compile()`` sees.
        """
        dialect = _check_dialect(dialect)
        if dialect == "stablehlo":
            return naming.olympus_module(self._jax.compiler_ir("stablehlo"))
        return self._jax.compiler_ir(dialect)

    def as_text(self, dialect: str | None = None, *, debug_info: bool = False) -> str:
        """The lowered program as text: StableHLO by default, ``'hlo'`` for XLA HLO.

        ``debug_info=True`` adds source locations (file, line, column, call stack).
        """
        dialect = _check_dialect(dialect)
        if dialect == "stablehlo":
            return naming.module_text(self._module(), debug_info=debug_info)
        return jax_compat.hlo_module_text(self._hlo(), metadata=debug_info)

    def _hlo(self):
        """The program as an XLA HLO module: converted from StableHLO once, then shared
        by ``as_text('hlo')`` and ``cost_analysis()``."""
        return self._hlo_later()()

    def _hlo_later(self):
        """A function that makes :meth:`_hlo`'s module, from the MLIR bytecode taken
        now: it touches no MLIR object, so it may run in another thread while
        ``compile()`` works on the module (the conversion holds the GIL; the
        compile releases it).

        >>> lowered = olympus.jit(lambda x: x + 1).trace(1.0).lower()
        >>> make = lowered._hlo_later()
        >>> make() is lowered._hlo()
        True
        """
        if self._hlo_module is not None:
            made = self._hlo_module
            return lambda: made
        code, tuple_args = jax_compat.lowered_hlo_bytecode(self._jax)

        def make():
            if self._hlo_module is None:
                self._hlo_module = jax_compat.hlo_module_from_bytecode(code, tuple_args)
            return self._hlo_module

        return make

    def cost_analysis(self):
        """The compiler's cost estimate before optimization (a dict), or ``None``."""
        return jax_compat.hlo_cost_analysis(self._jax, self._hlo())

    @property
    def device_platform(self) -> str | None:
        """The platform of the devices the program is placed on, as its arguments'
        shardings say: this machine's, or a target's (``'tpu'`` for arguments on
        :func:`olympus.hardware.target` devices); None if JAX does not say."""
        return jax_compat.lowering_device_platform(self._jax)

    @boundary
    def compile(self, compiler_options: dict[str, Any] | None = None) -> "Compiled":
        """Compiles for this machine's devices, or for the compile-only devices of a
        target its arguments are placed on (:mod:`olympus.hardware`).

        A lowering for several platforms that include this one compiles the code
        for this platform. A lowering that does not include it is refused with a
        :class:`~olympus.platforms.PlatformError`: JAX would compile and run the
        wrong platform's code. Errors from the compiler keep their type (an
        unknown compiler option raises JAX's ``JaxRuntimeError``), with a note
        naming the options given.
        """
        here = _platforms.check_compilable(self.platforms, self.fun_name, self.device_platform)
        _check_compiler_options(compiler_options)
        jax_lowered = self._jax
        if self._explicit_platforms and self.platforms != (here,):
            if self.traced is None:
                raise _platforms.PlatformError(
                    f"Cannot compile this multi-platform lowering: it was made for "
                    f"{self.platforms!r} without its Traced stage. Lower it with "
                    f"lowering_platforms=({here!r},)."
                )
            # The lowering holds code for each platform, chosen by a platform
            # index argument that JAX's compile path cannot supply. The code for
            # this platform is what the compiled program runs: lower just it.
            jax_lowered = self.traced.lower(lowering_platforms=(here,))._jax
        try:
            compiled = jax_lowered.compile(compiler_options)
        except Exception as e:
            if compiler_options:
                e.add_note(
                    f"Olympus: compiling '{self.fun_name}' with compiler_options="
                    f"{compiler_options!r} failed. If the compiler names one of them, "
                    f"check its spelling and value (XLA's option names start with "
                    f"'xla_'), or compile without it."
                )
            raise
        return Compiled(compiled, lowered=self, compiler_options=compiler_options)

    def __repr__(self) -> str:
        return f"<olympus.stages.Lowered of {self.fun_name!r} for {', '.join(self.platforms)}>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        """A stage report in a notebook (when olympus_jupyter is installed)."""
        from olympus.display import mimebundle

        return mimebundle(self, include=include, exclude=exclude)


def _check_dialect(dialect):
    if dialect is None:
        return "stablehlo"
    if dialect not in ("stablehlo", "hlo"):
        raise ValueError(f"Unknown dialect {dialect!r}: use 'stablehlo' (the default) or 'hlo'.")
    return dialect


def _check_compiler_options(options):
    if options is None:
        return
    if not isinstance(options, dict):
        raise TypeError(
            f"compiler_options must be a dict such as {{'xla_backend_optimization_level': 0}}, "
            f"got {type(options).__name__}."
        )
    for k, v in options.items():
        if not isinstance(k, str):
            raise TypeError(f"compiler_options keys must be option names (str), got {k!r}.")
        if not isinstance(v, (str, bool, int, float)):
            raise TypeError(
                f"compiler_options[{k!r}] must be a str, bool, int or float, got "
                f"{type(v).__name__}."
            )


@dataclasses.dataclass(frozen=True)
class MemoryAnalysis:
    """What the compiled program needs in memory, in bytes, with the peak."""

    argument_size_in_bytes: int
    output_size_in_bytes: int
    alias_size_in_bytes: int
    temp_size_in_bytes: int
    generated_code_size_in_bytes: int
    peak_memory_in_bytes: int
    host_argument_size_in_bytes: int = 0
    host_output_size_in_bytes: int = 0
    host_alias_size_in_bytes: int = 0
    host_temp_size_in_bytes: int = 0
    host_generated_code_size_in_bytes: int = 0

    @classmethod
    def from_stats(cls, stats) -> "MemoryAnalysis":
        names = [f.name for f in dataclasses.fields(cls)]
        return cls(**{n: int(getattr(stats, n, 0) or 0) for n in names})

    def as_dict(self) -> dict[str, int]:
        return dataclasses.asdict(self)


class Compiled(_Signature):
    """A compiled executable for fixed argument types. Call it like the function.

    Calling goes straight to JAX's C++ dispatch; only errors take the slow path,
    where they are reworded for Olympus. Every attribute of ``jax.stages.Compiled``
    is here, with the same meaning.
    """

    __slots__ = ("_jax", "_call", "lowered", "compiler_options", "_x64", "__weakref__")

    def __init__(self, jax_compiled, *, lowered: Lowered | None = None, compiler_options=None):
        self._jax = jax_compiled
        self.lowered = lowered
        self.compiler_options = dict(compiler_options or {})
        self._x64 = jax.config.jax_enable_x64  # type: ignore[attr-defined]
        self._call = jax_compat.compiled_fast_call(jax_compiled)

    def __call__(self, *args, **kwargs):
        try:
            return self._call(*args, **kwargs)
        except TypeError as e:
            message = str(e)
            x64 = jax.config.jax_enable_x64  # type: ignore[attr-defined]
            translated = naming.olympus_message(message, x64_changed=x64 != self._x64)
            if translated == message:
                raise
            raise TypeError(translated) from None

    def call(self, *args, **kwargs):
        """Runs the compiled program: the same as calling this object."""
        return self(*args, **kwargs)

    @property
    def input_shardings(self):
        return self._jax.input_shardings

    @property
    def output_shardings(self):
        return self._jax.output_shardings

    @property
    def input_formats(self):
        return self._jax.input_formats

    @property
    def output_formats(self):
        return self._jax.output_formats

    @property
    def fun_name(self) -> str:
        return self.lowered.fun_name if self.lowered is not None else "<compiled>"

    def as_text(self) -> str | None:
        """The optimized HLO the compiler produced, or ``None`` if unavailable."""
        return self._jax.as_text()

    def cost_analysis(self):
        """The compiler's cost estimate after optimization (a dict), or ``None``."""
        return self._jax.cost_analysis()

    def memory_analysis(self) -> MemoryAnalysis | None:
        """Bytes for arguments, outputs, temporaries, aliasing, code, and the peak."""
        stats = self._jax.memory_analysis()
        return None if stats is None else MemoryAnalysis.from_stats(stats)

    def runtime_executable(self):
        """The runtime's executable object (for debugging; not a serialization)."""
        return self._jax.runtime_executable()

    def __repr__(self) -> str:
        return f"<olympus.stages.Compiled of {self.fun_name!r}>"

    def _repr_mimebundle_(self, include=None, exclude=None):
        """A stage report in a notebook (when olympus_jupyter is installed)."""
        from olympus.display import mimebundle

        return mimebundle(self, include=include, exclude=exclude)


def from_jax(obj):
    """The Olympus stage for a JAX stage object (``jax.jit(f)``, its Traced, Lowered, Compiled).

    Olympus stages are returned as they are; anything else raises ``TypeError``.

    >>> import jax
    >>> from_jax(jax.jit(lambda x: x + 1)).trace(1.0).lower().compile()(1.0)
    Array(2., dtype=float32, weak_type=True)
    """
    if isinstance(obj, (Wrapped, Traced, Lowered, Compiled)):
        return obj
    if isinstance(obj, jax_stages.Traced):
        return Traced(obj)
    if isinstance(obj, jax_stages.Lowered):
        platforms = jax_compat.lowering_platforms(obj) or (_platforms.local_platform(),)
        return Lowered(
            obj, platforms=platforms, explicit_platforms=platforms != (_platforms.local_platform(),)
        )
    if isinstance(obj, jax_stages.Compiled):
        return Compiled(obj)
    if isinstance(obj, jax_stages.Wrapped) and hasattr(obj, "trace"):
        fun = getattr(obj, "__wrapped__", obj)
        return Wrapped(fun, obj, {}, kind="jit")
    raise TypeError(
        f"Expected a function staged by olympus.jit or jax.jit, or one of its stages "
        f"(Traced, Lowered, Compiled); got {type(obj).__name__}."
    )
