"""Hostile saved notebooks and standalone pages, opened in a real browser.

A program whose docstring, comments, string constants, scope names, static value,
function name, exception and even its folder's name carry markup gets a real report;
crafted bundles carry markup in every free-text field of the schema (valid ones, and
ones the schema refuses). They go into a saved notebook's outputs exactly as the
``%olympus_lower`` magic writes them (``display_data``: the JSON bundle, the static
HTML, the text), and into the standalone pages ``report.save`` and the command line
write. Opened untrusted and trusted in JupyterLab, and from ``file://``: nothing
from the data runs, what is shown is shown as text, no ``javascript:`` link exists,
and the tab still answers.
"""

from __future__ import annotations

import copy
import importlib
import json
import os
import pathlib
import subprocess
import sys
import textwrap

import nbformat
import pytest
from nbformat.sign import NotebookNotary

import olympus.numpy as jnp
import olympus_jupyter
from olympus_jupyter.report.validate import BundleError, check_bundle

from labserver import artifacts_dir, set_layout
from deadlines import deadline, ms

MIME = "application/vnd.olympus.stages+json"
DIFF_MIME = "application/vnd.olympus.diff+json"

IMG = '<img src=x onerror="window.__pwned=1">'
SCRIPT = "<script>window.__pwned=1</script>"
SVG = '<svg onload="window.__pwned=1">'
JS = "javascript:window.__pwned=1"
LINK = '<a href="javascript:window.__pwned=1">click</a>'
BREAKOUT = '"><img src=x onerror=window.__pwned=1>'  # out of an attribute value
MIXED_CASE_JS = " JaVaScRiPt:window.__pwned=1"
IFRAME = '<iframe srcdoc="<script>parent.__pwned=1</script>"></iframe>'
PAYLOADS = [IMG, SCRIPT, SVG, JS, LINK, BREAKOUT, MIXED_CASE_JS, IFRAME]
ALL = " ".join(PAYLOADS)

#: The folder that holds the hostile program. A file name cannot hold "/", so no
#: closing tag: an opening one, and an image with a handler.
FOLDER = '<img src=x onerror="window.__pwned=1"><b>x<b>'

PROGRAM = textwrap.dedent('''
    """<script>window.__pwned=1</script>: a module with markup everywhere."""
    import jax
    import olympus.numpy as jnp


    class Config:
        """A static argument whose repr carries markup."""

        def __init__(self, tag):
            self.tag = tag

        def __repr__(self):
            return f'Config(<img src=x onerror="window.__pwned=1"> {self.tag!r})'

        def __hash__(self):
            return hash(self.tag)

        def __eq__(self, other):
            return isinstance(other, Config) and other.tag == self.tag


    def hostile(x, cfg):
        """<img src=x onerror="window.__pwned=1"> <script>window.__pwned=1</script>
        <svg onload="window.__pwned=1"> <a href="javascript:window.__pwned=1">link</a>"""
        # <img src=x onerror="window.__pwned=1"> <script>window.__pwned=1</script>
        label = '<svg onload="window.__pwned=1"><a href="javascript:window.__pwned=1">x</a>'
        with jax.named_scope('<img src=x onerror="window.__pwned=1">'):
            y = jnp.sin(x) * len(label)  # javascript:window.__pwned=1
        with jax.named_scope("javascript:window.__pwned=1"):
            y = y + len(cfg.tag)
        return jnp.tanh(y)


    hostile.__name__ = hostile.__qualname__ = 'hostile<svg onload="window.__pwned=1">'


    def for_the_command_line(x):
        """<script>window.__pwned=1</script> (the command line passes arrays only)"""
        return hostile(x, Config("<script>window.__pwned=1</script>"))


    class HostileError(Exception):
        pass


    HostileError.__name__ = HostileError.__qualname__ = "Error<script>window.__pwned=1</script>"


    def fails(x):
        """javascript:window.__pwned=1"""
        # <img src=x onerror="window.__pwned=1">
        raise HostileError('<img src=x onerror="window.__pwned=1"> javascript:window.__pwned=1')
''')

MODULE = "olympus_hostile_program"


# -- the reports ----------------------------------------------------------------------


@pytest.fixture(scope="module")
def program(tmp_path_factory):
    """The hostile program's folder (its name holds markup) and module."""
    base = tmp_path_factory.mktemp("hostile")
    try:
        folder = base / FOLDER
        folder.mkdir()
    except OSError:  # a file system that refuses such a name
        folder = base / "markup-not-allowed-here"
        folder.mkdir()
    (folder / f"{MODULE}.py").write_text(PROGRAM)
    sys.path.insert(0, str(folder))
    try:
        module = importlib.import_module(MODULE)
    finally:
        sys.path.remove(str(folder))
    yield folder, module
    sys.modules.pop(MODULE, None)


