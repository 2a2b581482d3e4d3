"""``StageReport``: what each stage made of a function, built once and shown three ways.

A report holds the provenance model of the core (every op of every stage tied to
its source line), the pre-optimization HLO, the cost and memory analyses, the
per-stage timings, and whatever could not be made (a failure, or stages that
cannot exist on this machine). Its display bundle has three forms:

- ``application/vnd.olympus.stages+json``: the data (schema in ``docs/report.md``);
- ``text/html``: static, self-contained HTML, readable with no script and no kernel;
- ``text/plain``: a short summary.

>>> import olympus
>>> report = build_report(olympus_jupyter.staging.run_stages(lambda x: x * 2, (1.0,)))
>>> sorted(report._repr_mimebundle_())
['application/vnd.olympus.stages+json', 'text/html', 'text/plain']
"""
from __future__ import annotations

import dataclasses
import os
from collections.abc import Mapping, MutableMapping
from typing import Any

import olympus_jupyter  # noqa: F401  (for the doctest namespace)
from olympus.provenance import Provenance
from olympus.provenance import build as build_provenance
from olympus_jupyter.frontends.options import STAGE_NAMES
from olympus_jupyter.staging.runner import StagedRun, StageFailure, UserFrame

MEDIA_TYPE = "application/vnd.olympus.stages+json"
SCHEMA = "olympus.stages"
VERSION = 1

#: Report stages that are views of a provenance stage (the others are plain texts).
PROVENANCE_STAGE = {"olympuspr": "olympuspr", "stablehlo": "stablehlo", "compiled": "hlo"}


@dataclasses.dataclass(frozen=True)
class Analyses:
    """The compiler's estimates: cost before optimization (lowered) and after
    (compiled), and the compiled program's memory, in bytes."""
    cost_lowered: Mapping[str, float] | None = None
    cost_compiled: Mapping[str, float] | None = None
    memory: Mapping[str, int] | None = None


@dataclasses.dataclass(frozen=True)
class StageReport:
    """What each stage made of one function, tied to its source; display it or save it.

    Build one with :func:`olympus_jupyter.inspect` (or ``%olympus_lower``).
    ``save(path)`` writes a standalone HTML file that works offline.
    """
    name: str
    platforms: tuple[str, ...]
    stages: tuple[str, ...]
    provenance: Provenance | None
    hlo_text: str | None = None
    analyses: Analyses = Analyses()
    timings: Mapping[str, float] = dataclasses.field(default_factory=dict)
    failure: StageFailure | None = None
    unavailable: Mapping[str, str] = dataclasses.field(default_factory=dict)
    debug_info: bool = True
    full: bool = False
    _memo: dict = dataclasses.field(default_factory=dict, repr=False, compare=False)

    def _memoized(self, key, make):
        """A form is rendered once per report: reports are immutable."""
        if key not in self._memo:
            self._memo[key] = make()
        return self._memo[key]

    # -- the forms ----------------------------------------------------------------

    def to_json(self) -> dict[str, Any]:
        """The ``application/vnd.olympus.stages+json`` form (see docs/report.md)."""
        from olympus_jupyter.report import bundle
        return bundle.to_json(self)

    @classmethod
    def from_json(cls, data: Mapping[str, Any]) -> "StageReport":
        """Reads a report back from :meth:`to_json` data."""
        from olympus_jupyter.report import bundle
        return bundle.from_json(data)

    def html(self, *, full: bool | None = None, standalone: bool = False) -> str:
        """The static HTML form; ``full=True`` lifts the cap on long stage texts."""
        from olympus_jupyter.report.html import render_html
        full = self.full if full is None else full
        return self._memoized(("html", full, standalone),
                              lambda: render_html(self, full=full, standalone=standalone))

    def text(self) -> str:
        """The short ``text/plain`` summary."""
        from olympus_jupyter.report.text import render_text
        return self._memoized("text", lambda: render_text(self))

    def _repr_mimebundle_(self, include=None, exclude=None) -> dict[str, Any]:
        # Displaying a report again (a cached one, say) reuses the forms made the first time.
        forms = {
            MEDIA_TYPE: lambda: self._memoized("json", self.to_json),
            "text/html": self.html,
            "text/plain": self.text,
        }
        return {mime: make() for mime, make in forms.items()
                if (include is None or mime in include) and not (exclude and mime in exclude)}

    def __repr__(self) -> str:
        return self.text()

    def save(self, path: str | os.PathLike, *, full: bool = True) -> str:
        """Writes a standalone HTML report (works offline); returns the path written."""
        path = os.fspath(path)
        if not path.endswith((".html", ".htm")):
            raise ValueError(f"save() writes HTML: give a path ending in .html, got {path!r}.")
        directory = os.path.dirname(os.path.abspath(path))
        if not os.path.isdir(directory):
            raise FileNotFoundError(f"Cannot save to {path!r}: folder {directory!r} does not exist.")
        with open(path, "w", encoding="utf-8") as out:
            out.write(self.html(full=full, standalone=True))
        return path

    # -- reading it -------------------------------------------------------------------

    def stage_text(self, stage: str) -> str | None:
        """The full text of a report stage (``olympuspr``, ``stablehlo``, ``hlo``, ``compiled``)."""
        if stage == "hlo":
            return self.hlo_text
        pstage = PROVENANCE_STAGE.get(stage)
        if pstage is None:
            raise KeyError(f"No text stage {stage!r}; choose from hlo, {', '.join(PROVENANCE_STAGE)}.")
        if self.provenance is None or pstage not in self.provenance.stages:
            return None
        return self.provenance.stages[pstage].text

    @property
    def ok(self) -> bool:
        """True when every requested stage was made."""
        return self.failure is None


