"""The inspector widget and the teaching stepper, driven in-process like a frontend would."""

import numpy as np
import pytest

import olympus.numpy as jnp
from olympus_jupyter.frontends.inspector import Inspector
from olympus_jupyter.staging.cache import StageCache
from olympus_jupyter.staging.specialization import Specialization
from olympus_jupyter.frontends.stepper import Stepper, random_inputs


def layer(w, x):
    return jnp.tanh(x @ w)


@pytest.fixture
def ins():
    return Inspector(layer, jnp.ones((4, 4)), jnp.ones((2, 4)))


def counts_after(ins, change):
    before = dict(ins.cache.counts)
    change()
    return {k: ins.cache.counts[k] - before[k] for k in before}


# --- re-stage only what must change ------------------------------------------------------


def test_a_new_shape_retraces_everything(ins):
    made = counts_after(ins, lambda: setattr(ins.editors[1], "value", "f32[3,4]"))
    assert made == {"trace": 1, "lower": 1, "compile": 1}
    assert "f32[3,4]" in ins.report.stage_text("olympuspr")
    assert "argument 'x': shape (2, 4) → (3, 4)" in ins.why.value
    assert "Re-traced" in ins.why.value


def test_compiler_options_recompile_only(ins):
    made = counts_after(
        ins, lambda: setattr(ins.compiler_options, "value", "xla_backend_optimization_level=0")
    )
    assert made == {"trace": 0, "lower": 0, "compile": 1}
    assert "compiler options" in ins.why.value


def test_platforms_relower_and_say_what_cannot_exist_here(ins):
    made = counts_after(ins, lambda: setattr(ins.platforms, "value", ("tpu",)))
    assert made == {"trace": 0, "lower": 1, "compile": 0}
    assert "Re-lowered (lower) because" in ins.why.value
    assert "lowered for tpu" in ins.report.unavailable["compiled"]
    made = counts_after(ins, lambda: setattr(ins.platforms, "value", ()))
    assert made == {"trace": 0, "lower": 0, "compile": 0}  # back to a specialization seen


def test_display_options_need_no_new_stage(ins):
    for change in (
        lambda: setattr(ins.debug_info, "value", False),
        lambda: setattr(ins.dialect, "value", "hlo"),
        lambda: setattr(ins.stages, "value", ("source", "olympuspr")),
    ):
        assert counts_after(ins, change) == {"trace": 0, "lower": 0, "compile": 0}
    assert "No new stages" in ins.why.value
    assert ins.report.stages == ("source", "olympuspr", "hlo")
    assert ins.report.debug_info is False


def test_weak_types_and_dtypes_are_editable():
    ins = Inspector(lambda x, s: x * s, jnp.ones(3), 2.0)
    assert [e.value for e in ins.editors] == ["f32[3]", "f32[]~"]
    ins.editors[0].value = "bf16[3]"
    assert "bf16[3]" in ins.report.stage_text("olympuspr")
    assert "dtype float32 → bfloat16" in ins.why.value


def test_pytrees_get_nested_editors_and_static_values_an_editor():
    def model(params, x, act):
        h = x @ params["w"] + params["b"]
        return jnp.tanh(h) if act == "tanh" else h

    params = {"w": np.ones((4, 3), np.float32), "b": np.zeros(3, np.float32)}
    ins = Inspector(model, params, np.ones((2, 4), np.float32), "tanh", static_argnums=2)
    labels = [e.description for e in ins.editors]
    assert labels == ["params['b']", "params['w']", "x", "act (static)"]
    args_box = ins.children[0].children[1]
    pytree = args_box.children[0]  # params: a heading, then its leaves' editors, nested
    assert "params" in pytree.children[0].value
    assert [row.children[0] for row in pytree.children[1].children] == ins.editors[:2]
    assert args_box.children[1].children[0] is ins.editors[2]
    assert "tanh" in ins.report.stage_text("olympuspr")
    ins.editors[3].value = "'linear'"
    assert "tanh" not in ins.report.stage_text("olympuspr")
    assert "static value 'tanh' → 'linear'" in ins.why.value


# --- bad input and failures stay inline -----------------------------------------------------


