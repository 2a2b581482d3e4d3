"""The ``partitioned`` stage: the HLO right after XLA's SPMD partitioner.

For a program sharded over several devices, XLA propagates shardings and then
rewrites the program into the program each device runs, inserting the
collectives (all-gather, all-reduce, ...) the shardings cost. This module
compiles the program once more with XLA's dump options of that compile only
(``xla_dump_to`` a private temporary folder, removed afterwards, and a pass
filter), never through the user's ``XLA_FLAGS``, and reads the module XLA wrote
after the ``spmd-partitioning`` pass. A program for one device is not
partitioned: the stage says so.

>>> compiled = olympus.jit(lambda x: x * 2).trace(1.0).lower().compile()
>>> partitioned_hlo_text(compiled) is None   # one device: nothing to partition
True
"""
from __future__ import annotations

import glob
import os
import tempfile

from olympus.errors import StageUnavailable
from olympus.provenance.readers import read_hlo_text

__all__ = ["partitioned_hlo_text", "read_partitioned_hlo", "PASS"]

#: XLA's pass whose result this stage shows.
PASS = "spmd-partitioning"


def partitioned_hlo_text(compiled) -> str | None:
    """The HLO module after SPMD partitioning of ``compiled``'s program, as XLA dumped
    it; ``None`` when XLA ran no partitioning (a program for one device).

    ``compiled`` is an Olympus ``Compiled`` that links to its ``Lowered``; the
    program is compiled again with its own compiler options plus the dump options.
    """
    lowered = getattr(compiled, "lowered", None)
    if lowered is None:
        raise StageUnavailable("it needs the Lowered stage the program was compiled from")
    with tempfile.TemporaryDirectory(prefix="olympus-xla-dump-") as folder:
        options = dict(compiled.compiler_options)
        options.update(xla_dump_to=folder, xla_dump_hlo_pass_re=PASS)
        lowered.compile(options)
        found = sorted(glob.glob(os.path.join(folder, f"*.after_{PASS}.*txt")))
        if not found:
            return None
        with open(found[-1], encoding="utf-8") as f:
            return f.read()


def read_partitioned_hlo(compiled, table, name: str):
    """The partitioned program's instructions, tied to source through their metadata."""
    text = partitioned_hlo_text(compiled)
    if text is None:
        raise StageUnavailable("the program runs on one device: XLA partitions nothing")
    return read_hlo_text(text, table, name)
