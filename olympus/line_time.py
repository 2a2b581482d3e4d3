"""Time per line, from the compiler, before any run: how long each source line's
instructions are expected to take on the hardware a program was compiled for.

Two figures, each named so wherever it is shown (:attr:`TimeByLine.what`):

* **TPU: the compiler's estimate of cycles** (:func:`cycles_by_line`). XLA's TPU
  compiler writes ``"estimated_cycles"`` in the ``backend_config`` of each
  instruction it schedules and costs: every fusion, and the few instructions it
  leaves unfused (a ``dynamic-slice``, a ``broadcast``); collectives, asynchronous
  copies and custom-calls carry none, and are not in the figures (the notes count
  them). Each estimate is given to source lines as the per-line costs give an
  instruction's flops and bytes (:mod:`olympus.line_costs`: the same user-line
  charging, a loop body's counted × its trip count where XLA knows it): a fusion's
  cycles are split among the instructions it fused in proportion to their flops
  (with transcendentals), or where it fused none that computes, to their bytes
  accessed; the cycles of a fusion that computes go where flops go, those of one
  that only moves data where bytes go. Seconds are cycles / the chip's clock where
  Olympus knows it (:mod:`olympus.chips`), per device.
* **CUDA: a roofline estimate** (:func:`roofline_by_line`) from the GPU's target
  description: each line's time is the larger of its flops / the GPU's peak
  FLOP/s (dense bf16) and its bytes accessed / its memory bandwidth, from the
  per-line costs; a module's from its own figures.

Shares are of the total the rows add up to (:attr:`TimeByLine.total`).

>>> hlo = '''HloModule m
...
... %fused (p0: f32[8,16], p1: f32[16,4]) -> f32[8,4] {
...   %p0 = f32[8,16]{1,0} parameter(0)
...   %p1 = f32[16,4]{1,0} parameter(1)
...   ROOT %dot.1 = f32[8,4]{1,0} dot(%p0, %p1), lhs_contracting_dims={1}, rhs_contracting_dims={0}, metadata={op_name="dot" source_file="/m.py" source_line=3}
... }
...
... ENTRY %main (a: f32[8,16], b: f32[16,4]) -> f32[8,4] {
...   %a = f32[8,16]{1,0} parameter(0)
...   %b = f32[16,4]{1,0} parameter(1)
...   ROOT %fusion = f32[8,4]{1,0} fusion(%a, %b), kind=kOutput, calls=%fused, backend_config={"estimated_cycles":"600"}
... }
... '''
>>> import jax.extend.backend
>>> from olympus import jax_compat
>>> cpu = jax_compat.hlo_text_cost_analyzer(jax.extend.backend.get_backend("cpu"))
>>> time = cycles_by_line_text(hlo, cpu, clock_hz=1.5e9, chip="TPU v5e")
>>> [(row.line, row.cycles, row.seconds) for row in time.lines]
[(3, 600.0, 4e-07)]
"""

from __future__ import annotations

import collections
import dataclasses
import re
from collections.abc import Callable, Mapping

from olympus import jax_compat
from olympus.line_costs import KEYS, CostByLine, Iterations, _Attribution

__all__ = [
    "CYCLES",
    "ROOFLINE",
    "LineTime",
    "LibraryTime",
    "TimeByLine",
    "estimated_cycles",
    "cycles_by_line",
    "cycles_by_line_text",
    "roofline_by_line",
    "roofline_seconds",
    "time_by_line",
]

#: :attr:`TimeByLine.figure` of the TPU compiler's estimate of cycles.
CYCLES = "cycles"
#: :attr:`TimeByLine.figure` of a roofline estimate from a GPU's peak figures.
ROOFLINE = "roofline"

# ``"estimated_cycles":"5967"`` in a TPU instruction's ``backend_config`` (JAX 0.10).
_ESTIMATED = re.compile(r'"estimated_cycles"\s*:\s*"?(\d+)"?')
# Instructions that take no time of their own: not counted among those without an estimate.
_NO_WORK = frozenset(
    {"parameter", "constant", "get-tuple-element", "tuple", "bitcast", "opt-barrier", "after-all"}
)
_FLOPS, _BYTES = "flops", "bytes accessed"
# A scalar's type (``s32[]{:T(128)}``, ``pred[]``): a loop counter's bookkeeping.
_SCALAR = re.compile(r"^[a-z]\w*\[\]")
_NOTHING: Mapping[str, float] = dict.fromkeys(KEYS, 0.0)


