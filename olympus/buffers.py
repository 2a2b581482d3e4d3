"""Peak memory by line: the buffers live at the peak of a compiled program.

:func:`peak_memory` compiles a ``Lowered`` (or a ``Compiled``'s lowering) once more
with XLA's text dumps into a private temporary folder, removed afterwards (as
:func:`olympus.passes.dumped` does), and reads three of its files
(:func:`read_peak_memory` reads such a folder):

* ``*after_optimizations-live-range.txt`` (up to JAX 0.9's XLA: the end of the
  buffer assignment's file): the program's instruction sequence and
  the values (logical buffers) live at the peak, ``Live ranges at N (peak):``,
  with their sizes. Their sum is :attr:`PeakMemory.peak_bytes`.
* ``*after_optimizations-buffer-assignment.txt``: which allocation holds each value
  and what that allocation is (``parameter N``, ``output shape is ...``,
  ``maybe-live-out``, ``constant``, ``thread-local``, ``preallocated-temp``). It
  gives each buffer its :attr:`Buffer.kind`; an output placed in a (donated)
  argument's allocation is an ``"output"`` with :attr:`Buffer.aliased_argument`.
* ``*after_optimizations.txt``: the optimized HLO with its metadata, for the source
  lines that made each buffer (a fusion's: those of its fused instructions).

The files' platform prefix (``cpu_``, ``gpu_``...) is not assumed: they are found
by suffix.

``compiled.memory_analysis().peak_memory_in_bytes`` is kept next to it for
comparison (:attr:`PeakMemory.memory_analysis_peak`), never folded into
:attr:`PeakMemory.peak_bytes`: the two are different measures, and
:meth:`PeakMemory.difference` says how they relate, from the buffer assignment
(on XLA:CPU, for one, that peak is the argument, output and constant allocations
with no temporaries at all).

On TPU the buffer assignment places values in several memory spaces (its
allocations' ``color``, the ``S(n)`` of a layout): the HBM (0), the on-chip vector
memory VMEM (1), the scalar memory SMEM (2)... The live ranges' peak adds the
values of all of them live at one point (:meth:`PeakMemory.by_memory_space` splits
it), while ``memory_analysis()``'s peak is the argument, output and constant
allocations plus the peak of the values in VMEM, taken at its own point
(:attr:`PeakMemory.space_peaks`), with none of the temporaries in HBM: measured
on v5e, v6e and v5p programs (exact for all but one, 512 bytes off), which is
what :meth:`PeakMemory.difference` says.

>>> def f(x):
...     y = jnp.sort(x, axis=0)
...     return y[0] + y[-1]
>>> peak = peak_memory(olympus.jit(f).trace(np.ones((64, 64), np.float32)).lower())
>>> sum(b.bytes for b in peak.buffers) == peak.peak_bytes
True
>>> sum(row.bytes for row in peak.by_line()) == peak.peak_bytes
True
>>> [b.argument for b in peak.buffers if b.kind == "argument"]
['x']
"""

from __future__ import annotations

import dataclasses
import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from olympus.argument_names import parameter_names
from olympus.collectives import lines_without_source
from olympus.passes import dumped_compile
from olympus.provenance.hlo import hlo_stage
from olympus.provenance.sources import SourceTable, SourceTables, charged_lines

__all__ = [
    "Buffer",
    "LineBytes",
    "Allocation",
    "PeakMemory",
    "PeakDump",
    "peak_memory",
    "read_peak_memory",
    "lines_by_label",
    "memory_analysis_peak",
    "KINDS",
]

#: The kinds of buffers, by the allocation XLA put them in.
KINDS = ("argument", "output", "temporary", "constant", "thread-local")

