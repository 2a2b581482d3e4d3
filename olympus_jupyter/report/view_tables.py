"""The constants both forms of a report draw with: the source palette and the units of
figures. The text and static HTML use them from here; the view (TypeScript) from
``src/viewtables.ts`` and ``style/base.css``'s palette, both generated from this
module, so that a change here is a change everywhere:

    python -m olympus_jupyter.report.view_tables        # rewrites both, from the repo root

``tests/test_view_tables.py`` generates them again and fails when a file differs.

>>> PALETTE_SIZE, SIZE_UNITS[1], SI_PREFIXES[-1]
(10, 'KiB', (1000.0, 'k'))
>>> typescript_module().splitlines()[0]
'// Generated from olympus_jupyter/report/view_tables.py by'
"""

from __future__ import annotations

import pathlib
import sys

#: The hue of each source colour, in the order source lines take them (the lines
#: that made ops, in source order, cycle through them).
PALETTE_HUES = (210, 30, 130, 280, 0, 175, 50, 320, 95, 250)
#: How many source colours there are (CSS classes ``olympus-src-0`` ... in the view,
#: ``ol-src0`` ... in the static HTML).
PALETTE_SIZE = len(PALETTE_HUES)

#: Units of a size in short form, each 1024 of the one before: ``1.5 KiB``.
SIZE_UNITS = ("B", "KiB", "MiB", "GiB")
#: Binary prefixes of a size written out in full, largest first: ``1.2 MiB (1,258,291 B)``.
BINARY_PREFIXES = ((1 << 40, "TiB"), (1 << 30, "GiB"), (1 << 20, "MiB"), (1 << 10, "KiB"))
#: Decimal prefixes of a count, largest first: ``5,000,000,000 ops (5 G)``, ``2.5 GFLOP``.
SI_PREFIXES = ((1e15, "P"), (1e12, "T"), (1e9, "G"), (1e6, "M"), (1e3, "k"))
#: Units of a time in seconds, largest first: ``3.2 µs``.
SECOND_UNITS = ((1.0, "s"), (1e-3, "ms"), (1e-6, "µs"), (1e-9, "ns"))

_HERE = "olympus_jupyter/report/view_tables.py"
#: The generated files, from the repository's root.
TS_PATH = "src/viewtables.ts"
CSS_PATH = "style/base.css"
#: The lines around the palette in ``style/base.css`` (the rest is written by hand).
CSS_BEGIN = f"/* -- source palette: generated from {_HERE}; do not edit -- */"
CSS_END = "/* -- end of the generated source palette -- */"


def _js_number(v: float) -> str:
    """A number as prettier writes it in TypeScript: ``1000``, ``0.001``, ``1e-6``."""
    if float(v).is_integer() and abs(v) < 1e21:
        return str(int(v))
    text = repr(float(v))
    mantissa, _, exponent = text.partition("e")
    return f"{mantissa}e{int(exponent)}" if exponent else text


def _js_string(s: str) -> str:
    return "'" + s.replace("\\", "\\\\").replace("'", "\\'") + "'"


def _js_steps(name: str, doc: str, steps) -> list[str]:
    rows = [f"  [{_js_number(size)}, {_js_string(unit)}]" for size, unit in steps]
    return [
        f"/** {doc} */",
        f"export const {name}: ReadonlyArray<readonly [number, string]> = [",
        ",\n".join(rows),
        "];",
        "",
    ]


def typescript_module() -> str:
    """The text of ``src/viewtables.ts``."""
    lines = [
        f"// Generated from {_HERE} by",
        "// `python -m olympus_jupyter.report.view_tables`: do not edit (the test",
        "// tests/test_view_tables.py fails when this file differs from what it makes).",
        "",
        "/** How many source colours there are (`olympus-src-0` ...). */",
        f"export const PALETTE_SIZE = {PALETTE_SIZE};",
        "",
        "/** Units of a size in short form, each 1024 of the one before. */",
        "export const SIZE_UNITS: ReadonlyArray<string> = ["
        + ", ".join(_js_string(u) for u in SIZE_UNITS)
        + "];",
        "",
    ]
    lines += _js_steps(
        "BINARY_PREFIXES",
        "Binary prefixes of a size written out in full, largest first.",
        BINARY_PREFIXES,
    )
    lines += _js_steps("SI_PREFIXES", "Decimal prefixes of a count, largest first.", SI_PREFIXES)
    lines += _js_steps("SECOND_UNITS", "Units of a time in seconds, largest first.", SECOND_UNITS)
    return "\n".join(lines)


def palette_css() -> str:
    """The palette's block of ``style/base.css``, its marker lines included."""
    rules = [
        f".olympus-src-{k} {{\n  --olympus-hue: {hue};\n}}\n" for k, hue in enumerate(PALETTE_HUES)
    ]
    return CSS_BEGIN + "\n" + "\n".join(rules) + CSS_END


def with_palette(css: str) -> str:
    """``css`` (``style/base.css``) with its palette block made anew. Raises ValueError
    when the marker lines are missing."""
    start, end = css.find(CSS_BEGIN), css.find(CSS_END)
    if start < 0 or end < start:
        raise ValueError(
            f"{CSS_PATH} has no palette block: put the lines {CSS_BEGIN!r} "
            f"and {CSS_END!r} where the palette goes"
        )
    return css[:start] + palette_css() + css[end + len(CSS_END) :]


def write(root: pathlib.Path) -> list[str]:
    """Writes the generated files under the repository ``root``; returns those changed."""
    changed = []
    ts, css = root / TS_PATH, root / CSS_PATH
    for path, text in (
        (ts, typescript_module()),
        (css, with_palette(css.read_text(encoding="utf-8"))),
    ):
        if not path.exists() or path.read_text(encoding="utf-8") != text:
            path.write_text(text, encoding="utf-8")
            changed.append(str(path.relative_to(root)))
    return changed


if __name__ == "__main__":  # pragma: no cover - the test calls the functions
    root = pathlib.Path(sys.argv[1] if len(sys.argv) > 1 else ".")
    if not (root / "src").is_dir() or not (root / "style").is_dir():
        sys.exit(
            f"{root.resolve()} is not the repository's root (no src/ and style/): "
            "run from there, or give it as the argument"
        )
    print("\n".join(write(root)) or "up to date")
