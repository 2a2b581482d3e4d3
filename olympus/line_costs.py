"""Per-line cost: the compiled program's flops, transcendentals and bytes accessed,
attributed to the source lines that produced each instruction, fusions included.

How the costs are found (XLA's own counts, instruction by instruction):

* Every instruction of the entry computation of ``Compiled.as_text()`` is costed
  alone: a small HLO module holding just it (a parameter for each operand, the
  computations it calls copied) goes through XLA's cost analysis for the
  compiled program's backend. A module's cost is the sum of its entry's
  instructions' costs, so these parts add up to ``Compiled.cost_analysis()``.
* An instruction that calls computations of its own (a ``fusion``, ``while``,
  ``conditional``, ``call``, an async wrapper) has its cost split among the
  instructions of those computations, each quantity in proportion to that
  instruction's own cost as if it ran alone (costed the same way); a nested
  fusion or loop is split again. Where none of them has any of a quantity (a
  fusion's bytes with only bitcasts inside...), it stays on the caller's line.
* A loop is counted as it runs: where XLA knows a ``while``'s trip count ``n``
  (its ``backend_config``'s ``known_trip_count``), its body's share is counted
  ``n`` times and its condition's ``n + 1`` times, nested loops multiplying, and
  the rows say so (:attr:`LineCost.iterations`: "× 8 iterations"); where XLA does
  not know it, the body's figures are one iteration's, and the rows say "per
  iteration". XLA's ``cost_analysis()`` counts every loop body once, so the rows
  then add up to :attr:`CostByLine.counted_totals`, not to XLA's
  :attr:`CostByLine.totals`; :meth:`CostByLine.loops_note` says by how much.
* An instruction goes to the line of its source location's innermost frame of
  the user's own code (``frames="user"``; :mod:`olympus.provenance.focus` says
  whose code a file is), with the library lines inside it (flax's ``Dense``,
  optax's update...) kept on the row as ``library``; ``frames="innermost"`` charges
  the innermost frame whatever its file. One
  without (copies, layout changes, constants the compiler made) goes to the
  compiler-made row, which is never dropped. Except: one that computes (flops or
  transcendentals) with no location, or with just the metadata of the loop whose
  body holds it (a ``dot`` XLA rewrote in a loop body) goes to the line of the
  nearest instruction it feeds that has one of its own, as ``notes`` say.

Instructions of the same text (names aside, and the values of the constants in
the computations they call: a literal's cost is its shape's) are costed once. An instruction whose
module XLA cannot read (rare) shares what the entry's costed instructions leave
of the module's totals with the others like it.

>>> import jax.numpy as jnp, olympus
>>> def f(x, y):
...     return x @ y
>>> c = olympus.jit(f).trace(jnp.ones((8, 16)), jnp.ones((16, 4))).lower().compile()
>>> costs = cost_by_line(c)
>>> costs.lines[0].line, costs.lines[0].flops
(2, 1024.0)
>>> costs.check()
()
"""

from __future__ import annotations

import dataclasses
import re
from types import MappingProxyType
from typing import NamedTuple
from collections.abc import Callable, Iterable, Mapping

from olympus import gpu_costs, jax_compat
from olympus.module_paths import op_module_path
from olympus.provenance.focus import FRAMES
from olympus.provenance.hlo import closing_bracket, hlo_stage
from olympus.provenance.sources import SourceTable, charged_lines, library_frames

__all__ = [
    "LineCost",
    "LibraryCost",
    "CostByLine",
    "Iterations",
    "Loop",
    "loop_words",
    "cost_by_line",
    "cost_by_line_text",
    "KEYS",
]

#: The quantities attributed, as XLA's cost analysis names them.
KEYS = ("flops", "transcendentals", "bytes accessed")
_FIELDS = ("flops", "transcendentals", "bytes_accessed")

# ``[ROOT] %name = shape opcode(``: a tuple shape nests parentheses three deep.
_INSTR = re.compile(
    r"\s+(ROOT )?%?([^\s=]+) = "
    r"(\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)|\S+) ([a-z][\w\-]*)\("
)
# The same with operands that hold no parentheses or quotes, and the rest of the
# line: most instructions, read by one match.
_SIMPLE_INSTR = re.compile(r"\s+(ROOT )?%?([^\s=]+) = ([^\s(]\S*) ([a-z][\w\-]*)\(([^()\"]*)\)(.*)")
_CALLS = re.compile(r"\b(calls|to_apply|body|condition)=%?([\w.\-]+)")
_CALL_LISTS = re.compile(r"\b(branch_computations|called_computations)=\{([^}]*)\}")
_COMMENT = re.compile(r"/\*.*?\*/")
_NAME = re.compile(r"%[\w.\-]+")
_LITERAL = re.compile(r"constant\([^()]*\)")
_METADATA_ATTR = ", metadata={"
_DROPPED_ATTRS = (_METADATA_ATTR, ", control-predecessors={")
# ``metadata={...}`` as printed: quoted strings, no nested braces (else the slow path).
_METADATA = re.compile(r', metadata=\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}')
# The cost of an instruction that costs nothing (shared: only read).
_NO_COST: Mapping[str, float] = MappingProxyType(dict.fromkeys(KEYS, 0.0))
# Opcodes XLA gives no cost at all (a constant's operand is its literal).
_FREE = frozenset({"parameter", "constant"})
# A ``while``'s trip count as XLA knows it: ``"known_trip_count":{"n":"8"}`` in its
# ``backend_config`` (JAX 0.9 to 0.12 print it so).
_TRIP_COUNT = re.compile(r'"known_trip_count"\s*:\s*\{\s*"n"\s*:\s*"?(\d+)"?')
# A custom-call's target: what XLA's analysis names what it cannot cost by.
_CUSTOM_TARGET = re.compile(r'custom_call_target="([^"]+)"')


@dataclasses.dataclass(frozen=True, order=True)
class Iterations:
    """How many times the instructions of a row run: ``times`` the product of the
    trip counts XLA knows of the loops around them (1 outside any loop);
    ``per_iteration`` when one of those loops has a trip count XLA does not know
    (its body's figures are then one iteration's).

    >>> str(Iterations(8)), str(Iterations(1, per_iteration=True))
    ('× 8 iterations', 'per iteration (trip count unknown)')
    >>> str(Iterations(8).inside(None))
    '× 8 iterations, per iteration of a loop of unknown trip count'
    """

    times: int = 1
    per_iteration: bool = False

    def inside(self, trips: int | None) -> Iterations:
        """These iterations inside a loop of ``trips`` (``None``: unknown) iterations."""
        if trips is None:
            return Iterations(self.times, True)
        return Iterations(self.times * trips, self.per_iteration)

    def __str__(self) -> str:
        if not self.per_iteration:
            return "once" if self.times == 1 else f"× {self.times:,} iterations"
        if self.times == 1:
            return "per iteration (trip count unknown)"
        return f"× {self.times:,} iterations, per iteration of a loop of unknown trip count"


_ONCE = Iterations()


