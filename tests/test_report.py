"""Stage reports: what they hold, their three forms, escaping, caching, bad input."""

import html.parser
import json
import os
import sys
import textwrap

import jax
import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
import olympus_jupyter
from jax_facts import jax_refuses_unhashable_static_arguments_when_tracing
from olympus_jupyter import MEDIA_TYPE, ReportCache, StageReport, inspect


def mlp(params, x):
    for w, b in params:
        x = jnp.tanh(x @ w + b)
    return jnp.mean(x**2)


def params_of(layers, width=32):
    return [(np.ones((width, width), np.float32), np.zeros(width, np.float32))] * layers


class Tags(html.parser.HTMLParser):
    """Every tag and attribute of an HTML text."""

    def __init__(self):
        super().__init__()
        self.tags, self.attrs = set(), []

    def handle_starttag(self, tag, attrs):
        self.tags.add(tag)
        self.attrs.extend(attrs)


def tags_of(text):
    parser = Tags()
    parser.feed(text)
    return parser


# --- what a report holds ------------------------------------------------------------


def test_report_holds_every_stage_with_timings_and_analyses():
    def f(x):
        y = jnp.sin(x)
        return y * 2

    report = inspect(f, jnp.ones(4), cache=None)
    assert isinstance(report, StageReport) and report.ok
    assert set(report.provenance.stage_names) == {"olympuspr", "stablehlo", "compiled"}
    assert report.hlo_text.startswith("HloModule jit_f")
    assert set(report.timings) == {"trace", "lower", "compile"}
    assert report.analyses.cost_lowered["flops"] > 0
    assert report.analyses.cost_compiled is not None
    assert report.analyses.memory["peak_memory_in_bytes"] >= 16
    # Each source line lists what it became in every stage.
    line = f.__code__.co_firstlineno + 1
    ops = report.provenance.ops_for_line(f.__code__.co_filename, line)
    assert ops["olympuspr"] and ops["stablehlo"] and ops["compiled"]


def test_cost_figures_that_are_not_finite_are_left_out_of_the_data():
    # JSON holds no NaN or infinity (JSON.parse refuses what json.dumps writes for them).
    from olympus_jupyter.report.stage_report import _jsonable_cost

    assert _jsonable_cost(
        {"flops": 8.0, "utilization0{}": float("nan"), "optimal_seconds": float("inf")}
    ) == {"flops": 8.0}


def test_bundle_has_three_forms_and_json_round_trips():
    report = inspect(lambda x: x @ x.T, jnp.ones((3, 4)), cache=None)
    bundle = report._repr_mimebundle_()
    assert set(bundle) == {MEDIA_TYPE, "text/html", "text/plain"}
    data = bundle[MEDIA_TYPE]
    assert data["schema"] == "olympus.stages" and data["version"] == 3
    text = json.dumps(data)
    again = StageReport.from_json(json.loads(text))
    assert again.to_json() == data
    assert "Olympus report: <lambda>" in bundle["text/plain"]
    only_text = report._repr_mimebundle_(include={"text/plain"})
    assert set(only_text) == {"text/plain"}


def test_json_is_at_most_twice_the_stage_texts():
    report = inspect(mlp, params_of(8), np.ones((4, 32), np.float32), cache=None)
    raw = sum(len(report.stage_text(s)) for s in ("olympuspr", "stablehlo", "hlo", "compiled"))
    assert len(json.dumps(report.to_json())) <= 2 * raw


def test_from_json_refuses_other_documents():
    with pytest.raises(ValueError, match="Not an Olympus report"):
        StageReport.from_json({"schema": "other"})
    data = inspect(lambda x: x, 1.0, cache=None).to_json()
    data["version"] = 99
    with pytest.raises(ValueError, match="version 99 is not supported"):
        StageReport.from_json(data)


# --- the HTML form ---------------------------------------------------------------------


def test_html_is_static_and_links_source_lines_to_ops():
    def f(x):
        y = jnp.sin(x)
        return olympus.lax.fori_loop(0, 3, lambda i, c: c * y, y)

    html = inspect(f, jnp.ones(4), cache=None).html()
    parsed = tags_of(html)
    assert "script" not in parsed.tags
    assert not [a for a, _ in parsed.attrs if a.startswith("on")]
    for title in (
        "Source",
        "olympuspr",
        "StableHLO",
        "HLO",
        "Compiled HLO",
        "Cost analysis",
        "Memory analysis",
    ):
        assert title in html
    assert "ol-src0" in html  # source lines carry colours ...
    assert "#ol" in html and "-source-" in html  # ... and op lines link back to them
    assert '<details class="ol-fold"' in html  # regions fold
    assert "stablehlo.sine" in html and "before optimization" in html


def test_debug_info_off_drops_source_annotations():
    def f(x):
        return jnp.cos(x)

    with_info = inspect(f, 1.0, cache=None).html()
    without = inspect(f, 1.0, debug_info=False, cache=None).html()
    name = os.path.basename(__file__)
    assert f"{name}:" in with_info.split("StableHLO")[1]
    assert f"{name}:" not in without.split("StableHLO")[1]


