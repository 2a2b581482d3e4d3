"""XLA's pass pipeline, pass by pass: what each pass that changed the module made of it.

:func:`pass_pipeline` compiles a ``Lowered`` once more with XLA's per-pass dumps
turned on as compiler options of that one compile (``xla_dump_to`` a private
temporary folder, ``xla_dump_hlo_pass_re``, ``xla_dump_hlo_as_text``), never
through the process's ``XLA_FLAGS``, and reads the dump into a
:class:`PassPipeline`; the folder is removed afterwards, even when the compile
fails. :func:`read_dump` reads such a folder.

XLA writes the module as it enters each pipeline (``after_pipeline-start``) and
after each pass that changed it, in the order they ran (a pass that changed
nothing writes nothing), each to a file named
``module_N.NAME.STEP.PIPELINE.after_PASS.before_NEXT.txt``; some passes write it
at points of their own work too (``module_N.NAME.STEP.PASS.POINT.txt``). With a
pass filter it also writes the module just before each pass the filter keeps
(named after the pass before it), so :meth:`PassPipeline.changed` counts only the
passes the filter keeps. Each platform's compiler runs pipelines of its own, some
inside a pass of another (TPU's ``tpu-spmd-partitioning`` runs ``spmd-cleanup``):
:meth:`PassPipeline.credits` puts each change down to the pass that made it, as
the dumps' names say (:mod:`olympus.dump_names`).

>>> lowered = olympus.jit(lambda x: jnp.tanh(x * 2.0) + 1.0).trace(np.ones(4, np.float32)).lower()
>>> pipeline = pass_pipeline(lowered)
>>> pipeline.steps[0].after, pipeline.before.count("parameter(") >= 1
('pipeline-start', True)
>>> any(step.after == "fusion" for step in pipeline.changed())
True
"""

from __future__ import annotations

import contextlib
import dataclasses
import functools
import itertools
import os
import re
import tempfile
from collections.abc import Callable, Iterable, Iterator, Mapping, Sequence
from typing import Any

from olympus.dump_follow import DumpFollower, ModuleReader
from olympus.dump_names import PIPELINE_START, enclosing, read_name
from olympus.op_instructions import KeyIndex, OpKey, line_stack
from olympus.provenance.focus import focus_of
from olympus.provenance.hlo import ModuleInstructions, hlo_instructions, instruction_count
from olympus.provenance.sources import SourceTable, charged_lines

__all__ = [
    "PassStep",
    "Credit",
    "PassPipeline",
    "pass_pipeline",
    "dumped",
    "dumped_compile",
    "dump_parent",
    "NO_PASS",
    "read_dump",
    "instruction_count",
    "Carrier",
    "JourneyEvent",
    "Journey",
    "Instruction",
    "JourneyIndex",
    "KeyJourneys",
    "journey_index",
    "journey_reader",
    "journey",
    "journeys",
    "origins",
]

# module_0006.jit_f.0014.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt,
# module_0000.jit_f.cl_933746096.0057.copy-insertion.after_removing_unnecessary_copies.txt:
# the module, and the rest that olympus.dump_names reads.
_STEP_FILE = re.compile(r"^module_(\d+)\.(.+)\.(\d{4}\..+)\.txt$")
#: A pass filter no pass matches: the dump holds the module before and after
#: optimization, and the analyses of the optimized program, but no pass's module.
NO_PASS = "^$"


@dataclasses.dataclass(frozen=True)
class PassStep:
    """The module after one pass that changed it (or as a pipeline got it, or as a
    pass dumped it at a point of its own work: ``point``)."""

    index: int  # the order in which XLA ran it (its dump's step number)
    pipeline: str  # the pipeline the pass runs in, e.g. "simplification" ("": none known)
    after: str  # the pass, or "pipeline-start" for the module a pipeline got
    before: str | None  # the pass that runs next (None for a point inside a pass)
    text: str  # the HLO module's text after it
    instructions: int  # how many instructions that text holds
    #: Where inside the pass ``after`` it dumped this module ("after removing
    #: unnecessary copies"); None for a module dumped between passes.
    point: str | None = None
    #: ``(pipeline, pass)``: the pass of an outer pipeline this step was dumped
    #: inside, as that pipeline's next dump names it
    #: (:func:`olympus.dump_names.enclosing`); None where none does.
    within: tuple[str, str] | None = None

    @property
    def is_pipeline_start(self) -> bool:
        return self.after == PIPELINE_START

    @property
    def begins(self) -> bool:
        """Whether this is the module as a pipeline or a pass began: a pipeline's
        start, or a point ``before ...`` inside a pass. What changed it ran before."""
        return self.is_pipeline_start or (self.point or "").startswith("before ")

    @property
    def credit(self) -> str | None:
        """The pass this step's change (from the step before) is due to: the pass it
        was dumped after or inside; for the module as a pipeline or a pass began
        (:attr:`begins`), the outer pass that ran it (``within``), or None where no
        dump names one.

        >>> PassStep(16, "spmd-cleanup", "pipeline-start", "dce", "", 0,
        ...          within=("xla-partitioner", "tpu-spmd-partitioning")).credit
        'tpu-spmd-partitioning'
        """
        if self.begins:
            return self.within[1] if self.within is not None else None
        return self.after

    @property
    def label(self) -> str:
        """The pass as a pass table names this step: with its point inside the
        pass where it has one (``copy-insertion (after removing unnecessary
        copies)``)."""
        return self.after if self.point is None else f"{self.after} ({self.point})"


