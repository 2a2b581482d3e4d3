"""The StableHLO stage: every MLIR operation, its lines, its source and its sharding.

Operations are walked with jaxlib's MLIR bindings; locations are decoded from
``NameLoc`` (the op name, ``"jit(f)/mul"``, around the call stack),
``CallSiteLoc`` (callee at caller), ``FileLineColLoc`` (a frame, named by the
``NameLoc`` around it), ``FusedLoc`` and ``UnknownLoc``.

To learn which text line each operation is printed on, a copy of the module
gets a marker location per operation (``loc("olympus.op.7")``) and is printed
with debug info: MLIR prints an operation's location at the end of its last
line. Taking out the location alias lines leaves the text of ``as_text()`` line
for line (checked: same number of lines, and each marked line reads the same up
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

import io
import re

from jax.extend.mlir import ir

from olympus.jax_compat import location_kind

from olympus.provenance.model import Op, Stage
from olympus.provenance.sources import RawFrame, SourceTable, compose

__all__ = ["stablehlo_stage", "decode_location"]

_MARKER = "olympus.op."
_ALIAS = re.compile(r'^(#loc\d*) = loc\("olympus\.op\.(\d+)"\)$')
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
    """Marks every op, prints with debug info and reads back each op's last line."""
    with root.context:
        for k, op in enumerate(ops):
            op.location = ir.Location.name(f"{_MARKER}{k}")
    buf = io.StringIO()
    root.print(file=buf, enable_debug_info=True, assume_verified=True)
    aliases: dict[str, int] = {}
    body: list[str] = []
    for line in buf.getvalue().split("\n"):
        if line.startswith("#loc"):
            m = _ALIAS.match(line)
            if m:
                aliases[m.group(1)] = int(m.group(2))
        else:
            body.append(line)
    while body and not body[-1]:
        body.pop()
    last: list[int | None] = [None] * len(ops)
    if len(body) != len(plain_lines):
        return last, (f"the debug print has {len(body)} lines, the text "
                      f"{len(plain_lines)}: operation lines are unknown")
    differ = 0
    for lineno, line in enumerate(body, start=1):
        if not line.endswith(")"):
            continue
        at = line.rfind(" loc(")
        if at < 0:
            continue
        token = line[at + 5:-1]
        if token.startswith("#loc"):
            k = aliases.get(token)
        elif token.startswith('"' + _MARKER):
            k = int(token[len(_MARKER) + 1:-1])
        else:
            k = None
        if k is not None:
            last[k] = lineno
            # Up to its location, an op's last line reads as in the plain text.
            if line[:at] != plain_lines[lineno - 1]:
                differ += 1
    note = None
    if differ:
        note = (f"{differ} line(s) of the debug print differ from the text beyond "
                f"their locations; some operation lines may be off")
    return last, note


def stablehlo_stage(module, text: str, table: SourceTable, *, owned: bool = False) -> Stage:
    """The StableHLO stage of ``module`` (an ``ir.Module`` or its operation), whose
    print without debug info is ``text``.

    The module is cloned first and the clone's locations are overwritten; pass
    ``owned=True`` to let this function change ``module`` itself instead (a
    module no one else uses, such as Olympus's ``Lowered.compiler_ir()``).
    """
    root = module.operation
    if not owned:
        root = root.clone().operation
    ops: list = []

    def visit(op):
        ops.append(op)
        return ir.WalkResult.ADVANCE

    root.walk(visit, ir.WalkOrder.PRE_ORDER)
    index_of = {op: k for k, op in enumerate(ops)}
    decoded: dict = {}
    fields = []
    own_frames: list[tuple] = []
    func_of: list[int | None] = []      # the func.func each op is in
    symbols: dict[str, int] = {}        # function name -> its func.func op
    first_call: dict[str, int] = {}     # function name -> first func.call of it
    last_in_block: dict = {}            # block -> its latest op so far
    prev_sibling: dict[int, int | None] = {}  # region op -> op before it in its block
    arg_shardings: tuple = ()
    result_shardings: tuple = ()
    for k, op in enumerate(ops):
        parent = None if k == 0 else index_of.get(op.parent)
        loc = op.location
        key = loc.attr
        hit = decoded.get(key)
        if hit is None:
            name, frames = decode_location(loc)
            hit = decoded[key] = (name or "", table.user_frames(frames))
        attrs = op.attributes
        name = op.name
        if name == "func.func":
            func_of.append(k)
            if "sym_name" in attrs:
                symbol = attrs["sym_name"].value
                symbols[symbol] = k
                if symbol == "main":
                    if "arg_attrs" in attrs:
                        arg_shardings = _dict_shardings(attrs["arg_attrs"])
                    if "res_attrs" in attrs:
                        result_shardings = _dict_shardings(attrs["res_attrs"])
        else:
            func_of.append(None if parent is None else func_of[parent])
            if name == "func.call" and "callee" in attrs:
                first_call.setdefault(attrs["callee"].value, k)
        has_regions = len(op.regions) > 0
        if k:
            block = op.block
            if has_regions:
                prev_sibling[k] = last_in_block.get(block)
            last_in_block[block] = k
        own_frames.append(hit[1])
        fields.append((name, tuple(str(r.type) for r in op.results), hit[0],
                       parent, _sharding_of(attrs) if len(attrs) else None,
                       has_regions))

    # Ops of a function other than main carry frames relative to the function:
    # their call stack goes on with that of the first call of the function.
    callers = {symbols[s]: c for s, c in first_call.items() if s in symbols}
    stacks: dict[int, tuple] = {}

    def stack(k: int, depth: int = 0) -> tuple:
        done = stacks.get(k)
        if done is not None:
            return done
        own = own_frames[k]
        call = callers.get(func_of[k])
        full = own if call is None or depth > 64 else compose(own, stack(call, depth + 1))
        stacks[k] = full
        return full

    locations = [table.intern(stack(k)) for k in range(len(ops))]

    plain_lines = text.split("\n")
    while plain_lines and not plain_lines[-1]:
        plain_lines.pop()
    last, note = _last_lines(root, ops, plain_lines)

    # An op's location is printed at the end of its last line. An op with
    # regions starts right after the op before it in its block; the first op of
    # the module right after the module's first line; other first ops of a block
    # as many lines up as they print as.
    spans: list[tuple[int, int] | None] = [None] * len(ops)
    for k, op in enumerate(ops):
        end = last[k]
        parent = fields[k][3]
        if end is None:
            spans[k] = spans[parent] if parent is not None else None
            continue
        if k == 0:
            start = next((i for i, l in enumerate(plain_lines, 1)
                          if l.startswith("module")), 1)
        elif not fields[k][5]:
            start = end
        else:
            prev = prev_sibling.get(k)
            if prev is not None and spans[prev] is not None and last[prev] is not None:
                start = spans[prev][1] + 1
            elif prev is None and parent == 0 and spans[0] is not None:
                start = spans[0][0] + 1
            else:
                start = end - _line_count(op) + 1
        spans[k] = (start, end)

    out = tuple(Op("stablehlo", k, f[0], f[1], spans[k], locations[k], f[2], f[3], f[4])
                for k, f in enumerate(fields))
    return Stage("stablehlo", text, out, arg_shardings=arg_shardings,
                 result_shardings=result_shardings, notes=(note,) if note else ())
