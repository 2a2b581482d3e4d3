"""A stage kind is a handler: a kind registered through the public API alone (here,
in this file) shows in every form of a report, and former stage names still read.
The JupyterLab view of such a kind: tests/browser/test_stage_kinds_view.py."""

import copy
import dataclasses
import json

import pytest

import olympus.numpy as jnp
from olympus import stage_registry
from olympus_jupyter import StageReport, inspect
from olympus_jupyter.report.kinds import (
    MakeContext,
    StageKind,
    TableKind,
    TextKind,
    kind,
    kind_options,
    kinds,
    register_kind,
    unregister_kind,
)
from olympus_jupyter.report.option_table import (
    CLI,
    EVERYWHERE,
    Option,
    OptionError,
    true_false,
)
from olympus_jupyter.report.validate import BundleError, check_bundle
from olympus.stage_registry import StageSpec


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


@pytest.fixture
def registered():
    handlers = [register_kind(OpcodeCounts()), register_kind(Printed())]
    yield handlers
    for h in handlers:
        unregister_kind(h.name)
    assert "opcode_counts" not in stage_registry.names()


def f(x):
    return jnp.sin(x) * 2 + 1


def test_a_registered_kind_shows_in_every_form(registered):
    assert [k.name for k in kinds()][-2:] == ["opcode_counts", "printed"]
    report = inspect(
        f, jnp.ones(4), stages=("source", "compiled", "opcode_counts", "printed"), cache=None
    )
    assert report.ok and report.stages[-2:] == ("opcode_counts", "printed")
    table = report.stage_data["opcode_counts"]
    assert table["columns"] == ["opcode", "count"] and ["sine", 1] in table["rows"]
    # The text form.
    text = report.text()
    assert "  opcode_counts: " in text and "opcode sine, count 1" in text
    assert "  printed: " in text
    # The static HTML: its section, titled, with its table and the text.
    html = report.html()
    assert "Opcodes of the compiled program" in html and 'data-olympus-kind="opcode_counts"' in html
    assert "<td>sine</td>" in html and "The olympuspr, printed" in html and "sin a" in html
    # The bundle: schema-valid, its stage table names the view that shows it.
    data = report.to_json()
    check_bundle(data)
    rows = {r["name"]: r for r in data["stage_table"]}
    assert rows["opcode_counts"]["view"] == "table" and rows["printed"]["view"] == "text"
    assert rows["opcode_counts"]["kind"] == "opcode_table"
    assert data["data"]["opcode_counts"] == table
    assert data["data"]["printed"]["text"] == str(report.stage_data["printed"]["text"])
    again = StageReport.from_json(json.loads(json.dumps(data)))
    assert again.stages == report.stages and again.stage_data == report.stage_data


def test_a_kinds_data_is_checked_against_its_views_schema(registered):
    report = inspect(f, jnp.ones(4), stages=("opcode_counts",), cache=None)
    data = report.to_json()
    for bad, where in (
        (["not", "a", "table"], "data.opcode_counts"),
        ({"columns": ["a"], "rows": [[{"x": 1}]]}, "data.opcode_counts.rows.0.0"),
        ({"columns": ["a"]}, "data.opcode_counts"),
    ):
        spoiled = copy.deepcopy(data)
        spoiled["data"]["opcode_counts"] = bad
        with pytest.raises(BundleError, match=f"Not a readable Olympus report: {where}"):
            StageReport.from_json(spoiled)


def test_a_kind_this_release_does_not_know_is_left_out_when_read(registered):
    report = inspect(f, jnp.ones(4), stages=("source", "opcode_counts"), cache=None)
    data = report.to_json()
    unregister_kind("opcode_counts")
    again = StageReport.from_json(data)
    assert again.stages == ("source",) and again.stage_data == {}


def test_registering_is_checked():
    class NoSpec(StageKind):
        view = "table"

    with pytest.raises(TypeError, match="spec must be a StageSpec"):
        register_kind(NoSpec())
    with pytest.raises(ValueError, match="already has a handler"):
        register_kind(type("Other", (TableKind,), {"spec": stage_registry.stage("hlo")})())
    with pytest.raises(ValueError, match="names a generic view"):
        register_kind(
            type(
                "Odd",
                (StageKind,),
                {"spec": StageSpec("odd_view", "Odd", "odd", "odd"), "view": "chart"},
            )()
        )
    with pytest.raises(ValueError, match="its view must be one of text, table"):
        register_kind(
            type(
                "Shown",
                (TableKind,),
                {"spec": StageSpec("shown_as_program", "P", "p", "p"), "view": "program"},
            )()
        )
    with pytest.raises(ValueError, match="former name"):
        register_kind(
            type("Cost", (TableKind,), {"spec": StageSpec("cost", "Cost", "cost", "table")})()
        )
    assert not {"odd_view", "shown_as_program"} & set(stage_registry.names())