@dataclasses.dataclass(frozen=True)
class Credit:
    """Who a step's change is put down to, as a pass table shows it: ``kind`` is
    ``start`` (a pipeline's start that changed nothing), ``changed`` (a change due
    to the pass ``name`` of ``pipeline``), ``unchanged`` (a point inside a pass
    where nothing changed yet) or ``context`` (the module before a pass the filter
    keeps: passes outside the filter changed it); ``who`` names the doer in a
    line's journey."""

    kind: str
    pipeline: str
    name: str
    who: str


class ModuleReading:
    """HLO modules read with one source table (:func:`hlo_instructions`), each
    distinct text once, with what its readers keep between modules (``memo``: the
    lines read, each location's stack, the journeys' instructions made; ``charged``:
    each location's line): most of a module is the same from one pass to the next.
    A pipeline's are :meth:`PassPipeline.reading`.

    >>> reading = ModuleReading(SourceTable())
    >>> text = "HloModule m\\nENTRY %e () -> f32[] {\\n  ROOT %c = f32[] constant(1)\\n}"
    >>> [i.name for i in reading.instructions(text).instructions]
    ['constant']
    >>> reading.instructions(text) is reading.instructions(text)
    True
    """

    def __init__(self, table: SourceTable):
        self.table = table
        #: The line a location is charged to: its innermost of the user's own code.
        self.charged = charged_lines(table)
        self.memo: dict = {}
        self._modules: dict[str, ModuleInstructions] = {}
        self._labels: dict[str, dict[str, Any]] = {}
        self._journeys: dict[str, tuple[Instruction, ...]] = {}

    def instructions(self, text: str) -> ModuleInstructions:
        """The instructions of the module ``text``, in text order, and the fusion
        that holds each."""
        found = self._modules.get(text)
        if found is None:
            found = self._modules[text] = hlo_instructions(text, self.table, self.memo)
        return found

    def located(self, text: str) -> tuple[Instruction, ...]:
        """The instructions of the module ``text`` that have a source location, as
        journeys read them (:class:`Instruction`), in text order."""
        found = self._journeys.get(text)
        if found is None:
            found = self._journeys[text] = _read_instructions(text, self)
        return found

    def by_label(self, text: str) -> dict[str, Any]:
        """The instructions of the module ``text`` by label."""
        found = self._labels.get(text)
        if found is None:
            found = self._labels[text] = {i.label: i for i in self.instructions(text).instructions}
        return found


@dataclasses.dataclass(frozen=True)
class PassPipeline:
    """Every step of one compile's pass pipeline, in order, with the module before
    the first pass (``before``) and after the last (``after``)."""

    module: str
    before: str
    after: str
    steps: tuple[PassStep, ...]
    pass_re: str = ".*"
    #: What the readers of its modules keep between them, so that each module is
    #: read once: its readings for each focus (:meth:`reading`: the journeys and
    #: the origins share them), a view's line numbering; made while the compile
    #: wrote the dump where a :class:`~olympus.dump_follow.DumpFollower` read it.
    memo: dict = dataclasses.field(default_factory=dict, compare=False, repr=False)

    def reading(self, focus=None) -> ModuleReading:
        """Its modules' instructions, each distinct text read once, with the user's
        own code as ``focus`` says (:func:`olympus.provenance.focus.focus_of`);
        the same object for the same focus.

        >>> p = PassPipeline("m", "HloModule m", "HloModule m", ())
        >>> p.reading() is p.reading(), p.reading().instructions("HloModule m").instructions
        (True, [])
        """
        return reading_in(self.memo, focus)

    def changed(self) -> tuple[PassStep, ...]:
        """The steps of passes that changed the module: not a pipeline's start (nor
        a pass's point before its work), nor the module as it was before a pass the
        filter keeps."""
        keep = re.compile(self.pass_re)
        return tuple(s for s in self.steps if not s.begins and keep.search(s.after))

    def credits(self) -> tuple[Credit, ...]:
        """Who each step's change is due to (:class:`Credit`, one per step).

        A pipeline's start that changed the module was changed by the outer pass
        the pipeline runs inside (TPU's ``tpu-spmd-partitioning`` partitions the
        program, then runs ``spmd-cleanup``), or, where no dump names one, by
        work outside XLA's pass pipelines (TPU's compiler does some); with a pass
        filter, by passes outside it.

        >>> steps = (PassStep(0, "p", "pipeline-start", "a", "m0", 1),
        ...          PassStep(1, "q", "pipeline-start", "b", "m1", 1, within=("p", "a")))
        >>> [(c.kind, c.pipeline, c.name) for c in PassPipeline("m", "m0", "m1", steps).credits()]
        [('start', 'p', 'pipeline-start'), ('changed', 'p', 'a')]
        """
        keep = re.compile(self.pass_re)
        out = []
        previous = self.before
        for s in self.steps:
            same, previous = s.text == previous, s.text
            credit = s.credit
            if same and (s.begins or s.point is not None):
                kind = "start" if s.is_pipeline_start else "unchanged"
                out.append(Credit(kind, s.pipeline, s.label, s.label))
            elif credit is not None and keep.search(credit):
                where = s.within[0] if s.begins and s.within is not None else s.pipeline
                name = credit if s.begins else s.label
                out.append(Credit("changed", where, name, name))
            elif credit is None and self.pass_re == ".*":
                what = s.pipeline if s.is_pipeline_start else s.after
                who = f"work outside XLA's pass pipelines, before {what}"
                out.append(Credit("changed", "", who, who))
            else:
                outside = f"passes outside the filter, before {s.before or s.after}"
                out.append(Credit("context", s.pipeline, s.label, outside))
        return tuple(out)

    def previous(self, step: PassStep) -> str:
        """The module's text just before ``step`` (what its diff starts from)."""
        k = self.steps.index(step)
        return self.steps[k - 1].text if k else self.before


