"""The packages keep their layers: data flows one way, and no module imports its way
around in a circle.

``olympus`` (the core) imports nothing of Jupyter. In ``olympus_jupyter`` each folder
is one layer and imports only the layers below it:

    highlight, staging  <  report  <  frontends  <  teaching

Every import counts, those inside functions too, and both packages are checked for
circles. In the core, the stage registry (plain data) sits at the base: it imports
nothing of the provenance model, which attaches the registry's readers.
"""

import ast
import pathlib

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]

#: A layer may import the layers of a lower rank (and its own).
LAYERS = {"highlight": 0, "staging": 0, "report": 1, "frontends": 2, "teaching": 3}
JUPYTER_PACKAGES = (
    "olympus_jupyter",
    "IPython",
    "ipykernel",
    "ipywidgets",
    "jupyter",
    "jupyterlab",
    "nbformat",
    "nbclient",
    "traitlets",
    "pygments",
)


def module_name(path: pathlib.Path) -> str:
    parts = list(path.relative_to(ROOT).with_suffix("").parts)
    if parts[-1] == "__init__":
        parts.pop()
    return ".".join(parts)


def modules(package: str) -> dict[str, pathlib.Path]:
    return {module_name(p): p for p in sorted((ROOT / package).rglob("*.py"))}


def imports(path: pathlib.Path, name: str) -> set[str]:
    """The modules a module imports (absolute names), anywhere in it."""
    package = name if path.name == "__init__.py" else name.rpartition(".")[0]
    found = set()
    for node in ast.walk(ast.parse(path.read_text(), str(path))):
        if isinstance(node, ast.Import):
            found.update(alias.name for alias in node.names)
        elif isinstance(node, ast.ImportFrom):
            base = node.module or ""
            if node.level:
                anchor = package.split(".")[: len(package.split(".")) - node.level + 1]
                base = ".".join(anchor + ([base] if base else []))
            found.add(base)
            found.update(f"{base}.{alias.name}" for alias in node.names)
    return found


def internal_graph(package: str) -> dict[str, set[str]]:
    """Module -> the modules of ``package`` it imports (a name imported from a package
    counts as that package, or the submodule of that name)."""
    mods = modules(package)
    return {
        name: {m for m in imports(path, name) if m in mods and m != name}
        for name, path in mods.items()
    }


def layer_of(module: str) -> str | None:
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[1] in LAYERS else None


def runs_first(graph: dict[str, set[str]], m: str) -> set[str]:
    """The modules that ``m``'s imports run, leaving out ``m``'s own packages.

    Python runs every package above a module before the module itself (``a``, then
    ``a.b``, then ``a.b.c``), so a module's import of its own package never decides
    what runs first. A package's imports of its own modules do count:
    ``from olympus.provenance import readers`` runs ``olympus/provenance/__init__.py``
    and everything it imports before ``readers``.
    """
    return {n for n in graph[m] if not m.startswith(n + ".")}


def reachable(graph: dict[str, set[str]], start: str) -> set[str]:
    """Every module that importing ``start`` runs (its own packages left out)."""
    seen: set[str] = set()
    todo = [start]
    while todo:
        for n in runs_first(graph, todo.pop()) - seen:
            seen.add(n)
            todo.append(n)
    return seen - {start}


def find_cycle(graph: dict[str, set[str]]) -> list[str] | None:
    """One import cycle among modules (as :func:`runs_first` counts imports), or None."""

    def edges(m):
        return runs_first(graph, m)

    state: dict[str, int] = {}
    stack: list[str] = []

    def visit(m):
        state[m] = 1
        stack.append(m)
        for n in sorted(edges(m)):
            if state.get(n) == 1:
                return stack[stack.index(n) :] + [n]
            if n not in state:
                found = visit(n)
                if found:
                    return found
        stack.pop()
        state[m] = 2
        return None

    for m in sorted(graph):
        if m not in state:
            found = visit(m)
            if found:
                return found
    return None


def test_the_core_imports_nothing_of_jupyter():
    offenders = sorted(
        f"{name} imports {m}"
        for name, path in modules("olympus").items()
        for m in imports(path, name)
        if m.split(".")[0] in JUPYTER_PACKAGES
    )
    assert offenders == []


def test_every_module_of_olympus_jupyter_lives_in_a_layer():
    loose = [
        m
        for m in modules("olympus_jupyter")
        if m.count(".") == 1
        and m.split(".")[1] not in LAYERS
        and m not in ("olympus_jupyter.__main__",)
    ]
    assert loose == []


def test_layers_import_only_the_layers_below_them():
    upward = []
    for module, targets in internal_graph("olympus_jupyter").items():
        here = layer_of(module)
        if here is None:
            continue  # the package root and __main__ are the top
        for target in targets:
            there = layer_of(target)
            if there is None or (there != here and LAYERS[there] >= LAYERS[here]):
                upward.append(f"{module} ({here}) imports {target} ({there or 'the package root'})")
    assert upward == []


@pytest.mark.parametrize("package", ["olympus", "olympus_jupyter"])
def test_no_import_cycles(package):
    assert find_cycle(internal_graph(package)) is None


def test_the_core_keeps_its_floors():
    """The stage registry is plain data at the base of the core: it runs nothing of
    the provenance model, which attaches the readers of its linked stages. The
    provenance model reads stage objects and imports nothing of the API above them
    (``olympus.jit``)."""
    graph = internal_graph("olympus")
    assert (
        sorted(
            m
            for m in reachable(graph, "olympus.stage_registry")
            if m.startswith("olympus.provenance")
        )
        == []
    )
    assert (
        sorted(
            f"{m} imports olympus.api"
            for m in graph
            if m.startswith("olympus.provenance") and "olympus.api" in graph[m]
        )
        == []
    )


def test_the_checks_find_what_they_look_for():
    # A cycle and an upward import, in a made-up graph, are found.
    assert find_cycle({"a.x": {"a.y"}, "a.y": {"a.z"}, "a.z": {"a.x"}}) == [
        "a.x",
        "a.y",
        "a.z",
        "a.x",
    ]
    assert find_cycle({"a.x": {"a.y"}, "a.y": set()}) is None
    # A module may import its own packages; a package its own modules.
    assert find_cycle({"a": {"a.x"}, "a.x": {"a", "a.y"}, "a.y": {"a"}}) is None
    # The circle the core once had: importing a module of a package runs the
    # package's __init__, whose imports lead back to the importer.
    core = {
        "o": {"o.provenance", "o.stage_registry"},
        "o.stage_registry": {"o", "o.provenance", "o.provenance.readers"},
        "o.provenance": {"o.provenance.build", "o.provenance.model"},
        "o.provenance.build": {"o", "o.provenance.model"},
        "o.provenance.model": {"o", "o.provenance", "o.stage_registry"},
        "o.provenance.readers": {"o", "o.provenance.parts"},
        "o.provenance.parts": set(),
    }
    assert find_cycle(core) == [
        "o.provenance",
        "o.provenance.build",
        "o.provenance.model",
        "o.stage_registry",
        "o.provenance",
    ]
    assert "o.provenance.build" in reachable(core, "o.stage_registry")
    assert reachable(core, "o.provenance.readers") == {"o.provenance.parts"}
    assert layer_of("olympus_jupyter.report.html") == "report"
    assert layer_of("olympus_jupyter.frontends.magics") == "frontends"
