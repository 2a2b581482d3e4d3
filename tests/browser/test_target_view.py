"""A report compiled for a TPU slice, in a real browser: the saved page's live header
names the target and answers "will it fit", as every other form does (the targets
environment: libtpu; run.sh runs it there)."""

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import PartitionSpec as P

import olympus_jupyter
from olympus_jupyter.report.device_memory import target_lines
from olympus_jupyter.report.time_view import time_words

from built_view import needs_view
from labserver import open_offline

pytestmark = [pytest.mark.targets, needs_view]

LIVE = "[data-olympus-live][data-olympus-rendered]"


def layer(x, w):
    return jnp.tanh(x @ w)


def attention(p, x):
    q, k, v = x @ p["q"], x @ p["k"], x @ p["v"]
    weights = jax.nn.softmax(q @ k.swapaxes(-1, -2) / q.shape[-1] ** 0.5, axis=-1)
    return x + (weights @ v) @ p["o"]


def mlp(p, x):
    return x + jnp.tanh(x @ p["up"]) @ p["down"]


def loss(params, x):
    for block in params:
        x = mlp(block, attention(block, x))
    return (x**2).mean()


def train_step(params, x):
    grads = jax.grad(loss)(params, x)
    return jax.tree.map(lambda w, g: w - 0.01 * g, params, grads)


def transformer(layers: int, d: int):
    block = {name: (d, d) for name in ("q", "k", "v", "o")} | {"up": (d, 4 * d), "down": (4 * d, d)}
    shapes = [{n: jax.ShapeDtypeStruct(s, jnp.float32) for n, s in block.items()}] * layers
    specs = [{n: P("data", None) for n in block}] * layers  # FSDP: each weight's rows
    return shapes, specs


@pytest.mark.parametrize(
    ("d", "fsdp", "verdict"),
    # FSDP fits; every weight on every chip (20 GiB of them and their updates) does not.
    [(512, True, "fits"), (10240, False, "does not fit")],
)
def test_a_saved_page_of_a_tpu_transformer_says_whether_it_fits_with_its_lines(
    page, tmp_path, d, fsdp, verdict
):
    params, specs = transformer(2, d)
    report = olympus_jupyter.inspect(
        train_step,
        params,
        jax.ShapeDtypeStruct((8, 128, d), jnp.float32),
        target="v5e:2x2",
        mesh="data=4",
        shardings=(specs if fsdp else None, P("data")),
        cache=False,
    )
    path = tmp_path / "tpu.html"
    report.save(path)
    root, requests, url = open_offline(page, path, LIVE)
    shown = root.locator('.olympus-target[data-olympus-target="v5e:2x2"]')
    expected = target_lines(report.target)
    assert shown.all_inner_texts() == expected
    assert expected[0] == "TPU v5e (TPU v5 lite), 4 chips, compiled here without one; mesh data=4"
    assert expected[1].startswith(f"device memory: {verdict}: ")
    # What fills the peak, with the lines of this file that made it.
    assert expected[2].startswith("biggest at the peak: ")
    assert "(test_target_view.py)" in expected[2]
    assert root.locator(".olympus-meta").inner_text() == "for tpu"
    assert requests == [url]


def test_a_saved_page_of_a_tpu_report_shows_the_compilers_time_by_line(page, tmp_path):
    report = olympus_jupyter.inspect(
        layer,
        jax.ShapeDtypeStruct((256, 512), jnp.float32),
        jax.ShapeDtypeStruct((512, 1024), jnp.float32),
        target="v5e:2x2",
        mesh="data=2,model=2",
        shardings=(P("data", None), P("data", "model")),
        costs=True,
        cache=False,
    )
    time = report.costs["time"]
    path = tmp_path / "tpu-time.html"
    report.save(path)
    root, requests, url = open_offline(page, path, LIVE)
    tab = root.locator('[role="tab"][data-stage="costs"]')
    tab.click()
    panel = root.locator('[role="tabpanel"][data-stage-panel="costs"]')
    panel.locator("[data-olympus-costs]").wait_for()
    # The column is named as every form names it: the compiler's estimate, before any run.
    table = panel.locator('table[data-olympus-table="cost-lines"]')
    heading = table.locator("thead th").last
    assert heading.inner_text() == "time (compiler's estimate)"
    assert heading.get_attribute("title").startswith(
        "The compiler's estimate of cycles, before any run"
    )
    said = panel.locator("[data-olympus-costs-time]").inner_text()
    assert said.startswith("Time (compiler's estimate): the compiler's estimate of cycles")
    # The matmul's line: its share of the cycles, as report.cost_by_line() gives it.
    (row,) = [r for r in report.cost_by_line() if r["what"] == "line"]
    cell = table.locator("tbody tr[data-what='line'] td").last
    assert cell.locator(".olympus-cost-share").inner_text() in ("100%", ">99%")
    # Written as the text and static HTML write it: "7.1 k cycles, 4.76 µs".
    assert cell.locator(".olympus-cost-value").inner_text() == time_words(time, row)
    assert time["cycles"] == row["cycles"]
    assert requests == [url]