def reading_in(memo: dict, focus=None) -> ModuleReading:
    """The :class:`ModuleReading` for ``focus`` kept in ``memo`` (a pipeline's,
    :attr:`PassPipeline.memo`), made on the first ask."""
    key = focus_of(focus)
    found = memo.get(("reading", key))
    if found is None:
        found = memo[("reading", key)] = ModuleReading(SourceTable(focus=key))
    return found


def journey_reader(focus=None) -> ModuleReader:
    """A reader of modules as the compile writes them
    (:class:`~olympus.dump_follow.DumpFollower`) that reads each for the journeys
    (:func:`journey_index`) with the user's own code as ``focus`` says."""

    def read(memo: dict, previous: str | None, text: str) -> None:
        reading_in(memo, focus).located(text)

    return read


def read_dump(
    folder: str | os.PathLike, pass_re: str = ".*", follower: DumpFollower | None = None
) -> PassPipeline:
    """The pass pipeline of the one module XLA dumped into ``folder`` (with the
    pass filter ``pass_re``). ``follower``: what read the modules as the compile
    wrote them (:class:`~olympus.dump_follow.DumpFollower`): its texts are taken
    instead of reading those files again, and the pipeline keeps its memo."""
    names = os.listdir(folder)
    steps_by_module: dict[tuple[str, str], list] = {}
    for name in names:
        m = _STEP_FILE.match(name)
        dump = read_name(m.group(3)) if m else None
        if m and dump:
            steps_by_module.setdefault((m.group(1), m.group(2)), []).append((dump, name))
    if not steps_by_module:  # a filter no pass matched: the module and no steps
        befores = sorted(n for n in names if n.endswith(".before_optimizations.txt"))
        if not befores:
            raise ValueError(f"XLA wrote no pass dumps into {os.fspath(folder)!r}")
        m = re.match(r"^module_(\d+)\.(.+)\.before_optimizations\.txt$", befores[0])
        if m is None:
            raise ValueError(f"XLA's dump file {befores[0]!r} is not named module_N.NAME....")
        steps_by_module[(m.group(1), m.group(2))] = []
    # One compile dumps one module; take the one with the most steps if there are more.
    (number, module), found = max(steps_by_module.items(), key=lambda kv: len(kv[1]))

    def read(name: str) -> str:
        held = follower.take(os.fspath(folder), name) if follower is not None else None
        if held is not None:
            return held
        with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
            return f.read()

    steps = []
    # A module printed again unchanged is one text (compared by identity after),
    # counted once.
    known: dict[str, tuple[str, int]] = {}
    found.sort(key=lambda item: item[0].step)
    dumps = [n for n, _ in found]
    counted = follower.counts if follower is not None else {}  # counted as XLA wrote them
    for (n, name), within in zip(found, enclosing(dumps)):
        text = read(name)
        held = known.get(text)
        if held is None:
            count = counted.pop(text, None)
            held = known[text] = (text, instruction_count(text) if count is None else count)
        text, count = held
        # A point inside a pass is of the pipeline the pass runs in.
        pipeline = n.pipeline if n.pipeline is not None else (within[0] if within else "")
        steps.append(PassStep(n.step, pipeline, n.after, n.before, text, count, n.point, within))
    counted.clear()
    prefix = f"module_{number}.{module}."
    before_name = prefix + "before_optimizations.txt"
    before = read(before_name) if before_name in names else steps[0].text
    after_names = sorted(
        n for n in names if n.startswith(prefix) and n.endswith("_after_optimizations.txt")
    )
    after = read(after_names[0]) if after_names else (steps[-1].text if steps else before)
    memo = follower.memo if follower is not None else {}
    return PassPipeline(module, before, after, tuple(steps), pass_re, memo)


@contextlib.contextmanager
def dumped(
    lowered, *, pass_re: str = NO_PASS, compiler_options: Mapping[str, Any] | None = None
) -> Iterator[str]:
    """Compiles ``lowered`` (an Olympus or JAX ``Lowered``) once more with XLA's dumps
    as text, into a private folder: the ``with`` block reads the folder, which is
    removed afterwards, even when the compile or the reading fails.

    XLA writes the module before and after optimization, and after optimization its
    buffer assignment (``*-buffer-assignment.txt``) and live ranges (with the buffers
    live at the peak: ``*-live-range.txt``, or the buffer assignment's end in older
    releases); ``pass_re`` adds the
    module after each pass whose name it matches (XLA's ``xla_dump_hlo_pass_re``;
    :data:`NO_PASS` by default). ``compiler_options`` are the compile's own, as for
    ``compile()``. Nothing of the process (``XLA_FLAGS``, JAX's configuration) is
    changed; a compile that fails raises as ``compile()`` does.

    >>> lowered = olympus.jit(lambda x: x * 2.0).trace(np.ones(4, np.float32)).lower()
    >>> with dumped(lowered) as folder:
    ...     any(n.endswith("-buffer-assignment.txt") for n in os.listdir(folder))
    True
    """
    with dumped_compile(lowered, pass_re=pass_re, compiler_options=compiler_options) as (folder, _):
        yield folder


