"""Names for people of the figures in XLA's cost analysis.

``Lowered.cost_analysis()`` and ``Compiled.cost_analysis()`` return XLA's
``HloCostAnalysis`` properties under its own keys: ``flops``, ``bytes accessed``,
``bytes accessed0{}``, ``utilization1{}``, ``bytes accessedout{}``,
``optimal_seconds``... This module says what each one means, in words, with its
unit, and keeps the key so that an expert can map a figure back to XLA. Every
report form takes its names from here: the HTML and text forms directly, and the
bundle carries them (``analyses.cost.names``); the JupyterLab view's
``src/costnames.ts`` says the same words, which its browser test checks. A key XLA
adds later, or one a hostile bundle makes up, is described as itself: it never
raises.

What the keys mean (``xla/service/hlo_cost_analysis.{h,cc}``): each property is
computed for every HLO instruction and *added over all instructions* of the
program. ``bytes accessed`` is what each instruction reads from its operands plus
what it writes; ``bytes accessed{N}{I}`` the part read from the instruction's
operand ``N`` (at tuple index ``I``, ``{}`` for the whole operand), which is
operand ``N`` *of each instruction*, not argument ``N`` of the function;
``bytes accessedout{I}`` the part written to the instruction's result;
``utilization{N}{I}`` how much of operand ``N`` the instruction uses (1 for all
of it); ``optimal_seconds`` the time at the device's peak rates.

>>> name = describe("bytes accessed0{}")
>>> name.label, name.unit, name.key
('bytes read from operand 0', 'bytes', 'bytes accessed0{}')
>>> name.format(1258291)
'1.2 MiB (1,258,291 B)'
>>> describe("bytes accessedout{1}").label
'bytes written to results, tuple element {1}'
>>> describe("utilization1{}").label
'utilization of operand 1'
>>> describe("flops").format(2_000_000)
'2,000,000 flops (2 M)'
>>> unknown = describe("some future figure")
>>> unknown.label, unknown.known
('some future figure', False)
>>> sorted(["bytes accessed10{}", "utilization0{}", "bytes accessed2{}", "flops"],
...        key=sort_key)
['flops', 'bytes accessed2{}', 'bytes accessed10{}', 'utilization0{}']

A figure that is no figure (:func:`mark`) is shown as it came, with a note saying
what it is: XLA's TPU cost model counts -1 for what it cannot cost (its own custom
calls: ``AsyncCollectiveDone``, ``ZeroCrop``, ``SliceId``...) and adds those in,
so a total can be negative (``optimal_seconds`` -2 on a multi-slice train step,
``bytes accessed9{}`` -1 where operand 9 is only a custom call's). The data keeps
the raw value; the bundle carries the notes (``analyses.cost.marks``).

>>> mark("bytes accessed9{}", -1.0).split(":")[0]
'not a size'
>>> mark("flops", 2.0) is None
True
"""

from __future__ import annotations

import dataclasses
import functools
import math
import re
from collections.abc import Iterable, Mapping
from typing import Any

from olympus_jupyter.report.view_tables import (
    BINARY_PREFIXES,
    SECOND_UNITS,
    SI_PREFIXES,
    SIZE_UNITS,
)

__all__ = [
    "CostName",
    "describe",
    "mark",
    "marks_json",
    "sort_key",
    "legend",
    "names_json",
    "bundle_json",
    "STAGES_NOTE",
    "LOWERED_NOTE",
    "COMPILED_NOTE",
    "format_value",
    "format_bytes",
    "format_flops",
    "format_share",
    "format_ms",
]

#: What the two columns of the cost table are.
LOWERED_NOTE = (
    "before optimization (lowered): XLA's estimate for the program as it was "
    "lowered, before any of its optimization passes; every op is counted on "
    "its own, as if it read its inputs from memory and wrote its result back."
)
COMPILED_NOTE = (
    "after optimization (compiled): the same estimate for the program XLA "
    "compiled, after fusion, simplification and its other passes; ops fused "
    "into one kernel share their reads and writes, so bytes usually fall "
    "while flops stay about the same."
)
STAGES_NOTE = (
    "Both are XLA's static estimates (HloCostAnalysis), not measurements: each "
    "figure is added over every instruction of the program. "
    + LOWERED_NOTE[0].upper()
    + LOWERED_NOTE[1:]
    + " "
    + COMPILED_NOTE[0].upper()
    + COMPILED_NOTE[1:]
)


