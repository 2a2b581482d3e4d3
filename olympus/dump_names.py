"""XLA's names for the modules it dumps pass by pass, and the pass each change is due to.

XLA (``xla/service/dump.cc``) names a module it dumps while it compiles
``module_N.NAME.<rest>.txt``, ``<rest>`` in one of the forms of :data:`FORMS`,
the same on every platform; each platform's compiler runs its own pipelines and
passes (CPU's ``simplification`` and ``fusion``, TPU's ``Main_fusion`` and
``tpu_fusion``). ``<rest>`` is, for a module dumped

- by a pipeline as it starts: ``0044.Main_fusion.after_pipeline-start.before_tpu_fusion``;
- by a pipeline after one of its passes (with the filter ``.*``, one that changed
  the module): ``0045.Main_fusion.after_tpu_fusion.before_pipeline-end``;
- by a pass, at a point of its own work (``copy-insertion`` on every platform,
  TPU's ``tpu-tiling-rewriter``): ``0057.copy-insertion.after_removing_unnecessary_copies``.

Pipelines nest: a pass may run pipelines of its own. SPMD partitioning does
(``spmd-partitioning`` on CPU and GPU, ``tpu-spmd-partitioning`` on TPU run
``spmd-cleanup``), so the module dumped as ``spmd-cleanup`` starts already holds
the partitioned program: that change is the outer pass's, which the outer
pipeline's next dump names (``after_tpu-spmd-partitioning``). :func:`enclosing`
finds, for each dump, the outer pass it was made inside; TPU's compiler also runs
work outside any pipeline, which no dump names.

>>> name = read_name("0019.xla-partitioner.after_tpu-spmd-partitioning.before_tpu-call-inliner")
>>> name.pipeline, name.after, name.before
('xla-partitioner', 'tpu-spmd-partitioning', 'tpu-call-inliner')
>>> read_name("0057.copy-insertion.after_removing_unnecessary_copies").point
'after removing unnecessary copies'
"""

from __future__ import annotations

import dataclasses
import re
from collections.abc import Sequence

__all__ = ["DumpName", "FORMS", "PIPELINE_START", "PIPELINE_END", "read_name", "enclosing"]

#: What XLA writes for the pass "after" which a pipeline's first module is dumped,
#: and "before" which its last one is.
PIPELINE_START, PIPELINE_END = "pipeline-start", "pipeline-end"

#: The forms of a dumped module's name after its ``module_N.NAME.``, by what dumped
#: it (XLA's ``DumpHloModuleBetweenPassesIfEnabled`` and
#: ``DumpHloModuleDuringPassIfEnabled``); the first that matches reads it.
FORMS = (
    (
        "pipeline",  # <step>.<pipeline>.after_<pass>.before_<next pass>
        re.compile(
            r"^(?P<step>\d{4})\.(?P<pipeline>.+?)\.after_(?P<after>.+?)\.before_(?P<before>.+)$"
        ),
    ),
    (
        "pass",  # <step>.<pass>.<point in it>, the point with "_" for spaces
        re.compile(r"^(?P<step>\d{4})\.(?P<after>[^.]+)\.(?P<point>[^.]+)$"),
    ),
)


@dataclasses.dataclass(frozen=True)
class DumpName:
    """What a dumped module's name says: its step number (the order of the dumps),
    and the pipeline and the passes it was dumped between (``after`` is
    :data:`PIPELINE_START` for a pipeline's first module), or, for a module a pass
    dumped at a point of its own work, that pass (``after``), the point (``point``)
    and no pipeline."""

    step: int
    pipeline: str | None
    after: str
    before: str | None = None
    point: str | None = None

    @property
    def is_pipeline_start(self) -> bool:
        return self.after == PIPELINE_START


def read_name(rest: str) -> DumpName | None:
    """The :class:`DumpName` of ``rest``, a dump's name after its
    ``module_N.NAME.`` and before ``.txt``; ``None`` for a name of no form of
    :data:`FORMS` (not a module dumped during the passes).

    >>> read_name("after_optimizations") is None
    True
    """
    for kind, form in FORMS:
        m = form.match(rest)
        if m is None:
            continue
        if kind == "pipeline":
            return DumpName(int(m["step"]), m["pipeline"], m["after"], m["before"])
        return DumpName(int(m["step"]), None, m["after"], point=m["point"].replace("_", " "))
    return None


def enclosing(names: Sequence[DumpName]) -> list[tuple[str, str] | None]:
    """For each of ``names`` (one compile's dumps, in step order), the pass of an
    outer pipeline it was dumped inside: ``(pipeline, pass)`` as that pipeline's
    next dump names it (``after_<pass>``), or ``None`` where no later dump of a
    running pipeline names one (a pipeline run outside any, or inside a pass whose
    pipeline dumped nothing after it).

    The pipelines running are kept innermost last; a pipeline's dump after one of
    its passes ends that pass, and with it every pipeline started since.

    >>> steps = [read_name(n) for n in (
    ...     "0003.spmd-partitioner.after_shardy-xla.before_spmd-partitioning",
    ...     "0004.spmd-cleanup.after_pipeline-start.before_dce",
    ...     "0005.spmd-cleanup.after_dce.before_tuple-simplifier",
    ...     "0007.spmd-partitioner.after_spmd-partitioning.before_control-dep-rewriter",
    ...     "0008.SubbytePacker_pipeline.after_pipeline-start.before_sub-byte-size-setter")]
    >>> enclosing(steps)
    [None, ('spmd-partitioner', 'spmd-partitioning'), ('spmd-partitioner', 'spmd-partitioning'), None, None]
    """
    out: list[tuple[str, str] | None] = [None] * len(names)
    running: list[tuple[str, list[int]]] = []  # (pipeline, the dumps inside its current pass)
    for k, name in enumerate(names):
        at = None
        if name.pipeline is not None and not name.is_pipeline_start:
            at = next(
                (j for j in range(len(running) - 1, -1, -1) if running[j][0] == name.pipeline),
                None,
            )
        if at is None:  # a start, a point inside a pass, or a pipeline whose start
            # was not dumped (a pass filter): inside the innermost pipeline running
            if running:
                running[-1][1].append(k)
            if name.pipeline is not None:
                running.append((name.pipeline, []))
            continue
        # The pipeline's pass `after` ended: every dump since its last was inside it.
        ended = (running[at][0], name.after)
        for _, inside in running[at:]:
            for i in inside:
                out[i] = ended
        del running[at + 1 :]
        running[at][1].clear()
        if at:
            running[at - 1][1].append(k)
        if name.before == PIPELINE_END:
            running.pop()
    return out