#: Where the system's temporary folder is when nobody chose another.
_DEFAULT_TEMP = ("/tmp", "/var/tmp", "/usr/tmp")
#: The room ``/dev/shm`` must have free for per-pass dumps to go there: they are
#: the module printed some 40 to 100 times (9 MB for an 8-layer transformer, 70 MB
#: for a transformer train step sharded over 8 devices), so a small ``/dev/shm``
#: (a container's 64 MB) keeps them on disk.
PASS_DUMP_ROOM = 1 << 30
#: What must still be free there after the compile: less, and XLA may have run out
#: of room while it wrote the dump (it says so on its log and goes on), so the
#: compile is made again with its dump on disk.
ROOM_LEFT = 64 << 20


def _free_bytes(folder: str) -> int:
    """The bytes free to this process in ``folder``'s file system."""
    found = os.statvfs(folder)
    return found.f_bavail * found.f_frsize


def dump_parent(room: int = 0) -> str | None:
    """Where a dump is made: ``/dev/shm`` (memory) where it is a writable folder
    with ``room`` bytes free and nobody chose a temporary folder (``TMPDIR``,
    ``TEMP``, ``TMP``, ``tempfile.tempdir``), since writing to a disk costs a
    compile about a tenth more (a quarter more with per-pass dumps: 44 files of
    200 kB); else ``None``, the temporary folder as chosen.

    >>> dump_parent(room=1 << 60) is None  # no /dev/shm has an exbibyte free
    True
    """
    if any(os.environ.get(v) for v in ("TMPDIR", "TEMP", "TMP")):
        return None
    if tempfile.gettempdir() not in _DEFAULT_TEMP:
        return None
    shm = "/dev/shm"
    if not (os.path.isdir(shm) and os.access(shm, os.W_OK | os.X_OK)):
        return None
    try:
        return shm if _free_bytes(shm) >= room else None
    except OSError:
        return None


@contextlib.contextmanager
def dumped_compile(
    lowered,
    *,
    pass_re: str = NO_PASS,
    compiler_options: Mapping[str, Any] | None = None,
    refused: Callable[[str], None] | None = None,
    follower: DumpFollower | None = None,
) -> Iterator[tuple[str, Any]]:
    """:func:`dumped`, yielding the compiled program too (its analyses are those of
    the program dumped). A compile that fails hands the folder, with what XLA wrote
    before it gave up, to ``refused`` (where given), then raises.

    The dump goes to memory where there is room (:func:`dump_parent`; per-pass
    dumps need :data:`PASS_DUMP_ROOM`); a per-pass dump there that may have run out
    of room (less than :data:`ROOM_LEFT` left after the compile) is made again on
    disk. ``follower`` reads the per-pass modules while XLA writes them
    (:class:`~olympus.dump_follow.DumpFollower`)."""
    room = 0 if pass_re == NO_PASS else PASS_DUMP_ROOM
    parent = dump_parent(room)
    with _compiled_into(lowered, pass_re, compiler_options, refused, parent, follower) as made:
        folder, compiled = made
        if parent is None or not room or _free_bytes(parent) >= ROOM_LEFT:
            yield folder, compiled
            return
    with _compiled_into(lowered, pass_re, compiler_options, refused, None, follower) as made:
        yield made


@contextlib.contextmanager
def _compiled_into(
    lowered,
    pass_re: str,
    compiler_options: Mapping[str, Any] | None,
    refused: Callable[[str], None] | None,
    parent: str | None,
    follower: DumpFollower | None,
) -> Iterator[tuple[str, Any]]:
    """The compile of :func:`dumped_compile`, dumped into a new folder in ``parent``
    (``None``: the temporary folder), removed afterwards."""
    options = dict(compiler_options or {})
    with tempfile.TemporaryDirectory(prefix="olympus-passes-", dir=parent) as folder:
        options.update(xla_dump_to=folder, xla_dump_hlo_pass_re=pass_re, xla_dump_hlo_as_text=True)
        following = follower.following(folder) if follower is not None else contextlib.nullcontext()
        try:
            with following:
                compiled = lowered.compile(options)
        except Exception:
            if refused is not None:
                refused(folder)
            raise
        yield folder, compiled


def pass_pipeline(
    lowered, *, pass_re: str = ".*", compiler_options: Mapping[str, Any] | None = None
) -> PassPipeline:
    """Compiles ``lowered`` (an Olympus or JAX ``Lowered``) once more with XLA's
    per-pass dumps, into a private folder removed afterwards (:func:`dumped`), and
    reads them.

    ``pass_re`` keeps the passes whose names it matches (XLA's
    ``xla_dump_hlo_pass_re``); ``compiler_options`` are the compile's own, as for
    ``compile()``. Nothing of the process (``XLA_FLAGS``, JAX's configuration) is
    changed; a compile that fails raises as ``compile()`` does.
    """
    with dumped(lowered, pass_re=pass_re, compiler_options=compiler_options) as folder:
        return read_dump(folder, pass_re)


# -- where a line's ops went ------------------------------------------------------------


@dataclasses.dataclass(frozen=True)
class Carrier:
    """An instruction that carries a source line's work after some pass."""

    label: str  # the instruction's name, e.g. "multiply.3"
    opcode: str  # e.g. "multiply", "fusion", "custom-call"
    fusion: str | None  # the fusion instruction whose computation holds it
    fusion_kind: str | None = None  # that fusion's kind (kLoop, kInput, kOutput, kCustom)