def test_the_former_name_of_the_cost_analysis_still_reads():
    report = inspect(f, jnp.ones(4), stages=("source", "cost"), cache=None)
    assert report.stages == ("source", "cost_analysis")
    assert kind("cost").name == "cost_analysis"
    # A version 2 bundle (a notebook saved before) calls it cost.
    data = inspect(f, jnp.ones(4), cache=None).to_json()
    old = copy.deepcopy(data)
    old["version"] = 2
    old["stages"] = ["cost" if s == "cost_analysis" else s for s in old["stages"]]
    for row in old["stage_table"]:
        row.pop("view")
        if row["name"] == "cost_analysis":
            row["name"] = "cost"
    old["unavailable"] = {"cost": "for a test"}
    check_bundle(old)
    again = StageReport.from_json(old)
    assert again.stages == tuple(data["stages"])
    assert again.unavailable == {"cost_analysis": "for a test"}
    assert "Cost analysis" in again.html() and again.to_json()["version"] == 3


class Named(TableKind):
    """A kind no compilation step makes (``step=None``): made with every report."""

    spec = StageSpec(
        "function_name", "The function", "function", "function_table", unit="rows", default=False
    )

    def rows(self, ctx: MakeContext):
        return ["function"], [[ctx.run.name]]


def test_a_kind_no_step_makes_is_made_even_when_tracing_fails():
    register_kind(Named())
    try:

        def broken(x):
            raise RuntimeError("no trace")

        report = inspect(broken, 1.0, stages=("source", "function_name"), cache=None)
        assert not report.ok and report.failure.stage == "trace"
        assert report.stage_data["function_name"] == {"columns": ["function"], "rows": [["broken"]]}
        assert "<td>broken</td>" in report.html()
    finally:
        unregister_kind("function_name")


class Opcodes(OpcodeCounts):
    """OpcodeCounts asked for by its own option, ``--opcodes`` (``opcodes=True``)."""

    spec = StageSpec(
        "opcodes",
        "Opcodes, by option",
        "opcodes",
        "opcode_table",
        step="compile",
        unit="opcodes",
        default=False,
    )
    option = Option(
        "opcodes",
        true_false(False),
        default=False,
        flags=("--opcodes",),
        takes="switch",
        frontends=EVERYWHERE | CLI,
        stage="opcodes",
        stage_value=True,
        accepts="True or False",
        help="also count the compiled program's instructions by opcode",
    )


def test_a_kind_brings_its_option_to_every_frontend_and_takes_it_back():
    from olympus_jupyter.frontends import cli, options as frontend_options
    from olympus_jupyter.frontends.inspector import Inspector

    handler = register_kind(Opcodes())
    try:
        assert kind_options()["opcodes"] is handler.option
        # The magic's and the CLI's parsers, ReportOptions and inspect() take it ...
        parsed, call = frontend_options.split_line("--opcodes f(x)")
        assert call == "f(x)" and "opcodes" in parsed.stages and parsed.opcodes is True
        assert cli.build_parser().parse_args(["demo", "--opcodes", "-o", "r.html"]).opcodes
        assert "opcodes" in frontend_options.ReportOptions(opcodes=True).stages
        report = inspect(f, 1.0, opcodes=True, cache=False)
        assert "opcodes" in report.stages and report.stage_data["opcodes"]["rows"]
        # ... and the Inspector offers the stage and the option.
        ins = Inspector(f, 1.0)
        assert "opcodes" in ins.stages.names
    finally:
        unregister_kind("opcodes")
    assert "opcodes" not in kind_options()
    with pytest.raises(SystemExit):  # the CLI no longer knows the flag
        cli.build_parser().parse_args(["demo", "--opcodes", "-o", "r.html"])
    with pytest.raises(TypeError, match="opcodes"):
        frontend_options.ReportOptions(opcodes=True)


def test_a_kind_whose_option_is_taken_is_refused_and_leaves_nothing_behind():
    class Clash(Opcodes):
        spec = StageSpec("clash", "Clash", "clash", "opcode_table", step="compile", default=False)
        option = dataclasses.replace(
            Opcodes.option, name="clash", stage="clash", flags=("--costs",)
        )

    with pytest.raises(OptionError, match="--costs"):
        register_kind(Clash())
    assert "clash" not in stage_registry.names() and "clash" not in kind_options()
