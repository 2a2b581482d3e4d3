"""The interactive form of a report's HTML: the static HTML, then the view that brings it to life.

A report's ``text/html`` form has to read well where no script runs (JupyterLab's
sanitizer drops every script of an untrusted output; GitHub shows notebooks that
way). Where scripts do run (Colab, VS Code, the classic notebook, JupyterLab with
the extension off, a saved page, ``report.save()``), the same report should be as
interactive as in JupyterLab with the extension: click a source line, see its ops
in every stage. As Treescope's output does, the HTML carries what it needs:

- the static HTML (:func:`olympus_jupyter.report.html.render_html`);
- the report's bundle, as a JSON island: ``<script type="application/json"
  data-olympus-bundle="KEY">``. The JSON is the one the notebook keeps as
  ``application/vnd.olympus.stages+json`` (serialized once, measured by the output
  cap and embedded here); every ``<`` in it is written ``\\u003c``, so no text of
  the report can end the element (``</script>``) or open a comment (``<!--``);
- a loader, ``<script data-olympus-loader>``: it takes the island's text, removes
  both scripts, unpacks the view (``olympus_jupyter/static/viewer.js``, the
  JupyterLab extension's view bundled with CodeMirror and its styles, carried
  zlib-compressed and base64-encoded, once per output so that every output stands
  on its own, in a saved page or in Colab's one frame per output) and runs it once
  per page, then mounts the view on the static report, which it hides. The view
  reads the data as JSON and builds its DOM as text, never as markup; nothing is
  fetched, from the network or elsewhere.

Where the view was not built (a source checkout without Node.js), the form is the
static HTML alone.

>>> from olympus_jupyter import inspect
>>> report = inspect(lambda x: x * 2, 1.0)
>>> live = report.form("text/html")
>>> viewer() is None or (live.startswith(report.html(highlight=False, unstyled=True))
...                       and "data-olympus-loader" in live)
True
"""

from __future__ import annotations

import base64
import dataclasses
import functools
import hashlib
import pathlib
import uuid
import zlib

from olympus_jupyter.report.markup import Markup

__all__ = ["VIEWER_PATH", "Viewer", "viewer", "island_json", "live_tail", "tail_size"]

#: The built view (``jlpm build:standalone``; part of the package when it is built).
VIEWER_PATH = pathlib.Path(__file__).resolve().parents[1] / "static" / "viewer.js"


@dataclasses.dataclass(frozen=True)
class Viewer:
    """The built view, as the loader carries it."""

    #: A hash of the script: a page runs each version once.
    version: str
    #: The script, zlib-compressed, base64-encoded.
    packed: str
    #: Bytes of the script itself.
    size: int

    def code(self) -> str:
        """The script itself (read again: the packed form is what a page carries)."""
        return zlib.decompress(base64.b64decode(self.packed)).decode("utf-8")


@functools.cache
def viewer() -> Viewer | None:
    """The built view (read and packed once), or ``None`` where it was not built."""
    try:
        code = VIEWER_PATH.read_bytes()
    except OSError:
        return None
    lowered = code.lower()
    if b"<script" in lowered or b"</script" in lowered or b"<!--" in code:
        return None  # the build refuses these; never inline such a file
    return Viewer(
        version=hashlib.sha256(code).hexdigest()[:16],
        packed=base64.b64encode(zlib.compress(code, 9)).decode("ascii"),
        size=len(code),
    )


def island_json(data_text: str) -> str:
    """JSON text made safe as the content of a ``<script>`` element: ``<`` becomes
    ``\\u003c`` (JSON reads it back the same), so ``</script>`` and ``<!--`` cannot
    occur. JSON has ``<`` only inside strings, where the escape means the same.

    >>> island_json('{"name": "</script><script>alert(1)</script><!--"}')
    '{"name": "\\\\u003c/script>\\\\u003cscript>alert(1)\\\\u003c/script>\\\\u003c!--"}'
    """
    return data_text.replace("<", "\\u003c")


# The loader: plain ES2017, no "<" (it sits in a <script> element), filled in by
# live_tail() with safe values only: a hex key and version, base64 of the view.
_LOADER = (
    '(function(){var d=document,w=window,s=d.currentScript,k="{key}",v="{version}";'
    "var j=s&&s.previousElementSibling;"
    'if(!j||j.getAttribute("data-olympus-bundle")!==k)'
    "j=d.querySelector('script[data-olympus-bundle=\"'+k+'\"]');"
    "var h=j&&j.previousElementSibling;"
    'if(!h||!h.classList.contains("olympus-report"))return;'
    "var t=j.textContent;j.remove();"
    'if(s&&s.hasAttribute("data-olympus-loader"))s.remove();'
    "var r=w.__olympusViewers||(w.__olympusViewers={});"
    "r[v]=r[v]||new Promise(function(ok){"
    'var b=Uint8Array.from(atob("{packed}"),function(c){return c.charCodeAt(0)});'
    'ok(new Response(new Blob([b]).stream().pipeThrough(new DecompressionStream("deflate")))'
    '.text())}).then(function(code){var e=d.createElement("script");e.textContent=code;'
    "(d.head||d.documentElement).appendChild(e);e.remove();return w.olympusViewer});"
    "r[v].then(function(a){a.show(h,t)},function(e){delete r[v];"
    'console.warn("Olympus: no interactive view here ("+e+"); the static report stays.")})'
    "})();"
)


def live_tail(data_text: str) -> Markup:
    """The JSON island and the loader that follow a report's static HTML (empty
    where the view was not built). ``data_text``: the bundle as JSON text.

    >>> tail = live_tail('{"name": "</script><!--"}')
    >>> viewer() is None or (tail.count("</script>"), tail.count("<!--")) == (2, 0)
    True
    """
    v = viewer()
    if v is None:
        return Markup("")
    loader = _loader(v)
    key = uuid.uuid4().hex[:12]
    # One join: the view is carried packed (hundreds of kB), and each copy of it made
    # on the way (three replaces, then the f-string) cost a display half a
    # millisecond (benchmarks/README.md).
    return Markup(
        "".join(
            (
                f'<script type="application/json" data-olympus-bundle="{key}">',
                island_json(data_text),
                f'</script><script data-olympus-loader="{key}">',
                loader[0],
                key,
                loader[1],
                "</script>",
            )
        )
    )


@functools.lru_cache(maxsize=2)
def _loader(v: Viewer) -> tuple[str, str]:
    """The loader with view ``v`` filled in, as the text before its key and after it
    (made once for a view)."""
    # Base64 and a hex version hold no braces: the one "{key}" left is the loader's.
    head, tail = (
        _LOADER.replace("{version}", v.version).replace("{packed}", v.packed).split("{key}")
    )
    return head, tail


def tail_size(data_text: str) -> int:
    """Bytes :func:`live_tail` adds after a report's static HTML, without making it."""
    if viewer() is None:
        return 0
    return len(_empty_tail()) + len(data_text) + 5 * data_text.count("<")


@functools.cache
def _empty_tail() -> str:
    return live_tail("")
