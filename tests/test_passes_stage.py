"""The ``passes`` stage of reports: XLA's pipeline pass by pass, and where each line's
instructions went, on real programs with planted dead code, common subexpressions
and fusions; in the data, the HTML, the text form, the options and the magic."""

import json
import os
import tempfile

import jax
import numpy as np
import pytest

import olympus
import olympus.numpy as jnp
from olympus import lax
from olympus.passes import pass_pipeline
from olympus_jupyter import inspect
from olympus_jupyter.frontends.options import OptionError, ReportOptions, split_line
from olympus_jupyter.report.passes_view import module_texts, passes_json
from olympus_jupyter.report.stage_report import StageReport


def planted(x, w):
    h = jnp.tanh(x @ w)
    a = jnp.cos(h)
    b = jnp.cos(h)
    dead = jnp.exp(w) * 3.0  # noqa: F841 - the planted dead line
    return (a * b).sum()


def _line(fun, k):
    return fun.__code__.co_firstlineno + k


X, W = np.ones((8, 16), np.float32), np.ones((16, 16), np.float32)


@pytest.fixture(scope="module")
def report():
    r = inspect(planted, X, W, passes=True, cache=False)
    assert r.failure is None, r.failure
    return r


def _events(j):
    return [(e["pass"], e["kind"]) for e in j["events"]]


def test_the_pass_table_lists_every_pass_xla_names_in_order(report):
    rows = report.passes["rows"]
    assert rows[0]["kind"] == "start"
    changed = [r for r in rows if r["kind"] == "changed"]
    assert "fusion" in [r["pass"] for r in changed] and "cse" in [r["pass"] for r in changed]
    assert any(r["kind"] == "unchanged" for r in rows)
    for before, after in zip(rows, rows[1:]):  # counts chain from one row to the next
        assert after["instructions_before"] == before["instructions"]
    # XLA may call a pass a change that prints the same (layout assignment that keeps
    # the default layouts); CSE's and fusion's show in the text.
    for r in changed:
        if r["pass"] in ("cse", "fusion"):
            assert r["added"] + r["removed"] > 0, r


def test_the_planted_common_subexpression_is_removed_by_cse(report):
    j = report.journey(_line(planted, 3))
    assert [c["opcode"] for c in j["start"]] == ["cosine"]
    removed = [e for e in j["events"] if e["kind"] == "removed"]
    assert removed and removed[0]["pass"] == "cse", _events(j)
    assert report.passes["rows"][removed[0]["row"]]["pass"] == "cse"


def test_the_fused_tanh_of_a_matmul_reports_its_fusion(report):
    j = report.journey(_line(planted, 1))
    fused = [e for e in j["events"] if e["kind"] == "fused"]
    assert fused, _events(j)
    tanh = [c for c in j["end"] if c["opcode"] == "tanh"]
    assert tanh and tanh[0]["fusion"] and tanh[0]["fusion_kind"].startswith("k")
    assert any(tanh[0]["fusion"] in e["detail"] for e in fused)


def test_nothing_is_put_down_to_a_line_that_made_no_instruction(report):
    # The dead line is gone before XLA sees the program; the def line makes nothing.
    assert report.journey(_line(planted, 4)) is None
    assert report.journey(_line(planted, 0)) is None
    before = report.passes["before"]
    lines = {j["line"] for j in report.passes["journeys"]}
    assert lines <= {_line(planted, k) for k in (1, 2, 3, 5)}
    for j in report.passes["journeys"]:  # each line's instructions are in the module
        for c in j["start"]:
            assert f"{c['label']} = " in before


def test_the_data_round_trips_and_the_modules_read_back(report):
    data = json.loads(json.dumps(report.to_json()))
    again = StageReport.from_json(data)
    assert again.passes == report.passes
    assert again.journey(_line(planted, 3)) == report.journey(_line(planted, 3))
    pipeline = pass_pipeline(olympus.jit(planted).trace(X, W).lower())
    texts = module_texts(report.passes)
    assert texts == [s.text for s in pipeline.steps]


