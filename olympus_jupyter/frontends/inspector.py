"""``Inspector(f, *example_args)``: change what a function is specialized for, watch every stage change.

An ipywidgets 8 widget. Each argument gets an editor showing its spec as text
(``f32[3]``, ``bf16[8,128]``, ``f32[]~`` for a weak type; pytrees as nested
editors); each static argument a value editor; then the lowering platforms, debug
info, StableHLO or HLO, compiler options and the stages to show. Only what must
change is re-staged (see :mod:`olympus_jupyter.staging.cache`); while compiling a
progress line shows and the previous report stays until the new one is ready.
Every specialization is kept: "compare with…" shows the diff against an earlier
one, and a line says why the last change re-traced or re-compiled.

Outside a notebook the reports print as text (hushed here):

>>> import contextlib, io
>>> import olympus.numpy as jnp
>>> with contextlib.redirect_stdout(io.StringIO()):
...     ins = Inspector(lambda x: jnp.sin(x), jnp.ones(3))
...     ins.editors[0].value = 'f32[5]'
>>> ins.report.provenance.stages['olympuspr'].ops[0].types
('f32[5]',)
>>> print(ins.why.value)
<b>Re-traced (trace, lower, compile) because:</b><ul><li>argument 'x': shape (3,) → (5,)</li></ul>
"""

from __future__ import annotations

import ast
import dataclasses
import time
import weakref
from collections.abc import Mapping, Sequence
from typing import Any

import ipywidgets as W
import jax
import traitlets

from olympus.hardware import COMMON_TARGETS
from olympus.platforms import KNOWN_PLATFORMS
from olympus.specs import SpecError, format_spec, parse_spec

from olympus_jupyter.report.compare import compare
from olympus_jupyter.report.markup import Markup, concat, h
from olympus import stage_registry
from olympus_jupyter.frontends.options import (
    OPTIONS,
    OptionError,
    ReportOptions,
    check_option,
    form_options,
    option,
    option_keywords,
)
from olympus_jupyter.report.stage_report import StageReport, build_report
from olympus_jupyter.staging.progress import Progress
from olympus_jupyter.staging.runner import Placed, StagingError, place_arguments
from olympus_jupyter.staging.specialization import (
    Specialization,
    arg_names,
    explain,
    is_array_like,
)
from olympus_jupyter.staging.cache import StageCache
from olympus_jupyter.frontends.outputs import show_in

#: The lowered program's forms (StableHLO, HLO): one shown at a time, by a toggle.
_LOWERED = tuple(s for s in stage_registry.program_stages() if s.step == "lower")
_STYLE = {"description_width": "initial"}
#: The width of the labels of the option rows ("platforms", "stages", "lowered as"...),
#: so that the rows line up as a form.
_LABEL_WIDTH = "9em"
_ROW_STYLE = {"description_width": _LABEL_WIDTH}
_ERROR_STYLE = "color:var(--jp-error-color1,#c00)"


def _error(text: str) -> Markup:
    """``text`` as an inline error (red).

    >>> _error("f32[4,x]: <x> is not a size")
    Markup('<span style="color:var(--jp-error-color1,#c00)">f32[4,x]: &lt;x&gt; is not a size</span>')
    """
    return h("span", {"style": _ERROR_STYLE}, text)


@dataclasses.dataclass(frozen=True)
class Entry:
    """One specialization seen, and its report; ``number`` counts the
    specializations seen (1 for the first), and stays when older ones are dropped."""

    label: str
    spec: Specialization
    report: StageReport
    number: int = 0

    #: About what one op of the provenance model takes beside the texts (its ids,
    #: types, spans, source locations): 570 bytes measured on a 24-layer MLP.
    OP_BYTES = 600

    @property
    def size(self) -> int:
        """About how many bytes the entry holds: its report's program texts and the
        ops of its provenance model."""
        report = self.report
        model = report.provenance
        held = sum(len(t) for t in report.texts.values())
        if model is not None:
            held += sum(len(st.text) + self.OP_BYTES * len(st.ops) for st in model.stages.values())
        return held


@dataclasses.dataclass(frozen=True)
class _Leaf:
    path: str
    example: Any
    static: bool
    #: Not an array and not a literal (a module's activation function, an
    #: optimizer's): passed as given, as equinox holds such leaves static.
    held: bool = False


