"""The interactive view outside the JupyterLab extension: what the HTML carries.

A report's ``text/html`` form (and the standalone page ``report.save()`` writes) is
the static HTML, then the report's data as a JSON island and a loader that mounts
the extension's own view (``olympus_jupyter/static/viewer.js``) where scripts run.
These tests read the HTML as a browser's parser would; the browser tests
(``tests/browser/test_view_outside_lab.py``) run it.
"""

from __future__ import annotations

import html.parser
import json
import re

import orjson
import pytest

import olympus.numpy as jnp
from olympus_jupyter import StageReport, inspect
from olympus_jupyter.report import interactive
from olympus_jupyter.report.data import MEDIA_TYPE
from olympus_jupyter.report.output_cap import capped_forms, output_size

from built_view import needs_view

pytestmark = needs_view

#: Text that would end a script element, open a comment in one, or start a new one.
BREAKOUT = "</script><script>window.__pwned=1</script><!--<script>"


class Page(html.parser.HTMLParser):
    """Elements, scripts (with their text, as a browser reads script data) and text."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.scripts: list[tuple[dict, str]] = []
        self.texts: list[str] = []
        self._script: dict | None = None
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        if tag == "script":
            self._script = dict(attrs)
            self.scripts.append((self._script, ""))

    def handle_endtag(self, tag):
        if tag == "script":
            self._script = None

    def handle_data(self, data):
        if self._script is not None:
            attrs, text = self.scripts[-1]
            self.scripts[-1] = (attrs, text + data)
        else:
            self.texts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.texts)


def poly(x):
    """A docstring."""
    y = jnp.sin(x) * 2
    return y + jnp.cos(y)


def hostile(x):
    """</script><script>window.__pwned=1</script><!--<script>"""
    label = "</script><script>window.__pwned=1</script>"
    return jnp.sin(x) * len(label)


hostile.__name__ = hostile.__qualname__ = BREAKOUT


@pytest.fixture(scope="module")
def report():
    return inspect(poly, jnp.ones(3), cache=None)


@pytest.fixture(scope="module")
def hostile_report():
    return inspect(hostile, jnp.ones(3), cache=None)


def island_and_loader(page: str):
    """The page's two scripts: the JSON island's data and the loader's attributes and code."""
    scripts = Page(page).scripts
    assert len(scripts) == 2, [a for a, _ in scripts]
    (island_attrs, island), (loader_attrs, loader) = scripts
    assert island_attrs["type"] == "application/json"
    assert loader_attrs.get("data-olympus-loader") == island_attrs["data-olympus-bundle"]
    assert "type" not in loader_attrs
    return json.loads(island), loader


# -- the display form ------------------------------------------------------------------


def test_the_html_form_is_the_static_html_then_the_data_and_the_view(report):
    form = report._repr_mimebundle_()["text/html"]
    # What shows where no script runs: the static HTML, its texts uncoloured (the
    # view colours them where scripts run) and unstyled (no style sheet there either).
    static = report.html(highlight=False, unstyled=True)
    assert form.startswith(static)
    assert static != report.html() and static != report.html(highlight=False)
    assert "<script" not in static
    data, loader = island_and_loader(form)
    assert data == report._repr_mimebundle_()[MEDIA_TYPE]  # the data the extension reads
    assert interactive.viewer().packed in loader  # the view, carried in the output
    assert "DecompressionStream" in loader


def test_the_static_html_reads_where_scripts_are_stripped(report):
    """As JupyterLab's sanitizer does to an untrusted output: every script goes, with
    its content; what is left is the static report, whole."""
    form = report.form("text/html")
    stripped = re.sub(r"<script\b[^>]*>.*?</script>", "", form, flags=re.S)
    assert stripped == report.html(highlight=False, unstyled=True)
    text = Page(stripped).text
    for title in ("Source", "olympuspr", "StableHLO", "Compiled HLO", "y = jnp.sin(x) * 2"):
        assert title in text


def test_the_static_html_reads_line_by_line_with_no_style_sheet(report):
    """GitHub, and JupyterLab's sanitizer in an untrusted notebook, drop the style sheet
    too: each source and stage line is still a line of its own, numbered, and each op
    names its source line beside it."""
    form = report.form("text/html")
    bare = re.sub(r"<(script|style)\b[^>]*>.*?</\1>", "", form, flags=re.S)
    lines = Page(bare).text.split("\n")
    source = [line for line in lines if "y = jnp.sin(x) * 2" in line]
    assert len(source) == 1 and "return y + jnp.cos(y)" not in source[0]
    assert re.match(r"\s*\d+  ", source[0]) and "olympuspr: " in source[0]
    sine = [line for line in lines if re.search(r"= stablehlo\.sine ", line)]
    assert sine and all(re.match(r"\s*\d+  ", line) for line in sine)
    assert all(
        f"test_standalone_view.py:{poly.__code__.co_firstlineno + 2} (poly)" in line
        for line in sine
    )


