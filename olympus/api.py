"""The compiling transformations (``jit``, ``pmap``) and ``make_olympuspr``.

Both transformations return a :class:`~olympus.stages.Wrapped` whose
``trace`` → ``lower`` → ``compile`` path gives explicit control over each stage.

>>> import olympus
>>> f = olympus.jit(lambda x, n: x * n, static_argnums=1)
>>> f.trace(2.0, 3).lower().compile()(2.0)
Array(6., dtype=float32, weak_type=True)
"""
from __future__ import annotations

import functools
import inspect
from typing import Any, Callable

import jax
from jax._src import stages as jax_stages
from jax._src import core as jax_core

from olympus.stages import Olympuspr, Wrapped

_UNSPECIFIED = object()


def _check_callable(fun, transform: str):
    if not callable(fun):
        raise TypeError(
            f"olympus.{transform} expects a function, got {type(fun).__name__} "
            f"{fun!r:.80}. Pass the function itself, e.g. olympus.{transform}(f), "
            f"not the result of calling it.")


def jit(fun: Callable | None = None, /, *,
        static_argnums: int | tuple[int, ...] | None = None,
        static_argnames: str | tuple[str, ...] | None = None,
        donate_argnums: int | tuple[int, ...] | None = None,
        donate_argnames: str | tuple[str, ...] | None = None,
        keep_unused: bool = False,
        in_shardings: Any = _UNSPECIFIED,
        out_shardings: Any = _UNSPECIFIED,
        compiler_options: dict[str, Any] | None = None) -> Wrapped:
    """Compiles ``fun`` just in time, with ``.trace``/``.lower``/``.eval_shape`` for AOT use.

    Options are those of ``jax.jit``; with no ``fun`` it returns a decorator.

    >>> import olympus
    >>> @olympus.jit
    ... def f(x, y): return 2 * x + y
    >>> f(3, 4)
    Array(10, dtype=int32, weak_type=True)
    """
    options = dict(static_argnums=static_argnums, static_argnames=static_argnames,
                   donate_argnums=donate_argnums, donate_argnames=donate_argnames,
                   keep_unused=keep_unused, compiler_options=compiler_options)
    if in_shardings is not _UNSPECIFIED:
        options["in_shardings"] = in_shardings
    if out_shardings is not _UNSPECIFIED:
        options["out_shardings"] = out_shardings
    if fun is None:
        return functools.partial(_jit, **options)
    return _jit(fun, **options)


def _jit(fun, **options) -> Wrapped:
    _check_callable(fun, "jit")
    target = fun._jax if isinstance(fun, Wrapped) else fun
    jitted = jax.jit(target, **options)
    return Wrapped(fun, jitted, options, kind="jit")


def pmap(fun: Callable | None = None, axis_name=None, *, in_axes=0, out_axes=0,
         static_broadcasted_argnums=(), devices=None, backend=None, axis_size=None,
         donate_argnums=()) -> Wrapped:
    """Maps ``fun`` over devices (as ``jax.pmap``), with the same AOT path as ``jit``.

    >>> import olympus, olympus.numpy as jnp
    >>> p = olympus.pmap(lambda x: x * 2)
    >>> p.trace(jnp.ones((1, 3))).lower().compile()(jnp.ones((1, 3)))
    Array([[2., 2., 2.]], dtype=float32)
    """
    options = dict(in_axes=in_axes, out_axes=out_axes,
                   static_broadcasted_argnums=static_broadcasted_argnums,
                   devices=devices, backend=backend, axis_size=axis_size,
                   donate_argnums=donate_argnums)
    if fun is None:
        return functools.partial(pmap, axis_name=axis_name, **options)
    _check_callable(fun, "pmap")
    target = fun._jax if isinstance(fun, Wrapped) else fun
    pmapped = jax.pmap(target, axis_name, **options)
    infer_params = _pmap_infer_params(pmapped)

    def trace_impl(*args, **kwargs):
        # What jax.pmap(...).lower does, stopping after the trace: pmap stages
        # out as a jit of a shard_map over the mapped devices.
        _, jitted_f, args_flat, in_tree, donated, _, _ = infer_params(*args, **kwargs)
        abstract = [jax_core.shaped_abstractify(a) for a in args_flat]
        args_info = jax_stages.make_args_info(in_tree, abstract, donated)
        return jitted_f.trace(*args_flat), args_info

    return Wrapped(fun, pmapped, dict(options, axis_name=axis_name), kind="pmap",
                   trace_impl=trace_impl)


def _pmap_infer_params(pmapped):
    closure = inspect.getclosurevars(pmapped.lower).nonlocals
    try:
        return closure["infer_params"]
    except KeyError:  # pragma: no cover - guarded by the pinned jax version
        raise RuntimeError(
            f"olympus.pmap cannot trace with jax {jax.__version__}; "
            "install the jax version olympus pins.") from None


def make_olympuspr(fun: Callable, *, static_argnums: int | tuple[int, ...] = (),
                   return_shape: bool = False):
    """Returns a function that gives ``fun``'s :class:`~olympus.stages.Olympuspr` for example args.

    >>> import olympus
    >>> print(olympus.make_olympuspr(lambda x, y: 2 * x + y)(3, 4))
    { lambda ; a:i32[] b:i32[]. let
        c:i32[] = mul 2:i32[] a
        d:i32[] = add c b
      in (d,) }
    """
    _check_callable(fun, "make_olympuspr")
    make = jax.make_jaxpr(fun, static_argnums=static_argnums, return_shape=return_shape)

    @functools.wraps(fun)
    def olympuspr_of(*args, **kwargs):
        out = make(*args, **kwargs)
        if return_shape:
            closed, shape = out
            return Olympuspr(closed), shape
        return Olympuspr(out)

    return olympuspr_of
