"""Which instructions an op of an earlier stage became: an olympuspr equation or a
StableHLO op, matched to the HLO instructions that came from it.

XLA keeps two things of the op an instruction came from, in its metadata: the op's
name (``op_name``: the name stack and the primitive, ``jit(f)/transpose(jvp())/mul``)
and its call stack (the source lines, innermost first). An op of an earlier stage
is matched on both: an instruction came from it when its ``op_name`` ends with the
op's own name (path by path: an olympuspr equation's name stack and primitive,
``transpose(jvp())/mul``; a StableHLO op's name stack) and its call stack starts
with the op's (compared by file and line: XLA keeps no more of a frame). Ops that
agree in both (two ``mul`` of one line and one transform) share their
instructions: XLA's metadata cannot tell them apart. An op that holds others (a
``jit``, ``scan`` or ``cond`` equation, a ``while`` or a function of StableHLO)
stands for the ops it holds too.

>>> def f(x):
...     return jnp.sin(x) * 2.0
>>> model = olympus.provenance.build(olympus.jit(f).trace(np.ones(4, np.float32)).lower().compile())
>>> sin = next(op.id for op in model.stages["olympuspr"].ops if op.name == "sin")
>>> keys = op_keys(model, sin)
>>> [k.name for k in keys]
['sin']
>>> tables = model.source_tables()
>>> [op.name for op in model.stages["compiled"].ops
...  if matches_any(keys, *instruction_key(tables, op))]
['sine']
"""

from __future__ import annotations

from operator import attrgetter
from collections.abc import Iterable, Mapping, Sequence
from typing import Any, NamedTuple

from olympus.provenance.parts import Op, parse_op_id

__all__ = [
    "OpKey",
    "KeyIndex",
    "op_keys",
    "own_key",
    "keys_by_op",
    "instruction_key",
    "line_stack",
    "matches_any",
    "OP_STAGES",
]

#: The stages whose ops a journey or a cost share starts from.
OP_STAGES = ("olympuspr", "stablehlo")

Stack = tuple[tuple[str, int], ...]


class OpKey(NamedTuple):
    """What XLA's metadata keeps of one op: ``name`` (the end of the ``op_name`` of
    the instructions it made) and ``stack`` (the start of their call stack, as
    ``(file, line)``, innermost first). A named tuple: a key is hashed and compared
    in C wherever ops' keys are looked up (hundreds of thousands of times on a
    program of 50,000 instructions; a frozen dataclass hashes in Python).

    >>> key = OpKey("jvp()/mul", (("m.py", 3),))
    >>> key.matches("jit(f)/jvp()/mul", (("m.py", 3), ("m.py", 9)))
    True
    >>> key.matches("jit(f)/transpose(jvp())/mul", (("m.py", 3),))
    False
    """

    name: str
    stack: Stack

    @property
    def leaf(self) -> str:
        """The last part of the name (the primitive)."""
        return self.name.rsplit("/", 1)[-1]

    def matches(self, op_name: str, stack: Stack) -> bool:
        """Whether an instruction of this ``op_name`` and call ``stack`` came from the op.
        Stacks are compared as deep as both go: XLA's metadata keeps a limited number
        of frames (JAX 0.9 keeps the innermost 10), the olympuspr's every one.

        >>> key = OpKey("sin", (("m.py", 3), ("m.py", 9), ("runner.py", 40)))
        >>> key.matches("jit(f)/sin", (("m.py", 3), ("m.py", 9)))
        True
        >>> key.matches("jit(f)/sin", (("m.py", 4), ("m.py", 9)))
        False
        """
        if not (op_name == self.name or op_name.endswith("/" + self.name)):
            return False
        if len(stack) >= len(self.stack):
            return stack[: len(self.stack)] == self.stack
        return bool(stack) and self.stack[: len(stack)] == stack