def loop_words(iterations: Iterable[Iterations]) -> str:
    """How a row or a module counts loops, in words, from its :class:`Iterations`
    (``""`` for none).

    >>> loop_words((Iterations(), Iterations(8)))
    'once + × 8 iterations'
    """
    return " + ".join(str(it) for it in iterations)


@dataclasses.dataclass(frozen=True)
class Loop:
    """A ``while`` of the compiled program: its ``label``, its trip count
    (``None`` where XLA does not know it) and how many times the loop itself
    runs (``around``: inside other loops).

    >>> str(Loop("while.5", 8)), str(Loop("while.9", None))
    ('while.5: 8 iterations', 'while.9: trip count unknown')
    """

    label: str
    trips: int | None
    around: Iterations = _ONCE

    def __str__(self) -> str:
        count = "trip count unknown" if self.trips is None else f"{self.trips:,} iterations"
        inside = f" (itself run {self.around})" if self.around != _ONCE else ""
        return f"{self.label}: {count}{inside}"


def trip_count(attrs: str) -> int | None:
    """The trip count XLA knows of a ``while`` from its attributes text, or ``None``.

    >>> trip_count(', body=%b, backend_config={"known_trip_count":{"n":"8"}}')
    8
    >>> trip_count(", condition=%c, body=%b") is None
    True
    """
    m = _TRIP_COUNT.search(attrs)
    return int(m.group(1)) if m else None


@dataclasses.dataclass(frozen=True)
class LibraryCost:
    """The part of a user line's cost made on a library's line it calls into (the
    innermost frame of the instructions: flax's ``Dense``, optax's update...).

    >>> LibraryCost("/venv/site-packages/flax/linear.py", 287, "__call__", 8.0, 0.0, 96.0).line
    287
    """

    file: str
    line: int
    function: str
    flops: float
    transcendentals: float
    bytes_accessed: float

    def get(self, key: str) -> float:
        """The quantity under XLA's name (``"bytes accessed"``...)."""
        return getattr(self, _FIELDS[KEYS.index(key)])


@dataclasses.dataclass(frozen=True)
class LineCost:
    """What one source line costs in the compiled program.

    ``file``/``line`` are ``None`` for the compiler-made row (instructions with no
    user source: copies, layout changes...). ``instructions`` are the labels of the
    compiled instructions attributed to it (fused instructions by their own label).
    ``library``: the part of the cost made inside the libraries this line calls,
    by library line, biggest flops first (empty where the line makes its ops itself).
    ``iterations``: how its instructions inside loops are counted (each distinct
    :class:`Iterations`, ``once`` among them where some are outside any loop);
    empty when none is in a loop. :attr:`loop_note` says it in words.

    >>> LineCost("m.py", 3, 8.0, 0.0, 96.0, ("add.1",)).bytes_accessed
    96.0
    >>> LineCost("m.py", 3, 64.0, 0.0, 0.0, ("dot.1",), iterations=(Iterations(8),)).loop_note
    '× 8 iterations'
    """

    file: str | None
    line: int | None
    flops: float
    transcendentals: float
    bytes_accessed: float
    instructions: tuple[str, ...]
    library: tuple[LibraryCost, ...] = ()
    iterations: tuple[Iterations, ...] = ()

    @property
    def loop_note(self) -> str:
        """How the row counts loops, in words ("× 8 iterations", "once + × 8
        iterations", "per iteration (trip count unknown)"); ``""`` outside loops."""
        return loop_words(self.iterations)

    @property
    def compiler_made(self) -> bool:
        """Whether this is the row of instructions with no user line."""
        return self.file is None

    def get(self, key: str) -> float:
        """The quantity under XLA's name (``"bytes accessed"``...)."""
        return getattr(self, _FIELDS[KEYS.index(key)])


@dataclasses.dataclass(frozen=True)
class CostByLine:
    """The compiled program's cost, line by line.

    ``lines``: biggest flops first (then bytes), the compiler-made row last; only
    rows that cost something. ``totals``: XLA's module totals
    (``Compiled.cost_analysis()``), which count each loop body once.
    ``notes``: what could not be done exactly. ``loops``: the program's ``while``
    loops; ``loop_extra``: what counting their bodies × their trip counts adds to
    XLA's totals (the rows add up to :attr:`counted_totals`).
    ``modules``: the same cost by module path (:func:`olympus.module_paths.op_module_path`:
    the instructions' name stacks, or for flax ``nnx``, which pushes no scopes, the
    attributes their call stacks call; ``""`` for what no module made), each path's
    own figures under XLA's names: :func:`olympus.module_paths.module_tree` adds
    them up the tree.

    >>> row = LineCost("m.py", 3, 8.0, 0.0, 96.0, ("add.1",))
    >>> c = CostByLine((row,), {"flops": 8.0, "transcendentals": 0.0,
    ...                         "bytes accessed": 96.0})
    >>> c.sums()["flops"], c.check()
    (8.0, ())
    """

    lines: tuple[LineCost, ...]
    totals: dict[str, float]
    notes: tuple[str, ...] = ()
    loops: tuple[Loop, ...] = ()
    loop_extra: dict[str, float] = dataclasses.field(default_factory=dict)
    modules: Mapping[str, Mapping[str, float]] = dataclasses.field(default_factory=dict)
    #: The same cost by the op whose location each part is charged by, ``(stage,
    #: index)``: an instruction of the compiled stage (``"compiled"``), or the
    #: StableHLO op an instruction XLA made anew came from (the ``lowered`` stage's
    #: name): what :mod:`olympus.op_costs` reads an op's cost share from.
    by_source: Mapping[tuple[str, int], Mapping[str, float]] = dataclasses.field(
        default_factory=dict
    )
    #: How each module's instructions inside loops are counted (as
    #: :attr:`LineCost.iterations`), for the modules with some in a loop: a layer
    #: scanned 8 times is one module path whose figures are all 8 iterations'.
    module_iterations: Mapping[str, tuple[Iterations, ...]] = dataclasses.field(
        default_factory=dict
    )
    #: What counted the figures where the compiled program's backend gives no cost
    #: analysis of its own (a CUDA program: ``cost_analysis()`` is ``None``), in a
    #: few words (:data:`olympus.gpu_costs.COUNTED_BY`; the first of :attr:`notes`
    #: says it in full); ``None`` where they are the backend's own (its
    #: ``cost_analysis()``'s totals, the CPU's counts scaled to them on TPU).
    counted_by: str | None = None

    @property
    def counted_totals(self) -> dict[str, float]:
        """XLA's totals with each loop body counted × its trip count (where XLA
        knows it): what the rows add up to. Equal to :attr:`totals` without loops."""
        return {
            k: float(self.totals.get(k, 0.0)) + float(self.loop_extra.get(k, 0.0))
            for k in set(self.totals) | set(self.loop_extra)
        }

    def loops_note(self) -> str | None:
        """Why the rows' sums differ from XLA's totals (loops counted × their trip
        counts), and which loops' figures are per iteration; ``None`` without loops.

        >>> CostByLine((), {"flops": 8.0}, loops=(Loop("while.5", 8),),
        ...            loop_extra={"flops": 56.0}).loops_note()
        "XLA's cost_analysis() counts each loop body once; here each body is counted × its trip count (while.5: 8 iterations): +56 flops over XLA's totals"
        """
        if not self.loops:
            return None
        parts = []
        known = [str(loop) for loop in self.loops if loop.trips is not None]
        extra = [f"{v:+,.0f} {k}" for k, v in self.loop_extra.items() if v]
        if known:
            shown = ", ".join(known[:5]) + (
                f", and {len(known) - 5} more" if len(known) > 5 else ""
            )
            counter = "XLA's cost analysis" if self.counted_by else "XLA's cost_analysis()"
            parts.append(
                f"{counter} counts each loop body once; here each body is "
                f"counted × its trip count ({shown})"
                + (f": {', '.join(extra)} over XLA's totals" if extra else "")
            )
        unknown = [loop.label for loop in self.loops if loop.trips is None]
        if unknown:
            shown = ", ".join(unknown[:5]) + ("..." if len(unknown) > 5 else "")
            parts.append(
                f"XLA does not know the trip count of {shown}: "
                "the figures of its body are per iteration"
            )
        return "; ".join(parts)

    def sums(self) -> dict[str, float]:
        """Each quantity summed over the rows (under XLA's names)."""
        return {k: float(sum(row.get(k) for row in self.lines)) for k in KEYS}

    @property
    def compiler_made(self) -> LineCost | None:
        """The compiler-made row, if it costs anything."""
        return self.lines[-1] if self.lines and self.lines[-1].compiler_made else None

    def check(self, tolerance: float = 0.01) -> tuple[str, ...]:
        """The quantities whose sum over the rows is off XLA's total (plus what
        counting loops × their trip counts adds: :attr:`counted_totals`) by more
        than ``tolerance`` (relative), each said in words; empty when all add up."""
        problems = []
        counted = self.counted_totals
        for key, got in self.sums().items():
            want = float(counted.get(key, 0.0))
            if abs(got - want) > tolerance * max(abs(want), 1.0):
                xla = float(self.totals.get(key, 0.0))
                extra = float(self.loop_extra.get(key, 0.0))
                loops = f" + {extra:g} counting loops × their trip counts" if extra else ""
                problems.append(f"{key}: lines sum to {got:g}, XLA's total is {xla:g}{loops}")
        return tuple(problems)


