"""The ``costs`` stage in the static HTML and the text form: the per-line table with
its units and shares, XLA's totals, the peak (or why there is none), the buffers,
the collectives (on a real 8-device CPU mesh, in a child process), and hostile data
escaped. Real compiles; nothing pinned that depends on XLA's fusion decisions but
a matmul's flops (exact: 2*M*N*K)."""

import dataclasses
import json
import os
import re
import textwrap

import numpy as np
import pytest

import olympus.numpy as jnp
from olympus_jupyter import inspect
from olympus_jupyter.report.cost_names import format_bytes, format_flops, format_share
from olympus_jupyter.report.costs_html import costs_section
from olympus_jupyter.report.costs_view import op_groups
from olympus_jupyter.report.html import render_html
from olympus_jupyter.report.markup import concat, h
from olympus_jupyter.report.text import costs_lines, render_text
from eight_devices import run_on_8_devices

M, K, N = 32, 64, 16
X = np.ones((M, K), np.float32)
W = np.ones((K, N), np.float32)


def matmul(x, w):
    return x @ w


def chain(x):
    y = x * 2.0
    z = jnp.exp(y) + 1.0
    return jnp.sin(z) * y


@pytest.fixture(scope="module")
def report():
    return inspect(matmul, X, W, costs=True, cache=False)


@pytest.fixture(scope="module")
def chain_report():
    return inspect(chain, np.ones((128,), np.float32), costs=True, cache=False)


def _section(report) -> str:
    return str(concat(costs_section(report, "olT", full=False)))


def _line_row(html: str, where: str) -> str:
    """The table row (``<tr>...</tr>``) whose heading is the source line ``where``."""
    m = re.search(r"<tr[^>]*><th title=\"[^\"]*\">" + re.escape(where) + r"</th>.*?</tr>", html)
    assert m, f"no row for {where} in {html[:2000]}"
    return m.group(0)


def test_the_formatters_write_units():
    assert format_flops(2 * M * N * K) == "65.5 kFLOP"
    assert format_flops(3e6) == "3.0 MFLOP" and format_flops(4.2e9) == "4.2 GFLOP"
    assert format_flops(12) == "12 FLOP"
    assert format_bytes(512) == "512 B" and format_bytes(2048) == "2.0 KiB"
    assert format_bytes(3 << 20) == "3.0 MiB" and format_bytes(5 << 30) == "5.0 GiB"
    assert format_share(0.5) == "50%" and format_share(0.0001) == "<1%"


def test_a_matmul_row_shows_its_flops_with_units_and_share(report):
    html = _section(report)
    line = matmul.__code__.co_firstlineno + 1
    row = _line_row(html, f"{os.path.basename(__file__)}:{line}")
    flops = 2 * M * N * K
    share = flops / report.costs["totals"]["flops"]
    assert format_flops(flops) in row and format_share(share) in row
    assert "return x @ w" in row  # the line's source text
    # A bar for the eye, hidden from screen readers; its width from the share.
    assert 'aria-hidden="true"' in row and f"width:{min(share, 1) * 100:.1f}%" in row
    # The arguments' row, the totals (the rows add up to them), the peak.
    assert ">arguments</th>" in html and "XLA's totals" in html
    assert format_flops(report.costs["totals"]["flops"]) in html
    assert "The peak" in html and format_bytes(report.costs["peak"]["bytes"]) in html
    assert "memory_analysis() peak" in html
    assert "do not add up" not in html
    # One device: no collectives, and that is said.
    assert "runs on one device" in html
    assert "Buffers live at the peak" in html


def test_the_whole_page_renders_the_section_once(report):
    html = str(render_html(report))
    assert html.count('id="' + html.split('id="')[1].split('"')[0] + '-costs"') == 1
    assert "Where the cost goes" in html and "<script" not in html
    assert ".ol-cbar" in html  # the styles came with it
    standalone = str(render_html(report, standalone=True))
    assert "Where the cost goes" in standalone


def test_an_elementwise_chain(chain_report):
    r = chain_report
    html = _section(r)
    first = chain.__code__.co_firstlineno
    lines = {row["line"] for row in r.cost_by_line() if row["what"] == "line"}
    assert lines & {first + 1, first + 2, first + 3}
    for line in sorted(lines):
        assert f"{os.path.basename(__file__)}:{line}" in html
    # exp and sin are transcendentals: the column shows them with a unit.
    total = r.costs["totals"]["transcendentals"]
    assert total > 0 and format_flops(total, "ops") in html
    text = render_text(r)
    assert "  costs: " in text and f"({os.path.basename(__file__)})" in text


