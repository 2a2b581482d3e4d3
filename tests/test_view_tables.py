"""What the view (TypeScript) and the text and static HTML (Python) both draw comes
from one place, and where each language must compute it, both compute the same.

- The palette and the units of figures are declared once, in
  ``olympus_jupyter/report/view_tables.py``; ``src/viewtables.ts`` and the palette of
  ``style/base.css`` are generated from it, and must be what it generates now.
- The source lines that call the function are found once, in Python, and carried in
  the bundle (``callers``); the view's copy of the rule reads only bundles written
  before, and still finds what Python finds.
- The module tree of the cost by module and layer (``module_path``, ``module_tree``
  in ``olympus/module_paths.py``) is made by each side: the view's ``modulePath``
  and ``moduleTree`` (``src/moduletree.ts``) are run on the same name stacks and
  leaves as Python's.
- Figures (``format_value``, ``format_bytes``, ``_number``, ``format_flops``,
  ``format_share``, ``format_ms``) and brace folds (``brace_folds``) are computed by each side where
  it shows them (the view sums figures by line and folds a text when it is opened):
  the view's functions (``formatCost``, ``formatBytes``, ``formatNumber``,
  ``formatFlops``, ``formatShare``, ``formatMs``, ``braceFoldEnds``) are run here,
  compiled from ``src/`` by esbuild, on the same inputs as Python's.
"""

from __future__ import annotations

import json
import math
import pathlib
import shutil
import subprocess

import pytest

import olympus.numpy as jnp
from olympus_jupyter import inspect
from olympus_jupyter.report import bundle, cost_names, view_tables
from olympus_jupyter.report.html import brace_folds, caller_lines, table_fold

from deadlines import deadline

ROOT = pathlib.Path(__file__).resolve().parent.parent


def test_the_generated_typescript_is_up_to_date():
    ts = (ROOT / view_tables.TS_PATH).read_text(encoding="utf-8")
    assert ts == view_tables.typescript_module(), (
        f"{view_tables.TS_PATH} differs from olympus_jupyter/report/view_tables.py: run "
        "`python -m olympus_jupyter.report.view_tables` from the repository's root"
    )


def test_the_generated_palette_is_up_to_date():
    css = (ROOT / view_tables.CSS_PATH).read_text(encoding="utf-8")
    assert css.count(view_tables.CSS_BEGIN) == 1 and css.count(view_tables.CSS_END) == 1
    assert view_tables.with_palette(css) == css, (
        f"the palette of {view_tables.CSS_PATH} differs from olympus_jupyter/report/"
        "view_tables.py: run `python -m olympus_jupyter.report.view_tables` from the root"
    )


def test_a_changed_table_is_written_where_it_is_used(tmp_path, monkeypatch):
    (tmp_path / "src").mkdir()
    (tmp_path / "style").mkdir()
    css = (ROOT / view_tables.CSS_PATH).read_text(encoding="utf-8")
    (tmp_path / view_tables.CSS_PATH).write_text(css, encoding="utf-8")
    assert view_tables.write(tmp_path) == [view_tables.TS_PATH]
    assert view_tables.write(tmp_path) == []  # up to date
    monkeypatch.setattr(view_tables, "PALETTE_HUES", view_tables.PALETTE_HUES[:-1] + (251,))
    assert view_tables.write(tmp_path) == [view_tables.CSS_PATH]
    written = (tmp_path / view_tables.CSS_PATH).read_text(encoding="utf-8")
    assert "--olympus-hue: 251;" in written and "--olympus-hue: 250;" not in written
    assert written.replace("251;", "250;") == css  # the rest of the file is left alone
    with pytest.raises(ValueError, match="no palette block"):
        view_tables.with_palette(".a {}\n")


def test_the_static_html_and_the_text_use_the_shared_palette():
    from olympus_jupyter.report import html

    assert html.PALETTE_SIZE == view_tables.PALETTE_SIZE
    page = html.render_html(inspect(lambda x: jnp.sin(x) * 2, 1.0))
    for k, hue in enumerate(view_tables.PALETTE_HUES):
        assert f".ol-src{k}{{background:hsla({hue},75%,55%,.16)" in page


