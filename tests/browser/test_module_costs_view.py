"""The costs panel of a real model in a real browser: a flax linen train step (blocks
of Dense layers, optax adam) saved as a standalone page, and in a notebook's output
opened in JupyterLab. The cost by module and layer
is a tree shown to its top two levels (``Model``, ``Block_0``), a block opens, with its
button or the keyboard, to show its layers (``Dense_0``); a line of the model that
calls flax has, behind a disclosure button closed at first, the flax lines beneath it
with their part of its cost. Markup in a module's path and in a library file's name is
shown as text."""

from __future__ import annotations

import copy
import dataclasses
from typing import cast

import flax.linen as nn
import jax
import numpy as np
import optax  # type: ignore[import-untyped]
import pytest

import olympus_jupyter
from olympus_jupyter.report.cost_names import format_bytes, format_flops, format_share

from built_view import needs_view

from labserver import open_notebook, open_offline, saved_outputs_notebook, set_layout

pytestmark = needs_view

LIVE = "[data-olympus-live][data-olympus-rendered]"
#: Markup without a slash: a module path's part and a file's name can hold it.
IMG = '<img src=x onerror="window.__pwned=1">'


class Block(nn.Module):
    width: int

    @nn.compact
    def __call__(self, x):
        h = nn.relu(nn.Dense(2 * self.width)(x))
        return x + nn.Dense(self.width)(h)


class Model(nn.Module):
    @nn.compact
    def __call__(self, x):
        for _ in range(2):
            x = Block(16)(x)
        return nn.Dense(4)(x)


MODEL = Model()
OPTIMIZER = optax.adam(1e-3)


def loss_fn(params, x):
    out = cast(jax.Array, MODEL.apply(params, x))
    return (out**2).mean()


def train_step(params, opt_state, x):
    loss, grads = jax.value_and_grad(loss_fn)(params, x)
    updates, opt_state = OPTIMIZER.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state, loss


@pytest.fixture(scope="module")
def report():
    x = np.ones((8, 16), np.float32)
    params = MODEL.init(jax.random.key(0), x)
    return olympus_jupyter.inspect(
        train_step, params, OPTIMIZER.init(params), x, costs=True, cache=None
    )


@pytest.fixture(scope="module")
def model_page(report, tmp_path_factory):
    return report.save(tmp_path_factory.mktemp("model-page") / "model.html")


def costs_panel(root):
    set_layout(root, "tabs")
    tab = root.locator('[role="tab"][data-stage="costs"]')
    tab.click()
    panel = root.locator('[role="tabpanel"][data-stage-panel="costs"]')
    panel.locator("[data-olympus-costs]").wait_for()
    return panel


def module_row(panel, path):
    quoted = '"' + path.replace("\\", "\\\\").replace('"', '\\"') + '"'
    return panel.locator(
        f'table[data-olympus-table="cost-modules"] tr[data-olympus-module={quoted}]'
    )


def test_the_module_tree_opens_a_block_to_its_layers(page, report, model_page):
    by_module = {r["path"]: r for r in report.cost_by_module()}
    assert {"Model", "Model/Block_0", "Model/Block_0/Dense_0"} <= set(by_module)
    root, requests, url = open_offline(page, model_page, LIVE)
    panel = costs_panel(root)
    table = panel.locator('table[data-olympus-table="cost-modules"]')
    # The tree as report.cost_by_module() makes it: the same nodes in the same order,
    # the same bytes live at the peak and collectives (from the compiled ops' labels).
    rows = table.locator("tbody tr")
    assert rows.evaluate_all("rs => rs.map(r => r.getAttribute('data-olympus-module'))") == list(
        by_module
    )
    for k, node in enumerate(by_module.values()):
        cells = rows.nth(k).locator("td")
        assert cells.nth(3).locator(".olympus-cost-value").inner_text() == format_bytes(
            node["peak"]
        )
        assert cells.nth(4).get_attribute("data-olympus-collectives") == str(node["collectives"])
    assert any(node["peak"] for node in by_module.values())
    # The top two levels are shown: the model and its blocks, not their layers.
    model, block = module_row(panel, "Model"), module_row(panel, "Model/Block_0")
    dense = module_row(panel, "Model/Block_0/Dense_0")
    assert model.is_visible() and block.is_visible()
    assert block.get_attribute("data-depth") == "1"
    assert dense.count() == 1 and dense.is_hidden()
    # A block's figures: its subtree's, as report.cost_by_module() adds them up.
    cell = block.locator("td").first
    assert cell.locator(".olympus-cost-value").inner_text() == format_flops(
        by_module["Model/Block_0"]["flops"]
    )
    assert cell.locator(".olympus-cost-share").inner_text() == format_share(
        by_module["Model/Block_0"]["flops_share"]
    )
    assert cell.locator(".olympus-cost-bar").count() == 1
    # Opening the block shows its layers; the other block's stay closed.
    toggle = block.locator('button[data-olympus-module-toggle="Model/Block_0"]')
    assert toggle.get_attribute("aria-expanded") == "false"
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    assert dense.is_visible()
    assert dense.locator("th").inner_text().strip().endswith("Dense_0")
    assert module_row(panel, "Model/Block_1/Dense_0").is_hidden()
    # With the keyboard: closed again.
    toggle.focus()
    page.keyboard.press("Enter")
    assert toggle.get_attribute("aria-expanded") == "false"
    assert dense.is_hidden()
    # Closing the model hides every node beneath it.
    model.locator("button[data-olympus-module-toggle]").click()
    assert block.is_hidden()
    assert table.locator("tbody tr:visible").count() == len(report.cost_by_module(depth=0))
    assert requests == [url]


