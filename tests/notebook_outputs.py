"""What the tests read in executed notebooks: reports, errors, text (shared by
test_notebooks.py and test_course.py)."""

import nbformat

MEDIA = "application/vnd.olympus.stages+json"
WIDGET = "application/vnd.jupyter.widget-view+json"


def notebook(*sources):
    """A notebook of code cells."""
    nb = nbformat.v4.new_notebook()
    nb.cells = [nbformat.v4.new_code_cell(s) for s in sources]
    return nb


def bundles(cell):
    return [o["data"] for o in cell.get("outputs", []) if "data" in o and MEDIA in o["data"]]


def report_of(cell):
    found = bundles(cell)
    assert len(found) == 1, cell
    return found[0]


def errors(cell):
    return [o for o in cell.get("outputs", []) if o["output_type"] == "error"]


def text(cell):
    out = []
    for o in cell.get("outputs", []):
        if o["output_type"] == "stream":
            out.append(o["text"])
        elif "data" in o:
            out.append(o["data"].get("text/plain", ""))
    return "".join(out)


def has_widget(cell):
    return any(WIDGET in o.get("data", {}) for o in cell.get("outputs", []))
