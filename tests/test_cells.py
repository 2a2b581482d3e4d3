"""Reports made in a kernel show notebook cells as typed, labelled In [n]."""

import json

import nbformat

from notebook_runner import run_notebook

SETUP = """\
%load_ext olympus_jupyter
import olympus.numpy as jnp
from olympus_jupyter import inspect
"""
DEFINE_AND_SHOW = """\
def f(x):
    y = jnp.sin(x)
    return y * 2
%olympus_lower --name rep f(1.0)
"""
RAISES = """\
def broken(x):
    return jnp.sin(x) @ jnp.ones((7,))
bad = inspect(broken, jnp.ones(3))
"""
CHECK = """\
import json
files = [f.path for f in rep.provenance.files]
texts = "".join(t for f in rep.provenance.files for _, t in f.chunks)
frame = bad.failure.user_frame
html = rep.html()
print(json.dumps({"files": files, "texts": texts, "frame": [frame.file, frame.line, frame.code],
                  "html_has_label": "In [2]" in html}))
"""


def test_cells_are_shown_as_typed_with_their_number(tmp_path):
    nb = nbformat.v4.new_notebook(
        cells=[nbformat.v4.new_code_cell(c) for c in (SETUP, DEFINE_AND_SHOW, RAISES, CHECK)]
    )
    run_notebook(nb, tmp_path)
    out = json.loads(nb.cells[3].outputs[0]["text"])
    assert out["files"] == ["In [2]"]
    # The magic line as typed, not IPython's get_ipython().run_line_magic(...)
    assert "%olympus_lower --name rep f(1.0)" in out["texts"]
    assert "run_line_magic" not in out["texts"]
    assert "y = jnp.sin(x)" in out["texts"]
    assert out["frame"] == ["In [3]", 2, "return jnp.sin(x) @ jnp.ones((7,))"]
    # (Stage texts keep the locations JAX wrote: the program's text is not rewritten.)
    assert out["html_has_label"]