@pytest.fixture(scope="module")
def reports(program):
    """Real reports of the hostile program: one that stages, one that fails."""
    _, m = program
    good = olympus_jupyter.inspect(
        m.hostile, jnp.ones(3), m.Config(SCRIPT), static_argnums=1, cache=None
    )
    assert good.ok, good.failure
    failing = olympus_jupyter.inspect(m.fails, jnp.ones(3), cache=None)
    assert not failing.ok and "<script>" in failing.failure.error_type
    # The markup did get into the report: its folder, docstring, scopes, name.
    data = good.to_json()
    assert data["name"].startswith("hostile<svg")
    assert (
        FOLDER in data["provenance"]["files"][0]["path"]
        or "markup-not" in data["provenance"]["files"][0]["path"]
    )
    source = "".join(c[1] for c in data["provenance"]["files"][0]["chunks"])
    assert IMG in source and SCRIPT in source
    scopes = data["provenance"]["stages"]["stablehlo"]["ops"]["name_stack"]["values"]
    assert any(IMG in s for s in scopes) and any(JS in s for s in scopes)
    return good, failing


def column(count, value):
    """A dictionary-encoded column that gives every op ``value``."""
    return {"values": [value], "codes": ",".join(["0"] * count)}


def payload_everywhere(data):
    """``data`` with markup in every free-text field the schema has (the ones whose
    form it fixes, stage names, kinds, runs, keep theirs): still a valid bundle."""
    d = copy.deepcopy(data)
    d["name"] = ALL
    d["platforms"] = [IMG, "cpu"]
    for k, row in enumerate(d["stage_table"]):
        row["title"] = f"{PAYLOADS[k % len(PAYLOADS)]} {row['title']}"[:256]
        row["label"] = PAYLOADS[(k + 1) % len(PAYLOADS)][:64]
        row["unit"] = PAYLOADS[(k + 2) % len(PAYLOADS)][:64]
    d["failure"] = {
        "stage": "cost",
        "type": SCRIPT,
        "message": ALL,
        "frames": [{"file": f"/{FOLDER}/{IMG}.py", "line": 1, "function": SVG, "code": LINK}],
    }
    d["texts"].pop("hlo", None)  # so that its reason for being absent is shown
    d["unavailable"] = {"hlo": ALL, "cost": IMG, "memory": SCRIPT}
    d["analyses"] = {
        "cost": {"lowered": {IMG: 1.0, SCRIPT: 2.0}, "compiled": {SVG: 3.0, LINK: 4.0}},
        # (The text form reads the peak: a bundle without it cannot be
        # shown as text by Python today.)
        "memory": {BREAKOUT: 5.0, JS: 6.0, "peak_memory_in_bytes": 64},
    }
    prov = d["provenance"]
    prov["function"]["name"] = ALL
    prov["platforms"] = [SVG]
    for f in prov["files"]:
        f["path"] = f"/{FOLDER}/{IMG}{SCRIPT}.py"
        f["chunks"] = [[first, text + f"# {ALL}\n"] for first, text in f["chunks"]]
    prov["frames"] = [
        [*frame[:5], f"{frame[5]}{PAYLOADS[k % len(PAYLOADS)]}"]
        for k, frame in enumerate(prov["frames"])
    ]
    prov["unavailable"] = {"partitioned": ALL}
    for name, stage in prov["stages"].items():
        stage["text"] += "\n" + "\n".join(PAYLOADS)
        ops = stage["ops"]
        for key in ("name", "name_stack", "label"):
            if isinstance(ops.get(key), dict):
                ops[key]["values"] = [
                    f"{PAYLOADS[k % len(PAYLOADS)]}{v}" for k, v in enumerate(ops[key]["values"])
                ]
        if isinstance(ops.get("types"), dict):
            ops["types"]["values"] = [[IMG, *v] for v in ops["types"]["values"]]
        ops["sharding"] = column(ops["count"], IMG)
        ops["collective"] = column(ops["count"], SVG)
        for comp in stage.get("computations") or []:
            comp["name"] = f"{comp['name']}{SCRIPT}"
        stage["arg_shardings"] = [LINK]
        stage["result_shardings"] = [BREAKOUT]
        stage["notes"] = PAYLOADS
    check_bundle(d)  # valid: the view renders it
    return d


