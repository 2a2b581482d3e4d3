"""The course (notebooks/): nbgrader source notebooks that run in a real kernel three
ways, and that nbgrader turns into student versions and grades.

- With the reference solutions (the notebooks as they are, in a plain kernel, no
  nbgrader): every check passes, and each lesson shows what it teaches.
- With the student stubs, made by ``nbgrader generate_assignment``: every check says
  "not implemented yet", nothing else fails, and ``nbgrader autograde`` gives zero.
- With a planted wrong answer per exercise: its check fails and says why.

And ``nbgrader autograde`` of the solutions gives full marks, with no cell errors.
"""

import copy
import os
import pathlib
import re
import shutil
import sys
import tempfile
import time

import nbformat
import pytest

from notebook_outputs import MEDIA, WIDGET, errors, text
from lessons import lesson_data
from notebook_runner import run_notebook

from olympus_jupyter.teaching.student import without_solution

# nbgrader's gradebook warns of its own session handling while autograding.
pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
INDEX = "00_course"
LESSONS = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb") if p.stem != INDEX)


def _running(lesson):
    """The lesson as a parameter of the tests that run it (in a kernel, with nbgrader,
    its checks called here): marked ``targets`` where it compiles for a TPU slice
    (its data's ``TARGETS``), so that those run only in the targets environment, where
    libtpu is (run.sh); the main run deselects them (``-m "not targets"``)."""
    if getattr(lesson_data(lesson), "TARGETS", False):
        return pytest.param(lesson, marks=pytest.mark.targets)
    return lesson


#: The lessons, for the tests that run them.
RUNNING = [_running(lesson) for lesson in LESSONS]


def read(name):
    return nbformat.read(NOTEBOOKS / f"{name}.ipynb", as_version=4)


def grading(cell) -> dict:
    return cell.metadata.get("nbgrader", {})


def solution_cells(nb):
    return [c for c in nb.cells if grading(c).get("solution")]


def check_cells(nb):
    return [c for c in nb.cells if grading(c).get("grade")]


def other_cells(nb):
    return [c for c in nb.cells if c.cell_type == "code" and not grading(c).get("grade")]


# -- the notebooks' structure (no kernel) ------------------------------------------------


def test_every_lesson_of_the_course_index_in_order():
    index = read(INDEX)
    links = re.findall(r"\]\(([^)#]+\.ipynb)\)", "".join(c.source for c in index.cells))
    assert links == [f"{name}.ipynb" for name in LESSONS]
    assert all((NOTEBOOKS / link).is_file() for link in links)
    assert len(LESSONS) >= 3
    run = (ROOT / "run.sh").read_text()
    assert "teaching.student notebooks student" in run and "student/00_course.ipynb" in run


@pytest.mark.parametrize("lesson", LESSONS)
def test_each_lesson_is_an_nbgrader_source_with_a_goal_and_two_exercises(lesson):
    from nbgrader.nbgraderformat import MetadataValidator

    nb = read(lesson)
    MetadataValidator().validate_nb(nb)  # what generate_assignment checks first
    assert nb.cells[0].cell_type == "markdown" and "**Goal**" in nb.cells[0].source
    solutions, checks = solution_cells(nb), check_cells(nb)
    assert len(solutions) >= 2 and len(checks) == len(solutions)
    for solution in solutions:
        i = nb.cells.index(solution)
        task = next(c for c in reversed(nb.cells[:i]) if c.cell_type == "markdown")
        check = nb.cells[i + 1]
        name = grading(solution)["grade_id"]
        assert solution.cell_type == "code" and f"def {name}(" in solution.source
        assert "### BEGIN SOLUTION" in solution.source and "### END SOLUTION" in solution.source
        assert not grading(solution)["locked"] and not grading(solution)["grade"]
        assert task.cell_type == "markdown" and grading(task)["locked"], name
        assert check is checks[solutions.index(solution)]
        assert grading(check)["locked"] and grading(check)["points"] > 0
        assert f"exercises.check_{name}({name})" in check.source


# -- with the reference solutions, in a plain kernel --------------------------------------


def test_every_lesson_has_its_tests():
    for lesson in LESSONS:
        data = lesson_data(lesson)
        assert callable(data.shows) and data.RIGHT and data.WRONG_ANSWERS, lesson


