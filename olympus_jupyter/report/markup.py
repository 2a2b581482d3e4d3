"""HTML built in one place: every string that goes into a page is escaped here.

The report's forms (and the widgets' status lines) build their HTML with
:func:`h`, the Python twin of the extension's ``h()`` in ``src/dom.ts``: text
children and attribute values are escaped, tag and attribute names are checked,
links may only point inside the page. What is already HTML (the output of
:func:`h` itself, a highlighter's spans, a constant style sheet) is wrapped in
:class:`Markup` to say so; a plain ``str`` is always text. Loops that make an
element per line of a long text fill a :func:`template` (an ``h()`` shape with
:class:`Slot` holes) instead: the same escaping, checked once.

>>> h("p", {"class": "note"}, "Not available: ", "<b>tpu</b>")
Markup('<p class="note">Not available: &lt;b&gt;tpu&lt;/b&gt;</p>')
>>> h("a", {"href": fragment("ol1", "x\\" onclick=\\"1")}, "link")
Markup('<a href="#ol1-x_22__20_onclick_3d__22_1">link</a>')
>>> h("a", {"href": "javascript:alert(1)"}, "x")
Traceback (most recent call last):
...
ValueError: href must be an in-page link ('#id', made by fragment()), got 'javascript:alert(1)'.
"""

from __future__ import annotations

import keyword
import re
from collections.abc import Callable, Iterable, Mapping
from typing import Any

__all__ = [
    "Markup",
    "escape",
    "h",
    "head_row",
    "concat",
    "join",
    "tags",
    "Slot",
    "template",
    "anchor_id",
    "fragment",
    "ascii_html",
]


class Markup(str):
    """A string of trusted HTML: put into a page as it is, never escaped again.

    Made by :func:`h`, :func:`concat`, :func:`join` and :func:`escape`; wrap text
    in it only where it is HTML made by code that escapes (a highlighter's output, a
    constant). Anything done to it as a ``str`` (``+``, ``join``) gives a plain
    ``str`` again, which the builder escapes: a mistake shows as visible markup,
    never as live markup.

    >>> concat(Markup("<b>x</b>"), "<b>y</b>")
    Markup('<b>x</b>&lt;b&gt;y&lt;/b&gt;')
    >>> type(Markup("<b>") + "x") is str
    True
    """

    __slots__ = ()

    def __html__(self) -> "Markup":
        """The HTML itself (the protocol of markupsafe and Jinja)."""
        return self

    def __repr__(self) -> str:
        return f"Markup({str.__repr__(self)})"


#: Marks a template's slots in the HTML ``h()`` writes: never in escaped data (HTML
#: has no NUL; a browser shows U+FFFD for one, as the escapes below write it).
_MARK = "\x00"


def _escape_text(text: str) -> str:
    # Quotes are harmless in text; inside attribute values _escape_attr escapes them.
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace(_MARK, "\ufffd")
    )


def _escape_attr(text: str) -> str:
    return (
        text.replace("&", "&amp;")
        .replace("<", "&lt;")
        .replace(">", "&gt;")
        .replace('"', "&quot;")
        .replace("'", "&#x27;")
        .replace(_MARK, "\ufffd")
    )


def escape(value: object) -> Markup:
    """``value`` as HTML text (quotes escaped too, so it is safe anywhere); a
    :class:`Markup` is returned as it is.

    >>> escape('<img src=x onerror="alert(1)">')
    Markup('&lt;img src=x onerror=&quot;alert(1)&quot;&gt;')
    >>> escape(Markup("<br>"))
    Markup('<br>')
    """
    if isinstance(value, Markup):
        return value
    return Markup(_escape_attr(str(value)))


def ascii_html(html: Markup) -> Markup:
    """``html`` with every character outside ASCII written as a character reference
    (``·`` as ``&#183;``): the same page. A kernel sends a display as one JSON text,
    and one character outside ASCII anywhere in it makes Python build and encode all
    of it at two or four bytes a character; in ASCII a report's display is sent in
    two thirds of the time. Raw text (a ``<style>`` sheet, a script) reads no
    references: the builder's are ASCII already.

    >>> ascii_html(h("p", None, "a · b → ✓"))
    Markup('<p>a &#183; b &#8594; &#10003;</p>')
    """
    if html.isascii():  # known without a look at the text
        return html
    return Markup(html.encode("ascii", "xmlcharrefreplace").decode("ascii"))


# -- names -----------------------------------------------------------------------------

