"""The ``partitioned`` stage: the HLO right after XLA's SPMD partitioner.

For a program sharded over several devices, XLA propagates shardings and then
rewrites the program into the program each device runs, inserting the
collectives (all-gather, all-reduce, ...) the shardings cost. This module
compiles the program once more with XLA's per-pass dumps of that compile only
(:func:`olympus.passes.pass_pipeline`, filtered to the partitioner's pass, by
the name each platform gives it: :data:`PASSES`), never through the user's
``XLA_FLAGS``, and reads the module XLA wrote after that pass. A program for one
device is not partitioned: the stage says so.

>>> compiled = olympus.jit(lambda x: x * 2).trace(1.0).lower().compile()
>>> partitioned_hlo_text(compiled) is None   # one device: nothing to partition
True
"""

from __future__ import annotations

from olympus.errors import StageUnavailable
from olympus.passes import pass_pipeline
from olympus.provenance.hlo import hlo_stage

__all__ = ["partitioned_hlo_text", "read_partitioned_hlo", "PASSES", "PASS_RE"]

#: XLA's SPMD partitioner, as each platform's compiler names its pass; a compile
#: runs one of them, and this stage shows the module after it.
PASSES = {
    "cpu": "spmd-partitioning",
    "cuda": "spmd-partitioning",
    "rocm": "spmd-partitioning",
    "tpu": "tpu-spmd-partitioning",
}

#: The dump filter (XLA's ``xla_dump_hlo_pass_re``) that keeps every platform's.
PASS_RE = "^(?:" + "|".join(sorted(set(PASSES.values()))) + ")$"


def partitioned_hlo_text(compiled) -> str | None:
    """The HLO module after SPMD partitioning of ``compiled``'s program, as XLA dumped
    it; ``None`` when XLA ran no partitioning (a program for one device).

    ``compiled`` is an Olympus ``Compiled`` that links to its ``Lowered``; the
    program is compiled again with its own compiler options plus the dump options.
    """
    lowered = getattr(compiled, "lowered", None)
    if lowered is None:
        raise StageUnavailable("it needs the Lowered stage the program was compiled from")
    pipeline = pass_pipeline(lowered, pass_re=PASS_RE, compiler_options=compiled.compiler_options)
    names = set(PASSES.values())
    after = [s for s in pipeline.changed() if s.after in names and s.point is None]
    return after[-1].text if after else None


def read_partitioned_hlo(compiled, table, name: str):
    """The partitioned program's instructions, tied to source through their metadata
    (the ``partitioned`` stage's reader, :data:`olympus.provenance.readers.READERS`)."""
    text = partitioned_hlo_text(compiled)
    if text is None:
        raise StageUnavailable("the program runs on one device: XLA partitions nothing")
    return hlo_stage(text, table, name=name)