@dataclasses.dataclass(frozen=True)
class CostName:
    """One key of XLA's cost analysis, described.

    ``label`` names the figure for people, ``unit`` is ``flops``, ``ops``,
    ``bytes``, ``seconds`` or ``''`` (a plain number), ``explanation`` says what it
    counts in a sentence or two, ``family`` is the label with ``N`` for the operand
    (the legend's entry, shared by ``bytes accessed0{}`` and ``bytes accessed1{}``),
    ``key`` is XLA's key as it came, and ``known`` is false for a key this module
    has no name for (then ``label`` is the key itself).
    """

    key: str
    label: str
    unit: str
    explanation: str
    family: str
    known: bool = True

    def format(self, value: float | None) -> str:
        """``value`` with its unit: ``'1.2 MiB (1,258,291 B)'``, ``'192 flops'``,
        ``'3.2 µs'``; ``'—'`` for none."""
        return format_value(value, self.unit)

    def to_json(self) -> dict[str, str]:
        return {
            "label": self.label,
            "unit": self.unit,
            "explanation": self.explanation,
            "family": self.family,
        }


@dataclasses.dataclass(frozen=True)
class _Family:
    """A kind of key: its label, unit and explanation, with ``{n}`` for the operand
    number and ``{part}`` for the tuple element (empty for the whole value)."""

    label: str
    unit: str
    explanation: str


_PER_INSTRUCTION = " Added over all instructions of the program."

_FIXED = {
    "flops": _Family(
        "floating-point operations",
        "flops",
        "Arithmetic operations on numbers: one per element of an elementwise op, two per "
        "multiply-add of a dot or convolution. Transcendental functions are counted apart."
        + _PER_INSTRUCTION,
    ),
    "transcendentals": _Family(
        "transcendental operations",
        "ops",
        "Calls of exp, log, sin, cos, tanh, sqrt, power, erf and the like, one per element."
        + _PER_INSTRUCTION,
    ),
    "bytes accessed": _Family(
        "bytes accessed (read + written)",
        "bytes",
        "Memory traffic: the bytes each instruction reads from its operands plus the bytes it "
        "writes to its result." + _PER_INSTRUCTION,
    ),
    "optimal_seconds": _Family(
        "optimal time",
        "seconds",
        "A lower bound on the running time: for each instruction, the slowest of its flops, "
        "transcendentals and bytes at the device's peak rates. Absent or zero where XLA has no "
        "rates for the device (CPU). On TPU, XLA counts -1 s for each instruction it has no "
        "time for (custom calls of its own), so the total can be off by whole seconds, and is "
        "negative where those outweigh the rest." + _PER_INSTRUCTION,
    ),
    "utilization": _Family(
        "utilization of results",
        "",
        "How much of each instruction's result is used (1 = all of it); XLA fills it in for "
        "instructions inside fusions." + _PER_INSTRUCTION,
    ),
    "reserved0": _Family(
        "backend figure reserved0",
        "",
        "A figure a backend's own cost model keeps under this spare key; XLA's GPU cost model "
        "keeps the size of the generated code (IR) here." + _PER_INSTRUCTION,
    ),
    "reserved1": _Family(
        "backend figure reserved1",
        "",
        "A figure a backend's own cost model keeps under this spare key; XLA's GPU cost model "
        "keeps the number of basic-block splits here." + _PER_INSTRUCTION,
    ),
}

_OPERAND_BYTES = _Family(
    "bytes read from operand {n}{part}",
    "bytes",
    "Bytes each instruction reads from its operand {n}{part_of}, its input number {n} "
    "counting from 0: operand {n} of every instruction, not argument {n} of the function."
    + _PER_INSTRUCTION,
)
_OUTPUT_BYTES = _Family(
    "bytes written to results{part}",
    "bytes",
    "Bytes each instruction writes to its result{part_of}; what the program returns is a "
    "part of it." + _PER_INSTRUCTION,
)
_UTILIZATION = _Family(
    "utilization of operand {n}{part}",
    "",
    "How much of its operand {n}{part_of} each instruction uses when all of its result is used: "
    "1 = all of it, less for a slice, more where an input is read more than once. Added over "
    "all instructions of the program, so about the number of instructions that read all of "
    "their operand {n}.",
)