@dataclasses.dataclass(frozen=True)
class JourneyEvent:
    """What one pass did to a line's instructions."""

    step: int  # index into PassPipeline.steps
    pass_name: str
    pipeline: str
    kind: str  # created, removed, fused, unfused, duplicated, custom-call
    labels: tuple[str, ...]
    detail: str

    def describe(self) -> str:
        return f"{self.pass_name} ({self.pipeline}): {self.detail}"


@dataclasses.dataclass(frozen=True)
class Journey:
    """A source line's instructions through the passes: before the first pass
    (``start``), after each step (``carriers[k]`` for ``steps[k]``), and the events
    between them."""

    file: str
    line: int
    start: tuple[Carrier, ...]
    carriers: tuple[tuple[Carrier, ...], ...]
    events: tuple[JourneyEvent, ...]

    @property
    def end(self) -> tuple[Carrier, ...]:
        """Where the line's work ended up: the instructions after the last pass."""
        return self.carriers[-1] if self.carriers else self.start


@dataclasses.dataclass(frozen=True)
class Instruction:
    """An instruction of one module of the pipeline, with what XLA kept of where it
    came from: its ``op_name``, its call ``stack`` (``(file, line)``, innermost
    first) and the line it is ``charged`` to (its innermost of the user's own code)."""

    carrier: Carrier
    op_name: str
    stack: tuple[tuple[str, int], ...]
    charged: tuple[str, int] | None


def _read_instructions(text: str, reading: ModuleReading) -> tuple[Instruction, ...]:
    """Every instruction of ``text`` with a source location, in text order. The
    reading's memo is kept across the modules of one pipeline: each location's stack
    and charged line, and each :class:`Instruction` made (most stay as they were
    from one pass to the next: the modules share them), found again from the line
    read and its fusion without making its key."""
    found = reading.instructions(text)
    table, memo = reading.table, reading.memo
    stacks = memo.setdefault(("stacks",), {})
    line_of = reading.charged
    made = memo.setdefault(("instructions",), {})
    # By the line read (hlo.Instruction, one object for every module that prints
    # the line) and the fusion that holds it: compared as objects, no key made.
    of_line = memo.setdefault(("instructions by line",), {})
    out = []
    for ins, holder in zip(found.instructions, found.holders):
        location = ins.location
        if location is None or ins.name == "parameter":
            continue
        item = of_line.get((ins, holder))
        if item is None:
            fusion, kind = (
                (holder.label, holder.fusion_kind) if holder is not None else (None, None)
            )
            key = (ins.label, ins.name, location, fusion, kind, ins.op_name)
            item = made.get(key)
            if item is None:
                stack = stacks.get(location)
                if stack is None:
                    stack = stacks[location] = line_stack(table, location)
                item = made[key] = Instruction(
                    Carrier(ins.label, ins.name, fusion, kind),
                    ins.op_name,
                    stack,
                    line_of(location),
                )
            of_line[ins, holder] = item
        out.append(item)
    return tuple(out)


def _by_charged(found: tuple[Instruction, ...]) -> dict[tuple[str, int], tuple[Carrier, ...]]:
    """The carriers of a module by the line each is charged to."""
    out: dict[tuple[str, int], list[Carrier]] = {}
    for ins in found:
        if ins.charged is not None:
            out.setdefault(ins.charged, []).append(ins.carrier)
    return {key: tuple(value) for key, value in out.items()}


def _events(
    k: int, pipeline: str, before: tuple[Carrier, ...], after: tuple[Carrier, ...], who: str
) -> list[JourneyEvent]:
    """The events of one pass for one line: its instructions before and after it.

    A pass that fuses clones the instruction into the fusion's computation under a
    new name: an instruction that goes and one of the same opcode that comes inside
    a fusion are one instruction fused; of the same opcode elsewhere, one renamed.
    """
    old = {c.label: c for c in before}
    new = {c.label: c for c in after}
    created = [c for c in after if c.label not in old]
    removed = [c for c in before if c.label not in new]
    events = []

    def event(kind, labels, detail):
        events.append(JourneyEvent(k, who, pipeline, kind, tuple(labels), detail))

    # Each instruction gone takes the first one come of its opcode not yet taken.
    come: dict[str, list[Carrier]] = {}
    for c in created:
        come.setdefault(c.opcode, []).append(c)
    taken: dict[str, int] = {}
    paired: set[int] = set()  # ids of the instructions paired, gone or come
    for gone in removed:
        queue = come.get(gone.opcode)
        n = taken.get(gone.opcode, 0)
        if queue is None or n >= len(queue):
            continue
        twin = queue[n]
        taken[gone.opcode] = n + 1
        paired.update((id(gone), id(twin)))
        if twin.fusion is not None and gone.fusion != twin.fusion:
            kind = f", {twin.fusion_kind}" if twin.fusion_kind else ""
            event(
                "fused",
                [gone.label, twin.label],
                f"{gone.label} fused into {twin.fusion}{kind} (as {twin.label})",
            )
        elif twin.fusion is None and gone.fusion is not None:
            event(
                "unfused",
                [gone.label, twin.label],
                f"{gone.label} taken out of {gone.fusion} (as {twin.label})",
            )
        else:
            event("renamed", [gone.label, twin.label], f"{gone.label} renamed {twin.label}")
    if paired:
        created = [c for c in created if id(c) not in paired]
        removed = [c for c in removed if id(c) not in paired]
    opcodes_before = {b.opcode for b in before}
    for now in after:  # in their order: the events' order is the same every run
        was = old.get(now.label)
        if was is not None and now.fusion is not None and was.fusion != now.fusion:
            kind = f", {now.fusion_kind}" if now.fusion_kind else ""
            event("fused", [now.label], f"{now.label} fused into {now.fusion}{kind}")
    for c in created:
        if c.opcode == "custom-call":
            event(
                "custom-call",
                [c.label],
                f"turned into a custom call (a library or runtime routine): {c.label}",
            )
        elif c.opcode == "fusion":
            event("fusion", [c.label], f"{c.label} made: a fusion that holds this line's work")
        elif c.opcode in opcodes_before:
            event("duplicated", [c.label], f"duplicated: {c.label} ({c.opcode})")
        else:
            event("created", [c.label], f"now carried by {c.label} ({c.opcode})")
    for c in removed:
        event("removed", [c.label], f"removed: {c.label} ({c.opcode})")
    return events


