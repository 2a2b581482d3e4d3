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
from IPython.display import clear_output, display

from olympus.platforms import KNOWN_PLATFORMS
from olympus.specs import SpecError, format_spec, parse_spec

from olympus_jupyter.report.compare import compare
from olympus_jupyter.report.markup import Markup, concat, h
from olympus import stage_registry
from olympus_jupyter.frontends.options import parse_compiler_option
from olympus_jupyter.report.stage_report import StageReport, build_report
from olympus_jupyter.staging.specialization import Specialization, arg_names, explain
from olympus_jupyter.staging.cache import StageCache

#: The lowered program's forms (StableHLO, HLO): one shown at a time, by a toggle.
_LOWERED = tuple(s for s in stage_registry.program_stages() if s.step == "lower")
_STYLE = {"description_width": "initial"}
_ERROR_STYLE = "color:var(--jp-error-color1,#c00)"


def _error(text: str) -> Markup:
    """``text`` as an inline error (red).

    >>> _error("f32[4,x]: <x> is not a size")
    Markup('<span style="color:var(--jp-error-color1,#c00)">f32[4,x]: &lt;x&gt; is not a size</span>')
    """
    return h("span", {"style": _ERROR_STYLE}, text)


@dataclasses.dataclass(frozen=True)
class Entry:
    """One specialization seen, and its report."""
    label: str
    spec: Specialization
    report: StageReport

    @property
    def size(self) -> int:
        """About how many bytes the entry holds: its report's program texts."""
        report = self.report
        model = report.provenance
        texts = sum(len(t) for t in report.texts.values())
        if model is not None:
            texts += sum(len(st.text) for st in model.stages.values())
        return texts


@dataclasses.dataclass(frozen=True)
class _Leaf:
    path: str
    example: Any
    static: bool


class InputError(ValueError):
    """A control holds text that cannot be used: shown next to it."""


def _is_static(index_or_name, static_argnums, static_argnames) -> bool:
    return index_or_name in static_argnums or index_or_name in static_argnames