def _jsonable_cost(cost) -> dict[str, float] | None:
    if not cost:
        return None
    if isinstance(cost, (list, tuple)):  # older backends: one dict per device
        cost = cost[0] if cost else None
        if not cost:
            return None
    return {str(k): float(v) for k, v in cost.items()}


def _safe(call):
    try:
        return call()
    except Exception:  # noqa: BLE001 - an analysis a backend lacks is simply absent
        return None


def build_report(run: StagedRun, *, stages: tuple[str, ...] = STAGE_NAMES,
                 debug_info: bool = True, full: bool = False,
                 models: MutableMapping | None = None) -> StageReport:
    """Makes the report of a :class:`~olympus_jupyter.staging.StagedRun` (no recompiling).

    ``models`` (a mapping from stage object to its provenance model, e.g. a
    ``weakref.WeakKeyDictionary``) keeps models to reuse when a report of the same
    stages is made again with other display options.
    """
    stage_obj = run.compiled or run.lowered or run.traced
    provenance = None
    failure = run.failure
    if stage_obj is not None:
        try:
            provenance = models.get(stage_obj) if models is not None else None
            if provenance is None:
                provenance = build_provenance(stage_obj)
                if models is not None:
                    models[stage_obj] = provenance
        except Exception as e:  # noqa: BLE001 - shown in the report, never a crash
            failure = failure or StageFailure(
                "provenance", type(e).__name__, f"Could not relate ops to source: {e}")
    lowered, compiled = run.lowered, run.compiled
    hlo_text = None
    if lowered is not None and "hlo" in stages:
        hlo_text = _safe(lambda: lowered.as_text("hlo"))
    analyses = Analyses(
        cost_lowered=_jsonable_cost(_safe(lowered.cost_analysis)) if lowered else None,
        cost_compiled=_jsonable_cost(_safe(compiled.cost_analysis)) if compiled else None,
        memory=(lambda m: m.as_dict() if m else None)(_safe(compiled.memory_analysis))
        if compiled else None,
    )
    unavailable = dict(run.unavailable)
    if failure is not None and failure.stage in ("trace", "lower", "compile"):
        later = {"trace": ("olympuspr", "stablehlo", "hlo", "compiled", "cost", "memory"),
                 "lower": ("stablehlo", "hlo", "compiled", "cost", "memory"),
                 "compile": ("compiled", "cost", "memory")}[failure.stage]
        for s in later:
            unavailable.setdefault(s, f"{failure.stage} failed")
    if "compile" in unavailable:
        for s in ("compiled", "cost", "memory"):
            unavailable.setdefault(s, unavailable["compile"])
        unavailable.pop("compile")
    return StageReport(
        name=run.name, platforms=tuple(run.platforms), stages=tuple(stages),
        provenance=provenance, hlo_text=hlo_text, analyses=analyses,
        timings=dict(run.timings), failure=failure, unavailable=unavailable,
        debug_info=debug_info, full=full)


__all__ = ["StageReport", "Analyses", "build_report", "MEDIA_TYPE", "SCHEMA", "VERSION",
           "UserFrame"]
