"""The StableHLO stage: every MLIR operation, its lines, its source and its sharding.

Operations are walked with jaxlib's MLIR bindings; locations are decoded from
``NameLoc`` (the op name, ``"jit(f)/mul"``, around the call stack),
``CallSiteLoc`` (callee at caller), ``FileLineColLoc`` (a frame, named by the
``NameLoc`` around it), ``FusedLoc`` and ``UnknownLoc``.

To learn which text line each operation is printed on, a copy of the module
gets a marker location per operation (``loc("olympus.op.7")``) and is printed
with debug info: MLIR prints an operation's location at the end of its last
line. Printed in local scope (no alias lines), or else with the location alias
lines taken out, that print is the text of ``as_text()`` line for line (checked: same number of lines, and each marked line reads the same up
to its location). An operation with regions starts on the line after the
operation before it in its block (or, first in its block, ``n - 1`` lines above
its last line, ``n`` being the number of lines it prints as); operations the
printer elides (the body of a compact ``stablehlo.reduce``) get their parent's
lines.

>>> lowered = olympus.jit(lambda x: jnp.sin(x) * 2).trace(1.0).lower()
>>> stage = stablehlo_stage(lowered.compiler_ir(), lowered.as_text(), SourceTable())
>>> [(op.name, op.name_stack) for op in stage.ops if op.name_stack.endswith(('sin', 'mul'))]
[('stablehlo.sine', 'jit(<lambda>)/sin'), ('stablehlo.multiply', 'jit(<lambda>)/mul')]
>>> 'stablehlo.sine' in lowered.as_text().splitlines()[stage.ops[2].lines[0] - 1]
True
"""

from __future__ import annotations

import dataclasses
import io
import re

from jax.extend.mlir import ir

from olympus.jax_compat import location_kind

from olympus.provenance.parts import Op, Stage
from olympus.provenance.sources import RawFrame, SourceTable, compose

__all__ = ["stablehlo_stage", "decode_location"]

_MARKER = "olympus.op."
_ALIAS = re.compile(r'^(#loc\d*) = loc\("olympus\.op\.(\d+)"\)$', re.MULTILINE)
_SHARDING_ATTRS = ("mhlo.sharding", "sdy.sharding", "sharding")


def _file_frame(loc, function: str) -> RawFrame:
    return (loc.filename, loc.start_line, loc.start_col, loc.end_line, loc.end_col, function)


def decode_location(loc) -> tuple[str | None, tuple[RawFrame, ...]]:
    """``(op name, frames innermost first)`` of an MLIR location.

    JAX writes ``loc("jit(f)/sin"(callsite("f"("x.py":5:8) at ...)))``: the outer
    name is the op name; a name right around a file position names the frame's
    function.
    """
    kind = location_kind(loc)
    if kind == "name":
        child = loc.child_loc
        if location_kind(child) == "file":
            return None, (_file_frame(child, loc.name_str),)
        _, frames = decode_location(child)
        return loc.name_str, frames
    if kind == "callsite":
        callee_name, callee = decode_location(loc.callee)
        _, caller = decode_location(loc.caller)
        return callee_name, callee + caller
    if kind == "file":
        return None, (_file_frame(loc, ""),)
    if kind == "fused":
        name, frames = None, ()
        for sub in loc.locations:
            n, f = decode_location(sub)
            name = name or n
            frames = frames or f
        return name, frames
    return None, ()


def _attr_text(attr) -> str:
    if isinstance(attr, ir.StringAttr):
        return attr.value
    return str(attr)


def _sharding_of(attrs) -> str | None:
    for name in _SHARDING_ATTRS:
        if name in attrs:
            return _attr_text(attrs[name])
    return None


def _dict_shardings(array_attr) -> tuple[str | None, ...]:
    out = []
    for i in range(len(array_attr)):
        entry = array_attr[i]
        out.append(_sharding_of(entry) if isinstance(entry, ir.DictAttr) else None)
    return tuple(out)


def _line_count(op) -> int:
    text = op.get_asm(assume_verified=True, use_local_scope=True)
    return text.rstrip("\n").count("\n") + 1


def _last_lines(root, ops: list, plain_lines: list[str]) -> tuple[list[int | None], str | None]:
    """Marks every op, prints with debug info and reads back each op's last line.

    The print in local scope writes each marker where it belongs (no alias lines)
    and is the faster one; where it does not read as the text line for line
    (aliases of attributes or types that the text uses), the print with aliases
    is read instead.
    """
    with root.context:
        for k, op in enumerate(ops):
            op.location = ir.Location.name(f"{_MARKER}{k}")
    result = None
    for local in (True, False):
        buf = io.StringIO()
        root.print(file=buf, enable_debug_info=True, assume_verified=True, use_local_scope=local)
        result = _read_marks(buf.getvalue(), len(ops), plain_lines)
        if result[1] is None:
            break
    assert result is not None  # the loop ran
    return result