# XLA writes GetOperandBytesAccessedKey(n, index) as "bytes accessed" + n + index, e.g.
# "bytes accessed0{}" or "bytes accessed2{1,0}"; some releases wrote "bytes accessed
# operand 0 {}". The output's key is "bytes accessedout{}" ("bytes accessed output {}").
_INDEX = r"\{(\d+(?:, ?\d+)*)?\}"
_OPERAND_KEY = re.compile(
    r"(bytes accessed|utilization)(?: operand )?(\d{1,9}) ?" + _INDEX, re.ASCII
)
_OUTPUT_KEY = re.compile(r"bytes accessed ?out(?:put)? ?" + _INDEX, re.ASCII)

#: Order of the table: headline figures first, then per-operand figures by number.
_RANK = (
    "flops",
    "transcendentals",
    "bytes accessed",
    "optimal_seconds",
    "output",
    "operand bytes",
    "utilization",
    "operand utilization",
    "reserved0",
    "reserved1",
)


def _parse(key: str):
    """``(rank, family, operand, shape index)`` of a key, or None for a key XLA does
    not make."""
    if key in _FIXED:
        return key, _FIXED[key], None, ()
    m = _OPERAND_KEY.fullmatch(key)
    if m:
        if m.group(1) == "bytes accessed":
            return "operand bytes", _OPERAND_BYTES, int(m.group(2)), _index(m.group(3))
        return "operand utilization", _UTILIZATION, int(m.group(2)), _index(m.group(3))
    m = _OUTPUT_KEY.fullmatch(key)
    if m:
        return "output", _OUTPUT_BYTES, None, _index(m.group(1))
    return None


def _index(text: str | None) -> tuple[int, ...]:
    return tuple(int(i) for i in text.split(",")) if text else ()


def _fill(family: _Family, n, index: tuple[int, ...]) -> tuple[str, str]:
    where = "{" + ",".join(map(str, index)) + "}"
    part = f", tuple element {where}" if index else ""
    part_of = f" (tuple element {where})" if index else ""
    fields = {"n": n, "part": part, "part_of": part_of}
    return family.label.format(**fields), family.explanation.format(**fields)


def describe(key: str) -> CostName:
    """The :class:`CostName` of one key of a cost analysis (any string: a key this
    module does not know is described as itself)."""
    return _describe(str(key))


@functools.lru_cache(maxsize=1024)  # a program's keys are few, and asked for by each form
def _describe(key: str) -> CostName:
    parsed = _parse(key)
    if parsed is None:
        return CostName(
            key,
            key,
            "",
            "A figure of XLA's cost analysis that Olympus has no "
            "name for; it is shown under XLA's own key.",
            key,
            known=False,
        )
    _, family, n, index = parsed
    label, explanation = _fill(family, n, index)
    legend_label = _fill(family, "N", ())[0]
    return CostName(key, label, family.unit, explanation, legend_label)


#: What a negative figure is not, by unit.
_NOT_A = {"seconds": "a time", "bytes": "a size", "flops": "a count", "ops": "a count"}


def mark(key: str, value: Any) -> str | None:
    """What a figure of the cost analysis that is no figure is, in words, to show
    beside it; ``None`` for an ordinary figure. A negative one is the -1s XLA
    counts for what it cannot cost, added to the rest; one that is not a finite
    number is no estimate at all.

    >>> print(mark("optimal_seconds", -1.9999741))
    not a time: XLA counts -1 for each instruction it cannot cost (on TPU, custom calls of its own such as AsyncCollectiveDone, ZeroCrop or SliceId) and adds those in, so this total is mostly those -1s; what the rest adds up to is not known from it.
    >>> mark("flops", float("nan"))
    'not a number: XLA gave nan, no estimate.'
    """
    try:
        v = float(value)
    except (TypeError, ValueError):
        return f"not a number: XLA gave {value!r}, no estimate."
    if not math.isfinite(v):
        return f"not a number: XLA gave {v}, no estimate."
    if v >= 0:
        return None
    what = _NOT_A.get(describe(key).unit, "a figure")
    return (
        f"not {what}: XLA counts -1 for each instruction it cannot cost (on TPU, custom "
        f"calls of its own such as AsyncCollectiveDone, ZeroCrop or SliceId) and adds "
        f"those in, so this total is mostly those -1s; what the rest adds up to is not "
        f"known from it."
    )


