"""One registry of stages, read by every consumer; a stage added through it alone
(``partitioned``: the HLO after SPMD partitioning) shows in every form."""

import json
import re
import os
import textwrap

import pytest

import olympus
import olympus.numpy as jnp
from olympus import stage_registry
from olympus.provenance import STAGES as PROVENANCE_STAGES
from olympus_jupyter import StageReport, inspect
from olympus_jupyter.frontends import cli
from olympus_jupyter.frontends.options import split_line
from olympus_jupyter.highlight.render import LEXERS
from olympus_jupyter.report.validate import SCHEMA_PATH
from eight_devices import run_on_8_devices


def test_the_table_is_consistent():
    names = stage_registry.names()
    assert len(set(names)) == len(names)
    for spec in stage_registry.STAGES:
        assert spec.kind in stage_registry.KINDS
        assert spec.step in (None,) + stage_registry.STEPS
        if spec.kind == "program":
            assert spec.language in LEXERS and (spec.linked or spec.text is not None)
    assert PROVENANCE_STAGES == tuple(s.name for s in stage_registry.provenance_stages())
    # The bundle's schema takes every kind and every view (kinds registered later too:
    # a name of lower-case letters), and nothing else.
    schema = json.loads(SCHEMA_PATH.read_text())
    for field in ("kind", "view"):
        pattern = schema["definitions"]["stage_info"]["properties"][field]["pattern"]
        assert pattern == "^[a-z_]{1,32}$"
    assert all(re.fullmatch(pattern, k) for k in stage_registry.KINDS)
    with pytest.raises(KeyError, match="choose from source, olympuspr"):
        stage_registry.stage("optimised")


def test_every_linked_stage_and_no_other_has_a_provenance_reader():
    from olympus.provenance import readers

    linked = [s.name for s in stage_registry.provenance_stages()]
    assert list(readers.READERS) == linked
    for name in linked:
        assert readers.reader(name) is readers.READERS[name]
    with pytest.raises(LookupError, match="'hlo' is not linked to source"):
        readers.reader("hlo")
    with pytest.raises(stage_registry.UnknownStage, match="choose from"):
        readers.reader("optimised")


def test_consumers_take_their_stage_lists_from_the_registry():
    options, _ = split_line("f(x)")
    assert options.stages == stage_registry.default_names()
    options, _ = split_line("--stages all f(x)")
    assert options.stages == stage_registry.names()
    report = inspect(lambda x: x + 1, 1.0, cache=None)
    assert report.stages == stage_registry.default_names()
    table = report.to_json()["stage_table"]
    assert [row["name"] for row in table] == list(report.stages)
    assert [row["title"] for row in table] == [stage_registry.stage(s).title for s in report.stages]


def test_the_cli_takes_stages(tmp_path, capsys):
    out = tmp_path / "r.html"
    assert cli.main(["demo", "--stages", "source,olympuspr", "-o", str(out)]) == 0
    # The page before the view's data: the data holds the source of this file (a
    # caller of the demo on some JAX releases), which names the titles too.
    static = out.read_text().split('<script type="application/json"')[0]
    assert "olympuspr: traced program" in static and "StableHLO: lowered program" not in static
    with pytest.raises(SystemExit) as exit_:
        cli.main(["demo", "--stages", "olympuspr,nope", "-o", str(out)])
    assert exit_.value.code == 2
    assert "unknown stage 'nope'; choose from source,olympuspr" in capsys.readouterr().err


def test_a_one_device_program_has_no_partitioned_stage_and_says_why():
    report = inspect(lambda x: x * 2, jnp.ones(4), stages="all", cache=None)
    assert report.ok
    assert "one device" in report.unavailable["partitioned"]
    assert "HLO after SPMD partitioning" in report.html()
    assert "one device" in report.html()


def test_a_stage_that_fails_is_a_failure_not_an_absence(monkeypatch):
    def broken(self, dialect=None, **kwargs):
        if dialect == "hlo":
            raise RuntimeError("the HLO printer broke")
        return original(self, dialect, **kwargs)

    original = olympus.stages.Lowered.as_text
    monkeypatch.setattr(olympus.stages.Lowered, "as_text", broken)
    report = inspect(lambda x: x * 2, jnp.ones(4), cache=None)
    assert not report.ok
    assert report.failure.stage == "hlo" and "the HLO printer broke" in report.failure.message
    assert report.unavailable["hlo"] == "failed: RuntimeError: the HLO printer broke"
    assert "the HLO printer broke" in report.html()
    assert report.stage_text("compiled")  # the other stages are still there