def cost_by_line(
    compiled,
    *,
    parsed=None,
    frames: str = "user",
    focus=None,
    lowered=None,
    origins=None,
    staged=None,
) -> CostByLine:
    """Flops, transcendentals and bytes accessed of ``compiled`` (an Olympus or JAX
    ``Compiled``) by source line; see the module's docstring for how. ``frames``:
    ``"user"`` (each instruction on its innermost line of the user's own code) or
    ``"innermost"`` (on its innermost line, a library's or not); ``focus``: what is
    the user's code (:func:`olympus.provenance.focus.focus_of`; with ``parsed``,
    the files' own flags are used). ``lowered``: the StableHLO stage of the same
    model as ``parsed`` (its ops' locations in the same tables), where a
    ``convolution`` or ``dot`` XLA made anew, without a location, finds the op it
    came from (``notes`` say which were placed so). ``origins``: where the same
    compile's pass modules were dumped, a function from the labels of instructions
    without a location to the lines they came from, followed back through the passes
    (:func:`olympus.passes.origins`), for those the lowered program does not place.
    What neither places goes to the line it feeds, as ``notes`` say. ``staged``:
    the staged function's ``(file, first line, last line)``, where module paths read
    from call stacks start (:func:`olympus.module_paths.op_module_path`).

    >>> import jax.numpy as jnp, olympus
    >>> c = olympus.jit(jnp.tanh).trace(jnp.ones(32)).lower().compile()
    >>> [row.transcendentals for row in cost_by_line(c).lines]
    [32.0]

    ``parsed``: ``(stage, tables)``, the :func:`~olympus.provenance.hlo.hlo_stage`
    of ``compiled.as_text()`` and its source table (or a provenance model's
    ``compiled`` stage and :meth:`~olympus.provenance.Provenance.source_tables`),
    for a caller that has read it already (the module is then not read again).
    """
    jax_compiled = getattr(compiled, "_jax", compiled)
    text = parsed[0].text if parsed is not None else jax_compiled.as_text()
    if text is None:
        raise ValueError("the compiled program has no HLO text to read")
    totals = _totals(jax_compiled.cost_analysis())
    analyse = jax_compat.hlo_text_cost_analyzer(jax_compat.compiled_client(jax_compiled))
    notes: list[str] = []
    if analyse is None:
        # The backend cannot analyse a module it is handed: count as the CPU does,
        # scaled to the backend's totals below; where it gives no totals either (a
        # CUDA program), the CPU's counts are the figures.
        import jax.extend.backend

        analyse = jax_compat.hlo_text_cost_analyzer(jax.extend.backend.get_backend("cpu"))
        platform = gpu_costs.compiled_platform(jax_compiled)
        if platform in gpu_costs.GPU_PLATFORMS:  # GPU library calls as the ops they compute
            analyse = gpu_costs.cuda_analyzer(analyse)
        if not totals:
            return _counted_here(
                text,
                analyse,
                platform,
                parsed=parsed,
                frames=frames,
                focus=focus,
                lowered=lowered,
                origins=origins,
                staged=staged,
            )
        notes.append(
            "costed per instruction by the CPU's cost analysis (the backend "
            "cannot analyse a module alone), scaled to the backend's totals"
        )
        result = cost_by_line_text(
            text,
            analyse,
            totals=None,
            parsed=parsed,
            frames=frames,
            focus=focus,
            lowered=lowered,
            origins=origins,
            staged=staged,
        )
        return _scaled(result, totals, tuple(notes))
    if not totals:
        totals = _totals(analyse(text))
    return cost_by_line_text(
        text,
        analyse,
        totals=totals,
        notes=tuple(notes),
        parsed=parsed,
        frames=frames,
        focus=focus,
        lowered=lowered,
        origins=origins,
        staged=staged,
    )


def _counted_here(text: str, cpu, platform: str | None, **options) -> CostByLine:
    """The cost by line of a program whose backend gives no cost analysis at all (a
    CUDA program compiled here: ``cost_analysis()`` is ``None``): XLA's HLO cost
    analysis as the CPU backend runs it (``cpu``; for a GPU program, one that counts
    GPU library calls as the ops they compute: :func:`olympus.gpu_costs.cuda_analyzer`)
    applied to the program's own optimized HLO; the totals are that analysis of the
    whole module, which the rows are checked against. Nothing is scaled."""
    said, note = gpu_costs.counted_by(platform)
    analyse = cpu
    notes = [note]
    whole = True
    try:
        totals = {k: 0.0 for k in KEYS} | _totals(analyse(text))
    except Exception as e:  # noqa: BLE001 - any backend's error: the rows are added up instead
        reason = (str(e).strip().splitlines() or [""])[0][:300]
        notes.append(
            f"XLA's cost analysis could not read the whole program ({type(e).__name__}: "
            f"{reason}): its totals are its instructions' costs added up"
        )
        totals, whole = {}, False
    result = cost_by_line_text(text, analyse, totals=totals, notes=tuple(notes), **options)
    if not whole:  # the rows' sums, each loop body once (as XLA's totals count it)
        sums = result.sums()
        totals = {k: sums[k] - float(result.loop_extra.get(k, 0.0)) for k in KEYS}
        result = dataclasses.replace(result, totals=totals)
    return dataclasses.replace(result, counted_by=said)


