"""How the provenance stages are read from the stage objects: one reader per linked stage.

Each reader takes the object a compilation step made (the traced program, a
``Lowered``, a ``Compiled``), the shared :class:`~olympus.provenance.sources.SourceTable`
and the stage's name, and returns the stage's ops tied to source. The stage
registry (:mod:`olympus.stage_registry`) is plain data and says which stages are
``linked``; :data:`READERS` attaches their readers here, by stage name, and
:func:`reader` looks one up.

>>> from olympus.provenance.sources import SourceTable
>>> lowered = olympus.jit(lambda x: x + 1).trace(1.0).lower()
>>> [op.name for op in reader("stablehlo")(lowered, SourceTable(), "stablehlo").ops][2:]
['stablehlo.constant', 'stablehlo.add', 'func.return']
"""

from __future__ import annotations

import dataclasses
import types
from collections.abc import Callable, Mapping
from typing import Any

import jax

from olympus import jax_compat, stage_registry
from olympus.errors import StageUnavailable
from olympus.partitioning import read_partitioned_hlo
from olympus.provenance.hlo import hlo_stage
from olympus.provenance.parts import Stage
from olympus.provenance.olympuspr import olympuspr_stage
from olympus.provenance.sources import SourceTable
from olympus.provenance.stablehlo import stablehlo_stage

__all__ = [
    "read_olympuspr",
    "read_stablehlo",
    "read_compiled_hlo",
    "read_hlo_text",
    "read_partitioned_hlo",
    "READERS",
    "reader",
    "Reader",
]

#: A provenance reader: ``reader(stage_object, table, name)`` -> the stage's ops.
Reader = Callable[[Any, SourceTable, str], Stage]


def read_olympuspr(closed, table: SourceTable, name: str) -> Stage:
    """The equations of a traced program (a ``ClosedJaxpr``)."""
    return olympuspr_stage(closed, table, name=name)


def read_hlo_text(text: str, table: SourceTable, name: str) -> Stage:
    """The instructions of an HLO module's text (with its metadata and stack frames)."""
    return hlo_stage(text, table, name=name)


def read_compiled_hlo(compiled, table: SourceTable, name: str) -> Stage:
    """The instructions of the optimized HLO of a ``Compiled``, with its entry shardings."""
    text = compiled.as_text()
    if not text:
        raise StageUnavailable("this backend gives no text of the compiled program")
    return _with_entry_shardings(read_hlo_text(text, table, name), compiled)


def read_stablehlo(lowered, table: SourceTable, name: str) -> Stage:
    """The ops of a ``Lowered``'s StableHLO, as ``as_text()`` prints it."""
    try:
        text = lowered.as_text()
        # The renamed module as_text() printed; stablehlo_stage clones it.
        module = lowered._module()
    except Exception as e:  # noqa: BLE001 - fall back on JAX's own text
        reason = (str(e).strip().splitlines() or [""])[-1]
        note = (
            f"StableHLO as JAX prints it: Olympus could not rename it "
            f"({type(e).__name__}: {reason})"
        )
        jax_lowered = lowered._jax
        stage = stablehlo_stage(
            jax_lowered.compiler_ir("stablehlo"), jax_lowered.as_text(), table, name=name
        )
        return dataclasses.replace(stage, notes=stage.notes + (note,))
    return stablehlo_stage(module, text, table, name=name)


def _with_entry_shardings(hlo: Stage, compiled) -> Stage:
    """The optimized HLO stage with its entry shardings, taken from the executable
    where the text leaves them out (XLA from jaxlib 0.12 prints none on the
    parameters of a partitioned program)."""
    if hlo.arg_shardings or hlo.result_shardings:
        return hlo
    try:
        ins = jax.tree.leaves(compiled.input_shardings)
        outs = jax.tree.leaves(compiled.output_shardings)
        in_avals = jax.tree.leaves(compiled.in_avals)
        out_avals = jax.tree.leaves(compiled.out_info)
    except Exception:  # noqa: BLE001 - an executable that cannot say
        return hlo
    if (
        len(ins) != len(in_avals)
        or len(outs) != len(out_avals)
        or all(s.num_devices == 1 for s in ins + outs)
    ):
        return hlo
    return dataclasses.replace(
        hlo,
        arg_shardings=tuple(
            jax_compat.hlo_sharding_text(s, len(a.shape)) for s, a in zip(ins, in_avals)
        ),
        result_shardings=tuple(
            jax_compat.hlo_sharding_text(s, len(a.shape)) for s, a in zip(outs, out_avals)
        ),
    )


#: The reader of each linked stage of the registry, by stage name (read-only).
READERS: Mapping[str, Reader] = types.MappingProxyType(
    {
        "olympuspr": read_olympuspr,
        "stablehlo": read_stablehlo,
        "compiled": read_compiled_hlo,
        "partitioned": read_partitioned_hlo,
    }
)


def reader(name: str) -> Reader:
    """The provenance reader of linked stage ``name``.

    Raises :class:`~olympus.stage_registry.UnknownStage` for a name the registry
    does not have, and ``LookupError`` for a stage whose ops are not linked, or a
    linked one given no reader.

    >>> reader("compiled") is read_compiled_hlo
    True
    >>> reader("hlo")
    Traceback (most recent call last):
    LookupError: Stage 'hlo' is not linked to source: it has no provenance reader. ...
    """
    spec = stage_registry.stage(name)
    if not spec.linked:
        linked = ", ".join(s.name for s in stage_registry.provenance_stages())
        raise LookupError(
            f"Stage {name!r} is not linked to source: it has no provenance "
            f"reader. The linked stages are {linked}."
        )
    try:
        return READERS[name]
    except KeyError:
        raise LookupError(
            f"Stage {name!r} is linked to source in olympus/stage_registry.py but has no "
            f"reader: add one to READERS in olympus/provenance/readers.py."
        ) from None