def line_stack(tables, location: int | None, paths: Sequence[str] | None = None) -> Stack:
    """The call stack of ``location`` (an index into ``tables.locations``) as
    ``(file, line)`` pairs, innermost first; ``()`` for none. ``paths``: the files'
    paths by index, where they are not ``tables.files`` (a report's model names a
    notebook cell ``In [3]``; XLA, by the file that ran)."""
    if location is None:
        return ()
    files = tables.files if paths is None else paths
    out = []
    for f in tables.locations[location].frames:
        frame = tables.frames[f]
        out.append((files[frame.file], frame.line))
    return tuple(out)


def instruction_key(tables, op: Op) -> tuple[str, Stack]:
    """An HLO instruction's ``op_name`` and call stack (``tables``: the source
    tables its location indexes)."""
    return op.name_stack, line_stack(tables, op.location)


def own_key(
    tables, op: Op, paths: Sequence[str] | None = None, stacks: dict | None = None
) -> OpKey | None:
    """The key of ``op`` alone (not of the ops it holds), ``None`` for an op with
    no location or name; ``paths`` as for :func:`line_stack`; ``stacks`` keeps the
    stacks read, by location, for the next op."""
    if op.location is None:
        return None
    if op.stage == "olympuspr":
        name = f"{op.name_stack}/{op.name}" if op.name_stack else op.name
    else:
        name = op.name_stack
    if not name:
        return None
    stack = stacks.get(op.location) if stacks is not None else None
    if stack is None:
        stack = line_stack(tables, op.location, paths)
        if stacks is not None:
            stacks[op.location] = stack
    return OpKey(name, stack)


def op_keys(model, ident: str, paths: Sequence[str] | None = None) -> tuple[OpKey, ...]:
    """The keys of op ``ident`` (``"olympuspr:3"``, ``"stablehlo:12"``) of ``model``
    (a :class:`~olympus.provenance.Provenance`): its own and those of the ops it
    holds, each once (``paths`` as for :func:`line_stack`). Raises ``ValueError`` for an op of another stage,
    ``KeyError`` for an op the model does not have."""
    stage, index = parse_op_id(ident)
    if stage not in OP_STAGES:
        raise ValueError(
            f"{ident!r} is an op of the {stage!r} stage: a journey or a cost share starts "
            f"from an op of {' or '.join(OP_STAGES)} (an olympuspr equation or a "
            f"StableHLO op), e.g. 'stablehlo:3'."
        )
    model.op(ident)  # KeyError naming the stage's ops
    ops = model.stages[stage].ops
    held = _held(ops, index)
    tables = model.source_tables()
    keys = (own_key(tables, ops[i], paths) for i in held)
    return tuple(dict.fromkeys(k for k in keys if k is not None))


def _held(ops: Sequence[Op], index: int) -> list[int]:
    """Op ``index`` and the ops inside it (by their ``parent``), in order."""
    inside = {index}
    out = [index]
    for op in ops[index + 1 :]:  # text order: what an op holds follows it
        if op.parent in inside:
            inside.add(op.index)
            out.append(op.index)
    return out


def keys_by_op(
    model,
    stages: Sequence[str] = OP_STAGES,
    paths: Sequence[str] | None = None,
    among: Iterable[tuple[str, Stack]] | None = None,
    stacks: dict | None = None,
) -> KeyIndex:
    """Every op of ``stages`` of ``model`` with a key of its own, by op id: which
    ops an instruction came from (:meth:`KeyIndex.owners`), without trying each.
    ``among``: the ``(op_name, stack)`` of the only instructions to be matched; the
    ops whose key can match none of them (another primitive, another innermost
    line) are left out, their stacks not read. ``stacks``: the stacks read, by
    location (with the same ``paths``), kept across calls."""
    tables = model.source_tables()
    files = tables.files if paths is None else paths
    wanted = None
    leaves: set[str] = set()
    if among is not None:
        wanted = {(name.rsplit("/", 1)[-1], stack[0] if stack else None) for name, stack in among}
        leaves = {leaf for leaf, _ in wanted}
    inner: dict[int, tuple[str, int] | None] = {}  # each location's innermost line

    def may_match(op, name: str) -> bool:
        """Whether ``op``'s key can match one of the wanted instructions."""
        if wanted is None or op.location is None:
            return True
        if op.location not in inner:
            frames = tables.locations[op.location].frames
            frame = tables.frames[frames[0]] if frames else None
            inner[op.location] = None if frame is None else (files[frame.file], frame.line)
        first = inner[op.location]
        leaf = name.rsplit("/", 1)[-1]
        # A key with no stack matches its primitive on any line.
        return (leaf, first) in wanted if first is not None else leaf in leaves

    owners: dict[OpKey, list[str]] = {}
    stacks = {} if stacks is None else stacks
    for stage in stages:
        held = model.stages.get(stage)
        ops = held.ops if held is not None else ()
        # Ops alike (a loop's: same name, name stack and location) share one key.
        alike: dict[tuple, list[int]] = {}
        fields = (
            ("name", "name_stack", "location")
            if stage == "olympuspr"
            else ("name_stack", "location")
        )
        for index, fields_of in enumerate(map(attrgetter(*fields), ops)):
            group = alike.get(fields_of)
            if group is None:
                group = alike[fields_of] = []
            group.append(index)
        for group in alike.values():
            op = ops[group[0]]
            if not may_match(op, op.name if stage == "olympuspr" else op.name_stack):
                continue
            key = own_key(tables, op, paths, stacks)
            if key is not None:
                owners.setdefault(key, []).extend(f"{stage}:{index}" for index in group)
    return KeyIndex.of_owners(owners)