def test_the_source_tables_are_shut_in_the_static_html_as_in_the_view(report):
    """An HLO text's FileNames ... StackFrames list every file on the traced call
    stacks: in a notebook, the kernel's and the frontend's own (ipykernel, marimo's
    runtime). The display's static HTML folds them shut under their first line, as
    the view does (and the styled HTML of report.html())."""
    for static in (report.html(highlight=False, unstyled=True), report.html()):
        shut = re.findall(
            r'<details class="ol-fold"><summary>(.*?)</summary>(.*?)</details>', static, re.S
        )
        tables = [
            body for summary, body in shut if Page(summary).text.strip().endswith("FileNames")
        ]
        assert tables, "no FileNames folded shut"
        body = Page(tables[0]).text
        assert "StackFrames" in body and "test_standalone_view.py" in body
        outside = re.sub(r'<details class="ol-fold">.*?</details>', "", static, flags=re.S)
        assert "StackFrames" not in outside


def test_report_data_cannot_end_the_island_or_run(hostile_report):
    form = hostile_report.form("text/html")
    static = hostile_report.html(highlight=False, unstyled=True)
    # Only the two scripts Olympus writes; the data's markup is text in the static
    # HTML and JSON in the island.
    page = Page(form)
    assert page.tags.count("script") == 2
    assert BREAKOUT in page.text
    island = form[len(static) :].split("</script>", 1)[0]
    assert "<" not in island.split(">", 1)[1]  # "<" is written \u003c
    data, _ = island_and_loader(form)
    assert data["name"] == BREAKOUT  # and reads back as it was
    source = "".join(c[1] for f in data["provenance"]["files"] for c in f["chunks"])
    assert 'label = "</script><script>window.__pwned=1</script>"' in source


def test_island_json_escapes_every_less_than_sign():
    text = json.dumps({"a": "</script></SCRIPT ><!-- <script", "b": ["<", "x<y"]})
    safe = interactive.island_json(text)
    assert "<" not in safe and json.loads(safe) == json.loads(text)


def test_the_loader_and_the_view_are_safe_inside_a_script_element():
    assert "<" not in interactive._LOADER
    code = interactive.VIEWER_PATH.read_text(encoding="ascii").lower()
    for bad in ("<script", "</script", "<!--"):
        assert bad not in code
    # The view loads nothing: no network call in the bundle.
    for call in ("xmlhttprequest", "fetch(", "websocket", "import("):
        assert call not in code, call


def test_a_report_shown_twice_reuses_its_forms(report):
    assert report._repr_mimebundle_()["text/html"] is report._repr_mimebundle_()["text/html"]


def test_the_data_is_serialized_once_for_the_cap_and_the_island(monkeypatch):
    calls = []

    def counting(real):
        def dumps(obj, *args, **kwargs):
            if isinstance(obj, dict) and obj.get("schema") == "olympus.stages":
                calls.append(1)
            return real(obj, *args, **kwargs)

        return dumps

    report = inspect(poly, jnp.ones(3), cache=None)
    for module in (json, orjson):  # orjson writes it; json where orjson cannot
        monkeypatch.setattr(module, "dumps", counting(module.dumps))
    forms = report._repr_mimebundle_()
    assert "data-olympus-bundle" in forms["text/html"]
    assert len(calls) == 1


# -- the output cap -----------------------------------------------------------------------


def long_program(x):
    for _ in range(300):
        x = jnp.tanh(x) * 1.5 + jnp.sin(x)
    return x


def test_a_capped_output_embeds_the_capped_data_and_the_view():
    report = inspect(long_program, jnp.ones((4, 4)), cache=None)
    limit = 1_200_000
    assert output_size(report.forms()) > limit
    forms = capped_forms(report, limit=limit)
    assert output_size(forms) <= limit
    data, _ = island_and_loader(forms["text/html"])
    assert data == json.loads(json.dumps(forms[MEDIA_TYPE]))  # the capped data, the same
    assert "capped at 1.2 MB" in data["notes"][-1]
    StageReport.from_json(data)  # a valid report


def test_a_cap_too_small_for_the_view_keeps_the_static_html():
    report = inspect(long_program, jnp.ones((4, 4)), cache=None)
    forms = capped_forms(report, limit=300_000)
    assert output_size(forms) <= 300_000
    assert "<script" not in forms["text/html"]


# -- the standalone page ------------------------------------------------------------------


def test_the_saved_page_is_interactive_and_offline(report, tmp_path):
    page = open(report.save(tmp_path / "r.html"), encoding="utf-8").read()
    assert page.startswith("<!DOCTYPE html>") and page.endswith("</script></body></html>")
    data, _ = island_and_loader(page)
    assert data == report.to_json()  # everything, uncapped
    parsed = Page(page)
    urls = re.findall(r'(?:src|href)="([^"]*)"', page)
    assert all(u.startswith("#") for u in urls), urls  # in-page links only
    assert not set(parsed.tags) & {"link", "iframe", "img", "object", "embed"}
    static = open(report.save(tmp_path / "s.html", interactive=False), encoding="utf-8").read()
    assert "<script" not in static


def test_html_standalone_is_the_saved_page(report):
    page = report.html(standalone=True)
    assert "data-olympus-loader" in page and "<body>" in page
    assert "<script" not in report.html(standalone=True, interactive=False)
    assert "<script" not in report.html()  # the fragment stays static
    assert "data-olympus-loader" in report.html(interactive=True)


def test_without_the_built_view_the_forms_are_static(monkeypatch):
    monkeypatch.setattr(interactive, "viewer", lambda: None)
    monkeypatch.setattr(interactive, "_empty_tail", lambda: "")
    report = inspect(poly, jnp.ones(3), cache=None)
    assert report.form("text/html") == report.html()
    assert "<script" not in report.html(standalone=True)
    assert "<script" not in capped_forms(report)["text/html"]
