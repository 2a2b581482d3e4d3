"""Stage kinds as handlers: one object per stage says how it is made and shown.

The stage table (:mod:`olympus.stage_registry`) says what each stage is called and
which step makes it; a :class:`StageKind` handler says the rest, in one place:

- ``make(ctx)``: its data, from the compiled stages (:class:`MakeContext`);
- ``dump_needs(ctx)``: what it reads of XLA's dumps (a
  :class:`~olympus.dumps.DumpNeeds`), which ``make`` gets from ``ctx.dumped(...)``:
  every kind's needs are met by one dumped compile (:mod:`.shared_dumps`);
- ``module_readers(ctx)``: what it reads of each per-pass module, done while XLA
  writes them (:class:`~olympus.dump_follow.DumpFollower`), before ``make`` asks;
- ``schema`` and ``check(data, files)``: how its data is checked when a report is
  read back (its part of the bundle schema);
- ``html(report, ctx)``: its section of the static HTML;
- ``text(report)``: its lines of the ``text/plain`` summary;
- ``cap(data, budget)``: its data cut to a byte budget, and a note saying what was
  left out (a notebook output and a saved page have a size cap,
  :mod:`.output_cap`): by default kept whole where it fits and left out where it
  does not; a :class:`TextKind` keeps its first lines, a :class:`TableKind` its
  first rows;
- ``option``: the option that asks for it, a row of the option table
  (:class:`~olympus_jupyter.report.option_table.Option`, with ``stage`` set to the
  kind's stage), registered with the kind: the magic, the CLI, ``inspect()``, the
  Inspector and ``ReportOptions`` take it from there;
- ``view``: which view of the JupyterLab extension renders its data. A kind the
  extension does not know names a generic view (``"text"``: a program text;
  ``"table"``: columns and rows) and gives data that follows that view's schema
  (``text_view``, ``table_view`` in ``bundle.schema.json``): see :class:`TextKind`
  and :class:`TableKind`.

Report building (:mod:`.stage_report`), the bundle (:mod:`.bundle`), the HTML
(:mod:`.html`) and the text (:mod:`.text`) loop over the handlers; the built-in
ones (source, programs, passes, costs, the analyses) are registered by
:mod:`.builtin_kinds`. A new kind is a subclass and one call:

>>> from olympus.stage_registry import StageSpec
>>> class StepTimes(TableKind):
...     spec = StageSpec("doc_step_times", "Step times", "times", "table", step="trace",
...                      unit="steps", default=False)
...     def rows(self, ctx):
...         return ["step", "seconds"], [[k, v] for k, v in ctx.run.timings.items()]
>>> handler = register_kind(StepTimes())
>>> handler is kind("doc_step_times"), handler.view
(True, 'table')
>>> unregister_kind("doc_step_times")  # (a test or an experiment takes it back)
"""

from __future__ import annotations

import dataclasses
import functools
import json
from collections.abc import Mapping, MutableMapping
from typing import Any

import fastjsonschema
import jsonschema

from olympus import stage_registry
from olympus.dump_follow import ModuleReader
from olympus.dumps import DumpedCompile, DumpNeeds, merge_needs
from olympus.stage_registry import StageSpec

from olympus_jupyter.report.data_cap import json_size, kept_prefix
from olympus_jupyter.report.markup import h, head_row
from olympus_jupyter.report.option_table import (
    Option,
    option_registered,
    register_option,
    unregister_option,
)
from olympus_jupyter.report.sections import section, unavailable
from olympus_jupyter.report.shared_dumps import SharedDumps
from olympus_jupyter.report.validate import SCHEMA_PATH, BundleError

__all__ = [
    "StageKind",
    "TextKind",
    "TableKind",
    "MakeContext",
    "HtmlContext",
    "register_kind",
    "unregister_kind",
    "kind",
    "kinds",
    "known",
    "kind_options",
    "dump_needs",
    "GENERIC_VIEWS",
]

#: The views of the JupyterLab extension that render any kind's data, by the schema
#: (a definition of ``bundle.schema.json``) that data follows.
GENERIC_VIEWS = {"text": "text_view", "table": "table_view"}