# allocation 0: size 65536, parameter 0, shape |f32[256,64]| at ShapeIndex {}, maybe-live-out:
_ALLOCATION = re.compile(r"^allocation (\d+): size (\d+)(?:, (.*))?:\s*$")
#  value: <26 x.1 @0> (size=65536,offset=0): f32[256,64]{1,0}
#  value: <39 tuple.2{} @0> (size=16,offset=0): (f32[2], f32[2])
_VALUE = re.compile(
    r"^\s+value: <(\d+) (\S+?)(\{[\d,]*\})?(?: \(phi\))?(?: @\d+)?> "
    r"\(size=(\d+),offset=(\d+)\): (.*)$"
)
_PARAMETER = re.compile(r"(?:^|, )parameter (\d+)")
_COLOR = re.compile(r"(?:^|, )color (\d+)(?:,|$)")
#     fusion{}:4-6
_RANGE = re.compile(r"^\s+(\S+?)(\{[\d,]*\}):(\d+)-(\d+)\s*$")
#   3:sort.0
_SEQUENCE = re.compile(r"^\s+(\d+):(\S+)\s*$")
#   Live ranges at 7 (peak):
_PEAK_AT = re.compile(r"^\s*Live ranges at (\d+) \(peak\):\s*$")
#     x.1{}: 65536 bytes (cumulative: 131072 bytes)
_LIVE = re.compile(r"^\s+(\S+?)(\{[\d,]*\}): (\d+) bytes")
#   %x.1 = f32[256,64]{1,0} parameter(0), metadata=...
_PARAMETER_LINE = re.compile(r"^\s+%?([^\s=]+) = .*? parameter\(\d+\)")


@dataclasses.dataclass(frozen=True)
class Buffer:
    """One buffer (an HLO value) live at the peak.

    ``label`` is the instruction that defines it (``index`` the tuple element,
    ``"{}"`` for a whole array); ``kind`` one of :data:`KINDS` (``"unknown"`` if
    the buffer assignment does not name it); ``aliased_argument`` the parameter
    number of the argument whose allocation an output reuses (a donated
    argument), else ``None``. ``lines`` are the (file, line) pairs of the user's
    code that made it, the line of its defining (root) instruction first; ``()``
    for what the compiler made on its own (copies, layout changes) and for the
    arguments themselves. ``argument`` is the pytree name of the argument it is
    (or, for an output written over a donated argument, reuses), e.g.
    ``params/Dense_0/kernel`` (:mod:`olympus.argument_names`); ``None`` for other
    buffers and for an argument the program does not name.
    """

    label: str
    size: int
    kind: str
    allocation: int | None
    shape: str
    lines: tuple[tuple[str, int], ...] = ()
    index: str = "{}"
    aliased_argument: int | None = None
    #: The bytes of it that count toward the peak: its size, less what it shares
    #: with a buffer listed before it (an output written over a donated argument
    #: shares all of its memory with the argument). ``None``: all of it.
    counted: int | None = None
    argument: str | None = None

    @property
    def bytes(self) -> int:
        """What it adds to the peak (:attr:`counted`, or its size)."""
        return self.size if self.counted is None else self.counted

    @property
    def line(self) -> tuple[str, int] | None:
        """The line the buffer is put down to in :meth:`PeakMemory.by_line`."""
        return self.lines[0] if self.lines else None


@dataclasses.dataclass(frozen=True)
class LineBytes:
    """Bytes live at the peak that one source line made (``file``, ``line``), or,
    with ``file`` ``None``, one of the rows ``"arguments"`` and ``"compiler-made"``
    (``what``)."""

    what: str
    file: str | None
    line: int | None
    bytes: int
    labels: tuple[str, ...]


@dataclasses.dataclass(frozen=True)
class Allocation:
    """One allocation of the buffer assignment (what :meth:`PeakMemory.difference`
    reads)."""

    index: int
    size: int
    kind: str
    parameter: int | None
    live_out: bool
    #: Its memory space (XLA's "color"): 0 the device's memory; on TPU 1 is the
    #: on-chip vector memory (VMEM), 2 the scalar memory (SMEM).
    color: int = 0