def test_a_bundle_pointing_outside_itself_is_refused(report):
    data = json.loads(json.dumps(report.to_json()))
    data["passes"]["journeys"][0]["events"].append(
        dict(
            data["passes"]["journeys"][0]["events"][0]
            if data["passes"]["journeys"][0]["events"]
            else {"pass": "p", "pipeline": "q", "kind": "removed", "labels": [], "detail": ""},
            row=10**6,
        )
    )
    with pytest.raises(ValueError, match="row"):
        StageReport.from_json(data)


def test_big_modules_are_capped_and_the_cap_said():
    lowered = olympus.jit(planted).trace(X, W).lower()
    pipeline = pass_pipeline(lowered)
    whole = passes_json(pipeline, (), full=True)
    sizes = [sum(len(x) + 1 if isinstance(x, str) else 8 for x in d) for d in whole["deltas"]]
    assert len(sizes) > 2 and whole["note"] is None
    # Room for the first module and the first delta only.
    data = passes_json(pipeline, (), max_chars=len(pipeline.before) + sizes[0])
    assert data["deltas"][0] is not None and data["deltas"][-1] is None
    first = data["deltas"].index(None)
    assert all(d is None for d in data["deltas"][first:])
    assert "left out" in data["note"]
    assert passes_json(pipeline, (), full=True, max_chars=10)["note"] is None
    tiny = passes_json(pipeline, (), max_chars=10)  # not even the first module fits
    assert tiny["before"] == "" and set(map(type, tiny["deltas"])) == {type(None)}
    assert "already" in tiny["note"] and tiny["rows"] == data["rows"]


def test_the_html_shows_the_pass_table_the_diffs_folded_and_each_line(report):
    html = report.html(highlight=False)
    assert "XLA passes" in html and "Where each line" in html
    assert 'class="ol-pass-diff"' in html and "<code>fusion</code>" in html
    assert "cse (removed)" in html


def test_the_text_form_says_where_each_line_went(report):
    text = report.text()
    assert "passes:" in text and "cse (removed)" in text


def test_a_scan_and_an_attention_block_have_true_journeys():
    def scanned(xs):
        def body(c, x):
            c = jnp.sin(c) + x
            return c, c * 2.0

        return lax.scan(body, jnp.zeros(4), xs)

    def attention(q, k, v):
        s = jax.nn.softmax(q @ k.T / 4.0, axis=-1)
        return s @ v

    r = inspect(scanned, np.ones((5, 4), np.float32), passes=True, cache=False)
    assert r.failure is None and r.passes["journeys"]
    body_line = (
        scanned.__code__.co_consts[1].co_firstlineno + 1
        if hasattr(scanned.__code__.co_consts[1], "co_firstlineno")
        else None
    )
    lines = {j["line"] for j in r.passes["journeys"]}
    assert lines and all(scanned.__code__.co_firstlineno < n < _line(scanned, 6) for n in lines), (
        lines
    )
    assert body_line is None or body_line in lines
    q = np.ones((8, 16), np.float32)
    r = inspect(attention, q, q, q, passes=True, cache=False)
    j = r.journey(_line(attention, 1))
    assert j is not None and j["end"], j
    assert any(e["kind"] in ("fused", "fusion") for e in j["events"]), _events(j)


def test_a_pass_filter_keeps_only_those_passes_and_says_who_did_the_rest():
    r = inspect(planted, X, W, passes="^fusion$", cache=False)
    changed = {row["pass"] for row in r.passes["rows"] if row["kind"] == "changed"}
    assert changed == {"fusion"}
    for j in r.passes["journeys"]:
        for e in j["events"]:
            assert e["pass"] == "fusion" or e["pass"].startswith("passes outside the filter")


def test_the_dump_folder_is_gone_afterwards(tmp_path, monkeypatch):
    monkeypatch.setattr(tempfile, "tempdir", str(tmp_path))  # this process's, put back
    report = inspect(planted, X, W, passes=True, cache=False)
    assert report.passes["rows"] and os.listdir(tmp_path) == []


def test_the_options_take_what_users_write():
    assert ReportOptions(passes=True).passes == ".*"
    assert "passes" in ReportOptions(passes="cse").stages
    assert ReportOptions(stages="olympuspr,passes").passes == ".*"
    assert ReportOptions(passes=False).passes is None
    assert split_line("--passes f(x)")[0].passes == ".*"
    options, call = split_line("--passes 'fusion|cse' f(x)")
    assert (options.passes, call) == ("fusion|cse", "f(x)")
    assert split_line("--passes=cse --full f(x)")[0].passes == "cse"
    with pytest.raises(OptionError, match="not a regular expression"):
        ReportOptions(passes="(")
    with pytest.raises(TypeError, match="passes must be"):
        ReportOptions(passes=3)


