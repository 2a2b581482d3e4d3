"""``StageReport``: what each stage made of a function, built once and shown three ways.

A report holds the provenance model of the core (every op of every stage tied to
its source line), the pre-optimization HLO, the cost and memory analyses, the
per-stage timings, and whatever could not be made (a failure, or stages that
cannot exist on this machine). Its display bundle has three forms:

- ``application/vnd.olympus.stages+json``: the data (schema in ``docs/report.md``);
- ``text/html``: static, self-contained HTML, readable with no script and no kernel,
  followed by the data and the interactive view, which replaces it wherever output
  scripts run (:mod:`.interactive`);
- ``text/plain``: a short summary.

>>> from olympus_jupyter.staging import run_stages
>>> report = build_report(run_stages(lambda x: x * 2, (1.0,)))
>>> sorted(report._repr_mimebundle_())
['application/vnd.olympus.stages+json', 'text/html', 'text/plain']
"""

from __future__ import annotations

import dataclasses
import json
import math
import os
import re
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any, Literal

from olympus import stage_registry
from olympus.argument_names import fallback_names
from olympus.buffers import lines_by_label
from olympus.dumps import merge_needs
from olympus.gc_pause import paused_gc
from olympus.op_costs import op_cost
from olympus.op_instructions import op_keys
from olympus.provenance import Op, Provenance
from olympus.provenance import build as build_provenance
from olympus.provenance.build import Reading, read_before_compile
from olympus_jupyter.report import bundle, cells, costs_view, kinds
from olympus_jupyter.report.builtin_kinds import costs_data
from olympus_jupyter.report.kinds import MakeContext
from olympus_jupyter.report import interactive as interactive_view
from olympus_jupyter.report.device_memory import MAX_LARGEST, device_memory, memory_words
from olympus_jupyter.report.data import MEDIA_TYPE, SCHEMA, VERSION, Analyses, compact_json
from olympus_jupyter.report.html import render_html
from olympus_jupyter.report.display_bundle import display_bundle, plain_forms
from olympus_jupyter.report.markup import Markup
from olympus_jupyter.report import live_reports, widget_view
from olympus_jupyter.report.passes_view import journey_json
from olympus_jupyter.report.output_cap import MAX_PAGE_BYTES, capped_forms, capped_page
from olympus_jupyter.report.shared_dumps import SharedDumps
from olympus_jupyter.report.text import render_text
from olympus_jupyter.report.validate import BundleError
from olympus_jupyter.staging.runner import StagedRun, StageFailure, UserFrame, failure_of