def test_a_report_without_the_peak_says_why(report):
    costs = dict(
        report.costs,
        peak=None,
        buffers=[],
        unavailable={"peak": "XLA wrote no buffer assignment"},
        lines=[dict(row, peak=0) for row in report.costs["lines"]],
    )
    r = dataclasses.replace(report, costs=costs)
    html = _section(r)
    assert "Not available: XLA wrote no buffer assignment." in html
    assert "Not available: peak: XLA wrote no buffer assignment." in html
    assert "memory_analysis() peak" not in html and "Buffers live at the peak" not in html
    assert format_flops(2 * M * N * K) in html
    text = render_text(r)
    assert "live at the peak: unavailable (XLA wrote no buffer assignment)" in text
    assert str(render_html(r))  # the whole page too


def test_a_report_asked_for_costs_without_them_shows_the_reason(report):
    r = dataclasses.replace(
        report, costs=None, unavailable={**report.unavailable, "costs": "no dumps here"}
    )
    html = _section(r)
    assert "Not available: no dumps here." in html
    assert "costs:" not in render_text(r)


def test_hostile_strings_are_escaped(report):
    evil = '<script>alert("x")</script>'
    costs = json.loads(json.dumps(report.costs))
    costs["lines"].insert(
        0,
        {
            "what": "line",
            "file": None,
            "path": f"/{evil}/m.py",
            "line": 3,
            "flops": 1.0,
            "transcendentals": 0.0,
            "bytes": 0.0,
            "peak": 0,
            "instructions": [evil],
            "buffers": [],
        },
    )
    costs["buffers"].append(
        {
            "label": evil,
            "index": evil,
            "size": 4,
            "kind": evil,
            "shape": evil,
            "file": None,
            "path": evil,
            "line": 1,
            "aliased_argument": None,
            "argument": evil,
        }
    )
    costs["buffers"].append(
        {
            "label": "param.1",
            "index": "{}",
            "size": 4,
            "kind": "output",
            "shape": "f32[]",
            "file": None,
            "path": None,
            "line": None,
            "aliased_argument": 0,
            "argument": evil,
        }
    )
    costs["peak"]["at"] = evil
    costs["peak"]["difference"] = evil
    costs["peak"]["by_kind"][evil] = 1
    costs["collectives"] = [
        {
            "label": evil,
            "opcode": evil,
            "kind": evil,
            "replica_groups": evil,
            "group_size": 8,
            "result_bytes": 4096,
            "moved_bytes": 3584,
            "op_name": evil,
            "lines": [[None, 3]],
            "shardings": [evil],
            "arguments": [evil],
            "parameters": [evil],
            "text": f"all-gather {evil}\x1b[2J",
        }
    ]
    costs["shardings"] = {
        "inputs": [evil],
        "outputs": [evil],
        "input_names": [evil],
        "output_names": [evil],
    }
    costs["notes"] = [evil]
    costs["unavailable"] = {evil: evil}
    costs["devices"] = 8
    r = dataclasses.replace(report, costs=costs)
    for html in (_section(r), str(render_html(r))):
        assert "<script" not in html
        assert "&lt;script&gt;" in html
    text = render_text(r)
    assert "collectives: 1" in text and "\x1b" not in text
    assert "(per device on 8 devices)" in text
    assert "m.py" in text  # the path's last part names the line


def test_the_text_form(report):
    lines = costs_lines(report.costs, report.provenance)
    totals = report.costs["totals"]
    assert lines[0] == (
        f"  costs: {format_flops(totals['flops'])}, "
        f"{format_bytes(totals['bytes accessed'])} accessed, "
        f"{format_bytes(report.costs['peak']['bytes'])} live at the peak"
    )
    line = matmul.__code__.co_firstlineno + 1
    row = f"    line {line} ({os.path.basename(__file__)}): {format_flops(2 * M * N * K)} ("
    assert any(ln.startswith(row) for ln in lines), lines
    assert "\n".join(lines) in render_text(report)
    assert costs_lines(None, None) == []