def _read_marks(
    printed: str, count: int, plain_lines: list[str]
) -> tuple[list[int | None], str | None]:
    """Each marked op's last line in a debug print, and a note if the print does
    not read as the text, line for line, up to the locations."""
    # Alias lines (`#loc7 = loc("olympus.op.7")`), if any, follow the body.
    aliases = {m.group(1): int(m.group(2)) for m in _ALIAS.finditer(printed)}
    body = [line for line in printed.split("\n") if not line.startswith("#loc")]
    while body and not body[-1]:
        body.pop()
    last: list[int | None] = [None] * count
    if len(body) != len(plain_lines):
        return last, (
            f"the debug print has {len(body)} lines, the text "
            f"{len(plain_lines)}: operation lines are unknown"
        )
    differ = 0
    marker = '"' + _MARKER
    skip = len(marker)
    for lineno, line in enumerate(body, start=1):
        if line[-1:] != ")":
            continue
        at = line.rfind(" loc(")
        if at < 0:
            continue
        token = line[at + 5 : -1]
        if token[:4] == "#loc":
            k = aliases.get(token)
        elif token[:skip] == marker:
            k = int(token[skip:-1])
        else:
            continue
        if k is not None:
            last[k] = lineno
            # Up to its location, an op's last line reads as in the plain text.
            if line[:at] != plain_lines[lineno - 1]:
                differ += 1
    if differ:
        return last, (
            f"{differ} line(s) of the debug print differ from the text "
            f"beyond their locations; some operation lines may be off"
        )
    return last, None


@dataclasses.dataclass(slots=True)
class _Operation:
    """One MLIR operation as read, before its lines and whole call stack are known."""

    name: str
    types: tuple[str, ...]
    name_stack: str
    parent: int | None  # index of the op whose region holds it
    sharding: str | None
    has_regions: bool
    frames: tuple[RawFrame, ...]  # its user frames, as far as its function goes
    function: int | None  # the func.func it is in (or is)
    prev_sibling: int | None = None  # with regions: the op before it in its block


@dataclasses.dataclass
class _Walk:
    """What a pre-order walk of a module reads: every operation, and the module's
    functions, calls and entry shardings."""

    ops: list  # the MLIR operations
    operations: list[_Operation] = dataclasses.field(default_factory=list)
    symbols: dict[str, int] = dataclasses.field(default_factory=dict)  # -> func.func
    first_call: dict[str, int] = dataclasses.field(default_factory=dict)  # -> func.call
    arg_shardings: tuple[str | None, ...] = ()  # of main
    result_shardings: tuple[str | None, ...] = ()


def stablehlo_stage(
    module, text: str, table: SourceTable, *, name: str = "stablehlo", owned: bool = False
) -> Stage:
    """The StableHLO stage of ``module`` (an ``ir.Module`` or its operation), whose
    print without debug info is ``text``.

    The module is cloned first and the clone's locations are overwritten; pass
    ``owned=True`` to let this function change ``module`` itself instead (a
    module no one else uses, such as Olympus's ``Lowered.compiler_ir()``).
    ``name`` names the stage, and so the ids of its ops:

    >>> lowered = olympus.jit(jnp.sin).trace(1.0).lower()
    >>> stage = stablehlo_stage(lowered.compiler_ir(), lowered.as_text(), SourceTable(),
    ...                         name="stablehlo_again")
    >>> stage.name, stage.ops[0].id
    ('stablehlo_again', 'stablehlo_again:0')
    """
    root = module.operation
    if not owned:
        root = root.clone().operation
    walk = _walk(root, table)  # reads the locations that _last_lines overwrites
    locations = _locations(walk, table)
    plain_lines = text.split("\n")
    while plain_lines and not plain_lines[-1]:
        plain_lines.pop()
    last, note = _last_lines(root, walk.ops, plain_lines)
    spans = _spans(walk, last, plain_lines)
    # Positional, as keywords take twice as long: stage, index, name, types, lines,
    # location, name_stack, parent, sharding.
    ops = tuple(
        Op(name, k, o.name, o.types, spans[k], locations[k], o.name_stack, o.parent, o.sharding)
        for k, o in enumerate(walk.operations)
    )
    return Stage(
        name,
        text,
        ops,
        arg_shardings=walk.arg_shardings,
        result_shardings=walk.result_shardings,
        notes=(note,) if note else (),
    )


