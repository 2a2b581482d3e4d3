"""JAX and jaxlib internals are used in one module only: ``olympus/jax_compat.py``.

Every other module of ``olympus`` and ``olympus_jupyter`` is read (its syntax tree,
not its text), and three things are rejected in it:

(a) an import of a JAX module that is not public: a dotted name with a component
    starting with ``_`` (``jax._src``), a ``jax`` submodule outside the public API
    (``jax.lib``, ``jax.interpreters``...), or any ``jaxlib`` module;
(b) an attribute reached from an imported JAX module through a ``_`` name or a
    module that is not public (``jax._src.core``, ``jax.lib.xla_bridge``);
(c) an attribute of a JAX object that imports cannot show: the attributes
    ``jax_compat`` lists in ``INTERNAL_ATTRIBUTES`` (``raw_frames``,
    ``name_stack.stack``...) and every private attribute it reads of an object not
    its own (``_lowering``, ``_executable``...), taken from its source so the list
    follows its wrappers.

An attribute of ``self`` is the module's own; what is read through it is checked
(``self._hlo().to_string`` reads ``to_string``). (c) matches the
dotted tail of an access as written (``eqn.source_info.name_stack`` matches
``source_info.name_stack``), not the type of the object.
"""

from __future__ import annotations

import ast
import dataclasses
import importlib.util
import pathlib
import textwrap

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("olympus", "olympus_jupyter")
COMPAT = ROOT / "olympus" / "jax_compat.py"

#: The public modules of JAX (its API reference), each with its submodules.
PUBLIC_JAX = (
    "jax",
    "jax.numpy",
    "jax.scipy",
    "jax.lax",
    "jax.random",
    "jax.sharding",
    "jax.stages",
    "jax.export",
    "jax.extend",
    "jax.tree",
    "jax.tree_util",
    "jax.dtypes",
    "jax.errors",
    "jax.debug",
    "jax.dlpack",
    "jax.distributed",
    "jax.ffi",
    "jax.flatten_util",
    "jax.image",
    "jax.nn",
    "jax.ops",
    "jax.profiler",
    "jax.ref",
    "jax.test_util",
    "jax.typing",
    "jax.monitoring",
    "jax.ad_checkpoint",
    "jax.custom_derivatives",
    "jax.custom_batching",
    "jax.experimental",
    "jax.example_libraries",
)
#: jaxlib documents no module for direct use: JAX's public modules re-export what
#: is meant to be used (``jax.extend.mlir.ir`` for ``jaxlib.mlir.ir``).
JAX_ROOTS = ("jax", "jaxlib")


def is_private(name: str) -> bool:
    return name.startswith("_") and not (name.startswith("__") and name.endswith("__"))


def is_public_module(module: str) -> bool:
    """Whether ``module`` (a dotted name under ``jax`` or ``jaxlib``) is public API."""
    parts = module.split(".")
    if parts[0] != "jax" or any(is_private(p) for p in parts):
        return False
    if len(parts) == 1:
        return True
    return any(module == p or module.startswith(p + ".") for p in PUBLIC_JAX[1:])


def _jax_dir() -> pathlib.Path:
    spec = importlib.util.find_spec("jax")
    return pathlib.Path(list(spec.submodule_search_locations)[0])


def is_jax_module(dotted: str, jax_dir: pathlib.Path | None = None) -> bool:
    """Whether ``jax.a.b`` names a module of the installed JAX (read from its files,
    importing nothing)."""
    parts = dotted.split(".")
    if parts[0] != "jax":
        return parts[0] == "jaxlib"
    folder = (jax_dir or _jax_dir()).joinpath(*parts[1:])
    return (
        len(parts) == 1 or folder.with_suffix(".py").is_file() or (folder / "__init__.py").is_file()
    )


def module_of(dotted: str, jax_dir: pathlib.Path | None = None) -> str:
    """The longest prefix of ``dotted`` that is a JAX module."""
    parts = dotted.split(".")
    for n in range(len(parts), 0, -1):
        if is_jax_module(".".join(parts[:n]), jax_dir):
            return ".".join(parts[:n])
    return parts[0]


def chain(node: ast.AST) -> list[str] | None:
    """``a.b().c[0].d`` -> ``['a', 'b', 'c', 'd']`` (calls and subscripts skipped);
    None if the chain does not start at a name."""
    names: list[str] = []
    while True:
        if isinstance(node, ast.Attribute):
            names.append(node.attr)
            node = node.value
        elif isinstance(node, (ast.Call, ast.Subscript)):
            node = node.func if isinstance(node, ast.Call) else node.value
        elif isinstance(node, ast.Name):
            return [node.id] + names[::-1]
        else:
            return None