def estimated_cycles(attrs: str) -> int | None:
    """The cycles XLA's TPU compiler estimates for an instruction, from its
    attributes' text (its ``backend_config``), or ``None`` where it gives none.

    >>> estimated_cycles(', backend_config={"window_config":{"estimated_cycles":"5967"}}')
    5967
    >>> estimated_cycles(", to_apply=%add") is None
    True
    """
    m = _ESTIMATED.search(attrs)
    return int(m.group(1)) if m else None


@dataclasses.dataclass(frozen=True)
class LibraryTime:
    """The part of a user line's time made on a library line it calls into (as
    :class:`olympus.line_costs.LibraryCost`)."""

    file: str
    line: int
    function: str
    cycles: float | None
    seconds: float | None


@dataclasses.dataclass(frozen=True)
class LineTime:
    """One source line's time: ``cycles`` (TPU; ``None`` for a roofline),
    ``seconds`` (``None`` where the chip's clock is not known); ``bound``, for a
    roofline, which of ``"flops"`` and ``"bytes"`` set it (``None`` for cycles).
    ``file``/``line`` are ``None`` for the compiler-made row."""

    file: str | None
    line: int | None
    cycles: float | None
    seconds: float | None
    library: tuple[LibraryTime, ...] = ()
    bound: str | None = None
    iterations: tuple[Iterations, ...] = ()


@dataclasses.dataclass(frozen=True)
class TimeByLine:
    """The time of a compiled program by source line and module, before any run.

    ``figure``: :data:`CYCLES` (the TPU compiler's estimate) or :data:`ROOFLINE`;
    ``what``: the figure named in words, as every form says it; ``label``: a
    column's heading. ``chip``: the chip's name; ``clock_hz``, ``peak_flops``,
    ``hbm_bandwidth``: the per-device figures used (``None`` where not known or
    not used). ``lines``: biggest first, the compiler-made row last; ``modules``:
    each module path's own ``cycles`` and ``seconds``. ``notes``: what the figures
    leave out.
    """

    figure: str
    what: str
    label: str
    chip: str
    lines: tuple[LineTime, ...]
    modules: Mapping[str, Mapping[str, float | None]]
    notes: tuple[str, ...] = ()
    clock_hz: float | None = None
    peak_flops: float | None = None
    hbm_bandwidth: float | None = None

    def _value(self, cycles: float | None, seconds: float | None) -> float:
        """What a row's share is of: its cycles (TPU) or seconds (roofline)."""
        return float((cycles if self.figure == CYCLES else seconds) or 0.0)

    @property
    def cycles(self) -> float | None:
        """The rows' cycles added up (``None`` for a roofline)."""
        if self.figure != CYCLES:
            return None
        return float(sum(r.cycles or 0.0 for r in self.lines))

    @property
    def seconds(self) -> float | None:
        """The rows' seconds added up (``None`` where the clock is not known)."""
        if self.figure == CYCLES and not self.clock_hz:
            return None
        return float(sum(r.seconds or 0.0 for r in self.lines))

    @property
    def total(self) -> float:
        """What shares are of: the rows' cycles (TPU) or seconds (roofline)."""
        return float(sum(self._value(r.cycles, r.seconds) for r in self.lines))

    def share(self, row: LineTime) -> float:
        """A row's share of :attr:`total` (0 where the total is 0)."""
        total = self.total
        return self._value(row.cycles, row.seconds) / total if total else 0.0

    def check(self, cycles: float | None = None, tolerance: float = 1e-6) -> tuple[str, ...]:
        """What does not add up, in words (empty when all does): the modules' sum
        against the rows', and the rows' cycles against ``cycles`` (an independent
        count: :func:`total_cycles`), where given."""
        problems = []
        rows = self.total
        modules = sum(self._value(m["cycles"], m["seconds"]) for m in self.modules.values())
        if self.figure == CYCLES and abs(modules - rows) > tolerance * max(rows, 1.0):
            problems.append(f"modules sum to {modules:g} cycles, lines to {rows:g}")
        if cycles is not None and abs(cycles - rows) > tolerance * max(cycles, 1.0):
            problems.append(f"lines sum to {rows:g} cycles, the instructions' to {cycles:g}")
        return tuple(problems)


# -- TPU: the compiler's estimate of cycles ------------------------------------------