@dataclasses.dataclass(frozen=True)
class StageReport:
    """What each stage made of one function, tied to its source; display it or save it.

    Build one with :func:`olympus_jupyter.inspect` (or ``%olympus_lower``).
    ``stages`` are the registry's stage names it shows, in order
    (:mod:`olympus.stage_registry`); ``texts`` the program texts that are not part
    of the provenance model (the HLO the compiler takes, ``hlo``).
    ``save(path)`` writes a standalone HTML page that works offline, interactive
    in any browser.
    """

    name: str
    platforms: tuple[str, ...]
    stages: tuple[str, ...]
    provenance: Provenance | None
    texts: Mapping[str, str] = dataclasses.field(default_factory=dict)
    analyses: Analyses = Analyses()
    timings: Mapping[str, float] = dataclasses.field(default_factory=dict)
    failure: StageFailure | None = None
    unavailable: Mapping[str, str] = dataclasses.field(default_factory=dict)
    debug_info: bool = True
    full: bool = False
    #: What the reader should know about what is shown (e.g. that the output was capped).
    notes: tuple[str, ...] = ()
    #: XLA's pass pipeline and each line's journey through it (the ``passes``
    #: stage, :mod:`.passes_view`), or None.
    passes: Mapping[str, Any] | None = None
    #: Where the compiled program's cost goes, by line: flops, bytes, the buffers
    #: live at the peak, the collectives (the ``costs`` stage, :mod:`.costs_view`),
    #: or None.
    costs: Mapping[str, Any] | None = None
    #: The hardware compiled for without having it, and whether the program fits
    #: in its devices' memory (:mod:`.device_memory`), as plain data; None: this
    #: machine's devices.
    target: Mapping[str, Any] | None = None
    #: The data of the stages of registered kinds (:mod:`.kinds`), by stage name.
    stage_data: Mapping[str, Any] = dataclasses.field(default_factory=dict)
    #: What the kernel that made the report keeps beside the bundle's data, by
    #: stage name (``passes``: every module of the pipeline read once, for the
    #: journey of any line or op; ``costs``: the cost by op): a report read back
    #: from its data (``from_json``) has none.
    live: Mapping[str, Any] = dataclasses.field(default_factory=dict, repr=False, compare=False)
    _memo: dict = dataclasses.field(default_factory=dict, repr=False, compare=False)

    def _memoized(self, key, make):
        """A form is rendered once per report: reports are immutable."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    # -- the forms ----------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The ``application/vnd.olympus.stages+json`` form (see docs/report.md)."""
        return bundle.to_json(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "StageReport":
        """Reads a report back from :meth:`to_json` data (this version or an earlier one)."""
        return cls(**bundle.fields_from_json(data))

    def to_json_text(self) -> str:
        """:meth:`to_json` as compact JSON text (ASCII), made once: what a notebook
        saves of the data, measured by the output cap and embedded in the HTML."""
        return self._memoized("json-text", lambda: compact_json(self.form(MEDIA_TYPE)))

    def html(
        self,
        *,
        full: bool | None = None,
        standalone: bool = False,
        interactive: bool | None = None,
        highlight: bool | None = None,
        unstyled: bool | None = None,
    ) -> str:
        """The HTML form: static HTML, readable with no script; ``full=True`` lifts
        the cap on long stage texts. ``interactive`` (the default for a
        ``standalone`` page) adds the report's data and the interactive view, which
        takes the static HTML's place where scripts run (see :mod:`.interactive`).
        ``highlight`` colours the stage texts; by default all but a display's
        (interactive, not standalone): there the view colours them itself and the
        static HTML is a fallback, which costs a fifth as much uncoloured.
        ``unstyled`` writes the source and stage texts as numbered ``<pre>`` text,
        which reads the same where a frontend drops the style sheet (GitHub, an
        untrusted notebook); by default a display's fallback is written so.
        """
        full = self.full if full is None else full
        interactive = standalone if interactive is None else interactive
        if highlight is None:
            highlight = standalone or not interactive or interactive_view.viewer() is None
        if unstyled is None:
            unstyled = interactive and not standalone and interactive_view.viewer() is not None
        if not interactive:
            return self._memoized(
                ("html", full, standalone, highlight, unstyled),
                lambda: render_html(
                    self, full=full, standalone=standalone, highlight=highlight, unstyled=unstyled
                ),
            )
        if not standalone:  # the static fragment, made once, then the view
            return self._memoized(
                ("live", full, highlight, unstyled),
                lambda: Markup(
                    self.html(full=full, highlight=highlight, unstyled=unstyled) + self._view_tail()
                ),
            )
        return self._memoized(
            ("live-page", full, highlight, unstyled),
            lambda: render_html(
                self,
                full=full,
                standalone=True,
                after=self._view_tail(),
                highlight=highlight,
                unstyled=unstyled,
            ),
        )

    def _view_tail(self) -> Markup:
        """The report's data and the interactive view, after its static HTML."""
        return interactive_view.live_tail(self.to_json_text())

    def text(self) -> str:
        """The short ``text/plain`` summary."""
        return self._memoized("text", lambda: render_text(self))

    def form(self, mime: str):
        """One form of the display bundle (uncapped), by its media type."""
        if mime == MEDIA_TYPE:
            return self._memoized("json", self.to_json)
        if mime == "text/html":
            return self.html(interactive=True)
        return {"text/plain": self.text}[mime]()

    def forms(self) -> dict[str, Any]:
        """The three forms of the display bundle, uncapped."""
        return {mime: self.form(mime) for mime in (MEDIA_TYPE, "text/html", "text/plain")}

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, Any]:
        # Displaying a report again (a cached one, say) reuses the forms made the first
        # time. What a notebook keeps is capped (output_cap.MAX_OUTPUT_BYTES) unless
        # the report is ``full``.
        # In a kernel whose notebook can fetch what the cap left out (live_reports), a
        # capped output carries the token its report is kept under.
        live = live_reports.LIVE
        forms = (
            self.forms()
            if self.full
            else self._memoized(
                "capped",
                lambda: plain_forms(capped_forms(self, live=live.offer if live.enabled else None)),
            )
        )
        held = forms.get(MEDIA_TYPE, {}).get("live")
        if held:  # shown again: the most recent
            live.hold(held["report"], self)
        return display_bundle(forms, include, exclude)

    def _display_(self) -> Any:
        """What marimo shows (its display protocol, asked before any other): the
        interactive view as an anywidget, as marimo runs no script of an HTML output
        (:mod:`.widget_view`). IPython never asks for it."""
        return widget_view.display_object(self)

    def __repr__(self) -> str:
        return self.text()

    def save(
        self,
        path: str | os.PathLike,
        *,
        full: bool = True,
        interactive: bool = True,
        limit: int | Literal["auto"] | None = "auto",
    ) -> str:
        """Writes a standalone HTML report; returns the path written. The page works
        offline, and is interactive in any browser: it carries the report's data and
        the interactive view (``interactive=False`` writes the static HTML alone).
        A page over ``limit`` bytes is cut as a notebook's output is, saying what it
        leaves out (:func:`~.output_cap.capped_page`); ``limit=None`` writes
        everything. ``"auto"``: 5 MB (``output_cap.MAX_PAGE_BYTES``: a bigger page
        takes seconds to open), or everything for a ``full`` report.
        The data the page carries is checked against the bundle schema first: a
        page that would not read back is not written (``BundleError``)."""
        path = os.fspath(path)
        if not path.endswith((".html", ".htm")):
            raise ValueError(f"save() writes HTML: give a path ending in .html, got {path!r}.")
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise FileNotFoundError(
                f"Cannot save to {path!r}: folder {directory!r} does not exist."
            )
        if limit == "auto":
            limit = None if self.full else MAX_PAGE_BYTES
        page, data_text = capped_page(self, limit, full=full, interactive=interactive)
        if data_text is not None:
            try:
                bundle.fields_from_json(json.loads(data_text))  # as the page reads it
            except ValueError as e:
                raise BundleError(
                    f"save() did not write {path!r}: the report's data does not follow "
                    f"the bundle schema, so the page would show only an error ({e}). "
                    f"This is a bug in Olympus; save(path, interactive=False) writes "
                    f"the static page."
                ) from None
        with open(path, "w", encoding="utf-8") as out:
            out.write(page)
        return path

    # -- reading it -------------------------------------------------------------------

    def stage_text(self, stage: str) -> str | None:
        """The full text of a program stage (``olympuspr``, ``stablehlo``, ``hlo``,
        ``compiled``...), ``None`` where the report does not hold it.

        Raises ``KeyError`` for a name that is not a program stage.
        """
        spec = stage_registry.stage(stage)
        if spec.kind != "program":
            programs = [s.name for s in stage_registry.program_stages()]
            raise KeyError(f"{stage!r} is not a program stage; choose from {', '.join(programs)}.")
        if not spec.linked:
            return self.texts.get(stage)
        if self.provenance is None or stage not in self.provenance.stages:
            return None
        return self.provenance.stages[stage].text

    def journey(
        self, line: int, file: int | str | None = None, *, frames: str = "user"
    ) -> dict[str, Any] | None:
        """Where the instructions of source ``line`` went through XLA's passes (the
        ``passes`` stage): ``start`` and ``end`` (the instructions that carried it
        before the first pass and after the last: label, opcode, fusion, fusion
        kind) and ``events`` (what each pass did to them: fused, removed, renamed,
        duplicated, turned into a custom call…, each naming the pass and its row in
        ``passes['rows']``). ``file``: the path, base name or index of a source
        file of the report (default: the function's). ``None`` when no instruction
        came from that line; raises ``ValueError`` when the report has no
        ``passes`` stage (``inspect(f, x, passes=True)``, ``%olympus_lower --passes``).

        Any frame of an instruction's call stack answers: a line the instructions
        are charged to (its innermost of the user's own code) gives those
        instructions, as ``passes['journeys']`` holds them; any other line (a
        library's, such as flax's ``Dense``, or one that calls a function) gives
        every instruction whose call stack passes through it. ``frames="stack"``
        gives that for a charged line too (its own instructions and those of the
        functions it calls). Lines that are not charged are answered in the kernel
        that made the report (a report read back from its data answers charged
        lines only).
        """
        if frames not in ("user", "stack"):
            raise ValueError(
                f"frames={frames!r}: choose 'user' (the default: a line's own "
                f"instructions where it has any) or 'stack' (every instruction whose "
                f"call stack passes through the line)."
            )
        passes = self._passes()
        model = self.provenance
        if model is None:
            return None
        index = model.function.file if file is None else model.file_index(file)
        if frames == "user":
            for j in passes["journeys"]:
                if j["file"] == index and j["line"] == line:
                    return j
        found = self.live.get("passes")
        if found is None or index is None:
            return None
        j = found.through(self._raw_paths()[index], line)
        if not j.start and not any(j.carriers):
            return None
        return journey_json(j, index, _row_of_step(passes))

    def journey_of_op(self, op: str | Op) -> dict[str, Any]:
        """Where the instructions that came from one op went through XLA's passes:
        ``op`` is an olympuspr equation or a StableHLO op, by its id in the report's
        model (``"stablehlo:12"``, as ``report.provenance.ops_for_line`` gives them)
        or the :class:`~olympus.provenance.Op` itself. The journey has the form of
        :meth:`journey`'s, with ``op`` (the id) in place of ``file`` and ``line``;
        its ``start`` and ``end`` are empty where no instruction came from the op.

        An instruction came from the op when XLA's metadata says so: its op name
        ends with the op's (name stack and primitive) and its call stack starts
        with the op's (:mod:`olympus.op_instructions`); ops alike in both share
        their instructions, and an op that holds others (a ``jit`` or ``scan``
        equation, a StableHLO function) stands for them too. Raises ``ValueError``
        without a ``passes`` stage, for an op of another stage, or for a report
        read back from its data (the kernel that made it answers), and
        ``KeyError`` for an op the report's model does not have."""
        passes = self._passes()
        ident, keys = self._op_keys(op, "passes", "journey")
        found = self.live["passes"]
        data = journey_json(found.of_keys(keys), 0, _row_of_step(passes))
        del data["file"], data["line"]
        return {"op": ident, **data}

    def cost_share_of_op(self, op: str | Op) -> dict[str, Any]:
        """What the compiled instructions that came from one op cost (``costs``
        stage): ``op`` as for :meth:`journey_of_op`. A dict with ``op`` (its id),
        ``flops``, ``transcendentals``, ``bytes`` and each one's share of the
        program's total (``flops_share``...: of the totals the rows of
        :meth:`cost_by_line` add up to, loops counted × their trip counts). Each
        instruction's cost is the part :meth:`cost_by_line` charges by it (a fused
        instruction's part of its fusion; one XLA made with no location is
        counted with the op it came from or the instruction it feeds, as there).
        Raises ``ValueError`` without a ``costs`` stage, for an op of another
        stage, or for a report read back from its data, and ``KeyError`` for an op
        the report's model does not have."""
        data, _files = self._costs()
        ident, keys = self._op_keys(op, "costs", "cost share")
        figures = op_cost(self.live["costs"], keys)
        totals = costs_view.counted_totals(data)
        out: dict[str, Any] = {"op": ident}
        for key, name in (
            ("flops", "flops"),
            ("transcendentals", "transcendentals"),
            ("bytes", "bytes accessed"),
        ):
            out[key] = figures[name]
            total = float(totals.get(name, 0.0))
            out[f"{key}_share"] = figures[name] / total if total else 0.0
        return out

    def _passes(self) -> Mapping[str, Any]:
        if self.passes is None:
            raise ValueError(
                "This report has no passes stage: make it with "
                "inspect(f, *args, passes=True) or %olympus_lower --passes."
            )
        return self.passes

    def _raw_paths(self) -> tuple[str, ...]:
        """The model's files' paths as XLA names them (a notebook cell by the file
        that ran, not ``In [3]``)."""
        held = self.live.get("files")
        if held is not None:
            return tuple(held)
        return tuple(f.path for f in self.provenance.files) if self.provenance else ()

    def _op_keys(self, op: str | Op, stage: str, what: str) -> tuple[str, tuple]:
        """The id of ``op`` and its keys, for a question the ``stage`` data of the
        kernel answers (``what``: a journey, a cost share)."""
        ident = op.id if isinstance(op, Op) else str(op)
        if self.live.get(stage) is None:
            raise ValueError(
                f"The {what} of an op is made in the kernel that made the report; this "
                f"report was read back from its data. Make the report again with "
                f"inspect(f, *args, {stage}=True)."
            )
        if self.provenance is None:
            raise ValueError(f"This report has no provenance model: op {ident!r} is unknown.")
        return ident, op_keys(self.provenance, ident, self._raw_paths())

    def _costs(self) -> tuple[Mapping[str, Any], list[str]]:
        if self.costs is None:
            raise ValueError(
                "This report has no costs stage: make it with "
                "inspect(f, *args, costs=True) or %olympus_lower --costs."
            )
        files = [f.path for f in self.provenance.files] if self.provenance else []
        return self.costs, files

    def cost_by_line(self, frames: str = "user") -> list[dict[str, Any]]:
        """Flops, transcendentals, bytes accessed and bytes live at the peak of each
        source line of the compiled program, as plain data (``costs`` stage): one
        dict a line (``what`` ``'line'``, ``file``, ``line``), biggest flops first,
        then the compiler-made row and the arguments' row; each figure with its
        share of XLA's total (``flops_share``...). The rows add up to XLA's totals
        (``report.costs['totals']``). Raises ``ValueError`` without a ``costs``
        stage (``inspect(f, x, costs=True)``, ``%olympus_lower --costs``).

        Each instruction is charged to the innermost line of its call stack in the
        user's own code (``frames="user"``, the default; the report's ``focus`` says
        whose code is whose), and ``via`` lists the library lines beneath a row
        that made part of its cost. ``frames="innermost"`` charges each to its
        innermost line, a library's (flax's, optax's...) or not."""
        data, files = self._costs()
        return costs_view.line_rows(data, files, frames)

    def cost_by_module(self, depth: int | None = None) -> list[dict[str, Any]]:
        """The compiled program's cost by module and layer (``costs`` stage): the
        tree of the scopes JAX recorded for each instruction (flax linen module
        paths such as ``Model/Block_0/Dense_0``, equinox's and haiku's module names,
        ``jax.named_scope``), one dict per node in depth-first order with ``path``,
        ``name``, ``depth`` and its subtree's ``flops``, ``transcendentals``,
        ``bytes``, ``peak`` (bytes live at the peak) and ``collectives``, each
        figure with its share of the total (``flops_share``...); ``path`` ``""``
        holds what no module made. The top-level rows add up to XLA's totals.
        ``depth``: down to that depth only (0: the top level)."""
        data, _files = self._costs()
        return costs_view.module_rows(data, self.provenance, depth)

    def device_memory(self) -> dict[str, Any] | None:
        """Will it fit? For a report made for a target (``target='v5e:4x4'``): the
        device kind, its memory (``capacity_bytes``, from Olympus's table of chips:
        compile-only devices report none), the program's peak per device
        (``peak_bytes``; ``peak_source`` names what measured it: the live-range
        peak with ``costs=True``, else ``memory_analysis()``), the headroom and
        ``fits``. A program XLA refused for lack of memory is still a report:
        ``fits`` is False, with ``required_bytes`` and ``available_bytes`` from
        XLA's error. None for a report of this machine's devices."""
        memory = (self.target or {}).get("memory")
        return dict(memory) if memory is not None else None

    def peak_buffers(self) -> list[dict[str, Any]]:
        """The buffers live at the compiled program's memory peak, biggest first: the
        instruction that defines each (``label``), ``size``, ``kind`` (argument,
        output, temporary, constant), ``shape`` and the ``file``/``line`` that made
        it; an argument (or an output written over a donated one) has its pytree
        name as ``argument`` (``params/Dense_0/kernel``); ``report.costs['peak']``
        has the peak's total and how it relates to ``memory_analysis()``. Empty when the peak could not be read
        (``report.costs['unavailable']``). Needs the ``costs`` stage."""
        data, files = self._costs()
        return costs_view.peak_buffers(data, files)

    def collectives(self) -> list[dict[str, Any]]:
        """The collectives of the compiled program (a sharded one's all-gathers,
        all-reduces…): opcode, whether the compiler inserted it, replica groups,
        bytes per device and moved, the ``(file, line)`` pairs that caused it and
        their shardings, and the pytree names of the arguments it moves
        (``arguments``). Empty for a program on one device. Needs the ``costs``
        stage."""
        data, files = self._costs()
        return costs_view.collectives_rows(data, files)

    @property
    def hlo_text(self) -> str | None:
        """The HLO the compiler takes (``stage_text('hlo')``)."""
        return self.texts.get("hlo")

    @property
    def ok(self) -> bool:
        """True when every requested stage was made."""
        return self.failure is None