#: Tags a static report never needs, that run or load content.
_REFUSED_TAGS = frozenset(
    {"script", "iframe", "frame", "frameset", "object", "embed", "applet", "base"}
)
#: Tags whose content is not parsed as text: they take only trusted Markup.
_RAW_TEXT_TAGS = frozenset({"style", "xmp", "noembed", "noframes"})
_VOID_TAGS = frozenset(
    {"area", "br", "col", "hr", "img", "input", "link", "meta", "source", "track", "wbr"}
)
#: Attributes holding a URL: only in-page links (``#id``) are accepted.
_URL_ATTRS = frozenset(
    {
        "href",
        "src",
        "srcset",
        "action",
        "formaction",
        "cite",
        "data",
        "poster",
        "background",
        "ping",
        "xlink:href",
        "manifest",
    }
)
_TAG_NAME = re.compile(r"[a-zA-Z][a-zA-Z0-9]*(?:-[a-zA-Z0-9]+)*").fullmatch
# No event handlers (on...): nothing in a static page needs one.
_ATTR_NAME = re.compile(r"(?![oO][nN])[a-zA-Z_][a-zA-Z0-9_.:-]*").fullmatch
_FRAGMENT = re.compile(r"#[A-Za-z0-9_-]*").fullmatch
# The names every form uses, known good (a set lookup is quicker than the patterns);
# none of them is void, raw text or a URL attribute.
_COMMON_TAGS = frozenset(
    {
        "a",
        "b",
        "code",
        "details",
        "div",
        "i",
        "li",
        "nav",
        "p",
        "pre",
        "small",
        "span",
        "summary",
        "table",
        "tbody",
        "td",
        "th",
        "thead",
        "tr",
        "ul",
        "h4",
    }
)
_COMMON_ATTRS = frozenset({"class", "id", "open", "role", "style", "colspan", "lang"})
#: Attributes that load or redirect (``<meta http-equiv=refresh>``, ``<iframe srcdoc>``).
_REFUSED_ATTRS = frozenset({"http-equiv", "srcdoc"})


def _check_tag(tag: str) -> None:
    if not isinstance(tag, str) or not _TAG_NAME(tag) or tag.lower() in _REFUSED_TAGS:
        raise ValueError(f"Not a tag this builder makes: {tag!r}.")


def _check_attribute(name: str, value: Any) -> None:
    if not isinstance(name, str) or not _ATTR_NAME(name) or name.lower() in _REFUSED_ATTRS:
        raise ValueError(f"Not an attribute this builder writes: {name!r}.")
    if (
        name.lower() in _URL_ATTRS
        and value is not None
        and value is not False
        and type(value) is not Slot
        and not _FRAGMENT(str(value))
    ):
        raise ValueError(
            f"{name} must be an in-page link ('#id', made by fragment()), got {value!r}."
        )


def _attributes(attrs: Mapping[str, Any]) -> str:
    out = ""
    for name, value in attrs.items():
        if name not in _COMMON_ATTRS:
            _check_attribute(name, value)
        if value is None or value is False:
            continue
        if value is True:
            out += " " + name
            continue
        if type(value) is str:
            value = _escape_attr(value)
        else:  # a Slot is written as its marker, for template() to find
            value = str(value) if type(value) is Slot else _escape_attr(str(value))
        out += f' {name}="{value}"'
    return out


# -- children ----------------------------------------------------------------------------


def _add(out: list[str], children: Iterable[Any]) -> None:
    """Appends ``children`` as HTML to ``out``; nested iterables are flattened into it
    (one join per element, however the children are grouped)."""
    for child in children:
        kind = type(child)
        if kind is Markup:
            out.append(child)
        elif kind is str:
            out.append(_escape_text(child))
        elif kind is int:
            out.append(str(child))
        elif child is None or child is False:
            continue
        elif kind is Slot:  # its marker, for template() to find
            out.append(str(child))
        elif isinstance(child, Markup):
            out.append(str(child))
        elif isinstance(child, (str, Mapping, bytes)) or not isinstance(child, Iterable):
            out.append(_escape_text(str(child)))
        else:
            _add(out, child)


def _children(children: Iterable[Any]) -> str:
    out: list[str] = []
    _add(out, children)
    return "".join(out)


def _trusted(children: tuple[Any, ...]) -> Markup:
    """The content of a ``<style>``: CSS is not text, so only Markup (a constant)."""
    if not all(isinstance(c, Markup) for c in children):
        raise ValueError("<style> takes only Markup (a constant style sheet).")
    return Markup("".join(children))


# -- the builder ---------------------------------------------------------------------------