@dataclasses.dataclass(frozen=True)
class PeakMemory:
    """The buffers live at the peak of a compiled program, biggest first.

    ``peak_bytes`` is the live-range dump's peak (the sum of the sizes of
    ``buffers``); ``at`` the instruction at which it is reached;
    ``memory_analysis_peak`` the compiled program's
    ``memory_analysis().peak_memory_in_bytes`` (``None`` when not known), a
    different measure: see :meth:`difference`.
    """

    peak_bytes: int
    buffers: tuple[Buffer, ...]
    at: str | None
    memory_analysis_peak: int | None
    allocations: tuple[Allocation, ...] = ()
    #: ``(memory space, bytes)``: the peak of the values of each memory space but
    #: the device's own (0), each at its own point of the program (TPU's VMEM...).
    space_peaks: tuple[tuple[int, int], ...] = ()

    def by_kind(self) -> dict[str, int]:
        """Bytes live at the peak per kind of buffer."""
        out: dict[str, int] = {}
        for b in self.buffers:
            out[b.kind] = out.get(b.kind, 0) + b.bytes
        return out

    def by_line(self) -> list[LineBytes]:
        """Bytes live at the peak per source line, biggest first, with a row for
        the arguments and one for what the compiler made on its own; the rows sum
        to :attr:`peak_bytes`. A buffer counts for one line: that of its defining
        instruction (:attr:`Buffer.line`)."""
        rows: dict[tuple, list] = {}
        key: tuple[str, str | None, int | None]
        for b in self.buffers:
            if b.line is not None:
                key = ("line", b.line[0], b.line[1])
            elif b.kind == "argument":
                key = ("arguments", None, None)
            else:
                key = ("compiler-made", None, None)
            row = rows.setdefault(key, [0, []])
            row[0] += b.bytes
            row[1].append(b.label)
        out = [
            LineBytes(what, file, line, size, tuple(labels))
            for (what, file, line), (size, labels) in rows.items()
        ]
        out.sort(key=lambda r: (-r.bytes, r.what, r.file or "", r.line or 0))
        return out

    def by_memory_space(self) -> dict[int, int]:
        """Bytes live at the peak per memory space (:attr:`Allocation.color`; a
        buffer of no known allocation counts for space 0)."""
        color = {a.index: a.color for a in self.allocations}
        out: dict[int, int] = {}
        for b in self.buffers:
            space = color.get(b.allocation, 0) if b.allocation is not None else 0
            out[space] = out.get(space, 0) + b.bytes
        return out

    def allocation_bytes(self, *kinds: str) -> int:
        """The sizes of the allocations of these kinds, each allocation once (an
        argument's allocation that an output reuses is an ``"argument"``)."""
        return sum(a.size for a in self.allocations if a.kind in kinds)

    def difference(self) -> str:
        """How :attr:`memory_analysis_peak` relates to :attr:`peak_bytes`, exactly,
        or that the dump does not explain it."""
        ma = self.memory_analysis_peak
        if ma is None:
            return "no memory_analysis() peak to compare with"
        if ma == self.peak_bytes:
            return f"memory_analysis() peak {ma} bytes = live-range peak"
        static = self.allocation_bytes("argument", "output", "constant")
        if ma == static:
            temps = self.by_kind().get("temporary", 0)
            return (
                f"memory_analysis() peak {ma} bytes = the argument, output and "
                f"constant allocations ({self.allocation_bytes('argument')} + "
                f"{self.allocation_bytes('output')} + "
                f"{self.allocation_bytes('constant')} bytes, each allocation once, "
                f"whether live at the same time or not), with no temporaries; "
                f"the live-range peak {self.peak_bytes} bytes counts the values "
                f"live at one point ({temps} bytes of them temporaries)"
            )
        vmem = dict(self.space_peaks).get(1)
        rest = ma - static - (vmem or 0)
        if vmem and abs(rest) <= ma // 1000:  # TPU: measured exact, or 512 bytes off
            spaces = self.by_memory_space()
            left = f", and {rest:+d} bytes the dump does not place" if rest else ""
            return (
                f"memory_analysis() peak {ma} bytes = the argument, output and "
                f"constant allocations ({self.allocation_bytes('argument')} + "
                f"{self.allocation_bytes('output')} + "
                f"{self.allocation_bytes('constant')} bytes, each allocation once) "
                f"plus the peak of the values in memory space 1 (on TPU the on-chip "
                f"vector memory, VMEM) at its own point, {vmem} bytes{left}; it counts "
                f"no temporaries in the device's memory (space 0, HBM). The live-range "
                f"peak {self.peak_bytes} bytes adds the values live at one point in "
                f"every memory space: "
                + ", ".join(f"{n} bytes in {_space_name(c)}" for c, n in sorted(spaces.items()))
            )
        return (
            f"memory_analysis() peak {ma} bytes differs from the live-range peak "
            f"{self.peak_bytes} bytes by {ma - self.peak_bytes:+d}: not explained "
            f"by the dump"
        )


def _space_name(color: int) -> str:
    return {0: "space 0 (HBM)", 1: "space 1 (VMEM)", 2: "space 2 (SMEM)"}.get(
        color, f"space {color}"
    )


