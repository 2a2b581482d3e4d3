"""The dumped compiles of one report build, shared by the stage kinds that read them.

A stage kind that reads XLA's dumps (the ``passes`` stage: the per-pass modules;
the ``costs`` stage: the buffer assignment and live ranges) says what it needs
(:meth:`~.kinds.StageKind.dump_needs`, a :class:`~olympus.dumps.DumpNeeds`) and, in
its ``make``, asks the build for it (:meth:`~.kinds.MakeContext.dumped`). The build
knows every kind's needs beforehand (:attr:`SharedDumps.planned`): the first ask
compiles once with them all (:func:`olympus.dumps.compile_dumped`) and later asks
read that same dump. A dump the staged compile made itself
(``StagedRun.dumped``: ``inspect`` asks its compile for the report's needs) is used
first, and a dump kept from an earlier display of the same stage objects (its peak:
the per-pass modules are not kept) after it, so no compile is made again.

>>> from olympus.dumps import DumpNeeds
>>> from olympus_jupyter.staging import run_stages
>>> run = run_stages(lambda x: jnp.tanh(x) * 2.0, (np.ones(4, np.float32),))
>>> dumps = SharedDumps(run, DumpNeeds(pass_re=".*").merge(DumpNeeds(peak=True)))
>>> passes = dumps.get(DumpNeeds(pass_re=".*"))
>>> dumps.get(DumpNeeds(peak=True)) is passes, dumps.compiles
(True, 1)
"""

from __future__ import annotations

from collections.abc import MutableMapping
from typing import Any

from olympus.dumps import DumpedCompile, DumpNeeds, compile_dumped

__all__ = ["SharedDumps", "KEPT_KEY"]

#: The key of ``kept`` (what is kept between displays of the same stage objects)
#: that holds the last dumped compile, less its per-pass modules.
KEPT_KEY = ("dumped compile",)


class SharedDumps:
    """The dumped compiles of one report build of ``run``: :meth:`get` answers a
    kind's needs from a dump held, or compiles once with ``planned`` (every kind's
    needs, merged) and the needs asked for."""

    def __init__(
        self, run: Any, planned: DumpNeeds | None = None, kept: MutableMapping | None = None
    ):
        self.run = run
        self.planned = planned
        self.kept = kept
        self.held: list[DumpedCompile] = []
        if getattr(run, "dumped", None) is not None:
            self.held.append(run.dumped)
        if kept is not None and kept.get(KEPT_KEY) is not None:
            self.held.append(kept[KEPT_KEY])
        #: How many dumped compiles this build made (none where a dump was held).
        self.compiles = 0

    def get(self, needs: DumpNeeds) -> DumpedCompile:
        """A dumped compile that answers ``needs``: one held, or a new one (with the
        planned needs too, where one dump serves both). Raises what the compile
        raises, or ``ValueError`` when there is no ``Lowered`` to compile."""
        for dump in self.held:
            if dump.covers(needs):
                return dump
        lowered = getattr(self.run, "lowered", None)
        if lowered is None:
            raise ValueError("XLA's dumps need the Lowered stage, which this report has not")
        both = self.planned.merge(needs) if self.planned is not None else None
        compiled = getattr(self.run, "compiled", None)
        options = getattr(compiled, "compiler_options", None)
        _, dump = compile_dumped(lowered, both or needs, options)
        self.compiles += 1
        self.held.append(dump)
        if self.kept is not None and dump.peak is not None:
            self.kept[KEPT_KEY] = dump.without_pipeline()
        return dump
