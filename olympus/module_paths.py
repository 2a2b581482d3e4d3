"""Module paths from JAX's name stacks, and a tree of figures by module.

JAX records, for each op, the scopes it was made in: ``jax.named_scope``, the
module paths flax linen pushes (``decoder/layers_0/MlpBlock_0/Dense_0``), the
class names equinox pushes (``eqx.nn.MLP/eqx.nn.Linear``), haiku's module names,
wrapped in the transformations applied on the way (``jvp(M)``, ``transpose(...)``,
``vmap()``, ``jit(f)``, ``while/body``). :func:`module_path` keeps the scopes and
drops the transformations and the primitive's own name; :func:`module_tree` adds
figures up the tree so that every node holds its subtree's.

flax ``nnx`` pushes no scopes: its modules are attributes called as
``self.conv1(x)``. :func:`call_path` reads the path from the op's call stack
instead, each frame's call expression (Python keeps its columns) naming the
attribute that holds the module called (``CNN/conv1``); :func:`op_module_path`
takes the name stack's path where there is one and the call stack's where not.

>>> module_path("jit(step)/transpose(jvp(Model))/Block_0/Dense_0/dot_general")
'Model/Block_0/Dense_0'
>>> module_path("jit(step)/transpose(jvp(Decoder))/Decoder/block_0/up/dot_general")
'Decoder/block_0/up'
>>> module_path("jit(step)/jvp()/jit(relu)/max")
''
>>> module_path("jit(step)/bhqk,bkhd->bqhd/dot_general")  # jnp.einsum's spec: no module
''
>>> [(n.path, n.figures["flops"]) for n in module_tree({"A/B": {"flops": 2.0},
...                                                     "A/C": {"flops": 1.0}})]
[('A', 3.0), ('A/B', 2.0), ('A/C', 1.0)]
"""

from __future__ import annotations

import ast
import dataclasses
import linecache
import re
from collections.abc import Callable, Mapping, Sequence

__all__ = [
    "module_path",
    "module_tree",
    "ModuleNode",
    "split_scopes",
    "call_path",
    "op_module_path",
    "call_expression",
]

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
        "eval_jaxpr",  # a JAX interpreter's scope (in JAX 0.12's name stacks), not a module
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
    if part in _TRANSFORMS or _BRANCH.match(part) or "=" in part or "->" in part:
        return []  # a transformation, a branch, parameters, an einsum's spec
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


def _self_attributes(expression: str | None) -> list[str] | None:
    """The attribute path a call expression calls on ``self`` (``self.blocks[0].mlp(x)``:
    ``['blocks', '0', 'mlp']``); ``None`` for any other call or none."""
    if not expression or "self" not in expression:
        return None
    try:
        node = ast.parse(expression.strip(), mode="eval").body
    except SyntaxError:
        return None
    if not isinstance(node, ast.Call):
        return None
    parts: list[str] = []
    func = node.func
    while True:
        if isinstance(func, ast.Attribute):
            parts.append(func.attr)
            func = func.value
        elif isinstance(func, ast.Subscript):
            index = func.slice
            if isinstance(index, ast.Constant) and isinstance(index.value, (int, str)):
                parts.append(str(index.value))
            func = func.value
        elif isinstance(func, ast.Name) and func.id == "self" and parts:
            return parts[::-1]
        else:
            return None


def _method(function: str) -> tuple[str, str] | None:
    """``(class, method)`` of a qualified function name (``CNN.__call__``), ``None``
    for a plain function or a nested one."""
    if "<" in function or "." not in function:
        return None
    owner, method = function.rsplit(".", 1)
    return owner.rsplit(".", 1)[-1], method


def call_path(stack: Sequence[tuple[str, str | None]]) -> str:
    """The module path a call stack names through its calls of modules held in
    attributes, as flax ``nnx`` models call them. ``stack``: innermost first, each
    frame's qualified function name and its call expression (the source the frame's
    columns span; ``None`` where unknown). A frame calling ``self.a.b(...)`` into a
    method of another object (``Linear.__call__``, or ``b`` itself for
    ``self.enc.encode(...)``) adds ``a/b`` (or ``enc``), where the frame is the
    module the path names so far (or its own helper method); else such a call starts
    a path of its own, with the class whose method made it (the innermost chain of
    module calls is the path: a test runner's or a server's objects calling their
    attributes further out are not modules). ``""`` where there is none.

    >>> call_path([("Linear.__call__", "self.dot_general(x, k)"),
    ...            ("Block.__call__", "self.mlp[0](x)"),
    ...            ("Model.__call__", "self.blocks[1](x)"),
    ...            ("loss_fn", "model(x)")])
    'Model/blocks/1/mlp/0'
    """
    path: list[str] = []
    last = None  # the frame of the module the path names so far
    for k in range(len(stack) - 1, 0, -1):  # outermost caller first
        function, expression = stack[k]
        callee = _method(stack[k - 1][0])
        caller = _method(function)
        if callee is None or caller is None:
            continue
        parts = _self_attributes(expression)
        if parts is None:
            continue
        if callee[1] != "__call__":
            if len(parts) < 2 or parts[-1] != callee[1]:
                # self.helper(...): the same object's method, not a module; the
                # module the path names goes on into it.
                if last == k and parts == [callee[1]] and callee[0] == caller[0]:
                    last = k - 1
                continue
            parts = parts[:-1]
        if last != k:  # not called from the module the path names: a path of its own
            path = [caller[0]]
        path.extend(parts)
        last = k - 1
    return "/".join(path)