@dataclasses.dataclass(frozen=True)
class MakeContext:
    """What a handler's ``make`` reads: the staged run (``run.traced``,
    ``run.lowered``, ``run.compiled``, ``run.args``), the report's provenance model
    (or None), whether the report is ``full``, its pass filter and its ``focus``;
    ``kept`` keeps data between reports of the same stage objects (see
    :meth:`StageKind.cache_key`); ``dumps``, the build's dumped compiles (:meth:`dumped`)."""

    run: Any
    provenance: Any = None
    full: bool = False
    pass_re: str = ".*"
    #: What is the user's own code (``focus`` option: :mod:`olympus.provenance.focus`).
    focus: tuple[str, ...] | None = None
    kept: MutableMapping = dataclasses.field(default_factory=dict)
    dumps: SharedDumps | None = None
    #: What a kind keeps in the kernel beside its data, by stage name (the
    #: ``passes`` stage's :class:`~olympus.passes.JourneyIndex`, the ``costs``
    #: stage's cost by op): the report holds it (``StageReport.live``), a bundle
    #: does not.
    live: MutableMapping = dataclasses.field(default_factory=dict)

    def dumped(self, needs: DumpNeeds) -> DumpedCompile:
        """A dumped compile of the run's program that answers ``needs`` (what the
        kind declared in :meth:`StageKind.dump_needs`): the build's, shared by every
        kind that reads one (made once, on the first ask, with all their needs)."""
        dumps = self.dumps if self.dumps is not None else SharedDumps(self.run)
        return dumps.get(needs)

    def stage_object(self, step: str | None):
        """The object ``step`` made (``Traced``, ``Lowered``, ``Compiled``), or None."""
        made: dict[str | None, Any] = {
            "trace": self.run.traced,
            "lower": self.run.lowered,
            "compile": self.run.compiled,
        }
        return made.get(step)


@dataclasses.dataclass(frozen=True)
class HtmlContext:
    """What a handler's ``html`` reads beside the report: the page's id prefix, the
    source lines' colours and callers, and the display options."""

    uid: str
    colors: Mapping = dataclasses.field(default_factory=dict)
    callers: frozenset | set = frozenset()
    full: bool = False
    highlight: bool = True
    unstyled: bool = False


