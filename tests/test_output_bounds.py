"""Output stays bounded at any size (issue 33): the display bundle and a saved page
stay under their caps with the ``passes`` and ``costs`` stages and the data of any
registered kind; no list breaks the bundle schema (notes are grouped by reason,
with counts); ``save()`` writes only a page whose data reads back; no line of the
text form is longer than 200 characters."""

import dataclasses
import importlib.util
import json
import re

import numpy as np
import pytest

import olympus.numpy as jnp
from olympus.line_costs import CostByLine, LineCost
from olympus.stage_registry import StageSpec
from olympus_jupyter import StageReport, inspect
from olympus_jupyter.report import bundle
from olympus_jupyter.report.costs_view import MAX_NOTES, costs_json
from olympus_jupyter.report.data import MEDIA_TYPE
from olympus_jupyter.report.data_cap import group_notes, json_size
from olympus_jupyter.report.kinds import (
    MakeContext,
    TableKind,
    TextKind,
    register_kind,
    unregister_kind,
)
from olympus_jupyter.report.output_cap import (
    MAX_OUTPUT_BYTES,
    MAX_PAGE_BYTES,
    capped_forms,
    output_size,
)
from olympus_jupyter.report.text import MAX_WIDTH
from olympus_jupyter.report.validate import BundleError, check_bundle

#: Lines of the generated program: each its own source line, ops and cost row.
LINES = 400


def _program(path):
    """A function of LINES distinct lines, written to a file (its source is read
    back as a user's is)."""
    ops = ["jnp.sin", "jnp.tanh", "jnp.cos", "jnp.exp"]
    body = [f"    x = {ops[i % 4]}(x) * {1 + i / LINES:.6f} + {i % 7}.0" for i in range(LINES)]
    path.write_text(
        "import olympus.numpy as jnp\n\n\ndef big(x):\n" + "\n".join(body) + "\n    return x\n"
    )
    spec = importlib.util.spec_from_file_location("olympus_big_program", path)
    assert spec is not None and spec.loader is not None
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module.big


@pytest.fixture(scope="module")
def big(tmp_path_factory):
    """The report, with passes and costs, of a program of LINES lines."""
    fn = _program(tmp_path_factory.mktemp("big") / "big_program.py")
    return inspect(fn, np.ones((8, 8), np.float32), passes=True, costs=True, cache=None)


def _reads_back(data):
    """The data as a viewer gets it: JSON text, checked, read into a report."""
    data = json.loads(json.dumps(data))
    check_bundle(data)
    return StageReport.from_json(data)


def _fresh(report, **changes):
    return dataclasses.replace(report, _memo={}, **changes)


# -- the display bundle -----------------------------------------------------------------


def test_passes_and_costs_are_capped_with_the_stage_texts(big):
    limit = 300_000
    assert json_size(big.costs) + json_size(big.passes) > limit  # the case is real
    forms = capped_forms(big, limit=limit)
    assert output_size(forms) <= limit
    cut = _reads_back(forms[MEDIA_TYPE])
    # The costliest lines are kept, the rest counted; the totals are XLA's still.
    kept = [r for r in cut.costs["lines"] if r["what"] == "line"]
    every = [r for r in big.costs["lines"] if r["what"] == "line"]
    assert 0 < len(kept) < len(every) == LINES
    assert kept == every[: len(kept)]
    assert cut.costs["totals"] == big.costs["totals"]
    others = [r for r in big.costs["lines"] if r["what"] != "line"]  # never left out
    assert [r for r in cut.costs["lines"] if r["what"] != "line"] == others
    said = cut.costs["notes"][-1]
    assert f"{len(every) - len(kept):,} of {len(every):,} source lines" in said
    assert "report.cost_by_line()" in said
    # The first lines' journeys are kept, the pass table whole.
    assert cut.passes["rows"] == big.passes["rows"]
    assert cut.passes["journeys"] == big.passes["journeys"][: len(cut.passes["journeys"])]
    assert len(cut.passes["journeys"]) < len(big.passes["journeys"])
    assert "report.journey(line)" in cut.passes["note"]
    # The report's note says it, in every form.
    assert "capped at 0.3 MB" in forms[MEDIA_TYPE]["notes"][-1]
    assert "report.cost_by_line()" in forms[MEDIA_TYPE]["notes"][-1]
    assert "capped at 0.3 MB" in " ".join(forms["text/plain"].split())
    # The report object keeps everything.
    assert len(big.cost_by_line()) == len(big.costs["lines"])