def call_expression(
    path: str,
    span: tuple[int, int, int, int],
    read: Callable[[str, int], str | None] | None = None,
) -> str | None:
    """The source text a frame's columns span (``span``: line, column, end line, end
    column, as Python reports them: columns in UTF-8 bytes), read by ``read(path,
    line)`` (default: :mod:`linecache`); ``None`` where a line cannot be read. Where
    only the start is known (XLA keeps no end for some modules: the end is the
    start), the call that starts there, up to its closing parenthesis on that line.

    >>> call_expression("m.py", (1, 4, 1, 9), lambda p, n: "y = f(x) + 1")
    'f(x) '
    >>> call_expression("m.py", (1, 8, 1, 8), lambda p, n: "y = x + self.up(g(x)) * 2")
    'self.up(g(x))'
    """
    line, column, end_line, end_column = span
    if line <= 0 or end_line < line or end_line - line > 20:
        return None
    read = read or (lambda p, n: linecache.getline(p, n) or None)
    texts = [read(path, n) for n in range(line, end_line + 1)]
    if any(t is None for t in texts):
        return None
    raw = [t.rstrip("\n").encode("utf-8") for t in texts if t is not None]
    if (end_line, end_column) == (line, column):
        return _call_from(raw[0][column:].decode("utf-8", "replace"))
    raw[-1] = raw[-1][:end_column]
    raw[0] = raw[0][column:]
    return b"\n".join(raw).decode("utf-8", "replace")


_CALLEE = re.compile(r"[\w.]+(\[[^\[\]()]*\])*(\.\w+)*\(")


def _call_from(text: str) -> str | None:
    """The call ``text`` starts with (a dotted, maybe indexed, name, then its
    arguments up to the matching parenthesis), ``None`` for anything else."""
    m = _CALLEE.match(text)
    if m is None:
        return None
    depth = 0
    for k in range(m.end() - 1, len(text)):
        if text[k] in "([{":
            depth += 1
        elif text[k] in ")]}":
            depth -= 1
            if depth == 0:
                return text[: k + 1]
    return None


def op_module_path(
    name_stack: str,
    location: int | None,
    tables,
    read: Callable[[str, int], str | None] | None = None,
    memo: dict | None = None,
    staged: tuple[str, int, int] | None = None,
) -> str:
    """The module path of an op: its name stack's (:func:`module_path`), or where
    that names none, its call stack's (:func:`call_path`; ``location`` indexes
    ``tables.locations``, a :class:`~olympus.provenance.sources.SourceTables`).
    ``memo``: a dict kept across the ops of one program (paths by name stack and
    location, expressions by frame). ``staged``: the staged function's file, first
    and last line; the frames outside its call (whoever called it: a notebook, a
    test runner) are not read.

    >>> from olympus.provenance.sources import SourceTable
    >>> table = SourceTable()
    >>> at = table.location([("m.py", 2, 0, 2, 10, "Linear.__call__"),
    ...                      ("m.py", 5, 8, 5, 21, "Net.__call__")])
    >>> source = {2: "jnp.dot(x)", 5: "    y = self.dense(x)"}
    >>> op_module_path("jit(f)/dot_general", at, table.tables(), lambda p, n: source[n])
    'Net/dense'
    """
    memo = {} if memo is None else memo
    key = ("op", name_stack, location)  # each kind of entry has a tag of its own
    found = memo.get(key)
    if found is not None:
        return found
    path = memo.get(("name stack", name_stack))
    if path is None:  # many ops share a name stack (each on a line of its own)
        path = memo[("name stack", name_stack)] = module_path(name_stack)
    if not path and location is not None and tables is not None:
        stack = []
        frames = tables.locations[location].frames
        if staged is not None:
            inside = [
                k
                for k, i in enumerate(frames)
                if tables.files[tables.frames[i].file] == staged[0]
                and staged[1] <= tables.frames[i].line <= staged[2]
            ]
            frames = frames[: inside[0] + 1] if inside else frames
        functions = [tables.frames[i].function for i in frames]
        for k, i in enumerate(frames):
            # call_path reads a frame's call only where a method calls a method:
            # the source of the others (plain functions, a notebook) is not read.
            expression = None
            if k and _method(functions[k]) is not None and _method(functions[k - 1]):
                expression = memo.get(("frame", i), False)
                if expression is False:
                    f = tables.frames[i]
                    span = (f.line, f.column, f.end_line, f.end_column)
                    expression = call_expression(tables.files[f.file], span, read)
                    memo[("frame", i)] = expression
            stack.append((functions[k], expression))
        path = call_path(stack)
    memo[key] = path
    return path


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