def test_a_model_line_opens_to_the_flax_lines_beneath_it(page, report, model_page):
    costs = report.costs
    files = report.provenance.files
    # A line of the model's (this file) whose cost flax's Dense made.
    i, row = next(
        (i, r)
        for i, r in enumerate(costs["lines"])
        if r.get("via")
        and any(
            v["file"] is not None and files[v["file"]].path.endswith("linear.py") for v in r["via"]
        )
    )
    assert not files[row["file"]].library and files[row["via"][0]["file"]].library
    root, _, _ = open_offline(page, model_page, LIVE)
    panel = costs_panel(root)
    line = panel.locator(f'tr[data-olympus-cost-row="{i}"]')
    toggle = line.locator(f'button[data-olympus-via-toggle="{i}"]')
    assert toggle.get_attribute("aria-expanded") == "false"
    via = panel.locator(f'tr[data-olympus-via-of="{i}"]')
    assert via.count() == 0  # closed at first: not made
    toggle.click()
    assert toggle.get_attribute("aria-expanded") == "true"
    assert via.count() == len(row["via"])
    first = row["via"][0]
    label = f"linear.py:{first['line']} ({first['function']})"
    texts = via.locator("th").all_inner_texts()
    assert any(label in t for t in texts), texts
    # Its figures, with their share of the program's.
    totals = costs.get("counted_totals") or costs["totals"]
    flops = via.filter(has_text=label).first.locator("td").first
    assert flops.locator(".olympus-cost-value").inner_text() == format_flops(first["flops"])
    assert flops.locator(".olympus-cost-share").inner_text() == format_share(
        first["flops"] / totals["flops"]
    )
    # Opening the detail chooses no line; closing it hides the rows.
    assert line.get_attribute("aria-current") is None
    toggle.press("Enter")
    assert toggle.get_attribute("aria-expanded") == "false"
    assert all(r.is_hidden() for r in via.all())


def test_markup_in_module_paths_and_file_names_is_text(page, report, tmp_path):
    costs = copy.deepcopy(dict(report.costs))
    costs["modules"].append(
        {"path": f"Model/{IMG}", "flops": 1.0, "transcendentals": 0.0, "bytes": 1.0}
    )
    row = next(r for r in costs["lines"] if r.get("via"))
    row["via"].insert(
        0,
        {
            "file": None,
            "path": IMG,
            "line": 3,
            "function": IMG,
            "flops": 1.0,
            "transcendentals": 0.0,
            "bytes": 1.0,
        },
    )
    i = costs["lines"].index(row)
    # A fresh memo: the report's holds the page's data made before.
    hostile = dataclasses.replace(report, costs=costs, _memo={})
    path = hostile.save(tmp_path / "hostile.html")
    root, _, _ = open_offline(page, path, LIVE)
    panel = costs_panel(root)
    node = module_row(panel, f"Model/{IMG}")
    assert node.is_visible()
    assert node.locator(".olympus-cost-module-name").inner_text() == IMG
    panel.locator(f'button[data-olympus-via-toggle="{i}"]').click()
    first = panel.locator(f'tr[data-olympus-via-of="{i}"]').first
    assert first.locator("th").inner_text().startswith(f"↳ {IMG}:3 ({IMG})")
    assert page.evaluate("() => window.__pwned === undefined")
    assert (
        page.evaluate(
            "() => document.querySelectorAll('[data-olympus-viewer] img, "
            "[data-olympus-viewer] script').length"
        )
        == 0
    )


def test_a_module_in_a_loop_says_how_it_is_counted(page, report, tmp_path):
    """A module whose instructions run in a loop (a scanned layer's: the Python
    side is tested on a real ``nnx.scan`` in test_real_model_answers.py) says so
    beside its name, and its parents say how theirs are counted, as
    ``report.cost_by_module()`` does."""
    costs = copy.deepcopy(dict(report.costs))
    for m in costs["modules"]:
        if m["path"] == "Model/Block_0/Dense_0":
            m["iterations"] = "× 8 iterations"
    looped = dataclasses.replace(report, costs=costs, _memo={})
    by_module = {r["path"]: r["iterations"] for r in looped.cost_by_module()}
    assert by_module["Model/Block_0/Dense_0"] == "× 8 iterations"
    assert by_module["Model/Block_0"] == "once + × 8 iterations"
    assert by_module["Model/Block_1"] == ""
    root, _, _ = open_offline(page, looped.save(tmp_path / "looped.html"), LIVE)
    panel = costs_panel(root)
    shown = panel.locator('table[data-olympus-table="cost-modules"] tbody tr').evaluate_all(
        "rs => rs.map(r => [r.getAttribute('data-olympus-module'),"
        " (r.querySelector('[data-olympus-module-iterations]') || {textContent: ''})"
        ".textContent.trim()])"
    )
    assert dict(shown) == by_module


def test_the_tree_and_the_library_lines_in_jupyterlab(page, lab, notebooks_dir, report):
    name = saved_outputs_notebook(
        notebooks_dir / "model_costs.ipynb",
        [report.to_json()],
        source="%olympus_lower --costs train_step(params, opt_state, x)",
    ).name
    open_notebook(page, lab, name)
    panel = costs_panel(page.locator("[data-olympus-viewer]").first)
    block, dense = module_row(panel, "Model/Block_0"), module_row(panel, "Model/Block_0/Dense_0")
    assert block.is_visible() and dense.is_hidden()
    block.locator("button[data-olympus-module-toggle]").click()
    assert dense.is_visible()
    toggle = panel.locator("button[data-olympus-via-toggle]").first
    toggle.click()
    i = toggle.get_attribute("data-olympus-via-toggle")
    assert "linear.py:" in " ".join(
        panel.locator(f'tr[data-olympus-via-of="{i}"] th').all_inner_texts()
    )