def marks_json(**tables: Mapping[str, Any] | None) -> dict[str, dict[str, str]]:
    """The notes of the figures that are no figures (:func:`mark`), per table and
    key, as the bundle carries them (``analyses.cost.marks``); tables without any
    are left out.

    >>> marks_json(lowered={"flops": 2.0}, compiled={"bytes accessed9{}": -1.0})["compiled"]
    ... # doctest: +ELLIPSIS
    {'bytes accessed9{}': 'not a size: ...'}
    """
    out: dict[str, dict[str, str]] = {}
    for table, figures in tables.items():
        found = {k: m for k, v in (figures or {}).items() if (m := mark(k, v)) is not None}
        if found:
            out[table] = found
    return out


def sort_key(key: str):
    """Orders keys for a table: ``flops``, ``transcendentals``, ``bytes accessed``,
    ``optimal_seconds``, bytes written, bytes read per operand (by number), then
    utilization; keys this module does not know last, by name."""
    parsed = _parse(key)
    if parsed is None:
        return (len(_RANK), 0, (), key)
    rank, _, n, index = parsed
    return (_RANK.index(rank), -1 if n is None else n, index, key)


def legend(keys: Iterable[str]) -> list[tuple[str, str]]:
    """``(family, explanation)`` once per kind of key among ``keys``, in table order:
    what a footnote under the table says (``N`` stands for the operand's number; that
    each figure is added over all instructions is said once, in :data:`STAGES_NOTE`)."""
    seen: dict[str, str] = {}
    for key in sorted(keys, key=sort_key):
        parsed = _parse(key)
        if parsed is not None:
            label, explanation = _fill(parsed[1], "N", ())
            seen.setdefault(label, explanation.removesuffix(_PER_INSTRUCTION))
    return list(seen.items())


def names_json(*tables: Mapping[str, float] | None) -> dict[str, dict[str, str]]:
    """The names of every key of the given cost tables, as the bundle carries them
    (``analyses.cost.names``), in table order."""
    keys = {k for t in tables if t for k in t}
    return {k: describe(k).to_json() for k in sorted(keys, key=sort_key)}


def bundle_json(
    lowered: Mapping[str, float] | None, compiled: Mapping[str, float] | None
) -> dict[str, Any]:
    """What the bundle carries for viewers beside the figures (``analyses.cost``):
    the keys' ``names`` and their table ``order``, the ``legend``, the ``note`` on lowered and
    compiled figures and each column's (``columns``), and the ``marks`` of figures
    that are no figures (:func:`marks_json`, where there are any). Viewers show these and name
    nothing themselves.

    >>> sorted(bundle_json({"flops": 2.0}, None))
    ['columns', 'legend', 'names', 'note', 'order']
    >>> bundle_json({"bytes accessed1{}": 8.0}, None)["legend"][0][0]
    'bytes read from operand N'

    A figure that is no figure has its note under ``marks``, by table and key:

    >>> list(bundle_json(None, {"optimal_seconds": -2.0})["marks"]["compiled"])
    ['optimal_seconds']
    """
    names = names_json(lowered, compiled)
    marks = marks_json(lowered=lowered, compiled=compiled)
    # The order is said apart: a notebook saves JSON objects with their keys sorted.
    return {
        "names": names,
        "order": list(names),
        "legend": [list(entry) for entry in legend(names)],
        "note": STAGES_NOTE,
        "columns": {"lowered": LOWERED_NOTE, "compiled": COMPILED_NOTE},
        **({"marks": marks} if marks else {}),
    }


# -- values with units ----------------------------------------------------------------

# The units come from view_tables.py, which the view's src/viewtables.ts is made
# from; the view's formatCost, formatBytes and formatNumber write what
# format_value, format_bytes and _number write (tests/test_view_tables.py runs both).
_SI = SI_PREFIXES
_BINARY = BINARY_PREFIXES


