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

import nbformat
import numpy as np
import pytest

from notebook_outputs import MEDIA, bundles, errors, has_widget, report_of, text
from notebook_runner import run_notebook

# nbgrader's gradebook warns of its own session handling while autograding.
pytestmark = pytest.mark.filterwarnings("ignore::sqlalchemy.exc.SAWarning")

ROOT = pathlib.Path(__file__).resolve().parents[1]
NOTEBOOKS = ROOT / "notebooks"
INDEX = "00_course"
LESSONS = sorted(p.stem for p in NOTEBOOKS.glob("[0-9][0-9]_*.ipynb") if p.stem != INDEX)
STUB = 'raise NotImplementedError("not implemented yet")'


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


def with_region(source: str, body: str) -> str:
    """``source`` with its solution region replaced by ``body`` (indented as the region
    is), as nbgrader replaces it with its stub."""
    lines = source.split("\n")
    begin = next(i for i, line in enumerate(lines) if "### BEGIN SOLUTION" in line)
    end = next(i for i, line in enumerate(lines) if "### END SOLUTION" in line)
    indent = re.match(r"\s*", lines[begin]).group(0)
    return "\n".join(lines[:begin] + [indent + b for b in body.split("\n")] + lines[end + 1:])


# -- the notebooks' structure (no kernel) ------------------------------------------------

def test_every_lesson_of_the_course_index_in_order():
    index = read(INDEX)
    links = re.findall(r"\]\(([^)#]+\.ipynb)\)", "".join(c.source for c in index.cells))
    assert links == [f"{name}.ipynb" for name in LESSONS]
    assert all((NOTEBOOKS / link).is_file() for link in links)
    assert len(LESSONS) >= 3
    assert "notebooks/00_course.ipynb" in (ROOT / "run.sh").read_text()


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

def _stages_shows(nb, code):
    reports = [report_of(c) for c in code if bundles(c)]
    assert len(reports) == 4
    first = reports[0]
    assert first[MEDIA]["schema"] == "olympus.stages"
    assert first[MEDIA]["provenance"]["function"]["name"] == "f"
    assert "Source · f" in first["text/html"] and "Olympus report: f" in first["text/plain"]
    static, tpu = reports[1][MEDIA], reports[2][MEDIA]
    assert "dense<14>" in static["provenance"]["stages"]["stablehlo"]["text"]
    assert tpu["platforms"] == ["tpu"] and "lowered for tpu" in tpu["unavailable"]["compiled"]
    outputs = "".join(text(c) for c in code)
    assert "Array(10, dtype=int32, weak_type=True)" in outputs
    assert "Argument 'x' compiled with int32[] and called with int32[3]" in outputs


def _specializations_shows(nb, code):
    assert len([c for c in code if has_widget(c)]) == 3  # stepper, inspector, exercise's
    assert "b:f32[16,4]" in text(code[3]) and "shape (2, 4) → (16, 4)" in text(code[3])
    diff = [c for c in code if any("application/vnd.olympus.diff+json" in o.get("data", {})
                                   for o in c.outputs)]
    assert len(diff) == 1


def _passes_shows(nb, code):
    reports = [report_of(c) for c in code if bundles(c)]
    assert len(reports) == 2  # the layer, and the planted program with a pass filter
    for data in reports:
        assert "XLA passes" in data["text/html"] and "passes" in data[MEDIA]["stages"]
        assert data[MEDIA]["failure"] is None
    layer, filtered = (data[MEDIA]["passes"] for data in reports)
    assert layer["pass_re"] == ".*" and filtered["pass_re"] == "fusion|cse"
    assert any(r["kind"] == "changed" for r in layer["rows"])
    assert {r["kind"] for r in filtered["rows"]} <= {"start", "changed", "unchanged", "context"}
    assert all(re.search("fusion|cse", r["pass"]) for r in filtered["rows"]
               if r["kind"] == "changed")
    outputs = "".join(text(c) for c in code)
    assert "removed by cse" in outputs  # the planted common subexpression
    assert re.search(r"\(tanh\) is in \S+, k[A-Z]\w+", outputs)  # the tanh's fusion and kind


SHOWS = {"01_stages": _stages_shows, "02_specializations": _specializations_shows,
         "03_passes": _passes_shows}


def test_every_lesson_has_its_content_test():
    assert sorted(SHOWS) == LESSONS


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_runs_with_the_solutions_and_every_check_passes(lesson, tmp_path):
    nb = run_notebook(read(lesson), tmp_path)
    code = [c for c in nb.cells if c.cell_type == "code"]
    assert not [e for c in code for e in errors(c)]
    for check in check_cells(nb):
        assert text(check).startswith("Correct: "), text(check)
    SHOWS[lesson](nb, code)


# -- with a planted wrong answer per exercise ---------------------------------------------

