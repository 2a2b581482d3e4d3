"""A stage kind registered through the public handler API alone (here, in this file) is
shown by the JupyterLab view and by a saved page, with no change to the extension: its
handler names a generic view (a table, a text) and its data follows that view's schema.
The other forms of such a kind: tests/test_stage_kinds.py."""

from __future__ import annotations

import numpy as np
import pytest

import olympus.numpy as jnp
import olympus_jupyter
from olympus.stage_registry import StageSpec
from olympus_jupyter import inspect
from olympus_jupyter.report.kinds import (
    MakeContext,
    TableKind,
    TextKind,
    register_kind,
    unregister_kind,
)

from labserver import open_notebook, open_offline, saved_outputs_notebook, set_layout


class OpcodeCounts(TableKind):
    """How many instructions of each opcode the compiled program has."""

    spec = StageSpec(
        "opcode_counts",
        "Opcodes of the compiled program",
        "opcodes",
        "opcode_table",
        step="compile",
        unit="opcodes",
        default=False,
    )

    def rows(self, ctx: MakeContext):
        counts: dict[str, int] = {}
        for line in ctx.run.compiled.as_text().splitlines():
            if " = " in line and "(" in line:
                opcode = line.split(" = ", 1)[1].split("(", 1)[0].split()[-1]
                counts[opcode] = counts.get(opcode, 0) + 1
        return ["opcode", "count"], sorted(
            ([k, v] for k, v in counts.items()), key=lambda r: (-r[1], r[0])
        )


class Printed(TextKind):
    """The traced program, as its ``print`` shows it."""

    spec = StageSpec(
        "printed",
        "The olympuspr, printed",
        "printed",
        "printed_text",
        step="trace",
        language="olympuspr",
        unit="lines",
        default=False,
    )

    def make_text(self, ctx: MakeContext):
        return str(ctx.run.traced.olympuspr)


def f(x):
    return jnp.sin(x) * 2 + 1


STAGES = ("source", "compiled", "opcode_counts", "printed")
DIFF_MIME = "application/vnd.olympus.diff+json"


@pytest.fixture(scope="module")
def reports():
    """Two reports with the two kinds: of ``f`` on 4 numbers, and on 8."""
    handlers = [register_kind(OpcodeCounts()), register_kind(Printed())]
    try:
        yield tuple(inspect(f, np.ones(n, np.float32), cache=None, stages=STAGES) for n in (4, 8))
    finally:
        for h in handlers:
            unregister_kind(h.name)


@pytest.fixture(scope="module")
def report(reports):
    return reports[0]


def check_view(root, report):
    """The view of a report with the two kinds: their tabs, the table, the text."""
    assert root.locator("[data-olympus-error]").count() == 0
    assert root.locator("[data-olympus-unsupported]").count() == 0
    set_layout(root, "tabs")
    tabs = root.locator('[role="tab"]').all_inner_texts()
    assert tabs == ["source", "compiled", "opcodes", "printed"]
    root.locator('[role="tab"][data-stage="opcode_counts"]').click()
    panel = root.locator('[role="tabpanel"][data-stage-panel="opcode_counts"]')
    assert panel.get_attribute("data-stage-kind") == "opcode_table"
    table = panel.locator('table[data-olympus-kind="opcode_counts"]')
    assert table.locator("th").all_inner_texts() == ["opcode", "count"]
    rows = [r.locator("td").all_inner_texts() for r in table.locator("tbody tr").all()]
    data = report.stage_data["opcode_counts"]
    assert rows == [[str(c) for c in row] for row in data["rows"]] and ["sine", "1"] in rows
    rows_meta = f"{len(data['rows'])} opcodes"
    assert panel.locator(".olympus-panel-meta").inner_text() == rows_meta
    root.locator('[role="tab"][data-stage="printed"]').click()
    text = root.locator('[role="tabpanel"][data-stage-panel="printed"] .cm-content')
    text.wait_for()
    assert "sin a" in text.inner_text()


def test_a_registered_kind_in_jupyterlab(page, lab, notebooks_dir, report):
    name = saved_outputs_notebook(notebooks_dir / "registered_kind.ipynb", [report.to_json()]).name
    open_notebook(page, lab, name)
    check_view(page.locator("[data-olympus-viewer]").first, report)


def test_a_registered_kind_in_a_saved_page(page, tmp_path, report):
    path = report.save(tmp_path / "registered_kind.html")
    root, _, _ = open_offline(page, path, "[data-olympus-live][data-olympus-rendered]")
    check_view(root, report)


def test_a_registered_kind_in_a_diff(page, lab, notebooks_dir, reports):
    diff = olympus_jupyter.compare(*reports).to_json()
    name = saved_outputs_notebook(
        notebooks_dir / "registered_kind_diff.ipynb", [diff], DIFF_MIME
    ).name
    page.goto(lab.page_url(f"lab/tree/{name}?reset"))
    root = page.locator("div.olympus-diff[data-olympus-rendered]").first
    root.wait_for(timeout=60_000)
    assert root.locator('[role="tab"]').all_inner_texts() == [
        "source",
        "compiled",
        "opcodes",
        "printed",
    ]
    assert root.locator("[data-olympus-unsupported]").count() == 0
    # The text of each: the shapes differ. The table, a line a row: the same opcodes.
    root.locator('[role="tab"][data-stage="printed"]').click()
    merge = root.locator('[data-stage-panel="printed"] .cm-mergeView')
    merge.wait_for()
    assert "f32[4]" in merge.inner_text() and "f32[8]" in merge.inner_text()
    root.locator('[role="tab"][data-stage="opcode_counts"]').click()
    merge = root.locator('[data-stage-panel="opcode_counts"] .cm-mergeView')
    merge.wait_for()
    rows = len(reports[0].stage_data["opcode_counts"]["rows"])
    assert reports[0].stage_data["opcode_counts"] == reports[1].stage_data["opcode_counts"]
    assert merge.inner_text().split("\n") == [f"{rows + 1} unchanged lines"] * 2
