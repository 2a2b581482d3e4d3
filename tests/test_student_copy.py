"""The student's copy of the course that ``./run.sh`` opens (olympus_jupyter.teaching.student):
stubs in place of the solutions, as nbgrader makes them, each solution behind a fold
after its check, and the student's own work never written over."""

import pathlib

import nbformat
import pytest

from notebook_outputs import errors, text
from notebook_runner import run_notebook
from olympus_jupyter.teaching.student import (
    STUB,
    main,
    student_notebook,
    without_solution,
    write_course,
)

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
LESSONS = sorted(p.name for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb"))


def grading(cell):
    return cell.metadata.get("nbgrader", {})


def test_the_stub_is_the_one_nbgrader_is_given():
    from traitlets.config.loader import PyFileConfigLoader

    config = PyFileConfigLoader("nbgrader_config.py", path=str(NOTEBOOKS)).load_config()
    assert config.ClearSolutions.code_stub == {"python": STUB}


@pytest.mark.parametrize("lesson", [n for n in LESSONS if not n.startswith("00_")])
def test_each_solution_is_a_stub_with_its_solution_folded_after_its_check(lesson):
    source = nbformat.read(NOTEBOOKS / lesson, as_version=4)
    copy = student_notebook(source)
    solutions = [c for c in source.cells if grading(c).get("solution") and c.cell_type == "code"]
    assert solutions
    for cell in solutions:
        name = grading(cell)["grade_id"]
        (mine,) = [c for c in copy.cells if grading(c).get("grade_id") == name]
        assert "### BEGIN SOLUTION" not in mine.source
        assert mine.source == without_solution(cell.source) and STUB.split("\n")[1] in mine.source
        at = copy.cells.index(mine)
        check = copy.cells[at + 1]
        assert grading(check)["grade"] and f"check_{name}" in check.source
        fold = copy.cells[at + 2]
        assert fold.cell_type == "markdown" and fold.source.startswith("<details>")
        body = cell.source.replace("### BEGIN SOLUTION\n", "").replace("### END SOLUTION", "")
        assert all(line.strip() in fold.source for line in body.split("\n") if line.strip())
    # Everything else is as it was.
    rest = [
        c.source
        for c in copy.cells
        if not grading(c).get("solution")
        and not c.source.startswith("<details><summary>Show a solution")
    ]
    assert rest == [c.source for c in source.cells if not grading(c).get("solution")]
    assert source.cells == nbformat.read(NOTEBOOKS / lesson, as_version=4).cells  # untouched


def test_a_student_copy_runs_and_its_checks_ask_for_the_answers(tmp_path):
    copy = student_notebook(nbformat.read(NOTEBOOKS / "01_stages.ipynb", as_version=4))
    nb = run_notebook(copy, tmp_path, allow_errors=True)
    checks = [c for c in nb.cells if grading(c).get("grade")]
    assert checks
    for cell in nb.cells:
        if cell.cell_type != "code":
            continue
        if grading(cell).get("grade"):
            (error,) = errors(cell)
            assert error["ename"] == "NotImplementedYet", error
        else:
            assert not errors(cell), (cell.source, errors(cell))
    assert not any(text(c).startswith("Correct") for c in checks)


def test_the_students_work_is_kept(tmp_path, capsys):
    dest = tmp_path / "student"
    written, kept = write_course(NOTEBOOKS, dest)
    assert sorted(written) == sorted(p.name for p in NOTEBOOKS.glob("*.ipynb")) and not kept
    mine = dest / "01_stages.ipynb"
    mine.write_text(mine.read_text().replace("# your code here", "# my answer"))
    before = mine.read_text()
    assert main([str(NOTEBOOKS), str(dest)]) == 0
    assert mine.read_text() == before
    assert "kept" in capsys.readouterr().out


def test_what_cannot_be_read_is_said(tmp_path, capsys):
    assert main([str(tmp_path / "nowhere"), str(tmp_path / "out")]) == 1
    assert "no folder" in capsys.readouterr().err
    assert main([]) == 2
    with pytest.raises(ValueError, match="not closed"):
        without_solution("def f():\n    ### BEGIN SOLUTION\n    return 1")
    with pytest.raises(ValueError, match="was not open"):
        without_solution("def f():\n    ### END SOLUTION")