def _jsonable_cost(cost) -> dict[str, float] | None:
    """XLA's cost figures as plain floats; a figure that is not a finite number (which
    JSON cannot hold) is left out."""
    if not cost:
        return None
    if isinstance(cost, (list, tuple)):  # older backends: one dict per device
        cost = cost[0] if cost else None
        if not cost:
            return None
    figures = {str(k): float(v) for k, v in cost.items()}
    return {k: v for k, v in figures.items() if math.isfinite(v)}


def _lowered_cost(lowered, failures, unavailable):
    """The lowered program's cost analysis; where the cost stage cannot exist anyway
    (it says why), figures that cannot be made are left out, not a failure."""
    if "cost_analysis" not in unavailable:
        return _jsonable_cost(failures.attempt("cost_analysis", lowered.cost_analysis))
    try:
        return _jsonable_cost(lowered.cost_analysis())
    except Exception:  # noqa: BLE001 - the stage is unavailable, with its reason
        return None


class _Failures:
    """Collects what failed while a report was made: the first failure is the
    report's, and each failed stage is unavailable with its reason."""

    def __init__(self, failure: StageFailure | None, unavailable: dict[str, str]):
        self.failure = failure
        self.unavailable = unavailable

    def attempt(self, stage: str, make):
        """``make()``, or ``None`` with the failure recorded against ``stage``."""
        try:
            return make()
        except Exception as e:  # noqa: BLE001 - shown in the report, never a crash
            failure = failure_of(stage, e)
            self.failure = self.failure or failure
            self.unavailable.setdefault(stage, f"failed: {failure.headline()}")
            return None


