"""The HLO stage: every instruction of the optimized HLO text, with its source.

There are no Python bindings for walking compiled HLO here, so this is a small
line-oriented reader of ``Compiled.as_text()``. It reads:

* the source tables at the top: ``FileNames``, ``FunctionNames``,
  ``FileLocations`` and ``StackFrames`` (a printed ``parent_frame_id`` is the
  frame's id plus one; ``1`` or ``0`` means no parent);
* computation headers (``%name (params) -> shape {``, ``ENTRY`` for the entry);
* instruction lines ``[ROOT] %name = shape opcode(operands), attrs...``: the
  opcode, shape, called computations (``calls=``, ``to_apply=``, ``body=``,
  ``condition=``, ``branch_computations=``, ``called_computations=``),
  ``sharding={...}`` and ``metadata={op_name="..." stack_frame_id=N}``.

Instructions of a computation a ``fusion`` calls (directly, or through a
computation one of its instructions calls) belong to that fusion. Collectives
(all-reduce, all-gather, reduce-scatter, collective-permute, all-to-all, their
``-start``/``-done`` halves...) are flagged ``"requested"`` when the program asked
for one (``psum``...), else ``"inserted"``: the partitioner added it.

>>> text = '''HloModule m
...
... ENTRY %main (x: f32[2]) -> f32[2] {
...   %x = f32[2]{0} parameter(0), metadata={op_name="x"}
...   ROOT %sine = f32[2]{0} sine(%x), metadata={op_name="jit(f)/sin"}
... }
... '''
>>> stage = hlo_stage(text, SourceTable())
>>> [(op.label, op.name, op.types, op.lines) for op in stage.ops]
[('x', 'parameter', ('f32[2]{0}',), (4, 4)), ('sine', 'sine', ('f32[2]{0}',), (5, 5))]
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Callable
from typing import NamedTuple

from olympus import cross_slice
from olympus.provenance.parts import Computation, Op, Stage
from olympus.provenance.sources import SourceTable

__all__ = [
    "hlo_stage",
    "hlo_instructions",
    "instruction_count",
    "Instruction",
    "ModuleInstructions",
    "COLLECTIVE_OPCODES",
]

_BASE_COLLECTIVES = (
    "all-reduce",
    "all-gather",
    "reduce-scatter",
    "collective-permute",
    "all-to-all",
    "collective-broadcast",
    "ragged-all-to-all",
)
#: HLO opcodes of collectives, with their asynchronous halves.
COLLECTIVE_OPCODES = frozenset(
    op + suffix for op in _BASE_COLLECTIVES for suffix in ("", "-start", "-done")
)
# Primitives with which a program asks for a collective itself.
_REQUESTED = frozenset(
    {
        "psum",
        "pmax",
        "pmin",
        "pmean",
        "all_gather",
        "all_to_all",
        "ppermute",
        "pshuffle",
        "psum_scatter",
        "reduce_scatter",
        "pbroadcast",
        "all_gather_invariant",
        "psum_invariant",
        "ragged_all_to_all",
        "pgather",
        "axis_index",
        "pswapaxes",
    }
)

# An instruction line up to the opening parenthesis of its operands. A tuple
# shape nests parentheses (tiled layouts too: ``{1,0:T(8,128)}``), three deep here.
_INSTR = re.compile(
    r"\s+(ROOT )?%?([^\s=]+) = "
    r"(\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)|\S+) ([a-z][\w\-]*)\("
)
_COMPUTATION = re.compile(r"(ENTRY )?%?([^\s(]+) ")
# ``{...}`` with braces nested three deep (tuple shardings).
_SHARDING = re.compile(r", sharding=(\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\})")
_CALLS = re.compile(r"\b(calls|to_apply|body|condition)=%?([\w.\-]+)")
_CALL_LISTS = re.compile(r"\b(branch_computations|called_computations)=\{([^}]*)\}")
_TABLE_ENTRY = re.compile(r"(\d+) (.*)$")
_KV = re.compile(r"(\w+)=(\d+)")
_SOURCE = re.compile(r'source_file="((?:[^"\\]|\\.)*)" source_line=(\d+)')
_TABLES = ("FileNames", "FunctionNames", "FileLocations", "StackFrames")


def _unquote(s: str) -> str:
    if len(s) >= 2 and s[0] == '"' and s[-1] == '"':
        s = s[1:-1]
    return s.replace('\\"', '"').replace("\\\\", "\\") if "\\" in s else s


def closing_bracket(text: str, start: int, open_ch: str, close_ch: str) -> int:
    """Index just past the bracket that closes the one at ``start`` (strings in
    quotes skipped); the text's end if none does.

    >>> closing_bracket('f(a, "x)", g(b)) + 1', 1, "(", ")")
    16
    """
    if text[start] == open_ch:  # the common case: nothing nested, nothing quoted
        close = text.find(close_ch, start + 1)
        if close >= 0 and open_ch not in text[start + 1 : close] and '"' not in text[start:close]:
            return close + 1
    depth = 0
    in_str = False
    i = start
    n = len(text)
    while i < n:
        c = text[i]
        if in_str:
            if c == "\\":
                i += 1
            elif c == '"':
                in_str = False
        elif c == '"':
            in_str = True
        elif c == open_ch:
            depth += 1
        elif c == close_ch:
            depth -= 1
            if depth == 0:
                return i + 1
        i += 1
    return n


#: An instruction's line: indented (spaces or tabs, not a new line), a name, " = ".
_INSTRUCTION = re.compile(r"[^\S\n]+(?:ROOT )?%?[^\s=]+ = \S")
#: The same after a line's end: found by one scan of the text for its new lines.
_NEXT_INSTRUCTION = re.compile(r"\n" + _INSTRUCTION.pattern)


def instruction_count(text: str) -> int:
    """The number of instructions in an HLO module's text.

    >>> instruction_count("ENTRY %m (x: f32[]) -> f32[] {\\n  %x = f32[] parameter(0)\\n"
    ...                   "  ROOT %y = f32[] negate(%x)\\n}")
    2
    """
    first = 1 if _INSTRUCTION.match(text) else 0
    return first + len(_NEXT_INSTRUCTION.findall(text))


class _Frames:
    """The source tables of an HLO module, resolved to call stacks."""

    def __init__(self, tables: dict[str, dict[int, str]], table: SourceTable):
        self._table = table
        self.files = {k: _unquote(v) for k, v in tables.get("FileNames", {}).items()}
        self.functions = {k: _unquote(v) for k, v in tables.get("FunctionNames", {}).items()}
        self.file_locations = {
            k: dict((a, int(b)) for a, b in _KV.findall(v))
            for k, v in tables.get("FileLocations", {}).items()
        }
        self.stack_frames = {
            k: dict((a, int(b)) for a, b in _KV.findall(v))
            for k, v in tables.get("StackFrames", {}).items()
        }
        self._locations: dict[int, int | None] = {}

    def _raw(self, frame_id: int):
        fl = self.file_locations.get(self.stack_frames[frame_id].get("file_location_id", 0))
        if fl is None:
            return None
        line = fl.get("line", 0)
        col = fl.get("column", 0)
        return (
            self.files.get(fl.get("file_name_id", 0), ""),
            line,
            col,
            fl.get("end_line", line),
            fl.get("end_column", col),
            self.functions.get(fl.get("function_name_id", 0), ""),
        )

    def location(self, frame_id: int) -> int | None:
        if frame_id in self._locations:
            return self._locations[frame_id]
        frames = []
        seen = set()
        fid = frame_id
        while fid in self.stack_frames and fid not in seen:
            seen.add(fid)
            raw = self._raw(fid)
            if raw is not None:
                frames.append(raw)
            # The printed parent id is the parent's frame id plus one.
            fid = self.stack_frames[fid].get("parent_frame_id", 0) - 1
        loc = self._table.location(frames) if frames else None
        self._locations[frame_id] = loc
        return loc

    def file_line(self, path: str, line: int) -> int | None:
        """The location of a bare ``source_file``/``source_line`` pair."""
        return self._table.location([(path, line, 0, line, 0, "")])


def _read_tables(lines: list[str]) -> tuple[dict[str, dict[int, str]], int]:
    """The source tables, and the index of the first line after them."""
    tables: dict[str, dict[int, str]] = {}
    current = None
    i = 0
    for i, line in enumerate(lines):
        if line in _TABLES:
            current = tables.setdefault(line, {})
            continue
        if current is not None:
            m = _TABLE_ENTRY.match(line)
            if m:
                current[int(m.group(1))] = m.group(2)
                continue
            if not line:
                current = None
                continue
        if line.endswith("{") and not line.startswith(("HloModule", " ")):
            return tables, i
    return tables, i


@dataclasses.dataclass(slots=True)
class _Computation:
    """A computation as read: its name, its header line and closing line (1-based),
    and whether it is the entry. ``last`` is the header line until the closing
    brace is read."""

    name: str
    first: int
    last: int
    entry: bool


@dataclasses.dataclass
class _Module:
    """What the lines after the source tables say, in text order.

    Each instruction is read straight into its :class:`Op` (a module has thousands:
    one record per instruction, not two); the fields that need the whole module
    (``parent``, ``fusion``, ``collective``) are filled in before the stage is made.
    """

    ops: list[Op] = dataclasses.field(default_factory=list)
    # Instruction index -> (attribute, computation name) of the computations it calls.
    calls: dict[int, list[tuple[str, str]]] = dataclasses.field(default_factory=dict)
    computations: list[_Computation] = dataclasses.field(default_factory=list)
    computation_index: dict[str, int] = dataclasses.field(default_factory=dict)
    params: list[tuple[int, str | None]] = dataclasses.field(default_factory=list)
    root_sharding: str | None = None  # of the entry's ROOT (its params: above)


def hlo_stage(text: str, table: SourceTable, *, name: str = "hlo") -> Stage:
    """The HLO stage of an optimized HLO module's text (``Compiled.as_text()``).

    ``name`` names the stage, and so the ids of its ops:

    >>> stage = hlo_stage('''HloModule m
    ... ENTRY %main (x: f32[2]) -> f32[2] {
    ...   ROOT %x = f32[2]{0} parameter(0)
    ... }''', SourceTable(), name="optimized_hlo")
    >>> stage.name, stage.ops[0].id
    ('optimized_hlo', 'optimized_hlo:0')
    """
    lines = text.split("\n")
    tables, start = _read_tables(lines)
    module = _read_module(lines, start, _Frames(tables, table), name)
    caller, via_fusion = _callers(module)
    fusion = _fusions(module, caller, via_fusion)
    _set_parents(module.ops, caller, fusion)
    collectives = _mark_collectives(module.ops, lines)
    computations = tuple(
        Computation(
            name=c.name,
            lines=(c.first, c.last),
            entry=c.entry,
            caller=caller[ci],
            fusion=fusion[ci],
        )
        for ci, c in enumerate(module.computations)
    )
    arg_shardings, result_shardings = _entry_shardings(module)
    return Stage(
        name,
        text,
        tuple(module.ops),
        computations=computations,
        arg_shardings=arg_shardings,
        result_shardings=result_shardings,
        collectives=collectives,
    )


@dataclasses.dataclass(frozen=True, slots=True, eq=False)
class Instruction:
    """One instruction line of a module as :func:`hlo_instructions` reads it: less
    than a stage's :class:`Op`, for reading many dumps of one module quickly. What
    the line alone says, so one object serves every module that prints the line
    alike (compared and hashed as that object: ``eq=False``); where it sits in a
    module is :class:`ModuleInstructions`'. ``fusion_kind``: a fusion
    instruction's own kind (``kLoop``...); ``calls``: the computations it calls,
    ``(attribute, name)``."""

    label: str
    name: str  # the opcode
    location: int | None
    fusion_kind: str | None = None
    shape: str = ""  # as printed, layout included
    op_name: str = ""  # XLA's metadata's: the name stack and primitive
    calls: tuple[tuple[str, str], ...] = ()


class ModuleInstructions(NamedTuple):
    """A module's instructions in text order, and for each the ``fusion``
    instruction whose computation holds it (directly or through the computations
    that call it; ``None`` outside one)."""

    instructions: list[Instruction]
    holders: list[Instruction | None]


_FUSION_KIND = re.compile(r"kind=(k\w+)")


def _tables_end(lines: list[str]) -> int:
    """The index of the first computation's header (where :func:`_read_tables` stops)."""
    for i, line in enumerate(lines):
        if line.endswith("{") and not line.startswith(("HloModule", " ")):
            return i
    return max(len(lines) - 1, 0)