class _Cycles(_Attribution):
    """The per-line costs' attribution (:class:`olympus.line_costs._Attribution`)
    with each instruction's cost its estimated cycles: a scheduled instruction's
    own (under ``flops`` where what it fused computes, else under ``bytes
    accessed``, so that its parts go where the costs' flops or bytes go); a
    ``while``'s, ``call``'s or async wrapper's that of its bodies' instructions
    once (the loop's trip count multiplies them as it spreads); a
    ``conditional``'s, its longest branch's. A fused instruction weighs its part
    of its fusion's cycles by XLA's cost of it alone (flops and transcendentals,
    or bytes accessed)."""

    def __init__(self, text: str, analyse, **options):
        super().__init__(text, analyse, {}, [], **options)
        self.mine: dict[int, Mapping[str, float]] = {}
        self.basis: dict[int, str] = {}
        self.estimated = 0
        self.without: collections.Counter[str] = collections.Counter()

    def _xla(self, i) -> Mapping[str, float]:
        return super()._cost(i) or _NOTHING

    def _cost(self, i) -> Mapping[str, float] | None:
        found = self.mine.get(i)
        if found is None:
            op = self.ops[i]
            if op.name in _NO_WORK or op.name.endswith("-done"):
                found = _NOTHING
            elif op.fusion is not None:
                found = self._fused(i)
            else:
                found = self._scheduled(i)
            self.mine[i] = found
        return found

    def _top(self, i) -> int:
        """The scheduled fusion that holds fused op ``i`` (through nested fusions)."""
        top = self.ops[i].fusion
        while self.ops[top].fusion is not None:
            top = self.ops[top].fusion
        return top

    def _basis_of(self, i) -> str:
        """Where scheduled op ``i``'s cycles go: ``flops`` where it (what it fused)
        computes, else ``bytes accessed``."""
        found = self.basis.get(i)
        if found is None:
            children = self._children(i)
            costs = [self._xla(j) for j in children] if children else [self._xla(i)]
            computes = any(c[_FLOPS] > 0 or c["transcendentals"] > 0 for c in costs)
            found = self.basis[i] = _FLOPS if computes else _BYTES
        return found

    def _fused(self, i) -> Mapping[str, float]:
        basis = self._basis_of(self._top(i))
        xla = self._xla(i)
        weight = xla[_FLOPS] + xla["transcendentals"] if basis == _FLOPS else xla[_BYTES]
        return {**_NOTHING, basis: weight}

    def _scheduled(self, i) -> Mapping[str, float]:
        parsed = self._parse(i)
        cycles = estimated_cycles(parsed[4]) if parsed is not None else None
        if cycles is not None:
            self.estimated += 1
            return {**_NOTHING, self._basis_of(i): float(cycles)}
        op = self.ops[i]
        bodies = self._bodies(i) if op.name != "fusion" else []
        if not bodies:
            self._without(i)
            return _NOTHING
        # A while, call, conditional or async wrapper: its bodies' instructions, once.
        per_body = []
        for ci in bodies:
            sums = dict.fromkeys(KEYS, 0.0)
            for j in self.comp_ops[ci]:
                if self.ops[j].name not in ("parameter", "constant"):
                    for k, v in self._cost(j).items():  # type: ignore[union-attr]
                        sums[k] += v
            per_body.append(sums)
        if op.name == "conditional":  # one branch runs: the longest
            return max(per_body, key=lambda s: sum(s.values()))
        return {k: sum(s[k] for s in per_body) for k in KEYS}

    def _without(self, i) -> None:
        """Counts scheduled op ``i`` among those the compiler gives no estimate, by
        what it is (a collective fusion by its collective); a scalar's bookkeeping
        (a loop's counter) is not counted."""
        op = self.ops[i]
        shape = op.types[0] if op.types else ""
        if _SCALAR.match(shape) or (op.label or "").endswith("-done"):
            return
        kind = op.name
        if op.name == "fusion":
            inner = {self.ops[j].name for j in self._children(i) if self.ops[j].collective}
            kind = f"fused {'/'.join(sorted(inner))}" if inner else "fusion"
        self.without[kind] += 1


def _analyser(jax_compiled) -> Callable[[str], Mapping[str, float]]:
    """XLA's cost analysis of a module's text as :func:`olympus.line_costs.cost_by_line`
    takes it: the compiled program's backend's, else the CPU's."""
    analyse = jax_compat.hlo_text_cost_analyzer(jax_compat.compiled_client(jax_compiled))
    if analyse is None:
        import jax.extend.backend

        analyse = jax_compat.hlo_text_cost_analyzer(jax.extend.backend.get_backend("cpu"))
    return analyse


