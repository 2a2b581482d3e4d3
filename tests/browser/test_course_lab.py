"""The course in JupyterLab: open the index, follow its link to a lesson, run one exercise.

A student's path in a live session: ``./run.sh`` opens ``notebooks/00_course.ipynb``;
its link opens the first lesson; the student runs the lesson's cells down to the
first exercise's check cell, in the lesson's live kernel. The check says
``Correct: ...`` (the solution is in place in the source notebook), and the reports
above it are rendered by the extension.
"""

import shutil

import nbformat
import pytest

from labserver import ROOT, artifacts_dir
from deadlines import ms

NOTEBOOKS = ROOT / "notebooks"
LESSON = "01_stages"


@pytest.fixture(scope="module")
def course_dir(notebooks_dir):
    """The course index and its lessons, as ``./run.sh`` serves them."""
    for path in [NOTEBOOKS / "00_course.ipynb", *sorted(NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))]:
        shutil.copy(path, notebooks_dir / path.name)
    return notebooks_dir


def first_check(name):
    """The index of the lesson's first check cell (an nbgrader test cell)."""
    nb = nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)
    return next(i for i, c in enumerate(nb.cells) if c.metadata.get("nbgrader", {}).get("grade"))


KERNEL_IDLE = (
    "path => { const w = window.jupyterapp && window.jupyterapp.shell.currentWidget;"
    " const k = w && w.context && w.context.path === path && w.sessionContext"
    " && w.sessionContext.session && w.sessionContext.session.kernel;"
    " return !!k && k.connectionStatus === 'connected'"
    " && w.sessionContext.kernelDisplayStatus === 'idle'; }"
)


def test_the_index_leads_to_a_lesson_whose_exercise_runs_in_the_live_kernel(page, lab, course_dir):
    try:
        run_the_first_exercise(page, lab)
    finally:
        lab.end_sessions()


def run_the_first_exercise(page, lab):
    page.goto(lab.page_url("lab/tree/00_course.ipynb?reset"))
    # JupyterLab resolves the link's address: it ends with the lesson's file name.
    link = page.locator(f'.jp-RenderedMarkdown a[href*="{LESSON}.ipynb"]')
    link.wait_for(timeout=ms(60))
    # The index's own kernel first: the server's kernels share a folder of IPC sockets,
    # and a kernel picks free socket names only once the kernel before it has made its.
    page.wait_for_function(KERNEL_IDLE, arg="00_course.ipynb", timeout=ms(120))
    link.click()
    page.wait_for_function(KERNEL_IDLE, arg=f"{LESSON}.ipynb", timeout=ms(120))

    check = first_check(LESSON)
    page.evaluate(
        """async index => {
            const app = window.jupyterapp;
            const panel = app.shell.currentWidget;
            panel.content.activeCellIndex = index;
            await app.commands.execute('notebook:run-all-above');
            await app.commands.execute('notebook:run-cell');
        }""",
        check,
    )
    cell = page.locator(".jp-NotebookPanel:visible .jp-Notebook .jp-Cell").nth(check)
    output = cell.locator(".jp-OutputArea-output")
    output.filter(has_text="Correct: ").wait_for(timeout=ms(120))
    assert (
        cell.locator(
            ".jp-OutputArea-output[data-mime-type='application/vnd.jupyter.stderr']"
        ).count()
        == 0
    )
    # The reports the lesson's magics made above are the extension's views, not the
    # static HTML a saved notebook falls back on.
    lesson = page.locator(".jp-NotebookPanel:visible")
    lesson.locator("[data-olympus-viewer][data-olympus-rendered]").first.wait_for()
    assert lesson.locator(".olympus-report").count() == 0
    page.screenshot(path=str(artifacts_dir() / "course-lesson-check.png"))
