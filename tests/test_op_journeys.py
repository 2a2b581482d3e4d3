"""Journeys and cost shares from any frame and from any op (issue 33): a journey
of a library's line and of a line that calls a function, and the journey and
cost share of an olympuspr equation or a StableHLO op, on a real compile of a
user's module calling a library (a module loaded from a ``site-packages`` folder
made for the test)."""

from __future__ import annotations

import importlib.util
import os
import sys
import textwrap

import jax.numpy as jnp
import pytest

from olympus_jupyter import inspect
from olympus_jupyter.report import StageReport

LIBRARY = """
import jax.numpy as jnp


def dense(w, x):
    y = x @ w
    return jnp.tanh(y)
"""

MODEL = """
import fakelib_journeys as fakelib


def block(w, x):
    return fakelib.dense(w, x)


def step(w1, w2, x):
    h = block(w1, x)
    out = block(w2, h)
    return (out * 2.0).sum()
"""


def _line(text: str, needle: str) -> int:
    return next(k for k, line in enumerate(text.split("\n"), 1) if needle in line)


@pytest.fixture(scope="module")
def made(tmp_path_factory):
    """The report (passes and costs) of the user's ``step``, with the paths and
    lines the tests ask about; nothing is left in ``sys.modules`` after."""
    root = tmp_path_factory.mktemp("journeys")
    lib_dir = root / "venv" / "lib" / "site-packages" / "fakelib_journeys"
    lib_dir.mkdir(parents=True)
    (lib_dir / "__init__.py").write_text(LIBRARY)
    user = root / "project" / "model_journeys.py"
    user.parent.mkdir()
    model_text = textwrap.dedent(MODEL)
    user.write_text(model_text)
    loaded = []
    try:
        modules = {}
        for name, path in (
            ("fakelib_journeys", lib_dir / "__init__.py"),
            ("olympus_test_journeys", user),
        ):
            spec = importlib.util.spec_from_file_location(name, path)
            module = importlib.util.module_from_spec(spec)
            sys.modules[name] = module
            loaded.append(name)
            spec.loader.exec_module(module)
            modules[name] = module
        step = modules["olympus_test_journeys"].step
        args = (jnp.ones((32, 16)), jnp.ones((16, 8)), jnp.ones((4, 32)))
        report = inspect(step, *args, passes=True, costs=True)
        assert report.ok, report.failure
        yield {
            "report": report,
            "user": str(user),
            "lib": str(lib_dir / "__init__.py"),
            "charged": _line(model_text, "return fakelib.dense"),
            "first_call": _line(model_text, "h = block(w1, x)"),
            "second_call": _line(model_text, "out = block(w2, h)"),
            "lib_dot": _line(LIBRARY, "y = x @ w"),
            "args": args,
            "step": step,
        }
    finally:
        for name in loaded:
            sys.modules.pop(name, None)


def _labels(carriers):
    return {c["label"] for c in carriers}


def _ops(report, stage, name):
    return [op for op in report.provenance.stages[stage].ops if op.name == name]


# -- a journey from any frame --------------------------------------------------------


def test_a_charged_line_keeps_the_journey_the_data_holds(made):
    report = made["report"]
    j = report.journey(made["charged"], file=made["user"])
    held = [
        x
        for x in report.passes["journeys"]
        if x["line"] == made["charged"] and report.provenance.files[x["file"]].path == made["user"]
    ]
    assert held and j is held[0]
    # Both dots and both tanhs are charged to the line that calls the library.
    assert sorted(c["opcode"] for c in j["start"]) == ["dot", "dot", "tanh", "tanh"]


def test_a_library_line_has_a_journey(made):
    report = made["report"]
    j = report.journey(made["lib_dot"], file=made["lib"])
    assert j is not None
    assert [c["opcode"] for c in j["start"]] == ["dot", "dot"]  # one per call of dense
    assert j["file"] == report.provenance.file_index(made["lib"])
    assert j["line"] == made["lib_dot"]
    charged = report.journey(made["charged"], file=made["user"])
    assert _labels(j["start"]) < _labels(charged["start"])
    assert j["end"]  # the dots reached the end of the pipeline
    rows = report.passes["rows"]
    assert all(0 <= e["row"] < len(rows) for e in j["events"])


def test_an_outer_callers_line_has_the_journey_of_what_it_called(made):
    report = made["report"]
    first = report.journey(made["first_call"], file=made["user"])
    second = report.journey(made["second_call"], file=made["user"])
    assert first is not None and second is not None
    assert sorted(c["opcode"] for c in first["start"]) == ["dot", "tanh"]
    assert sorted(c["opcode"] for c in second["start"]) == ["dot", "tanh"]
    assert not _labels(first["start"]) & _labels(second["start"])
    charged = report.journey(made["charged"], file=made["user"])
    assert _labels(first["start"]) | _labels(second["start"]) == _labels(charged["start"])


