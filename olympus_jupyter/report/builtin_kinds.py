"""The handlers of the built-in stages (:mod:`.kinds`), registered on import: the
source, the program texts, XLA's passes (``passes``), the cost by line (``costs``)
and XLA's analyses (``cost_analysis``, ``memory``).

>>> from olympus_jupyter.report import kinds
>>> [k.name for k in kinds.kinds()][:3], kinds.kind("cost").name
(['source', 'olympuspr', 'stablehlo'], 'cost_analysis')
>>> kinds.kind("passes").option.flags
('--passes',)
"""

from __future__ import annotations

from typing import Any

from olympus import stage_registry
from olympus.buffers import lines_by_label, peak_memory
from olympus.collectives import collectives
from olympus.line_costs import cost_by_line
from olympus.passes import pass_pipeline
from olympus.provenance import build as build_provenance

from olympus_jupyter.report import costs_view
from olympus_jupyter.report.costs_html import costs_section
from olympus_jupyter.report.costs_view import cap_costs, check_costs
from olympus_jupyter.report.cost_names import format_bytes
from olympus_jupyter.report.html import (
    caller_lines,
    cost_section,
    memory_section,
    source_section,
    text_stage_section,
)
from olympus_jupyter.report.kinds import (
    HtmlContext,
    MakeContext,
    StageKind,
    register_kind,
)
from olympus_jupyter.report.option_table import (
    CLI,
    EVERYWHERE,
    Control,
    Option,
    pass_filter,
    true_false,
)
from olympus_jupyter.report.passes_html import passes_section
from olympus_jupyter.report.passes_view import cap_passes, check_passes, passes_json
from olympus_jupyter.report.text import cost_lines, costs_lines, pass_lines

__all__ = [
    "SourceKind",
    "ProgramKind",
    "PassesKind",
    "CostsKind",
    "CostAnalysisKind",
    "MemoryKind",
    "costs_data",
]


class SourceKind(StageKind):
    """The user's code, each line coloured by the ops it made."""

    view = "source"
    spec = stage_registry.stage("source")

    def unavailable_reason(self, report) -> str | None:
        return None  # its section says so itself when the source cannot be read

    def html(self, report, ctx: HtmlContext):
        return source_section(report, ctx.uid, ctx.colors, ctx.callers, ctx.unstyled)


class ProgramKind(StageKind):
    """A program text (``olympuspr``, ``stablehlo``, ``hlo``, ``compiled``...): made by
    the provenance builder (a linked stage) or by its row's ``text``."""

    view = "program"
    text_rank = 90

    def __init__(self, spec: stage_registry.StageSpec):
        self.spec = spec

    def unavailable_reason(self, report) -> str | None:
        model = report.provenance
        if self.spec.linked:
            made = model is not None and self.name in model.stages
        else:
            made = self.name in report.texts
        return None if made else report.unavailable.get(self.name, "not made")

    def html(self, report, ctx: HtmlContext):
        return text_stage_section(
            report,
            ctx.uid,
            self.name,
            ctx.colors,
            ctx.callers,
            ctx.full,
            ctx.highlight,
            ctx.unstyled,
        )

    def text(self, report) -> list[str]:
        if (
            self.name in report.stages
            and self.spec.step == "compile"
            and self.name in report.unavailable
        ):
            return [f"  {self.name}: unavailable ({report.unavailable[self.name]})"]
        return []


class PassesKind(StageKind):
    """XLA's pass pipeline, pass by pass, and each source line's journey through it:
    one more compile, with XLA's per-pass dumps."""

    view = "passes"
    field = "passes"
    spec = stage_registry.stage("passes")
    # Its schema (``#/definitions/passes``) is checked with the bundle's: the top
    # level's ``passes``; check() adds the file indices.
    option = Option(
        "passes",
        pass_filter,
        flags=("--passes",),
        takes="optional",
        const=".*",
        frontends=EVERYWHERE | CLI,
        metavar="REGEX",
        in_key=True,
        stage="passes",
        stage_value=".*",
        accepts="True (every pass of XLA's pipeline), a regular expression of pass names "
        "such as 'fusion|cse', or None/False (no passes stage)",
        accepts_text="a regular expression of pass names, e.g. fusion|cse (default: every pass)",
        help="also compile once more with XLA's per-pass dumps and show what each pass "
        "did, and where each line's ops went (default: every pass; REGEX keeps the "
        "passes whose names it matches)",
        control=Control(
            "pass_filter",
            "pass filter",
            "a regular expression of XLA pass names: the passes stage shows "
            "only those (empty: every pass; press Enter)",
        ),
    )
    text_rank = 30

    def cache_key(self, ctx: MakeContext):
        return (self.name, ctx.pass_re, ctx.full)

    def make(self, ctx: MakeContext) -> Any:
        run = ctx.run
        if run.lowered is None:
            return None
        options = getattr(run.compiled, "compiler_options", None)
        pipeline = pass_pipeline(run.lowered, pass_re=ctx.pass_re, compiler_options=options)
        return passes_json(pipeline, _files(ctx.provenance), full=ctx.full)

    def check(self, data: Any, files: int) -> None:
        super().check(data, files)
        check_passes(data, files)

    def cap(self, data: Any, budget: float) -> tuple[Any, str | None]:
        return cap_passes(data, budget)

    def html(self, report, ctx: HtmlContext):
        return passes_section(report, ctx.uid, ctx.full)

    def text(self, report) -> list[str]:
        return pass_lines(report.passes, report.provenance)