def attribute_chains(tree: ast.AST):
    """Every outermost attribute access, as (line, chain of names); ``getattr(x,
    "name")``, ``hasattr`` and ``setattr`` count as ``x.name``."""
    inner = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute):
            value = node.value
            while isinstance(value, (ast.Call, ast.Subscript, ast.Attribute)):
                if isinstance(value, ast.Attribute):
                    inner.add(id(value))
                value = value.func if isinstance(value, ast.Call) else value.value
    for node in ast.walk(tree):
        if isinstance(node, ast.Attribute) and id(node) not in inner:
            names = chain(node)
            if names:
                yield node.lineno, names
        elif (
            isinstance(node, ast.Call)
            and isinstance(node.func, ast.Name)
            and node.func.id in ("getattr", "hasattr", "setattr")
            and len(node.args) >= 2
            and isinstance(node.args[1], ast.Constant)
            and isinstance(node.args[1].value, str)
        ):
            names = chain(node.args[0]) or ["?"]
            yield node.lineno, names + [node.args[1].value]


def jax_names(tree: ast.AST) -> dict[str, str]:
    """The names a module binds to JAX modules or objects: local name -> dotted path."""
    bound = {}
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in JAX_ROOTS:
                    if alias.asname:
                        bound[alias.asname] = alias.name
                    else:
                        root = alias.name.split(".")[0]
                        bound[root] = root
        elif (
            isinstance(node, ast.ImportFrom)
            and not node.level
            and node.module
            and node.module.split(".")[0] in JAX_ROOTS
        ):
            for alias in node.names:
                if alias.name != "*":
                    bound[alias.asname or alias.name] = f"{node.module}.{alias.name}"
    return bound


@dataclasses.dataclass(frozen=True)
class Internals:
    """What only ``jax_compat`` may use: dotted attribute tails, and the internal JAX
    modules it names without a ``_`` (``export_flatbuffers``), whose contents are
    internals too."""

    tails: frozenset[tuple[str, ...]]
    modules: frozenset[str] = frozenset()

    def matches(self, names: list[str]) -> tuple[str, ...] | None:
        for n in range(1, len(names) + 1):
            tail = tuple(names[-n:])
            if tail in self.tails:
                return tail
        return None


def internals_of_compat(source: str) -> Internals:
    """``INTERNAL_ATTRIBUTES`` of jax_compat's source, and the private attributes it
    reads of objects not its own (not of ``self``, nor of a module it imports)."""
    tree = ast.parse(source)
    listed = None
    for node in tree.body:
        target = (
            node.target
            if isinstance(node, ast.AnnAssign)
            else (node.targets[0] if isinstance(node, ast.Assign) else None)
        )
        if isinstance(target, ast.Name) and target.id == "INTERNAL_ATTRIBUTES":
            listed = ast.literal_eval(node.value)
    assert listed is not None, "jax_compat.py must define INTERNAL_ATTRIBUTES"
    bound = jax_names(tree)
    private = {
        name
        for _, names in attribute_chains(tree)
        if names[0] != "self" and names[0] not in bound
        for name in names[1:]
        if is_private(name)
    }
    handed_out = {
        name
        for name, dotted in bound.items()
        if not is_private(name) and is_jax_module(dotted) and not is_public_module(dotted)
    }
    return Internals(
        frozenset(tuple(t.split(".")) for t in listed) | frozenset((p,) for p in private),
        frozenset(handed_out),
    )


def findings(source: str, internals: Internals, jax_dir: pathlib.Path | None = None) -> list[str]:
    """The uses of JAX internals in one module's source, as ``line: what``."""
    tree = ast.parse(source)
    found = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            for alias in node.names:
                if alias.name.split(".")[0] in JAX_ROOTS and not is_public_module(alias.name):
                    found.append(f"{node.lineno}: import {alias.name}")
        elif (
            isinstance(node, ast.ImportFrom)
            and not node.level
            and node.module
            and node.module.split(".")[0] in JAX_ROOTS
        ):
            if not is_public_module(node.module):
                found.append(f"{node.lineno}: from {node.module} import ...")
                continue
            for alias in node.names:
                full = f"{node.module}.{alias.name}"
                if is_private(alias.name) or (
                    is_jax_module(full, jax_dir) and not is_public_module(full)
                ):
                    found.append(f"{node.lineno}: from {node.module} import {alias.name}")
        elif isinstance(node, ast.ImportFrom) and node.module == "olympus.jax_compat":
            found.extend(
                f"{node.lineno}: from olympus.jax_compat import {alias.name} "
                f"(an internal JAX module)"
                for alias in node.names
                if alias.name in internals.modules
            )
    bound = jax_names(tree)
    for line, names in attribute_chains(tree):
        if names[0] == "self":
            # The object's own attribute is its own; what is read through it is not.
            if len(names) == 2:
                continue
            names = names[1:]
        elif names[0] in bound:
            dotted = ".".join([bound[names[0]]] + names[1:])
            if any(is_private(n) for n in names[1:]) or not is_public_module(
                module_of(dotted, jax_dir)
            ):
                found.append(f"{line}: {dotted}")
                continue
        if len(names) > 2 and names[0] == "jax_compat" and names[1] in internals.modules:
            found.append(
                f"{line}: {'.'.join(names)} (the contents of an internal JAX module, {names[1]})"
            )
            continue
        tail = internals.matches(names)
        if tail is not None:
            found.append(
                f"{line}: {'.'.join(names)} (an internal of a JAX object: {'.'.join(tail)})"
            )
    return sorted(dict.fromkeys(found), key=lambda f: int(f.split(":")[0]))


