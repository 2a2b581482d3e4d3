"""A report's display bundle stays under its size cap: long stages are cut to their
first lines (and the ops on them), the cut is said in every form, the cut bundle
is a valid report, and the report object keeps everything."""

import json

import pytest

import olympus.numpy as jnp
from olympus import stage_registry
from olympus.provenance.clip import clip, line_count
from olympus_jupyter import StageReport, inspect
from olympus_jupyter.report.data import MEDIA_TYPE
from olympus_jupyter.report.output_cap import MAX_OUTPUT_BYTES, capped_forms, output_size
from olympus_jupyter.report.validate import check_bundle


def long_program(x):
    for _ in range(400):
        x = jnp.tanh(x) * 1.5 + jnp.sin(x)
    return x


@pytest.fixture(scope="module")
def report():
    return inspect(long_program, jnp.ones((4, 4)), cache=None)


LIMIT = 300_000


def test_a_bundle_over_the_cap_is_cut_under_it(report):
    assert output_size(report.forms()) > LIMIT  # the case is real
    forms = capped_forms(report, limit=LIMIT)
    assert output_size(forms) <= LIMIT


def test_the_cut_is_said_in_every_form(report):
    forms = capped_forms(report, limit=LIMIT)
    note = forms[MEDIA_TYPE]["notes"][-1]
    assert "capped at 0.3 MB" in note and "report.save" in note and "--full" in note
    assert "capped at 0.3 MB" in forms["text/html"]
    assert "capped at 0.3 MB" in forms["text/plain"]


def test_the_cut_bundle_is_a_valid_report_of_the_first_lines(report):
    data = json.loads(json.dumps(capped_forms(report, limit=LIMIT)[MEDIA_TYPE]))
    check_bundle(data)
    cut = StageReport.from_json(data)  # the provenance reader checks indices
    for stage in stage_registry.program_stages():
        full_text, cut_text = report.stage_text(stage.name), cut.stage_text(stage.name)
        if full_text is None:
            continue
        assert full_text.startswith(cut_text)
        assert line_count(cut_text) < line_count(full_text)
    for name, stage in cut.provenance.stages.items():
        n, lines = len(stage.ops), line_count(stage.text)
        assert n < len(report.provenance.stages[name].ops)
        for op in stage.ops:
            assert op.parent is None or op.parent < n
            assert op.fusion is None or op.fusion < n
            assert op.computation is None or op.computation < len(stage.computations)
            assert op.lines is None or op.lines[1] <= lines
        assert all(k < n for k in stage.collectives)
    assert len(cut.provenance.stages["olympuspr"].ops) > 0
    for line in cut.provenance.lines:
        for name, indices in line.ops.items():
            assert all(k < len(cut.provenance.stages[name].ops) for k in indices)


def test_the_report_itself_keeps_everything(report):
    capped_forms(report, limit=LIMIT)
    assert report.notes == ()
    assert line_count(report.stage_text("stablehlo")) > 1000


def test_a_small_report_is_shown_whole():
    small = inspect(lambda x: x * 2, 1.0, cache=None)
    assert capped_forms(small) == small.forms()
    assert "notes" not in small._repr_mimebundle_()[MEDIA_TYPE]


def test_full_reports_are_not_capped():
    report = inspect(long_program, jnp.ones((4, 4)), full=True, cache=None)
    assert "notes" not in report._repr_mimebundle_()[MEDIA_TYPE]


def test_the_default_cap_is_five_megabytes():
    assert MAX_OUTPUT_BYTES == 5_000_000


def test_clipping_hlo_keeps_fusions_consistent(report):
    compiled = report.provenance.stages["compiled"]
    lines = line_count(compiled.text)
    for keep in (1, 5, lines // 3, lines // 2, lines - 1):
        stage = clip(report.provenance, keep).stages["compiled"]
        n = len(stage.ops)
        assert all(c.caller is None or c.caller < n for c in stage.computations)
        assert all(c.fusion is None or c.fusion < n for c in stage.computations)
        assert all(c.lines[1] <= keep for c in stage.computations)


def test_a_line_of_megabytes_is_cut_short_not_the_whole_stage():
    import numpy as np

    def with_big_constant(x):
        return x + np.arange(400_000, dtype=np.float32).reshape(x.shape)

    report = inspect(with_big_constant, jnp.ones((400, 1000)), cache=None)
    assert max(map(len, report.stage_text("stablehlo").split("\n"))) > 1_000_000
    forms = capped_forms(report, limit=1_000_000)
    assert output_size(forms) <= 1_000_000
    cut = StageReport.from_json(json.loads(json.dumps(forms[MEDIA_TYPE])))
    text = cut.stage_text("stablehlo")
    assert line_count(text) == line_count(report.stage_text("stablehlo"))  # every line
    assert "more characters)" in text
    assert "the first 5,000 characters of lines longer than that" in forms["text/plain"]
