"""The collectives a sharded program costs: each one XLA put in, what it moves, and why.

Once a program is sharded over a mesh, XLA's SPMD partitioner rewrites it into the
program each device runs, inserting the communication the shardings call for: an
``all-gather`` where a device needs the whole of an array it holds a slice of, an
``all-reduce`` after a contraction over a sharded dimension, ``reduce-scatter``,
``all-to-all``, ``collective-permute``. :func:`collectives` reads them from the
compiled program of a provenance model (the optimized HLO), each with:

- its opcode (an asynchronous pair, ``all-gather-start``/``-done``, is one, and so
  is XLA:TPU's asynchronous collective fusion, a copy of it in each of its parts) and
  whether the program asked for it (``requested``: ``psum`` in a ``shard_map``) or
  the compiler inserted it (``inserted``);
- its replica groups as XLA prints them, and how many devices each group holds;
- the bytes of its result on each device, and an estimate of the bytes each device
  sends (:func:`moved_bytes`: what a ring algorithm sends). Only data counts: an
  asynchronous start's result holds its operands, its results and, on TPU, the
  ``u32[]`` semaphores of its synchronization (:func:`data_bytes`);
- the source lines that made it (the line whose op needed it; where XLA kept none
  on it, the nearest instructions after it that have one, followed into the
  computations that take its result, a fusion's, and out of them, else before it;
  for an asynchronous collective fusion, after its done, which gives its result)
  and the shardings of that line's ops in the lowered program, which say why;
- the arguments whose values it moves, by their pytree names
  (:mod:`olympus.argument_names`: ``params/Dense_0/kernel`` where XLA labels the
  parameter ``param.136``): those its operands are, or are made from through
  instructions that take that one array alone (copies, layout changes, slices,
  converts, fusions of it). A collective of values computed from several arrays
  (the gradient an ``all-reduce`` sums) names none;
- the parameters it serves (``parameters``, :mod:`olympus.collective_parameters`):
  the pytree leaf whose outputs its result feeds and nothing else, as the
  gradient an ``all-reduce`` sums feeds the updated parameter and its optimizer
  state (``block_0/Mlp_0/up/kernel``), one per element of a combined collective;
  none where that cannot be told exactly.

A collective across the slices of a multi-slice TPU job is no collective
instruction but a ``send`` and a ``recv`` for the multi-slice runtime
(:mod:`olympus.cross_slice`). Each pair is one :class:`Collective` of opcode
``"all-reduce (cross-slice)"`` (``all-gather``, ``all-to-all``, ``reduce-scatter``,
``collective-permute`` for ``ONE_TO_ONE``), its result the data the ``recv``
receives, its groups the target, a group being one device of each slice, its line
that of what it sends, what it serves read where its data is received.

>>> model = olympus.provenance.build(olympus.jit(lambda x: x * 2), 1.0)
>>> collectives(model)   # one device: nothing to communicate
[]
"""

from __future__ import annotations

import dataclasses
import math
import re
from typing import Any

from olympus.argument_names import entry_parameters, unescape
from olympus.collective_parameters import output_names, served_parameters
from olympus.cross_slice import CROSS_SLICE, transfer

__all__ = [
    "Collective",
    "collectives",
    "shape_bytes",
    "tuple_elements",
    "data_bytes",
    "group_size",
    "moved_bytes",
    "lines_without_source",
]

#: Bytes of one element of each HLO element type.
_ELEMENT_BYTES = {
    "pred": 1,
    "s2": 1,
    "u2": 1,
    "s4": 1,
    "u4": 1,
    "s8": 1,
    "u8": 1,
    "s16": 2,
    "u16": 2,
    "s32": 4,
    "u32": 4,
    "s64": 8,
    "u64": 8,
    "f16": 2,
    "bf16": 2,
    "f32": 4,
    "f64": 8,
    "c64": 8,
    "c128": 16,
    "f8e4m3fn": 1,
    "f8e5m2": 1,
    "f8e4m3fnuz": 1,
    "f8e5m2fnuz": 1,
    "f8e4m3b11fnuz": 1,
    "f8e4m3": 1,
    "f8e3m4": 1,
    "f4e2m1fn": 1,
    "f8e8m0fnu": 1,
}
_SHAPE = re.compile(r"\b([a-z][a-z0-9]*)\[([0-9,]*)\]")
_BASE = re.compile(r"-(start|done|update)$")