def test_the_magic_takes_passes():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "olympus_jupyter")
    shell.user_ns.update(planted=planted, X=X, W=W)
    shell.run_line_magic("olympus_lower", "--passes 'fusion|cse' --name rep planted(X, W)")
    rep = shell.user_ns["rep"]
    assert rep.passes["pass_re"] == "fusion|cse" and rep.journey(_line(planted, 3))


def test_cross_lowered_programs_have_passes_where_they_compile_here():
    here = jax.default_backend()
    other = "tpu" if here != "tpu" else "cpu"
    away = inspect(planted, X, W, platform=other, passes=True, cache=False)
    assert away.passes is None and "cannot exist here" in away.unavailable["passes"]
    assert "XLA passes" in away.html() and "Not available" in away.html()
    both = inspect(planted, X, W, platform=f"{here},{other}", passes=True, cache=False)
    assert both.failure is None and both.journey(_line(planted, 3))["events"]


def dead_behind_a_select(x, i):
    dead = jnp.sin(x)
    y = jnp.cos(x)
    return jnp.where(i > i, dead, y)


def test_a_planted_dead_op_is_removed_by_the_pass_that_removed_it():
    # `i > i` is false everywhere: XLA's simplifier picks `y`, and `dead` is left unused.
    r = inspect(
        dead_behind_a_select, np.ones(8, np.float32), np.arange(8), passes=True, cache=False
    )
    j = r.journey(_line(dead_behind_a_select, 1))
    assert [c["opcode"] for c in j["start"]] == ["sine"] and j["end"] == []
    removed = [e for e in j["events"] if e["kind"] == "removed"]
    assert len(removed) == 1, _events(j)
    row = r.passes["rows"][removed[0]["row"]]
    assert row["kind"] == "changed" and row["pass"] == removed[0]["pass"]
    # The module before that pass holds the sine; the module after it does not.
    texts = module_texts(r.passes)
    label = j["start"][0]["label"]
    before = r.passes["before"] if row["step"] == 0 else texts[row["step"] - 1]
    assert f"{label} = " in before and f"{label} = " not in texts[row["step"]]
    # The line that survives is not reported removed.
    kept = r.journey(_line(dead_behind_a_select, 2))
    assert kept["end"] and not [e for e in kept["events"] if e["kind"] == "removed"]


def test_the_inspector_shows_passes_with_a_filter_and_compiles_them_once():
    from olympus_jupyter.frontends.inspector import Inspector

    ins = Inspector(planted, X, W, passes="fusion|cse")
    assert ins.pass_filter.value == "fusion|cse" and "passes" in ins.stages.value
    assert ins.report.passes["pass_re"] == "fusion|cse"
    first = ins.report.passes
    ins.debug_info.value = False  # the display only: the same passes data
    assert ins.report.passes is first
    ins.pass_filter.value = "^cse$"
    assert {r["pass"] for r in ins.report.passes["rows"] if r["kind"] == "changed"} == {"cse"}
    ins.pass_filter.value = "("  # refused next to the control, nothing re-staged
    assert "not a regular expression" in ins.options_error.value
    assert ins.report.passes["pass_re"] == "^cse$"


def test_the_static_diffs_are_capped_and_the_cap_said(report, monkeypatch):
    from olympus_jupyter.report import passes_html
    from olympus_jupyter.report.markup import concat

    monkeypatch.setattr(passes_html, "MAX_DIFF_LINES", 3)
    monkeypatch.setattr(passes_html, "MAX_DIFFS", 1)
    capped = str(concat(passes_html.passes_section(report, "ol1", full=False)))
    assert capped.count('class="ol-pass-diff"') == 1
    assert "Showing 3 of the" in capped and "Diffs are folded in for the first 1 of" in capped
    whole = str(concat(passes_html.passes_section(report, "ol1", full=True)))
    assert whole.count('class="ol-pass-diff"') > 1 and "Showing 3 of the" not in whole
