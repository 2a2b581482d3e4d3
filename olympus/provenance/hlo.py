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

import re

from olympus.provenance.model import Computation, Op, Stage
from olympus.provenance.sources import SourceTable

__all__ = ["hlo_stage", "COLLECTIVE_OPCODES"]

_BASE_COLLECTIVES = ("all-reduce", "all-gather", "reduce-scatter", "collective-permute",
                     "all-to-all", "collective-broadcast", "ragged-all-to-all")
#: HLO opcodes of collectives, with their asynchronous halves.
COLLECTIVE_OPCODES = frozenset(
    op + suffix for op in _BASE_COLLECTIVES for suffix in ("", "-start", "-done"))
# Primitives with which a program asks for a collective itself.
_REQUESTED = frozenset({
    "psum", "pmax", "pmin", "pmean", "all_gather", "all_to_all", "ppermute", "pshuffle",
    "psum_scatter", "reduce_scatter", "pbroadcast", "all_gather_invariant",
    "psum_invariant", "ragged_all_to_all", "pgather", "axis_index", "pswapaxes"})

# An instruction line up to the opening parenthesis of its operands. A tuple
# shape nests parentheses (tiled layouts too: ``{1,0:T(8,128)}``), three deep here.
_INSTR = re.compile(
    r"\s+(ROOT )?%?([^\s=]+) = "
    r"(\((?:[^()]|\((?:[^()]|\([^()]*\))*\))*\)|\S+) ([a-z][\w\-]*)\(")
_COMPUTATION = re.compile(r"(ENTRY )?%?([^\s(]+) ")
# ``{...}`` with braces nested three deep (tuple shardings).
_SHARDING = re.compile(r", sharding=(\{(?:[^{}]|\{(?:[^{}]|\{[^{}]*\})*\})*\})")
_CALL_HINT = re.compile(r"(?:calls|to_apply|body|condition|computations)=")
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


def _closing(text: str, start: int, open_ch: str, close_ch: str) -> int:
    """Index just past the bracket that closes the one at ``start``."""
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


class _Frames:
    """The source tables of an HLO module, resolved to call stacks."""

    def __init__(self, tables: dict[str, dict[int, str]], table: SourceTable):
        self._table = table
        self.files = {k: _unquote(v) for k, v in tables.get("FileNames", {}).items()}
        self.functions = {k: _unquote(v) for k, v in tables.get("FunctionNames", {}).items()}
        self.file_locations = {k: dict((a, int(b)) for a, b in _KV.findall(v))
                               for k, v in tables.get("FileLocations", {}).items()}
        self.stack_frames = {k: dict((a, int(b)) for a, b in _KV.findall(v))
                             for k, v in tables.get("StackFrames", {}).items()}
        self._locations: dict[int, int | None] = {}

    def _raw(self, frame_id: int):
        fl = self.file_locations.get(self.stack_frames[frame_id].get("file_location_id", 0))
        if fl is None:
            return None
        line = fl.get("line", 0)
        col = fl.get("column", 0)
        return (self.files.get(fl.get("file_name_id", 0), ""), line, col,
                fl.get("end_line", line), fl.get("end_column", col),
                self.functions.get(fl.get("function_name_id", 0), ""))

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