def assert_outputs_degrade(nb):
    """Every output an extension renders (Olympus's reports and diffs, widgets) also
    carries a form that a saved notebook shows without it: each report its static HTML
    (the ``data-olympus-report`` div, a section per stage) and text; each diff HTML and
    text; each widget text."""
    for cell in nb.cells:
        for output in cell.get("outputs", []):
            data = output.get("data", {})
            if any(m.startswith("application/vnd.olympus.") for m in data):
                assert data.get("text/html") and data.get("text/plain"), sorted(data)
            if MEDIA in data:
                html, stages = data["text/html"], data[MEDIA]["stages"]
                found = re.search(
                    r'<div class="olympus-report" id="([^"]+)" '
                    r'data-olympus-report="1"',
                    html,
                )
                assert found, html[:300]
                sections = re.findall(r'<details class="stage" id="([^"]+)"', html)
                assert sections == [f"{found.group(1)}-{stage}" for stage in stages], sections
                assert data["text/plain"].startswith(f"Olympus report: {data[MEDIA]['name']}")
            if WIDGET in data:
                assert data.get("text/plain", "").strip(), cell.source


@pytest.mark.parametrize("lesson", RUNNING)
def test_lesson_runs_with_the_solutions_and_every_check_passes(lesson, tmp_path):
    start = time.perf_counter()
    nb = run_notebook(read(lesson), tmp_path)
    # Top to bottom in under a minute on a 2-core laptop's CPU (here: beside the other
    # tests, the kernel's start included).
    seconds = time.perf_counter() - start
    assert seconds < 60, f"{lesson} took {seconds:.0f} s"
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not [e for c in code for e in errors(c)]
    for check in check_cells(nb):
        assert text(check).startswith("Correct: "), text(check)
    lesson_data(lesson).shows(nb, code)
    assert_outputs_degrade(nb)  # what a saved copy shows without the extension


# -- with a planted wrong answer per exercise ---------------------------------------------


@pytest.mark.parametrize("lesson", LESSONS)
def test_every_exercise_has_a_wrong_answer(lesson):
    assert sorted(lesson_data(lesson).WRONG) == sorted(
        grading(c)["grade_id"] for c in solution_cells(read(lesson))
    )


@pytest.mark.parametrize("lesson", RUNNING)
def test_lesson_checks_explain_planted_wrong_answers(lesson, tmp_path):
    nb = read(lesson)
    wrong = lesson_data(lesson).WRONG
    for cell in solution_cells(nb):
        cell.source = without_solution(cell.source, wrong[grading(cell)["grade_id"]][0])
    nb = run_notebook(nb, tmp_path, allow_errors=True)
    assert not [e for c in other_cells(nb) for e in errors(c)]
    for solution, check in zip(solution_cells(nb), check_cells(nb)):
        (error,) = errors(check)
        assert error["ename"] == "NotYet" and error["evalue"].startswith("Not yet:"), error
        assert wrong[grading(solution)["grade_id"]][1] in error["evalue"], error["evalue"]
        # The message is the feedback: no traceback of the check's frames around it.
        assert len(error["traceback"]) == 1 and "teaching/exercises" not in error["traceback"][0]
        assert "Correct" not in text(check)


# -- nbgrader: the student versions, and grading --------------------------------------------


class _IpcKernels:
    """nbgrader's kernels talk over Unix sockets in private folders, as
    notebook_runner's do: kernels of parallel test workers cannot be handed one port.

    Their manager is jupyter_client's blocking one, as notebook_runner's: with the
    asynchronous one that nbgrader picks, a kernel that has made an Inspector (lesson
    02) mostly answers a cell only after the cell's time limit.
    """

    def __init__(self):
        from jupyter_client.manager import KernelManager

        self.folders = []
        folders = self.folders

        class IpcKernelManager(KernelManager):
            def __init__(self, **kwargs):
                folder = tempfile.mkdtemp(prefix="olympus-kernel-")
                folders.append(folder)
                kwargs.update(
                    transport="ipc", ip=f"{folder}/kernel", connection_file=f"{folder}/kernel.json"
                )
                super().__init__(**kwargs)

        self.manager = IpcKernelManager

    def close(self):
        for folder in self.folders:
            shutil.rmtree(folder, ignore_errors=True)


@pytest.fixture(scope="module")
def course(tmp_path_factory):
    """A course directory as docs/teaching.md lays it out, every lesson an assignment, its
    student version generated by nbgrader; and nbgrader's API for it."""
    from nbgrader.apps import NbGraderAPI
    from nbgrader.preprocessors import execute
    from traitlets.config.loader import PyFileConfigLoader

    root = tmp_path_factory.mktemp("course")
    shutil.copy(NOTEBOOKS / "nbgrader_config.py", root)
    for lesson in LESSONS:
        (root / "source" / lesson).mkdir(parents=True)
        shutil.copy(NOTEBOOKS / f"{lesson}.ipynb", root / "source" / lesson)
    config = PyFileConfigLoader("nbgrader_config.py", path=str(root)).load_config()
    config.CourseDirectory.root = str(root)
    kernels = _IpcKernels()
    with pytest.MonkeyPatch.context() as patch:
        # nbgrader runs alembic's command for its gradebook: the one beside this Python.
        patch.setenv("PATH", f"{pathlib.Path(sys.executable).parent}:{os.environ['PATH']}")
        patch.setattr(execute, "AsyncKernelManager", kernels.manager)
        api = NbGraderAPI(config=config)
        for lesson in LESSONS:
            result = api.generate_assignment(lesson, force=True)
            assert result["success"], result.get("error", "") + result.get("log", "")
        yield root, api
    kernels.close()