class Inspector(W.VBox):
    """Explore the specializations of ``fun``: edit shapes, dtypes, static values and options.

    ``history`` keeps the specializations seen, newest last, to compare with: at most
    ``history_size`` of them and about ``history_bytes`` of program text (the oldest
    go first; the current one always stays).
    """

    #: Defaults for the history's bounds.
    HISTORY_SIZE = 32
    HISTORY_BYTES = 64 * 2**20

    def __init__(self, fun, *example_args, static_argnums: Sequence[int] = (),
                 static_argnames: Sequence[str] = (), platform: Sequence[str] | str | None = None,
                 debug_info: bool = True, stages: Sequence[str] | None = None,
                 compiler_options: Mapping[str, Any] | None = None,
                 history_size: int = HISTORY_SIZE, history_bytes: int = HISTORY_BYTES,
                 **example_kwargs):
        self.static_argnums = tuple([static_argnums] if isinstance(static_argnums, int)
                                    else static_argnums)
        self.static_argnames = tuple([static_argnames] if isinstance(static_argnames, str)
                                     else static_argnames)
        self.cache = StageCache(fun, static_argnums=self.static_argnums,
                                static_argnames=self.static_argnames)
        self._models: weakref.WeakKeyDictionary = weakref.WeakKeyDictionary()
        self.history: list[Entry] = []
        self.history_size, self.history_bytes = max(1, history_size), history_bytes
        self.report: StageReport | None = None
        self.last_render_seconds = 0.0
        self._example_args, self._example_kwargs = example_args, example_kwargs
        self._tree, self._leaves = self._flatten(example_args, example_kwargs)

        self.editors = [self._editor(leaf) for leaf in self._leaves]
        self.editor_errors = [W.HTML() for _ in self._leaves]
        args_box = W.VBox(self._argument_rows())

        platforms = (platform,) if isinstance(platform, str) else tuple(platform or ())
        self.platforms = W.SelectMultiple(options=KNOWN_PLATFORMS, value=platforms,
                                          description="platforms", rows=4, style=_STYLE,
                                          tooltip="none selected: this machine")
        self.debug_info = W.Checkbox(value=debug_info, description="debug info", indent=False)
        self.dialect = W.ToggleButtons(options=[(s.label, s.name) for s in _LOWERED],
                                       value=_LOWERED[0].name,
                                       description="lowered as", style=_STYLE)
        self.compiler_options = W.Text(
            value=", ".join(f"{k}={v}" for k, v in (compiler_options or {}).items()),
            description="compiler options", placeholder="xla_backend_optimization_level=0",
            style=_STYLE, layout=W.Layout(width="32em"))
        self.options_error = W.HTML()
        shown = tuple(stages) if stages is not None else stage_registry.default_names()
        lowered = {s.name for s in _LOWERED}
        self.stages = W.SelectMultiple(
            options=[(s.label, s.name) for s in stage_registry.STAGES if s.name not in lowered],
            value=[s for s in shown if s not in lowered],
            description="stages", rows=5, style=_STYLE)
        self.status = W.HTML()
        self.why = W.HTML()
        self.compare_with = W.Dropdown(options=[], description="compare with…", style=_STYLE,
                                       layout=W.Layout(width="32em"))
        self.compare_button = W.Button(description="Compare", tooltip="diff against the chosen "
                                       "specialization", icon="columns")
        self.output = W.Output()
        self.comparison = W.Output()

        controls = W.VBox([
            W.HTML(h("b", None, "Arguments")), args_box,
            W.HBox([self.platforms, self.stages]),
            W.HBox([self.debug_info, self.dialect]),
            W.HBox([self.compiler_options, self.options_error]),
        ])
        history = W.HBox([self.compare_with, self.compare_button])
        super().__init__([controls, self.status, self.why, history, self.comparison, self.output])
        self.add_class("olympus-inspector")

        for editor in self.editors:
            editor.observe(self._changed, names="value")
        for control in (self.platforms, self.debug_info, self.dialect, self.compiler_options,
                        self.stages):
            control.observe(self._changed, names="value")
        self.compare_button.on_click(lambda _: self.show_comparison())
        self.refresh()

    # -- arguments ----------------------------------------------------------------------

    def _flatten(self, args, kwargs):
        leaves: list[_Leaf] = []
        structure = []
        names = arg_names(self.cache.wrapped.fun, len(args))
        for i, arg in enumerate(args):
            static = _is_static(i, self.static_argnums, ()) or names[i] in self.static_argnames
            structure.append(self._flatten_one(names[i], arg, static, leaves))
        kw_structure = {}
        for name in sorted(kwargs):
            kw_structure[name] = self._flatten_one(name, kwargs[name],
                                                   name in self.static_argnames, leaves)
        return (structure, kw_structure), leaves

    @staticmethod
    def _flatten_one(name, arg, static, leaves):
        if static:
            leaves.append(_Leaf(name, arg, True))
            return ("leaf", len(leaves) - 1)
        flat, treedef = jax.tree_util.tree_flatten_with_path(arg)
        first = len(leaves)
        for path, leaf in flat:
            leaves.append(_Leaf(name + jax.tree_util.keystr(path), leaf, False))
        return ("tree", treedef, first, len(flat))

    def _argument_rows(self) -> list[W.Widget]:
        """One row per argument; a pytree argument nests its leaves' editors under its name."""
        rows = [W.HBox([e, err]) for e, err in zip(self.editors, self.editor_errors)]
        (structure, kw_structure) = self._tree
        names = arg_names(self.cache.wrapped.fun, len(structure)) + sorted(kw_structure)
        out: list[W.Widget] = []
        for name, node in zip(names, list(structure) + [kw_structure[k] for k in sorted(kw_structure)]):
            if node[0] == "leaf":
                out.append(rows[node[1]])
                continue
            _, _, first, n = node
            if n == 1 and self._leaves[first].path == name:
                out.append(rows[first])
                continue
            nested = W.VBox(rows[first:first + n], layout=W.Layout(margin="0 0 0 1.5em"))
            heading = concat(h("b", None, name), " ", h("i", None, "(pytree)"))
            out.append(W.VBox([W.HTML(heading), nested]))
        return out

    @staticmethod
    def _editor(leaf: _Leaf) -> W.Text:
        if leaf.static:
            return W.Text(value=repr(leaf.example), description=f"{leaf.path} (static)",
                          style=_STYLE, continuous_update=False,
                          tooltip="a Python literal: 3, 'relu', (1, 2)")
        example = leaf.example
        if isinstance(example, (bool, int, float, complex)):
            example = jax.ShapeDtypeStruct((), jax.typeof(example).dtype, weak_type=True)
        return W.Text(value=format_spec(example), description=leaf.path, style=_STYLE,
                      continuous_update=False, tooltip="DTYPE[DIMS], e.g. f32[8,128]; "
                      "end with ~ for a weak type")

    def _leaf_values(self) -> list[Any]:
        values, bad = [], False
        for leaf, editor, err in zip(self._leaves, self.editors, self.editor_errors):
            try:
                if leaf.static:
                    try:
                        value = ast.literal_eval(editor.value)
                    except (ValueError, SyntaxError):
                        raise InputError(f"{editor.value!r} is not a Python literal "
                                         f"(write 3, 2.5, 'relu' or (1, 2))") from None
                else:
                    try:
                        value = parse_spec(editor.value)
                    except SpecError as e:
                        raise InputError(str(e)) from None
                    sharding = getattr(leaf.example, "sharding", None)
                    if sharding is not None and not isinstance(leaf.example, jax.Array):
                        value = jax.ShapeDtypeStruct(value.shape, value.dtype,
                                                     weak_type=value.weak_type, sharding=sharding)
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
            return jax.tree_util.tree_unflatten(treedef, values[first:first + n])
        return tuple(build(n) for n in structure), {k: build(n) for k, n in kw_structure.items()}

    def _compiler_options(self) -> dict[str, Any]:
        text = self.compiler_options.value.strip()
        if not text:
            self.options_error.value = ""
            return {}
        out = {}
        try:
            for item in text.split(","):
                key, value = parse_compiler_option(item.strip())
                out[key] = value
        except Exception as e:  # noqa: BLE001 - argparse's error type
            self.options_error.value = _error(str(e))
            raise InputError(str(e)) from None
        self.options_error.value = ""
        return out

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
            options = self._compiler_options()
        except InputError as e:
            self.status.value = h("i", None, f"Not re-staged: {e}.")
            return None
        platforms = tuple(self.platforms.value) or None
        spec = Specialization.of(self.cache.wrapped.fun, args, kwargs,
                                 static_argnums=self.static_argnums,
                                 static_argnames=self.static_argnames,
                                 platforms=platforms, compiler_options=options)
        stages = self._stages()
        before = dict(self.cache.counts)
        self.status.value = concat("⏳ ", h("i", None, "staging…"))
        start = time.perf_counter()
        compile_wanted = any(s in stages for s in ("compiled", "cost", "memory"))
        run = self.cache.stage(spec, args, kwargs, compile=compile_wanted)
        report = build_report(run, stages=stages, debug_info=self.debug_info.value,
                              models=self._models)
        made = {k: self.cache.counts[k] - before[k] for k in before}
        self._show(report)
        self.last_render_seconds = time.perf_counter() - start
        self._explain(spec, made)
        self._remember(spec, report)
        return report

    def _show(self, report: StageReport):
        self.report = report
        bundle = report._repr_mimebundle_()  # all three forms, as a notebook asks for them
        with self.output:
            clear_output(wait=True)
            display(bundle, raw=True)
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
            head = "No new stages: only the display changed." if not reasons else \
                "No new stages: this specialization was staged before."
        else:
            head = f"Re-{new[0]}d" if new[0] != "trace" else "Re-traced"
            head += " (" + ", ".join(new) + ") because:"
        items = h("ul", None, [h("li", None, r) for r in reasons]) if reasons else None
        self.why.value = concat(h("b", None, head), items)

    def _remember(self, spec: Specialization, report: StageReport):
        # The history keeps a report's data, not the forms it was displayed in (its
        # JSON, HTML and text are many times the size of its program texts): a
        # comparison renders afresh.
        report = dataclasses.replace(report, _memo={})
        label = spec.describe()
        if spec.platforms:
            label += f" · {', '.join(spec.platforms)}"
        if spec.compiler_options:
            label += f" · {dict(spec.compiler_options)}"
        if self.history and self.history[-1].spec == spec:
            self.history[-1] = Entry(self.history[-1].label, spec, report)
        else:
            self.history.append(Entry(label, spec, report))
        self._bound_history()
        self.compare_with.options = [(f"{i + 1}. {e.label}", i)
                                     for i, e in enumerate(self.history[:-1])]

    def _bound_history(self) -> None:
        """Forgets the oldest entries past the history's bounds (never the current one)."""
        total = sum(e.size for e in self.history)
        while len(self.history) > 1 and (len(self.history) > self.history_size
                                         or total > self.history_bytes):
            total -= self.history.pop(0).size

    def show_comparison(self, index: int | None = None):
        """Shows the diff between an earlier specialization (default: the chosen one) and now."""
        if index is None:
            index = self.compare_with.value
        with self.comparison:
            clear_output(wait=True)
            if index is None or not self.history:
                display(W.HTML(h("i", None, "Nothing to compare with yet: "
                                           "change a control first.")))
                return None
            earlier, now = self.history[index], self.history[-1]
            diff = compare(earlier.report, now.report, labels=(earlier.label, now.label))
            display(diff)
            return diff