#: Per exercise: a wrong body for the solution region, and what its check must explain.
WRONG = {
    "aot_compiled_sum": ("return jnp.sum(x) + 1",
                         "aot_compiled_sum(jnp.ones(4)) returned 5.0, but the sum of its "
                         "elements is 4.0"),
    "compile_for": ("return olympus.jit(f).trace(olympus.ShapeDtypeStruct(shape, dtype)).lower()",
                    "returned a lowered program: one more stage, compile it"),
    "jit_normalize": ("return olympus.jit(fun, static_argnums=(1, 2))",
                      "it compiles again, because argument 'eps': static value 1e-06 → 1e-05"),
    "as_scale": ("return s", "argument 's': weak type True → False"),
    "removed_by": ("return 'cse'", "The def line made no instruction (its journey is None)"),
    "fusion_kind": ("return None", "ended in a fusion of the optimized program"),
}


def test_every_exercise_has_a_wrong_answer():
    assert sorted(WRONG) == sorted(grading(c)["grade_id"] for name in LESSONS
                                   for c in solution_cells(read(name)))


@pytest.mark.parametrize("lesson", LESSONS)
def test_lesson_checks_explain_planted_wrong_answers(lesson, tmp_path):
    nb = read(lesson)
    for cell in solution_cells(nb):
        cell.source = with_region(cell.source, WRONG[grading(cell)["grade_id"]][0])
    nb = run_notebook(nb, tmp_path, allow_errors=True)
    assert not [e for c in other_cells(nb) for e in errors(c)]
    for solution, check in zip(solution_cells(nb), check_cells(nb)):
        (error,) = errors(check)
        assert error["ename"] == "NotYet" and error["evalue"].startswith("Not yet:"), error
        assert WRONG[grading(solution)["grade_id"]][1] in error["evalue"], error["evalue"]
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
                kwargs.update(transport="ipc", ip=f"{folder}/kernel",
                              connection_file=f"{folder}/kernel.json")
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
    source, student = read(lesson), nbformat.read(root / "release" / lesson / f"{lesson}.ipynb",
                                                  as_version=4)
    def unchanged(nb):
        return [c.source for c in other_cells(nb) if not grading(c).get("solution")]
    assert unchanged(student) == unchanged(source)
    for mine, theirs in zip(solution_cells(source), solution_cells(student)):
        assert theirs.source == with_region(mine.source, f"# your code here\n{STUB}")
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


@pytest.mark.parametrize("lesson", LESSONS)
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


@pytest.mark.parametrize("lesson", LESSONS)
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

def _removed_by(report, line):
    journey = report.journey(line)
    if not journey or journey["end"]:
        return None
    return next((e["pass"] for e in reversed(journey["events"]) if e["kind"] == "removed"),
                None)


def _fusion_kind(report, line):
    journey = report.journey(line)
    kinds = [c["fusion_kind"] for c in (journey or {}).get("end", []) if c["fusion"]]
    return kinds[0] if kinds else None


def test_checks_accept_every_correct_answer_and_explain_wrong_ones(capsys):
    import jax
    import olympus
    import olympus.numpy as jnp
    from olympus_jupyter.teaching import exercises as ex
    from olympus_jupyter.teaching.checks import NotImplementedYet, NotYet

    def stub(*args):
        raise NotImplementedError("not implemented yet")

    right = [
        (ex.check_aot_compiled_sum, lambda x: olympus.jit(jnp.sum).lower(x).compile()(x)),
        (ex.check_compile_for, lambda f, shape, dtype: olympus.jit(f).lower(
            jax.ShapeDtypeStruct(shape, dtype)).compile()),
        (ex.check_jit_normalize, lambda fun: olympus.jit(fun, static_argnums=2)),
        (ex.check_jit_normalize, lambda fun: olympus.jit(fun, static_argnames=("axis",))),
        (ex.check_as_scale, lambda s: np.float32(s)),
        (ex.check_as_scale, lambda s: float(s)),  # all weak: one program too
        (ex.check_removed_by, _removed_by),
        (ex.check_fusion_kind, _fusion_kind),
    ]
    for check, answer in right:
        check(answer)
        assert capsys.readouterr().out.startswith("Correct: ")
    wrong = [
        (ex.check_aot_compiled_sum, lambda x: "4", "not a number"),
        (ex.check_compile_for, lambda f, shape, dtype: olympus.jit(f), "not compiled yet"),
        (ex.check_compile_for, lambda f, shape, dtype: olympus.jit(f).lower(
            jax.ShapeDtypeStruct(shape[::-1], dtype)).compile(), "expected float32[2, 3]"),
        (ex.check_jit_normalize, lambda fun: olympus.jit(fun), "what must stay static?"),
        (ex.check_jit_normalize, lambda fun: fun, "not olympus.jit(...)"),
        (ex.check_as_scale, lambda s: jnp.asarray(s), "dtype float32 → int32"),
        (ex.check_as_scale, lambda s: np.float32(1.0), "its value must not change"),
        (ex.check_removed_by, lambda report, line: report.journey(line)["end"],
         "journey returns None for a line that made no instruction"),
        (ex.check_fusion_kind, lambda report, line: "kOutput", "got 'kOutput'"),
    ]
    for check, answer, why in wrong:
        with pytest.raises(NotYet) as failed:
            check(answer)
        assert why in str(failed.value), str(failed.value)
        assert not isinstance(failed.value, NotImplementedYet)
    for check, _ in right:
        with pytest.raises(NotImplementedYet, match="^Not implemented yet: fill in "):
            check(stub)
    assert "Correct" not in capsys.readouterr().out