def hlo_stage(text: str, table: SourceTable) -> Stage:
    """The HLO stage of an optimized HLO module's text (``Compiled.as_text()``)."""
    lines = text.split("\n")
    tables, start = _read_tables(lines)
    frames = _Frames(tables, table)
    # Per instruction: [name, types, lines, loc, op_name, label, computation, sharding, calls]
    rows: list[list] = []
    comps: list[list] = []  # [name, first, last, entry]
    comp_index: dict[str, int] = {}
    params: list[tuple[int, str | None]] = []  # entry parameters: (number, sharding)
    root_sharding = None
    current = None
    for lineno in range(start + 1, len(lines) + 1):
        line = lines[lineno - 1]
        if not line:
            continue
        c0 = line[0]
        if c0 != " ":
            if c0 == "}":
                if current is not None:
                    comps[current][2] = lineno
                current = None
            elif line.endswith("{"):
                m = _COMPUTATION.match(line)
                if m:
                    current = len(comps)
                    comp_index[m.group(2)] = current
                    comps.append([m.group(2), lineno, lineno, bool(m.group(1))])
            continue
        if current is None:
            continue
        m = _INSTR.match(line)
        if not m:
            continue
        is_root, label, shape, opcode = m.groups()
        after = m.end()
        op_name = ""
        loc = None
        at = line.find(", metadata={", after)
        if at >= 0:
            head = line[:at]
            p = at + 12
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
            rest = line[p:line.find("}", p)]
            f = rest.find("stack_frame_id=")
            if f >= 0:
                digits = rest[f + 15:].split(" ", 1)[0]
                if digits.isdigit():
                    loc = frames.location(int(digits))
            elif "source_file=" in rest:
                sm = _SOURCE.search(rest)
                if sm:
                    n = int(sm.group(2))
                    loc = table.location([(_unquote('"' + sm.group(1) + '"'), n, 0, n, 0, "")])
        else:
            head = line
        sharding = None
        if ", sharding={" in head:
            sh = _SHARDING.search(head, after)
            if sh is not None:
                sharding = sh.group(1)
            else:
                at = head.find(", sharding={", after) + 11
                sharding = head[at:_closing(head, at, "{", "}")]
        calls = None
        if _CALL_HINT.search(head, after) is not None:
            found = _CALLS.findall(head, after)
            for kind, names in _CALL_LISTS.findall(head, after):
                found.extend((kind, n.strip().lstrip("%")) for n in names.split(","))
            calls = found or None
        if opcode == "parameter" and comps[current][3]:
            end = line.find(")", after)
            number = line[after:end]
            if number.isdigit():
                params.append((int(number), sharding))
        elif is_root and comps[current][3]:
            root_sharding = sharding
        rows.append([opcode, (shape,), (lineno, lineno), loc, op_name, label, current,
                     sharding, calls])

    # Who calls each computation, and which fusion holds it.
    caller: list[int | None] = [None] * len(comps)
    via_fusion: list[bool] = [False] * len(comps)
    for k, row in enumerate(rows):
        if row[8]:
            for kind, name in row[8]:
                ci = comp_index.get(name)
                if ci is not None and caller[ci] is None:
                    caller[ci] = k
                    via_fusion[ci] = kind == "calls" and row[0] == "fusion"
    fusion_of: list[int | None] = [None] * len(comps)
    resolved = [False] * len(comps)

    def fusion(ci: int) -> int | None:
        if resolved[ci]:
            return fusion_of[ci]
        resolved[ci] = True  # guards against cycles
        k = caller[ci]
        if k is not None:
            fusion_of[ci] = k if via_fusion[ci] else fusion(rows[k][6])
        return fusion_of[ci]

    computations = tuple(
        Computation(name=c[0], lines=(c[1], c[2]), entry=c[3], caller=caller[i],
                    fusion=fusion(i))
        for i, c in enumerate(comps))
    ops = []
    collectives = []
    for k, row in enumerate(rows):
        opcode = row[0]
        kind = None
        if opcode in COLLECTIVE_OPCODES:
            last = row[4].rsplit("/", 1)[-1]
            kind = "requested" if last in _REQUESTED else "inserted"
            collectives.append(k)
        ci = row[6]
        # Positional: stage, index, name, types, lines, location, name_stack,
        # parent, sharding, label, computation, fusion, collective.
        ops.append(Op("hlo", k, opcode, row[1], row[2], row[3], row[4], caller[ci],
                      row[7], row[5], ci, fusion_of[ci], kind))
    arg_shardings = tuple(sh for _, sh in sorted(params))
    if not any(arg_shardings) and root_sharding is None:
        arg_shardings = ()
    return Stage("hlo", text, tuple(ops), computations=computations,
                 arg_shardings=arg_shardings,
                 result_shardings=() if root_sharding is None else (root_sharding,),
                 collectives=tuple(collectives))