def matches_any(keys: Iterable[OpKey], op_name: str, stack: Stack) -> bool:
    """Whether an instruction of ``op_name`` and ``stack`` came from one of ``keys``."""
    return any(k.matches(op_name, stack) for k in keys)


class KeyIndex:
    """Many ops' keys, each distinct key once, found by the last part of its name
    and the innermost line of its stack: which keys an instruction matches
    without trying every key (ops alike, a Python loop's, share one key).

    >>> index = KeyIndex({"a": [OpKey("mul", (("m.py", 3),))], "b": [OpKey("sin", ())],
    ...                   "c": [OpKey("mul", (("m.py", 3),))]})
    >>> [sorted(index.owners_of(k)) for k in index.matched("jit(f)/mul", (("m.py", 3),))]
    [['a', 'c']]
    >>> sorted(index.owners("jit(f)/mul", (("m.py", 3),)))
    ['a', 'c']
    """

    def __init__(self, keys_of: Mapping[Any, Iterable[OpKey]]):
        owners: dict[OpKey, list] = {}
        for owner, keys in keys_of.items():
            for key in keys:
                owners.setdefault(key, []).append(owner)
        self._index(owners)

    @classmethod
    def of_owners(cls, owners: Mapping[OpKey, Sequence]) -> KeyIndex:
        """The index of ``owners``: each key's owners.

        >>> sorted(KeyIndex.of_owners({OpKey("sin", ()): ["a", "b"]}).owners("jit(f)/sin", ()))
        ['a', 'b']
        """
        index = cls.__new__(cls)
        index._index({key: list(found) for key, found in owners.items() if found})
        return index

    def _index(self, owners: dict[OpKey, list]) -> None:
        self._owners = owners
        self._found: dict[tuple[str, tuple[str, int] | None], list[OpKey]] = {}
        for key in self._owners:
            self._found.setdefault((key.leaf, key.stack[0] if key.stack else None), []).append(key)

    @property
    def keys(self) -> tuple[OpKey, ...]:
        """Every distinct key."""
        return tuple(self._owners)

    def owners_of(self, key: OpKey) -> list:
        """The owners of ``key``."""
        return self._owners.get(key, [])

    def matched(self, op_name: str, stack: Stack) -> list[OpKey]:
        """The keys an instruction of ``op_name`` and ``stack`` matches."""
        leaf = op_name.rsplit("/", 1)[-1]
        out = [k for k in self._found.get((leaf, None), ()) if k.matches(op_name, stack)]
        if stack:
            out += [k for k in self._found.get((leaf, stack[0]), ()) if k.matches(op_name, stack)]
        return out

    def owners(self, op_name: str, stack: Stack) -> set:
        """The owners of the keys an instruction of ``op_name`` and ``stack`` matches."""
        return {o for k in self.matched(op_name, stack) for o in self._owners[k]}