def _totals(raw) -> dict[str, float]:
    if isinstance(raw, (list, tuple)):  # older releases: one dict per program
        raw = raw[0] if raw else None
    if not raw:
        return {}
    return {k: float(v) for k, v in raw.items() if "{" not in k}


def _scaled(result: CostByLine, totals: Mapping[str, float], notes) -> CostByLine:
    # The CPU's counts in the backend's units: each quantity × the backend's total /
    # the rows' sum with each loop body once (as the totals count it).
    sums = result.sums()
    factor = {}
    for k in KEYS:
        base = sums[k] - result.loop_extra.get(k, 0.0)
        factor[k] = totals.get(k, 0.0) / base if base else 1.0

    def scale(r):
        return dataclasses.replace(r, **{f: r.get(k) * factor[k] for f, k in zip(_FIELDS, KEYS)})

    rows = tuple(
        dataclasses.replace(scale(r), library=tuple(scale(c) for c in r.library))
        for r in result.lines
    )
    modules = {p: {k: v * factor[k] for k, v in a.items()} for p, a in result.modules.items()}
    extra = {k: v * factor[k] for k, v in result.loop_extra.items()}
    by_source = {s: {k: v * factor[k] for k, v in a.items()} for s, a in result.by_source.items()}
    return dataclasses.replace(
        result,
        lines=rows,
        totals=dict(totals) or result.totals,
        notes=tuple(result.notes) + tuple(notes),
        loop_extra=extra,
        modules=modules,
        by_source=by_source,
    )


def cost_by_line_text(
    text: str,
    analyse: Callable[[str], Mapping[str, float]],
    *,
    totals: Mapping[str, float] | None = None,
    notes: tuple[str, ...] = (),
    parsed=None,
    frames: str = "user",
    focus=None,
    lowered=None,
    origins=None,
    staged=None,
) -> CostByLine:
    """:func:`cost_by_line` of an optimized HLO module's text, with ``analyse``
    (HLO module text -> XLA cost analysis dict) costing each instruction;
    ``totals`` default to ``analyse(text)``."""
    if frames not in FRAMES:
        raise ValueError(f"frames={frames!r}: choose 'user' (the default) or 'innermost'.")
    if totals is None:
        totals = _totals(analyse(text))
    return _Attribution(
        text, analyse, dict(totals), list(notes), parsed, frames, focus, lowered, origins, staged
    ).run()


class _Place(NamedTuple):
    """Where a part of an instruction's cost is added (:meth:`_Attribution._place`)."""

    row: list  # the line's [costs, labels, {library line: costs}]
    module: dict[str, float]  # its module path's figures
    row_loops: set[Iterations]  # how the line's instructions are counted
    module_loops: set[Iterations]  # how the module's are
    library_line: tuple[str, int, str] | None  # the library line beneath, if any