def test_frames_stack_and_lines_without_instructions(made):
    report = made["report"]
    stack = report.journey(made["charged"], file=made["user"], frames="stack")
    user = report.journey(made["charged"], file=made["user"])
    assert stack is not user and stack["start"] == user["start"]  # all beneath it is the library's
    assert report.journey(1, file=made["user"]) is None  # the import line made nothing
    with pytest.raises(ValueError, match="frames='all'"):
        report.journey(made["charged"], file=made["user"], frames="all")


# -- from an op ------------------------------------------------------------------------


def test_the_journey_of_an_equation_and_of_its_stablehlo_op(made):
    report = made["report"]
    first_dot, second_dot = _ops(report, "olympuspr", "dot_general")
    a = report.journey_of_op(first_dot.id)
    b = report.journey_of_op(second_dot)  # the Op itself works too
    assert a["op"] == first_dot.id and b["op"] == second_dot.id
    assert [c["opcode"] for c in a["start"]] == ["dot"]
    assert [c["opcode"] for c in b["start"]] == ["dot"]
    assert _labels(a["start"]) != _labels(b["start"])
    first_call = report.journey(made["first_call"], file=made["user"])
    assert _labels(a["start"]) < _labels(first_call["start"])
    assert a["end"] and "file" not in a
    lowered = [
        op.id
        for op in _ops(report, "stablehlo", "stablehlo.dot_general")
        if report.journey_of_op(op.id)["start"] == a["start"]
    ]
    assert len(lowered) == 1  # the StableHLO op of that equation, and not the other's
    assert report.journey_of_op(lowered[0]) == {**a, "op": lowered[0]}


def test_the_cost_share_of_ops_adds_up(made):
    report = made["report"]
    w1, w2, x = made["args"]
    first_dot, second_dot = _ops(report, "olympuspr", "dot_general")
    a = report.cost_share_of_op(first_dot.id)
    b = report.cost_share_of_op(second_dot.id)
    assert a["flops"] == 2 * x.shape[0] * w1.shape[0] * w1.shape[1]
    assert b["flops"] == 2 * x.shape[0] * w2.shape[0] * w2.shape[1]
    totals = report.costs.get("counted_totals") or report.costs["totals"]
    assert a["flops_share"] == pytest.approx(a["flops"] / totals["flops"])
    # Each equation here has its own instructions: the equations add up to the totals.
    ops = report.provenance.stages["olympuspr"].ops
    shares = [report.cost_share_of_op(op.id) for op in ops]
    for key, total in (("flops", "flops"), ("transcendentals", "transcendentals")):
        assert sum(s[key] for s in shares) == pytest.approx(totals[total], rel=1e-6)
    assert sum(s["bytes"] for s in shares) == pytest.approx(totals["bytes accessed"], rel=1e-6)
    assert sum(s["flops_share"] for s in shares) == pytest.approx(1.0)
    # The line both dots are charged to costs what its ops cost.
    row = next(
        r
        for r in report.cost_by_line()
        if r["file"] == made["user"] and r["line"] == made["charged"]
    )
    tanhs = [report.cost_share_of_op(op.id) for op in _ops(report, "olympuspr", "tanh")]
    assert row["flops"] == pytest.approx(a["flops"] + b["flops"] + sum(t["flops"] for t in tanhs))
    assert row["transcendentals"] == pytest.approx(sum(t["transcendentals"] for t in tanhs))
    # The StableHLO op costs what its equation does; the function holds everything.
    hlo = [
        report.cost_share_of_op(op.id) for op in _ops(report, "stablehlo", "stablehlo.dot_general")
    ]
    assert sorted(h["flops"] for h in hlo) == sorted([a["flops"], b["flops"]])
    func = _ops(report, "stablehlo", "func.func")[0]
    assert report.cost_share_of_op(func.id)["flops"] == pytest.approx(totals["flops"])