@dataclasses.dataclass(frozen=True)
class JourneyIndex:
    """Every module of a pass pipeline read once (:func:`journey_index`): the
    instructions before the first pass (``start``) and after each step
    (``snapshots[k]`` for ``steps[k]``), with where each came from, and the pass
    each step's change is put down to (``who``). A journey of any set of
    instructions is read from it without reading a module again: a source line's
    (:meth:`through`: every instruction whose call stack passes through the line),
    an op's (:meth:`of_keys`), any (:meth:`journey`).

    >>> lowered = olympus.jit(lambda x: jnp.tanh(x * 2.0)).trace(np.ones(4, np.float32)).lower()
    >>> index = journey_index(pass_pipeline(lowered))
    >>> line = index.start[0].stack[0]
    >>> [c.opcode for c in index.through(*line).start] == [i.carrier.opcode for i in index.start]
    True
    """

    pipelines: tuple[str, ...]
    who: tuple[str, ...]
    start: tuple[Instruction, ...]
    snapshots: tuple[tuple[Instruction, ...], ...]

    def journey(
        self, select: Callable[[Instruction], bool], file: str = "", line: int = 0
    ) -> Journey:
        """The journey of the instructions ``select`` keeps, named ``file``:``line``."""
        picked: dict[int, tuple[Carrier, ...]] = {}  # a module shared by steps is read once

        def carriers(found: tuple[Instruction, ...]) -> tuple[Carrier, ...]:
            got = picked.get(id(found))
            if got is None:
                got = picked[id(found)] = tuple(i.carrier for i in found if select(i))
            return got

        return _journey(self, carriers(self.start), map(carriers, self.snapshots), file, line)

    def through(self, file: str, line: int) -> Journey:
        """The journey of every instruction whose call stack passes through
        ``file``:``line``: the line's own, and those of the functions it calls
        (a library's, or the user's)."""
        key = (file, int(line))
        return self.journey(lambda i: key in i.stack, file, int(line))

    def of_keys(self, keys: Sequence[OpKey]) -> Journey:
        """The journey of the instructions that came from an op (its
        :func:`~olympus.op_instructions.op_keys`)."""
        index = KeyIndex({0: keys})
        return self.journey(lambda i: bool(index.matched(i.op_name, i.stack)))

    def charged(
        self, lines: Iterable[tuple[str, int]] | None = None
    ) -> dict[tuple[str, int], Journey]:
        """The journeys of source lines, each of the instructions charged to it
        (default: every line with an instruction before the passes)."""
        start, snapshots = self._grouped(_by_charged)
        wanted = list(start) if lines is None else [(f, int(n)) for f, n in lines]
        return {
            key: _journey(
                self, start.get(key, ()), (found.get(key, ()) for found in snapshots), *key
            )
            for key in wanted
        }

    def by_owner(self, keys: KeyIndex) -> dict[Any, Journey]:
        """The journey of each owner of ``keys`` (op ids, say) that has instructions
        before the passes: those its keys match, each module read once for all
        (owners of one key share its journey). For some of them only,
        :meth:`of_each_key` makes each journey when asked."""
        made = self.of_each_key(keys)
        made.read(made.keys)  # each module read once for them all
        return {owner: made.journey(key) for key in made.keys for owner in keys.owners_of(key)}

    def of_each_key(self, keys: KeyIndex) -> KeyJourneys:
        """The journeys of ``keys`` (an op's, say): the instructions each matches
        before the passes at once, and in the other modules for the keys asked
        about (:class:`KeyJourneys`), so that a caller that keeps a few pays for
        those."""
        return KeyJourneys(self, keys)

    def _grouped(self, group: Callable[[tuple[Instruction, ...]], dict]) -> tuple[dict, list]:
        """``group`` of the start and of each step's module, each module once."""
        start = group(self.start)
        done: dict[int, dict] = {id(self.start): start}
        snapshots = []
        for found in self.snapshots:
            got = done.get(id(found))
            if got is None:
                got = done[id(found)] = group(found)
            snapshots.append(got)
        return start, snapshots


def _journey(index: JourneyIndex, first, carriers_of_steps, file: str, line: int) -> Journey:
    last = first
    carriers, events = [], []
    for k, now in enumerate(carriers_of_steps):
        if now != last:
            events.extend(_events(k, index.pipelines[k], last, now, index.who[k]))
        carriers.append(now)
        last = now
    return Journey(file, line, first, tuple(carriers), tuple(events))


