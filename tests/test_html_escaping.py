"""Nothing that comes from data reaches the HTML as markup.

Data is validated on the way in (``StageReport.from_json`` refuses what does not
follow the bundle's schema) and escaped on the way out: a report read back from
hostile JSON that the schema lets through, a report holding hostile values however
it was made, a comparison of such reports, and the builder all reports' HTML goes
through (:mod:`olympus_jupyter.report.markup`). No element gets an event handler,
no ``<script>`` or foreign element appears, every link stays inside the page, and
the hostile text shows as text.
"""

import dataclasses
import html.parser
import re

import pytest

import olympus.numpy as jnp
from olympus_jupyter import StageReport, compare, inspect
from olympus_jupyter.report import html as html_report
from olympus_jupyter.staging.runner import StageFailure, UserFrame

IMG = "<img src=x onerror=alert(1)>"
SCRIPT = "<script>alert(1)</script>"
QUOTES = 'x" onmouseover="alert(1)'
#: Markup, quotes of both kinds and an entity: what a hostile string holds.
HOSTILE = f"""{IMG}{QUOTES}' onfocus='alert(2)&amp;"""

#: The elements a report's HTML is made of.
REPORT_TAGS = {
    "html",
    "head",
    "meta",
    "title",
    "body",
    "style",
    "div",
    "nav",
    "span",
    "a",
    "details",
    "summary",
    "p",
    "b",
    "code",
    "pre",
    "table",
    "thead",
    "tbody",
    "tr",
    "th",
    "td",
    # A cost figure's note mark ("note 1": a negative figure of XLA's, cost_names.mark).
    "sup",
}
SAFE_ID = re.compile(r"[A-Za-z0-9_-]+")


class Page(html.parser.HTMLParser):
    """The elements, attributes and text of a page."""

    def __init__(self, page: str):
        super().__init__(convert_charrefs=True)
        self.tags: list[str] = []
        self.attrs: list[tuple[str, str | None]] = []
        self.texts: list[str] = []
        self.feed(page)
        self.close()

    def handle_starttag(self, tag, attrs):
        self.tags.append(tag)
        self.attrs.extend(attrs)

    def handle_startendtag(self, tag, attrs):
        self.handle_starttag(tag, attrs)

    def handle_data(self, data):
        self.texts.append(data)

    @property
    def text(self) -> str:
        return "".join(self.texts)


def assert_inert_with_view(page: str, data=None, *shown: str) -> Page:
    """A display's ``text/html`` form or an interactive page: the static HTML is inert
    (:func:`assert_inert`), and the only scripts are the interactive view's two, the
    JSON island (holding ``data``, if given) and the loader."""
    from test_standalone_view import island_and_loader

    at = page.find('<script type="application/json"')
    parsed = assert_inert(page if at < 0 else page[:at], *shown)
    if at >= 0:
        island, _ = island_and_loader(page)
        assert data is None or island == data
    return parsed


def assert_inert(page: str, *shown: str) -> Page:
    """``page`` has only the report's elements, no event handler, no link out of the
    page, ids of safe characters only; each of ``shown`` appears as text."""
    parsed = Page(page)
    assert set(parsed.tags) <= REPORT_TAGS, set(parsed.tags) - REPORT_TAGS
    assert "script" not in parsed.tags and "img" not in parsed.tags
    assert not [a for a, _ in parsed.attrs if a.lower().startswith("on")]
    for name, value in parsed.attrs:
        assert "javascript:" not in (value or "").lower(), (name, value)
        if name == "href":
            assert value.startswith("#") and SAFE_ID.fullmatch(value[1:]), value
        if name == "id":
            assert SAFE_ID.fullmatch(value), value
    for text in shown:
        assert text in parsed.text, text
    return parsed


def poly(x):
    y = jnp.sin(x) * 2
    return y + jnp.cos(y)


@pytest.fixture(scope="module")
def report():
    return inspect(poly, jnp.ones(3), cache=None)


