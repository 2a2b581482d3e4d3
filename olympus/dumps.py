"""One dumped compile for every reader: the per-pass modules and the peak together.

XLA writes, into one dump folder of one compile, both the module after each pass
(:mod:`olympus.passes`, filtered by ``xla_dump_hlo_pass_re``) and, whatever that
filter, the optimized module's buffer assignment and live ranges
(:mod:`olympus.buffers`). So the stages that read a dump need not compile once
each: each says what it needs (:class:`DumpNeeds`), the needs are merged
(:meth:`DumpNeeds.merge`), and :func:`compile_dumped` compiles once with the dump
options of that compile only (never ``XLA_FLAGS`` nor JAX's configuration) and
reads, before the folder is removed, what was asked for (:class:`DumpedCompile`).

>>> lowered = olympus.jit(lambda x: jnp.tanh(x * 2.0) + 1.0).trace(np.ones(4, np.float32)).lower()
>>> needs = DumpNeeds(pass_re=".*").merge(DumpNeeds(peak=True))
>>> needs
DumpNeeds(pass_re='.*', peak=True)
>>> compiled, dump = compile_dumped(lowered, needs)
>>> dump.passes().steps[0].after, dump.peak.read().peak_bytes > 0
('pipeline-start', True)
>>> dump.covers(DumpNeeds(peak=True)), dump.covers(DumpNeeds(pass_re="fusion"))
(True, False)
"""

from __future__ import annotations

import contextlib
import dataclasses
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from olympus.buffers import PeakDump, memory_analysis_peak
from olympus.dump_follow import DumpFollower
from olympus.passes import NO_PASS, PassPipeline, dumped_compile, read_dump

__all__ = ["DumpNeeds", "DumpedCompile", "compile_dumped", "compile_with_peak", "merge_needs"]


@dataclasses.dataclass(frozen=True)
class DumpNeeds:
    """What a reader needs of a dumped compile: the module after each pass whose
    name ``pass_re`` matches (XLA's ``xla_dump_hlo_pass_re``; ``None``: no pass's
    module), and/or (``peak``) the optimized module's buffer assignment and live
    ranges, which XLA writes whatever the pass filter.

    >>> DumpNeeds(pass_re="fusion").merge(DumpNeeds(pass_re="cse")) is None
    True
    """

    pass_re: str | None = None
    peak: bool = False

    def merge(self, other: DumpNeeds) -> DumpNeeds | None:
        """The needs of one dump that serves both, or ``None`` when none does: two
        different pass filters (a filtered dump also holds the module before each
        pass it keeps, so a dump of one filter is not that of another)."""
        if None not in (self.pass_re, other.pass_re) and self.pass_re != other.pass_re:
            return None
        return DumpNeeds(
            self.pass_re if self.pass_re is not None else other.pass_re, self.peak or other.peak
        )

    @property
    def empty(self) -> bool:
        """Whether nothing is needed (no dumped compile at all)."""
        return self.pass_re is None and not self.peak


def merge_needs(needs: Iterable[DumpNeeds | None]) -> DumpNeeds | None:
    """The needs of one dump serving all of ``needs`` (``None`` entries need
    nothing), or ``None`` when they need nothing or no single dump serves them.

    >>> merge_needs([None, DumpNeeds(peak=True), DumpNeeds(pass_re=".*")])
    DumpNeeds(pass_re='.*', peak=True)
    >>> merge_needs([None]) is None
    True
    """
    merged: DumpNeeds | None = DumpNeeds()
    for need in needs:
        if need is None or merged is None:
            continue
        merged = merged.merge(need)
    return None if merged is None or merged.empty else merged


@dataclasses.dataclass(frozen=True)
class DumpedCompile:
    """What one dumped compile gave, read before its folder was removed: the pass
    pipeline (when per-pass modules were asked for, or ``pipeline_unread`` saying why
    it could not be read) and the peak's texts (a
    :class:`~olympus.buffers.PeakDump`, or ``peak_unread`` saying why they could not
    be read)."""

    needs: DumpNeeds
    pipeline: PassPipeline | None = None
    peak: PeakDump | None = None
    peak_unread: str | None = None
    pipeline_unread: str | None = None

    def covers(self, needs: DumpNeeds) -> bool:
        """Whether this dump answers ``needs`` without another compile (the peak is
        read from any dump: XLA writes it whatever the pass filter)."""
        if needs.pass_re is not None and needs.pass_re != self.needs.pass_re:
            return False
        return not needs.peak or self.peak is not None or self.peak_unread is not None

    def passes(self) -> PassPipeline:
        """The pass pipeline; raises ``ValueError`` saying why it is not here."""
        if self.pipeline is None:
            raise ValueError(self.pipeline_unread or "this dump holds no pass's module")
        return self.pipeline

    def without_pipeline(self) -> DumpedCompile:
        """This dump less its per-pass modules (what may be large), for keeping."""
        return dataclasses.replace(
            self, needs=DumpNeeds(peak=self.needs.peak), pipeline=None, pipeline_unread=None
        )