def test_clear_errors(made):
    report = made["report"]
    with pytest.raises(ValueError, match="an op of olympuspr or stablehlo"):
        report.journey_of_op("compiled:0")
    with pytest.raises(KeyError, match="there is no op"):
        report.cost_share_of_op("olympuspr:999")
    with pytest.raises(ValueError, match="not an op id"):
        report.journey_of_op("dot_general")
    back = StageReport.from_json(report.to_json())
    assert back.journey(made["charged"], file=made["user"]) == report.journey(
        made["charged"], file=made["user"]
    )
    with pytest.raises(ValueError, match="read back from its data"):
        back.journey_of_op("olympuspr:0")
    with pytest.raises(ValueError, match="read back from its data"):
        back.cost_share_of_op("olympuspr:0")
    plain = inspect(made["step"], *made["args"])
    with pytest.raises(ValueError, match="no passes stage"):
        plain.journey_of_op("olympuspr:0")
    with pytest.raises(ValueError, match="no costs stage"):
        plain.cost_share_of_op("olympuspr:0")


# -- in the bundle, for the views ------------------------------------------------------


def test_the_bundle_carries_each_ops_journey_and_cost(made):
    report = made["report"]
    data = report.to_json()
    StageReport.from_json(data)  # follows the schema
    by_op = {op: j for j in data["passes"]["op_journeys"] for op in j["ops"]}
    first_dot, second_dot = _ops(report, "olympuspr", "dot_general")
    for op in (first_dot, second_dot):
        held = {k: v for k, v in by_op[op.id].items() if k != "ops"}
        assert held == {k: v for k, v in report.journey_of_op(op.id).items() if k != "op"}
    costs = {row["op"]: row for row in data["costs"]["ops"]}
    for op in (first_dot, second_dot):
        share = report.cost_share_of_op(op.id)
        assert costs[op.id]["flops"] == share["flops"]
        assert costs[op.id]["bytes"] == pytest.approx(share["bytes"])
    flops = [row["flops"] for row in data["costs"]["ops"]]
    assert flops == sorted(flops, reverse=True)


def test_the_text_and_the_static_page_list_each_equations_journey(made):
    from olympus_jupyter.report.html import render_html
    from olympus_jupyter.report.passes_view import op_journey_rows
    from olympus_jupyter.report.text import render_text

    report = made["report"]
    first_dot, second_dot = _ops(report, "olympuspr", "dot_general")
    rows, more = op_journey_rows(report.passes, report.provenance, 100)
    assert more == 0
    by_op = {r["ops"][0]: r for r in rows}
    # Each dot has its own instructions, so its own row, charged to the user's line.
    for op in (first_dot, second_dot):
        row = by_op[op.id]
        assert row["ops"] == [op.id] and row["name"] == "dot_general"
        assert (row["path"], row["line"]) == (made["user"], made["charged"])
        j = report.journey_of_op(op.id)
        assert row["start"] == ", ".join(f"{c['label']} ({c['opcode']})" for c in j["start"])
    # Only olympuspr equations, in program order.
    ops = report.provenance.stages["olympuspr"].ops
    order = [ops.index(report.provenance.op(r["ops"][0])) for r in rows]
    assert order == sorted(order)
    assert all(i.startswith("olympuspr:") for r in rows for i in r["ops"])
    text = render_text(report)
    assert "    by op (olympuspr equations):" in text
    base = os.path.basename(made["user"])
    start = by_op[first_dot.id]["start"]
    assert (
        f"      dot_general {first_dot.id} at line {made['charged']} ({base}): {start} -> " in text
    )
    html = str(render_html(report))
    n = len(rows)
    assert f"<summary>Where each olympuspr equation's ops went ({n})</summary>" in html
    assert (
        f'<th title="{first_dot.id}">dot_general</th><td title="{made["user"]}">{base}:{made["charged"]}</td>'
        in html
    )
    # With a limit, the rest are counted and the text says how to get them.
    cut, left = op_journey_rows(report.passes, report.provenance, 1)
    assert len(cut) == 1 and left == len(rows) - 1
    # A report read back from its data (a saved report) lists the same.
    back = StageReport.from_json(report.to_json())
    assert op_journey_rows(back.passes, back.provenance, 100) == (rows, 0)
    # Without the model there is nothing to name the ops by: no rows.
    assert op_journey_rows(report.passes, None, 10) == ([], 0)