def hostile_json(report) -> dict:
    """``report.to_json()`` with markup and quotes in every string the schema lets
    hold them and a reader could show: names, platforms, reasons, analyses, a
    failure, the source, the texts, op names."""
    data = report.to_json()
    data["name"] = SCRIPT + HOSTILE
    data["platforms"] = ["<b onclick=alert(1)>cpu</b>", HOSTILE]
    data["stages"] = [*data["stages"], "partitioned", "not_a_stage"]
    data["unavailable"] = {"partitioned": HOSTILE, "not_a_stage": HOSTILE}
    data["failure"] = {
        "stage": "trace",
        "type": HOSTILE,
        "message": SCRIPT + HOSTILE,
        "frames": [{"file": HOSTILE, "line": 7, "function": HOSTILE, "code": HOSTILE}],
    }
    data["texts"]["hlo"] += f"\n// {HOSTILE}\n"
    for row in data["stage_table"]:  # readers take titles from their own registry
        row["title"] = HOSTILE
    cost = data["analyses"]["cost"]
    cost["lowered"][HOSTILE] = 1.0
    cost["compiled"][HOSTILE] = 2.0
    data["analyses"]["memory"][f"host_{HOSTILE}_size_in_bytes"] = 10

    model = data["provenance"]
    fn = model["function"]
    fn["name"] = HOSTILE
    file = model["files"][fn["file"]]
    file["path"] = f"/tmp/{HOSTILE}/{HOSTILE}.py"
    file["chunks"] = [
        [
            fn["first_line"],
            "\n".join(
                f"x = '{HOSTILE}'  # {SCRIPT}" for _ in range(fn["first_line"], fn["last_line"] + 1)
            ),
        ]
    ]
    model["frames"] = [[*frame[:5], HOSTILE] for frame in model["frames"]]
    for stage in model["stages"].values():
        stage["ops"]["name"]["values"] = [HOSTILE + v for v in stage["ops"]["name"]["values"]]
        stage["text"] += f"\n// {HOSTILE}"
    return data


def test_a_report_from_hostile_json_renders_inert(report):
    back = StageReport.from_json(hostile_json(report))
    assert back.stages[-1] == "partitioned"  # "not_a_stage" is left out
    # (The interactive page's scripts, its data and loader: tests/test_standalone_view.py.)
    for page in (back.html(), back.html(full=True, standalone=True, interactive=False)):
        parsed = assert_inert(
            page,
            SCRIPT + HOSTILE,
            f"{HOSTILE}:7",
            f"Not available: {HOSTILE}.",
            f"x = '{HOSTILE}'  # {SCRIPT}",
            f"// {HOSTILE}",
            f"host {IMG}",
        )
        assert parsed.tags.count("details") > 7  # the whole report, not an empty page


@pytest.mark.parametrize(
    "field, value",
    [
        ("stages", [QUOTES]),
        ("timings", {QUOTES: 1.0}),
        ("unavailable", {QUOTES: "x"}),
        (
            "failure",
            {
                "stage": "trace",
                "type": "E",
                "message": "m",
                "frames": [{"file": "f.py", "line": IMG, "function": "f", "code": ""}],
            },
        ),
    ],
)
def test_hostile_names_and_numbers_are_refused_on_the_way_in(report, field, value):
    data = report.to_json()
    data[field] = value
    with pytest.raises(ValueError):
        StageReport.from_json(data)


def test_a_failure_frame_shows_its_line_as_text(report):
    # However a report was made, what it holds is escaped on the way out.
    frame = UserFrame(HOSTILE, IMG, HOSTILE, HOSTILE)
    failed = dataclasses.replace(
        report, failure=StageFailure("trace", HOSTILE, SCRIPT, (frame,)), _memo={}
    )
    page = failed.html()
    assert_inert(page, f"{HOSTILE}:{IMG}", SCRIPT)
    assert f":{IMG}</code>" not in page


def test_stage_names_reach_links_only_as_safe_ids(report):
    hostile = dataclasses.replace(report, stages=(QUOTES, "stablehlo"), _memo={})
    head = html_report.header(hostile, "ol1")
    parsed = assert_inert(head, QUOTES)
    hrefs = [v for a, v in parsed.attrs if a == "href"]
    assert hrefs[1] == "#ol1-stablehlo" and hrefs[0].startswith("#ol1-x_22_")


def test_a_comparison_of_hostile_reports_renders_inert(report):
    data = hostile_json(report)
    before = StageReport.from_json(data)
    data["texts"]["hlo"] += f"\n{SCRIPT}\n"
    after = StageReport.from_json(data)
    diff = compare(before, after, labels=(HOSTILE, SCRIPT))
    assert diff.changed_stages() == ("hlo",)
    assert_inert(
        diff.html(),
        SCRIPT + HOSTILE,
        f"{HOSTILE} (<b onclick=alert(1)>cpu</b>, {HOSTILE}) vs {SCRIPT} (",
        f"// {HOSTILE}",
        SCRIPT,
    )