class KeyJourneys:
    """The journeys of many op keys through the modules of one
    :class:`JourneyIndex` (:meth:`JourneyIndex.of_each_key`). The instructions
    each key matches before the passes are found at once (``start``: the keys
    with some are those a journey starts from, :attr:`keys`); in the other
    modules, for the keys asked about (:meth:`read`, :meth:`journey`), each
    module read once for all the keys of one ask, and only its instructions that
    some key asked about matches. Each instruction is matched once (most are the
    same object from one module to the next: :func:`journey_index`'s memo), and
    an op name and a stack once for all instructions.

    >>> lowered = olympus.jit(lambda x: jnp.tanh(x * 2.0)).trace(np.ones(4, np.float32)).lower()
    >>> index = journey_index(pass_pipeline(lowered))
    >>> ins = index.start[0]
    >>> made = index.of_each_key(KeyIndex({"op": [OpKey(ins.op_name.rsplit("/", 1)[-1], ins.stack)]}))
    >>> [key.leaf for key in made.keys], made.journey(made.keys[0]) is made.journey(made.keys[0])
    (['mul'], True)
    """

    def __init__(self, index: JourneyIndex, keys: KeyIndex):
        self.index = index
        self._matched: dict[tuple[str, int], list[OpKey]] = {}  # by op name and stack
        self._of: dict[int, list[OpKey]] = {}  # by instruction (id: the index holds them)
        self._keys = keys
        #: The carriers of each key before the passes.
        self.start = self._group(index.start, None)
        # The steps' modules, each distinct one once, and what was read of each.
        slot: dict[int, int] = {}
        self._step_slot = [slot.setdefault(id(m), len(slot)) for m in index.snapshots]
        self._modules = list({id(m): m for m in index.snapshots}.values())
        self._read_of: list[dict[OpKey, tuple[Carrier, ...]]] = [{} for _ in self._modules]
        self._of_step = [self._read_of[k] for k in self._step_slot]  # each step's module's
        self._read: set[OpKey] = set()
        self._holding: dict[OpKey, set[int]] | None = None  # the instructions of each key
        self._made: dict[OpKey, Journey] = {}

    @property
    def keys(self) -> list[OpKey]:
        """The keys with instructions before the passes (those a journey starts from)."""
        return list(self.start)

    def read(self, keys: Iterable[OpKey]) -> None:
        """Finds the instructions of ``keys`` in every module after a step (each
        module read once for them all; keys read before are not read again)."""
        wanted = {k for k in keys if k not in self._read}
        if not wanted:
            return
        holding = self._held()
        ids: set[int] = set().union(*(holding.get(k, ()) for k in wanted))
        has = ids.__contains__
        for k, found in enumerate(self._modules):
            # Only the instructions of the keys asked about, picked at C speed.
            some = tuple(itertools.compress(found, map(has, map(id, found))))
            self._read_of[k].update(self._group(some, wanted))
        self._read |= wanted

    def alike(self) -> list[list[OpKey]]:
        """:attr:`keys` in sets that match the same instructions in every module,
        and so have one journey, in the order of their first key (an olympuspr
        equation's and its StableHLO op's, say, whose instructions are the same)."""
        holding = self._held()
        sets: dict[frozenset[int], list[OpKey]] = {}
        for key in self.start:
            sets.setdefault(frozenset(holding.get(key, ())), []).append(key)
        return list(sets.values())

    def _held(self) -> dict[OpKey, set[int]]:
        """The instructions each key matches in any module, by id (each instruction
        matched once, for every ask)."""
        holding = self._holding
        if holding is None:
            holding = self._holding = {}
            every: dict[int, Instruction] = {}  # each instruction once, gathered at C speed
            for found in (self.index.start, *self._modules):
                every.update(zip(map(id, found), found))
            for ident, ins in every.items():
                for key in self._keys_of(ins):
                    held = holding.get(key)
                    if held is None:
                        holding[key] = {ident}
                    else:
                        held.add(ident)
        return holding

    def journey(self, key: OpKey) -> Journey:
        """The journey of the instructions ``key`` matches (none: an empty one),
        made on the first ask and kept."""
        found = self._made.get(key)
        if found is None:
            if key not in self._read:
                self.read([key])
            found = self._made[key] = _journey(
                self.index, self.start.get(key, ()), (m.get(key, ()) for m in self._of_step), "", 0
            )
        return found

    def _keys_of(self, ins: Instruction) -> list[OpKey]:
        got = self._of.get(id(ins))
        if got is None:
            seen = (ins.op_name, id(ins.stack))
            got = self._matched.get(seen)
            if got is None:
                got = self._matched[seen] = self._keys.matched(ins.op_name, ins.stack)
            self._of[id(ins)] = got
        return got

    def _group(
        self, found: Iterable[Instruction], wanted: set[OpKey] | None
    ) -> dict[OpKey, tuple[Carrier, ...]]:
        """The carriers of each key (of ``wanted``; None: every key) among ``found``."""
        out: dict[OpKey, list[Carrier]] = {}
        keys_of = self._keys_of
        for ins in found:
            for key in keys_of(ins):
                if wanted is not None and key not in wanted:
                    continue
                held = out.get(key)
                if held is None:
                    out[key] = [ins.carrier]
                else:
                    held.append(ins.carrier)
        return {key: tuple(c) for key, c in out.items()}


def journey_index(pipeline: PassPipeline, focus=None) -> JourneyIndex:
    """Reads every module of ``pipeline`` once (a step that printed the module
    unchanged is not read again) into a :class:`JourneyIndex`. ``focus``: what is
    the user's own code (:func:`olympus.provenance.focus.focus_of`), which
    instructions are charged to."""
    reading = pipeline.reading(focus)  # shared with origins()
    start = reading.located(pipeline.before)
    snapshots = [reading.located(step.text) for step in pipeline.steps]
    # The pass each step's change is put down to: with a filter, the module before a
    # kept pass shows what the passes the filter left out did since the last dump.
    credits = pipeline.credits()
    return JourneyIndex(
        tuple(c.pipeline for c in credits), tuple(c.who for c in credits), start, tuple(snapshots)
    )


