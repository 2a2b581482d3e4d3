"""Module paths from JAX's name stacks, and a tree of figures by module.

JAX records, for each op, the scopes it was made in: ``jax.named_scope``, the
module paths flax linen pushes (``decoder/layers_0/MlpBlock_0/Dense_0``), the
class names equinox pushes (``eqx.nn.MLP/eqx.nn.Linear``), haiku's module names,
wrapped in the transformations applied on the way (``jvp(M)``, ``transpose(...)``,
``vmap()``, ``jit(f)``, ``while/body``). :func:`module_path` keeps the scopes and
drops the transformations and the primitive's own name; :func:`module_tree` adds
figures up the tree so that every node holds its subtree's.

>>> module_path("jit(step)/transpose(jvp(Model))/Block_0/Dense_0/dot_general")
'Model/Block_0/Dense_0'
>>> module_path("jit(step)/transpose(jvp(Decoder))/Decoder/block_0/up/dot_general")
'Decoder/block_0/up'
>>> module_path("jit(step)/jvp()/jit(relu)/max")
''
>>> [(n.path, n.figures["flops"]) for n in module_tree({"A/B": {"flops": 2.0},
...                                                     "A/C": {"flops": 1.0}})]
[('A', 3.0), ('A/B', 2.0), ('A/C', 1.0)]
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Mapping

__all__ = ["module_path", "module_tree", "ModuleNode", "split_scopes"]

# Scopes JAX's transformations and control flow push: not modules.
_TRANSFORMS = frozenset(
    {
        "jit",
        "pjit",
        "jvp",
        "vjp",
        "transpose",
        "vmap",
        "pmap",
        "xmap",
        "remat",
        "checkpoint",
        "rematted_computation",
        "custom_jvp_call",
        "custom_vjp_call",
        "custom_vjp_call_jaxpr",
        "shard_map",
        "while",
        "body",
        "cond",
        "scan",
        "branch",
        "closed_call",
        "core_call",
        "remat2",
        "checkpoint_name",
        "named_call",
    }
)
_WRAPPED = re.compile(r"^([\w.\-]+)\((.*)\)$")
_BRANCH = re.compile(r"^branch_\d+(_fun)?$")


def split_scopes(name_stack: str) -> list[str]:
    """The parts of a name stack split on the slashes outside parentheses.

    >>> split_scopes("jit(f)/jvp(a/b)/c")
    ['jit(f)', 'jvp(a/b)', 'c']
    """
    parts, depth, start = [], 0, 0
    for k, ch in enumerate(name_stack):
        if ch == "(":
            depth += 1
        elif ch == ")":
            depth = max(depth - 1, 0)
        elif ch == "/" and depth == 0:
            parts.append(name_stack[start:k])
            start = k + 1
    parts.append(name_stack[start:])
    return [p for p in parts if p]


def _scopes_of(part: str) -> list[str]:
    """The module scopes a part of a name stack names (``jvp(M)`` names ``M``)."""
    m = _WRAPPED.match(part)
    if m is not None:
        outer, inner = m.group(1), m.group(2)
        if outer in ("jit", "pjit"):  # a jitted function: a call, not a module
            return []
        return [s for p in split_scopes(inner) for s in _scopes_of(p)]
    if part in _TRANSFORMS or _BRANCH.match(part) or "=" in part:
        return []
    return [part]


def module_path(name_stack: str, *, primitive: bool = True) -> str:
    """The module path of an op's name stack: its scopes, without the
    transformations around them, ``""`` for none. ``primitive``: the last part is
    the op's own name (as in HLO metadata's ``op_name``), left out. XLA joins the
    names of instructions it merged with ``;``: the first is taken.

    >>> module_path("jit(f)/M/Dense_0/mul;jit(f)/M/Dense_1/mul")
    'M/Dense_0'
    """
    parts = split_scopes(name_stack.split(";", 1)[0])
    if primitive and parts:
        parts = parts[:-1]
    if parts and _WRAPPED.match(parts[0]) and parts[0].startswith(("jit(", "pjit(")):
        parts = parts[1:]  # the staged function itself
    scopes: list[str] = []
    for s in (s for p in parts for s in _scopes_of(p)):
        # A transformation's scope names the module it wraps, whose own scope follows
        # (``transpose(jvp(Decoder))/Decoder/...``): one module, named once.
        if not scopes or scopes[-1] != s:
            scopes.append(s)
    return "/".join(scopes)


@dataclasses.dataclass(frozen=True)
class ModuleNode:
    """One node of the module tree: its ``path`` (``""`` for what no module made),
    ``depth`` (0 for the top level), and ``figures``, its subtree's sums."""

    path: str
    depth: int
    figures: Mapping[str, float]

    @property
    def name(self) -> str:
        """The last part of the path."""
        return self.path.rsplit("/", 1)[-1]


def module_tree(leaves: Mapping[str, Mapping[str, float]], key: str = "flops") -> list[ModuleNode]:
    """Every node of the tree the paths of ``leaves`` make, each with the sums of
    the figures of the leaves beneath it (a leaf's own included), in depth-first
    order, children by ``key`` biggest first; the ``""`` path (no module) last."""
    sums: dict[str, dict[str, float]] = {}
    children: dict[str, list[str]] = {}
    for path, figures in leaves.items():
        parts = path.split("/") if path else []
        prefixes = ["/".join(parts[: k + 1]) for k in range(len(parts))] or [""]
        for k, prefix in enumerate(prefixes):
            node = sums.get(prefix)
            if node is None:
                node = sums[prefix] = {}
                parent = prefixes[k - 1] if k else None
                children.setdefault(parent or "\0top", []).append(prefix)
            for name, value in figures.items():
                node[name] = node.get(name, 0.0) + float(value)
    out: list[ModuleNode] = []

    def visit(path: str, depth: int) -> None:
        out.append(ModuleNode(path, depth, dict(sums[path])))
        kids = children.get(path, [])
        for kid in sorted(kids, key=lambda p: (-sums[p].get(key, 0.0), p)):
            visit(kid, depth + 1)

    top = children.get("\0top", [])
    for path in sorted(top, key=lambda p: (p == "", -sums[p].get(key, 0.0), p)):
        visit(path, 0)
    return out