def hlo_instructions(text: str, table: SourceTable, memo: dict | None = None) -> ModuleInstructions:
    """The instructions of an HLO module's text with their opcode, location and
    fusion, in text order: what reading the modules XLA dumps after each pass needs.
    ``memo``, a dict kept across the dumps of one compile, holds each instruction
    line read, as one :class:`Instruction` for every module that prints it (most
    lines are the same from one pass to the next), and the source tables, so that a
    dump costs what changed in it.

    >>> text = '''HloModule m
    ... %f (p: f32[2]) -> f32[2] {
    ...   %p = f32[2]{0} parameter(0)
    ...   ROOT %n = f32[2]{0} negate(%p)
    ... }
    ... ENTRY %main (x: f32[2]) -> f32[2] {
    ...   %x = f32[2]{0} parameter(0)
    ...   ROOT %y = f32[2]{0} fusion(%x), kind=kLoop, calls=%f
    ... }'''
    >>> found = hlo_instructions(text, SourceTable())
    >>> [(i.label, i.name, h and h.label) for i, h in zip(*found)]
    [('p', 'parameter', 'y'), ('n', 'negate', 'y'), ('x', 'parameter', None), ('y', 'fusion', None)]
    >>> memo, table = {}, SourceTable()
    >>> again = hlo_instructions(text, table, memo), hlo_instructions(text, table, memo)
    >>> again[0].instructions[1] is again[1].instructions[1]  # one record per line read
    True
    """
    memo = {} if memo is None else memo
    lines = text.split("\n")
    start = _tables_end(lines)
    # The source tables, without the module's own line (which a pass may change,
    # ``is_scheduled=true`` say, while the tables and the instructions stay).
    head = "\n".join(lines[1:start])
    known = memo.get(head)
    if known is None:
        known = memo[head] = (_Frames(_read_tables(lines[: start + 1])[0], table), {})
    frames: _Frames = known[0]
    read: dict[str, Instruction | None] = known[1]
    module = _Module()
    out: list[Instruction] = []
    computation_of: list[int] = []  # of each instruction
    for lineno, line, current in _instruction_lines(lines, start, module):
        ins = read.get(line)
        if ins is None:
            if line in read:  # read before: no instruction
                continue
            ins = read[line] = _instruction(line, lineno, current, frames)
            if ins is None:
                continue
        if ins.calls:
            module.calls[len(out)] = ins.calls  # type: ignore[assignment]
        out.append(ins)
        computation_of.append(current)
    module.ops = out  # type: ignore[assignment]  # what _callers reads: names
    caller, via_fusion = _callers(module)
    fusion = _fusions(module, caller, via_fusion, computation_of.__getitem__)
    holder = [None if k is None else out[k] for k in fusion]
    return ModuleInstructions(out, [holder[c] for c in computation_of])


