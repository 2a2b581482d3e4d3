"""What every benchmark script shares besides timing: its ``--short`` and ``--json PATH``
options, and its results as records for ``run_all.py``.

A record is ``{"benchmark", "what", "value", "unit", "budget", "ok"}``: ``budget`` is an
upper bound in ``unit`` (every budget here is "at most"), or ``None`` for a figure that
is only reported; ``ok`` is ``value <= budget`` for this run, ``None`` without a budget.

>>> r = Results("bench_example")
>>> r.add("a ratio", 1.02, "x", budget=1.10)
True
>>> r.add("a time", 3.5, "ms")
True
>>> r.records[0]["ok"], r.records[1]["ok"], r.ok
(True, None, True)
"""

from __future__ import annotations

import argparse
import json
import pathlib
import sys


def parser(doc: str | None, short: str) -> argparse.ArgumentParser:
    """An argument parser with the options every benchmark has: ``--short`` (what it
    does for this benchmark: ``short``) and ``--json PATH``."""
    first = (doc or "").strip().splitlines()[0] if doc else None
    p = argparse.ArgumentParser(description=first)
    p.add_argument("--short", action="store_true", help=short)
    p.add_argument(
        "--json",
        metavar="PATH",
        default=None,
        help="also write the results to PATH as a list of records "
        "{benchmark, what, value, unit, budget, ok} (for run_all.py)",
    )
    return p


class Results:
    """The records of one run of one benchmark."""

    def __init__(self, benchmark: str):
        self.benchmark = benchmark
        self.records: list[dict] = []

    def add(self, what: str, value: float, unit: str, budget: float | None = None) -> bool:
        """Records a figure; returns whether it is within its budget (True without one)."""
        ok = None if budget is None else bool(value <= budget)
        self.records.append(
            {
                "benchmark": self.benchmark,
                "what": what,
                "value": float(value),
                "unit": unit,
                "budget": None if budget is None else float(budget),
                "ok": ok,
            }
        )
        return ok is not False

    @property
    def ok(self) -> bool:
        return all(r["ok"] is not False for r in self.records)

    def write(self, path: str | None) -> None:
        """Writes the records to ``path`` as JSON (nothing when ``path`` is None)."""
        if path:
            pathlib.Path(path).write_text(json.dumps(self.records, indent=1) + "\n")


def name_of(file: str) -> str:
    """``bench_call`` for ``.../bench_call.py``."""
    return pathlib.Path(file).stem


if __name__ == "__main__":  # pragma: no cover
    import doctest

    sys.exit(doctest.testmod().failed)