class StageKind:
    """The handler of one stage: subclass it, set ``spec`` (the stage's row of the
    stage table) and ``view``, override what differs, and :func:`register_kind` it.

    ``field`` names the :class:`~olympus_jupyter.report.StageReport` attribute (and
    the bundle key) that holds the stage's data, for the built-in kinds that have
    one (``passes``, ``costs``); the data of any other kind is kept in the report's
    ``stage_data`` and the bundle's ``data``, by stage name. ``text_rank`` orders
    the summary's lines (lower first).
    """

    spec: StageSpec
    view: str = "text"
    field: str | None = None
    option: Option | None = None
    #: The JSON schema of the stage's data (a ``$ref`` to ``#/definitions/...`` of
    #: ``bundle.schema.json`` reads that definition); None: nothing more to check.
    schema: Mapping[str, Any] | None = None
    text_rank: int = 50

    @property
    def name(self) -> str:
        return self.spec.name

    # -- made --------------------------------------------------------------------

    def makes_data(self) -> bool:
        """Whether :meth:`make` makes data (the built-in program stages' texts and
        models are made by the provenance builder instead)."""
        return type(self).make is not StageKind.make

    def cache_key(self, ctx: MakeContext):
        """The key its data is kept under between reports of the same stage objects
        (another display of the same stages makes nothing again), or None."""
        return (self.name, ctx.full, ctx.focus)

    def make(self, ctx: MakeContext) -> Any:
        """The stage's data (JSON-ready), or None; what it raises is the report's
        failure, shown with its message."""
        return None

    def dump_needs(self, ctx: MakeContext) -> DumpNeeds | None:
        """What :meth:`make` reads of XLA's dumps of the program's compile (it asks
        ``ctx.dumped(needs)``), or None. It reads only the report's options
        (``ctx.pass_re``, ``ctx.full``), not ``ctx.run``: it is asked before the
        program is staged too, so that the compile itself dumps it."""
        return None

    def module_readers(self, ctx: MakeContext) -> tuple[ModuleReader, ...]:
        """What :meth:`make` reads of each module XLA dumps after a pass, as readers
        run while the compile writes them (:class:`~olympus.dump_follow.DumpFollower`):
        they keep what they make in the pipeline's memo
        (``PassPipeline.memo``), where ``make`` finds it made. Like
        :meth:`dump_needs`, it reads only the report's options."""
        return ()

    def data(self, report) -> Any:
        """The stage's data in ``report``, or None."""
        if self.field is not None:
            return getattr(report, self.field, None)
        return (getattr(report, "stage_data", None) or {}).get(self.name)

    # -- checked -----------------------------------------------------------------

    def check(self, data: Any, files: int) -> None:
        """Raises ``ValueError`` unless ``data`` (read from a bundle: from anywhere)
        follows :attr:`schema`; ``files`` is the number of source files the report
        holds (what file indices may point to)."""
        if self.schema is not None:
            fast, slow = _validators(_frozen(self.schema))
            try:
                fast(data)
                return
            except fastjsonschema.JsonSchemaException:
                pass
            error = jsonschema.exceptions.best_match(slow.iter_errors(data))
            if error is not None:
                where = ".".join(str(p) for p in error.absolute_path)
                raise BundleError(
                    f"Not a readable Olympus report: data.{self.name}"
                    f"{'.' + where if where else ''}: {error.message[:200]}."
                )
            raise BundleError(
                f"Not a readable Olympus report: data.{self.name} does not follow its schema."
            )

    # -- capped ------------------------------------------------------------------

    def cap(self, data: Any, budget: float) -> tuple[Any, str | None]:
        """``data`` cut to about ``budget`` bytes of JSON at most, and a note saying
        what was left out (``None`` where nothing was): what a notebook output or a
        saved page carries of the stage (:mod:`.output_cap`); the report keeps
        everything. What it returns follows :attr:`schema`. By default, data that
        fits is kept whole and data that does not is left out (``None``: the stage
        reads as unavailable, the note saying why); override it to keep a part.
        """
        size = json_size(data)
        if size <= budget:
            return data, None
        return None, (
            f"{self.spec.title}: its data ({size / 1e6:.1f} MB) is left out of this "
            f"output to keep it under its size cap; in the kernel that made the report, "
            f"report.stage_data[{self.name!r}] holds it"
        )

    # -- shown -------------------------------------------------------------------

    def unavailable_reason(self, report) -> str | None:
        """Why the stage has nothing to show, or None when it has."""
        if self.data(report) is not None:
            return None
        return report.unavailable.get(self.name, "not made")

    def html(self, report, ctx: HtmlContext):
        """Its section of the static HTML (see :func:`.sections.section`)."""
        reason = self.unavailable_reason(report)
        if reason is not None:
            return unavailable(ctx.uid, self.name, reason)
        return section(
            ctx.uid, self.name, self.spec.title, self.body_html(report, ctx), self.meta(report)
        )

    def body_html(self, report, ctx: HtmlContext):
        """The body of its section, when it has data."""
        return h("pre", None, str(self.data(report)))

    def meta(self, report) -> str:
        """The few words beside its title (``12 rows``)."""
        return ""

    def text(self, report) -> list[str]:
        """Its lines of the ``text/plain`` summary (each starts with two spaces)."""
        return []

    def info(self) -> dict[str, Any]:
        """Its row of the bundle's stage table: the registry's, and its view."""
        return {**self.spec.info(), "view": self.view}


class TextKind(StageKind):
    """A stage whose data is a text (a program, a log), shown by the extension's
    program view: override :meth:`make_text`. Data: ``{"text": ..., "language":
    ...}`` (the ``text_view`` schema); ``language`` is the spec's (a highlighter
    the viewer may not know reads as plain text)."""

    view = "text"
    schema = {"$ref": "#/definitions/text_view"}

    def make_text(self, ctx: MakeContext) -> str | None:
        raise NotImplementedError(f"{type(self).__name__}.make_text")

    def make(self, ctx: MakeContext) -> Any:
        text = self.make_text(ctx)
        return None if text is None else {"text": str(text), "language": self.spec.language}

    def cap(self, data: Any, budget: float) -> tuple[Any, str | None]:
        """The text's first lines that fit in ``budget`` bytes."""
        if json_size(data) <= budget:
            return data, None
        lines = data["text"].split("\n")
        kept = kept_prefix(lines, budget - json_size({**data, "text": ""}))
        return {**data, "text": "\n".join(lines[:kept])}, (
            f"{self.spec.title}: the first {kept:,} of {len(lines):,} lines are kept in "
            f"this output, to keep it under its size cap; in the kernel that made the "
            f"report, report.stage_data[{self.name!r}] holds every line"
        )

    def body_html(self, report, ctx: HtmlContext):
        return h("pre", {"class": "diff"}, self.data(report)["text"])

    def meta(self, report) -> str:
        return f"{self.data(report)['text'].count(chr(10)) + 1:,} lines"

    def text(self, report) -> list[str]:
        data = self.data(report)
        return [f"  {self.name}: {self.meta(report)}"] if data is not None else []


