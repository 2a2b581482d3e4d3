"""Every repository path a comment or docstring names exists.

Comments send a reader to another file (``see olympus_jupyter/report/html.py``); when
that file moves, the comment must move with it. This test reads the comments and
docstrings of ``src/``, ``olympus/``, ``olympus_jupyter/``, ``tests/``,
``benchmarks/`` and ``scripts/`` for paths that start at the repository's root
(``olympus_jupyter/<module>.py``, ``src/<module>.ts``, ``docs/<page>.md``) and
checks that each names a file or folder of the checkout, or a build output that
``.gitignore`` names (``olympus_jupyter/static/viewer.js``).

>>> sorted(paths_in("see `src/links.ts` and olympus_jupyter/report/html.py."))
['olympus_jupyter/report/html.py', 'src/links.ts']
>>> paths_in("jax/_src/core.py, tests/test_*.py, a/src/b.ts")
[]
"""

from __future__ import annotations

import ast
import io
import pathlib
import re
import subprocess
import tokenize

import pytest

ROOT = pathlib.Path(__file__).resolve().parent.parent

#: The repository's top folders a comment may point into.
TOP = (
    "olympus",
    "olympus_jupyter",
    "src",
    "tests",
    "docs",
    "benchmarks",
    "scripts",
    "style",
    "notebooks",
)
#: A path from the root: a top folder, then names, ending in a file with one of
#: these suffixes (a folder is named with a trailing slash and is not checked).
_PATH = re.compile(
    r"(?<![\w./\\-])((?:" + "|".join(TOP) + r")/(?:[\w.-]+/)*[\w.-]*\w"
    r"\.(?:py|ts|mjs|js|json|md|css|ipynb|toml|yml|yaml|sh|txt|html))(?![\w*/-])"
)


def paths_in(text: str) -> list[str]:
    """The repository paths a comment's text names."""
    return _PATH.findall(text)


def python_comments(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every comment and docstring of a Python module."""
    found = []
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            found.append((tok.start[0], tok.string))
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, (ast.Module, ast.ClassDef, ast.FunctionDef, ast.AsyncFunctionDef)):
            body = node.body
            if (
                body
                and isinstance(body[0], ast.Expr)
                and isinstance(body[0].value, ast.Constant)
                and isinstance(body[0].value.value, str)
            ):
                found.append((body[0].lineno, body[0].value.value))
    return found


#: ``// ...`` to the end of a line, or ``/* ... */``; string literals are skipped
#: so that a ``//`` inside one (an address) starts no comment.
_TS_TOKENS = re.compile(
    r"""//[^\n]*|/\*.*?\*/"""
    r"""|'(?:\\.|[^'\\\n])*'|"(?:\\.|[^"\\\n])*"|`(?:\\.|[^`\\])*`""",
    re.S,
)


def typescript_comments(source: str) -> list[tuple[int, str]]:
    """``(line, text)`` of every comment of a TypeScript (or JavaScript) module."""
    return [
        (source.count("\n", 0, m.start()) + 1, m.group())
        for m in _TS_TOKENS.finditer(source)
        if m.group().startswith("/")
    ]


def _sources() -> list[pathlib.Path]:
    files = sorted((ROOT / "src").rglob("*.ts")) + sorted((ROOT / "scripts").glob("*.mjs"))
    for top in ("olympus", "olympus_jupyter", "tests", "benchmarks", "scripts"):
        files += sorted((ROOT / top).rglob("*.py"))
    return [f for f in files if "node_modules" not in f.parts]


def _ignored(paths: list[str], root: pathlib.Path) -> set[str]:
    """The paths ``.gitignore`` names (build outputs a fresh clone has not made yet)."""
    try:
        run = subprocess.run(
            ["git", "-C", str(root), "check-ignore", "--no-index", "--stdin"],
            input="\n".join(paths),
            capture_output=True,
            text=True,
            timeout=60,
            check=False,
        )
    except (OSError, subprocess.SubprocessError):  # no git: every path must exist
        return set()
    return set(run.stdout.split())


def missing_paths(files: list[pathlib.Path], root: pathlib.Path = ROOT) -> list[str]:
    """``file:line: path`` for each path named in a comment of ``files`` (under ``root``)
    that does not exist under ``root``."""
    named: list[tuple[str, str]] = []
    for f in files:
        source = f.read_text(encoding="utf-8")
        comments = python_comments(source) if f.suffix == ".py" else typescript_comments(source)
        rel = f.relative_to(root).as_posix()
        for line, text in comments:
            named += [
                (f"{rel}:{line + text.count(chr(10), 0, m.start())}", m.group(1))
                for m in _PATH.finditer(text)
            ]
    named.sort(key=lambda n: (n[0].rsplit(":", 1)[0], int(n[0].rsplit(":", 1)[1])))
    absent = sorted({p for _, p in named if not (root / p).exists()})
    ignored = _ignored(absent, root) if absent else set()
    return [f"{where}: {p}" for where, p in named if p in absent and p not in ignored]


def test_every_path_named_in_a_comment_exists():
    missing = missing_paths(_sources())
    assert not missing, (
        "comments name files that do not exist (moved or renamed? point the comment at "
        "the file's new place):\n  " + "\n  ".join(missing)
    )


def test_a_comment_naming_a_missing_file_is_found(tmp_path):
    """The check fails on a bad path, in a Python comment, a docstring and a TS comment."""
    (tmp_path / "src").mkdir()
    (tmp_path / "olympus_jupyter").mkdir()
    (tmp_path / "olympus_jupyter" / "there.py").write_text(
        '"""Read olympus_jupyter/html_report.py."""\n'
        "# see olympus_jupyter/there.py and docs/gone.md\n"
        "x = 'tests/test_not_a_comment.py'\n",
        encoding="utf-8",
    )
    (tmp_path / "src" / "a.ts").write_text(
        "const u = 'http://x/src/nope.ts'; // as in olympus_jupyter/lexers.py\n"
        "/**\n * and src/a.ts\n */\n",
        encoding="utf-8",
    )
    found = missing_paths(
        [tmp_path / "olympus_jupyter" / "there.py", tmp_path / "src" / "a.ts"], root=tmp_path
    )
    assert found == [
        "olympus_jupyter/there.py:1: olympus_jupyter/html_report.py",
        "olympus_jupyter/there.py:2: docs/gone.md",
        "src/a.ts:1: olympus_jupyter/lexers.py",
    ]


@pytest.mark.parametrize(
    "text, paths",
    [
        ("`olympus_jupyter/report/html.py`", ["olympus_jupyter/report/html.py"]),
        ("(src/folds.ts)", ["src/folds.ts"]),
        ("docs/report.md:12", ["docs/report.md"]),
        ("tests/browser/", []),
        ("x/tests/test_a.py", []),
    ],
)
def test_paths_in(text, paths):
    assert paths_in(text) == paths