def _instruction(line: str, lineno: int, computation: int, frames: _Frames) -> Instruction | None:
    """The :class:`Instruction` of ``line``, or ``None`` where it holds none."""
    m = _INSTR.match(line)
    if not m:
        return None
    op, calls = _read_instruction(line, m, "", 0, lineno, computation, frames)
    kind = None
    if op.name == "fusion":
        found = _FUSION_KIND.search(line)
        kind = found.group(1) if found else None
    return Instruction(
        op.label or "",
        op.name,
        op.location,
        kind,
        op.types[0] if op.types else "",
        op.name_stack,
        tuple(calls or ()),
    )


def _instruction_lines(lines: list[str], start: int, module: _Module):
    """``(line number, line, computation index)`` of each line inside a computation,
    from line index ``start`` (the first computation's header) on; the computations
    read on the way are added to ``module`` (their closing lines set)."""
    comps = module.computations
    current = None  # index of the computation being read
    for lineno in range(start + 1, len(lines) + 1):
        line = lines[lineno - 1]
        if not line:
            continue
        c0 = line[0]
        if c0 != " ":  # instructions are indented; headers and closing braces are not
            if c0 == "}":
                if current is not None:
                    comps[current].last = lineno
                current = None
            elif line.endswith("{"):
                m = _COMPUTATION.match(line)
                if m:
                    current = len(comps)
                    module.computation_index[m.group(2)] = current
                    comps.append(_Computation(m.group(2), lineno, lineno, bool(m.group(1))))
            continue
        if current is not None:
            yield lineno, line, current