def cycles_by_line(
    compiled,
    *,
    clock_hz: float | None = None,
    chip: str = "TPU",
    parsed=None,
    frames: str = "user",
    focus=None,
    lowered=None,
    origins=None,
    staged=None,
) -> TimeByLine:
    """The TPU compiler's estimated cycles of ``compiled`` (an Olympus or JAX
    ``Compiled`` for a TPU) by source line and module, in seconds at ``clock_hz``
    where given; the options are :func:`olympus.line_costs.cost_by_line`'s (pass
    the same to get the same lines)."""
    jax_compiled = getattr(compiled, "_jax", compiled)
    text = parsed[0].text if parsed is not None else jax_compiled.as_text()
    return cycles_by_line_text(
        text,
        _analyser(jax_compiled),
        clock_hz=clock_hz,
        chip=chip,
        parsed=parsed,
        frames=frames,
        focus=focus,
        lowered=lowered,
        origins=origins,
        staged=staged,
    )


def cycles_by_line_text(
    text: str,
    analyse: Callable[[str], Mapping[str, float]],
    *,
    clock_hz: float | None = None,
    chip: str = "TPU",
    **options,
) -> TimeByLine:
    """:func:`cycles_by_line` of an optimized HLO module's text, with ``analyse``
    (HLO module text -> XLA's cost analysis) weighing the instructions a fusion
    fused."""
    walk = _Cycles(text, analyse, **options)
    result = walk.run()

    def seconds(cycles: float) -> float | None:
        return cycles / clock_hz if clock_hz else None

    def cycles_of(figures) -> float:
        return float(figures.get(_FLOPS, 0.0) + figures.get(_BYTES, 0.0))

    lines = []
    for row in result.lines:
        cycles = row.flops + row.bytes_accessed
        library = tuple(
            LibraryTime(
                c.file,
                c.line,
                c.function,
                c.flops + c.bytes_accessed,
                seconds(c.flops + c.bytes_accessed),
            )
            for c in row.library
        )
        lines.append(
            LineTime(row.file, row.line, cycles, seconds(cycles), library, None, row.iterations)
        )
    lines.sort(key=lambda r: (r.file is None, -(r.cycles or 0.0), r.file or "", r.line or 0))
    modules = {
        path: {"cycles": cycles_of(a), "seconds": seconds(cycles_of(a))}
        for path, a in result.modules.items()
        if cycles_of(a)
    }
    notes = []
    if walk.without:
        counted = ", ".join(
            f"{name} ×{n}" if n > 1 else name for name, n in walk.without.most_common()
        )
        notes.append(
            f"the compiler gives no estimate for {sum(walk.without.values())} instruction(s) "
            f"({counted}): collectives, asynchronous copies and custom-calls take time "
            f"these figures do not hold"
        )
    unknown = [loop.label for loop in result.loops if loop.trips is None]
    if unknown:
        shown = ", ".join(unknown[:5]) + ("..." if len(unknown) > 5 else "")
        notes.append(
            f"XLA does not know the trip count of {shown}: the time of its body is one iteration's"
        )
    clock = f"{clock_hz / 1e9:g} GHz" if clock_hz else None
    if clock:
        notes.append(f"seconds are cycles / the {chip}'s clock ({clock}), per device")
    what = (
        f"the compiler's estimate of cycles, before any run: the estimated_cycles XLA's "
        f"TPU compiler wrote for each of the {walk.estimated:,} fusions and unfused "
        f"instructions it costed, each split among the lines of what it fused by their "
        f"flops (or bytes)"
        + (
            f"; seconds at the {chip}'s {clock} clock"
            if clock
            else f"; Olympus does not know the {chip}'s clock: cycles only"
        )
    )
    return TimeByLine(
        CYCLES,
        what,
        "time (compiler's estimate)",
        chip,
        tuple(lines),
        modules,
        tuple(notes),
        clock_hz=clock_hz,
    )


def total_cycles(text: str) -> int:
    """The estimated cycles of every instruction of an HLO module's text that carries
    them, added up once each (loops not multiplied): for a program without loops,
    what :func:`cycles_by_line`'s rows add up to.

    >>> total_cycles('  %f = f32[8]{0} fusion(%a), calls=%c, backend_config={"estimated_cycles":"12"}')
    12
    """
    return sum(int(m.group(1)) for m in _ESTIMATED.finditer(text))