def _number(v: float) -> str:
    """``1234`` -> ``'1,234'``; ``0.5`` -> ``'0.5'`` (four significant digits)."""
    if float(v).is_integer():
        return f"{int(v):,}"
    return f"{v:,.4g}"


def _short(v: float, steps, digits: str = ".3g") -> str | None:
    for size, prefix in steps:
        if abs(v) >= size:
            return f"{v / size:{digits}} {prefix}"
    return None


def _seconds(v: float) -> str:
    for size, unit in SECOND_UNITS:
        if abs(v) >= size:
            return f"{v / size:.3g} {unit}"
    return "0 s" if v == 0 else f"{v:.3g} s"


def format_value(value: float | None, unit: str) -> str:
    """A figure with its unit; large ones also in short form.

    >>> format_value(192, "flops"), format_value(272.0, "bytes"), format_value(3.2e-6, "seconds")
    ('192 flops', '272 B', '3.2 µs')
    >>> format_value(5e9, "ops"), format_value(2.5, ""), format_value(None, "bytes")
    ('5,000,000,000 ops (5 G)', '2.5', '—')
    """
    if value is None:
        return "—"
    try:
        v = float(value)
    except (TypeError, ValueError):
        return str(value)
    if not math.isfinite(v):
        return str(v)
    if unit == "seconds":
        return _seconds(v)
    if unit == "bytes":
        short = _short(v, _BINARY, ".1f")  # as the report's other sizes: 1.5 KiB
        return f"{short} ({_number(v)} B)" if short else f"{_number(v)} B"
    text = _number(v)
    if unit in ("flops", "ops"):
        short = _short(v, _SI) if abs(v) >= 1e6 else None
        return f"{text} {unit}" + (f" ({short})" if short else "")
    return text


def format_bytes(n: float) -> str:
    """A size in short binary units, as every form of a report writes sizes.

    >>> format_bytes(1536), format_bytes(0), format_bytes(14336), format_bytes(3 << 30)
    ('1.5 KiB', '0 B', '14.0 KiB', '3.0 GiB')
    """
    n = float(n)
    for unit in SIZE_UNITS:
        if abs(n) < 1024 or unit == SIZE_UNITS[-1]:
            return f"{n:.0f} {unit}" if unit == SIZE_UNITS[0] else f"{n:.1f} {unit}"
        n /= 1024
    return f"{n} B"  # pragma: no cover - the loop always returns


_DECIMAL = SI_PREFIXES


def format_flops(n: float, unit: str = "FLOP") -> str:
    """A count of floating-point operations in short decimal units; another count
    (transcendental operations: ``unit="ops"``) the same way, its unit a word.

    >>> format_flops(65536), format_flops(192), format_flops(0), format_flops(2.5e9)
    ('65.5 kFLOP', '192 FLOP', '0 FLOP', '2.5 GFLOP')
    >>> format_flops(2048, "ops"), format_flops(3, "ops")
    ('2.0 k ops', '3 ops')
    """
    n = float(n)
    space = "" if unit == "FLOP" else " "
    if not math.isfinite(n):
        return f"{n} {unit}"
    for size, prefix in _DECIMAL:
        if abs(n) >= size:
            return f"{n / size:.1f} {prefix}{space}{unit}"
    return f"{n:.0f} {unit}" if n.is_integer() else f"{n:.3g} {unit}"


def format_ms(seconds: float) -> str:
    """A time in seconds as milliseconds, as a report's timings are written.

    >>> format_ms(0.01234), format_ms(2)
    ('12.3 ms', '2000.0 ms')
    """
    return f"{seconds * 1e3:.1f} ms"


def format_share(share: float) -> str:
    """A share of a total (``0.25``) as a percentage, never rounded to 0 or 100 when it
    is not.

    >>> format_share(0.25), format_share(0.001), format_share(0), format_share(0.999), format_share(1)
    ('25%', '<1%', '0%', '>99%', '100%')
    """
    pct = float(share) * 100
    if 0 < pct < 1:
        return "<1%"
    if 99 < pct < 100:
        return ">99%"
    return f"{pct:.0f}%"