def test_bad_spec_keeps_the_previous_report(ins):
    before = ins.report
    ins.editors[0].value = "f32[4,x]"
    assert ins.report is before
    assert "whole numbers" in ins.editor_errors[0].value and "Not re-staged" in ins.status.value
    ins.editors[0].value = "f32[4,5]"
    assert ins.editor_errors[0].value == "" and ins.report is not before


def test_bad_static_literal_and_options_are_shown_inline():
    ins = Inspector(lambda x, n: x * n, jnp.ones(2), 3, static_argnums=1)
    ins.editors[1].value = "three"
    assert "not a Python literal" in ins.editor_errors[1].value
    ins.editors[1].value = "4"
    ins.compiler_options.value = "justakey"
    assert "KEY=VALUE" in ins.options_error.value


def test_a_failing_stage_is_reported_and_the_widget_keeps_working(ins):
    ins.editors[1].value = "f32[2,5]"  # x @ w no longer fits
    assert ins.report.failure is not None and ins.report.failure.stage == "trace"
    assert "trace failed" in ins.status.value
    ins.editors[1].value = "f32[2,4]"
    assert ins.report.failure is None


# --- history and comparison --------------------------------------------------------------------


def test_history_and_compare_with(ins):
    ins.editors[1].value = "f32[8,4]"
    ins.editors[1].value = "f32[16,4]"
    assert len(ins.history) == 3
    assert [label for label, _ in ins.compare_with.options] == [
        "1. w: f32[4,4], x: f32[2,4]",
        "2. w: f32[4,4], x: f32[8,4]",
    ]
    diff = ins.show_comparison(0)
    assert diff.labels == ("w: f32[4,4], x: f32[2,4]", "w: f32[4,4], x: f32[16,4]")
    assert "stablehlo" in diff.changed_stages()


def test_compare_with_offers_an_entry_after_the_first_change_and_keeps_the_choice(ins):
    assert ins.compare_with.options == () and ins.compare_button.disabled
    ins.editors[1].value = "f32[8,4]"
    # Its options used to be set while nothing was chosen, and ipywidgets then
    # keeps nothing chosen: the browser showed an empty dropdown, and Compare
    # said there was nothing to compare with.
    assert ins.compare_with.index == 0 and ins.compare_with.label.startswith("1. ")
    assert not ins.compare_button.disabled and not ins.compare_with.disabled
    assert ins.show_comparison().labels[0] == "w: f32[4,4], x: f32[2,4]"
    ins.editors[1].value = "f32[16,4]"
    assert len(ins.compare_with.options) == 2 and ins.compare_with.label.startswith("1. ")
    ins.compare_with.value = 2  # the user's choice stays through later changes
    ins.debug_info.value = False
    ins.editors[1].value = "f32[32,4]"
    assert ins.compare_with.label == "2. w: f32[4,4], x: f32[8,4]"
    assert ins.show_comparison().labels == ("w: f32[4,4], x: f32[8,4]", "w: f32[4,4], x: f32[32,4]")


def test_compare_with_numbers_stay_when_old_entries_go():
    ins = Inspector(layer, jnp.ones((4, 4)), jnp.ones((2, 4)), history_size=3)
    for rows in (3, 4, 5):
        ins.editors[1].value = f"f32[{rows},4]"
    assert [label for label, _ in ins.compare_with.options] == [
        "2. w: f32[4,4], x: f32[3,4]",
        "3. w: f32[4,4], x: f32[4,4]",
    ]
    assert ins.compare_with.value == 3  # the first choice went with its entry: the newest


def test_several_choices_are_checkboxes_that_say_what_they_do(ins):
    import ipywidgets as W
    from olympus.platforms import KNOWN_PLATFORMS

    def walk(widget):
        yield widget
        for child in getattr(widget, "children", ()):
            yield from walk(child)

    widgets = list(walk(ins))
    assert not [w for w in widgets if isinstance(w, (W.SelectMultiple, W.Select))]
    controls = [
        w
        for w in widgets
        if isinstance(w, (W.Text, W.Checkbox, W.ToggleButtons, W.Dropdown, W.Button))
    ]
    assert all(c.tooltip or getattr(c, "tooltips", None) for c in controls)
    assert all(c.description for c in controls)
    tpu = ins.platforms.boxes[KNOWN_PLATFORMS.index("tpu")]
    tpu.value = True
    assert ins.platforms.value == ("tpu",) and ins.report.platforms == ("tpu",)
    source = next(b for b in ins.stages.boxes if b.description == "source")
    source.value = False
    assert ins.stages.value[0] == "olympuspr" and "source" not in ins.report.stages
    ins.stages.value = ("source", "cost_analysis")  # and the boxes follow the value
    assert [b.description for b in ins.stages.boxes if b.value] == ["source", "cost"]


