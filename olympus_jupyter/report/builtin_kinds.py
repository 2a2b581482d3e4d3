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

from collections.abc import MutableMapping
from typing import Any

from olympus import stage_registry
from olympus.argument_names import fallback_names, input_names
from olympus.buffers import lines_by_label, peak_memory
from olympus.collectives import collectives
from olympus.dumps import DumpedCompile, DumpNeeds
from olympus.gc_pause import paused_gc
from olympus.gpu_costs import no_cost_analysis
from olympus.line_costs import cost_by_line
from olympus.line_time import time_by_line
from olympus.op_costs import op_costs, source_costs
from olympus.dump_follow import ModuleReader
from olympus.passes import journey_index, journey_reader, origins
from olympus.provenance import build as build_provenance

from olympus_jupyter.report import costs_view
from olympus_jupyter.report.costs_html import costs_section
from olympus_jupyter.report.costs_view import cap_costs, check_costs
from olympus_jupyter.report.peak_words import peak_summary
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
from olympus_jupyter.report.passes_view import (
    cap_passes,
    check_passes,
    passes_json,
    read_deltas,
)
from olympus_jupyter.report.sections import unavailable
from olympus_jupyter.report.text import cost_lines, costs_lines, pass_lines
from olympus_jupyter.report.time_view import add_time

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
        # An earlier stage not made says why too where no failure does (a stage
        # object given keeps no traced program, say).
        if (
            self.name in report.stages
            and (self.spec.step == "compile" or report.failure is None)
            and self.name in report.unavailable
            and self.unavailable_reason(report) is not None
        ):
            return [f"  {self.name}: unavailable ({report.unavailable[self.name]})"]
        return []


class PassesKind(StageKind):
    """XLA's pass pipeline, pass by pass, and each source line's journey through it:
    read from XLA's per-pass dumps of a compile, the one the ``costs`` stage reads
    too (:mod:`.shared_dumps`)."""

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
        help="also dump XLA's passes (the compile's own dumps, shared with --costs) and "
        "show what each pass did, and where each line's ops went (default: every pass; "
        "REGEX keeps the passes whose names it matches)",
        control=Control(
            "pass_filter",
            "pass filter",
            "a regular expression of XLA pass names: the passes stage shows "
            "only those (empty: every pass; press Enter)",
        ),
    )
    text_rank = 30

    def cache_key(self, ctx: MakeContext):
        return (self.name, ctx.pass_re, ctx.full, ctx.focus)

    def dump_needs(self, ctx: MakeContext) -> DumpNeeds | None:
        return DumpNeeds(pass_re=ctx.pass_re)

    def module_readers(self, ctx: MakeContext) -> tuple[ModuleReader, ...]:
        # The journeys' instructions and the deltas: most of make()'s reading.
        return (journey_reader(ctx.focus), read_deltas)

    def make(self, ctx: MakeContext) -> Any:
        if ctx.run.lowered is None:
            return None
        pipeline = ctx.dumped(DumpNeeds(pass_re=ctx.pass_re)).passes()
        # Every module read once: the bundle's journeys, and any other the report is
        # asked for (a library's line, a caller's, an op's) in the kernel.
        index = ctx.live[self.name] = journey_index(pipeline, ctx.focus)
        return passes_json(
            pipeline,
            _files(ctx.provenance),
            full=ctx.full,
            focus=ctx.focus,
            index=index,
            model=ctx.provenance,
        )

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

    def dump_needs(self, ctx: MakeContext) -> DumpNeeds | None:
        return DumpNeeds(peak=True)

    def make(self, ctx: MakeContext) -> Any:
        if ctx.run.compiled is None:
            return None
        dump = None
        if ctx.run.lowered is not None:
            needs = DumpNeeds(peak=True)
            try:
                dump = ctx.dumped(needs)
            except Exception as e:  # noqa: BLE001 - the rest of the stage stands
                dump = DumpedCompile(needs, peak_unread=f"the dumped compile failed: {e}")
        return costs_data(
            ctx.run, ctx.provenance, ctx.full, dump=dump, focus=ctx.focus, live=ctx.live
        )

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
        # A CUDA program has none (cost_analysis() is None): said so, in every form.
        given = report.unavailable.get(self.name) or no_cost_analysis(report.platforms)
        return given or "this backend reports no cost analysis"

    def html(self, report, ctx: HtmlContext):
        reason = self.unavailable_reason(report)
        if reason is not None:
            return unavailable(ctx.uid, self.name, reason)
        return cost_section(report, ctx.uid)

    def text(self, report) -> list[str]:
        if self.unavailable_reason(report) is not None:
            said = no_cost_analysis(report.platforms)
            failed = report.unavailable.get(self.name)
            return [f"  {self.name}: unavailable ({failed or said})"] if said else []
        a = report.analyses
        lines = cost_lines(a.cost_lowered, a.cost_compiled)
        # A CUDA program's figures before optimization alone (JAX 0.12): why none after.
        said = no_cost_analysis(report.platforms, lowered=True) if not a.cost_compiled else None
        if said:
            lines.append(f"    after optimization (compiled): unavailable ({said})")
        return lines


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
        # The live-range peak (costs stage) first, memory_analysis()'s beside it,
        # each named; ASCII, as the whole summary.
        words = peak_summary(report.analyses.memory, report.costs, sep="; ")
        return [f"  peak memory {words}"] if words is not None else []


