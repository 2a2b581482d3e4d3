"""``Stepper(f, *example_args)``: trace → lower → compile → execute, one stage per click.

A teaching widget. Each click runs the next stage, says what just happened in the
terms of the four steps (stage out, lower, compile, execute), shows how long it
took and what it made. The last step runs the compiled function on the example
arguments, or on random inputs of the compiled types.

>>> import contextlib, io
>>> import olympus.numpy as jnp
>>> stepper = Stepper(lambda x, y: 2 * x + y, jnp.ones(3), jnp.ones(3))
>>> with contextlib.redirect_stdout(io.StringIO()):
...     for _ in range(4):
...         stepper.next_step()
>>> [s.name for s in stepper.done]
['trace', 'lower', 'compile', 'execute']
>>> stepper.result
Array([3., 3., 3.], dtype=float32)
"""

from __future__ import annotations

import dataclasses
import time
from collections.abc import Sequence
from typing import Any

import ipywidgets as W
import jax
import numpy as np

from olympus_jupyter.frontends.options import check_option
from olympus_jupyter.report.markup import Markup, concat, h, join
from olympus_jupyter.staging.runner import (
    STEPS,
    StagedRun,
    StageRequest,
    as_wrapped,
    failure_of,
    next_step,
)
from olympus_jupyter.staging.progress import Progress
from olympus_jupyter.frontends.outputs import show_in

EXPLANATIONS = {
    "trace": (
        "1. Trace (stage out)",
        "Olympus ran your Python function once on abstract values, knowing only each "
        "argument's shape and dtype, and recorded every operation it performed. The "
        "result is an olympuspr: your function specialized to these argument types, with "
        "Python's control flow already unrolled.",
    ),
    "lower": (
        "2. Lower",
        "The olympuspr was translated into StableHLO, the input language of the XLA "
        "compiler. Each equation became one or more StableHLO operations; nothing is "
        "optimized yet.",
    ),
    "compile": (
        "3. Compile",
        "XLA optimized the program for this machine's device: it fused elementwise "
        "operations, chose memory layouts and produced an executable. The optimized "
        "HLO shows what it decided; cost and memory analyses estimate what running it "
        "takes.",
    ),
    "execute": (
        "4. Execute",
        "The executable ran on arrays of exactly the compiled types. Nothing was traced "
        "or compiled again: calling it with other shapes or dtypes is an error.",
    ),
}
#: What each step shows: the program it made.
_STEP_TEXT = {
    "trace": lambda run: str(run.traced.olympuspr),
    "lower": lambda run: run.lowered.as_text(),
    "compile": lambda run: run.compiled.as_text() or "",
}
ORDER = ("trace", "lower", "compile", "execute")


@dataclasses.dataclass(frozen=True)
class Step:
    """A stage that ran: its name, how long it took, and what it made (as text)."""

    name: str
    seconds: float
    text: str


def random_inputs(args_info, seed: int = 0):
    """Random arrays matching the compiled function's argument types."""
    rng = np.random.default_rng(seed)

    def make(info):
        dtype = np.dtype(info.dtype)
        if dtype == np.bool_:
            return rng.random(info.shape) < 0.5
        if np.issubdtype(dtype, np.integer):
            return rng.integers(-10, 10, info.shape).astype(dtype)
        if np.issubdtype(dtype, np.complexfloating):
            return (rng.standard_normal(info.shape) + 1j * rng.standard_normal(info.shape)).astype(
                dtype
            )
        return rng.standard_normal(info.shape).astype(dtype)

    return jax.tree_util.tree_map(make, args_info)