SHARDED = textwrap.dedent("""
    import json, sys
    sys.path.insert(0, {tests!r})
    import jax
    import olympus, olympus.numpy as jnp
    from olympus.sharding import NamedSharding, PartitionSpec as P, AxisType
    from olympus_jupyter import inspect, StageReport

    mesh = jax.make_mesh((8,), ("d",), axis_types=(AxisType.Auto,))
    rows = NamedSharding(mesh, P("d", None))
    x = olympus.ShapeDtypeStruct((16, 8), jnp.float32, sharding=rows)
    w = olympus.ShapeDtypeStruct((16, 8), jnp.float32, sharding=rows)

    def f(x, w):
        return x @ w.T

    report = inspect(f, x, w, stages="all", cache=None)
    model = report.provenance
    data = report.to_json()
    line = model.function.first_line + 1
    again = StageReport.from_json(json.loads(json.dumps(data)))
    print(json.dumps({{
        "ok": report.ok,
        "titles": [row["title"] for row in data["stage_table"]],
        "text": report.stage_text("partitioned"),
        "collectives": [[op.name, op.collective] for op in
                        (model.stages["partitioned"].ops[i]
                         for i in model.stages["partitioned"].collectives)],
        "ops_on_line": [model.op(i).name for i in
                        model.ops_for_line(model.function.file, line).get("partitioned", [])],
        "html": report.html(),
        "summary": report.text(),
        "round_trip": again.stage_text("partitioned") == report.stage_text("partitioned"),
    }}))
""")


@pytest.fixture(scope="module")
def sharded():
    return run_on_8_devices(SHARDED.format(tests=os.path.dirname(__file__)))


def test_the_partitioned_stage_shows_the_collective_a_sharding_costs(sharded):
    assert sharded["ok"]
    assert "HLO after SPMD partitioning" in sharded["titles"]
    assert "all-gather" in sharded["text"]
    assert ["all-gather", "inserted"] in sharded["collectives"]
    # The matmul's line made the dot and the all-gather it needs.
    assert "all-gather" in sharded["ops_on_line"] and "dot" in sharded["ops_on_line"]


def test_the_partitioned_stage_shows_in_every_form(sharded):
    assert "HLO after SPMD partitioning" in sharded["html"]
    assert "Collectives inserted by the compiler: all-gather" in sharded["html"]
    assert "partitioned " in sharded["summary"] and " instructions" in sharded["summary"]
    assert sharded["round_trip"]


def as_version_1(data: dict) -> dict:
    """What the previous release wrote for the same report (bundle and provenance v1)."""
    old = {k: v for k, v in data.items() if k not in ("stage_table", "texts")}
    old["version"] = 1
    # It called the cost analysis cost.
    old["stages"] = ["cost" if s == "cost_analysis" else s for s in data["stages"]]
    old["unavailable"] = {
        ("cost" if k == "cost_analysis" else k): v for k, v in data["unavailable"].items()
    }
    old["hlo_text"] = data["texts"].get("hlo")
    prov = dict(data["provenance"], version=1)
    prov["stages"] = {("hlo" if k == "compiled" else k): v for k, v in prov["stages"].items()}
    prov["lines"] = [
        dict(e, ops={("hlo" if k == "compiled" else k): v for k, v in e["ops"].items()})
        for e in prov["lines"]
    ]
    prov.pop("unavailable", None)
    old["provenance"] = prov
    return old


def test_a_bundle_saved_by_the_previous_release_still_renders():
    def f(x):
        y = jnp.sin(x)
        return y * 2

    report = inspect(f, jnp.ones(3), cache=None)
    old = as_version_1(report.to_json())
    again = StageReport.from_json(old)
    assert again.stages == report.stages
    assert again.stage_text("hlo") == report.stage_text("hlo")
    assert again.stage_text("compiled") == report.stage_text("compiled")
    assert again.provenance.lines == report.provenance.lines
    html = again.html()
    assert "Compiled HLO: after optimization" in html and "sine" in html
    assert again.to_json()["version"] == 3


def _raiser(message):
    def broken(*args, **kwargs):
        raise RuntimeError(message)

    return broken


@pytest.mark.parametrize(
    "target, attribute, stage",
    [
        (olympus.stages.Compiled, "cost_analysis", "cost_analysis"),
        (olympus.stages.Lowered, "cost_analysis", "cost_analysis"),
        (olympus.stages.Compiled, "memory_analysis", "memory"),
        (olympus.stages.Compiled, "as_text", "provenance"),
        (olympus.stages.Traced, "olympuspr", "provenance"),
    ],
    ids=["compiled-cost", "lowered-cost", "memory", "compiled-text", "olympuspr"],
)
def test_every_failure_while_making_a_report_is_shown(monkeypatch, target, attribute, stage):
    message = f"injected failure in {attribute}"
    if isinstance(getattr(target, attribute), property):
        monkeypatch.setattr(target, attribute, property(_raiser(message)))
    else:
        monkeypatch.setattr(target, attribute, _raiser(message))
    report = inspect(lambda x: jnp.sin(x) * 2, jnp.ones(4), cache=None)
    assert not report.ok
    assert report.failure.stage == stage and message in report.failure.message
    assert message in report.html() and message in report.text()