def journeys(
    pipeline: PassPipeline, lines: Iterable[tuple[str, int]] | None = None, focus=None
) -> dict[tuple[str, int], Journey]:
    """The journeys of source lines (``(file, line)`` pairs; default: every line
    with an instruction before the passes) through ``pipeline``, each module read
    once for them all (a step that printed the module unchanged is not read again).
    An instruction belongs to the line it is charged to: its innermost of the
    user's own code (``focus``: :func:`olympus.provenance.focus.focus_of`). For the
    journey of a line any of whose instructions' call stacks pass through (a
    library's line, a line that calls a function), or of an op, read the pipeline
    once with :func:`journey_index`."""
    return journey_index(pipeline, focus).charged(lines)


def journey(pipeline: PassPipeline, file: str, line: int) -> Journey:
    """Where the instructions of source line ``file``:``line`` went, pass by pass.

    A line is matched on the frame of the user's own code an instruction is
    charged to (the innermost of its call stack in XLA's metadata that is not a
    library's: the line that called flax's ``Dense``, not flax's). For several
    lines, :func:`journeys` reads the modules once for all of them.
    """
    return journeys(pipeline, [(file, line)])[(file, line)]


def _dims(shape: str) -> str:
    """A printed shape without its layout: ``f32[3,3]{1,0}`` -> ``f32[3,3]``."""
    return shape.split("{", 1)[0]


def _elements(shape: str) -> tuple[str, tuple[str, ...]]:
    """A printed shape's element type and its sizes in any order (a transposed
    layout's): ``f32[1,3,3,16]{3,2,1,0}`` -> ``('f32', ('1', '16', '3', '3'))``."""
    head, _, rest = _dims(shape).partition("[")
    return head, tuple(sorted(rest.rstrip("]").split(",")))


def origins(
    pipeline: PassPipeline, labels: Iterable[str], focus=None
) -> dict[str, tuple[str, int]]:
    """The source line (``(file, line)``, the user's own: ``focus``) each of
    ``labels``, instructions of the optimized module without a source location,
    came from, followed back through ``pipeline``'s modules: the line the
    instruction itself had in an earlier module (a later pass dropped it), else the
    one line of the instructions the pass that made it removed: those of its opcode
    and shape where there are any, else of its opcode and its sizes in another
    order (a layout changed), else of its opcode; a removed instruction without a
    location is followed back the same way. Labels no single line explains are
    left out.

    >>> import olympus, jax.numpy as jnp
    >>> lowered = olympus.jit(lambda x: jnp.sin(x) * 2).trace(jnp.ones(4)).lower()
    >>> pipeline = pass_pipeline(lowered)
    >>> origins(pipeline, ["no-such-instruction"])
    {}
    """
    wanted = set(labels)
    if not wanted:
        return {}
    reading = pipeline.reading(focus)  # shared with journey_index()
    texts = [pipeline.before] + [s.text for s in pipeline.steps]
    modules = [reading.by_label(text) for text in texts]
    # Each module where it differs from the one before (a step that printed it
    # unchanged shares its reading), with its index.
    distinct = [(k, m) for k, m in enumerate(modules) if not k or m is not modules[k - 1]]
    line = reading.charged
    dims, elements = functools.cache(_dims), functools.cache(_elements)  # shapes repeat
    gone: dict[tuple, list] = {}  # what a step removed, each list made once

    def removed_by(k: int, name: str | None = None, like: tuple | None = None) -> list:
        """The instructions step ``k`` removed: all, those of opcode ``name``, and of
        those the ones whose shape is alike (``like``: ``(read, value)``, where
        ``read(shape) == value``)."""
        key = (k, name, like)
        found = gone.get(key)
        if found is None:
            if like is not None:
                read, value = like
                found = [i for i in removed_by(k, name) if read(i.shape) == value]
            elif name is not None:
                found = [i for i in removed_by(k) if i.name == name]
            else:
                before, after = modules[k - 1], modules[k]
                found = [i for label, i in before.items() if label not in after]
            gone[key] = found
        return found

    found: dict[str, tuple[str, int] | None] = {}

    def origin(label: str, depth: int = 0) -> tuple[str, int] | None:
        if label in found:
            return found[label]
        found[label] = None  # guards against cycles
        held = [(k, m[label]) for k, m in distinct if label in m]
        had = [i.location for _, i in held if i.location is not None]
        if had:
            found[label] = line(had[-1])
            return found[label]
        first = held[0][0] if held else None
        if not first or depth > 20:  # in XLA's input already, or never: nothing to follow
            return None
        made = held[0][1]
        for tier in (
            removed_by(first, made.name, (dims, dims(made.shape))),
            removed_by(first, made.name, (elements, elements(made.shape))),
            removed_by(first, made.name),
            removed_by(first),
        ):
            places = {
                line(i.location) if i.location is not None else origin(i.label, depth + 1)
                for i in tier
            }
            if places:
                found[label] = places.pop() if len(places) == 1 else None
                return found[label]
        return None

    out: dict[str, tuple[str, int]] = {}
    for label in wanted:
        place = origin(label)
        if place is not None:
            out[label] = place
    return out