def test_stage_cache_counts():
    cache = StageCache(layer)
    w, x = jnp.ones((4, 4)), jnp.ones((2, 4))
    spec = Specialization.of(layer, (w, x))
    cache.stage(spec, (w, x))
    cache.stage(spec, (w, x))
    assert cache.counts == {"trace": 1, "lower": 1, "compile": 1}


# --- the stepper ------------------------------------------------------------------------------------


def test_stepper_walks_the_four_stages():
    stepper = Stepper(lambda x, y: 2 * x + y, 3, 4)
    names = []
    for expected in ("trace", "lower", "compile", "execute"):
        assert stepper.button.description == f"Next: {expected}"
        step = stepper.next_step()
        names.append(step.name)
        assert step.seconds > 0
        assert expected.capitalize()[:4] in stepper.explanation.value
    assert names == ["trace", "lower", "compile", "execute"]
    assert stepper.result == 10 and stepper.button.disabled
    assert "mul 2:i32[] a" in stepper.done[0].text
    assert "stablehlo.multiply" in stepper.done[1].text
    assert stepper.next_step() is None
    stepper.reset()
    assert stepper.done == [] and stepper.button.description == "Next: trace"


def test_stepper_runs_on_random_inputs():
    stepper = Stepper(lambda x: x.sum(), jnp.ones((3, 2)))
    stepper.inputs.value = "random inputs"
    for _ in range(4):
        stepper.next_step()
    args, _ = random_inputs(stepper.compiled.args_info)
    np.testing.assert_allclose(stepper.result, np.sum(args[0]), rtol=1e-5)


def test_stepper_controls_say_what_they_do():
    stepper = Stepper(lambda x: x, 1.0)
    assert stepper.button.tooltip and stepper.restart.tooltip
    assert len(stepper.inputs.tooltips) == len(stepper.inputs.options)


def test_stepper_errors_are_inline():
    def bad(x):
        if x > 0:
            return x
        return -x

    stepper = Stepper(bad, 1.0)
    assert stepper.next_step() is None
    assert "trace failed" in stepper.explanation.value and "bad" in stepper.explanation.value
    assert stepper.done == []


def _slow(x):
    import time

    time.sleep(1.6)  # a slow trace
    return jnp.sin(x)


def test_slow_staging_shows_its_progress_in_the_status_line():
    seen = []

    class Watched(Inspector):
        def _show_progress(self, text):
            seen.append(text)
            super()._show_progress(text)

    ins = Watched(_slow, jnp.ones(3))
    assert seen and seen[0].startswith("Olympus: tracing the function…")
    assert ins.status.value.startswith("✓ trace")  # the status once done


def test_a_slow_step_of_the_stepper_shows_its_progress():
    seen = []

    class Watched(Stepper):
        def _show_progress(self, text):
            seen.append(text)
            super()._show_progress(text)

    stepper = Watched(_slow, jnp.ones(3))
    stepper.next_step()
    assert seen and seen[0].startswith("Olympus: tracing the function…")
    assert "Trace" in stepper.explanation.value


def test_history_size_counts_the_ops_held_not_only_the_texts():
    ins = Inspector(layer, jnp.ones((4, 4)), jnp.ones((2, 4)))
    entry = ins.history[-1]
    model = entry.report.provenance
    texts = sum(len(t) for t in entry.report.texts.values()) + sum(
        len(s.text) for s in model.stages.values()
    )
    ops = sum(len(s.ops) for s in model.stages.values())
    assert entry.size == texts + entry.OP_BYTES * ops > texts


def test_every_stage_a_compile_makes_gets_one():
    """The partitioned stage alone (no compiled, cost or memory) still compiles: the
    report says why there is none for one device, instead of leaving it out."""
    ins = Inspector(layer, jnp.ones((4, 4)), jnp.ones((2, 4)), stages=("source", "partitioned"))
    assert "compile" in ins.report.timings
    assert "one device" in ins.report.unavailable["partitioned"]