def _read_module(lines: list[str], start: int, frames: _Frames, stage: str) -> _Module:
    """Reads the computations and their instructions, from line index ``start`` (the
    first computation's header, as :func:`_read_tables` found it) on."""
    module = _Module()
    ops = module.ops
    comps = module.computations
    for lineno, line, current in _instruction_lines(lines, start, module):
        m = _INSTR.match(line)
        if not m:
            continue
        op, calls = _read_instruction(line, m, stage, len(ops), lineno, current, frames)
        if calls:
            module.calls[op.index] = calls
        ops.append(op)
        if comps[current].entry:
            if op.name == "parameter":
                after = m.end()  # "parameter(" ends the match: the number follows
                number = line[after : line.find(")", after)]
                if number.isdigit():
                    module.params.append((int(number), op.sharding))
            elif m.group(1):  # "ROOT "
                module.root_sharding = op.sharding
    return module


def _read_instruction(
    line: str, m: re.Match, stage: str, index: int, lineno: int, computation: int, frames: _Frames
) -> tuple[Op, list[tuple[str, str]] | None]:
    """The op of the instruction on ``line`` (which :data:`_INSTR` matched as ``m``),
    without its parent, fusion and collective kind; and what it calls."""
    _, label, shape, opcode = m.groups()
    after = m.end()  # just past the opening parenthesis of the operands
    at = line.find(", metadata={", after)
    if at >= 0:
        op_name, location = _read_metadata(line, at + 12, frames)
        # Attributes are looked for before the metadata: an op name may read like one.
        head = line[:at]
    else:
        op_name, location = "", None
        head = line
    # Most instructions have neither: cheap tests first.
    sharding = _sharding(head, after) if ", sharding={" in head else None
    calls = (
        _calls(head, after)
        if (
            "calls=" in head
            or "to_apply=" in head
            or "body=" in head
            or "condition=" in head
            or "computations=" in head
        )
        else None
    )
    # Positional, as keywords take twice as long: stage, index, name, types, lines,
    # location, name_stack, parent, sharding, label, computation.
    op = Op(
        stage,
        index,
        opcode,
        (shape,),
        (lineno, lineno),
        location,
        op_name,
        None,
        sharding,
        label,
        computation,
    )
    return op, calls