def read_dumped(
    folder: str, needs: DumpNeeds, compiled: Any, follower: DumpFollower | None = None
) -> DumpedCompile:
    """What ``needs`` asks for, read from the dump folder of ``compiled``'s compile
    (with what ``follower`` read of it as it was written).
    The peak is read whenever the folder holds it (the files are written anyway), so
    a dump made for the passes serves the peak too. What cannot be read is said
    (``pipeline_unread``, ``peak_unread``), never raised: the compile stands."""
    pipeline, pipeline_unread = None, None
    if needs.pass_re is not None:
        try:
            pipeline = read_dump(folder, needs.pass_re, follower)
        except (OSError, ValueError) as e:
            pipeline_unread = f"XLA's per-pass dumps could not be read: {e}"
    peak, unread = None, None
    try:
        peak = PeakDump.from_folder(folder, memory_analysis_peak(compiled))
    except (OSError, ValueError) as e:
        unread = f"XLA's buffer assignment could not be read: {e}"
    return DumpedCompile(needs, pipeline, peak, unread, pipeline_unread)


def compile_dumped(
    lowered,
    needs: DumpNeeds,
    compiler_options: Mapping[str, Any] | None = None,
    refused: Callable[[PeakDump], None] | None = None,
    follower: DumpFollower | None = None,
) -> tuple[Any, DumpedCompile]:
    """``lowered.compile(compiler_options)`` with XLA's dumps of that compile only,
    into a private folder removed afterwards, and what ``needs`` asks of them.

    The per-pass modules are dumped for ``needs.pass_re`` (none without it); the
    peak's files are read in any case. The compiled program keeps
    ``compiler_options`` as given (the dump options were for this compile only).
    Nothing of the process (``XLA_FLAGS``, JAX's configuration) is changed; a
    compile that fails raises as ``compile()`` does. XLA writes its buffer
    assignment before it gives up for lack of memory: for such a compile,
    ``refused`` (where given) is handed what the dump holds of the peak (a
    :class:`~olympus.buffers.PeakDump`) before the error is raised. ``follower``
    reads the per-pass modules while XLA writes them
    (:class:`~olympus.dump_follow.DumpFollower`; none without per-pass modules).
    """
    pass_re = needs.pass_re if needs.pass_re is not None else NO_PASS

    def read_refused(folder: str) -> None:
        if refused is not None:
            with contextlib.suppress(OSError, ValueError):
                refused(PeakDump.from_folder(folder))

    if needs.pass_re is None:
        follower = None
    with dumped_compile(
        lowered,
        pass_re=pass_re,
        compiler_options=compiler_options,
        refused=read_refused,
        follower=follower,
    ) as (folder, compiled):
        dump = read_dumped(folder, needs, compiled, follower)
    if hasattr(compiled, "compiler_options"):
        compiled.compiler_options = dict(compiler_options or {})
    return compiled, dump


def compile_with_peak(lowered, compiler_options: Mapping[str, Any] | None = None):
    """``lowered.compile(compiler_options)``, and what XLA dumped of that very
    compile to read its peak from (into a private folder removed afterwards): no
    second compile, as :func:`olympus.buffers.peak_memory` needs for a program
    compiled already.

    Returns ``(compiled, dump, reason)``: ``dump`` is the
    :class:`~olympus.buffers.PeakDump` (``dump.read()`` gives the
    :class:`~olympus.buffers.PeakMemory`), or ``None`` with ``reason``
    saying why the dump could not be read. The compiled program keeps
    ``compiler_options`` as given (the dump options were for this compile only).
    A compile that fails raises as ``compile()`` does.

    >>> lowered = olympus.jit(lambda x: x * 2.0).trace(np.ones(4, np.float32)).lower()
    >>> compiled, dump, reason = compile_with_peak(lowered)
    >>> compiled.compiler_options, dump.read().peak_bytes > 0, reason
    ({}, True, None)
    """
    compiled, dump = compile_dumped(lowered, DumpNeeds(peak=True), compiler_options)
    return compiled, dump.peak, dump.peak_unread
