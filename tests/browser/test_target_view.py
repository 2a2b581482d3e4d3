"""A report compiled for a TPU slice, in a real browser: the saved page's live header
names the target and answers "will it fit", as every other form does (the targets
environment: libtpu; run.sh runs it there)."""

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import PartitionSpec as P

import olympus_jupyter
from olympus_jupyter.report.device_memory import target_lines

from built_view import needs_view
from labserver import open_offline

pytestmark = [pytest.mark.targets, needs_view]

LIVE = "[data-olympus-live][data-olympus-rendered]"


def layer(x, w):
    return jnp.tanh(x @ w)


def test_a_saved_page_of_a_tpu_report_names_the_target_and_whether_it_fits(page, tmp_path):
    report = olympus_jupyter.inspect(
        layer,
        jax.ShapeDtypeStruct((256, 512), jnp.float32),
        jax.ShapeDtypeStruct((512, 1024), jnp.float32),
        target="v5e:2x2",
        mesh="data=2,model=2",
        shardings=(P("data", None), P("data", "model")),
        cache=False,
    )
    path = tmp_path / "tpu.html"
    report.save(path)
    root, requests, url = open_offline(page, path, LIVE)
    shown = root.locator('.olympus-target[data-olympus-target="v5e:2x2"]')
    expected = target_lines(report.target)
    assert shown.all_inner_texts() == expected
    assert expected[0].startswith("TPU v5e (TPU v5 lite), 4 chips, compiled here without one")
    assert expected[1].startswith("device memory: fits: ")
    assert root.locator(".olympus-meta").inner_text() == "for tpu"
    assert requests == [url]