def _space_peaks(ranges, values, by_index) -> tuple[tuple[int, int], ...]:
    """The peak of the values of each memory space but 0, from the live ranges
    (``(label, index, first, last)``, both ends live) and where each value is."""
    events: dict[int, list[tuple[int, int]]] = {}
    for label, index, first, last in ranges:
        found = values.get((label, index))
        if found is None or by_index[found[0]].color == 0:
            continue
        space = events.setdefault(by_index[found[0]].color, [])
        space += [(first, found[1]), (last + 1, -found[1])]
    out = []
    for color, changes in sorted(events.items()):
        live = peak = 0
        for _, change in sorted(changes, key=lambda e: (e[0], e[1])):
            live += change
            peak = max(peak, live)
        out.append((color, peak))
    return tuple(out)


def _find(folder: str, names: list[str], suffix: str) -> str:
    found = sorted(n for n in names if n.endswith(suffix))
    if not found:
        raise ValueError(
            f"XLA wrote no *{suffix} into {os.fspath(folder)!r} (this XLA does not dump it)"
        )
    # One compile dumps one module; should there be more, take the last one.
    with open(os.path.join(folder, found[-1]), encoding="utf-8", errors="replace") as f:
        return f.read()


def _read_assignment(text: str):
    """Allocations, and per value (label, index): (allocation, size, shape, offset)."""
    allocations: list[Allocation] = []
    values: dict[tuple[str, str], tuple[int, int, str, int]] = {}
    current = None
    for line in text.split("\n"):
        m = _ALLOCATION.match(line)
        if m:
            attrs = m.group(3) or ""
            p = _PARAMETER.search(attrs)
            live_out = "maybe-live-out" in attrs or "output shape is" in attrs
            if p:
                kind = "argument"
            elif "constant" in attrs.split(", "):
                kind = "constant"
            elif "thread-local" in attrs:
                kind = "thread-local"
            elif live_out:
                kind = "output"
            else:
                kind = "temporary"
            color = _COLOR.search(attrs)
            current = Allocation(
                int(m.group(1)),
                int(m.group(2)),
                kind,
                int(p.group(1)) if p else None,
                live_out,
                int(color.group(1)) if color else 0,
            )
            allocations.append(current)
            continue
        m = _VALUE.match(line)
        if m and current is not None:
            values[(m.group(2), m.group(3) or "{}")] = (
                current.index,
                int(m.group(4)),
                m.group(6).strip(),
                int(m.group(5)),
            )
        elif line and not line.startswith(" "):
            current = None  # a section after the allocations ("Used values:"...)
    return allocations, values


def _read_live_range(text: str):
    """The instruction sequence, the peak's position, the values live there and
    every value's live range."""
    sequence: dict[int, str] = {}
    at: int | None = None
    live: list[tuple[str, str, int]] = []
    ranges: list[tuple[str, str, int, int]] = []
    section = None
    for line in text.split("\n"):
        stripped = line.strip()
        if stripped.startswith("InstructionSequence"):
            section = "sequence"
            continue
        if stripped.startswith("BufferLiveRange"):
            section = "ranges"
            continue
        m = _PEAK_AT.match(line)
        if m:
            at, section = int(m.group(1)), "peak"
            continue
        if section == "sequence":
            m = _SEQUENCE.match(line)
            if m:
                sequence[int(m.group(1))] = m.group(2)
        elif section == "ranges":
            m = _RANGE.match(line)
            if m:
                ranges.append((m.group(1), m.group(2), int(m.group(3)), int(m.group(4))))
        elif section == "peak":
            m = _LIVE.match(line)
            if m:
                live.append((m.group(1), m.group(2), int(m.group(3))))
            elif stripped:
                section = None  # "Stack trace breakdown..." and what follows
    if at is None:
        raise ValueError(
            "the live-range dump names no peak ('Live ranges at N (peak):'): "
            "this XLA's format is not one Olympus reads"
        )
    return sequence, at, live, ranges


