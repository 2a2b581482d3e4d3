"""The parameters a collective serves: the pytree leaf whose outputs its result feeds.

A gradient's collective (the ``all-reduce`` or ``reduce-scatter`` that sums one
parameter's gradient over the devices holding slices of the batch) moves a value
computed from many arrays, so its operands name no argument. What it serves shows
downstream: its result flows, through the optimizer's arithmetic, into the
program's outputs for that parameter, the updated parameter and its optimizer
state (``result/0/params/block_0/up/kernel``, ``result/1/mu/block_0/up/kernel``,
...). :func:`served_parameters` follows each collective's result (each element of a
combined, tuple-shaped one apart) forward through the def-use chain of the
compiled program's entry computation to the outputs it reaches, and names the
parameter by what every one of those outputs has in common:

- the outputs are named by their pytree path, from the ``jax.result_info`` JAX
  puts on each result of the lowered program's ``main`` (``result[0]['w']``, read
  as ``result/0/w``), in the order of the compiled program's root tuple;
- the name is the longest common trailing path of the outputs reached
  (``block_0/up/kernel``), and it is given only where the outputs ending with
  that path are exactly those reached: the collective feeds that leaf in every
  tree that holds it, and nothing else. A collective of the forward pass, whose
  result reaches the loss and every parameter, names none.

Nothing is guessed: where a value passes through an instruction that takes or
gives several values at once and is not followed element by element (a
multi-output fusion, a ``while`` loop, a ``call``), the outputs it reaches are not
known exactly and the element names nothing; so does a collective outside the
entry computation, or a program whose outputs cannot be lined up with their
names. One pass over the entry computation, in reverse text order (an HLO
module's text defines each value before its uses), with the outputs reached as a
bit set per instruction: linear in the program's size and its outputs.

>>> compiled = '''ENTRY %main (p0: f32[4], p1: f32[4]) -> (f32[4], f32[4], f32[]) {
...   %p0 = f32[4]{0} parameter(0)
...   %p1 = f32[4]{0} parameter(1)
...   %g = f32[4]{0} all-reduce(%p1), replica_groups={{0,1}}, to_apply=%add
...   %w = f32[4]{0} subtract(%p0, %g)
...   %m = f32[4]{0} multiply(%g, %g)
...   %l = f32[] reduce(%p0, %c), dimensions={0}, to_apply=%add
...   ROOT %t = (f32[4]{0}, f32[4]{0}, f32[]) tuple(%w, %m, %l)
... }'''
>>> names = ["result/0/params/w", "result/1/mu/w", "result/2"]
>>> reached = outputs_reached(compiled.split("\\n"), len(names))
>>> reached["g"]
Reach(bits=3, exact=True, elements=None)
>>> parameter_of(reached["g"].bits, names)
'w'
>>> parameter_of(reached["p0"].bits, names) is None   # the loss too: no one leaf
True
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Collection, Sequence

from olympus.argument_names import readable, unescape

__all__ = [
    "Reach",
    "output_names",
    "outputs_reached",
    "parameter_of",
    "served_parameters",
]

_RESULT_INFO = re.compile(r'(?:jax|olympus)\.result_info\s*=\s*"((?:[^"\\]|\\.)*)"')
_INSTRUCTION = re.compile(r"^\s*(ROOT\s+)?%?([^\s=]+) = (.*)$")
_LABEL = re.compile(r"%([\w.\-]+)")
_INDEX = re.compile(r"\bindex=(\d+)")


def output_names(stablehlo_text: str) -> list[str] | None:
    """The pytree name of each result of the lowered program's ``main`` function,
    in order (:func:`~olympus.argument_names.readable` of its ``jax.result_info``,
    which Olympus writes ``olympus.result_info``),
    ``None`` where its signature cannot be read.

    >>> output_names('func.func public @main(%arg0: tensor<3xf32>) -> '
    ...              '(tensor<3xf32> {jax.result_info = "result[0][\\'w\\']"}, '
    ...              'tensor<f32> {jax.result_info = "result[1]"}) {')
    ['result/0/w', 'result/1']
    """
    at = stablehlo_text.find("@main(")
    if at < 0:
        return None
    end = stablehlo_text.find("{\n", at)
    header = stablehlo_text[at : end if end >= 0 else len(stablehlo_text)]
    arrow = header.find(") -> ")
    if arrow < 0:
        return None
    found = _RESULT_INFO.findall(header[arrow:])
    return [readable(unescape(n)) for n in found] or None


@dataclasses.dataclass(frozen=True)
class Reach:
    """The outputs one value reaches: ``bits`` (bit ``k``: output ``k``), ``exact``
    (``False`` where a path went through an instruction not followed element by
    element: the bits then hold more than it may reach), and for a tuple-shaped
    value its ``elements``' own reaches, by index (``None`` for an array)."""

    bits: int
    exact: bool
    elements: dict[int, Reach] | None = None