# -- the view's functions, run on Python's inputs ---------------------------------

#: What node runs: the view's functions, bundled from src/ (TypeScript) by esbuild,
#: called on the cases read from standard input; the answers go to standard output.
_RUNNER = r"""
const fs = require('fs');
const { createRequire } = require('module');
const root = process.argv[1];
const load = createRequire(root + '/package.json');
const esbuild = load('esbuild');
const entry = `
export { formatCost, formatNumber } from './costnames';
export { braceFoldEnds, hloTableLines } from './folds';
export { EditorState } from '@codemirror/state';
export { formatFlops, formatShare } from './costview';
export { callerLines, callersOfOldBundles } from './links';
export { formatBytes, formatMs, readReport } from './model';
export { loopNote, modulePath, moduleTree, noFigures } from './moduletree';
`;
// The schema check is compiled at build time (lib/); the readers are what runs here.
const noCheck = {
  name: 'no-check',
  setup(b) {
    b.onResolve({ filter: /bundle_validator$/ }, () => ({ path: 'v', namespace: 'no-check' }));
    b.onLoad({ filter: /.*/, namespace: 'no-check' },
             () => ({ contents: 'export default function v() { return true; }', loader: 'js' }));
  }
};
(async () => {
  const out = await esbuild.build({
    stdin: { contents: entry, resolveDir: root + '/src', loader: 'ts', sourcefile: 'twins.ts' },
    bundle: true, format: 'cjs', platform: 'node', write: false, logLevel: 'silent',
    plugins: [noCheck]
  });
  const m = { exports: {} };
  new Function('module', 'exports', 'require', out.outputFiles[0].text)(m, m.exports, load);
  const v = m.exports;
  // JSON has no Infinity or NaN: they come as {"number": "Infinity"}.
  const cases = JSON.parse(fs.readFileSync(0, 'utf8'),
                           (k, x) => (x && typeof x.number === 'string' ? Number(x.number) : x));
  const keys = s => [...s].sort();
  process.stdout.write(JSON.stringify({
    cost: cases.cost.map(([value, unit]) => v.formatCost(value, unit)),
    number: cases.number.map(value => v.formatNumber(value)),
    bytes: cases.bytes.map(value => v.formatBytes(value)),
    flops: cases.flops.map(([value, unit]) => v.formatFlops(value, unit)),
    share: cases.share.map(value => v.formatShare(value)),
    ms: cases.number.map(value => v.formatMs(value)),
    tables: cases.folds.map(text => v.hloTableLines(v.EditorState.create({ doc: text }))),
    folds: cases.folds.map(text => [...v.braceFoldEnds(text.split('\n'))].sort((a, b) => a[0] - b[0])),
    callers: cases.callers.map(data => keys(v.callerLines(v.readReport(data).provenance))),
    old_callers: cases.old_callers.map(
      data => keys(v.callersOfOldBundles(v.readReport(data).provenance))),
    module_paths: (cases.module_paths || []).map(s => v.modulePath(s)),
    module_trees: (cases.module_trees || []).map(leaves => v.moduleTree(
        new Map(leaves.map(([p, f]) => [p, { ...v.noFigures(), ...f, loops: [f.iterations ?? ''] }])))
      .map(n => [n.path, n.depth, n.flops, n.bytes])),
    module_iterations: (cases.module_trees || []).map(leaves => v.moduleTree(
        new Map(leaves.map(([p, f]) => [p, { ...v.noFigures(), ...f, loops: [f.iterations ?? ''] }])))
      .map(n => [n.path, n.iterations])),
    loop_notes: (cases.loop_notes || []).map(notes => v.loopNote(notes))
  }));
})().catch(e => { console.error(e); process.exit(1); });
"""