def _read_metadata(line: str, p: int, frames: _Frames) -> tuple[str, int | None]:
    """The op name (``""`` if none) and the location of the ``metadata={...}``
    whose contents start at ``line[p]``.

    >>> line = '  %s = f32[] sine(%x), metadata={op_name="jit(f)/sin" stack_frame_id=9}'
    >>> _read_metadata(line, line.find("metadata={") + 10, _Frames({}, SourceTable()))
    ('jit(f)/sin', None)
    """
    op_name = ""
    q = line.find('op_name="', p)
    if q >= 0:
        q += 9
        e = line.find('"', q)
        while e > 0 and line[e - 1] == "\\":  # an escaped quote
            e = line.find('"', e + 1)
        op_name = line[q:e]
        if "\\" in op_name:
            op_name = _unquote('"' + op_name + '"')
        p = e + 1
    rest = line[p : line.find("}", p)]
    f = rest.find("stack_frame_id=")
    if f >= 0:
        digits = rest[f + 15 :].split(" ", 1)[0]
        return op_name, frames.location(int(digits)) if digits.isdigit() else None
    # Without source tables, XLA prints the innermost position only.
    if "source_file=" in rest:
        sm = _SOURCE.search(rest)
        if sm:
            return op_name, frames.file_line(_unquote('"' + sm.group(1) + '"'), int(sm.group(2)))
    return op_name, None


def _sharding(head: str, after: int) -> str | None:
    """The ``sharding={...}`` of an instruction whose ``head`` holds one, as printed."""
    sh = _SHARDING.search(head, after)
    if sh is not None:
        return sh.group(1)
    # Braces nested deeper than the pattern reaches.
    at = head.find(", sharding={", after) + 11
    return head[at : closing_bracket(head, at, "{", "}")]


