"""What an op of an earlier stage costs in the compiled program: the flops,
transcendentals and bytes of the compiled instructions that came from an olympuspr
equation or a StableHLO op (matched as :mod:`olympus.op_instructions` says), and
their share of the totals.

The cost by line (:func:`olympus.line_costs.cost_by_line`) keeps its figures by
the op each part is charged by (:attr:`~olympus.line_costs.CostByLine.by_source`):
a compiled instruction (a fused one's own part of its fusion, a loop body's
counted × its trip count), or the StableHLO op an instruction XLA made anew came
from. :func:`source_costs` reads those once with their ``op_name`` and call stack;
:func:`op_cost` adds up those an op's keys match.

>>> def f(x, y):
...     return jnp.sin(x @ y) + 1.0
>>> c = olympus.jit(f).trace(np.ones((8, 8), np.float32), np.ones((8, 8), np.float32)).lower().compile()
>>> model = olympus.provenance.build(c)
>>> from olympus.line_costs import cost_by_line
>>> costs = cost_by_line(c, parsed=(model.stages["compiled"], model.source_tables()),
...                      lowered=model.stages["stablehlo"])
>>> sources = source_costs(costs, model)
>>> dot = next(op.id for op in model.stages["olympuspr"].ops if op.name == "dot_general")
>>> op_cost(sources, op_keys(model, dot))["flops"]
1024.0
"""

from __future__ import annotations

import dataclasses
from collections.abc import Iterable, Mapping, Sequence

from olympus.line_costs import KEYS, CostByLine
from olympus.op_instructions import OP_STAGES, KeyIndex, OpKey, keys_by_op, line_stack, op_keys

__all__ = ["SourceCost", "source_costs", "op_cost", "op_costs", "op_keys"]


@dataclasses.dataclass(frozen=True)
class SourceCost:
    """The cost charged by one op of the compiled (or StableHLO) stage: its
    ``op_name``, call ``stack`` (``(file, line)``, innermost first) and figures
    under XLA's names."""

    op_name: str
    stack: tuple[tuple[str, int], ...]
    figures: Mapping[str, float]


def source_costs(costs: CostByLine, model, stacks: dict | None = None) -> tuple[SourceCost, ...]:
    """The parts of ``costs`` by the op each is charged by, read from ``model`` (the
    provenance model whose ``compiled`` and ``stablehlo`` stages the cost by line
    read: ``parsed`` and ``lowered``); parts of the same ``op_name`` and stack (which
    every key matches alike) added up into one. ``stacks``: the call stacks read, by
    location, kept for :func:`op_costs` of the same model."""
    tables = model.source_tables()
    stacks = {} if stacks is None else stacks  # read once a location
    grouped: dict[tuple[str, tuple], dict[str, float]] = {}
    for (stage, index), figures in costs.by_source.items():
        held = model.stages.get(stage)
        if held is None or not 0 <= index < len(held.ops):
            continue
        op = held.ops[index]
        stack = stacks.get(op.location) if op.location is not None else ()
        if stack is None:
            stack = stacks[op.location] = line_stack(tables, op.location)
        total = grouped.get((op.name_stack, stack))
        if total is None:
            grouped[op.name_stack, stack] = dict(figures)
            continue
        for k, v in figures.items():
            total[k] = total.get(k, 0.0) + v
    return tuple(SourceCost(name, stack, total) for (name, stack), total in grouped.items())


def op_cost(sources: Iterable[SourceCost], keys: Sequence[OpKey]) -> dict[str, float]:
    """The figures (XLA's names) of the ``sources`` one of ``keys`` matches."""
    index = KeyIndex({0: keys})
    total = dict.fromkeys(KEYS, 0.0)
    for s in sources:
        if index.matched(s.op_name, s.stack):
            for k in KEYS:
                total[k] += float(s.figures.get(k, 0.0))
    return total


def op_costs(
    model,
    sources: Iterable[SourceCost],
    stages: Sequence[str] = OP_STAGES,
    paths: Sequence[str] | None = None,
    stacks: dict | None = None,
) -> dict[str, dict[str, float]]:
    """The figures of every op of ``stages`` of ``model`` that some source matches,
    by op id (an op that holds others counts theirs too), each source read once;
    ``paths``: the model's files' paths where XLA names them otherwise
    (:func:`~olympus.op_instructions.line_stack`); ``stacks``: the call stacks
    :func:`source_costs` read (with ``paths`` left out), by location."""
    sources = tuple(sources)
    index = keys_by_op(
        model,
        stages,
        paths,
        among=[(s.op_name, s.stack) for s in sources],
        stacks=stacks if paths is None else None,
    )
    # Each source's figures and the keys it matches, each read once.
    read = [
        ([float(s.figures.get(k, 0.0)) for k in KEYS], index.matched(s.op_name, s.stack))
        for s in sources
    ]
    by_key: dict[OpKey, list[float]] = {}
    for figures, matched in read:
        for key in matched:
            _accumulate(by_key, key, figures)
    # Each stage's ops' parents, and the ops that hold others (few: a jit or scan
    # equation, a StableHLO function), by index.
    parents = {
        stage: [op.parent for op in model.stages[stage].ops]
        for stage in stages
        if stage in model.stages
    }
    holders = {
        f"{stage}:{p}" for stage, found in parents.items() for p in set(found) if p is not None
    }
    chains: dict[str, tuple[str, ...]] = {}  # an op holder's id -> it and those above it

    def chain(stage: str, index: int | None) -> tuple[str, ...]:
        if index is None:
            return ()
        ident = f"{stage}:{index}"
        held = chains.get(ident)
        if held is None:
            held = chains[ident] = (ident, *chain(stage, parents[stage][index]))
        return held

    # A source counts once for each op that holds its keys' owners (and for each of
    # its owners that holds others), however many of its keys they hold.
    held_by: dict[OpKey, frozenset[str]] = {}
    for key in by_key:  # a key no source matched adds nothing
        found: set[str] = set()
        last: tuple = ()  # owners in a row often share their holder: its chain added once
        for owner in index.owners_of(key):
            stage, _, index_text = owner.rpartition(":")
            at = int(index_text)
            start = at if owner in holders else parents[stage][at]
            if start is not None and (stage, start) != last:
                found.update(chain(stage, start))
                last = (stage, start)
        held_by[key] = frozenset(found)
    by_holder: dict[str, list[float]] = {}
    for figures, matched in read:
        hit: set[str] = set()
        for key in matched:
            hit |= held_by[key]
        for holder in hit:
            _accumulate(by_holder, holder, figures)
    out: dict[str, dict[str, float]] = {}
    for key, sums in by_key.items():
        if any(sums):
            figures_of_key = dict(zip(KEYS, sums))
            for owner in index.owners_of(key):
                if owner not in holders:
                    out[owner] = figures_of_key
    out.update((holder, dict(zip(KEYS, sums))) for holder, sums in by_holder.items())
    return out


def _accumulate(sums: dict, key, figures: list[float]) -> None:
    """Adds ``figures`` (one per name of ``KEYS``) to ``sums[key]``, made at zero
    where it is not there yet: the same sums, in the same order, as a dict of
    ``KEYS`` would hold, without a dict for each part.

    >>> sums = {}
    >>> _accumulate(sums, "a", [1.0, 0.0, 4.0]); _accumulate(sums, "a", [2.0, 0.0, 4.0])
    >>> sums
    {'a': [3.0, 0.0, 8.0]}
    """
    row = sums.get(key)
    if row is None:
        sums[key] = [0.0 + v for v in figures]
    else:
        for k, v in enumerate(figures):
            row[k] += v