def shape_bytes(types: str) -> int:
    """Bytes of the arrays an HLO type names (a tuple's elements summed; tokens and
    unknown element types count 0).

    >>> shape_bytes("f32[64,32]{1,0}"), shape_bytes("(f32[2]{0}, bf16[4,4]{1,0})")
    (8192, 40)
    """
    total = 0
    for dtype, dims in _SHAPE.findall(types):
        size = _ELEMENT_BYTES.get(dtype)
        if size is None:
            continue
        total += size * math.prod(int(d) for d in dims.split(",") if d)
    return total


def tuple_elements(types: str) -> list[str] | None:
    """The elements of an HLO tuple type, as printed (layouts kept); ``None`` for a
    type that is not a tuple.

    >>> tuple_elements("(f32[1,128]{1,0:T(1,128)S(1)}, u32[]{:S(2)})")
    ['f32[1,128]{1,0:T(1,128)S(1)}', 'u32[]{:S(2)}']
    >>> tuple_elements("f32[4]{0}") is None
    True
    """
    text = types.strip()
    if not text.startswith("("):
        return None
    out, depth, start = [], 0, 1
    for k, ch in enumerate(text):
        if ch in "([{":
            depth += 1
        elif ch in ")]}":
            depth -= 1
            if depth == 0:  # the tuple's closing parenthesis
                out.append(text[start:k])
                break
        elif ch == "," and depth == 1:
            out.append(text[start:k])
            start = k + 1
    return [re.sub(r"/\*.*?\*/", "", e).strip() for e in out if e.strip()]


def data_bytes(opcode: str, result_types: str) -> int:
    """The bytes of data a collective instruction gives on one device, from its
    result type (``opcode`` as printed, ``all-gather-start``): the whole result of
    a synchronous one and of an ``all-reduce-start`` (typed as its result); the
    results (tuple element 1) of another asynchronous start, whose result holds
    its operands, its results and its synchronization (``u32[]`` semaphores on
    TPU); the data (element 0) of a ``send`` or ``recv``, whose result adds a
    context and a token.

    >>> data_bytes("collective-permute-start",
    ...            "(f32[1,128]{1,0}, f32[1,128]{1,0}, u32[]{:S(2)}, u32[]{:S(2)})")
    512
    >>> data_bytes("all-gather-start", "(f32[8]{0}, f32[32]{0})")
    128
    >>> data_bytes("recv", "(f32[1,1,128]{2,1,0}, u32[], token[])")
    512
    """
    parts = tuple_elements(result_types)
    if parts is not None and len(parts) >= 2:
        if opcode in ("send", "recv"):
            return shape_bytes(parts[0])
        if opcode.endswith("-start") and opcode != "all-reduce-start":
            return shape_bytes(parts[1])
    return shape_bytes(result_types)


def group_size(replica_groups: str | None) -> int | None:
    """How many devices one replica group holds, from XLA's printed form: explicit
    groups ``{{0,1},{2,3}}``, an iota list ``[2,4]<=[8]`` or a mesh with the axes
    communicated over ``mesh['a'=2,'b'=4] {'b'}``; ``None`` when it cannot tell.

    >>> group_size("{{0,1,2,3},{4,5,6,7}}"), group_size("[2,4]<=[8]")
    (4, 4)
    >>> group_size("mesh['axis_0'=1,'axis_1'=8] {'axis_1'}")
    8

    The target of a collective across TPU slices (``_xla_megascale_target``) is
    explicit groups, or slices by devices, ``"{1,2}x{0:3}"``: slices 1 and 2, each
    with its devices 0 to 3, a group being one device of each slice:

    >>> group_size("{{100000,200003},{200000,100003}}"), group_size('"{1,2}x{0:3}"')
    (2, 2)
    """
    if not replica_groups or "->" in replica_groups:  # pairs, not groups
        return None
    text = replica_groups.strip()
    m = re.match(r"\{\{([^}]*)\}", text)
    if m:
        return len([x for x in m.group(1).split(",") if x.strip()])
    m = re.match(r'"?\{([0-9,]+)\}x\{', text)
    if m:
        return len([x for x in m.group(1).split(",") if x.strip()])
    m = re.match(r"\[([0-9,]+)\]<=", text)
    if m:
        return int(m.group(1).split(",")[-1])
    m = re.match(r"mesh\[([^\]]*)\]\s*\{([^}]*)\}", text)
    if m:
        sizes = dict(re.findall(r"'([^']+)'=(\d+)", m.group(1)))
        axes = re.findall(r"'([^']+)'", m.group(2))
        if axes and all(a in sizes for a in axes):
            return math.prod(int(sizes[a]) for a in axes)
    return None