VALUES = [
    0,
    1,
    2,
    2.5,
    12,
    192,
    272.0,
    999,
    1000,
    1023,
    1024,
    1536,
    14336,
    65536,
    999_999,
    1e6,
    1_234_567,
    2**20 + 1,
    3 << 30,
    5e9,
    2.5e12,
    5e15,
    1e18,
    1 << 40,
    0.5,
    0.25,
    0.125,
    123.25,
    3.2e-6,
    7.5e-4,
    0.001,
    0.0015,
    2e-9,
    1.5e-3,
    -1,
    -1536,
    -2.5,
    1280,
    2560,
    0.375,
    1.125,
    9.995,
    99950,
    0.00012345,
    1e-5,
    12345.5,
    1 << 60,
    -0.04,
    float("inf"),
    float("nan"),
]
UNITS = ["", "flops", "ops", "bytes", "seconds"]
#: Name stacks as HLO metadata's op_name holds them (the primitive's name last).
NAME_STACKS = [
    "jit(step)/transpose(jvp(Model))/Block_0/Dense_0/dot_general",
    "jit(step)/jvp()/jit(relu)/max",
    "jit(train_step)/jvp(Model)/Model/Block_1/LayerNorm_0/reduce_sum",
    "pjit(f)/while/body/Layer_0/mul",
    "jit(f)/vmap(eqx.nn.MLP)/eqx.nn.Linear/dot_general",
    "jit(f)/cond/branch_1_fun/Dense_0/add",
    "jit(f)/checkpoint/rematted_computation/decoder/layers_0/MlpBlock_0/Dense_0/dot",
    "jit(f)/jit(g)/Model/Dense_0/dot",
    "jit(f)/scope=1/Dense_0/add",
    "jit(f)/jvp(a/b(c/d))/e/add",
    "Dense_0/add",
    "add",
    "",
    "jit(f)/Módulo_0/Capa_0/mul",
    "jit(f)/unbalanced(a/b/c",
    "jit(step)/transpose(jvp(Decoder))/Decoder/block_0/up/dot_general",
    "jit(f)/M/Dense_0/mul;jit(f)/M/Dense_1/mul",
]
#: Leaves of module trees: (path, own figures) pairs.
MODULE_TREES = [
    [["A/B", {"flops": 2.0}], ["A/C", {"flops": 1.0}]],
    [
        ["", {"flops": 50.0, "bytes": 4.0}],
        ["Model/Block_1/Dense_0", {"flops": 10.0}],
        ["Model/Block_0/Dense_0", {"flops": 10.0, "bytes": 2.0, "iterations": "× 8 iterations"}],
        ["Model/Block_0", {"flops": 1.0}],
        ["Model/Block_0/Dense_1", {"flops": 12.0, "iterations": "once + × 8 iterations"}],
        ["Model/b", {"flops": 0.0, "bytes": 3.0}],
        ["Model/B", {"flops": 0.0}],
        ["Head", {"flops": 33.0}],
    ],
    [["", {"flops": 1.0}]],
    [],
]
#: Modules' loop notes, as a node of the tree puts them together.
LOOP_NOTES = [
    [],
    ["", ""],
    ["× 8 iterations"],
    ["× 8 iterations", ""],
    ["", "× 8 iterations", "× 8 iterations"],
    ["× 2 iterations + × 16 iterations", "once + × 2 iterations"],
    ["per iteration (trip count unknown)", "× 3 iterations"],
]
SHARES = [
    0,
    1e-9,
    0.001,
    0.004,
    0.005,
    0.007,
    0.0099,
    0.01,
    0.125,
    0.125000001,
    0.25,
    0.5,
    0.835,
    0.985,
    0.99,
    0.995,
    0.9999,
    1,
    1.5,
]

HLO_LIKE = """HloModule m, entry_computation_layout={(f32[3])->f32[3]}

region_0.4 {
  a = f32[] parameter(0)
  ROOT b = f32[] add(a, a)
}

ENTRY main.5 {
  p = f32[3] parameter(0)
  ROOT r = f32[3] map(p), to_apply=region_0.4
}
"""
HLO_TABLES = """HloModule m
FileNames
1 "f.py"

FunctionNames
1 "f"
FileLocations
1 {file_name_id=1}
StackFrames

ENTRY main {
  ROOT p = f32[] parameter(0)
}
"""
FOLD_TEXTS = [
    HLO_LIKE,
    "",
    "{\n}",
    "}\n{",
    "a {\n  b {\n  }\n  } else {\n  }\n}\n",
    "x {  \n\t}\n",
    "a {\nb\n",
    "{\n{\n}\n",
    "f(\n  {\n  }\n)",
    'FileNames\n1 "a.py"\nother',
    "FileNames\n\n",
    "x\n  FileNames  \nFunctionNames\n2 x\n",
    HLO_TABLES,
]