class _Attribution:
    def __init__(
        self,
        text,
        analyse,
        totals,
        notes,
        parsed=None,
        frames="user",
        focus=None,
        lowered=None,
        origins=None,
        staged=None,
    ):
        self.lowered = lowered
        self.staged = staged
        self.find_origins = origins
        self.pass_origins: Mapping[str, tuple[str, int]] | None = None
        # Instructions placed on the line they came from through the passes.
        self.traced: dict[str, tuple[str, int]] = {}
        self.text = text
        self.analyse = analyse
        self.totals = totals
        self.notes = notes
        self.frames = frames
        if parsed is None:
            table = SourceTable(focus=focus)
            self.stage = hlo_stage(text, table, name="compiled")
            self.table = table.tables()
        else:
            self.stage, self.table = parsed
            if isinstance(self.table, SourceTable):
                self.table = self.table.tables()
        self.line_of = charged_lines(self.table, frames)  # each location's line, read once
        self.lines = text.split("\n")
        self.ops = self.stage.ops
        comps = self.stage.computations
        self.comp_index = {c.name: i for i, c in enumerate(comps)}
        self.comp_ops: list[list[int]] = [[] for _ in comps]
        for op in self.ops:
            if op.computation is not None:
                self.comp_ops[op.computation].append(op.index)
        self.parsed: dict[int, tuple | None] = {}
        self.shapes: dict[str, str] = {
            op.label: op.types[0] for op in self.ops if op.label and op.types
        }
        self.comp_keys: dict[int, str] = {}
        self.cache: dict[tuple | str, dict[str, float] | None] = {}
        self.own: dict[int, Mapping[str, float] | None] = {}
        self.clean: dict[int, str] = {}
        self.closure: dict[int, tuple[int, ...]] = {}
        self.failed = 0
        # Asynchronous pairs: a start's -done (None: not a start); -dones whose start
        # is elsewhere; what XLA cannot cost (-1), by what it is.
        self.done_of: dict[int, int | None] = {}
        self.lone_dones: list[str] = []
        self.uncosted: dict[str, list[str]] = {}
        self.uncosted_keys: set = set()
        self.names: dict[int, dict[str, int]] = {}  # by computation: name -> op index
        # Why XLA could not cost an instruction alone: the error's first line -> labels.
        self.errors: dict[str, list[str]] = {}
        # (file, line) or None -> [costs, labels]
        self.rows: dict[tuple[str, int] | None, list] = {}
        self.users: dict[int, dict[str, list[int]]] = {}
        self.inherited: dict[str, tuple[str, int]] = {}
        # Instructions XLA made anew, placed on their lowered op's line.
        self.placed: dict[str, tuple[str, int] | None] = {}
        self.origin_cache: dict[tuple, object] = {}
        # Read once each: a name stack's module path, a location's library frames.
        self.module_of: dict = {}  # op_module_path's memo
        self.places: dict[tuple, _Place] = {}  # _place's
        # An op's called computations' keys -> its children's costs, and which have none.
        self.alike_children: dict[tuple, tuple[list, list[bool]]] = {}
        # Bodies' sizes -> the first op's bodies with them and its children's costs
        # (None once keyed, or when one failed).
        self.first_of_sizes: dict[tuple, tuple[tuple[int, ...], tuple | None]] = {}
        self.inner_of: dict[int | None, tuple] = {}
        # module path -> costs; (stage, index) of the op charged by -> costs
        self.modules: dict[str, dict[str, float]] = {}
        self.by_source: dict[tuple[str, int], dict[str, float]] = {}
        # Loops: (file, line) or None -> how its instructions are counted; the
        # ``while``s met; what counting them × their trip counts adds.
        self.row_loops: dict[tuple[str, int] | None, set[Iterations]] = {}
        self.module_loops: dict[str, set[Iterations]] = {}
        self.loops: list[Loop] = []
        self.loop_extra = dict.fromkeys(KEYS, 0.0)

    # -- reading ----------------------------------------------------------

    def _parse(self, i):
        """(name, shape, opcode, operand names, attributes text, calls) of op ``i``."""
        if i in self.parsed:
            return self.parsed[i]
        lines = self.ops[i].lines
        line = self.lines[lines[0] - 1] if lines is not None else ""
        m = _SIMPLE_INSTR.match(line)
        if m is not None:
            inside, rest = m.group(5), m.group(6)
        else:
            m = _INSTR.match(line)
            if m is None:
                self.parsed[i] = None
                return None
            start = m.end()
            end = closing_bracket(line, start - 1, "(", ")")
            inside, rest = line[start : end - 1], line[end:]
        if "/*" in inside:
            inside = _COMMENT.sub("", inside)
        if not inside:
            operands: list[str] = []
        elif inside.count(" ") == inside.count(", ") and "," not in inside.replace(", ", ""):
            operands = inside.replace("%", "").split(", ")  # names alone: most instructions
        else:  # shapes before the names, or spacing of another kind
            operands = [
                part.rsplit(" ", 1)[-1].lstrip("%") for part in inside.split(",") if part.strip()
            ]
        attrs = _strip_attrs(rest)
        calls: list[tuple[str, str]] = []
        if "=" in attrs:  # a computation is named by an attribute
            calls.extend(_CALLS.findall(attrs))
            for kind, names in _CALL_LISTS.findall(attrs):
                calls.extend((kind, n.strip().lstrip("%")) for n in names.split(",") if n.strip())
        found = (m.group(2), m.group(3), m.group(4), operands, attrs, calls)
        self.parsed[i] = found
        return found

    def _clean_line(self, lineno: int) -> str:
        line = self.clean.get(lineno)
        if line is None:
            line = self.clean[lineno] = _strip_attrs(self.lines[lineno - 1])
        return line

    def _called(self, i) -> tuple[int, ...]:
        """The computations op ``i`` needs (called, and what those call), in text order."""
        if i in self.closure:
            return self.closure[i]
        seen: set[int] = set()
        todo = [self.comp_index[name] for _, name in self._parse(i)[5] if name in self.comp_index]
        while todo:
            ci = todo.pop()
            if ci in seen:
                continue
            seen.add(ci)
            for j in self.comp_ops[ci]:
                p = self._parse(j)
                if p is not None:
                    todo.extend(self.comp_index[n] for _, n in p[5] if n in self.comp_index)
        out = self.closure[i] = tuple(sorted(seen))
        return out

    def _bodies(self, i) -> list[int]:
        """The computations op ``i`` runs as its own body (not a reduction's or
        sort's scalar function), by index."""
        parsed = self._parse(i)
        if parsed is None or not parsed[5]:  # most instructions call nothing
            return []
        opcode = parsed[2]
        return [
            self.comp_index[name]
            for kind, name in parsed[5]
            if (kind != "to_apply" or opcode == "call") and name in self.comp_index
        ]

    def _children(self, i) -> list[int]:
        """The instructions op ``i``'s cost is split among: those of its bodies
        (:meth:`_bodies`)."""
        return [
            j for ci in self._bodies(i) for j in self.comp_ops[ci] if self.ops[j].name not in _FREE
        ]

    # -- costing ----------------------------------------------------------

    def _module(self, i) -> str | None:
        """An HLO module holding op ``i`` alone, operands as parameters; for the
        ``-start`` of an asynchronous pair, the start and its ``-done``
        (:meth:`_done_of`): the pair's cost is the start's."""
        parsed = self._parse(i)
        if parsed is None:
            return None
        _name, shape, opcode, operands, attrs, _calls = parsed
        done = self._done_of(i)
        done_parsed = self._parse(done) if done is not None else None
        params: dict[str, int] = {}
        for o in operands:
            if o not in self.shapes:
                return None
            params.setdefault(o, len(params))
        out = ["HloModule m", ""]
        called = self._called(i)
        if done is not None:
            called = tuple(sorted(set(called) | set(self._called(done))))
        for ci in called:
            first, last = self.stage.computations[ci].lines
            header = self.lines[first - 1]
            if header.startswith("ENTRY "):
                header = header[len("ENTRY ") :]
            out.append(header)
            out.extend(self._clean_line(n) for n in range(first + 1, last))
            out.append("}")
            out.append("")
        sig = ", ".join(f"p{k}: {self.shapes[o]}" for o, k in params.items())
        result = done_parsed[1] if done_parsed is not None else shape
        out.append(f"ENTRY %e ({sig}) -> {result} {{")
        out.extend(f"  %p{k} = {self.shapes[o]} parameter({k})" for o, k in params.items())
        args = ", ".join(f"%p{params[o]}" for o in operands)
        if done_parsed is None:
            out.append(f"  ROOT %r = {shape} {opcode}({args}){attrs}")
        else:
            out.append(f"  %r = {shape} {opcode}({args}){attrs}")
            out.append(f"  ROOT %d = {result} {done_parsed[2]}(%r){done_parsed[4]}")
        out.append("}")
        return "\n".join(out) + "\n"

    def _done_of(self, i) -> int | None:
        """The ``-done`` that ends op ``i``, the ``-start`` of an asynchronous pair
        (``all-reduce-start``, ``async-start``, ``send``...), in the same computation
        and taking it alone; ``None`` for any other op. XLA's analysis counts the
        bytes a ``-done`` reads and writes; a module of a ``-done`` alone crashes it
        (:func:`olympus.jax_compat.hlo_text_cost_analyzer`): the pair is costed
        together, on the start's line."""
        if i in self.done_of:
            return self.done_of[i]
        found = None
        parsed = self._parse(i)
        ci = self.ops[i].computation
        if parsed is not None and ci is not None:
            name, opcode = parsed[0], parsed[2]
            if opcode.endswith("-start") or opcode in ("send", "recv"):
                want = opcode.removesuffix("-start") + "-done"
                dones = [
                    u
                    for u in self._users(ci).get(name, ())
                    if (p := self._parse(u)) is not None and p[2] == want and p[3] == [name]
                ]
                if len(dones) == 1:
                    found = dones[0]
        self.done_of[i] = found
        return found

    def _cost(self, i) -> Mapping[str, float] | None:
        """XLA's cost of op ``i`` alone, or ``None`` if XLA could not read it."""
        found: dict[str, float] | None
        if i in self.own:
            return self.own[i]
        if self.ops[i].name in _FREE or self.ops[i].name.endswith("-done"):
            # The second half of an asynchronous pair (``fusion-done``, ``all-gather-done``)
            # is no module alone (XLA crashes on one: seen on a GPU program's loop); its
            # work is its ``-start``'s, costed with it (:meth:`_done_of`). One whose
            # start is not beside it (in another computation) is counted as nothing.
            if self.ops[i].name.endswith("-done") and not self._started_here(i):
                self.lone_dones.append(self.ops[i].label or "?")
            self.own[i] = _NO_COST
            return _NO_COST
        key = self._key(i)
        if key in self.cache:
            found = self.cache[key]
            if key in self.uncosted_keys:
                self._uncosted(i)
        else:
            module = self._module(i)
            found = None
            if module is not None:
                try:
                    raw = self.analyse(module)
                    found = {k: float(raw.get(k, 0.0)) for k in KEYS}
                    if min(found.values()) < 0:
                        # XLA counts -1 for what it cannot cost (a custom-call it does
                        # not know): counted as nothing, and the notes say so.
                        found = {k: max(v, 0.0) for k, v in found.items()}
                        self.uncosted_keys.add(key)
                        self._uncosted(i)
                except Exception as e:  # noqa: BLE001 - any backend's error: put in the notes
                    reason = (str(e).strip().splitlines() or [""])[0][:300]
                    label = self.ops[i].label or "?"
                    self.errors.setdefault(f"{type(e).__name__}: {reason}", []).append(label)
                    found = None
            self.cache[key] = found
        self.own[i] = found
        return found

    def _started_here(self, i) -> bool:
        """Whether ``-done`` op ``i`` ends a ``-start`` of its own computation whose
        cost holds it (:meth:`_done_of`)."""
        parsed = self._parse(i)
        if parsed is None or len(parsed[3]) != 1:
            return False
        ci = self.ops[i].computation
        if ci is None:
            return False
        names = self.names.get(ci)
        if names is None:
            names = self.names[ci] = {
                p[0]: j for j in self.comp_ops[ci] if (p := self._parse(j)) is not None
            }
        start = names.get(parsed[3][0])
        return start is not None and self._done_of(start) == i

    def _uncosted(self, i) -> None:
        """Notes op ``i`` as one XLA's analysis cannot cost (by its custom-call
        target where it names one, else by its opcode)."""
        parsed = self._parse(i)
        attrs = parsed[4] if parsed is not None else ""
        target = _CUSTOM_TARGET.search(attrs)
        what = f"custom-call {target.group(1)}" if target else self.ops[i].name
        self.uncosted.setdefault(what, []).append(self.ops[i].label or "?")

    def _key(self, i) -> tuple | str:
        """What op ``i``'s cost depends on, names aside: its shape, opcode, operands'
        shapes (and which are the same operand), attributes and the computations
        it calls by their own keys."""
        parsed = self._parse(i)
        if parsed is None:
            return f"?{i}"
        _name, shape, opcode, operands, attrs, calls = parsed
        same = () if len(set(operands)) == len(operands) else tuple(map(operands.index, operands))
        comps = tuple(
            self._comp_key(self.comp_index[n]) if n in self.comp_index else n for _, n in calls
        )
        if "%" in attrs:
            attrs = _NAME.sub("%", attrs)
        done = self._done_of(i)
        key = (shape, opcode, tuple(map(self.shapes.get, operands)), same, attrs, comps)
        return key if done is None else (*key, self._key(done))

    def _comp_key(self, ci) -> str:
        found = self.comp_keys.get(ci)
        if found is None:
            self.comp_keys[ci] = f"?{ci}"  # a computation that calls itself
            first, last = self.stage.computations[ci].lines
            text = "\n".join(self._clean_line(n) for n in range(first + 1, last))
            if "constant(" in text:  # a literal's value costs nothing: its shape does
                text = _LITERAL.sub("constant()", text)
            names: dict[str, str] = {}
            body = _NAME.sub(lambda m: names.setdefault(m.group(), f"%{len(names)}"), text)
            calls = ";".join(
                self._comp_key(self.comp_index[n[1:]]) for n in names if n[1:] in self.comp_index
            )
            found = self.comp_keys[ci] = f"{{{body}}}[{calls}]"
        return found

    # -- attributing ------------------------------------------------------

    def _where(self, i):
        return self.line_of(self.ops[i].location)

    def _users(self, ci) -> dict[str, list[int]]:
        """Instruction name -> the instructions of computation ``ci`` that use it."""
        found = self.users.get(ci)
        if found is None:
            found = self.users[ci] = {}
            for j in self.comp_ops[ci]:
                p = self._parse(j)
                if p is not None:
                    for o in dict.fromkeys(p[3]):
                        found.setdefault(o, []).append(j)
        return found

    def _loops_own(self, i) -> bool:
        """Whether op ``i`` carries just the metadata of the loop (or call) whose
        body holds it: what XLA gives an instruction it made there. Not so in a
        fusion, run at once or asynchronously (``fusion-start``: XLA:GPU from jaxlib
        0.12 runs an all-reduce so), which takes its metadata from what it fuses."""
        op = self.ops[i]
        ci = op.computation
        caller = self.stage.computations[ci].caller if ci is not None else None
        if caller is None or self.ops[caller].name in ("fusion", "fusion-start"):
            return False
        outer = self.ops[caller]
        return op.location == outer.location and op.name_stack == outer.name_stack

    def _fed(self, i):
        """The nearest instruction op ``i`` feeds (in its computation) that has a
        line, or ``None``."""
        seen = {i}
        while True:
            ci = self.ops[i].computation
            if ci is None:
                return None
            users = self._users(ci)
            todo = [i]
            while todo:
                nxt = []
                for j in todo:
                    p = self._parse(j)
                    for u in users.get(p[0], ()) if p is not None else ():
                        if u in seen:
                            continue
                        seen.add(u)
                        if self._where(u) is not None and not self._loops_own(u):
                            return u
                        nxt.append(u)
                todo = nxt
            # Nothing in its computation has a line: go on from what calls it.
            i = self.stage.computations[ci].caller
            if i is None or i in seen:
                return None
            seen.add(i)
            if self._where(i) is not None:
                return i

    def _origin(self, i):
        """The op of the lowered program that a ``convolution`` or ``dot`` XLA made
        anew (no source location) comes from: the only one of the lowered program's
        ops of that kind whose result has the same dimensions (in any order: XLA
        changes layouts), or ops all charged to one line; ``None`` when there is no
        lowered program or no single answer."""
        if self.lowered is None:
            return None
        op = self.ops[i]
        kind = _ORIGIN_KINDS.get(op.name)
        if kind is None or not op.types:
            return None
        dims = _dims(op.types[0])
        if dims is None:
            return None
        found = self.origin_cache.get((kind, dims))
        if found is None:
            candidates = [
                c
                for c in self.lowered.ops
                if c.name == kind
                and c.location is not None
                and c.types
                and _dims(c.types[0]) == dims
            ]
            places = {line for c in candidates if (line := self.line_of(c.location)) is not None}
            found = self.origin_cache[kind, dims] = candidates[0] if len(places) == 1 else False
        return found or None

    def _traced(self, i) -> tuple[str, int] | None:
        """The line instruction ``i`` (without a location) came from, followed back
        through the dumped passes (read once, for every such instruction, at the
        first ask); ``None`` without the passes' modules or a single line."""
        if self.find_origins is None:
            return None
        if self.pass_origins is None:
            labels = [
                op.label
                for op in self.ops
                if op.label and op.location is None and op.name != "parameter"
            ]
            self.pass_origins = dict(self.find_origins(labels))
        return self.pass_origins.get(self.ops[i].label or "")

    def _add(
        self, i, amounts: Mapping[str, float], *, label: bool = True, loop: Iterations = _ONCE
    ):
        source = self.ops[i]  # the op whose location it is charged by
        where = self._where(i)
        costs = any(amounts.values())
        if (amounts.get("flops") or amounts.get("transcendentals")) and (
            where is None or self._loops_own(i)
        ):
            origin = self._origin(i) if where is None else None
            traced = self._traced(i) if where is None and origin is None else None
            fed = self._fed(i) if origin is None and traced is None else None
            if origin is not None:
                source = origin
                where = self.line_of(origin.location)
                self.placed.setdefault(self.ops[i].label or "?", where)
            elif traced is not None:
                where = traced
                self.traced.setdefault(self.ops[i].label or "?", where)
            elif fed is not None:
                source, where = self.ops[fed], self._where(fed)
                self.inherited.setdefault(self.ops[i].label or "?", where)
        row, module, loops_of_row, loops_of_module, part_key = self._place(where, source)
        if label and self.ops[i].label:
            row[1].append(self.ops[i].label)
        if not costs:
            return
        at = (source.stage, source.index)
        mine = self.by_source.get(at)
        if mine is None:
            mine = self.by_source[at] = dict.fromkeys(KEYS, 0.0)
        total = row[0]
        for k, v in amounts.items():
            module[k] += v
            mine[k] += v
            total[k] += v
        loops_of_row.add(loop)
        loops_of_module.add(loop)
        if part_key is not None:
            part = row[2].get(part_key)
            if part is None:
                part = row[2][part_key] = dict.fromkeys(KEYS, 0.0)
            for k, v in amounts.items():
                part[k] += v

    def _place(self, where, source) -> _Place:
        """What a part charged to line ``where`` by op ``source`` adds to, worked
        out once for the ops alike (same line, name stack and location)."""
        key = (where, source.name_stack, source.location)
        found = self.places.get(key)
        if found is not None:
            return found
        path = op_module_path(
            source.name_stack, source.location, self.table, memo=self.module_of, staged=self.staged
        )
        row = self.rows.get(where)
        if row is None:
            row = self.rows[where] = [dict.fromkeys(KEYS, 0.0), [], {}]
        module = self.modules.get(path)
        if module is None:
            module = self.modules[path] = dict.fromkeys(KEYS, 0.0)
        part_key = None
        if self.frames == "user" and where is not None:
            inner = self.inner_of.get(source.location)
            if inner is None:
                inner = self.inner_of[source.location] = library_frames(self.table, source.location)
            if inner:
                frame = inner[0]
                part_key = (self.table.files[frame.file], frame.line, frame.function)
        found = self.places[key] = _Place(
            row,
            module,
            self.row_loops.setdefault(where, set()),
            self.module_loops.setdefault(path, set()),
            part_key,
        )
        return found

    def _loop(self, i, loop: Iterations) -> tuple[Iterations, dict[int, int]] | None:
        """For a ``while`` op ``i`` run ``loop`` times: how its children are counted
        and, by computation, how many times each runs (body ``n``, condition
        ``n + 1`` for a trip count ``n`` XLA knows; once each, per iteration, where
        it does not); ``None`` for any other op."""
        parsed = self._parse(i)
        if parsed is None or parsed[2] != "while":
            return None
        trips = trip_count(parsed[4])
        self.loops.append(Loop(self.ops[i].label or "?", trips, loop))
        times = {}
        for kind, name in parsed[5]:
            ci = self.comp_index.get(name)
            if ci is not None and kind in ("body", "condition"):
                extra = 1 if kind == "condition" else 0
                times[ci] = 1 if trips is None else trips + extra
        return loop.inside(trips), times

    def _weights(self, i, children: list[int]) -> tuple[list[Mapping[str, float]], list[bool]]:
        """The cost of each of op ``i``'s ``children`` alone (what its cost is
        shared by), and whether each has no children of its own. Ops that run
        computations alike (the same key: the same instructions, names and
        constants' values aside, as a block repeated in a model makes them) have
        children alike, position by position: they are worked out for the first
        such op and read for the others."""
        bodies = tuple(self._bodies(i))
        # A body's key reads all its text: it is made only once a second op runs
        # bodies of the same sizes (a program's one big fusion is never keyed).
        sizes = tuple(len(self.comp_ops[ci]) for ci in bodies)
        first = self.first_of_sizes.get(sizes)
        calls_key = None
        if first is not None:
            if first[1] is not None:  # the first op of these sizes, keyed now
                self.alike_children[tuple(map(self._comp_key, first[0]))] = first[1]
                self.first_of_sizes[sizes] = (first[0], None)
            calls_key = tuple(map(self._comp_key, bodies))
            found = self.alike_children.get(calls_key)
            if found is not None and len(found[0]) == len(children):
                return found
        costs = [self._cost(j) for j in children]
        out = ([c or _NO_COST for c in costs], [not self._children(j) for j in children])
        kept = None if None in costs else out  # a failure is noted for each
        if first is None:
            self.first_of_sizes[sizes] = (bodies, kept)
        elif kept is not None:
            self.alike_children[calls_key] = kept  # type: ignore[index]
        return out

    def _spread(self, i, amounts: dict[str, float], loop: Iterations = _ONCE):
        children = self._children(i)
        if not children:
            self._add(i, amounts, loop=loop)
            return
        # Children alike share one cost (one mapping, :meth:`_cost`): each distinct
        # cost's share is worked out once, and the shares are only read.
        weights, leaves = self._weights(i, children)
        alike: dict[int, list] = {}  # id of a cost -> [cost, how many children]
        for w in weights:
            held = alike.get(id(w))
            if held is None:
                alike[id(w)] = [w, 1]
            else:
                held[1] += 1
        totals = {k: sum(w[k] * n for w, n in alike.values()) for k in KEYS}
        share = {
            ident: {k: amounts[k] * w[k] / totals[k] if totals[k] > 0 else 0.0 for k in KEYS}
            for ident, (w, _) in alike.items()
        }
        kept = {k: 0.0 if totals[k] > 0 else amounts[k] for k in KEYS}
        self._add(i, kept, label=any(kept.values()), loop=loop)
        inner = self._loop(i, loop)
        for j, w, leaf in zip(children, weights, leaves):
            mine = share[id(w)]
            if inner is None:
                if leaf:  # what _spread would do with it: no children to share with
                    self._add(j, mine, loop=loop)
                else:
                    self._spread(j, mine, loop)
                continue
            times = inner[1].get(self.ops[j].computation, 1)  # type: ignore[arg-type]
            for k in KEYS:
                self.loop_extra[k] += mine[k] * (times - 1)
            self._spread(j, {k: v * times for k, v in mine.items()}, inner[0])

    def run(self) -> CostByLine:
        entry = next((ci for ci, c in enumerate(self.stage.computations) if c.entry), None)
        if entry is None:
            raise ValueError("no ENTRY computation in the HLO text")
        top = [j for j in self.comp_ops[entry] if self.ops[j].name not in _FREE]
        if len(top) == 1 and self.totals:
            # The module's cost is its entry's instructions': this one's is the total.
            costs: dict[int, Mapping[str, float] | None] = {
                top[0]: {k: float(self.totals.get(k, 0.0)) for k in KEYS}
            }
        else:
            costs = {j: self._cost(j) for j in top}
        failed = [j for j, c in costs.items() if c is None]
        if failed:
            known = {k: sum(c[k] for c in costs.values() if c is not None) for k in KEYS}
            left = {k: max(self.totals.get(k, 0.0) - known[k], 0.0) / len(failed) for k in KEYS}
            for j in failed:
                costs[j] = dict(left)
            self.notes.append(
                f"{len(failed)} instruction(s) XLA could not cost alone "
                f"({', '.join(self.ops[j].label or '?' for j in failed[:5])}"
                f"{'...' if len(failed) > 5 else ''}): they share what the others "
                "leave of the totals"
            )
        for j in top:
            self._spread(j, dict(costs[j] or {}))  # each filled in above
        for what, labels in self.uncosted.items():
            self.notes.append(
                f"XLA's cost analysis does not know what {what} computes: "
                f"{_some(labels)} counted as nothing (XLA counts -1)"
            )
        if self.lone_dones:
            self.notes.append(
                f"{_some(self.lone_dones)}: asynchronous -done instruction(s) not costed "
                "with their -start (it is in another computation, or an -update is between "
                "them), counted as nothing (XLA's totals count the bytes each reads and writes)"
            )
        for reason, labels in self.errors.items():
            self.notes.append(
                f"XLA's cost analysis failed on {len(labels)} instruction(s) alone "
                f"({', '.join(labels[:5])}{'...' if len(labels) > 5 else ''}): {reason}"
            )
        by_line: dict[tuple[str, int], list[str]] = {}
        for label, fed_line in self.inherited.items():
            by_line.setdefault(fed_line, []).append(label)
        for (path, lineno), labels in by_line.items():
            self.notes.append(
                f"{_some(labels)} ha{'s' if len(labels) == 1 else 've'} no source location "
                f"of {'its' if len(labels) == 1 else 'their'} own but compute"
                f"{'s' if len(labels) == 1 else ''}: counted on line {lineno} of {path}, "
                f"which {'it feeds' if len(labels) == 1 else 'they feed'}"
            )
        placed: dict[tuple[str, int] | None, list[str]] = {}
        for label, origin_line in self.placed.items():
            placed.setdefault(origin_line, []).append(label)
        for origin_line, labels in placed.items():
            spot = (
                "no line" if origin_line is None else f"line {origin_line[1]} of {origin_line[0]}"
            )
            self.notes.append(
                f"{_some(labels)}: made by XLA with no source location; counted on {spot}, "
                "the line of the only op of the lowered program of the same kind and shape"
            )
        traced: dict[tuple[str, int], list[str]] = {}
        for label, origin_line in self.traced.items():
            traced.setdefault(origin_line, []).append(label)
        for (path, lineno), labels in traced.items():
            self.notes.append(
                f"{_some(labels)}: made by XLA with no source location; counted on line "
                f"{lineno} of {path}, followed back through XLA's passes to the "
                f"instructions {'it was' if len(labels) == 1 else 'they were'} made from"
            )
        rows = []
        for where, (amounts, labels, inside) in self.rows.items():
            if not any(amounts.values()):
                continue
            file, line = where if where is not None else (None, None)
            library = sorted(
                (
                    LibraryCost(
                        path, lineno, fn, a["flops"], a["transcendentals"], a["bytes accessed"]
                    )
                    for (path, lineno, fn), a in inside.items()
                    if any(a.values())
                ),
                key=lambda c: (-c.flops, -c.bytes_accessed, -c.transcendentals, c.file, c.line),
            )
            rows.append(
                LineCost(
                    file,
                    line,
                    amounts["flops"],
                    amounts["transcendentals"],
                    amounts["bytes accessed"],
                    tuple(dict.fromkeys(labels)),
                    tuple(library),
                    _iterations(self.row_loops.get(where, set())),
                )
            )
        rows.sort(
            key=lambda r: (
                r.compiler_made,
                -r.flops,
                -r.bytes_accessed,
                -r.transcendentals,
                r.file or "",
                r.line or 0,
            )
        )
        modules = {p: a for p, a in self.modules.items() if any(a.values())}
        looped = {p: _iterations(self.module_loops.get(p, set())) for p in modules}
        return CostByLine(
            tuple(rows),
            dict(self.totals),
            tuple(self.notes),
            tuple(self.loops),
            {k: v for k, v in self.loop_extra.items() if v},
            modules,
            self.by_source,
            {p: found for p, found in looped.items() if found},
        )