def _huge_costs(rows: int, notes: int) -> dict:
    """``costs`` data of ``rows`` source lines and ``notes`` notes, as costs_json
    makes it from what the core gives."""
    lines = tuple(
        LineCost(
            f"/src/model_{k % 50}.py",
            k,
            float(rows - k),
            0.0,
            64.0,
            tuple(f"fusion.{k}.{j}" for j in range(12)),
        )
        for k in range(rows)
    )
    totals = {"flops": float(sum(r.flops for r in lines)), "transcendentals": 0.0}
    totals["bytes accessed"] = 64.0 * rows
    said = tuple(
        f"add.{k} has no source location of its own but computes: counted on line "
        f"{k} of /src/model.py, which it feeds"
        for k in range(notes)
    )
    return costs_json(None, CostByLine(lines, totals, said), None, [], files=())


def test_the_bundle_is_under_five_megabytes_with_a_huge_costs_stage():
    report = inspect(lambda x: jnp.sin(x) * 2, jnp.ones(4), costs=True, cache=None)
    report = _fresh(report, costs=_huge_costs(20_000, 3_000))
    assert json_size(report.costs) > MAX_OUTPUT_BYTES
    forms = capped_forms(report)
    assert output_size(forms) <= MAX_OUTPUT_BYTES
    cut = _reads_back(forms[MEDIA_TYPE])
    assert len(cut.costs["lines"]) < 20_000
    assert len(cut.costs["notes"]) <= MAX_NOTES


# -- lists within the schema -------------------------------------------------------------


def test_notes_past_the_schemas_limit_are_grouped_by_reason_with_counts():
    costs = _huge_costs(10, 5_000)
    assert len(costs["notes"]) <= MAX_NOTES
    assert costs["notes"] == [
        "add.0 has no source location of its own but computes: counted on line 0 of "
        "/src/model.py, which it feeds (and 4,999 more like it)"
    ]
    report = inspect(lambda x: x + 1, 1.0, costs=True, cache=None)
    data = _fresh(report, costs=costs).to_json()
    check_bundle(data)


def test_notes_of_many_reasons_are_cut_to_the_limit_and_counted():
    notes = [f"reason {'x' * k}" for k in range(3_000)]
    grouped = group_notes(notes, 1_000, more="where they are")
    assert len(grouped) == 1_000
    assert grouped[-1] == "2,001 more notes not shown: where they are"
    assert grouped[:999] == notes[:999]


def test_the_reports_notes_and_a_stages_notes_stay_within_the_schema():
    report = inspect(lambda x: jnp.sin(x), 1.0, cache=None)
    assert report.provenance is not None
    stage = report.provenance.stages["stablehlo"]
    many = tuple(f"op {k} was not found in the printed text" for k in range(2_500))
    model = dataclasses.replace(
        report.provenance,
        stages={
            **report.provenance.stages,
            "stablehlo": dataclasses.replace(stage, notes=many),
        },
    )
    notes = tuple(f"note {k}: {'why ' * (k % 3)}" for k in range(40))
    data = _fresh(report, provenance=model, notes=notes).to_json()
    check_bundle(data)
    assert len(data["notes"]) <= bundle.MAX_NOTES
    said = data["provenance"]["stages"]["stablehlo"]["notes"]
    assert said == ["op 0 was not found in the printed text (and 2,499 more like it)"]


# -- save() --------------------------------------------------------------------------


def _island(page: str):
    found = re.search(
        r'<script type="application/json" data-olympus-bundle="\w+">(.*?)</script>', page, re.S
    )
    return None if found is None else json.loads(found.group(1))


def test_a_saved_page_is_capped_and_reads_back(big, tmp_path):
    limit = 2_000_000
    whole = open(big.save(tmp_path / "whole.html", limit=None), encoding="utf-8").read()
    assert len(whole.encode()) > limit  # the case is real
    # A full report (inspect(..., full=True), --full) is saved whole.
    full = open(_fresh(big, full=True).save(tmp_path / "full.html"), encoding="utf-8").read()
    assert len(full) == len(whole)
    page = open(big.save(tmp_path / "r.html", limit=limit), encoding="utf-8").read()
    assert len(page.encode()) <= limit
    assert "This page is capped at 2 MB" in page
    data = _island(page)
    if data is not None:  # (where the view was built, the page carries the data)
        cut = _reads_back(data)
        assert 0 < len(cut.passes["journeys"]) < len(big.passes["journeys"])
        assert "report.journey(line)" in cut.passes["note"]