@dataclasses.dataclass
class EarlyReading:
    """The part of a report read while XLA compiles its program: the provenance of
    the traced and lowered stages, the HLO the compiler takes and its text (the
    text stages that lowering makes), and the lowered cost analysis. Give it to
    :func:`~olympus_jupyter.staging.run_stages` as ``beside_compile``, then to
    :func:`build_report` as ``early``: the report is the same as without it, made
    sooner. What the thread could not make, :func:`build_report` makes (and reports
    the failure of) as it would without it.

    >>> from olympus_jupyter.staging import run_stages
    >>> early = EarlyReading(("olympuspr", "stablehlo", "hlo", "compiled"))
    >>> run = run_stages(lambda x: x * 2, (1.0,), beside_compile=early)
    >>> # Best effort: on a busy machine the compile may end before the thread starts.
    >>> made = None if early.reading is None else (sorted(early.reading.made), sorted(early.texts))
    >>> made in (None, (["olympuspr", "stablehlo"], ["hlo"]))
    True
    >>> build_report(run, early=early).provenance.stage_names
    ('olympuspr', 'stablehlo', 'compiled')
    """

    stages: tuple[str, ...]
    debug_info: bool = True
    reading: Reading | None = None
    #: The texts of the stages made by lowering that have one (``hlo``), by name.
    texts: dict[str, str] = dataclasses.field(default_factory=dict)
    #: The lowered program's cost analysis, once made.
    cost_lowered: Any = None
    #: The ``Lowered`` all of it was read from.
    lowered: Any = None

    def __call__(self, run: StagedRun):
        """The work to do beside the compile of ``run.lowered`` (what touches the
        MLIR module is taken here, before the compile starts), or None."""
        if run.lowered is None:
            return None
        lowered = self.lowered = run.lowered
        try:
            read = read_before_compile(lowered, _linked(self.stages))
            make_hlo = lowered._hlo_later()
        except Exception:  # noqa: BLE001 - made again, and reported, by build_report
            return None
        texts = [
            spec
            for spec in map(stage_registry.stage, self.stages)
            if spec.text is not None and spec.step == "lower"
        ]

        def work():
            make_hlo()
            self.reading = read()
            for spec in texts:  # from the HLO module made above: no MLIR touched
                self.texts[spec.name] = spec.text(  # type: ignore[misc, assignment]
                    lowered, self.debug_info
                )
            self.cost_lowered = lowered.cost_analysis()

        return work

    def of(self, run: StagedRun) -> "EarlyReading | None":
        """This reading, if it was read from ``run``'s lowering, else None."""
        return self if self.lowered is not None and self.lowered is run.lowered else None


