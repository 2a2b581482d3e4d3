"""What users hand to ``inspect()``, the magic, the Inspector and the CLI, made ready to stage.

Users hold more than plain functions: ``jax.jit`` and ``olympus.jit`` functions,
the functions of the libraries they train with (``flax.nnx.jit``,
``equinox.filter_jit``), and the stage objects these make (``Traced``,
``Lowered``, ``Compiled``, from JAX, from Olympus, and the wrappers flax ``nnx``
and equinox put around JAX's). This module turns each into what the runner
stages: an Olympus :class:`~olympus.stages.Wrapped` (a function to trace) or an
Olympus stage, and says which stages cannot be made from a stage given.

Each library is read through its public API, and imported only when the object
is one of its own (neither is a dependency of Olympus):

* ``flax.nnx.jit(f)`` splits its graph nodes (modules, variables) into pure
  state itself: its ``.trace(*args)`` gives an nnx ``Traced`` holding JAX's
  (``.traced``), which is what Olympus stages.
* ``equinox.filter_jit(f)`` traces the arrays among its arguments and holds
  everything else static (``eqx.is_array``). It has no ``.trace``: Olympus traces
  a function of the array leaves alone that puts the others back
  (``eqx.partition``/``eqx.combine``) and calls the ``filter_jit`` function
  itself, so equinox makes its own split; the results that are not arrays (a
  model's activation functions, say) are equinox's static ones and are left
  out of the traced program's results.
* Their stage objects hold JAX's: ``.traced``, ``.lowered``, ``.compiled``.

>>> import jax, jax.numpy as jnp
>>> lowered = jax.jit(jnp.sin).lower(1.0)
>>> given = stage_of(lowered)
>>> given.described, type(given.stage).__name__
('a JAX Lowered', 'Lowered')
>>> unmade(given)["olympuspr"]
'given a JAX Lowered: the traced program is not kept by it; pass the function (or its Traced) to see it'
>>> stage_of(jnp.sin) is None
True
"""

from __future__ import annotations

import dataclasses
import functools
from typing import Any

import jax

from olympus import stage_registry
from olympus.stages import Compiled, Lowered, Traced, Wrapped, from_jax

__all__ = [
    "ACCEPTED",
    "Given",
    "stage_of",
    "library_function",
    "unmade",
    "describe",
]

#: What the entry points take, in words (for errors).
ACCEPTED = (
    "a function (plain, jax.jit, olympus.jit, flax.nnx.jit or equinox.filter_jit) "
    "with its arguments, or a Traced, Lowered or Compiled (from JAX, Olympus, "
    "flax nnx or equinox) alone"
)

_JAX_STAGES = (jax.stages.Traced, jax.stages.Lowered, jax.stages.Compiled)
#: The field in which a library's stage wrapper holds JAX's stage, by JAX's class.
_HELD = (
    ("traced", jax.stages.Traced),
    ("lowered", jax.stages.Lowered),
    ("compiled", jax.stages.Compiled),
)


def _library(obj) -> str | None:
    """``'flax'`` or ``'equinox'`` when ``obj``'s class is one of theirs, else None
    (read from the class's module: nothing is imported)."""
    top = (type(obj).__module__ or "").partition(".")[0]
    return top if top in ("flax", "equinox") else None


def _words(library: str) -> str:
    return {"flax": "flax nnx", "equinox": "equinox"}[library]


def _article(library: str) -> str:
    return "an" if library == "equinox" else "a"


@dataclasses.dataclass(frozen=True)
class Given:
    """A stage object a user gave, as an Olympus stage, and what it was, in words."""

    stage: Traced | Lowered | Compiled
    described: str  # e.g. 'a JAX Lowered', 'a flax nnx Compiled'

    @property
    def kind(self) -> str:
        """``'Traced'``, ``'Lowered'`` or ``'Compiled'``."""
        return type(self.stage).__name__


def stage_of(obj) -> Given | None:
    """The Olympus stage for ``obj`` when it is a stage object (Olympus's, JAX's, or
    a flax nnx or equinox wrapper of JAX's), else None.

    >>> import olympus
    >>> stage_of(olympus.jit(lambda x: x).trace(1.0)).described
    'an Olympus Traced'
    """
    if isinstance(obj, (Traced, Lowered, Compiled)):
        return Given(obj, f"an Olympus {type(obj).__name__}")
    if isinstance(obj, _JAX_STAGES):
        stage = from_jax(obj)
        return Given(stage, f"a JAX {type(stage).__name__}")
    library = _library(obj)
    if library is not None:
        for field, jax_type in _HELD:
            held = getattr(obj, field, None)
            if isinstance(held, jax_type):
                stage = from_jax(held)
                return Given(stage, f"{_article(library)} {_words(library)} {type(stage).__name__}")
    return None


def describe(obj) -> str:
    """``obj`` in words, for an error: its kind and type.

    >>> describe(3)
    'int 3'
    """
    given = stage_of(obj)
    if given is not None:
        return given.described
    text = repr(obj)
    text = text if len(text) <= 60 else text[:57] + "..."
    return f"{type(obj).__name__} {text}"