class Choices(W.HBox):
    """A labelled row of checkboxes, one per choice: ``value`` is the tuple of the
    names ticked, in the row's order.

    It stands where a multi-select list box would, which needs a mouse (or
    Ctrl-click) to pick several: each box is reached with Tab, ticked with Space
    and labelled by its name; the row's label says what the row does when hovered.
    (Each box has a tooltip too, which JupyterLab's ipywidgets show only for a box
    without a description.)

    >>> row = Choices([("CPU", "cpu"), ("TPU", "tpu")], ("tpu",), description="platforms")
    >>> row.value = ("cpu", "tpu")
    >>> [box.value for box in row.boxes]
    [True, True]
    >>> row.boxes[0].value = False
    >>> row.value
    ('tpu',)
    """

    value = traitlets.Tuple()

    def __init__(
        self,
        options,
        value=(),
        *,
        description: str,
        tooltip: str = "",
        tooltips: Mapping[str, str] | None = None,
    ):
        self.names = tuple(name for _, name in options)
        self.boxes = [
            W.Checkbox(
                value=name in value,
                description=label,
                indent=False,
                tooltip=(tooltips or {}).get(name, f"{description}: {label}"),
                layout=W.Layout(width="auto", margin="0 1.2em 0 0"),
            )
            for label, name in options
        ]
        # Right-aligned in the labels' column, as ipywidgets' own descriptions are.
        self.label = W.HTML(
            h("div", {"title": tooltip, "style": "text-align:right"}, description),
            layout=W.Layout(width=_LABEL_WIDTH, min_width=_LABEL_WIDTH, margin="0 8px 0 0"),
        )
        super().__init__([self.label, *self.boxes])
        self.add_class("olympus-choices")
        self._showing = False
        self.value = tuple(value)
        for box in self.boxes:
            box.observe(self._ticked, names="value")

    @traitlets.validate("value")
    def _valid(self, proposal):
        chosen = tuple(proposal.value)
        unknown = [c for c in chosen if c not in self.names]
        if unknown:
            raise traitlets.TraitError(
                f"{unknown[0]!r} is not one of {', '.join(map(repr, self.names))}"
            )
        return tuple(n for n in self.names if n in chosen)

    @traitlets.observe("value")
    def _show(self, change):
        self._showing = True
        try:
            for name, box in zip(self.names, self.boxes):
                box.value = name in change.new
        finally:
            self._showing = False

    def _ticked(self, change):
        if not self._showing:
            self.value = tuple(n for n, box in zip(self.names, self.boxes) if box.value)


class InputError(ValueError):
    """A control holds text that cannot be used: shown next to it."""


def _is_static(index_or_name, static_argnums, static_argnames) -> bool:
    return index_or_name in static_argnums or index_or_name in static_argnames