class CostsKind(StageKind):
    """Where the compiled program's cost goes, by source line: flops, bytes, the
    buffers live at the memory peak, the collectives."""

    view = "costs"
    field = "costs"
    spec = stage_registry.stage("costs")
    # Its schema (``#/definitions/costs``) is checked with the bundle's: the top
    # level's ``costs``; check() adds the file indices.
    option = Option(
        "costs",
        true_false(False),
        default=False,
        flags=("--costs",),
        takes="switch",
        frontends=EVERYWHERE | CLI,
        stage="costs",
        stage_value=True,
        accepts="True or False",
        help="also show where the compiled program's cost goes, line by line: flops, "
        "bytes accessed, the buffers live at the memory peak, and the collectives "
        "a sharding costs",
    )
    text_rank = 40

    def make(self, ctx: MakeContext) -> Any:
        if ctx.run.compiled is None:
            return None
        return costs_data(ctx.run, ctx.provenance, ctx.full)

    def check(self, data: Any, files: int) -> None:
        super().check(data, files)
        check_costs(data, files)

    def cap(self, data: Any, budget: float) -> tuple[Any, str | None]:
        return cap_costs(data, budget)

    def html(self, report, ctx: HtmlContext):
        return costs_section(report, ctx.uid, ctx.full)

    def text(self, report) -> list[str]:
        return costs_lines(report.costs, report.provenance)


class CostAnalysisKind(StageKind):
    """XLA's cost figures, before and after optimization (``cost_analysis()``): the
    report's ``analyses``, made with every report that compiles."""

    view = "analysis"
    spec = stage_registry.stage("cost_analysis")
    text_rank = 20

    def unavailable_reason(self, report) -> str | None:
        a = report.analyses
        if a.cost_lowered or a.cost_compiled:
            return None
        return report.unavailable.get(self.name, "this backend reports no cost analysis")

    def html(self, report, ctx: HtmlContext):
        return cost_section(report, ctx.uid)

    def text(self, report) -> list[str]:
        return cost_lines(report.analyses.cost_lowered, report.analyses.cost_compiled)


class MemoryKind(StageKind):
    """XLA's memory figures of the compiled program (``memory_analysis()``)."""

    view = "analysis"
    spec = stage_registry.stage("memory")
    text_rank = 10

    def unavailable_reason(self, report) -> str | None:
        if report.analyses.memory:
            return None
        return report.unavailable.get(self.name, "this backend reports no memory analysis")

    def html(self, report, ctx: HtmlContext):
        return memory_section(report, ctx.uid)

    def text(self, report) -> list[str]:
        peak = (report.analyses.memory or {}).get("peak_memory_in_bytes")
        return [f"  peak memory {format_bytes(peak)}"] if peak is not None else []


def _files(provenance) -> list[str]:
    return [f.path for f in provenance.files] if provenance is not None else []


def costs_data(run, provenance, full: bool = False):
    """The ``costs`` stage: the cost by line of the compiled program, its peak (read
    from the dumps of its compile, else from one more compile) and collectives.
    The optimized module is the one the report's model read (a model of its own
    where the report shows neither StableHLO nor the compiled program), read once
    for the costs, the peak's lines and the collectives."""
    model = provenance
    if model is None or not {"stablehlo", "compiled"} <= set(model.stages):
        # The collectives' lines and shardings are read from a model of its own.
        model = build_provenance(run.compiled, stages=("stablehlo", "compiled"))
    parsed = (
        (model.stages["compiled"], model.source_tables()) if "compiled" in model.stages else None
    )
    peak, unread = None, run.peak_unread
    try:
        if run.peak is not None:
            peak = run.peak.read(lines_by_label(*parsed) if parsed else None)
        elif unread is None:
            peak = peak_memory(run.compiled)
    except Exception as e:  # noqa: BLE001 - the rest of the stage stands
        unread = f"the buffer assignment could not be read: {e}"
    found = collectives(model)
    callers = {(model.files[f].path, line) for f, line in caller_lines(model)}
    return costs_view.costs_json(
        run.compiled,
        cost_by_line(run.compiled, parsed=parsed),
        peak,
        found,
        _files(provenance),
        full=full,
        callers=callers,
        unavailable={"peak": unread} if unread else None,
    )


def _register_built_ins() -> None:
    for spec in stage_registry.STAGES:
        if spec.kind == "program":
            register_kind(ProgramKind(spec))
        else:
            register_kind(
                {
                    "source": SourceKind,
                    "passes": PassesKind,
                    "costs": CostsKind,
                    "cost_analysis": CostAnalysisKind,
                    "memory": MemoryKind,
                }[spec.name]()
            )


_register_built_ins()