def _linked(stages) -> tuple[str, ...]:
    """The stages among ``stages`` whose ops are tied to source."""
    return tuple(s for s in stages if stage_registry.stage(s).linked)


def _stage_objects(run: StagedRun) -> dict[str, Any]:
    return {"trace": run.traced, "lower": run.lowered, "compile": run.compiled}


@paused_gc()
def build_report(
    run: StagedRun,
    *,
    stages: tuple[str, ...] | None = None,
    debug_info: bool = True,
    full: bool = False,
    models: MutableMapping | None = None,
    early: EarlyReading | None = None,
    pass_re: str = ".*",
    focus: tuple[str, ...] | None = None,
) -> StageReport:
    """Makes the report of a :class:`~olympus_jupyter.staging.StagedRun` (no recompiling).

    ``stages`` are registry names (default: the registry's default stages).
    ``pass_re`` filters the passes of the ``passes`` stage (all by default).
    ``focus``: what is the user's own code, which costs, buffers, collectives,
    journeys and links are charged to (:func:`olympus.provenance.focus.focus_of`).
    ``models`` (a mapping from stage object to its provenance models, e.g. a
    ``weakref.WeakKeyDictionary``) keeps models to reuse when a report of the same
    stages is made again with other display options. ``early``: what was read
    while the program compiled (:class:`EarlyReading`). What fails on the way (an
    analysis, a stage's text) is the report's failure, shown with its message.
    Python's cyclic garbage collector is paused while the report is read from the
    run (:func:`olympus.gc_pause.paused_gc`): the models and the stages' data are
    hundreds of thousands of objects alive until the report is made, which full
    collections would go over again and again, freeing nothing.
    """
    stages = (
        stage_registry.default_names()
        if stages is None
        else tuple(dict.fromkeys(stage_registry.stage(s).name for s in stages))
    )  # former names too
    specs = [stage_registry.stage(s) for s in stages]
    early = early.of(run) if early is not None else None  # only a reading of this run
    unavailable = dict(run.unavailable)
    if "compile" in unavailable:
        reason = unavailable.pop("compile")
        for s in stage_registry.made_by("compile"):
            unavailable.setdefault(s, reason)
    if run.failure is not None and run.failure.stage in stage_registry.STEPS:
        for s in stage_registry.made_by(run.failure.stage):
            unavailable.setdefault(s, f"{run.failure.stage} failed")
    failures = _Failures(run.failure, unavailable)
    objects = _stage_objects(run)

    provenance = None
    stage_obj = run.compiled or run.lowered or run.traced
    linked = _linked(stages)
    if stage_obj is not None:
        cache = models.setdefault(stage_obj, {}) if models is not None else {}
        provenance = cache.get((linked, focus))
        if provenance is None:
            provenance = failures.attempt(
                "provenance",
                lambda: build_provenance(
                    stage_obj, stages=linked, start=early.reading if early else None, focus=focus
                ),
            )
            if provenance is not None:
                cache[linked, focus] = provenance
        if provenance is not None:
            for s, reason in provenance.unavailable.items():
                unavailable.setdefault(s, reason)

    made_early = early.texts if early is not None and early.debug_info == debug_info else {}
    texts = {}
    for spec in specs:
        obj = objects.get(spec.step)  # type: ignore[arg-type]  # None: no such step
        if spec.text is not None and obj is not None and spec.name not in unavailable:
            text = made_early.get(spec.name)
            if text is None:
                text = failures.attempt(spec.name, lambda: spec.text(obj, debug_info))
            if text is not None:
                texts[spec.name] = text

    lowered, compiled = run.lowered, run.compiled
    cost_lowered = None
    if lowered is not None:
        cost_lowered = (
            _jsonable_cost(early.cost_lowered)
            if early is not None and early.cost_lowered
            else _lowered_cost(lowered, failures, unavailable)
        )
    analyses = Analyses(
        cost_lowered=cost_lowered,
        cost_compiled=_jsonable_cost(failures.attempt("cost_analysis", compiled.cost_analysis))
        if compiled
        else None,
        memory=(lambda m: m.as_dict() if m else None)(
            failures.attempt("memory", compiled.memory_analysis)
        )
        if compiled
        else None,
    )
    # Each stage kind's data (kinds.StageKind.make). What costs one more compile is
    # kept with the models: another display of the same stages compiles no more.
    # The kinds that read XLA's dumps share one dumped compile (shared_dumps): the
    # compile's own where it dumped what they need, else one more, with all their needs.
    kept = models.setdefault(stage_obj, {}) if models is not None and stage_obj else {}
    context = MakeContext(
        run=run, provenance=provenance, full=full, pass_re=pass_re, focus=focus, kept=kept
    )
    makers = []
    for handler in map(kinds.kind, stages):
        step = handler.spec.step
        if (
            handler.makes_data()
            and handler.name not in unavailable
            and (step is None or context.stage_object(step) is not None)
        ):
            key = handler.cache_key(context)
            makers.append((handler, key, kept.get(key) if key is not None else None))
    planned = merge_needs(h.dump_needs(context) for h, _, data in makers if data is None)
    context = dataclasses.replace(context, dumps=SharedDumps(run, planned, kept))
    fields: dict[str, Any] = {}
    stage_data: dict[str, Any] = {}
    for handler, key, data in makers:
        if data is None:
            data = failures.attempt(handler.name, lambda: handler.make(context))
            if data is not None and key is not None:
                kept[key] = data
                if handler.name in context.live:
                    kept[key, "live"] = context.live[handler.name]
        elif (key, "live") in kept:
            context.live[handler.name] = kept[key, "live"]
        if data is None:
            continue
        if handler.field is not None:
            fields[handler.field] = data
        else:
            stage_data[handler.name] = data
    if provenance is not None:  # as XLA names them, before cells are relabelled
        context.live["files"] = tuple(f.path for f in provenance.files)
    target = _target_data(run, analyses, fields.get("costs"), failures.failure, provenance)
    provenance, failure = _as_cells(provenance, failures.failure)
    return StageReport(
        name=run.name,
        platforms=tuple(run.platforms),
        stages=stages,
        provenance=provenance,
        texts=texts,
        analyses=analyses,
        timings=dict(run.timings),
        failure=failure,
        unavailable=unavailable,
        debug_info=debug_info,
        full=full,
        stage_data=stage_data,
        live=dict(context.live),
        target=target,
        **fields,
    )


