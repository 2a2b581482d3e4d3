"""Report bundles from elsewhere (saved notebooks, files) are checked on the way in:
a bundle that does not follow the schema is refused with one message naming the
field, quickly, whatever its size."""

import copy
import json
import time

import pytest

import olympus.numpy as jnp
from olympus_jupyter import StageReport, inspect
from olympus_jupyter.report.validate import SCHEMA_PATH, BundleError, check_bundle


@pytest.fixture(scope="module")
def bundle():
    def f(x):
        y = jnp.sin(x)
        return y * 2

    return inspect(f, jnp.ones(3), cache=None).to_json()


def spoil(data, path, value):
    data = copy.deepcopy(data)
    target = data
    for key in path[:-1]:
        target = target[key]
    if value is DELETE:
        del target[path[-1]]
    else:
        target[path[-1]] = value
    return data


DELETE = object()

HOSTILE = [
    (("name",), 42, "name: 42 is not of type 'string'"),
    (("name",), DELETE, "'name' is a required property"),
    (("platforms",), "cpu", "platforms: 'cpu' is not of type 'array'"),
    (("stages",), ["olympuspr", 'x" onmouseover="alert(1)'], "stages.1: "),
    (("stage_table", 0, "kind"), "<script>", "stage_table.0.kind: does not match"),
    (("timings", "trace"), -1, "timings.trace: -1 is less than the minimum of 0"),
    (("failure",), {"stage": "trace", "type": "E", "message": 5}, "failure"),
    (("unavailable",), {"compiled": ["nested"]}, "unavailable.compiled"),
    (("analyses", "cost", "compiled"), {"flops": "many"}, "analyses.cost.compiled"),
    (("provenance", "version"), 99, "provenance"),
    (("provenance", "frames", 0), [0, -1, 0, 0, 0, "f"], "provenance.frames.0"),
    (("provenance", "locations", 0), [10**12], "provenance.locations.0.0"),
    (
        ("provenance", "stages", "olympuspr", "ops", "count"),
        -3,
        "provenance.stages.olympuspr.ops.count",
    ),
    (
        ("provenance", "stages", "olympuspr", "ops", "count"),
        10**15,
        "provenance.stages.olympuspr.ops.count",
    ),
    (
        ("provenance", "stages", "compiled", "ops", "lines"),
        "1,<script>",
        "provenance.stages.compiled.ops.lines: ",
    ),
    (("provenance", "lines", 0, "ops", "olympuspr"), "0-x", "provenance.lines.0.ops.olympuspr"),
    (("callers",), [[0, 3, 1]], "callers.0: "),
    (("callers",), [[0, "3"]], "callers.0.1: '3' is not of type 'integer'"),
]


@pytest.mark.parametrize(
    "path, value, message", HOSTILE, ids=[".".join(map(str, p)) for p, _, _ in HOSTILE]
)
def test_a_bundle_off_the_schema_is_refused_naming_the_field(bundle, path, value, message):
    data = spoil(bundle, path, value)
    with pytest.raises(BundleError) as info:
        StageReport.from_json(data)
    assert str(info.value).startswith("Not a readable Olympus report: ")
    assert message in str(info.value)
    assert len(str(info.value)) < 600


def test_deep_nesting_and_huge_strings_are_refused_quickly(bundle):
    deep = {}
    node = deep
    for _ in range(5000):
        node["x"] = {}
        node = node["x"]
    data = dict(bundle, analyses={"cost": {"lowered": None, "compiled": None}, "memory": deep})
    start = time.perf_counter()
    with pytest.raises(BundleError, match=r"analyses\.memory\.x\.x.*nested deeper than 32"):
        check_bundle(data)
    huge = "a" * (100 * 2**20)  # 100 MB
    with pytest.raises(BundleError, match="texts.hlo: is longer than 67108864 characters"):
        check_bundle(spoil(bundle, ("texts", "hlo"), huge))
    assert time.perf_counter() - start < 5


def test_not_even_a_report(bundle):
    for data in ([], "x", None, {"schema": "olympus.stages", "version": 4}):
        with pytest.raises(ValueError, match="Not an Olympus report|not supported"):
            StageReport.from_json(data)


def test_every_bundle_olympus_writes_follows_the_schema(bundle):
    check_bundle(bundle)
    check_bundle(json.loads(json.dumps(bundle)))
    assert json.loads(SCHEMA_PATH.read_text())["$id"] == "olympus.stages"


def test_out_of_range_indices_the_schema_cannot_see_are_refused(bundle):
    data = spoil(bundle, ("provenance", "lines", 0, "ops", "olympuspr"), "0-99999999")
    with pytest.raises(ValueError, match="op index 99999999 is out of range"):
        StageReport.from_json(data)


def test_a_valid_bundle_without_a_peak_memory_figure_still_reads_and_shows():
    from olympus_jupyter import inspect

    data = json.loads(json.dumps(inspect(lambda x: x + 1, 1.0, cache=None).to_json()))
    del data["analyses"]["memory"]["peak_memory_in_bytes"]
    report = StageReport.from_json(data)
    assert "peak memory" not in report.text()
    assert report._repr_mimebundle_()["text/plain"]
