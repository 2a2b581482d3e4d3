"""What the linters leave open: every blind ``except`` in the packages says why it is
there, and so does every exception to the rules that guard them.

Ruff (run by ``./run.sh --test``) flags ``except Exception`` that neither re-raises nor
logs (BLE001), ``exec`` (S102) and ``eval`` (S307); a ``# noqa`` lets one through, but
nothing in Ruff asks for the reason. These tests do, for ``olympus/`` and
``olympus_jupyter/``, and for every ``noqa`` of those rules anywhere in the repository.

>>> blind_excepts("try:\\n    pass\\nexcept Exception:\\n    x = None\\n")
[(3, '')]
"""

from __future__ import annotations

import ast
import io
import pathlib
import re
import tokenize

ROOT = pathlib.Path(__file__).resolve().parents[1]
PACKAGES = ("olympus", "olympus_jupyter")
BROAD = {"Exception", "BaseException"}
#: The rules whose exceptions need a reason: a blind except, exec, eval.
NEEDS_A_REASON = ("BLE001", "S102", "S307")
#: A reason: three words or more (after the ``noqa`` directive, if any).
REASON = re.compile(r"\w+(?:\W+\w+){2,}")
NOQA = re.compile(r"noqa:\s*(?P<codes>[A-Z]+[0-9]+(?:\s*,\s*[A-Z]+[0-9]+)*)(?P<rest>.*)")


def _comments(source: str) -> dict[int, str]:
    """Each line's comment (its text after ``#``), by line number."""
    found = {}
    for tok in tokenize.generate_tokens(io.StringIO(source).readline):
        if tok.type == tokenize.COMMENT:
            found[tok.start[0]] = tok.string.lstrip("#").strip()
    return found


def _is_broad(handler: ast.ExceptHandler) -> bool:
    kinds = handler.type
    names = kinds.elts if isinstance(kinds, ast.Tuple) else [kinds]
    return kinds is None or any(isinstance(n, ast.Name) and n.id in BROAD for n in names)


def _reraises(handler: ast.ExceptHandler) -> bool:
    return any(isinstance(n, ast.Raise) for stmt in handler.body for n in ast.walk(stmt))


def reason_of(comment: str) -> str:
    """What a comment says besides a ``noqa`` directive.

    >>> reason_of("noqa: BLE001 - a broken plugin must not break display")
    'a broken plugin must not break display'
    >>> reason_of("noqa: BLE001")
    ''
    """
    m = NOQA.search(comment)
    if m is not None:
        comment = comment[: m.start()] + m.group("rest")
    return comment.strip(" -—:;,.()")


def blind_excepts(source: str) -> list[tuple[int, str]]:
    """``(line, comment)`` of each ``except`` of ``Exception``, ``BaseException`` or
    anything that does not raise again (a failure turned into something else)."""
    comments = _comments(source)
    return [
        (node.lineno, comments.get(node.lineno, ""))
        for node in ast.walk(ast.parse(source))
        if isinstance(node, ast.ExceptHandler) and _is_broad(node) and not _reraises(node)
    ]


def _package_files():
    for package in PACKAGES:
        yield from sorted((ROOT / package).rglob("*.py"))


def _repository_files():
    for folder in PACKAGES + ("tests", "benchmarks", "scripts", "notebooks"):
        yield from sorted((ROOT / folder).rglob("*.py"))
    yield from sorted(ROOT.glob("*.py"))


def test_every_blind_except_in_the_packages_says_why():
    silent = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in _package_files()
        for line, comment in blind_excepts(path.read_text(encoding="utf-8"))
        if not REASON.search(reason_of(comment))
    ]
    assert silent == [], (
        "an `except Exception` that does not raise again needs its reason on its line "
        "(`# noqa: BLE001 - why`), or a narrower exception: " + ", ".join(silent)
    )


def test_every_noqa_of_a_guarding_rule_says_why():
    bare = []
    for path in _repository_files():
        for line, comment in _comments(path.read_text(encoding="utf-8")).items():
            m = NOQA.search(comment)
            if m is None or not any(c in m.group("codes") for c in NEEDS_A_REASON):
                continue
            if not REASON.search(reason_of(comment)):
                bare.append(f"{path.relative_to(ROOT)}:{line}")
    assert bare == [], (
        f"a `# noqa` for {', '.join(NEEDS_A_REASON)} needs a reason after "
        "it (`# noqa: BLE001 - why`): " + ", ".join(bare)
    )


def test_the_checks_find_a_silent_except_and_a_bare_noqa():
    silent = (
        "try:\n    import x\nexcept Exception:  # noqa: BLE001\n    x = None\n"
        "try:\n    pass\nexcept (ValueError, BaseException):\n    pass\n"
        "try:\n    pass\nexcept:\n    pass\n"
    )
    assert [line for line, c in blind_excepts(silent) if not REASON.search(reason_of(c))] == [
        3,
        7,
        11,
    ]
    fine = (
        "try:\n    pass\nexcept Exception:  # noqa: BLE001 - a plugin may fail anyhow\n"
        "    pass\ntry:\n    pass\nexcept Exception as e:\n    raise ValueError(e)\n"
        "try:\n    pass\nexcept ValueError:\n    pass\n"
    )
    assert [line for line, c in blind_excepts(fine) if not REASON.search(reason_of(c))] == []
