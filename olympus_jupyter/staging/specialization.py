"""What a function is specialized for, and why two specializations differ.

A :class:`Specialization` is everything that decides the stages: each argument's
shape, dtype, weak type and sharding (or its value, for a static argument), the
lowering platforms, and the compiler options. :func:`explain` says which property
of which argument differs between two of them, in the words of the question
"why did it recompile?".

>>> import numpy as np
>>> a = Specialization.of(lambda x, n: x * n, (np.ones(3, np.float32), 2), static_argnums=(1,))
>>> b = Specialization.of(lambda x, n: x * n, (np.ones(4, np.float32), 3), static_argnums=(1,))
>>> for reason in explain(a, b): print(reason)
argument 'x': shape (3,) → (4,)
argument 'n': static value 2 → 3
"""

from __future__ import annotations

import dataclasses
import inspect as _inspect
from collections.abc import Mapping, Sequence
from typing import Any

import jax
import numpy as np

from olympus.specs import format_spec


@dataclasses.dataclass(frozen=True)
class ArgSpec:
    """One leaf of the arguments: an array type, or a static value."""

    path: str
    shape: tuple[int, ...] | None = None
    dtype: str | None = None
    weak_type: bool = False
    sharding: str | None = None
    static: bool = False
    value: Any = None
    #: A static value's type and hash: with ``value``'s equality, what JAX's cache
    #: tells static values apart by.
    value_key: Any = None

    @property
    def text(self) -> str:
        if self.static:
            return repr(self.value)
        return format_spec(
            jax.ShapeDtypeStruct(self.shape, np.dtype(self.dtype), weak_type=self.weak_type)
        )


def arg_names(fun, n_args: int) -> list[str]:
    """Names of the first ``n_args`` positional parameters (``args[i]`` past them)."""
    try:
        params = list(_inspect.signature(fun).parameters.values())
    except (TypeError, ValueError):
        params = []
    names = []
    for i in range(n_args):
        if i < len(params) and params[i].kind in (
            params[i].POSITIONAL_ONLY,
            params[i].POSITIONAL_OR_KEYWORD,
        ):
            names.append(params[i].name)
        else:
            names.append(f"args[{i}]")
    return names


def format_partition_spec(spec) -> str:
    """``P('x', None)``: a partition spec as Olympus prints it, whatever JAX's repr.

    >>> from jax.sharding import PartitionSpec
    >>> format_partition_spec(PartitionSpec('x', None, ('a', 'b')))
    "P('x', None, ('a', 'b'))"
    """
    return "P(" + ", ".join(repr(entry) for entry in spec) + ")"


def is_array_like(leaf) -> bool:
    """Whether a pytree leaf is traced as an array: an array, its spec, or a Python
    number (a weak-typed scalar). Other leaves (functions, a module's settings) are
    static, as ``equinox.filter_jit`` holds them.

    >>> is_array_like(np.ones(2)), is_array_like(1.0), is_array_like(len)
    (True, True, False)
    """
    if isinstance(leaf, (bool, int, float, complex)):
        return True
    return hasattr(leaf, "shape") and hasattr(leaf, "dtype")


def _leaf_spec(path: str, leaf, static: bool) -> ArgSpec:
    if static or not is_array_like(leaf):
        return ArgSpec(path, static=True, value=leaf, value_key=_static_key(leaf))
    if isinstance(leaf, (bool, int, float, complex)) and not isinstance(leaf, np.generic):
        aval = jax.typeof(leaf)  # a Python scalar: weak-typed, as it traces
        return ArgSpec(path, tuple(aval.shape), str(np.dtype(aval.dtype)), True)
    sharding = getattr(leaf, "sharding", None)
    sharding_text = None
    if sharding is not None and not isinstance(leaf, np.ndarray):
        spec = getattr(sharding, "spec", None)
        if spec is not None or len(getattr(sharding, "device_set", ())) > 1:
            sharding_text = format_partition_spec(spec) if spec is not None else str(sharding)
    dtype = jax.dtypes.canonicalize_dtype(leaf.dtype)  # what JAX traces it as (x64 off: f32)
    return ArgSpec(
        path,
        tuple(leaf.shape),
        str(np.dtype(dtype)),
        bool(getattr(leaf, "weak_type", False)),
        sharding_text,
    )