@pytest.mark.parametrize("lesson", LESSONS)
def test_the_student_version_has_the_stubs_and_no_solution(lesson, course):
    root, _ = course
    source, student = (
        read(lesson),
        nbformat.read(root / "release" / lesson / f"{lesson}.ipynb", as_version=4),
    )

    def unchanged(nb):
        return [c.source for c in other_cells(nb) if not grading(c).get("solution")]

    assert unchanged(student) == unchanged(source)
    for mine, theirs in zip(solution_cells(source), solution_cells(student)):
        # nbgrader writes the stub olympus_jupyter.teaching.student writes
        assert theirs.source == without_solution(mine.source)
    for cell in student.cells:
        if grading(cell).get("locked"):
            assert cell.metadata["editable"] is False and cell.metadata["deletable"] is False


def _autograde(course, lesson, student, submission):
    from nbgrader.api import Gradebook

    root, api = course
    folder = root / "submitted" / student / lesson
    folder.mkdir(parents=True)
    nbformat.write(submission, folder / f"{lesson}.ipynb")
    result = api.autograde(lesson, student, force=True, create=True)
    assert result["success"], result.get("error", "") + result.get("log", "")
    with Gradebook(f"sqlite:///{root}/gradebook.db") as gradebook:
        graded = gradebook.find_submission(lesson, student)
        score, max_score = graded.score, graded.max_score
    nb = nbformat.read(root / "autograded" / student / lesson / f"{lesson}.ipynb", as_version=4)
    return nb, score, max_score


@pytest.mark.parametrize("lesson", RUNNING)
def test_autograde_gives_the_solutions_full_marks(lesson, course):
    root, _ = course
    student = nbformat.read(root / "release" / lesson / f"{lesson}.ipynb", as_version=4)
    reference = {grading(c)["grade_id"]: c.source for c in solution_cells(read(lesson))}
    submission = copy.deepcopy(student)
    for cell in solution_cells(submission):  # a student who wrote the reference solutions
        cell.source = reference[grading(cell)["grade_id"]]
    nb, score, max_score = _autograde(course, lesson, "solutions", submission)
    assert not [e for c in nb.cells for e in errors(c)]
    assert max_score == sum(grading(c)["points"] for c in check_cells(read(lesson)))
    assert score == max_score
    assert all(text(c).startswith("Correct: ") for c in check_cells(nb))


@pytest.mark.parametrize("lesson", RUNNING)
def test_autograde_gives_the_stubs_zero_and_each_check_says_not_implemented_yet(lesson, course):
    root, _ = course
    student = nbformat.read(root / "release" / lesson / f"{lesson}.ipynb", as_version=4)
    nb, score, max_score = _autograde(course, lesson, "stubs", student)
    assert score == 0 and max_score > 0
    assert not [e for c in other_cells(nb) for e in errors(c)]  # nothing else fails
    for check in check_cells(nb):
        (error,) = errors(check)
        assert error["ename"] == "NotImplementedYet", error
        assert error["evalue"].lower().startswith("not implemented yet: fill in "), error


# -- the checks, called from Python: other correct answers, other wrong ones --------------


@pytest.mark.parametrize("lesson", RUNNING)
def test_checks_accept_every_correct_answer_and_explain_wrong_ones(lesson, capsys):
    from olympus_jupyter.teaching import exercises
    from olympus_jupyter.teaching.checks import NotImplementedYet, NotYet

    def stub(*args):
        raise NotImplementedError("not implemented yet")

    data = lesson_data(lesson)
    for name, answer in data.RIGHT:
        getattr(exercises, name)(answer)
        assert capsys.readouterr().out.startswith("Correct: ")
    for name, answer, why in data.WRONG_ANSWERS:
        with pytest.raises(NotYet) as failed:
            getattr(exercises, name)(answer)
        assert why in str(failed.value), str(failed.value)
        assert not isinstance(failed.value, NotImplementedYet)
    for name, _ in data.RIGHT:
        with pytest.raises(NotImplementedYet, match="^Not implemented yet: fill in "):
            getattr(exercises, name)(stub)
    assert "Correct" not in capsys.readouterr().out