def _walk(root, table: SourceTable) -> _Walk:
    """Reads every operation under ``root`` (itself first), in pre-order."""
    ops: list = []

    def visit(op):
        ops.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    walk = _Walk(ops)
    operations = walk.operations
    index_of = {op: k for k, op in enumerate(ops)}
    decoded: dict = {}  # location attribute -> (name stack, user frames)
    type_texts: dict = {}  # MLIR type -> its text (printed once)
    last_in_block: dict = {}  # block -> its latest op so far
    for k, op in enumerate(ops):
        parent = None if k == 0 else index_of.get(op.parent)
        name_stack, frames = _read_location(op.location, decoded, table)
        attrs = op.attributes
        op_name = op.name
        if op_name == "func.func":
            function: int | None = k
            if "sym_name" in attrs:
                _read_function(walk, k, attrs)
        else:
            function = None if parent is None else operations[parent].function
            if op_name == "func.call" and "callee" in attrs:
                walk.first_call.setdefault(attrs["callee"].value, k)
        # An op with regions prints from the line after the op before it (_spans).
        has_regions = len(op.regions) > 0
        prev_sibling = None
        if k:
            block = op.block
            if has_regions:
                prev_sibling = last_in_block.get(block)
            last_in_block[block] = k
        types = tuple(
            type_texts.get(t) or type_texts.setdefault(t, str(t)) for t in op.results.types
        )
        operations.append(
            _Operation(
                op_name,
                types,
                name_stack,
                parent,
                _sharding_of(attrs) if len(attrs) else None,
                has_regions,
                frames,
                function,
                prev_sibling,
            )
        )
    return walk


def _read_location(loc, decoded: dict, table: SourceTable) -> tuple[str, tuple[RawFrame, ...]]:
    """The name stack (``""`` if none) and user frames of ``loc``; ``decoded`` keeps
    them by location attribute (ops of one source line share their location)."""
    key = loc.attr
    hit = decoded.get(key)
    if hit is None:
        name_stack, frames = decode_location(loc)
        hit = decoded[key] = (name_stack or "", table.user_frames(frames))
    return hit


def _read_function(walk: _Walk, k: int, attrs) -> None:
    """Notes the symbol of func.func ``k``, and the shardings of ``main``'s
    arguments and results."""
    symbol = attrs["sym_name"].value
    walk.symbols[symbol] = k
    if symbol == "main":
        if "arg_attrs" in attrs:
            walk.arg_shardings = _dict_shardings(attrs["arg_attrs"])
        if "res_attrs" in attrs:
            walk.result_shardings = _dict_shardings(attrs["res_attrs"])


def _locations(walk: _Walk, table: SourceTable) -> list[int | None]:
    """Each op's location: its whole user call stack, interned in ``table``.

    Ops of a function other than main carry frames relative to the function:
    their call stack goes on with that of the first call of the function.
    """
    callers: dict[int | None, int] = {
        walk.symbols[s]: c for s, c in walk.first_call.items() if s in walk.symbols
    }
    operations = walk.operations
    stacks: dict[int, tuple] = {}

    def stack(k: int, depth: int = 0) -> tuple:
        done = stacks.get(k)
        if done is not None:
            return done
        own = operations[k].frames
        call = callers.get(operations[k].function)
        full = own if call is None or depth > 64 else compose(own, stack(call, depth + 1))
        stacks[k] = full
        return full

    # Ops of one line share their stack (the same tuple): intern each stack once.
    interned: dict[int, int | None] = {}
    out = []
    for k in range(len(operations)):
        full = stack(k)
        i = interned.get(id(full), -1)
        if i == -1:
            i = interned[id(full)] = table.intern(full)
        out.append(i)
    return out


def _spans(
    walk: _Walk, last: list[int | None], plain_lines: list[str]
) -> list[tuple[int, int] | None]:
    """Each op's first and last line, from its last line (``last``).

    An op's location is printed at the end of its last line. An op with regions
    starts right after the op before it in its block; the first op of the module
    right after the module's first line; other first ops of a block as many lines
    up as they print as. An op the printer elides has its parent's lines.
    """
    operations = walk.operations
    spans: list[tuple[int, int] | None] = [None] * len(operations)
    for k, o in enumerate(operations):
        end = last[k]
        parent = o.parent
        if end is None:
            spans[k] = spans[parent] if parent is not None else None
            continue
        if k == 0:
            start = next((i for i, ln in enumerate(plain_lines, 1) if ln.startswith("module")), 1)
        elif not o.has_regions:
            start = end
        else:
            prev = o.prev_sibling
            if prev is not None and (span := spans[prev]) is not None and last[prev] is not None:
                start = span[1] + 1
            elif prev is None and parent == 0 and spans[0] is not None:
                start = spans[0][0] + 1
            else:
                start = end - _line_count(walk.ops[k]) + 1
        spans[k] = (start, end)
    return spans