# --- the builder ------------------------------------------------------------------------------


def test_the_builder_escapes_text_and_attribute_values():
    from olympus_jupyter.report.markup import Markup, h

    page = h("p", {"class": QUOTES, "title": HOSTILE}, HOSTILE, Markup("<b>x</b>"), [IMG, None])
    parsed = assert_inert(page, HOSTILE + "x" + IMG)
    assert dict(parsed.attrs) == {"class": QUOTES, "title": HOSTILE}
    assert parsed.tags == ["p", "b"]


@pytest.mark.parametrize(
    "make",
    [
        lambda h: h("script", None, "alert(1)"),
        lambda h: h("img", {"src": "x"}),
        lambda h: h("iframe"),
        lambda h: h("p", {"onclick": "alert(1)"}),
        lambda h: h("p", {"OnMouseOver": "alert(1)"}),
        lambda h: h("p", {'x"': "1"}),
        lambda h: h("p", {"a b": "1"}),
        lambda h: h('p onclick="alert(1)"'),
        lambda h: h("a", {"href": "javascript:alert(1)"}),
        lambda h: h("a", {"href": '#x" onclick="y'}),
        lambda h: h("a", {"href": "https://example.com/"}),
        lambda h: h("style", None, "body{}"),
        lambda h: h("meta", {"http-equiv": "refresh", "content": "0;url=javascript:alert(1)"}),
    ],
)
def test_the_builder_refuses_what_a_static_page_never_needs(make):
    from olympus_jupyter.report.markup import h

    with pytest.raises(ValueError):
        make(h)


def test_templates_escape_each_value_for_where_it_goes():
    from olympus_jupyter.report.markup import Markup, Slot, h, template

    line = template(h("a", {"class": Slot("cls"), "href": Slot("to")}, Slot("text")))
    page = line(cls=QUOTES, to="#ol1-x", text=HOSTILE)
    assert dict(assert_inert(page, HOSTILE).attrs) == {"class": QUOTES, "href": "#ol1-x"}
    assert line(cls="c", to="#x", text=Markup("<b>x</b>")).endswith("<b>x</b></a>")
    with pytest.raises(ValueError, match="in-page"):
        line(cls="c", to="javascript:alert(1)", text="x")
    with pytest.raises(ValueError, match="whole attribute value"):
        template(Markup(f"<p {Slot('attrs')}>"))
    # Slots are named like variables (any such name works), and nothing else.
    assert (
        template(h("b", {"id": Slot("type")}, Slot("str")))(type="t", str="<")
        == '<b id="t">&lt;</b>'
    )
    for bad in ("class", "_l0", "Markup", "a-b", "a b", "", 3):
        with pytest.raises(ValueError):
            Slot(bad)
    # Data never holds a slot's marker (NUL): it is written as U+FFFD.
    shape = h("p", {"title": "\x00a\x00"}, "\x00b\x00", Slot("c"))
    assert template(shape)(c="<") == '<p title="\ufffda\ufffd">\ufffdb\ufffd&lt;</p>'


def test_anchor_ids_hold_only_safe_characters():
    from olympus_jupyter.report.markup import anchor_id, fragment

    for part in (QUOTES, HOSTILE, "javascript:alert(1)", "ü", " ", 3, -1):
        made = anchor_id("ol1", part)
        assert SAFE_ID.fullmatch(made) and anchor_id(made) == made
        assert fragment("ol1", part) == "#" + made
    assert anchor_id("ol1", QUOTES) != anchor_id("ol1", QUOTES.replace('"', "'"))


# --- the widgets ---------------------------------------------------------------------------------


def test_the_stepper_shows_a_hostile_error_as_text():
    from olympus_jupyter.frontends.stepper import Stepper

    def bad(x):
        raise ValueError(SCRIPT + HOSTILE)

    stepper = Stepper(bad, 1.0)
    assert stepper.next_step() is None
    assert_inert(stepper.explanation.value, SCRIPT + HOSTILE)
    assert_inert(stepper.progress.value, "1. Trace (stage out)")