class Stepper(W.VBox):
    """Walks ``fun`` through the four stages, one per click."""

    def __init__(
        self,
        fun,
        *example_args,
        static_argnums: int | Sequence[int] | None = None,
        **example_kwargs,
    ):
        # static_argnums takes what inspect() and the inspector take: 1, (0, 2) or None.
        self.static_argnums = check_option("static_argnums", static_argnums) or ()
        self.wrapped = as_wrapped(fun, static_argnums=self.static_argnums or None)
        self.args, self.kwargs = example_args, example_kwargs
        self.done: list[Step] = []
        self.request = StageRequest(tuple(example_args), dict(example_kwargs))
        self.run = self._new_run()
        self.result: Any = None
        self.button = W.Button(
            description="Next: trace",
            button_style="primary",
            icon="step-forward",
            tooltip="run the next step: trace, lower, compile, execute",
        )
        self.restart = W.Button(
            description="Start over",
            icon="undo",
            tooltip="forget every step and begin again from trace",
        )
        self.inputs = W.ToggleButtons(
            options=["example inputs", "random inputs"],
            value="example inputs",
            description="execute on",
            tooltip="the arguments the last step runs on",
            tooltips=[
                "run on the example arguments given",
                "run on random arrays of the compiled types",
            ],
            style={"description_width": "initial", "button_width": "9em"},
            layout=W.Layout(width="auto", margin="0 0 0 1em"),
        )
        self.inputs.add_class("widget-inline-hbox")  # its description beside the buttons
        self.progress = W.HTML(self._progress_html())
        self.explanation = W.HTML()
        self.output = W.Output()
        self.button.on_click(lambda _: self.next_step())
        self.restart.on_click(lambda _: self.reset())
        super().__init__(
            [
                self.progress,
                W.HBox(
                    [self.button, self.restart, self.inputs],
                    layout=W.Layout(align_items="center", flex_flow="row wrap"),
                ),
                self.explanation,
                self.output,
            ]
        )
        self.add_class("olympus-stepper")

    def _progress_html(self) -> Markup:
        parts = []
        for name in ORDER:
            done = next((s for s in self.done if s.name == name), None)
            label = EXPLANATIONS[name][0]
            if done is not None:
                parts.append(
                    concat(
                        h("b", None, f"✓ {label}"),
                        " ",
                        h("small", None, f"{done.seconds * 1e3:.1f} ms"),
                    )
                )
            else:
                parts.append(h("span", {"style": "opacity:.6"}, label))
        return join(" → ", parts)

    def _new_run(self) -> StagedRun:
        return StagedRun(
            name=getattr(self.wrapped, "__name__", "function"),
            wrapped=self.wrapped,
            fun=self.wrapped.fun,
        )

    @property
    def traced(self):
        return self.run.traced

    @property
    def lowered(self):
        return self.run.lowered

    @property
    def compiled(self):
        return self.run.compiled

    def reset(self):
        """Back to the beginning: nothing traced."""
        self.done.clear()
        self.run = self._new_run()
        self.result = None
        self.button.description, self.button.disabled = "Next: trace", False
        self.explanation.value = ""
        self.output.clear_output()
        self.progress.value = self._progress_html()

    def _show_progress(self, text: str) -> None:
        self.explanation.value = concat("⏳ ", h("i", None, text))

    def _show_error(self, message: str) -> None:
        self.explanation.value = h("div", {"style": "color:var(--jp-error-color1,#c00)"}, message)

    def _call_args(self):
        if self.inputs.value == "random inputs":
            args, kwargs = random_inputs(self.compiled.args_info)
            return args, kwargs
        dynamic = tuple(a for i, a in enumerate(self.args) if i not in self.static_argnums)
        return dynamic, self.kwargs

    def next_step(self) -> Step | None:
        """Runs the next stage; returns what it made (None once all four ran, or on error)."""
        if len(self.done) == len(ORDER):
            return None
        name = ORDER[len(self.done)]
        if name in STEPS:  # the staging layer's one trace -> lower -> compile loop
            self.run.failure = None
            # A long step says so, and for how long, in the explanation's place.
            with Progress(self._show_progress) as progress:
                progress.step(name)
                ok = next_step(self.run, name, self.request)
            if not ok:
                reason = self.run.unavailable.get(name)
                self._show_error(
                    self.run.failure.summary()
                    if self.run.failure
                    else f"{name} cannot happen here: {reason}"
                )
                return None
            seconds, text = self.run.timings[name], _STEP_TEXT[name](self.run)
        else:
            start = time.perf_counter()
            try:
                args, kwargs = self._call_args()
                self.result = self.compiled(*args, **kwargs)
            except Exception as e:  # noqa: BLE001 - shown inline, the widget stays usable
                self._show_error(failure_of(name, e).summary())
                return None
            seconds, text = time.perf_counter() - start, repr(self.result)
        step = Step(name, seconds, text)
        self.done.append(step)
        title, body = EXPLANATIONS[name]
        self.explanation.value = concat(
            h("h4", None, f"{title} — {step.seconds * 1e3:.1f} ms"), h("p", None, body)
        )
        show_in(
            self.output,
            {
                "text/html": str(h("pre", {"style": "max-height:30em;overflow:auto"}, text)),
                "text/plain": text,
            },
        )
        following = ORDER[len(self.done)] if len(self.done) < len(ORDER) else None
        self.button.description = f"Next: {following}" if following else "Done"
        self.button.disabled = following is None
        self.progress.value = self._progress_html()
        return step