class TableKind(StageKind):
    """A stage whose data is a table, shown by the extension's table view: override
    :meth:`rows` (it returns the column names and the rows). Data: ``{"columns":
    [...], "rows": [[...], ...]}``, each cell a string, a number or null (the
    ``table_view`` schema)."""

    view = "table"
    schema = {"$ref": "#/definitions/table_view"}

    def rows(self, ctx: MakeContext) -> tuple[list[str], list[list[Any]]] | None:
        raise NotImplementedError(f"{type(self).__name__}.rows")

    def make(self, ctx: MakeContext) -> Any:
        made = self.rows(ctx)
        if made is None:
            return None
        columns, rows = made
        return {"columns": [str(c) for c in columns], "rows": [list(r) for r in rows]}

    def cap(self, data: Any, budget: float) -> tuple[Any, str | None]:
        """The table's first rows that fit in ``budget`` bytes."""
        if json_size(data) <= budget:
            return data, None
        rows = data["rows"]
        kept = kept_prefix(rows, budget - json_size({**data, "rows": []}))
        return {**data, "rows": rows[:kept]}, (
            f"{self.spec.title}: {len(rows) - kept:,} of {len(rows):,} "
            f"{self.spec.unit} are left out of this output (the first {kept:,} are "
            f"kept), to keep it under its size cap; in the kernel that made the report, "
            f"report.stage_data[{self.name!r}] holds every row"
        )

    def body_html(self, report, ctx: HtmlContext):
        data = self.data(report)
        head = head_row(data["columns"])
        body = h(
            "tbody",
            None,
            [
                h("tr", None, [h("td", None, "" if v is None else str(v)) for v in row])
                for row in data["rows"]
            ],
        )
        return h("table", {"class": "tab", "data-olympus-kind": self.name}, head, body)

    def meta(self, report) -> str:
        return f"{len(self.data(report)['rows']):,} {self.spec.unit}"

    def text(self, report) -> list[str]:
        data = self.data(report)
        if data is None:
            return []
        out = [f"  {self.name}: {self.meta(report)}"]
        out += [
            "    "
            + ", ".join(f"{c} {'' if v is None else v}" for c, v in zip(data["columns"], row))
            for row in data["rows"][:8]
        ]
        return out


# -- the registry ----------------------------------------------------------------------

_KINDS: dict[str, StageKind] = {}
#: The stages of the built-in table (:data:`olympus.stage_registry.STAGES`).
_BUILT_IN = frozenset(s.name for s in stage_registry.STAGES)


def register_kind(handler: StageKind) -> StageKind:
    """Registers ``handler`` for its stage (``handler.spec``), adding the stage to the
    stage table when it is new: every form of a report shows it from then on, and
    ``stages=[name]`` asks for it. Registering the same handler again does nothing.
    """
    if not isinstance(handler, StageKind):
        raise TypeError(f"register_kind takes a StageKind instance, got {type(handler).__name__}.")
    spec = getattr(handler, "spec", None)
    if not isinstance(spec, StageSpec):
        raise TypeError(
            f"{type(handler).__name__}.spec must be a StageSpec (the stage's "
            f"row of olympus.stage_registry)."
        )
    if handler.view not in ("source", "program", "analysis", "passes", "costs", *GENERIC_VIEWS):
        raise ValueError(
            f"{type(handler).__name__}.view is {handler.view!r}; a new kind "
            f"names a generic view: {', '.join(GENERIC_VIEWS)}."
        )
    if handler.field is None and handler.makes_data() and handler.view not in GENERIC_VIEWS:
        raise ValueError(
            f"{type(handler).__name__} makes data, which a viewer shows with a "
            f"generic view: its view must be one of {', '.join(GENERIC_VIEWS)} "
            f"(it is {handler.view!r})."
        )
    taken = _KINDS.get(spec.name)
    if taken is not None and taken is not handler:
        raise ValueError(
            f"Stage {spec.name!r} already has a handler "
            f"({type(taken).__name__}); choose another name."
        )
    option = handler.option
    if option is not None and not option_registered(option):
        if not isinstance(option, Option) or option.stage != spec.name:
            raise TypeError(
                f"{type(handler).__name__}.option must be an option_table.Option whose "
                f"stage is {spec.name!r} (the option turns the stage on)."
            )
        register_option(option)  # raises, naming what is taken, before anything changed
        try:
            stage_registry.register(spec)
        except Exception:  # the option taken back, then the error raised as it is
            unregister_option(option.name)
            raise
    else:
        stage_registry.register(spec)
    _KINDS[spec.name] = handler
    return handler