def test_large_stages_are_capped_with_the_full_text_a_step_away(monkeypatch):
    from olympus_jupyter.report import html as html_report

    monkeypatch.setattr(html_report, "MAX_LINES", 20)
    report = inspect(mlp, params_of(6), np.ones((4, 32), np.float32), cache=None)
    capped = report.html()
    assert "Showing the first 20 of" in capped
    assert "report.stage_text(" in capped
    full = report.html(full=True)
    assert "Showing the first" not in full and len(full) > len(capped)


def test_html_of_a_large_program_stays_small():
    report = inspect(mlp, params_of(24, 64), np.ones((8, 64), np.float32), cache=None)
    assert len(report.html()) < 1_500_000


def test_save_writes_a_standalone_offline_page(tmp_path):
    report = inspect(lambda x: jnp.exp(x), 1.0, cache=None)
    path = report.save(tmp_path / "r.html")
    page = open(path, encoding="utf-8").read()
    assert (
        page.startswith("<!DOCTYPE html>")
        and "<title>Olympus report: &lt;lambda&gt;</title>" in page
    )
    parsed = tags_of(page)
    external = [v for a, v in parsed.attrs if a in ("src", "href") and v and not v.startswith("#")]
    # Its only scripts are the interactive view's: the report's data and the loader
    # (tests/test_standalone_view.py); without them the page is static HTML.
    assert external == [] and page.count("<script") in (0, 2)
    static = open(report.save(tmp_path / "s.html", interactive=False), encoding="utf-8").read()
    assert "script" not in tags_of(static).tags
    with pytest.raises(ValueError, match="ending in .html"):
        report.save(tmp_path / "r.txt")
    with pytest.raises(FileNotFoundError, match="does not exist"):
        report.save(tmp_path / "missing" / "r.html")


# --- escaping -------------------------------------------------------------------------

HOSTILE = '<script>alert("x")</script><img src=x onerror=alert(1)>'


def test_nothing_from_the_users_program_injects_markup(tmp_path):
    folder = tmp_path / "<img src=x onerror=alert(1)>"
    folder.mkdir()
    (folder / "hostile_mod.py").write_text(
        textwrap.dedent(f'''
        import olympus.numpy as jnp

        def f(x, tag):
            """{HOSTILE}"""
            # {HOSTILE}
            return jnp.sin(x) * len(tag)  # {HOSTILE}
    ''')
    )
    sys.path.insert(0, str(folder))
    try:
        import hostile_mod

        hostile_mod.f.__name__ = HOSTILE
        hostile_mod.f.__qualname__ = HOSTILE
        report = inspect(hostile_mod.f, 1.0, HOSTILE, static_argnames="tag", cache=None)
    finally:
        sys.path.remove(str(folder))
        sys.modules.pop("hostile_mod", None)
    # (The interactive page's scripts, its data and loader: tests/test_standalone_view.py.)
    for page in (report.html(), report.html(standalone=True, interactive=False)):
        parsed = tags_of(page)
        assert "script" not in parsed.tags and "img" not in parsed.tags
        assert not [a for a, _ in parsed.attrs if a.startswith("on")]
        assert "&lt;script&gt;" in page  # shown, as text
    assert "onerror" in json.dumps(report.to_json())  # the data keeps it, as data


def test_failure_messages_are_escaped():
    def f(x):
        raise ValueError(HOSTILE)

    report = inspect(f, 1.0, cache=None)
    page = report.html()
    assert "script" not in tags_of(page).tags
    assert "&lt;script&gt;" in page


# --- what inspect accepts --------------------------------------------------------------


def g(x, y):
    return jnp.tanh(x) + y


def test_inspect_accepts_every_stage_object():
    x = jnp.ones(3)
    for target in (
        olympus.jit(g),
        jax.jit(g),
        olympus.jit(g).trace(x, 1.0),
        jax.jit(g).trace(x, 1.0),
        olympus.jit(g).trace(x, 1.0).lower(),
        jax.jit(g).trace(x, 1.0).lower(),
        olympus.jit(g).trace(x, 1.0).lower().compile(),
        jax.jit(g).trace(x, 1.0).lower().compile(),
    ):
        args = (x, 1.0) if callable(target) and not hasattr(target, "args_info") else ()
        if hasattr(target, "trace"):
            args = (x, 1.0)
        report = inspect(target, *args, cache=None)
        assert report.ok and report.provenance is not None, target


def test_inspect_keeps_options_of_jitted_functions():
    wrapped = olympus.jit(lambda x, n: x * n, static_argnums=1)
    report = inspect(wrapped, 1.0, 3, cache=None)
    assert "3.0" in report.stage_text("olympuspr") or "3" in report.stage_text("olympuspr")
    with pytest.raises(ValueError, match="already jit-wrapped"):
        inspect(wrapped, 1.0, 3, static_argnums=1, cache=None)