def lines_by_label(
    stage, table: SourceTable | SourceTables
) -> dict[str, tuple[tuple[str, int], ...]]:
    """Per instruction of the entry computation (and of computations it calls
    that are not fusions) of an optimized HLO stage (:func:`hlo_stage`), the user
    lines that made its result: the line its own metadata's call stack is charged to
    (the innermost of the user's own code), then its fused instructions' (the
    fusion's root first); for a collective without either, or a fusion holding one,
    those of what uses its result (:func:`olympus.collectives.lines_without_source`:
    XLA:TPU from jaxlib 0.12 keeps no source for an FSDP weight's all-gather). A
    caller that has the stage parsed already (the report's model, with its
    :meth:`~olympus.provenance.Provenance.source_tables`) gives it, and the module is
    read once."""

    line_of = charged_lines(table)

    def where(op) -> tuple[str, int] | None:
        return line_of(op.location)

    fused: dict[int, list] = {}
    for op in stage.ops:
        if op.fusion is not None:
            fused.setdefault(op.fusion, []).append(op)
    out: dict[str, tuple[tuple[str, int], ...]] = {}
    for op in stage.ops:
        if op.fusion is not None or not op.label or op.name == "parameter":
            continue
        lines: dict[tuple[str, int], None] = {}  # ordered, each line once
        own = where(op)
        if own is not None:
            lines[own] = None
        # The fused computation's ROOT is printed last: its line first.
        for inner in reversed(fused.get(op.index, [])):
            w = where(inner)
            if w is not None:
                lines.setdefault(w)
        # An entry instruction's label wins over a callee's of the same name.
        if op.label not in out or op.parent is None:
            out[op.label] = tuple(lines)
    # A collective XLA kept no source for, or the fusion holding one: what uses its result.
    ops = stage.ops
    holders = {
        ops[k].label if ops[k].fusion is None else ops[ops[k].fusion].label
        for k in stage.collectives
    }
    if any(label in out and not out[label] for label in holders):
        found = lines_without_source(stage, lambda op: [w] if (w := where(op)) else [])
        for label, made in found.items():
            if label in out and not out[label]:
                out[label] = made
    return out


@dataclasses.dataclass(frozen=True)
class PeakDump:
    """What XLA dumped of one compile that the peak is read from: the buffer
    assignment, the live ranges and the optimized module, as texts (kept once the
    dump folder is gone); :meth:`read` makes the :class:`PeakMemory`."""

    assignment: str
    live_range: str
    hlo: str
    memory_analysis_peak: int | None = None

    @classmethod
    def from_folder(
        cls, folder: str | os.PathLike, memory_analysis_peak: int | None = None
    ) -> "PeakDump":
        """The texts of an XLA dump folder (one compile's, with
        ``xla_dump_hlo_as_text``); raises ``ValueError`` saying what is missing."""
        folder = os.fspath(folder)
        names = os.listdir(folder)
        assignment = _find(folder, names, "after_optimizations-buffer-assignment.txt")
        if any(n.endswith("after_optimizations-live-range.txt") for n in names):
            live = _find(folder, names, "after_optimizations-live-range.txt")
        elif "HloLiveRange" in assignment:  # older XLA (JAX 0.9): one file for both
            live = assignment[assignment.index("HloLiveRange") :]
        else:
            raise ValueError(
                f"XLA dumped no live ranges into {folder!r} (neither a "
                f"*-live-range.txt nor an HloLiveRange in the buffer "
                f"assignment)"
            )
        return cls(
            assignment, live, _find(folder, names, "after_optimizations.txt"), memory_analysis_peak
        )

    def read(
        self,
        lines: Mapping[str, tuple[tuple[str, int], ...]] | None = None,
        names: Sequence[str] = (),
    ) -> PeakMemory:
        """The buffers live at the peak; ``lines`` (:func:`lines_by_label` of the same
        compiled module) spares reading the module again; ``names`` name the
        arguments, in order, where the module's metadata does not
        (:func:`olympus.argument_names.fallback_names`)."""
        hlo_text = self.hlo
        argument_names = parameter_names(hlo_text, names)
        sequence, at, live, ranges = _read_live_range(self.live_range)
        allocations, values = _read_assignment(self.assignment)
        by_index = {a.index: a for a in allocations}
        if lines is None:
            table = SourceTable()
            lines = lines_by_label(hlo_stage(hlo_text, table, name="buffers"), table)
        parameters = frozenset(
            m.group(1)
            for line in hlo_text.split("\n")
            if "parameter(" in line and (m := _PARAMETER_LINE.match(line))
        )
        buffers: list[Buffer] = []
        offsets: dict[int, int] = {}  # buffer number -> offset in its allocation
        for label, index, size in live:
            found = values.get((label, index))
            allocation = shape = None
            kind, aliased = "unknown", None
            if found is not None:
                allocation, _, shape, offsets[len(buffers)] = found
                a = by_index[allocation]
                kind = a.kind
                if a.kind == "argument" and label not in parameters:
                    # A value of the program put in an argument's allocation: the
                    # output that reuses a donated argument.
                    kind, aliased = "output", a.parameter
            made = () if kind == "argument" else lines.get(label, ())
            # The argument it is, or (a donated one) whose memory it reuses.
            number = aliased
            if kind == "argument" and allocation is not None:
                number = by_index[allocation].parameter
            name = None if number is None else argument_names.get(number)
            buffers.append(
                Buffer(
                    label, size, kind, allocation, shape or "", made, index, aliased, argument=name
                )
            )
        buffers = _count_shared(buffers, offsets)
        buffers.sort(key=lambda b: (-b.size, b.label, b.index))
        return PeakMemory(
            sum(b.bytes for b in buffers),
            tuple(buffers),
            sequence.get(at),
            self.memory_analysis_peak,
            tuple(allocations),
            _space_peaks(ranges, values, by_index),
        )