def _operands(head: str, opcode: str) -> list[str]:
    at = head.find(f" {opcode}(")
    if at < 0:
        return []
    start = at + len(opcode) + 2
    depth, end = 1, start
    while end < len(head) and depth:
        depth += {"(": 1, ")": -1}.get(head[end], 0)
        end += 1
    return _LABEL.findall(head[start : end - 1])


def _parse(lines: Sequence[str]):
    """The entry computation's instructions: ``(label, opcode, tuple-shaped, operands,
    get-tuple-element index, root)`` in text order."""
    at = next((k for k, t in enumerate(lines) if t.startswith("ENTRY ")), None)
    out: list[tuple[str, str, bool, list[str], int | None, bool]] = []
    if at is None:
        return out
    for text in lines[at + 1 :]:
        if text.startswith("}"):
            break
        m = _INSTRUCTION.match(text)
        if m is None:
            continue
        root, label, rest = m.groups()
        tuple_shaped = rest.startswith("(")
        if tuple_shaped:  # skip the tuple type, parentheses nested
            depth, k = 0, 0
            for k, ch in enumerate(rest):
                depth += {"(": 1, ")": -1}.get(ch, 0)
                if depth == 0:
                    break
            after = rest[k + 1 :].lstrip()
        else:
            after = rest.split(" ", 1)[1] if " " in rest else ""
        opcode = after.split("(", 1)[0].strip()
        index = _INDEX.search(after) if opcode == "get-tuple-element" else None
        out.append(
            (
                label,
                opcode,
                tuple_shaped,
                _operands(" " + after, opcode),
                int(index.group(1)) if index else None,
                bool(root),
            )
        )
    return out


def outputs_reached(lines: Sequence[str], outputs: int) -> dict[str, Reach]:
    """Per instruction of the entry computation of an optimized HLO module (its
    text, split in lines), by label, the program outputs its value reaches
    (:class:`Reach`). ``outputs``: how many the program has; ``{}`` where its root
    does not give that many (a root tuple of as many elements, or one array)."""
    return _reached(_parse(lines), outputs)


def _reached(instructions, outputs: int) -> dict[str, Reach]:
    """:func:`outputs_reached` of the entry computation's instructions as
    :func:`_parse` reads them."""
    if not instructions:
        return {}
    root = next((i for i in reversed(instructions) if i[5]), None)
    if (
        root is None
        or (root[1] == "tuple" and len(root[3]) != outputs)
        or (root[1] != "tuple" and (outputs != 1 or root[2]))
    ):
        return {}
    users: dict[str, list[tuple[int, int]]] = {}
    for k, (_, _, _, operands, _, _) in enumerate(instructions):
        for position, name in enumerate(operands):
            users.setdefault(name, []).append((k, position))
    reach: list[Reach | None] = [None] * len(instructions)
    by_label: dict[str, Reach] = {}
    for k in range(len(instructions) - 1, -1, -1):
        label, opcode, tuple_shaped, _, _, is_root = instructions[k]
        bits = 1 if is_root and root[1] != "tuple" else 0
        exact = True
        whole_only = False  # a user takes the whole tuple: its elements are not known
        elements: dict[int, list] = {}
        passed: dict[int, Reach] | None = None
        for u, position in users.get(label, ()):
            _, user_opcode, user_tuple, user_operands, index, user_root = instructions[u]
            got = reach[u]
            if user_root and user_opcode == "tuple":
                bits |= 1 << position
                continue
            if got is None:  # a use before its definition: not a module's text order
                exact = False
                continue
            if tuple_shaped and user_opcode != "get-tuple-element":
                whole_only = whole_only or not user_opcode.endswith("-done")
            if user_opcode == "get-tuple-element" and tuple_shaped and index is not None:
                part = elements.setdefault(index, [0, True])
                part[0] |= got.bits
                part[1] = part[1] and got.exact
                bits, exact = bits | got.bits, exact and got.exact
            elif user_opcode == "tuple" and got.elements is not None:
                # Element ``position`` of a tuple: what its reads reach.
                if position in got.elements:
                    bits |= got.elements[position].bits
                    exact = exact and got.elements[position].exact
                else:  # not read by element: read whole (not known), or not at all
                    bits |= got.bits
                    exact = exact and got.exact and not got.bits
            elif user_opcode.endswith("-done") and opcode.endswith("-start"):
                # The half of an asynchronous pair that gives the value started.
                bits, exact = bits | got.bits, exact and got.exact
                passed = got.elements
            elif user_opcode.endswith("-start") and len(user_operands) > 1:
                # A combined asynchronous collective: operand ``position`` gives
                # element ``position``.
                part_reach = (got.elements or {}).get(position)
                bits |= got.bits if part_reach is None else part_reach.bits
                exact = exact and part_reach is not None and part_reach.exact
            elif user_tuple and not user_opcode.endswith("-start"):
                # Several results, not followed element by element.
                bits, exact = bits | got.bits, False
            else:
                bits, exact = bits | got.bits, exact and got.exact
        parts = None
        if tuple_shaped:
            parts = passed or {i: Reach(b, e and not whole_only) for i, (b, e) in elements.items()}
        reach[k] = Reach(bits, exact, parts)
        by_label[label] = reach[k]  # type: ignore[assignment]
    return by_label