@dataclasses.dataclass(frozen=True)
class Specialization:
    """Everything that decides what the stages make of a function."""

    args: tuple[ArgSpec, ...]
    platforms: tuple[str, ...] | None = None
    compiler_options: tuple[tuple[str, Any], ...] = ()
    #: Each traced argument's pytree structure: a tuple and a list of the same
    #: leaves are different programs to JAX.
    structures: tuple[tuple[str, str], ...] = ()
    #: The hardware compiled for without it (a target name, :mod:`olympus.hardware`),
    #: with its mesh (``axis=size`` text); None: this machine's devices.
    target: str | None = None

    @classmethod
    def of(
        cls,
        fun,
        args: Sequence[Any],
        kwargs: Mapping[str, Any] | None = None,
        *,
        static_argnums: Sequence[int] = (),
        static_argnames: Sequence[str] = (),
        platforms: Sequence[str] | None = None,
        compiler_options: Mapping[str, Any] | None = None,
        target: str | None = None,
    ) -> "Specialization":
        """The specialization of ``fun`` for these arguments and options (``target``:
        the hardware they are placed on, in words, or None)."""
        kwargs = dict(kwargs or {})
        names = arg_names(getattr(fun, "__wrapped__", fun), len(args))
        static_names = set(static_argnames or ())
        specs: list[ArgSpec] = []
        structures: list[tuple[str, str]] = []
        named = [
            (name, arg, i in set(static_argnums or ()) or name in static_names)
            for i, (name, arg) in enumerate(zip(names, args))
        ]
        named += [(name, kwargs[name], name in static_names) for name in sorted(kwargs)]
        for name, arg, static in named:
            specs += _tree_specs(name, arg, static)
            if not static:
                structures.append((name, str(jax.tree_util.tree_structure(arg))))
        return cls(
            tuple(specs),
            tuple(platforms) if platforms else None,
            tuple(sorted((compiler_options or {}).items())),
            tuple(structures),
            target,
        )

    def describe(self) -> str:
        """``x: f32[3], n=2`` style text of the arguments."""
        return ", ".join(
            f"{a.path}={a.text}" if a.static else f"{a.path}: {a.text}" for a in self.args
        )


def _tree_specs(name: str, arg, static: bool) -> list[ArgSpec]:
    if static:
        return [_leaf_spec(name, arg, True)]
    leaves = jax.tree_util.tree_leaves_with_path(arg)
    if len(leaves) == 1 and not leaves[0][0]:
        return [_leaf_spec(name, leaves[0][1], False)]
    return [_leaf_spec(name + jax.tree_util.keystr(path), leaf, False) for path, leaf in leaves]


def explain(before: Specialization, after: Specialization) -> list[str]:
    """Why ``after`` needs new stages where ``before`` had some: one reason a line.

    An empty list means the same specialization: nothing would be re-traced.
    """
    reasons: list[str] = []
    old = {a.path: a for a in before.args}
    new = {a.path: a for a in after.args}
    for path in old.keys() - new.keys():
        reasons.append(f"argument '{path}' is gone (was {old[path].text})")
    for path in new.keys() - old.keys():
        reasons.append(f"argument '{path}' is new ({new[path].text})")
    old_trees = dict(before.structures)
    for name, tree in after.structures:
        if name in old_trees and old_trees[name] != tree:
            reasons.append(
                f"argument '{name}': pytree {_tree_text(old_trees[name])} → {_tree_text(tree)}"
            )
    for a in after.args:
        b = old.get(a.path)
        if b is None:
            continue
        label = f"argument '{a.path}'"
        if a.static != b.static:
            reasons.append(f"{label}: {'now static' if a.static else 'no longer static'}")
        elif a.static:
            if not _same_value(a.value, b.value):
                reasons.append(f"{label}: static value {b.value!r} → {a.value!r}")
        else:
            if a.shape != b.shape:
                reasons.append(f"{label}: shape {b.shape} → {a.shape}")
            if a.dtype != b.dtype:
                reasons.append(f"{label}: dtype {b.dtype} → {a.dtype}")
            if a.weak_type != b.weak_type:
                reasons.append(
                    f"{label}: weak type {b.weak_type} → {a.weak_type} "
                    f"(a Python scalar traces as a weak type)"
                )
            if a.sharding != b.sharding:
                reasons.append(f"{label}: sharding {b.sharding} → {a.sharding}")
    if before.target != after.target:
        reasons.append(
            f"target {before.target or 'this machine'} → {after.target or 'this machine'}"
        )
    if before.platforms != after.platforms:
        reasons.append(f"lowering platforms {_platforms(before)} → {_platforms(after)}")
    if before.compiler_options != after.compiler_options:
        reasons.append(
            f"compiler options {dict(before.compiler_options)} → {dict(after.compiler_options)}"
        )
    return reasons


def _platforms(s: Specialization) -> str:
    return ", ".join(s.platforms) if s.platforms else "this machine"


def _static_key(value):
    try:
        return type(value).__module__, type(value).__qualname__, hash(value)
    except TypeError:  # unhashable: JAX refuses it as a static value anyway
        return type(value).__module__, type(value).__qualname__, id(value)


def _tree_text(structure: str) -> str:
    """``PyTreeDef((*, *))`` -> ``(*, *)``."""
    return structure[len("PyTreeDef(") : -1] if structure.startswith("PyTreeDef(") else structure


def _same_value(a, b) -> bool:
    """Whether JAX takes two static values for the same: same type, equal hashes and
    equal (``1`` and ``1.0`` are two programs to JAX's cache, as here)."""
    try:
        return type(a) is type(b) and hash(a) == hash(b) and bool(a == b)
    except Exception:  # noqa: BLE001 - unhashable or odd objects: compare by identity
        return a is b