def refused_bundles(data):
    """Bundles with markup where the schema does not allow it, each with what the
    refusal names (shown as text)."""
    out = []

    def bad(change, shows):
        d = copy.deepcopy(data)
        change(d)
        with pytest.raises((BundleError, ValueError)):
            olympus_jupyter.StageReport.from_json(d)
        out.append((d, shows))

    def stage_name(d):
        d["stages"][1] = IMG
        d["stage_table"][1]["name"] = IMG

    bad(stage_name, "/stages/1")
    bad(lambda d: d["timings"].update({SCRIPT: 1.0}), SCRIPT)  # named in the message
    bad(lambda d: d["stage_table"][0].update(kind=SVG), "/stage_table/0/kind")
    bad(lambda d: d["stage_table"][2].update(title=IMG * 10), "/stage_table/2/title")
    bad(
        lambda d: d["provenance"]["lines"][0].update(ops={"compiled": JS}),
        "/provenance/lines/0/ops/compiled",
    )
    bad(lambda d: d.update(schema=IMG), json.dumps(IMG))  # quoted as JSON
    bad(lambda d: d.update(version=SCRIPT), SCRIPT)
    return out


def display_data(bundle):
    """An output as the ``%olympus_lower`` magic writes it (IPython's ``display``)."""
    return nbformat.v4.new_output("display_data", data=bundle, metadata={})


@pytest.fixture(scope="module")
def hostile_outputs(reports):
    """Every hostile output; how many stage views they make; what each refusal shows."""
    good, failing = reports
    crafted = payload_everywhere(good.to_json())
    crafted_report = olympus_jupyter.StageReport.from_json(crafted)
    diff = olympus_jupyter.compare(good, crafted_report, labels=(IMG, SCRIPT))
    outputs, views = [], 0
    for report in (good, failing, crafted_report):
        bundle = report._repr_mimebundle_()
        assert set(bundle) == {MIME, "text/html", "text/plain"}
        outputs.append(display_data(bundle))
        # The same report as a frontend without this extension shows it: its HTML.
        outputs.append(
            display_data({"text/html": bundle["text/html"], "text/plain": bundle["text/plain"]})
        )
        views += 1
    outputs.append(display_data({MIME: crafted, "text/plain": ALL}))
    views += 1
    diff_bundle = diff._repr_mimebundle_()
    assert DIFF_MIME in diff_bundle
    outputs.append(display_data(diff_bundle))
    refused = refused_bundles(good.to_json())
    for bundle, _ in refused:
        outputs.append(display_data({MIME: bundle, "text/plain": ALL}))
        views += 1
    return outputs, views, [shows for _, shows in refused]


def hostile_notebook(path, outputs, *, notary=None):
    nb = nbformat.v4.new_notebook()
    nb.metadata["kernelspec"] = {
        "name": "python3",
        "display_name": "Python 3",
        "language": "python",
    }
    for i, output in enumerate(outputs):
        cell = nbformat.v4.new_code_cell(f"%olympus_lower hostile(x)  # {i}")
        cell.outputs = [output]
        nb.cells.append(cell)
    if notary is not None:
        # As `jupyter trust` does, in the test server's own signature database.
        NotebookNotary(**notary).sign(nb)
    nbformat.write(nb, path)
    return path.name


# -- what every page must show --------------------------------------------------------

#: Every element under ``scope`` that runs or loads something from an attribute: an
#: event handler, a ``javascript:`` URL (as a browser reads it: case and whitespace
#: do not count), a frame's document, an image, a script, an embedded document.
ACTIVE = """scope => {
  const root = scope ? document.querySelectorAll(scope) : [document.documentElement];
  const found = [];
  const url = v => v.replace(/[\\u0000-\\u0020]/g, '').toLowerCase();
  for (const top of root) {
    for (const el of [top, ...top.querySelectorAll('*')]) {
      const tag = el.tagName.toLowerCase();
      // (CodeMirror's widget buffers are images with no source: they load nothing.)
      const loads = el.hasAttribute('src') || el.hasAttribute('srcset') ||
        el.hasAttribute('href') || el.hasAttribute('xlink:href');
      if (['script', 'iframe', 'frame', 'object', 'embed', 'base', 'form',
           'link'].includes(tag) || (['img', 'image', 'video', 'audio'].includes(tag) && loads) ||
          (tag === 'meta' && el.hasAttribute('http-equiv'))) {
        found.push(el.outerHTML.slice(0, 120));
      }
      for (const a of el.attributes) {
        const name = a.name.toLowerCase();
        if (name.startsWith('on') || name === 'srcdoc') {
          found.push(tag + '[' + name + ']');
        }
        if (['href', 'xlink:href', 'src', 'action', 'formaction', 'data'].includes(name) &&
            /^(javascript|vbscript|data):/.test(url(a.value))) {
          found.push(tag + '[' + name + '=' + a.value.slice(0, 60) + ']');
        }
      }
    }
  }
  return found;
}"""


