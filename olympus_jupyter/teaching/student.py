"""The student's copy of the course: each exercise's solution replaced by a stub, and
the solution kept behind a "Show a solution" fold the student opens when ready.

The lessons in ``notebooks/`` are nbgrader *source* notebooks: the reference solution
of each exercise sits in its code, between ``### BEGIN SOLUTION`` and
``### END SOLUTION``. For grading, ``nbgrader generate_assignment`` makes the
student version (stubs, and no solution anywhere). For a live session, or a student
working alone, :func:`write_course` makes this copy instead, with no need of nbgrader:
the same stub in place of each solution region (:data:`STUB`, the one
``notebooks/nbgrader_config.py`` gives nbgrader), and after each exercise's check cell
a fold holding its solution. ``./run.sh`` makes it in ``student/`` and opens its index;
a notebook already there is the student's work and is never written over.

>>> import nbformat
>>> nb = nbformat.v4.new_notebook(cells=[nbformat.v4.new_code_cell(
...     "def f(x):\\n    ### BEGIN SOLUTION\\n    return x\\n    ### END SOLUTION",
...     metadata={"nbgrader": {"solution": True, "grade_id": "f", "grade": False,
...                            "locked": False, "schema_version": 3}})])
>>> copy = student_notebook(nb)
>>> print(copy.cells[0].source)
def f(x):
    # your code here
    raise NotImplementedError("not implemented yet")
>>> "return x" in copy.cells[1].source and "<details>" in copy.cells[1].source
True
"""

from __future__ import annotations

import copy
import os
import pathlib
import sys
from collections.abc import Sequence

__all__ = ["STUB", "student_notebook", "write_course", "main"]

#: What takes the place of a solution region (nbgrader's ``ClearSolutions.code_stub``
#: in ``notebooks/nbgrader_config.py`` too): the check cells recognise it.
STUB = '# your code here\nraise NotImplementedError("not implemented yet")'

_BEGIN, _END = "### BEGIN SOLUTION", "### END SOLUTION"


def _grading(cell) -> dict:
    return cell.get("metadata", {}).get("nbgrader", {})


def without_solution(source: str, body: str = STUB) -> str:
    """``source`` with each solution region replaced by ``body`` (:data:`STUB`),
    indented as the region's first marker is (what nbgrader's ``ClearSolutions`` does
    to code; the tests put other answers there the same way).

    >>> print(without_solution("def g():\\n    ### BEGIN SOLUTION\\n    return 1\\n    ### END SOLUTION\\n# after"))
    def g():
        # your code here
        raise NotImplementedError("not implemented yet")
    # after
    """
    lines = source.split("\n")
    out: list[str] = []
    inside = False
    for line in lines:
        if _BEGIN in line:
            if inside:
                raise ValueError(f"a solution region opens inside another: {line.strip()!r}")
            inside = True
            indent = line[: len(line) - len(line.lstrip())]
            out.extend(indent + line for line in body.split("\n"))
        elif _END in line:
            if not inside:
                raise ValueError(f"a solution region closes that was not open: {line.strip()!r}")
            inside = False
        elif not inside:
            out.append(line)
    if inside:
        raise ValueError("a solution region is not closed (### END SOLUTION is missing)")
    return "\n".join(out)


def _solution_fold(cell) -> dict:
    import nbformat

    name = _grading(cell).get("grade_id", "")
    code = "\n".join(
        line for line in cell.source.split("\n") if _BEGIN not in line and _END not in line
    )
    return nbformat.v4.new_markdown_cell(
        f"<details><summary>Show a solution{f' ({name})' if name else ''}</summary>\n\n"
        f"```python\n{code}\n```\n\nTry your own first: the check above accepts every "
        f"correct answer, not only this one.\n\n</details>"
    )


def student_notebook(nb):
    """A copy of source notebook ``nb`` (nbformat) for a student: every nbgrader
    solution cell's regions replaced by :data:`STUB`, and after the check cell that
    follows it (or the solution cell itself) a fold with its solution. ``nb`` is
    left as it is."""
    out = copy.deepcopy(nb)
    cells = []
    folds: list[dict] = []
    for cell in out.cells:
        grading = _grading(cell)
        if cell.cell_type == "code" and grading.get("solution") and _BEGIN in cell.source:
            folds.append(_solution_fold(cell))
            cell.source = without_solution(cell.source)
            cell.outputs, cell.execution_count = [], None
            cells.append(cell)
            continue
        cells.append(cell)
        if folds and grading.get("grade"):  # the check of the exercise above
            cells.extend(folds)
            folds = []
    cells.extend(folds)
    out.cells = cells
    return out


def write_course(
    source: str | os.PathLike, dest: str | os.PathLike, names: Sequence[str] | None = None
) -> tuple[list[str], list[str]]:
    """Writes the student's copy of every notebook of folder ``source`` (or of
    ``names`` in it) into folder ``dest`` (made if need be). A notebook already in
    ``dest`` is the student's work: it is kept as it is. Returns the names written
    and the names kept."""
    import nbformat

    source, dest = pathlib.Path(source), pathlib.Path(dest)
    if not source.is_dir():
        raise FileNotFoundError(f"no folder {str(source)!r} with the course's notebooks")
    chosen = sorted(names) if names is not None else sorted(p.name for p in source.glob("*.ipynb"))
    dest.mkdir(parents=True, exist_ok=True)
    written, kept = [], []
    for name in chosen:
        target = dest / name
        if target.exists():
            kept.append(name)
            continue
        nb = nbformat.read(source / name, as_version=4)
        nbformat.write(student_notebook(nb), target)
        written.append(name)
    return written, kept


def main(argv: Sequence[str] | None = None) -> int:
    """``python -m olympus_jupyter.teaching.student SOURCE DEST``: the student's copy of
    the course in SOURCE, written into DEST (what is there already is kept)."""
    args = list(sys.argv[1:] if argv is None else argv)
    if len(args) != 2:
        print(
            "usage: python -m olympus_jupyter.teaching.student SOURCE_FOLDER DEST_FOLDER",
            file=sys.stderr,
        )
        return 2
    try:
        written, kept = write_course(*args)
    except (OSError, ValueError) as e:
        print(f"error: {e}", file=sys.stderr)
        return 1
    if written:
        print(f"wrote the student's copy of {len(written)} notebook(s) into {args[1]}")
    if kept:
        print(f"kept {len(kept)} notebook(s) already in {args[1]} (your work): {', '.join(kept)}")
    return 0


if __name__ == "__main__":
    sys.exit(main())