def moved_bytes(opcode: str, result: int, devices: int | None) -> int | None:
    """An estimate of the bytes each device sends for one collective, as a ring
    algorithm sends them (``result``: the bytes of its result on one device;
    ``devices``: the devices of its group). The real figure depends on the
    algorithm and the network XLA's runtime picks.

    >>> moved_bytes("all-gather", 800, 8), moved_bytes("all-reduce", 800, 8)
    (700, 1400)
    """
    if devices is None:
        return result if opcode == "collective-permute" else None
    if devices <= 1:
        return 0
    share = (devices - 1) / devices
    factor = {
        "all-gather": share,
        "all-to-all": share,
        "ragged-all-to-all": share,
        "all-reduce": 2 * share,
        "reduce-scatter": devices - 1,
        "collective-permute": 1,
        "collective-broadcast": share,
    }.get(opcode)
    return None if factor is None else round(result * factor)


@dataclasses.dataclass(frozen=True)
class Collective:
    """One collective of the compiled program (see the module's text)."""

    label: str  # the instruction, e.g. "all-gather.2"
    opcode: str  # all-gather, all-reduce, reduce-scatter, ...
    kind: str  # "inserted" (by the compiler) or "requested"
    replica_groups: str | None  # as XLA prints them
    group_size: int | None  # devices in one group
    result_bytes: int  # its result, on one device
    moved_bytes: int | None  # estimate of what each device sends
    lines: tuple[tuple[str, int], ...]  # the user's lines that made it, innermost first
    op_name: str  # JAX's name of the op it serves, e.g. jit(f)/dot_general
    shardings: tuple[str, ...]  # shardings of the lowered ops of its line
    arguments: tuple[str, ...] = ()  # pytree names of the arguments it moves
    parameters: tuple[str, ...] = ()  # pytree leaves whose outputs it feeds

    def describe(self) -> str:
        """One line for people.

        >>> Collective("all-gather", "all-gather", "inserted", None, 8, 8192, 7168,
        ...            (("m.py", 3),), "jit(f)/dot_general", ()).describe()
        'all-gather (inserted) at m.py:3, for jit(f)/dot_general: 8,192 B per device, ~7,168 B sent by each of 8 devices'
        >>> Collective("all-gather", "all-gather", "inserted", None, 8, 8192, 7168,
        ...            (), "", (), ("params/Dense_0/kernel",)).describe()
        'all-gather (inserted), moving params/Dense_0/kernel: 8,192 B per device, ~7,168 B sent by each of 8 devices'
        >>> Collective("all-reduce", "all-reduce", "inserted", None, 4, 1024, 1536,
        ...            (), "", (), (), ("Dense_0/kernel", "Dense_0/bias", "Dense_1/kernel")
        ...            ).describe()
        'all-reduce (inserted), serving Dense_0/kernel, Dense_0/bias and 1 more: 1,024 B per device, ~1,536 B sent by each of 4 devices'
        """
        where = ", ".join(f"{path.rsplit('/', 1)[-1]}:{line}" for path, line in self.lines[:1])
        text = f"{self.opcode} ({self.kind})" + (f" at {where}" if where else "")
        if self.op_name:
            text += f", for {self.op_name}"
        if self.arguments:
            text += ", moving " + ", ".join(self.arguments[:_NAMES_SAID])
            if len(self.arguments) > _NAMES_SAID:
                text += f" and {len(self.arguments) - _NAMES_SAID} more"
        if self.parameters:
            text += ", serving " + ", ".join(self.parameters[:_NAMES_SAID])
            if len(self.parameters) > _NAMES_SAID:
                text += f" and {len(self.parameters) - _NAMES_SAID} more"
        text += f": {self.result_bytes:,} B per device"
        if self.moved_bytes is not None and self.group_size:
            text += f", ~{self.moved_bytes:,} B sent by each of {self.group_size} devices"
        return text