def assert_inert(page, scope=None):
    """Nothing from the data ran or became an element that runs or loads anything."""
    assert page.evaluate("() => window.__pwned") is None
    assert page.evaluate("() => parent.__pwned") is None
    assert page.evaluate(ACTIVE, scope) == []


def assert_responsive(page):
    start = page.evaluate("() => performance.now()")
    assert page.evaluate("() => 1 + 1") == 2  # the tab answers, at once
    assert page.evaluate("() => performance.now()") - start < 1000


def all_text(page, selector):
    """The text of every match (`textContent`: cells out of sight are not laid out)."""
    return page.evaluate(
        "s => [...document.querySelectorAll(s)].map(e => e.textContent).join('\\n')", selector
    )


# -- saved notebooks ------------------------------------------------------------------


@pytest.fixture(scope="module")
def hostile_nbs(notebooks_dir, hostile_outputs, lab):
    outputs, _, _ = hostile_outputs
    return {
        trusted: hostile_notebook(
            notebooks_dir / f"hostile-{'trusted' if trusted else 'untrusted'}.ipynb",
            outputs,
            notary=lab.notary if trusted else None,
        )
        for trusted in (False, True)
    }


@pytest.mark.parametrize("trusted", [False, True], ids=["untrusted", "trusted"])
def test_a_hostile_saved_notebook_runs_nothing_and_shows_text(
    page, lab, hostile_nbs, hostile_outputs, trusted
):
    outputs, views, refusals = hostile_outputs
    page.goto(lab.page_url(f"lab/tree/{hostile_nbs[trusted]}?reset"))
    page.wait_for_selector(".jp-Notebook .jp-Cell", timeout=ms(60))
    # Every output is rendered: JupyterLab need not draw cells out of sight.
    page.wait_for_function(
        "n => document.querySelectorAll('.jp-Notebook .jp-Cell').length === n",
        arg=len(outputs),
        timeout=ms(60),
    )
    cells = page.locator(".jp-Notebook .jp-Cell")
    for i in range(len(outputs)):
        cells.nth(i).scroll_into_view_if_needed()
        cells.nth(i).locator(".jp-OutputArea-output").first.wait_for(timeout=ms(30))
    page.wait_for_function(
        "n => document.querySelectorAll('[data-olympus-viewer][data-olympus-rendered]')"
        ".length === n && document.querySelector('.olympus-diff[data-olympus-rendered]')",
        arg=views,
        timeout=ms(60),
    )
    assert (
        page.evaluate(
            "() => window.jupyterapp.shell.currentWidget.content.model.cells.get(0).trusted"
        )
        is trusted
    )
    assert_inert(page, ".jp-OutputArea")

    # Shown, as text: the function's name, its docstring (in the source view),
    # a crafted stage title, the reports' HTML forms, the refusals.
    first = page.locator("[data-olympus-viewer]").first
    assert 'hostile<svg onload="window.__pwned=1">' in first.inner_text()
    assert IMG in all_text(page, "[data-olympus-viewer] .cm-content")
    assert IMG in all_text(page, ".olympus-panel-title")
    html = all_text(page, ".jp-RenderedHTMLCommon")
    assert IMG in html and SCRIPT in html and JS in html
    errors = page.evaluate(
        "() => [...document.querySelectorAll('[data-olympus-error]')].map(e => e.textContent)"
    )
    assert len(errors) == len(refusals)
    for shows in refusals:
        assert any(shows in e for e in errors), (shows, errors)
    assert all(
        e.startswith(("Not a readable Olympus report", "Not an Olympus report", "Report version"))
        for e in errors
    ), errors
    diff = all_text(page, ".olympus-diff")
    assert IMG in diff and SCRIPT in diff  # its labels

    # Used, it stays inert: a source line linked to its ops (whose scopes hold
    # markup), the stage tabs of the crafted report, a cell clicked.
    first.scroll_into_view_if_needed()
    set_layout(first, "side-by-side")
    line = first.locator('[data-stage-panel="source"] .cm-line', has_text="jnp.sin(x)")
    line.hover()
    line.click()
    first.locator('[data-stage-panel="stablehlo"] .cm-line.olympus-linked').first.wait_for()
    for tab in page.locator("[data-olympus-viewer]").nth(2).locator('[role="tab"]').all():
        tab.click()
    kind = "trusted" if trusted else "untrusted"
    page.screenshot(path=str(artifacts_dir() / f"hostile-notebook-{kind}.png"))
    assert_inert(page, ".jp-OutputArea")
    assert_responsive(page)
    cell = cells.nth(3)
    cell.scroll_into_view_if_needed()
    cell.locator(".jp-InputArea").click()
    assert "jp-mod-selected" in cell.get_attribute("class")
    assert_inert(page, ".jp-OutputArea")