def _without_layouts(shape: str) -> str:
    """``f32[8,128]{1,0:T(8,128)}`` -> ``f32[8,128]``, tuples too.

    >>> _without_layouts("(f32[8]{0:T(256)}, s32[]{:T(128)})")
    '(f32[8], s32[])'
    """
    while True:
        shorter = re.sub(r"\{[^{}]*\}", "", shape)
        if shorter == shape:
            return shape
        shape = shorter


def _peak_figures(dump, run: StagedRun, model) -> tuple[int | None, list[dict[str, Any]]]:
    """The live-range peak in the device's memory (HBM, memory space 0) in bytes and
    the biggest buffers live at it (with the user's lines that made each), read
    from a :class:`~olympus.buffers.PeakDump`; ``(None, [])`` where there is none
    or it cannot be read. The lines are read from the report's model of the
    compiled program where it has one (the module the dump holds, parsed once),
    as the costs stage reads them; a compile XLA refused has none."""
    if dump is None:
        return None, []
    lines = None
    names: Sequence[str] = ()
    if run.compiled is not None and model is not None and "compiled" in model.stages:
        lines = lines_by_label(model.stages["compiled"], model.source_tables())
        names = fallback_names(run.compiled)
    try:
        peak = dump.read(lines, names)
    except (OSError, ValueError):
        return None, []
    largest = sorted(peak.buffers, key=lambda b: -b.size)[:MAX_LARGEST]
    # The device's own memory (space 0, HBM): what "will it fit" asks of. On TPU the
    # live-range peak adds the on-chip memories' values (VMEM, SMEM) too.
    return (
        peak.by_memory_space().get(0, peak.peak_bytes),
        [
            {
                "label": b.label,
                "bytes": b.size,
                "shape": _without_layouts(b.shape),
                "kind": b.kind,
                "lines": [[f, n] for f, n in b.lines[:4]],
                **({"argument": b.argument} if b.argument else {}),
            }
            for b in largest
        ],
    )