#: The arguments a collective's one line names (its ``arguments`` hold them all).
_NAMES_SAID = 2

_GROUPS = re.compile(
    r"replica_groups=(\{\{.*?\}\}|\{\}|\[[0-9,]+\]<=\[[0-9,]+\](?:T\([0-9,]+\))?"
    r"|mesh\[[^\]]*\]\s*\{[^}]*\})"
)
_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')
_CHANNEL = re.compile(r"\bchannel_id=(\d+)")


def _instruction_text(lines: list[str], op) -> str:
    """The text of ``op``, its lines (its stage's text split once) joined."""
    if op.lines is None:
        return ""
    return " ".join(lines[op.lines[0] - 1 : op.lines[1]])


_ARG = re.compile(r"%arg(\d+)\b")


def _line_shardings(
    model, lowered, lowered_lines: list[str], line: tuple[str, int], names: dict[int, str]
) -> tuple[str, ...]:
    """The shardings a source line's lowered ops carry, and those of the function's
    arguments they read (``argument 3 (params/Dense_0/kernel): ...``, with the pytree
    name of each argument ``names`` knows): what the partitioner had to honour
    there."""
    found = []
    for ident in model.ops_for_line(line[0], line[1]).get("stablehlo", []):
        op = model.op(ident)
        if op.sharding:
            found.append(op.sharding)
        for k in _ARG.findall(_instruction_text(lowered_lines, op)):
            k = int(k)
            if k < len(lowered.arg_shardings) and lowered.arg_shardings[k]:
                name = f" ({names[k]})" if k in names else ""
                found.append(f"argument {k}{name}: {lowered.arg_shardings[k]}")
    return tuple(dict.fromkeys(found))


#: Instructions through which a collective still moves the one array they take:
#: what copies, relayouts, slices, converts or fuses it (the other operands being
#: scalars: a slice's indices, a fusion's constants).
_MOVES_THROUGH = frozenset(
    {
        "bitcast",
        "bitcast-convert",
        "broadcast",
        "collective-permute",
        "collective-permute-done",
        "collective-permute-start",
        "all-gather",
        "all-gather-done",
        "all-gather-start",
        "convert",
        "copy",
        "copy-done",
        "copy-start",
        "dynamic-slice",
        "fusion",
        "get-tuple-element",
        "optimization-barrier",
        "pad",
        "reshape",
        "slice",
        "transpose",
    }
)


def _operands(text: str, opcode: str) -> list[str]:
    """The labels of an instruction's operands, from its text."""
    at = text.find(f" {opcode}(")
    if at < 0:
        return []
    start = at + len(opcode) + 2
    depth, end = 1, start
    while end < len(text) and depth:
        depth += {"(": 1, ")": -1}.get(text[end], 0)
        end += 1
    return _NAME.findall(text[start : end - 1])


def _is_scalar(op) -> bool:
    return bool(op.types) and all(re.fullmatch(r"[a-z0-9]+\[\](\{\})?", t) for t in op.types)


def _moved_arguments(stage, lines: list[str], op, entry: dict, names: dict[str, str]):
    """The pytree names of the arguments ``op`` (a collective) moves: the entry
    parameters its operands are, or come from through :data:`_MOVES_THROUGH`
    instructions of one non-scalar operand."""
    found: list[str] = []
    todo = [(label, 0) for label in _operands(_instruction_text(lines, op), op.name)]
    seen = set()
    while todo:
        label, depth = todo.pop()
        if label in seen or label not in entry or depth > 64:
            continue
        seen.add(label)
        source = stage.ops[entry[label]]
        if source.name == "parameter":
            if label in names:
                found.append(names[label])
            continue
        if source.name not in _MOVES_THROUGH:
            continue
        arrays = [
            o
            for o in _operands(_instruction_text(lines, source), source.name)
            if o in entry and not _is_scalar(stage.ops[entry[o]])
        ]
        if len(arrays) == 1:
            todo.append((arrays[0], depth + 1))
    return tuple(dict.fromkeys(found))