def _unpartial(fun) -> tuple[Any, tuple, dict]:
    """``fun`` without the partials around it (``functools.partial``, equinox's
    ``Partial``, which a ``filter_jit`` method bound to its module is), and the
    arguments they hold: those become the function's arguments, so that a bound
    module's arrays are traced rather than held as constants."""
    args: tuple = ()
    kwargs: dict = {}
    while isinstance(fun, functools.partial) or (
        _library(fun) == "equinox" and type(fun).__name__ == "Partial"
    ):
        args = tuple(fun.args) + args
        kwargs = {**fun.keywords, **kwargs}
        fun = fun.func
    return fun, args, kwargs


def _is_nnx_function(fun) -> bool:
    return _library(fun) == "flax" and callable(getattr(fun, "trace", None)) and callable(fun)


def _is_equinox_function(fun) -> bool:
    return (
        _library(fun) == "equinox"
        and callable(getattr(fun, "lower", None))
        and hasattr(fun, "__wrapped__")
        and callable(fun)
    )


def library_function(fun) -> Wrapped | None:
    """``fun`` as an Olympus :class:`~olympus.stages.Wrapped` when it is a
    ``flax.nnx.jit`` or ``equinox.filter_jit`` function (or a partial of one, such
    as a bound method), else None. The library keeps its own options (static
    arguments, donation, shardings)."""
    inner, bound_args, bound_kwargs = _unpartial(fun)
    if _is_nnx_function(inner):
        trace = _nnx_trace(inner)
        user = getattr(inner, "fun", inner)
    elif _is_equinox_function(inner):
        trace = _equinox_trace(inner)
        user = inner.__wrapped__
    else:
        return None

    def trace_impl(*args, **kwargs):
        return trace(*bound_args, *args, **{**bound_kwargs, **kwargs}), None

    wrapped = Wrapped(user, fun, {}, kind="jit", trace_impl=trace_impl)
    return wrapped


def _nnx_trace(jitted):
    """JAX's Traced of a ``flax.nnx.jit`` function: nnx splits its modules and
    variables into state, as its own ``.trace`` does."""

    def trace(*args, **kwargs):
        return jitted.trace(*args, **kwargs).traced

    return trace


def _is_array_or_spec(x) -> bool:
    """An array, or an array's spec (what the CLI and the Inspector pass):
    traced, as equinox traces arrays."""
    import equinox as eqx

    return eqx.is_array(x) or isinstance(x, jax.ShapeDtypeStruct)


def _equinox_trace(jitted):
    """JAX's Traced of an ``equinox.filter_jit`` function, for arguments as equinox
    takes them (arrays traced, anything else static): a function of the array
    leaves alone, which puts the others back and calls ``jitted`` (equinox then
    makes its own split, and its own inner jit)."""
    import equinox as eqx

    fun = jitted.__wrapped__
    name = str(getattr(fun, "__name__", None) or getattr(jitted, "fn", "function"))

    def trace(*args, **kwargs):
        dynamic, static = eqx.partition((args, kwargs), _is_array_or_spec)

        def staged(*dynamic_args, **dynamic_kwargs):
            a, k = eqx.combine((dynamic_args, dynamic_kwargs), static)
            # equinox's results that are not arrays are static: not the program's.
            return eqx.filter(jitted(*a, **k), eqx.is_array)

        staged.__name__ = name
        staged.__qualname__ = str(getattr(fun, "__qualname__", name))
        dynamic_args, dynamic_kwargs = dynamic
        return jax.jit(staged).trace(*dynamic_args, **dynamic_kwargs)

    return trace


def unmade(given: Given) -> dict[str, str]:
    """The stages that cannot be made from ``given``, each with why: what it does
    not keep (a JAX ``Lowered`` keeps no traced program; a ``Compiled`` without its
    ``Lowered`` keeps neither), and the stages that compile the program again
    (``passes``), which need its ``Lowered``."""
    stage, what = given.stage, given.described
    if isinstance(stage, Traced):
        return {}  # every later stage is made from it
    lowered = stage if isinstance(stage, Lowered) else stage.lowered
    reasons: dict[str, str] = {}
    if lowered is None:
        reason = (
            f"given {what}: the lowered program is not kept by it; pass the function "
            f"(or its Lowered) to see it"
        )
        reasons.update(dict.fromkeys(_made_at("lower"), reason))
        reasons["passes"] = (
            f"given {what}: the passes stage compiles the program again with XLA's "
            f"dumps, which needs its Lowered; pass the Lowered or the function"
        )
    if lowered is None or lowered.traced is None:
        reason = (
            f"given {what}: the traced program is not kept by it; pass the function "
            f"(or its Traced) to see it"
        )
        reasons.update(dict.fromkeys(_made_at("trace"), reason))
    return reasons


def _made_at(step: str) -> tuple[str, ...]:
    """The stages that ``step`` itself makes (not the later steps)."""
    return tuple(s.name for s in stage_registry.all_stages() if s.step == step)