def parameter_of(bits: int, names: Sequence[str]) -> str | None:
    """The leaf a value serves: the longest trailing path that the names of the
    outputs it reaches (``bits`` over ``names``) share, where the outputs ending
    with it are exactly those; ``None`` where there is no such path.

    >>> names = ["result/0/w", "result/0/b", "result/1/mu/w", "result/1/mu/b", "result/2"]
    >>> parameter_of(0b101, names), parameter_of(0b1, names), parameter_of(0b11, names)
    ('w', 'result/0/w', None)
    """
    return _parameter_of(bits, [name.split("/") for name in names])


def _parameter_of(bits: int, split: Sequence[list[str]]) -> str | None:
    reached = [split[k] for k in range(len(split)) if bits >> k & 1]
    if not reached:
        return None
    common = reached[0]
    for parts in reached[1:]:
        n = 0
        while n < min(len(common), len(parts)) and common[-1 - n] == parts[-1 - n]:
            n += 1
        common = common[len(common) - n :]
        if not common:
            return None
    ending = sum(1 << k for k, parts in enumerate(split) if parts[-len(common) :] == common)
    return "/".join(common) if ending == bits else None


def served_parameters(
    compiled_lines: Sequence[str], names: Sequence[str] | None, also: Collection[str] = ()
):
    """For each collective of the entry computation of an optimized HLO module (its
    text split in lines), by label, the parameters it serves (:func:`parameter_of`
    of each element of its result that reaches the outputs exactly), named over the
    program's output ``names`` (:func:`output_names`); ``{}`` without names.
    ``also``: the labels of other instructions to read so (the ``recv-done`` of a
    collective across TPU slices, whose data is its element 0).

    An asynchronous collective (``all-reduce-start``) is read at its ``-done``."""
    if not names:
        return {}
    instructions = _parse(compiled_lines)  # read once for both
    reached = _reached(instructions, len(names))
    if not reached:
        return {}
    split = [name.split("/") for name in names]
    out: dict[str, tuple[str, ...]] = {}
    for label, opcode, _, _, _, _ in instructions:
        if label not in also and (not _COLLECTIVE.match(opcode) or opcode.endswith("-done")):
            continue
        value = reached.get(label)  # a -start's: what its -done gives
        if value is None:
            continue
        found = []
        for part in (
            [value.elements[i] for i in sorted(value.elements)] if value.elements else [value]
        ):
            name = _parameter_of(part.bits, split) if part.exact else None
            if name:
                found.append(name)
        if found:
            out[label] = tuple(dict.fromkeys(found))
    return out


_COLLECTIVE = re.compile(
    r"^(all-gather|all-reduce|reduce-scatter|all-to-all|ragged-all-to-all"
    r"|collective-permute|collective-broadcast)(-start|-done)?$"
)