# -- standalone pages -----------------------------------------------------------------


@pytest.fixture(scope="module")
def standalone_pages(program, reports):
    """The hostile program's standalone pages, written in its folder: by
    ``report.save`` (the real reports and the crafted one) and by the command line."""
    folder, _ = program
    good, failing = reports
    crafted = olympus_jupyter.StageReport.from_json(payload_everywhere(good.to_json()))
    pages = {
        "save": good.save(folder / "saved.html"),
        "save-failure": failing.save(folder / "saved-failure.html"),
        "save-crafted": crafted.save(folder / "saved-crafted.html"),
    }
    env = dict(
        os.environ,
        PYTHONPATH=os.pathsep.join(
            filter(
                None,
                [
                    str(pathlib.Path(olympus_jupyter.__file__).resolve().parents[1]),
                    os.environ.get("PYTHONPATH"),
                ],
            )
        ),
    )
    for name, target, status in (("cli", "for_the_command_line", 0), ("cli-failure", "fails", 1)):
        out = folder / f"{name}.html"
        proc = subprocess.run(
            [
                sys.executable,
                "-m",
                "olympus_jupyter",
                "report",
                f"{MODULE}:{target}",
                "--arg",
                "f32[3]",
                "-o",
                str(out),
            ],
            cwd=folder,
            env=env,
            capture_output=True,
            text=True,
            timeout=deadline(300),
        )
        assert proc.returncode == status, proc.stderr
        pages[name] = str(out)
    return pages


PAGES = ["save", "save-failure", "save-crafted", "cli", "cli-failure"]


@pytest.mark.parametrize("name", PAGES)
def test_a_hostile_standalone_page_runs_nothing_and_shows_text(page, standalone_pages, name):
    path = pathlib.Path(standalone_pages[name])
    page.goto(path.as_uri())
    page.wait_for_selector(".olympus-report")
    assert page.evaluate("() => document.scripts.length") == 0
    assert_inert(page)
    hrefs = page.evaluate(
        "() => [...document.querySelectorAll('[href]')].map(a => a.getAttribute('href'))"
    )
    assert hrefs and all(h.startswith("#") for h in hrefs), hrefs  # in-page links only
    text = page.locator("body").inner_text()
    shown = {
        "save": [IMG, SCRIPT, 'hostile<svg onload="window.__pwned=1">'],
        "save-failure": [IMG, "Error<script>window.__pwned=1</script>", JS],
        "save-crafted": PAYLOADS,
        "cli": [SCRIPT, IMG],
        "cli-failure": [IMG, "Error<script>window.__pwned=1</script>", JS],
    }[name]
    for payload in shown:
        assert payload.strip() in text, (payload, name)
    # Used, it stays inert: every in-page link followed, every fold opened.
    for link in page.locator("a[href^='#']").all()[:40]:
        if link.is_visible():
            link.click()
    page.evaluate("() => document.querySelectorAll('details').forEach(d => d.open = true)")
    page.screenshot(path=str(artifacts_dir() / f"hostile-page-{name}.png"))
    assert_inert(page)
    assert_responsive(page)


def test_the_checks_see_markup_that_escaping_missed(page, standalone_pages, tmp_path):
    """The checks above are not empty: the saved page with its function's name left
    unescaped (one missed escape) runs the name's markup, and they say so."""
    html = pathlib.Path(standalone_pages["save"]).read_text(encoding="utf-8")
    escaped = 'hostile&lt;svg onload="window.__pwned=1"&gt;'
    assert escaped in html
    broken = tmp_path / "missed-escape.html"
    broken.write_text(
        html.replace(escaped, 'hostile<svg onload="window.__pwned=1">'), encoding="utf-8"
    )
    page.goto(broken.as_uri())
    page.wait_for_selector(".olympus-report")
    assert page.evaluate("() => window.__pwned") == 1
    assert any("onload" in found for found in page.evaluate(ACTIVE, None))
    with pytest.raises(AssertionError):
        assert_inert(page)
