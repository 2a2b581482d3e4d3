"""A report's display is ASCII, so that a kernel sends it quickly; what a program
names beyond ASCII reads the same.

A kernel serializes a display message as one JSON text (``ensure_ascii=False``): one
character beyond ASCII anywhere in it makes Python build and encode all of it at two
or four bytes a character. The HTML writes such characters as references, the text
summary uses ``->`` and ``...``, the stage titles ``:``.
"""

import html
import importlib.util
import json

import numpy as np
from jupyter_client.session import json_packer

import olympus.numpy as jnp
from olympus import stage_registry
from olympus_jupyter import inspect
from olympus_jupyter.report.html import STYLE


def sum_of_sines(x):
    return jnp.sum(jnp.sin(x) * 2)


#: A program whose names and comments go beyond ASCII, in a module of its own (this
#: file stays ASCII: the report of sum_of_sines shows lines of it).
SUMME = """import olympus.numpy as jnp


def \u00fcber_summe(x):  # Summe \u00fcber alle Sinus: \u2211 sin(x)
    return jnp.sum(jnp.sin(x))
"""


def imported(path, name):
    spec = importlib.util.spec_from_file_location(name, path)
    module = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(module)
    return module


def test_the_display_of_an_ascii_program_is_ascii_as_a_kernel_sends_it():
    report = inspect(sum_of_sines, np.ones(8, np.float32), costs=True, passes=True, cache=False)
    forms = report._repr_mimebundle_()
    assert all(forms[m].isascii() for m in ("text/html", "text/plain"))
    sent = json_packer({"data": forms, "metadata": {}})  # as jupyter_client sends it
    assert sent.isascii()
    # The page reads the same: the references stand for what the report says.
    assert "Source \u00b7 sum_of_sines" in html.unescape(forms["text/html"])


def test_what_a_program_names_beyond_ascii_reads_the_same(tmp_path):
    (tmp_path / "summe.py").write_text(SUMME, encoding="utf-8")
    fun = getattr(imported(tmp_path / "summe.py", "summe"), "\u00fcber_summe")
    report = inspect(fun, np.ones(3, np.float32), cache=False)
    page = report.form("text/html")
    assert page.isascii() and "&#252;ber_summe" in page
    shown = html.unescape(page)
    assert "Source \u00b7 \u00fcber_summe" in shown and "\u2211 sin(x)" in shown
    # The data keeps the text as it is (JSON escapes it where it is embedded).
    data = report.form("application/vnd.olympus.stages+json")
    assert data["provenance"]["function"]["name"] == "\u00fcber_summe"
    assert json.loads(report.to_json_text()) == data
    assert "\u00fcber_summe" in report.text()


def test_the_style_sheet_and_the_stage_titles_are_ascii():
    # A style sheet reads no character references: one beyond ASCII would be broken
    # by the conversion, so none may be there (CSS escapes such as \\25B8 instead).
    assert STYLE.isascii()
    assert all(s.title.isascii() and s.label.isascii() for s in stage_registry.STAGES)
