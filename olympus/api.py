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
from collections.abc import Sequence
from typing import Any, Callable

import jax

from olympus import jax_compat
from olympus.stages import Olympuspr, Wrapped, _UserSignature, jitted

_UNSPECIFIED = object()


def _check_callable(fun, transform: str):
    if not callable(fun):
        raise TypeError(
            f"olympus.{transform} expects a function, got {type(fun).__name__} "
            f"{fun!r:.80}. Pass the function itself, e.g. olympus.{transform}(f), "
            f"not the result of calling it."
        )


def jit(
    fun: Callable | None = None,
    /,
    *,
    static_argnums: int | tuple[int, ...] | None = None,
    static_argnames: str | tuple[str, ...] | None = None,
    donate_argnums: int | tuple[int, ...] | None = None,
    donate_argnames: str | tuple[str, ...] | None = None,
    keep_unused: bool = False,
    in_shardings: Any = _UNSPECIFIED,
    out_shardings: Any = _UNSPECIFIED,
    compiler_options: dict[str, Any] | None = None,
) -> Wrapped:
    """Compiles ``fun`` just in time, with ``.trace``/``.lower``/``.eval_shape`` for AOT use.

    Options are those of ``jax.jit``; with no ``fun`` it returns a decorator.

    >>> import olympus
    >>> @olympus.jit
    ... def f(x, y): return 2 * x + y
    >>> f(3, 4)
    Array(10, dtype=int32, weak_type=True)
    """
    options = dict(
        static_argnums=static_argnums,
        static_argnames=static_argnames,
        donate_argnums=donate_argnums,
        donate_argnames=donate_argnames,
        keep_unused=keep_unused,
        compiler_options=compiler_options,
    )
    if in_shardings is not _UNSPECIFIED:
        options["in_shardings"] = in_shardings
    if out_shardings is not _UNSPECIFIED:
        options["out_shardings"] = out_shardings
    if fun is None:
        return functools.partial(_jit, **options)  # type: ignore[return-value]  # decorator form
    return _jit(fun, **options)


def _jit(fun, **options) -> Wrapped:
    _check_callable(fun, "jit")
    return jitted(fun, **options)


def pmap(
    fun: Callable | None = None,
    axis_name=None,
    *,
    in_axes=0,
    out_axes=0,
    static_broadcasted_argnums=(),
    devices=None,
    backend=None,
    axis_size=None,
    donate_argnums=(),
) -> Wrapped:
    """Maps ``fun`` over devices (as ``jax.pmap``), with the same AOT path as ``jit``.

    Its stages carry the user's function name and argument structure.

    >>> import olympus, olympus.numpy as jnp
    >>> def double(x): return x * 2
    >>> traced = olympus.pmap(double).trace(jnp.ones((1, 3)))
    >>> traced.fun_name
    'double'
    >>> traced.lower().compile()(jnp.ones((1, 3)))
    Array([[2., 2., 2.]], dtype=float32)
    """
    options = dict(
        in_axes=in_axes,
        out_axes=out_axes,
        static_broadcasted_argnums=static_broadcasted_argnums,
        devices=devices,
        backend=backend,
        axis_size=axis_size,
        donate_argnums=donate_argnums,
    )
    if fun is None:
        return functools.partial(pmap, axis_name=axis_name, **options)  # type: ignore[return-value]
    _check_callable(fun, "pmap")
    target = fun._jax if isinstance(fun, Wrapped) else fun
    pmapped = jax.pmap(target, axis_name, **options)
    trace_parts = jax_compat.pmap_trace_parts(pmapped)
    name = _fun_name(fun)

    def trace_impl(*args, **kwargs):
        # What jax.pmap(...).lower does, stopping after the trace: pmap stages
        # out as a jit of a shard_map over the mapped devices, which takes the
        # flat arguments. The user's names and structure go on the stages.
        jitted_f, args_flat, in_tree, donated, out_tree = trace_parts(*args, **kwargs)
        abstract = [jax_compat.abstractify(a) for a in args_flat]
        args_info = jax_compat.make_args_info(in_tree, abstract, donated)
        traced = jitted_f.trace(*args_flat)
        return traced, _UserSignature(name, args_info, in_tree.unflatten(abstract), out_tree)

    return Wrapped(
        fun, pmapped, dict(options, axis_name=axis_name), kind="pmap", trace_impl=trace_impl
    )


def _fun_name(fun) -> str:
    """The name JAX gives a function in its stages (partials by their function)."""
    while isinstance(fun, functools.partial):
        fun = fun.func
    if isinstance(fun, Wrapped):
        fun = fun.fun
    return getattr(fun, "__name__", None) or type(fun).__name__


def make_olympuspr(
    fun: Callable,
    *,
    static_argnums: int | Sequence[int] = (),
    axis_env: Sequence[tuple[Any, int]] | None = None,
    return_shape: bool = False,
    **options,
):
    """Returns a function that gives ``fun``'s :class:`~olympus.stages.Olympuspr` for example args.

    Takes what ``jax.make_jaxpr`` takes: ``static_argnums``, ``axis_env`` (named
    axes and their sizes, for collectives outside a ``pmap``), ``return_shape``
    (then it returns the program and the output's ``ShapeDtypeStruct``s), and any
    option a newer JAX adds.

    >>> import olympus
    >>> print(olympus.make_olympuspr(lambda x, y: 2 * x + y)(3, 4))
    { lambda ; a:i32[] b:i32[]. let
        c:i32[] = mul 2:i32[] a
        d:i32[] = add c b
      in (d,) }
    >>> print(olympus.make_olympuspr(lambda x: olympus.lax.psum(x, 'i'),
    ...                              axis_env=[('i', 4)])(1.0))
    { lambda ; a:f32[]. let b:f32[] = psum[axes=('i',) axis_index_groups=None] a in (b,) }
    """
    _check_callable(fun, "make_olympuspr")
    make = jax.make_jaxpr(  # type: ignore[call-overload]
        fun, static_argnums=static_argnums, axis_env=axis_env, return_shape=return_shape, **options
    )

    @functools.wraps(fun)
    def olympuspr_of(*args, **kwargs):
        out = make(*args, **kwargs)
        if return_shape:
            closed, shape = out
            return Olympuspr(closed), shape
        return Olympuspr(out)

    return olympuspr_of