def package_modules() -> list[pathlib.Path]:
    return [
        p for package in PACKAGES for p in sorted((ROOT / package).rglob("*.py")) if p != COMPAT
    ]


@pytest.fixture(scope="module")
def internals() -> Internals:
    return internals_of_compat(COMPAT.read_text())


@pytest.mark.parametrize("path", package_modules(), ids=lambda p: str(p.relative_to(ROOT)))
def test_no_module_but_jax_compat_uses_jax_internals(path, internals):
    found = findings(path.read_text(), internals)
    assert found == [], (
        f"{path.relative_to(ROOT)} uses JAX internals: move each use into a function of "
        f"olympus/jax_compat.py (with a note on the public API that would replace it):\n"
        + "\n".join(found)
    )


def test_every_internal_jax_compat_lists_is_read_there(internals):
    source = COMPAT.read_text()
    tree = ast.parse(source)
    read = {
        tuple(names[i:j])
        for _, names in attribute_chains(tree)
        for i in range(len(names))
        for j in range(i + 1, len(names) + 1)
    }
    stale = sorted(".".join(t) for t in internals.tails if t not in read)
    assert stale == []
    # The attributes the issue named are among them.
    for tail in (
        "raw_frames",
        "code_addr2location",
        "name_stack.stack",
        "_lowering",
        "_executable",
    ):
        assert tuple(tail.split(".")) in internals.tails
    assert internals.modules == {"export_flatbuffers"}


def test_the_checks_find_what_they_look_for(internals):
    bad = textwrap.dedent("""
        import jax
        import jax._src.core
        import jax.lib as jl
        import jaxlib
        from jax._src import stages
        from jax import core, numpy as jnp, _src
        from jax.interpreters import mlir
        from jaxlib.mlir import ir
        from jax.extend.mlir import ir as public_ir
        from olympus.jax_compat import export_flatbuffers

        class D:
            def text(self):
                return self._hlo().to_string(self._jax._params)

        def f(tb, eqn, lowered, compiled, aval):
            jax_compat.export_flatbuffers.Exported.GetRootAsExported(b"", 0)
            aval.str_short(short_dtypes=True)
            jax._src.core.get_aval(1)
            jax.lib.xla_client.Client
            jnp._promote_dtypes(1)
            tb.raw_frames()
            type(tb).code_addr2location
            eqn.source_info.name_stack.stack
            lowered._lowering.compile_args
            getattr(compiled, "_executable")
            compiled.runtime_executable().client
    """)
    found = [f.split(": ", 1)[1].split(" (")[0] for f in findings(bad, internals)]
    assert found == [
        "import jax._src.core",
        "import jax.lib",
        "import jaxlib",
        "from jax._src import ...",
        "from jax import core",
        "from jax import _src",
        "from jax.interpreters import ...",
        "from jaxlib.mlir import ...",
        "from olympus.jax_compat import export_flatbuffers",
        "_hlo.to_string",
        "_jax._params",
        "jax_compat.export_flatbuffers.Exported.GetRootAsExported",
        "aval.str_short",
        "jax._src.core.get_aval",
        "jax.lib.xla_client.Client",
        "jax.numpy._promote_dtypes",
        "tb.raw_frames",
        "type.code_addr2location",
        "eqn.source_info.name_stack.stack",
        "lowered._lowering.compile_args",
        "compiled._executable",
        "compiled.runtime_executable.client",
    ]
    good = textwrap.dedent("""
        import jax
        import jax.stages as jax_stages
        from jax import export as _jax_export, tree_util
        from jax.extend.mlir import ir
        from jax.numpy import *

        class C:
            def __init__(self, jitted):
                self._jax = jitted
                self._call = jitted.lower
                self.raw_frames = self._jax.lower

        def f(x, closed, op):
            jax.config.jax_enable_x64, jax.tree.leaves(x), jax.extend.backend.get_backend()
            jax_stages.Compiled, _jax_export.deserialize, ir.Location.unknown()
            closed.jaxpr.eqns, op.name_stack, x.__class__.__name__
    """)
    assert findings(good, internals) == []