def _count_shared(buffers: list[Buffer], offsets: dict[int, int]) -> list[Buffer]:
    """``buffers`` with what each adds to the peak: values live at once in the same
    memory (the same allocation, overlapping bytes: an output written over a donated
    argument) count once, for the argument or else the first listed."""
    taken: dict[int, list[tuple[int, int]]] = {}  # allocation -> byte ranges counted
    order = sorted(range(len(buffers)), key=lambda k: (buffers[k].kind != "argument", k))
    out = list(buffers)
    for k in order:
        b = buffers[k]
        if b.allocation is None or k not in offsets:
            continue
        start, end = offsets[k], offsets[k] + b.size
        ranges = taken.setdefault(b.allocation, [])
        shared = sum(max(0, min(end, e) - max(start, s)) for s, e in ranges)
        ranges.append((start, end))
        if shared:
            out[k] = dataclasses.replace(b, counted=max(0, b.size - shared))
    return out


def read_peak_memory(
    folder: str | os.PathLike, memory_analysis_peak: int | None = None
) -> PeakMemory:
    """The buffers live at the peak, read from an XLA dump folder (one compile's,
    with ``xla_dump_hlo_as_text``); ``memory_analysis_peak`` is kept for
    comparison."""
    return PeakDump.from_folder(folder, memory_analysis_peak).read()


def memory_analysis_peak(compiled) -> int | None:
    """``compiled.memory_analysis().peak_memory_in_bytes``, or ``None`` where the
    backend does not give it."""
    try:
        stats = compiled.memory_analysis()
    except Exception:  # noqa: BLE001 - a backend without it: no peak to compare with
        return None
    peak = getattr(stats, "peak_memory_in_bytes", None) if stats is not None else None
    return None if peak is None else int(peak)


def peak_memory(
    compiled_or_lowered, *, compiler_options: Mapping[str, Any] | None = None
) -> PeakMemory:
    """The buffers live at the peak of the compiled program: compiles the
    ``Lowered`` (an Olympus or JAX one; for an Olympus ``Compiled``, its lowering,
    with its compiler options unless ``compiler_options`` are given) once more
    with XLA's dumps, into a private folder removed afterwards, and reads them.

    Nothing of the process (``XLA_FLAGS``, JAX's configuration) is changed; a
    compile that fails raises as ``compile()`` does.
    """
    lowered = compiled_or_lowered
    options = compiler_options
    if hasattr(compiled_or_lowered, "lowered") and hasattr(compiled_or_lowered, "memory_analysis"):
        lowered = compiled_or_lowered.lowered
        if lowered is None:
            raise ValueError("this Compiled keeps no Lowered to compile again")
        if options is None:
            options = getattr(compiled_or_lowered, "compiler_options", None)
    elif not hasattr(compiled_or_lowered, "compile"):
        raise TypeError(
            f"peak_memory takes a Lowered or an Olympus Compiled, not "
            f"{type(compiled_or_lowered).__name__}"
        )
    with dumped_compile(lowered, compiler_options=options) as (folder, compiled):
        return read_peak_memory(folder, memory_analysis_peak(compiled))