def unregister_kind(name: str) -> None:
    """Takes back a kind registered by :func:`register_kind` and its stage (a
    built-in one stays)."""
    if name in _BUILT_IN:
        raise ValueError(f"Stage {name!r} is built in; it cannot be unregistered.")
    handler = _KINDS.pop(name, None)
    if handler is not None:
        stage_registry.unregister(name)
        if handler.option is not None and option_registered(handler.option):
            unregister_option(handler.option.name)


def kind(name: str) -> StageKind:
    """The handler of stage ``name`` (a former name reads too); ``UnknownStage``
    names the choices."""
    found = _KINDS.get(stage_registry.canonical(name))
    if found is None:
        stage_registry.stage(name)  # raises UnknownStage for a name not in the table
        raise LookupError(
            f"Stage {name!r} has no handler: olympus_jupyter.report."
            f"builtin_kinds registers the built-in ones."
        )
    return found


def known(name: str) -> bool:
    """Whether stage ``name`` has a handler."""
    return stage_registry.canonical(name) in _KINDS


def kinds() -> tuple[StageKind, ...]:
    """Every handler, in the stage table's order."""
    return tuple(_KINDS[n] for n in stage_registry.names() if n in _KINDS)


def kind_options() -> dict[str, Option]:
    """The options the kinds declare, by option name: the rows they add to the option
    table (``--passes``, ``--costs``...).

    >>> from olympus_jupyter.report import builtin_kinds  # (registers the built-in ones)
    >>> sorted(kind_options())
    ['costs', 'passes']
    """
    return {k.option.name: k.option for k in kinds() if k.option is not None}


def dump_needs(stages, pass_re: str = ".*", full: bool = False) -> DumpNeeds | None:
    """What the kinds of ``stages`` read of XLA's dumps, merged into the needs of
    one dumped compile (:func:`olympus.dumps.merge_needs`); None when none reads
    one (or no single dump serves them all).

    >>> from olympus_jupyter.report import builtin_kinds  # (registers the built-in ones)
    >>> dump_needs(("hlo", "passes", "costs"), pass_re="fusion")
    DumpNeeds(pass_re='fusion', peak=True)
    >>> dump_needs(("hlo",)) is None
    True
    """
    ctx = MakeContext(run=None, pass_re=pass_re, full=full)
    return merge_needs(kind(s).dump_needs(ctx) for s in stages if known(s))


def module_readers(
    stages, pass_re: str = ".*", full: bool = False, focus=None
) -> tuple[ModuleReader, ...]:
    """What the kinds of ``stages`` read of each per-pass module
    (:meth:`StageKind.module_readers`), to run while the compile writes them.

    >>> from olympus_jupyter.report import builtin_kinds  # (registers the built-in ones)
    >>> len(module_readers(("hlo", "passes"))), module_readers(("hlo",))
    (2, ())
    """
    ctx = MakeContext(run=None, pass_re=pass_re, full=full, focus=focus)
    return tuple(r for s in stages if known(s) for r in kind(s).module_readers(ctx))


# -- checking a kind's data against its schema -----------------------------------------


def _frozen(schema: Mapping[str, Any]) -> str:
    return json.dumps(schema, sort_keys=True)


@functools.lru_cache(maxsize=64)
def _validators(schema_json: str):
    """A kind's schema, reading ``#/definitions/...`` of the bundle schema: compiled
    (the check of every bundle), and for jsonschema (which names the field)."""
    root = json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))
    schema = {**json.loads(schema_json), "definitions": root["definitions"]}
    return fastjsonschema.compile(schema), jsonschema.Draft7Validator(schema)