def test_inspect_exported_artifacts_and_bytes():
    exported = olympus.export.export(olympus.jit(g))(jnp.ones(3), 1.0)
    for target in (exported, exported.serialize()):
        report = inspect(target, cache=None)
        assert report.ok and "stablehlo" in report.provenance.stage_names


def test_a_shape_polymorphic_export_shows_its_program_and_why_it_is_not_compiled():
    def softmax(x):
        e = jnp.exp(x - x.max(axis=1, keepdims=True))
        return e / e.sum(axis=1, keepdims=True)

    spec = olympus.ShapeDtypeStruct(olympus.export.symbolic_shape("rows, classes"), np.float32)
    exported = olympus.export.export(olympus.jit(softmax))(spec)
    report = inspect(exported.serialize(), cache=None, costs=True)
    assert report.ok and "stablehlo" in report.provenance.stage_names
    for stage in ("hlo", "compiled", "costs", "cost_analysis", "memory"):
        assert "symbolic dimensions (rows, classes)" in report.unavailable[stage], stage
    assert "inspect(exported.call" in report.unavailable["compiled"]


def test_cross_platform_stages_that_cannot_exist_here_say_why():
    report = inspect(g, jnp.ones(3), 1.0, platform="tpu", cache=None)
    assert report.ok and report.platforms == ("tpu",)
    assert "stablehlo" in report.provenance.stage_names
    assert "lowered for tpu" in report.unavailable["compiled"]
    assert "Not available: lowered for tpu" in report.html()
    here = olympus.platforms.local_platform()
    both = inspect(g, jnp.ones(3), 1.0, platform=f"{here},tpu", cache=None)
    assert both.platforms == (here, "tpu") and "compiled" in both.provenance.stage_names


def test_stages_option_limits_what_is_made_and_shown():
    report = inspect(g, jnp.ones(3), 1.0, stages=["olympuspr"], cache=None)
    assert report.provenance.stage_names == ("olympuspr",)
    assert "StableHLO" not in report.html()
    with pytest.raises(ValueError, match="Unknown stage 'llvm'"):
        inspect(g, jnp.ones(3), 1.0, stages=["llvm"], cache=None)


def test_compiler_options_reach_the_compiler():
    report = inspect(g, jnp.ones(3), 1.0, compiler_options={"xla_no_such_option": 1}, cache=None)
    assert report.failure.stage == "compile" and "No such compile option" in report.failure.message


# --- failures are reports, not crashes --------------------------------------------------


def test_trace_failure_names_the_stage_and_the_users_line():
    def f(x):
        if x > 0:  # Python control flow on a traced value
            return x
        return -x

    report = inspect(f, 1.0, cache=None)
    assert not report.ok and report.failure.stage == "trace"
    assert report.failure.error_type == "TracerBoolConversionError"
    frame = report.failure.user_frame
    assert frame.function == "f" and frame.line == f.__code__.co_firstlineno + 1
    assert "if x > 0" in frame.code
    assert "Trace failed" in report.html() and "trace failed" in report.text()


def test_unhashable_static_argument_is_a_trace_failure_where_jax_says_so():
    report = inspect(lambda x, n: x, 1.0, [1], static_argnums=1, cache=None)
    if jax_refuses_unhashable_static_arguments_when_tracing():
        assert report.failure.stage == "trace" and "Non-hashable" in report.failure.message
    else:
        assert report.ok


def test_bad_platform_is_an_error_before_anything_runs():
    with pytest.raises(ValueError, match="Unknown lowering platform 'gpux'"):
        inspect(g, jnp.ones(3), 1.0, platform="gpux", cache=None)


# --- re-inspecting ----------------------------------------------------------------------


def test_reinspecting_returns_the_cached_report():
    cache = ReportCache()
    first = inspect(g, jnp.ones(3), 1.0, cache=cache)
    assert inspect(g, jnp.zeros(3), 1.0, cache=cache) is first  # same signature
    assert inspect(g, jnp.ones(4), 1.0, cache=cache) is not first  # new shape
    assert inspect(g, jnp.ones(3), 1.0, stages=["olympuspr"], cache=cache) is not first
    g2 = lambda x, y: jnp.tanh(x) + y  # noqa: E731 - another function object
    assert inspect(g2, jnp.ones(3), 1.0, cache=cache) is not first
    cache.clear()
    assert inspect(g, jnp.ones(3), 1.0, cache=cache) is not first


def test_stage_objects_display_as_reports():
    traced = olympus.jit(g).trace(jnp.ones(3), 1.0)
    bundle = traced._repr_mimebundle_()
    assert MEDIA_TYPE in bundle and "olympuspr" in bundle["text/plain"]
    assert "compiled" not in bundle["text/plain"]
    lowered_bundle = traced.lower()._repr_mimebundle_()
    assert "stablehlo" in lowered_bundle["text/plain"]
    assert "compiled" not in lowered_bundle["text/plain"]  # displaying never compiles
    assert "peak memory" in traced.lower().compile()._repr_mimebundle_()["text/plain"]


def test_public_surface():
    assert olympus_jupyter.inspect is inspect
    assert callable(olympus_jupyter.load_ipython_extension)