_NAME = re.compile(r"%([\w.\-]+)")


#: Instructions that pass their operands to the computation they call, operand
#: ``k`` being its ``parameter(k)``: a fusion, a call, a loop (its one operand, the
#: body's and the condition's parameter), an asynchronous start.
_ENTERS = frozenset({"fusion", "call", "while", "async-start"})


class _Flow:
    """Where the value of each instruction of a compiled module goes: its users, and
    across computations, into the computation an instruction of :data:`_ENTERS`
    passes it to (its parameter there, rather than the caller: a fusion's line is its
    root's, the line that needed the value is the one inside that uses it) and out of
    a computation's ``ROOT`` to the instruction that called it. Read on first use,
    once for all the collectives without a line."""

    def __init__(self, stage, lines: list[str]):
        self._stage = stage
        self._lines = lines
        self._users: dict[str, list[tuple[int, int]]] | None = None
        self._parameters: dict[tuple[int | None, int], int] = {}
        self._roots: dict[int | None, int] = {}
        self._callees: dict[int, list[int]] = {}

    def _read(self) -> dict[str, list[tuple[int, int]]]:
        users: dict[str, list[tuple[int, int]]] = {}
        for op in self._stage.ops:
            text = _instruction_text(self._lines, op)
            if text.lstrip().startswith("ROOT "):
                self._roots[op.computation] = op.index
            if op.name == "parameter":
                at = text.find(" parameter(") + 11
                number = text[at : text.find(")", at)]
                if number.isdigit():
                    self._parameters[(op.computation, int(number))] = op.index
            for position, name in enumerate(_operands(text, op.name)):
                users.setdefault(name, []).append((op.index, position))
        for ci, computation in enumerate(self._stage.computations):
            if computation.caller is not None:
                self._callees.setdefault(computation.caller, []).append(ci)
        return users

    def downstream(self, k: int) -> list[int]:
        """The instructions that next take the value of instruction ``k``."""
        if self._users is None:
            self._users = self._read()
        ops = self._stage.ops
        op = ops[k]
        out = []
        for user, position in self._users.get(op.label or "", ()):
            entered = []
            if ops[user].name in _ENTERS:
                for ci in self._callees.get(user, ()):
                    parameter = self._parameters.get((ci, position))
                    if parameter is not None:
                        entered.append(parameter)
            out.extend(entered or [user])
        if self._roots.get(op.computation) == k:
            caller = self._stage.computations[op.computation].caller
            if caller is not None:
                out.append(caller)
        return out


def _users_lines(lines_of, stage, op, flow: _Flow) -> tuple[tuple[str, int], ...]:
    """The lines (``lines_of(op)``: an op's own) of the first instructions
    downstream of ``op`` that have one (its users, theirs, ..., followed into and
    out of called computations: ``flow``): some XLA releases give an inserted
    collective the name of the operand it moves and no source, and the line that
    needed it is the one that uses its result."""
    seen, todo = {op.index}, [op.index]
    while todo:
        found: list[tuple[str, int]] = []
        level = []
        for k in dict.fromkeys(d for t in todo for d in flow.downstream(t)):
            if k in seen:
                continue
            seen.add(k)
            level.append(k)
            found.extend(lines_of(stage.ops[k]))
        if found:
            return tuple(dict.fromkeys(found))
        todo = level
    return ()


def _result_copy(stage, copies: list):
    """Of the copies of one collective in the parts of an asynchronous collective
    fusion, the one whose result is the collective's: the copy in the part that
    gives an array, not a tuple (the done; the start and the overlapped work give
    tuples of the buffers in flight, and what else they compute), else the last."""
    for copy in reversed(copies):
        caller = stage.computations[copy.computation].caller
        if caller is not None and tuple_elements(stage.ops[caller].types[0]) is None:
            return copy
    return copies[-1]