def _iterations(found: set[Iterations]) -> tuple[Iterations, ...]:
    """A row's :attr:`LineCost.iterations`: empty when all its instructions run once."""
    return () if found <= {_ONCE} else tuple(sorted(found))


#: Instructions XLA may make anew without metadata, and the lowered op each comes from.
_ORIGIN_KINDS = {"convolution": "stablehlo.convolution", "dot": "stablehlo.dot_general"}
_DIMS = re.compile(r"\d+")


def _dims(type_text: str) -> tuple[int, ...] | None:
    """The dimensions of an array type, sorted (``f32[16,3,3,32]{3,2,1,0}`` and
    ``tensor<3x3x16x32xf32>`` alike), or ``None`` for a tuple.

    >>> _dims("f32[16,3,3,32]{3,2,1,0}") == _dims("tensor<3x3x16x32xf32>")
    True
    """
    if type_text.startswith("("):
        return None
    if type_text.startswith("tensor<"):
        body = type_text[len("tensor<") :].rstrip(">")
        parts = body.split("x")[:-1]  # the last is the element type
        return tuple(sorted(int(p) for p in parts if p.isdigit()))
    shape = type_text.split("[", 1)[1].split("]", 1)[0] if "[" in type_text else ""
    return tuple(sorted(int(d) for d in _DIMS.findall(shape)))


def _some(labels: list[str]) -> str:
    """Labels said briefly: the first five and how many more."""
    more = f" and {len(labels) - 5} more" if len(labels) > 5 else ""
    return ", ".join(labels[:5]) + more


def _strip_attrs(text: str) -> str:
    """``text`` without its ``metadata={...}`` and ``control-predecessors={...}``
    (they name what a module of one instruction does not hold)."""
    if not text:
        return ""
    # Most instructions: their metadata last, nothing nested in it.
    at = text.find(_METADATA_ATTR)
    if (
        at >= 0
        and text.endswith("}")
        and text.find("{", at + len(_METADATA_ATTR)) < 0
        and text.find("}", at) == len(text) - 1
        and _DROPPED_ATTRS[1] not in text
    ):
        return text[:at]
    text = _METADATA.sub("", text)
    for attr in _DROPPED_ATTRS:
        at = text.find(attr)
        while at >= 0:
            brace = at + len(attr) - 1
            end = closing_bracket(text, brace, "{", "}")
            text = text[:at] + text[end:]
            at = text.find(attr, at)
    return text