class Inspector(W.VBox):
    """Explore the specializations of ``fun``: edit shapes, dtypes, static values and options.

    ``history`` keeps the specializations seen, newest last, to compare with: at most
    ``history_size`` of them and about ``history_bytes`` of program texts and the ops
    read from them (the oldest go first; the current one always stays).
    """

    #: Defaults for the history's bounds (the table's).
    HISTORY_SIZE: int = option("history_size").default
    HISTORY_BYTES: int = option("history_bytes").default

    def __init__(
        self,
        fun,
        *example_args,
        static_argnums: int | Sequence[int] | None = None,
        static_argnames: str | Sequence[str] | None = None,
        platform: Sequence[str] | str | None = None,
        target: str | None = None,
        num_slices: int = 1,
        mesh: Mapping[str, int] | str | None = None,
        shardings: Any = None,
        debug_info: bool = True,
        stages: str | Sequence[str] | None = None,
        compiler_options: Mapping[str, Any] | str | None = None,
        passes: bool | str | None = None,
        costs: bool = False,
        focus: str | Sequence[str] | None = None,
        history_size: int = HISTORY_SIZE,
        history_bytes: int = HISTORY_BYTES,
        **example_kwargs,
    ):
        # The options named above (a test checks them against the table), and any a
        # stage kind registered since; checked in one place, as inspect()'s and the magic's.
        given = option_keywords("inspector", dict(locals()), example_kwargs)
        options = ReportOptions(
            **{name: value for name, value in given.items() if "report" in OPTIONS[name].frontends}
        )
        history_size = check_option("history_size", given["history_size"])
        history_bytes = check_option("history_bytes", given["history_bytes"])
        self.focus = options.focus
        self.static_argnums = options.static_argnums or ()
        self.static_argnames = options.static_argnames or ()
        self.cache = StageCache(
            fun, static_argnums=self.static_argnums, static_argnames=self.static_argnames
        )
        if self.cache.given is not None and (example_args or example_kwargs):
            raise StagingError(
                f"Got {self.cache.given.described} with arguments: it is already "
                f"specialized; pass it alone (its compiler options and stages can "
                f"still change), or pass the function with its arguments."
            )
        self._models: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.history: list[Entry] = []
        self._seen = 0  # specializations numbered so far
        self.history_size, self.history_bytes = history_size, history_bytes
        self.report: StageReport | None = None
        self.last_render_seconds = 0.0
        self._example_args, self._example_kwargs = example_args, example_kwargs
        self._tree, self._leaves = self._flatten(example_args, example_kwargs)

        self.editors = [self._editor(leaf) for leaf in self._leaves]
        if all(len(e.description) <= 12 for e in self.editors):  # in the labels' column
            for editor in self.editors:
                editor.style.description_width = _LABEL_WIDTH
        self.editor_errors = [W.HTML() for _ in self._leaves]
        args_box = W.VBox(self._argument_rows())

        platforms = options.platforms or ()
        choices = KNOWN_PLATFORMS + tuple(p for p in platforms if p not in KNOWN_PLATFORMS)
        form = form_options()
        self.platforms = Choices(
            [(p, p) for p in choices],
            platforms,
            description=form["platforms"].label,
            tooltip=form["platforms"].tooltip,
            tooltips={p: f"lower for {p}" for p in choices},
        )
        targets = COMMON_TARGETS + (
            (options.target,) if options.target and options.target not in COMMON_TARGETS else ()
        )
        self.target = W.Dropdown(
            options=[("this machine", "")] + [(t, t) for t in targets],
            value=options.target or "",
            description=form["target"].label,
            style=_ROW_STYLE,
            tooltip=form["target"].tooltip,
        )
        #: Where the arguments go on a target (or on this machine's devices): the
        #: slices, the mesh and the shardings given when the Inspector was made.
        self._placement = dict(
            num_slices=options.num_slices, mesh=options.mesh, shardings=options.shardings
        )
        self.debug_info = W.Checkbox(
            value=options.debug_info,
            description=form["debug_info"].label,
            indent=False,
            tooltip=form["debug_info"].tooltip,
        )
        lowered = {s.name for s in _LOWERED}
        dialect = next((s for s in options.stages if s in lowered), _LOWERED[0].name)
        self.dialect = W.ToggleButtons(
            options=[(s.label, s.name) for s in _LOWERED],
            value=dialect,
            description="lowered as",
            style={**_ROW_STYLE, "button_width": "7.5em"},
            layout=W.Layout(width="auto"),
            tooltip="which lowered program to show (the display only)",
            tooltips=[s.title for s in _LOWERED],
        )
        self.compiler_options = W.Text(
            value=", ".join(f"{k}={v}" for k, v in options.compiler_options),
            description=form["compiler_options"].label,
            placeholder="xla_backend_optimization_level=0",
            style=_ROW_STYLE,
            layout=W.Layout(width="36em"),
            continuous_update=False,
            tooltip=form["compiler_options"].tooltip,
        )
        self.pass_filter = W.Text(
            value="" if options.passes in (None, ".*") else options.passes,
            description=form["passes"].label,
            placeholder="fusion|cse",
            style=_ROW_STYLE,
            layout=W.Layout(width="24em"),
            continuous_update=False,
            tooltip=form["passes"].tooltip,
        )
        # ToggleButtons put their description above the buttons: beside them, as a row.
        self.dialect.add_class("widget-inline-hbox")
        self.options_error = W.HTML()
        shown = [s for s in stage_registry.all_stages() if s.name not in lowered]
        self.stages = Choices(
            [(s.label, s.name) for s in shown],
            [s for s in options.stages if s not in lowered],
            description=form["stages"].label,
            tooltip=form["stages"].tooltip,
            tooltips={s.name: f"show {s.title}" for s in shown},
        )
        self.status = W.HTML()
        self.why = W.HTML()
        self.compare_with = W.Dropdown(
            options=[],
            description="compare with…",
            style=_ROW_STYLE,
            layout=W.Layout(width="36em"),
            disabled=True,
            tooltip="an earlier specialization to diff against",
        )
        self.compare_with.add_class("olympus-compare-with")
        self.target.add_class("olympus-target-choice")
        self.compare_button = W.Button(
            description="Compare",
            tooltip="diff against the chosen specialization",
            icon="columns",
            disabled=True,
        )
        self.output = W.Output()
        self.comparison = W.Output()

        controls = W.VBox(
            [
                W.HTML(h("b", None, "Arguments")),
                args_box,
                self.platforms,
                self.target,
                self.stages,
                W.HBox(
                    [self.dialect, self.debug_info],
                    layout=W.Layout(align_items="center", grid_gap="1.5em"),
                ),
                W.HBox([self.compiler_options, self.pass_filter, self.options_error]),
            ]
        )
        history = W.HBox([self.compare_with, self.compare_button])
        super().__init__([controls, self.status, self.why, history, self.comparison, self.output])
        self.add_class("olympus-inspector")

        for editor in self.editors:
            editor.observe(self._changed, names="value")
        for control in (
            self.platforms,
            self.target,
            self.debug_info,
            self.dialect,
            self.compiler_options,
            self.pass_filter,
            self.stages,
        ):
            control.observe(self._changed, names="value")
        self.compare_button.on_click(lambda _: self.show_comparison())
        #: The widget of each option the form shows, by option name (from the table).
        missing = [(n, c.attribute) for n, c in form.items() if not hasattr(self, c.attribute)]
        if missing:
            raise OptionError(
                f"option {missing[0][0]!r} asks for the Inspector's control "
                f"{missing[0][1]!r}, which it does not draw; declare the "
                f"option without control= (it is then taken by keyword only)"
            )
        self.controls = {name: getattr(self, c.attribute) for name, c in form.items()}
        self.refresh()

    def _display_(self):
        """What marimo shows (its display protocol: it shows no ipywidget): the same
        controls and report as an anywidget (:mod:`.inspector_widget`). IPython never
        asks for it."""
        from olympus_jupyter.frontends.inspector_widget import display_object

        return display_object(self)

    # -- arguments ----------------------------------------------------------------------

    def _flatten(self, args, kwargs):
        leaves: list[_Leaf] = []
        structure = []
        names = arg_names(self.cache.function, len(args))
        for i, arg in enumerate(args):
            static = _is_static(i, self.static_argnums, ()) or names[i] in self.static_argnames
            structure.append(self._flatten_one(names[i], arg, static, leaves))
        kw_structure = {}
        for name in sorted(kwargs):
            kw_structure[name] = self._flatten_one(
                name, kwargs[name], name in self.static_argnames, leaves
            )
        return (structure, kw_structure), leaves

    @staticmethod
    def _flatten_one(name, arg, static, leaves):
        if static:
            leaves.append(_Leaf(name, arg, True))
            return ("leaf", len(leaves) - 1)
        flat, treedef = jax.tree_util.tree_flatten_with_path(arg)
        first = len(leaves)
        for path, leaf in flat:
            held = not is_array_like(leaf)
            leaves.append(_Leaf(name + jax.tree_util.keystr(path), leaf, held, held))
        return ("tree", treedef, first, len(flat))

    def _argument_rows(self) -> list[W.Widget]:
        """One row per argument; a pytree argument nests its leaves' editors under its name."""
        rows = [W.HBox([e, err]) for e, err in zip(self.editors, self.editor_errors)]
        (structure, kw_structure) = self._tree
        names = arg_names(self.cache.function, len(structure)) + sorted(kw_structure)
        out: list[W.Widget] = []
        for name, node in zip(
            names, list(structure) + [kw_structure[k] for k in sorted(kw_structure)]
        ):
            if node[0] == "leaf":
                out.append(rows[node[1]])
                continue
            _, _, first, n = node
            if n == 1 and self._leaves[first].path == name:
                out.append(rows[first])
                continue
            nested = W.VBox(rows[first : first + n], layout=W.Layout(margin="0 0 0 1.5em"))
            heading = concat(h("b", None, name), " ", h("i", None, "(pytree)"))
            out.append(W.VBox([W.HTML(heading), nested]))
        return out

    @staticmethod
    def _editor(leaf: _Leaf) -> W.Text:
        if leaf.held:
            return W.Text(
                value=type(leaf.example).__name__,
                description=f"{leaf.path} (held)",
                style=_STYLE,
                disabled=True,
                tooltip="not an array: passed as given (static), not edited",
            )
        if leaf.static:
            return W.Text(
                value=repr(leaf.example),
                description=f"{leaf.path} (static)",
                style=_STYLE,
                continuous_update=False,
                tooltip="a Python literal: 3, 'relu', (1, 2)",
            )
        example = leaf.example
        if isinstance(example, (bool, int, float, complex)):
            example = jax.ShapeDtypeStruct((), jax.typeof(example).dtype, weak_type=True)
        return W.Text(
            value=format_spec(example),
            description=leaf.path,
            style=_STYLE,
            continuous_update=False,
            tooltip="DTYPE[DIMS], e.g. f32[8,128]; end with ~ for a weak type",
        )

    def _leaf_values(self) -> list[Any]:
        values, bad = [], False
        for leaf, editor, err in zip(self._leaves, self.editors, self.editor_errors):
            try:
                if leaf.held:
                    value = leaf.example
                elif leaf.static:
                    try:
                        value = ast.literal_eval(editor.value)
                    except (ValueError, SyntaxError):
                        raise InputError(
                            f"{editor.value!r} is not a Python literal "
                            f"(write 3, 2.5, 'relu' or (1, 2))"
                        ) from None
                else:
                    try:
                        value = parse_spec(editor.value)
                    except SpecError as e:
                        raise InputError(str(e)) from None
                    sharding = getattr(leaf.example, "sharding", None)
                    if sharding is not None and not isinstance(leaf.example, jax.Array):
                        value = jax.ShapeDtypeStruct(
                            value.shape, value.dtype, weak_type=value.weak_type, sharding=sharding
                        )
                err.value = ""
                values.append(value)
            except InputError as e:
                err.value = _error(str(e))
                bad = True
        if bad:
            raise InputError("fix the highlighted argument")
        return values

    def _arguments(self):
        values = self._leaf_values()
        (structure, kw_structure) = self._tree

        def build(node):
            if node[0] == "leaf":
                return values[node[1]]
            _, treedef, first, n = node
            return jax.tree_util.tree_unflatten(treedef, values[first : first + n])

        return tuple(build(n) for n in structure), {k: build(n) for k, n in kw_structure.items()}

    def _compiler_options(self) -> tuple[dict[str, Any], str]:
        """The compiler options and the pass filter the controls hold (checked)."""
        try:
            pairs = check_option("compiler_options", self.compiler_options.value)
            pass_re = check_option("passes", self.pass_filter.value or True)
        except OptionError as e:
            self.options_error.value = _error(str(e))
            raise InputError(str(e)) from None
        self.options_error.value = ""
        return dict(pairs), pass_re

    # -- staging ----------------------------------------------------------------------------

    def _stages(self) -> tuple[str, ...]:
        chosen = set(self.stages.value)
        chosen.add(self.dialect.value)
        return tuple(s for s in stage_registry.names() if s in chosen)

    def _changed(self, change):
        self.refresh()

    def refresh(self) -> StageReport | None:
        """Re-stages what the controls now ask for and shows the new report."""
        try:
            args, kwargs = self._arguments()
            options, pass_re = self._compiler_options()
        except InputError as e:
            self.status.value = h("i", None, f"Not re-staged: {e}.")
            return None
        platforms = tuple(self.platforms.value) or None
        try:
            return self._restage(args, kwargs, options, pass_re, platforms)
        except StagingError as e:  # a stage given cannot be lowered for other platforms
            self.status.value = _error(f"Not re-staged: {e}")
            return None

    def _restage(self, args, kwargs, options, pass_re, platforms) -> StageReport:
        placed = self._placed(args, kwargs, platforms)
        if placed is not None:
            args, kwargs = placed.args, placed.kwargs
        spec = Specialization.of(
            self.cache.function,
            args,
            kwargs,
            static_argnums=self.static_argnums,
            static_argnames=self.static_argnames,
            platforms=platforms,
            compiler_options=options,
            target=_placement_words(placed),
        )
        stages = self._stages()
        before = dict(self.cache.counts)
        self.status.value = concat("⏳ ", h("i", None, "staging…"))
        start = time.perf_counter()
        compile_wanted = any(s in stages for s in stage_registry.made_by("compile"))
        # Long staging says what runs and for how long, in the status line.
        with Progress(self._show_progress) as progress:
            run = self.cache.stage(
                spec, args, kwargs, compile=compile_wanted, progress=progress, placed=placed
            )
            progress.step("report")
            report = build_report(
                run,
                stages=stages,
                debug_info=self.debug_info.value,
                models=self._models,
                pass_re=pass_re,
                focus=self.focus,
            )
        made = {k: self.cache.counts[k] - before[k] for k in before}
        self._show(report)
        self.last_render_seconds = time.perf_counter() - start
        self._explain(spec, made)
        self._remember(spec, report)
        return report

    def _placed(self, args, kwargs, platforms) -> Placed | None:
        """The arguments on the target chosen (or on this machine's devices, where a
        mesh or shardings were given), or None where nothing places them."""
        return place_arguments(
            args,
            kwargs,
            hardware=self.target.value or None,
            platforms=platforms,
            given=self.cache.given,
            **self._placement,
        )

    def _show_progress(self, text: str) -> None:
        self.status.value = concat("⏳ ", h("i", None, text))

    def _show(self, report: StageReport):
        self.report = report
        bundle = report._repr_mimebundle_()  # all three forms, as a notebook asks for them
        show_in(self.output, bundle)
        steps = " · ".join(f"{k} {v * 1e3:.1f} ms" for k, v in report.timings.items())
        if report.failure is not None:
            self.status.value = _error(report.failure.summary())
        else:
            self.status.value = concat("✓ ", steps)

    def _explain(self, spec: Specialization, made: dict[str, int]):
        new = [k for k in ("trace", "lower", "compile") if made[k]]
        previous = self.history[-1].spec if self.history else None
        if previous is None:
            self.why.value = ""
            return
        reasons = explain(previous, spec)
        if not new:
            head = (
                "No new stages: only the display changed."
                if not reasons
                else "No new stages: this specialization was staged before."
            )
        else:
            head = {"trace": "Re-traced", "lower": "Re-lowered", "compile": "Re-compiled"}[new[0]]
            head += " (" + ", ".join(new) + ") because:"
        items = h("ul", None, [h("li", None, r) for r in reasons]) if reasons else None
        self.why.value = concat(h("b", None, head), items)

    def _remember(self, spec: Specialization, report: StageReport):
        # The history keeps a report's data, not the forms it was displayed in (its
        # JSON, HTML and text are many times the size of its program texts): a
        # comparison renders afresh.
        report = dataclasses.replace(report, _memo={})
        label = spec.describe()
        if spec.target:
            label += f" · {spec.target}"
        if spec.platforms:
            label += f" · {', '.join(spec.platforms)}"
        if spec.compiler_options:
            label += f" · {dict(spec.compiler_options)}"
        if self.history and self.history[-1].spec == spec:
            self.history[-1] = dataclasses.replace(self.history[-1], report=report)
        else:
            self._seen += 1
            self.history.append(Entry(label, spec, report, self._seen))
        self._bound_history()
        self._offer_comparisons()

    def _offer_comparisons(self) -> None:
        """Lists the earlier specializations under "compare with…", keeping the one
        chosen while it is in the history, else choosing the newest.

        The choice is set with the entries: a ``Dropdown`` whose options are first
        set while nothing is chosen keeps nothing chosen (ipywidgets leaves its index
        at None), and so showed as empty in the browser.
        """
        earlier = self.history[:-1]
        options = [(f"{e.number}. {e.label}", e.number) for e in earlier]
        numbers = [e.number for e in earlier]
        chosen = self.compare_with.value
        if chosen not in numbers:
            chosen = numbers[-1] if numbers else None
        with self.compare_with.hold_sync():
            if tuple(options) != tuple(self.compare_with.options):
                self.compare_with.options = options
            self.compare_with.value = chosen
            self.compare_with.disabled = not options
        self.compare_button.disabled = not options

    def _bound_history(self) -> None:
        """Forgets the oldest entries past the history's bounds (never the current one)."""
        total = sum(e.size for e in self.history)
        while len(self.history) > 1 and (
            len(self.history) > self.history_size or total > self.history_bytes
        ):
            total -= self.history.pop(0).size

    def show_comparison(self, index: int | None = None):
        """Shows the diff between an earlier specialization and now: ``history[index]``,
        or the one chosen under "compare with…" when ``index`` is None."""
        if index is None:
            chosen = self.compare_with.value
            index = next((i for i, e in enumerate(self.history[:-1]) if e.number == chosen), None)
        if index is None or len(self.history) < 2:
            nothing = "Nothing to compare with yet: change a control first."
            show_in(
                self.comparison, {"text/html": str(h("i", None, nothing)), "text/plain": nothing}
            )
            return None
        earlier, now = self.history[index], self.history[-1]
        diff = compare(earlier.report, now.report, labels=(earlier.label, now.label))
        show_in(self.comparison, diff)
        return diff


def _placement_words(placed: Placed | None) -> str | None:
    """``v5e:2x2 (data=2, model=2)``: where the arguments were placed, in words."""
    if placed is None:
        return None
    axes = ", ".join(f"{k}={v}" for k, v in placed.axes.items())
    return f"{placed.target.name if placed.target is not None else 'this machine'} ({axes})"
