"""From an op, not only a line (issue 33), in a real browser: picking an equation of
olympuspr or an op of StableHLO in the standalone page ``report.save()`` writes shows
that op's journey through XLA's passes and what its compiled instructions cost."""

from __future__ import annotations

import numpy as np
import pytest
from playwright.sync_api import expect

import olympus.numpy as jnp
import olympus_jupyter
from olympus_jupyter.report.cost_names import format_flops

from built_view import needs_view

from labserver import open_offline, set_layout

LIVE = "[data-olympus-live][data-olympus-rendered]"
M, K, N = 8, 16, 32


def f(x, w):
    y = jnp.tanh(x @ w)
    return y.sum()


@pytest.fixture(scope="module")
def saved(tmp_path_factory):
    report = olympus_jupyter.inspect(
        f,
        np.ones((M, K), np.float32),
        np.ones((K, N), np.float32),
        passes=True,
        costs=True,
        cache=None,
    )
    path = report.save(tmp_path_factory.mktemp("op-journeys") / "ops.html")
    return path, report


def _op_line(stage_text: str, needle: str) -> str:
    return next(line for line in stage_text.split("\n") if needle in line).strip()


@needs_view
def test_picking_an_op_shows_its_journey_and_cost(page, saved):
    path, report = saved
    dot = next(op for op in report.provenance.stages["olympuspr"].ops if op.name == "dot_general")
    journey = report.journey_of_op(dot.id)
    share = report.cost_share_of_op(dot.id)
    assert share["flops"] == 2 * M * K * N
    root, requests, url = open_offline(page, path, LIVE)
    set_layout(root, "tabs")
    # Pick the matmul's equation in olympuspr.
    root.locator('[role="tab"][data-stage="olympuspr"]').click()
    text = _op_line(report.stage_text("olympuspr"), "dot_general")
    root.locator('[data-stage-panel="olympuspr"] .cm-line', has_text=text[:40]).first.click()
    # The passes panel shows that op's journey, not the line's.
    root.locator('[role="tab"][data-stage="passes"]').click()
    node = root.locator('[data-stage-panel="passes"] [data-olympus-journey]')
    node.locator(".olympus-journey-title").wait_for()
    assert node.get_attribute("data-op") == dot.id
    assert "dot_general" in node.locator(".olympus-journey-title").inner_text()
    end = node.locator('[data-olympus-carriers="end"] code').all_inner_texts()
    assert len(end) == len(journey["end"])
    assert all(c["label"] in t for c, t in zip(journey["end"], end))
    # The costs panel says what it costs.
    root.locator('[role="tab"][data-stage="costs"]').click()
    cost = root.locator('[data-stage-panel="costs"] [data-olympus-cost-op]')
    cost.wait_for()
    assert cost.get_attribute("data-op") == dot.id
    assert format_flops(share["flops"]) in cost.inner_text()
    # A StableHLO op: its own journey too.
    root.locator('[role="tab"][data-stage="stablehlo"]').click()
    text = _op_line(report.stage_text("stablehlo"), "stablehlo.dot_general")
    root.locator('[data-stage-panel="stablehlo"] .cm-line', has_text=text[:40]).first.click()
    root.locator('[role="tab"][data-stage="passes"]').click()
    lowered = next(
        op for op in report.provenance.stages["stablehlo"].ops if op.name == "stablehlo.dot_general"
    )
    expect(node).to_have_attribute("data-op", lowered.id)
    assert report.journey_of_op(lowered.id)["end"] == journey["end"]
    assert requests == [url]