def test_the_default_page_of_a_huge_report_is_under_its_cap(tmp_path):
    report = inspect(lambda x: jnp.sin(x) * 2, jnp.ones(4), costs=True, cache=None)
    report = _fresh(report, costs=_huge_costs(12_000, 10))
    page = open(report.save(tmp_path / "r.html"), encoding="utf-8").read()
    assert len(page.encode()) <= MAX_PAGE_BYTES
    data = _island(page)
    if data is not None:
        _reads_back(data)


def test_save_refuses_to_write_a_page_that_would_not_read_back(tmp_path):
    report = inspect(lambda x: x + 1, 1.0, costs=True, cache=None)
    assert report.costs is not None
    broken = _fresh(report, costs={**report.costs, "devices": 0})
    path = tmp_path / "r.html"
    if _island(report.html(standalone=True)) is None:
        pytest.skip("the view was not built: a page carries no data to check")
    with pytest.raises(BundleError, match=r"save\(\) did not write .*costs\.devices"):
        broken.save(path)
    assert not path.exists()


# -- registered kinds ------------------------------------------------------------------


class ManyRows(TableKind):
    spec = StageSpec(
        "test_many_rows",
        "Many rows",
        "rows",
        "row_table",
        step="trace",
        unit="rows",
        default=False,
    )

    def rows(self, ctx: MakeContext):
        return ["k", "what"], [[k, f"row {k} " + "x" * 40] for k in range(150_000)]


class LongText(TextKind):
    spec = StageSpec(
        "test_long_text",
        "Long text",
        "text",
        "long_text",
        step="trace",
        unit="lines",
        default=False,
    )

    def make_text(self, ctx: MakeContext):
        return "\n".join(f"line {k}: " + "y" * 60 for k in range(100_000))


@pytest.fixture
def huge_kinds():
    handlers = [register_kind(ManyRows()), register_kind(LongText())]
    yield handlers
    for h in handlers:
        unregister_kind(h.name)


def test_the_data_of_registered_kinds_is_capped_by_their_handlers(huge_kinds):
    report = inspect(
        lambda x: x * 2, 1.0, stages=("source", "test_many_rows", "test_long_text"), cache=None
    )
    assert sum(json_size(d) for d in report.stage_data.values()) > MAX_OUTPUT_BYTES
    forms = capped_forms(report)
    assert output_size(forms) <= MAX_OUTPUT_BYTES
    cut = _reads_back(forms[MEDIA_TYPE])
    table, text = cut.stage_data["test_many_rows"], cut.stage_data["test_long_text"]
    assert 0 < len(table["rows"]) < 150_000
    assert table["rows"] == report.stage_data["test_many_rows"]["rows"][: len(table["rows"])]
    assert report.stage_data["test_long_text"]["text"].startswith(text["text"]) and text["text"]
    note = forms[MEDIA_TYPE]["notes"][-1]
    assert "report.stage_data['test_many_rows'] holds every row" in note
    assert "report.stage_data['test_long_text'] holds every line" in note
    # The report keeps everything.
    assert len(report.stage_data["test_many_rows"]["rows"]) == 150_000


# -- the text form ------------------------------------------------------------------


def test_no_line_of_the_text_form_is_longer_than_200_characters(big):
    long_note = "this note is long: " + " ".join(f"word{k}" for k in range(3_000))
    journey = {
        "file": 0,
        "line": 5,
        "start": [
            {"label": f"fusion.{k}", "opcode": "fusion", "fusion": None, "fusion_kind": None}
            for k in range(5_000)
        ],
        "end": [],
        "events": [],
    }
    passes = {**big.passes, "journeys": [journey, *big.passes["journeys"]]}
    report = _fresh(big, notes=(long_note,), passes=passes)
    text = report.text()
    widths = [len(line) for line in text.split("\n")]
    assert max(widths) <= MAX_WIDTH == 200
    assert "more characters)" in text  # the journey's line, cut short, says so
    assert " ".join(text.split()).count("word2999") == 1  # the note, wrapped, whole
    assert max(len(line) for line in capped_forms(big)["text/plain"].split("\n")) <= 200