def test_the_text_form_caps_the_lines_and_shows_the_compiler_made_row(report):
    costs = json.loads(json.dumps(report.costs))
    row = {
        "what": "line",
        "file": None,
        "path": "/src/m.py",
        "flops": 10.0,
        "transcendentals": 0.0,
        "bytes": 8.0,
        "peak": 0,
        "instructions": [],
        "buffers": [],
    }
    costs["lines"] = [dict(row, line=k) for k in range(1, 9)] + [
        dict(row, what="compiler-made", path=None, line=None, flops=0.0, bytes=64.0)
    ]
    lines = costs_lines(costs, None)
    assert sum(ln.startswith("    line ") for ln in lines) == 5
    assert "    ... and 3 more lines: report.cost_by_line() gives each" in lines
    assert any(ln.startswith("    compiler-made") and "64 B" in ln for ln in lines)
    # Nothing compiler-made: no row.
    costs["lines"][-1] = dict(costs["lines"][-1], bytes=0.0)
    assert not any("compiler-made" in ln for ln in costs_lines(costs, None))


def test_a_notebook_cell_is_named_as_the_report_names_it(report):
    model = report.provenance
    files = [
        dataclasses.replace(f, path="In [7]") if f.path == __file__ else f for f in model.files
    ]
    r = dataclasses.replace(report, provenance=dataclasses.replace(model, files=tuple(files)))
    line = matmul.__code__.co_firstlineno + 1
    assert f"In [7]:{line}" in _section(r)
    assert f"line {line} (In [7])" in render_text(r)
    # The costliest ops name the cell too.
    assert f'<td title="In [7]:{line}">In [7]:{line}</td>' in _section(r)
    assert f"dot_general olympuspr:0 at line {line} (In [7])" in render_text(r)


def looped(x, w):
    for _ in range(3):
        x = jnp.sin(x)
    return x @ w


def test_the_costliest_ops_put_ops_alike_in_one_row():
    r = inspect(looped, X, W, costs=True, cache=False)
    groups = op_groups(r.costs, r.provenance, 5)
    dot, sines = groups
    first = looped.__code__.co_firstlineno
    assert (dot["name"], dot["line"], dot["path"]) == ("dot_general", first + 3, __file__)
    assert dot["flops"] == 2 * M * N * K and dot["flops_share"] == 1.0
    assert (sines["name"], sines["line"], len(sines["ops"])) == ("sin", first + 2, 3)
    # Ops alike share their instructions: each op's own share is the row's.
    assert r.cost_share_of_op(sines["ops"][1])["transcendentals"] == sines["transcendentals"]
    assert sines["transcendentals"] == 3 * M * K
    text = render_text(r)
    assert "    by op (olympuspr equations):" in text
    assert f"sin {sines['ops'][0]} at line {first + 2} ({os.path.basename(__file__)}), " in text
    assert "3 ops alike (together)" in text
    html = _section(r)
    assert "<h4>By op (olympuspr equations)</h4>" in html
    assert f'<th title="{", ".join(sines["ops"])}">sin ×3</th>' in html
    assert op_groups(r.costs, r.provenance, 1) == [dot]
    # A report without its model (read back from its data) lists none.
    assert op_groups(r.costs, None, 5) == []
    assert not any("by op" in ln for ln in costs_lines(r.costs, None))


SCRIPT = textwrap.dedent("""
    import json
    import jax
    import olympus, olympus.numpy as jnp
    from olympus.sharding import AxisType, NamedSharding, PartitionSpec as P
    from olympus_jupyter import inspect
    from olympus_jupyter.report.html import render_html
    from olympus_jupyter.report.text import render_text

    mesh = jax.make_mesh((8,), ("x",), axis_types=(AxisType.Auto,))

    def mlp(x, w1):
        return jnp.tanh(x @ w1)

    specs = [olympus.ShapeDtypeStruct(s, jnp.float32, sharding=NamedSharding(mesh, p))
             for s, p in (((64, 32), P(None, "x")), ((32, 32), P(None, "x")))]
    r = inspect(mlp, *specs, costs=True, cache=False)
    print(json.dumps({"html": str(render_html(r)), "text": render_text(r),
                      "collectives": r.costs["collectives"], "devices": r.costs["devices"],
                      "notes": r.costs["notes"]}))
""")


def test_collectives_on_eight_devices():
    out = run_on_8_devices(SCRIPT)
    assert out["devices"] == 8 and out["collectives"], out["collectives"]
    html, text = out["html"], out["text"]
    assert "per device on 8 devices" in html and "(per device on 8 devices)" in text
    first = out["collectives"][0]
    assert f"<code>{first['opcode']}</code>" in html
    assert format_bytes(first["moved_bytes"]) in html
    assert f"    collectives: {len(out['collectives'])}" in text
    assert "8 devices run the program" in html
    assert out["notes"] and all(str(h("p", {"class": "note"}, n)) in html for n in out["notes"])