def _copies(stage, texts: list[str], ops, entries) -> dict[tuple[str, str], list]:
    """The collectives of ``ops`` outside the entry computation by opcode (without
    ``-start``/``-done``) and channel: the copies of one collective in the parts of
    an asynchronous collective fusion, in text order."""
    copies: dict[tuple[str, str], list] = {}
    for op in ops:
        channel = _CHANNEL.search(_instruction_text(texts, op))
        if channel and op.name not in ("send", "recv") and op.computation not in entries:
            copies.setdefault((_BASE.sub("", op.name), channel.group(1)), []).append(op)
    return copies


def lines_without_source(stage, lines_of) -> dict[str, tuple[tuple[str, int], ...]]:
    """By label, the lines a collective of ``stage`` (a compiled module's HLO stage)
    without a line of its own is put down to, as :func:`collectives` does: those of
    the first instructions that use its result (an asynchronous collective fusion's
    done's); the ``fusion`` holding such a collective (a part of an asynchronous
    collective fusion) has them too. ``lines_of(op)``: an op's own lines. What
    :mod:`olympus.buffers` gives the buffer of a collective XLA kept no source for
    (XLA:TPU from jaxlib 0.12 names an FSDP weight's all-gather after the weight)."""
    texts = stage.text.split("\n")
    found = [stage.ops[k] for k in stage.collectives]
    entries = {k for k, c in enumerate(stage.computations) if c.entry}
    copies = _copies(stage, texts, found, entries)
    flow = _Flow(stage, texts)
    out: dict[str, tuple[tuple[str, int], ...]] = {}
    for op in found:
        if not op.label or op.name in ("send", "recv") or lines_of(op):
            continue
        channel = _CHANNEL.search(_instruction_text(texts, op))
        key = (_BASE.sub("", op.name), channel.group(1)) if channel else None
        same = copies.get(key, [op]) if key is not None else [op]
        lines = next((own for c in same if (own := tuple(lines_of(c)))), ())
        lines = lines or _users_lines(lines_of, stage, _result_copy(stage, same), flow)
        if lines:
            out[op.label] = lines
            if op.fusion is not None and stage.ops[op.fusion].label:
                out.setdefault(stage.ops[op.fusion].label, lines)
    return out


def _operand_lines(model, stage, lines: list[str], op, scopes) -> tuple[tuple[str, int], ...]:
    """The lines of the nearest instructions upstream of ``op`` that have one (the
    instructions of its computation whose results it takes, theirs, ...): where
    nothing after a collective has a line, the line that made what it moves.
    ``scopes``: each computation's instructions by label, filled on first use."""
    if not scopes:
        for o in stage.ops:
            if o.label:
                scopes.setdefault(o.computation, {})[o.label] = o
    scope = scopes.get(op.computation, {})
    seen, todo = {op.label}, _operands(_instruction_text(lines, op), op.name)
    for _ in range(64):
        found: list[tuple[str, int]] = []
        level = [scope[t] for t in dict.fromkeys(todo) if t in scope and t not in seen]
        seen.update(o.label for o in level)
        for o in level:
            found.extend(model.lines_for_op(o.id, frames="user"))
        if found or not level:
            return tuple(dict.fromkeys(found))
        todo = [t for o in level for t in _operands(_instruction_text(lines, o), o.name)]
    return ()


def _result_types(text: str, opcode: str) -> str:
    head = text.split(" = ", 1)[1] if " = " in text else text
    return head.split(f" {opcode}(", 1)[0]