def _target_data(
    run: StagedRun, analyses: Analyses, costs, failure, model
) -> dict[str, Any] | None:
    """What the report keeps of the target a run was compiled for: its devices, the
    mesh, and whether the program fits in their memory (``model``: the report's
    provenance model, whose compiled program gives the buffers' lines)."""
    if run.target is None:
        return None
    data = run.target.as_json()
    if run.mesh:
        data["mesh"] = dict(run.mesh)
    message = failure.message if failure is not None and failure.stage == "compile" else None
    live, largest = _peak_figures(run.refused if message else run.peak, run, model)
    answer = device_memory(data, analyses.memory, costs, message, live, largest)
    if answer is not None:
        data["memory"] = {**answer, "words": memory_words(answer)}
    return data


def _row_of_step(passes: Mapping[str, Any]) -> dict[int, int]:
    """The row of the pass table that shows each dumped step."""
    return {r["step"]: k for k, r in enumerate(passes["rows"]) if r["step"] is not None}


def _as_cells(provenance, failure: StageFailure | None):
    """The provenance and failure with notebook cells shown as typed, labelled
    ``In [n]`` (:mod:`~olympus_jupyter.report.cells`)."""
    paths = [f.path for f in provenance.files] if provenance is not None else []
    paths += [fr.file for fr in failure.frames] if failure is not None else []
    found = cells.notebook_cells(paths)
    if not found:
        return provenance, failure
    if provenance is not None:
        provenance = dataclasses.replace(
            provenance, files=tuple(cells.relabel(f, found) for f in provenance.files)
        )
    if failure is not None:
        failure = dataclasses.replace(
            failure, frames=tuple(cells.relabel_frame(fr, found) for fr in failure.frames)
        )
    return provenance, failure


__all__ = [
    "StageReport",
    "Analyses",
    "build_report",
    "EarlyReading",
    "MEDIA_TYPE",
    "SCHEMA",
    "VERSION",
    "UserFrame",
    "costs_data",
]