def h(tag: str, attrs: Mapping[str, Any] | None = None, *children: Any) -> Markup:
    """The element ``<tag attrs>children</tag>`` as :class:`Markup`.

    ``attrs`` maps attribute names to values: a value is escaped (quotes too),
    ``None`` and ``False`` leave the attribute out, ``True`` writes it bare
    (``open``). A URL attribute (``href``...) takes only an in-page link, as
    :func:`fragment` makes. ``children`` are strings (escaped), :class:`Markup`
    (as it is), numbers, ``None`` or ``False`` (left out), or iterables of these.
    Tag and attribute names must be plain names; event handlers (``on...``) and
    tags that run or load content (``script``, ``iframe``...) raise ``ValueError``.

    >>> h("details", {"class": "stage", "id": "ol1-cost", "open": True},
    ...   h("summary", None, "Cost & memory"), [h("b", None, n) for n in (1, 2)])
    Markup('<details class="stage" id="ol1-cost" open><summary>Cost &amp; memory</summary><b>1</b><b>2</b></details>')
    >>> h("span", {"title": 'say "hi"'}, "it's")
    Markup('<span title="say &quot;hi&quot;">it\\'s</span>')
    >>> h("span", {"onclick": "alert(1)"})
    Traceback (most recent call last):
    ...
    ValueError: Not an attribute this builder writes: 'onclick'.
    >>> h("script", None, "alert(1)")
    Traceback (most recent call last):
    ...
    ValueError: Not a tag this builder makes: 'script'.
    """
    out = [f"<{tag}{_attributes(attrs)}>" if attrs else f"<{tag}>"]
    if tag not in _COMMON_TAGS:
        _check_tag(tag)
        if tag.lower() in _VOID_TAGS:
            if children:
                raise ValueError(f"<{tag}> holds nothing; got children {children!r}.")
            return Markup(out[0])
        if tag.lower() in _RAW_TEXT_TAGS:
            children = (_trusted(children),)
    _add(out, children)  # one list, one join: long content is copied once here
    out.append(f"</{tag}>")
    return Markup("".join(out))


def head_row(labels: Iterable[str]) -> Markup:
    """A table's ``<thead>`` of one row, a ``<th>`` for each of ``labels``.

    >>> str(head_row(["line", "a<b"]))
    '<thead><tr><th>line</th><th>a&lt;b</th></tr></thead>'
    """
    return h("thead", None, h("tr", None, [h("th", None, label) for label in labels]))


def tags(tag: str, attrs: Mapping[str, Any] | None = None) -> tuple[Markup, Markup]:
    """The start and end tags of ``h(tag, attrs)``, checked the same way: for an
    element whose content is made piece by piece (a fold around many lines).

    >>> tags("details", {"class": "ol-fold", "open": False})
    (Markup('<details class="ol-fold">'), Markup('</details>'))
    """
    empty = h(tag, attrs)
    if tag.lower() in _VOID_TAGS or tag.lower() in _RAW_TEXT_TAGS:
        raise ValueError(f"<{tag}> holds no pieces of HTML.")
    end = f"</{tag}>"
    return Markup(empty[: len(empty) - len(end)]), Markup(end)


class Slot:
    """A named hole in a :func:`template`: ``h()`` writes it as a marker, and each
    call of the template puts a value there, escaped for where the hole is."""

    __slots__ = ("name",)

    def __init__(self, name: str):
        if not _slot_name(name):
            raise ValueError(
                f"A slot is named in lower case letters, digits and _, starting "
                f"with a letter (not a Python keyword), got {name!r}."
            )
        self.name = name

    def __str__(self) -> str:
        return f"{_MARK}{self.name}{_MARK}"

    def __repr__(self) -> str:
        return f"Slot({self.name!r})"


def _slot_name(name: object) -> bool:
    return isinstance(name, str) and _SLOT_NAME(name) is not None and not keyword.iskeyword(name)


_SLOT_NAME = re.compile(r"[a-z][a-z0-9_]*").fullmatch
_ATTR_SLOT = re.compile(r' ([^\s="<>]+)="$').search


def _text_value(value: Any) -> str:
    kind = type(value)
    if kind is Markup:
        return value
    if kind is str:
        return _escape_text(value)
    if value is None:
        return ""
    return str(value) if kind is int else _children((value,))


def _attr_value(value: Any) -> str:
    if type(value) is not str:
        if value is None or type(value) is bool:
            raise TypeError(f"An attribute slot takes a string or a number, got {value!r}.")
        value = str(value)
    return _escape_attr(value)


def _url_value(value: Any) -> str:
    if type(value) is not str or not _FRAGMENT(value):
        raise ValueError(f"A link must be in-page ('#id', made by fragment()), got {value!r}.")
    return value


def _slot_kind(before: str, after: str) -> Callable[[Any], str]:
    """How a slot's value is written: as text, an attribute value, or a link."""
    attr = _ATTR_SLOT(before)
    if attr is not None and after.startswith('"'):
        return _url_value if attr.group(1).lower() in _URL_ATTRS else _attr_value
    if before.rfind("<") > before.rfind(">"):
        raise ValueError("A slot in a tag must be a whole attribute value.")
    return _text_value