def collectives(model) -> list[Collective]:
    """Every collective of the compiled program of ``model`` (a provenance model
    with its ``compiled`` stage), in program order; the ``-done`` half of an
    asynchronous pair is left out (its ``-start`` stands for both), and so are the
    copies of a collective in the parts of an asynchronous collective fusion (the
    first stands for all: one channel), and the ``recv`` of a collective across
    slices (its ``send`` stands for both)."""
    if "compiled" not in model.stages:
        return []
    found = model.collectives()
    if not found:  # nothing more to read (a program on one device, most often)
        return []
    stage = model.stages["compiled"]
    lowered = model.stages.get("stablehlo")
    texts = stage.text.split("\n")
    flow = _Flow(stage, texts)  # read when a collective has no line
    scopes: dict = {}  # likewise

    def lines_of(o) -> list[tuple[str, int]]:
        return model.lines_for_op(o.id, frames="user")

    parameters = entry_parameters(stage.text)
    by_label = {p.label: p.name for p in parameters.values() if p.name}
    by_number = {n: p.name for n, p in parameters.items() if p.name}
    entries = {k for k, c in enumerate(stage.computations) if c.entry}
    entry = {op.label: op.index for op in stage.ops if op.label and op.computation in entries}
    lowered_texts = lowered.text.split("\n") if lowered is not None else []
    line_shardings: dict[tuple[str, int], tuple[str, ...]] = {}
    # A cross-slice collective's halves, by their rendezvous: its send stands for
    # both; what it serves is read at the recv-done that gives its data.
    halves: dict[tuple[str, str | None], Any] = {}
    done: dict[str, str] = {}  # recv -> its recv-done
    for op in found:
        if op.name in ("send", "recv"):
            halves.setdefault((op.name, transfer(_instruction_text(texts, op)).rendezvous), op)
        elif op.name == "recv-done" and op.label:
            for label in _operands(_instruction_text(texts, op), op.name)[:1]:
                done[label] = op.label
    served = served_parameters(
        texts, output_names(lowered.text) if lowered is not None else None, also=done.values()
    )
    out = []
    # XLA:TPU's asynchronous collective fusions hold a copy of their collective in each
    # part (start, the work overlapped with it, done), one channel for all: one collective.
    copies = _copies(stage, texts, found, entries)
    for op in found:
        m = _BASE.search(op.name)
        if m and m.group(1) != "start":
            continue
        opcode = _BASE.sub("", op.name)
        text = _instruction_text(texts, op)
        channel = _CHANNEL.search(text)
        same = copies.get((opcode, channel.group(1)), [op]) if channel else [op]
        if same[0] is not op:
            continue
        result = data_bytes(op.name, _result_types(text, op.name))
        groups = _GROUPS.search(text)
        replica_groups = groups.group(1) if groups else None
        receiver = None
        if op.name in ("send", "recv"):  # a collective across slices
            opcode, rendezvous, replica_groups = transfer(text)
            if op.name == "recv" and ("send", rendezvous) in halves:
                continue
            receiver = halves.get(("recv", rendezvous), op) if rendezvous else op
            received = _instruction_text(texts, receiver)
            result = data_bytes("recv", _result_types(received, receiver.name))
        devices = group_size(replica_groups)
        # Its own line, else that of another copy of it.
        lines = next((own for c in same if (own := tuple(lines_of(c)))), ())
        if not lines and receiver is not None:  # what it sends was made, then needed
            lines = _operand_lines(model, stage, texts, op, scopes) or _users_lines(
                lines_of, stage, receiver, flow
            )
        elif not lines:  # what needs its result, else what made what it moves
            lines = _users_lines(
                lines_of, stage, _result_copy(stage, same), flow
            ) or _operand_lines(model, stage, texts, op, scopes)
        shardings: tuple[str, ...] = ()
        if lowered is not None and lines:
            if lines[0] not in line_shardings:  # many collectives share a line
                line_shardings[lines[0]] = _line_shardings(
                    model, lowered, lowered_texts, lines[0], by_number
                )
            shardings = line_shardings[lines[0]]
        moved = _moved_arguments(stage, texts, op, entry, by_label)
        if moved:  # the shardings of what it moves first, then the rest of its line's
            shardings = tuple(
                sorted(shardings, key=lambda s: not any(f" ({n}): " in s for n in moved))
            )
        name = _OP_NAME.search(text)
        out.append(
            Collective(
                op.label or op.name,
                opcode if receiver is None else opcode + CROSS_SLICE,
                op.collective or "inserted",
                replica_groups,
                devices,
                result,
                moved_bytes(opcode, result, devices),
                lines,
                unescape(name.group(1)) if name else op.name_stack,
                shardings,
                moved,
                served.get(
                    (op.label or "") if receiver is None else done.get(receiver.label or "", ""),
                    (),
                ),
            )
        )
    return out