# -- CUDA: a roofline from the GPU's peak figures -------------------------------------


def roofline_seconds(
    flops: float, nbytes: float, peak_flops: float, hbm_bandwidth: float
) -> tuple[float, str]:
    """The roofline time of ``flops`` and ``nbytes`` accessed: the larger of flops /
    peak FLOP/s and bytes / bandwidth, and which set it (``"flops"`` or ``"bytes"``).

    >>> roofline_seconds(2e12, 1e9, 1e15, 1e12)
    (0.002, 'flops')
    >>> roofline_seconds(2e9, 1e9, 1e15, 1e12)
    (0.001, 'bytes')
    """
    compute, memory = flops / peak_flops, nbytes / hbm_bandwidth
    return (compute, "flops") if compute >= memory and compute > 0 else (memory, "bytes")


def roofline_by_line(
    cost: CostByLine, *, peak_flops: float, hbm_bandwidth: float, chip: str = "GPU"
) -> TimeByLine:
    """A roofline estimate of each line's and module's time from ``cost`` (the
    per-line costs) and a device's peak FLOP/s and memory bandwidth.

    >>> from olympus.line_costs import LineCost
    >>> cost = CostByLine((LineCost("m.py", 3, 2e12, 0.0, 1e9, ()),), {})
    >>> time = roofline_by_line(cost, peak_flops=1e15, hbm_bandwidth=1e12, chip="H100")
    >>> [(r.line, r.seconds, r.bound) for r in time.lines]
    [(3, 0.002, 'flops')]
    """

    def roof(flops: float, nbytes: float) -> tuple[float, str]:
        return roofline_seconds(flops, nbytes, peak_flops, hbm_bandwidth)

    lines = []
    for row in cost.lines:
        seconds, bound = roof(row.flops + row.transcendentals, row.bytes_accessed)
        library = tuple(
            LibraryTime(
                c.file,
                c.line,
                c.function,
                None,
                roof(c.flops + c.transcendentals, c.bytes_accessed)[0],
            )
            for c in row.library
        )
        lines.append(LineTime(row.file, row.line, None, seconds, library, bound, row.iterations))
    lines.sort(key=lambda r: (r.file is None, -(r.seconds or 0.0), r.file or "", r.line or 0))
    modules = {}
    for path, a in cost.modules.items():
        seconds = roof(a.get(_FLOPS, 0.0) + a.get("transcendentals", 0.0), a.get(_BYTES, 0.0))[0]
        if seconds:
            modules[path] = {"cycles": None, "seconds": seconds}
    what = (
        f"roofline estimate from the {chip}'s peak FLOP/s ({peak_flops / 1e12:,.0f} TFLOP/s "
        f"dense bf16) and memory bandwidth ({hbm_bandwidth / 1e9:,.0f} GB/s), per device, "
        f"before any run: each line's time is the larger of its flops / the peak and its "
        f"bytes accessed / the bandwidth"
    )
    notes = (
        "a roofline is a bound, not a measurement: a line whose kernels reach neither "
        "the peak nor the bandwidth (small kernels, launches, a program in f32) takes "
        "longer; collectives are not in it",
    )
    return TimeByLine(
        ROOFLINE,
        what,
        "time (roofline)",
        chip,
        tuple(lines),
        modules,
        notes,
        peak_flops=peak_flops,
        hbm_bandwidth=hbm_bandwidth,
    )


def time_by_line(compiled, cost: CostByLine, target, **options) -> TimeByLine | None:
    """The time by line of ``compiled`` for ``target`` (a
    :class:`olympus.hardware.Target`, or ``None``): the compiler's estimated cycles
    on a TPU (``options``: :func:`cycles_by_line`'s), a roofline from ``cost`` on a
    GPU whose peak figures Olympus knows; ``None`` for no target, another platform,
    or a GPU without figures."""
    if target is None:
        return None
    figures = target.per_device()
    chip = target.chip.title if target.chip is not None else target.device_kind
    if target.platform == "tpu":
        return cycles_by_line(compiled, clock_hz=figures.get("clock_hz"), chip=chip, **options)
    if target.platform in ("cuda", "rocm"):
        peak, bandwidth = figures.get("peak_flops"), figures.get("hbm_bandwidth")
        if peak and bandwidth:
            return roofline_by_line(cost, peak_flops=peak, hbm_bandwidth=bandwidth, chip=chip)
    return None