def _files(provenance) -> list[str]:
    return [f.path for f in provenance.files] if provenance is not None else []


def _origins_in(dump: DumpedCompile | None, focus):
    """Where ``dump`` holds the pass modules of its compile: the function that follows
    instructions without a location back through them (:func:`olympus.passes.origins`)."""
    pipeline = getattr(dump, "pipeline", None)
    if pipeline is None:
        return None
    return lambda labels: origins(pipeline, labels, focus)


def _read_once(find):
    """``find`` (labels -> their lines through the passes), each list of labels
    followed once: the costs' walk and the time's ask the same."""
    if find is None:
        return None
    asked: dict[tuple, object] = {}

    def once(labels):
        key = tuple(labels)
        if key not in asked:
            asked[key] = dict(find(key))
        return asked[key]

    return once


def _staged(model) -> tuple[str, int, int] | None:
    """The staged function's file, first and last line, where the model knows them."""
    f = model.function
    if f.file is None or f.first_line is None or f.last_line is None:
        return None
    return model.files[f.file].path, f.first_line, f.last_line


@paused_gc()  # its many small objects live until it ends: full collections free none
def costs_data(
    run,
    provenance,
    full: bool = False,
    dump: DumpedCompile | None = None,
    focus=None,
    live: MutableMapping | None = None,
):
    """The ``costs`` stage: the cost by line of the compiled program, its peak (read
    from ``dump``, a dumped compile of the same program, else from the dumps of its
    compile, else from one more compile) and collectives. ``live``, where given,
    gets the cost by op (``live["costs"]``: :func:`olympus.op_costs.source_costs`),
    which a report keeps in the kernel.
    The optimized module is the one the report's model read (a model of its own
    where the report shows neither StableHLO nor the compiled program), read once
    for the costs, the peak's lines and the collectives."""
    model = provenance
    if model is None or not {"stablehlo", "compiled"} <= set(model.stages):
        # The collectives' lines and shardings are read from a model of its own.
        model = build_provenance(run.compiled, stages=("stablehlo", "compiled"), focus=focus)
    parsed = (
        (model.stages["compiled"], model.source_tables()) if "compiled" in model.stages else None
    )
    # Each argument's pytree name: the one the program carries, else its args_info path.
    fallback = fallback_names(run.compiled)
    hlo = model.stages["compiled"].text if parsed else ""
    texts, unread = (dump.peak, dump.peak_unread) if dump is not None else (None, None)
    if texts is None and unread is None:
        texts, unread = run.peak, run.peak_unread
    peak = None
    try:
        if texts is not None:
            peak = texts.read(lines_by_label(*parsed) if parsed else None, fallback)
        elif unread is None:
            peak = peak_memory(run.compiled)
    except Exception as e:  # noqa: BLE001 - the rest of the stage stands
        unread = f"the buffer assignment could not be read: {e}"
    found = collectives(model)
    callers = {(model.files[f].path, line) for f, line in caller_lines(model)}
    traced = _read_once(_origins_in(dump, focus))  # the time's walk asks the same
    cost = cost_by_line(
        run.compiled,
        parsed=parsed,
        lowered=model.stages.get("stablehlo") if parsed else None,
        origins=traced,
        staged=_staged(model),
    )
    stacks: dict = {}  # each location's call stack, read once for both
    sources = source_costs(cost, model, stacks)
    if live is not None:
        live["costs"] = sources
    ops = None
    if provenance is not None:
        ops = op_costs(provenance, sources, stacks=stacks if provenance is model else None)
    missing = {"peak": unread} if unread else {}
    time = None
    target = getattr(run, "target", None)
    if target is not None:  # a target's: the time column, from the compiler or a roofline
        try:
            time = time_by_line(
                run.compiled,
                cost,
                target,
                parsed=parsed,
                lowered=model.stages.get("stablehlo") if parsed else None,
                origins=traced,
                staged=_staged(model),
            )
        except Exception as e:  # noqa: BLE001 - the rest of the stage stands
            missing["time"] = f"the time by line could not be worked out: {type(e).__name__}: {e}"
    data = costs_view.costs_json(
        run.compiled,
        cost,
        peak,
        found,
        _files(provenance),
        full=full,
        callers=callers,
        unavailable=missing or None,
        input_names=input_names(hlo, fallback) if hlo else None,
        ops=ops,
    )
    if time is not None:
        add_time(data, time, _files(provenance))
    return data


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