def template(shape: Markup) -> Callable[..., Markup]:
    """A maker of copies of ``shape`` (built by :func:`h` with :class:`Slot` holes),
    each call filling the holes by name: text holes take what :func:`h` takes as a
    child, attribute holes a string or number (escaped, quotes too), link holes an
    in-page link. For the loops that make an element per line of a long text: the
    shape is checked once, and a call only escapes its values.

    >>> line = template(h("span", {"id": Slot("id")}, h("b", None, Slot("n")), Slot("text")))
    >>> line(id='x"1', n=1, text="<i>")
    Markup('<span id="x&quot;1"><b>1</b>&lt;i&gt;</span>')
    >>> template(h("a", {"href": Slot("to")}))(to="javascript:alert(1)")
    Traceback (most recent call last):
    ...
    ValueError: A link must be in-page ('#id', made by fragment()), got 'javascript:alert(1)'.
    """
    pieces = str(shape).split(_MARK)
    literals, names = pieces[0::2], pieces[1::2]
    if len(pieces) % 2 == 0 or not all(map(_slot_name, names)):
        raise ValueError(f"Not a template shape: {shape!r}.")
    writers = [_slot_kind(before, after) for before, after in zip(literals, literals[1:])]
    fill = _filler(literals, names, writers)
    fill.__doc__ = f"A copy of {shape!r}, its slots filled."
    return fill


#: How a filler writes each kind of slot (``{0}``: the slot's name).
_WRITE = {
    _text_value: "({0} if _type({0}) is _Markup else _text({0}))",
    _attr_value: "_attr({0})",
    _url_value: "_url({0})",
}


def _filler(literals: list[str], names: list[str], writers: list) -> Callable[..., Markup]:
    """The function that fills a template: compiled once into one expression (as
    ``dataclasses`` compiles ``__init__``), so that a call costs about what an
    f-string does. Its source holds only the slot names (checked: lower-case
    identifiers) and names of the values below; the shape's text is one of those
    values, never source."""
    scope: dict[str, Any] = {
        "_Markup": Markup,
        "_type": type,
        "_text": _text_value,
        "_attr": _attr_value,
        "_url": _url_value,
    }
    parts = []
    for k, literal in enumerate(literals):
        scope[f"_l{k}"] = literal
        parts.append(f"_l{k}")
        if k < len(names):
            parts.append(_WRITE[writers[k]].format(names[k]))
    source = (
        f"def fill(*, {', '.join(dict.fromkeys(names))}):\n"
        f"    return _Markup(''.join(({', '.join(parts)},)))\n"
    )
    exec(source, scope)  # noqa: S102 - no data in this source: see the docstring
    return scope["fill"]


def concat(*children: Any) -> Markup:
    """Children side by side, with no element around them (escaped as in :func:`h`).

    >>> concat("a < b", Markup("<br>"), None, 3)
    Markup('a &lt; b<br>3')
    """
    return Markup(_children(children))


def join(separator: Any, items: Iterable[Any]) -> Markup:
    """``items`` with ``separator`` between them (both escaped as in :func:`h`).

    >>> join(" · ", [h("a", {"href": "#x"}, "x"), "<y>"])
    Markup('<a href="#x">x</a> · &lt;y&gt;')
    """
    sep = _children((separator,))
    return Markup(sep.join(_children((item,)) for item in items))


# -- in-page links ---------------------------------------------------------------------------

_ID = re.compile(r"[A-Za-z0-9_-]*").fullmatch
_UNSAFE = re.compile(r"[^A-Za-z0-9_-]")


def _unsafe_char(m: re.Match) -> str:
    return f"_{ord(m.group()):x}_"


def anchor_id(*parts: object) -> str:
    """An element id from ``parts`` joined by ``-``: letters, digits, ``-`` and ``_``
    stay, any other character becomes ``_hex_``. An id made here comes back
    unchanged, so an id can be made from another (``anchor_id(prefix, "L3")``).

    >>> anchor_id("ol1a2b", "stablehlo", "L12")
    'ol1a2b-stablehlo-L12'
    >>> anchor_id("ol1", 'x" onmouseover="alert(1)')
    'ol1-x_22__20_onmouseover_3d__22_alert_28_1_29_'
    """
    text = "-".join([p if type(p) is str else str(p) for p in parts])
    return text if _ID(text) else _UNSAFE.sub(_unsafe_char, text)


def fragment(*parts: object) -> str:
    """An in-page link to :func:`anchor_id` ``(*parts)``: the only kind of ``href`` the
    builder writes.

    >>> fragment("ol1", "source", 0, 12)
    '#ol1-source-0-12'
    """
    return "#" + anchor_id(*parts)
