"""What the course's tests (test_course.py) know of each lesson, one module per lesson
(``lesson_01_stages`` for ``notebooks/01_stages.ipynb``), each with:

- ``shows(nb, code)``: asserts what the lesson, run with its solutions, shows (its
  reports, widgets and printed outcomes); ``code`` is its executed code cells;
- ``WRONG``: per exercise (its ``grade_id``), a wrong body for its solution region and
  what its check must say about it;
- ``RIGHT``: other correct answers, ``(check name, answer)``, that its checks accept;
- ``WRONG_ANSWERS``: other wrong answers, ``(check name, answer, what the check says)``.
"""

import importlib


def lesson_data(lesson: str):
    """The module of notebook ``lesson`` (e.g. ``'01_stages'``)."""
    return importlib.import_module(f"lessons.lesson_{lesson}")
