"""The provenance model: every op of every stage tied to the Python source it came from.

``build(stage)`` reads a staged function's stages (olympuspr, StableHLO,
optimized HLO) into plain data: each op with its lines in the stage's text, its
source location (file, line, column, function, call stack) and, through that,
the ops of the other stages made by the same source line. Inspection tools
(HTML reports, the JupyterLab viewer) are views of this model; ``to_json()``
stores it (schema ``olympus.provenance``, see ``docs/provenance.md``).

>>> def f(x):
...     y = jnp.sin(x)
...     return y * 2
>>> model = olympus.provenance.build(olympus.jit(f), 1.0)
>>> line = model.function.first_line + 1          # y = jnp.sin(x)
>>> links = model.ops_for_line(model.function.file, line)
>>> [model.op(i).name for i in links['olympuspr']], [model.op(i).name for i in links['stablehlo']]
(['sin'], ['stablehlo.sine'])
"""

from olympus.provenance.build import build
from olympus.provenance.model import STAGES, Provenance
from olympus.provenance.parts import (
    Computation,
    Frame,
    FunctionInfo,
    Location,
    Op,
    SourceFile,
    SourceLine,
    Stage,
    op_id,
    parse_op_id,
)
from olympus.provenance.serialize import SCHEMA, VERSION

__all__ = [
    "build",
    "Provenance",
    "Stage",
    "Op",
    "Computation",
    "Frame",
    "Location",
    "SourceFile",
    "SourceLine",
    "FunctionInfo",
    "STAGES",
    "SCHEMA",
    "VERSION",
    "op_id",
    "parse_op_id",
]