def _caller(fun, *args):
    return inspect(fun, *args, cache=None)


def _nested(x):
    return _twice(x)


def _twice(x):
    return jnp.sin(x) * 2


def _reports():
    """Bundles whose functions are called from lines outside them (this test's)."""

    def wrapped(x):
        return jnp.cos(_twice(x))

    return [
        bundle.to_json(_caller(_twice, 1.0)),
        bundle.to_json(_caller(wrapped, 2.0)),
        bundle.to_json(inspect(_nested, 3.0, cache=None)),
    ]


@pytest.fixture(scope="module")
def view_answers():
    """The view's answers to the cases, and the cases."""
    node = shutil.which("node")
    if node is None or not (ROOT / "node_modules" / "esbuild").is_dir():
        pytest.skip("needs Node.js and the JavaScript packages (jlpm install)")
    reports = _reports()
    old = [{k: v for k, v in data.items() if k != "callers"} for data in reports]
    cases = {
        "cost": [[v, u] for v in VALUES for u in UNITS],
        "number": VALUES[:-2],
        "bytes": VALUES[:-2],
        "folds": FOLD_TEXTS,
        "flops": [[v, u] for v in VALUES for u in ("FLOP", "ops")],
        "share": SHARES,
        "callers": reports,
        "old_callers": old,
        "module_paths": NAME_STACKS,
        "module_trees": MODULE_TREES,
        "loop_notes": LOOP_NOTES,
    }
    run = subprocess.run(
        [node, "-e", _RUNNER, str(ROOT)],
        input=_json(cases),
        capture_output=True,
        text=True,
        timeout=deadline(120),
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    return json.loads(run.stdout), cases, reports


def _json(cases) -> str:
    """``cases`` as JSON, with infinities and NaN as the runner reads them."""

    def number(v):
        if isinstance(v, float) and not math.isfinite(v):
            return {"number": repr(v).replace("inf", "Infinity").replace("nan", "NaN")}
        if isinstance(v, list):
            return [number(x) for x in v]
        return v

    return json.dumps(
        {
            k: number(v) if k in ("cost", "number", "bytes", "flops", "share") else v
            for k, v in cases.items()
        }
    )


def _differences(pairs):
    return [f"{case!r}: python {py!r}, view {ts!r}" for case, py, ts in pairs if py != ts]


def test_the_view_writes_figures_as_python_does(view_answers):
    answers, cases, _ = view_answers
    python = [cost_names.format_value(v, u) for v, u in cases["cost"]]
    d1 = _differences(zip(cases["cost"], python, answers["cost"]))
    python = [cost_names._number(v) for v in cases["number"]]
    d2 = _differences(zip(cases["number"], python, answers["number"]))
    python = [cost_names.format_bytes(v) for v in cases["bytes"]]
    d3 = _differences(zip(cases["bytes"], python, answers["bytes"]))
    python = [cost_names.format_flops(v, u) for v, u in cases["flops"]]
    d4 = _differences(zip(cases["flops"], python, answers["flops"]))
    python = [cost_names.format_share(v) for v in cases["share"]]
    d5 = _differences(zip(cases["share"], python, answers["share"]))
    python = [cost_names.format_ms(v) for v in cases["number"]]
    differences = d1 + d2 + d3 + d4 + d5 + _differences(zip(cases["number"], python, answers["ms"]))
    assert not differences, "\n".join(differences)


def test_the_view_folds_braces_as_python_does(view_answers):
    answers, cases, _ = view_answers
    python = [
        [[f.start, f.end] for f in sorted(brace_folds(t.split("\n")), key=lambda f: f.start)]
        for t in cases["folds"]
    ]
    assert not _differences(zip(cases["folds"], python, answers["folds"]))
    assert answers["folds"][0] == [[3, 6], [8, 11]]  # the HLO's two computations
    # The source tables at the top of a compiled HLO text, which start folded.
    python = [[[f.start, f.end] for f in table_fold(t.split("\n"))] for t in cases["folds"]]
    view = [[table] if table else [] for table in answers["tables"]]
    assert not _differences(zip(cases["folds"], python, view))
    assert answers["tables"][-1] == [2, 9]


def _figures(f: dict) -> dict:
    return {k: v for k, v in f.items() if k != "iterations"}


def _modules_data(leaves) -> dict:
    """A costs stage's data holding just ``leaves`` as its modules."""
    return {
        "modules": [
            {"path": p, "transcendentals": 0.0, **{"flops": 0.0, "bytes": 0.0, **f}}
            for p, f in leaves
        ],
        "totals": {"flops": 1.0, "transcendentals": 1.0, "bytes accessed": 1.0},
    }


def test_the_view_makes_the_module_tree_as_python_does(view_answers):
    from olympus.module_paths import module_path, module_tree
    from olympus_jupyter.report.costs_view import loop_note, module_rows

    answers, cases, _ = view_answers
    python = [module_path(s) for s in cases["module_paths"]]
    assert not _differences(zip(cases["module_paths"], python, answers["module_paths"]))
    assert answers["module_paths"][0] == "Model/Block_0/Dense_0"
    trees = [
        [
            [n.path, n.depth, n.figures.get("flops", 0.0), n.figures.get("bytes", 0.0)]
            for n in module_tree({p: _figures(f) for p, f in leaves})
        ]
        for leaves in cases["module_trees"]
    ]
    assert not _differences(zip(map(str, cases["module_trees"]), trees, answers["module_trees"]))
    # How each node counts loops, from its modules' notes (module_rows, cost_by_module).
    notes = [loop_note(n) for n in cases["loop_notes"]]
    assert not _differences(zip(map(str, cases["loop_notes"]), notes, answers["loop_notes"]))
    assert notes[3] == "once + × 8 iterations" and notes[1] == ""
    rows = [
        [[r["path"], r["iterations"]] for r in module_rows(_modules_data(leaves))]
        for leaves in cases["module_trees"]
    ]
    assert not _differences(
        zip(map(str, cases["module_trees"]), rows, answers["module_iterations"])
    )
    block = dict(map(tuple, rows[1]))
    assert block["Model/Block_0"] == "once + × 8 iterations" and block["Head"] == ""
    tree = answers["module_trees"][1]
    assert tree[0][:2] == ["Head", 0] and tree[-1][:2] == ["", 0]  # a tie by path; none last


def test_the_view_takes_the_caller_lines_from_the_bundle(view_answers):
    answers, _, reports = view_answers
    for data, view, old_view in zip(reports, answers["callers"], answers["old_callers"]):
        from olympus.provenance import Provenance

        python = sorted(
            f"{f}:{line}" for f, line in caller_lines(Provenance.from_json(data["provenance"]))
        )
        assert python and data["callers"] == sorted(
            [f, line] for f, line in caller_lines(Provenance.from_json(data["provenance"]))
        )
        assert view == python
        # A bundle from before reports carried them: the view's own copy finds the same.
        assert old_view == python


def test_the_view_uses_the_callers_it_is_given(view_answers):
    """The view applies no rule of its own to a bundle that carries ``callers``."""
    node = shutil.which("node")
    data = dict(view_answers[2][0], callers=[[0, 1]])
    cases = {
        "cost": [],
        "number": [],
        "bytes": [],
        "flops": [],
        "share": [],
        "folds": [],
        "callers": [data],
        "old_callers": [],
    }
    run = subprocess.run(
        [node, "-e", _RUNNER, str(ROOT)],
        input=_json(cases),
        capture_output=True,
        text=True,
        timeout=deadline(120),
        check=False,
    )
    assert run.returncode == 0, run.stderr[-3000:]
    assert json.loads(run.stdout)["callers"] == [["0:1"]]