def test_a_capped_output_leaves_the_ops_out_first(made):
    from olympus_jupyter.report.costs_view import cap_costs
    from olympus_jupyter.report.data_cap import json_size
    from olympus_jupyter.report.passes_view import cap_passes

    report = made["report"]
    passes = report.passes
    ops_size = json_size(passes["op_journeys"])
    cut, note = cap_passes(passes, json_size(passes) - ops_size // 2)
    assert cut["journeys"] == passes["journeys"] and cut["deltas"] == passes["deltas"]
    assert len(cut["op_journeys"]) < len(passes["op_journeys"])
    assert "report.journey_of_op(op)" in note
    costs = {**report.costs, "ops": report.costs["ops"] * 50}  # many ops
    cut, note = cap_costs(costs, json_size(costs) - json_size(costs["ops"]) // 2)
    assert 0 < len(cut["ops"]) < len(costs["ops"])
    assert cut["ops"] == costs["ops"][: len(cut["ops"])]  # the costliest
    assert cut["lines"] == costs["lines"] and cut["buffers"] == costs["buffers"]
    assert "report.cost_share_of_op(op)" in note and cut["notes"][-1] == note
    cut, note = cap_costs(costs, json_size({**costs, "ops": []}) // 2)
    assert cut["ops"] == [] and "ops are left out too" in note


def looped(x):
    for _ in range(3):
        x = jnp.sin(x)
    return x


def test_ops_xla_cannot_tell_apart_share_their_instructions():
    """A Python loop's ops: one name and one call stack in XLA's metadata each."""
    x = jnp.ones(16)
    report = inspect(looped, x, passes=True, costs=True, cache=None)
    sines = _ops(report, "olympuspr", "sin")
    assert len(sines) == 3
    j = report.journey_of_op(sines[0].id)
    assert [c["opcode"] for c in j["start"]] == ["sine"] * 3
    share = report.cost_share_of_op(sines[1].id)
    assert share["transcendentals"] == 3 * x.size == report.costs["totals"]["transcendentals"]
    (group,) = [g for g in report.passes["op_journeys"] if sines[0].id in g["ops"]]
    assert {op.id for op in sines} <= set(group["ops"])
    costs = {row["op"]: row for row in report.costs["ops"]}
    assert all(costs[op.id]["transcendentals"] == 3 * x.size for op in sines)


def two_layers(w1, w2, x):
    h = jnp.tanh(x @ w1)
    for _ in range(3):
        h = jnp.sin(h) + 1.0
    return (h @ w2).sum()


def test_each_ops_journey_is_made_only_where_kept_and_reads_as_by_owner():
    """``op_journeys_json`` makes the journeys of the ops it keeps, and only those
    (a key's instructions are read in every module when its journey is asked for,
    keys alike once): uncapped it lists every op's journey as ``by_owner`` reads
    it, ops with one journey together; capped, the first ops' in the same groups,
    the rest counted."""
    import olympus
    from olympus.op_instructions import keys_by_op
    from olympus.passes import journey_index, pass_pipeline
    from olympus_jupyter.report.data import compact_json
    from olympus_jupyter.report.passes_view import journey_json, op_journeys_json

    args = (jnp.ones((8, 16)), jnp.ones((16, 4)), jnp.ones((2, 8)))
    lowered = olympus.jit(two_layers).trace(*args).lower()
    model = olympus.provenance.build(lowered.compile())
    index = journey_index(pass_pipeline(lowered))
    rows = list(range(len(index.snapshots)))
    keys = keys_by_op(model)

    def data(journey) -> str:
        made = journey_json(journey, 0, rows)
        del made["file"], made["line"]
        return compact_json(made)

    every = index.by_owner(keys)
    whole, left = op_journeys_json(index, model, rows)
    assert left == 0 and len(whole) > 2
    listed = {op: group for group in whole for op in group["ops"]}
    assert set(listed) == set(every)  # each op once
    for op, group in listed.items():
        assert compact_json({k: v for k, v in group.items() if k != "ops"}) == data(every[op])
    # Ops with one journey share one group; groups go by their first op.
    assert len({compact_json({k: v for k, v in g.items() if k != "ops"}) for g in whole}) == len(
        whole
    )
    firsts = [g["ops"][0] for g in whole]
    assert firsts == sorted(
        firsts, key=lambda i: (i.split(":")[0] != "olympuspr", int(i.split(":")[1]))
    )
    # Keys that match the same instructions everywhere have one journey.
    made = index.of_each_key(keys)
    for alike in made.alike():
        assert len({data(made.journey(k)) for k in alike}) == 1
    # A key's journey is the same read alone or with all the others.
    alone = index.of_each_key(keys)
    assert all(data(alone.journey(k)) == data(made.journey(k)) for k in reversed(made.keys))
    # Capped after the first group: that group whole, every other op counted.
    text = compact_json({k: v for k, v in whole[0].items() if k != "ops"})
    cut, left = op_journeys_json(index, model, rows, len(text) + 16 * len(whole[0]["ops"]))
    assert cut == whole[:1] and left == len(listed) - len(whole[0]["ops"])
    assert op_journeys_json(index, model, rows, 0) == ([], len(listed))