def _calls(head: str, after: int) -> list[tuple[str, str]] | None:
    """``(attribute, computation name)`` of each computation an instruction calls
    (``calls=%f``, ``branch_computations={%a, %b}``...), ``None`` if none. The
    caller first looks for the attributes' names with ``in`` (most instructions call
    nothing, and five ``in`` tests take less than half the time of one regex search).

    >>> _calls("%w = f32[] while(%t), condition=%cond, body=%body", 17)
    [('condition', 'cond'), ('body', 'body')]
    """
    found = _CALLS.findall(head, after)
    for kind, names in _CALL_LISTS.findall(head, after):
        found.extend((kind, n.strip().lstrip("%")) for n in names.split(","))
    return found or None


def _callers(module: _Module) -> tuple[list[int | None], list[bool]]:
    """Per computation: the first instruction that calls it (``None`` for the
    entry and computations no one calls), and whether that is a ``fusion`` whose
    fused computation it is."""
    n = len(module.computations)
    caller: list[int | None] = [None] * n
    via_fusion = [False] * n
    index = module.computation_index
    for k, calls in module.calls.items():  # in instruction order
        is_fusion = module.ops[k].name == "fusion"
        for kind, callee in calls:
            ci = index.get(callee)
            if ci is not None and caller[ci] is None:
                caller[ci] = k
                via_fusion[ci] = kind == "calls" and is_fusion
    return caller, via_fusion


def _fusions(
    module: _Module,
    caller: list[int | None],
    via_fusion: list[bool],
    computation_of: Callable[[int], int] | None = None,
) -> list[int | None]:
    """Per computation: the ``fusion`` instruction that holds it, directly or
    through the computation its caller is in; else ``None``. ``computation_of``:
    the computation of the instruction of an index, where the module's ops do not
    say (asked only of the callers)."""
    n = len(module.computations)
    fusion: list[int | None] = [None] * n
    resolved = [False] * n
    ops = module.ops
    where: Callable[[int], int | None] = (
        computation_of if computation_of is not None else (lambda k: ops[k].computation)
    )

    def resolve(ci: int) -> int | None:
        if resolved[ci]:
            return fusion[ci]
        resolved[ci] = True  # guards against cycles
        k = caller[ci]
        if k is not None:
            fusion[ci] = k if via_fusion[ci] else resolve(where(k))  # type: ignore[arg-type]
        return fusion[ci]

    for ci in range(n):
        resolve(ci)
    return fusion


def _set_parents(ops: list[Op], caller: list[int | None], fusion: list[int | None]) -> None:
    """Sets each op's parent (the caller of its computation) and fusion."""
    for op in ops:
        ci = op.computation
        assert ci is not None  # every HLO op is in a computation
        op.parent = caller[ci]
        op.fusion = fusion[ci]


def _mark_collectives(ops: list[Op], lines: list[str]) -> tuple[int, ...]:
    """Sets the collective kind of the collective ops; returns their indices.

    A collective is ``"requested"`` when its op name ends in a primitive with which
    the program asks for one (``psum``...), else ``"inserted"`` (by the partitioner).
    The ``send``/``recv`` (and their ``-done``) of a collective across TPU slices
    (:mod:`olympus.cross_slice`; ``lines``: the module's text) are collectives too.
    """
    collectives = []
    for op in ops:
        if op.name in COLLECTIVE_OPCODES or (
            op.name in cross_slice.OPCODES
            and op.lines is not None
            and cross_slice.is_cross_slice(" ".join(lines[op.lines[0] - 1 : op.lines[1]]))
        ):
            last = op.name_stack.rsplit("/", 1)[-1]
            op.collective = "requested" if last in _REQUESTED else "inserted"
            collectives.append(op.index)
    return tuple(collectives)


def _entry_shardings(module: _Module) -> tuple[tuple[str | None, ...], tuple[str, ...]]:
    """The entry's argument shardings (by parameter number) and result sharding, as
    printed; no argument shardings at all when neither they nor the result have one."""
    args = tuple(sh for _, sh in sorted(module.params))
    root = module.root_sharding
    if not any(args) and root is None:
        args = ()
    return args, (() if root is None else (root,))
