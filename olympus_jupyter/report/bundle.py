"""The ``application/vnd.olympus.stages+json`` form of a report: versioned plain data.

This is the contract with the JupyterLab extension; its schema is documented in
``docs/report.md``. The provenance model is embedded as the core writes it. The
bundle carries its own stage table (name, title, label, kind, language, unit,
whether its ops link to source) from :mod:`olympus.stage_registry`, so that a
viewer shows any stage the registry has without knowing it in advance. Version 1
bundles, from saved notebooks of earlier releases, still read. The cost figures
carry their names for people (``analyses.cost.names``: label, unit, explanation,
from :mod:`.cost_names`); readers name the keys themselves, so bundles without
them read as well.

>>> from olympus_jupyter import inspect
>>> data = to_json(inspect(lambda x: x + 1, 1.0))
>>> data["schema"], data["version"], data["provenance"]["schema"]
('olympus.stages', 2, 'olympus.provenance')
>>> [s["title"] for s in data["stage_table"]][:2]
['Source', 'olympuspr: traced program']
>>> fields_from_json(data)["name"]
'<lambda>'
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olympus import stage_registry
from olympus.provenance import Provenance

from olympus_jupyter.report import cost_names
from olympus_jupyter.report.data import SCHEMA, VERSION, Analyses
from olympus_jupyter.report.costs_view import check_costs
from olympus_jupyter.report.html import caller_lines
from olympus_jupyter.report.passes_view import check_passes
from olympus_jupyter.report.validate import BundleError, check_bundle
from olympus_jupyter.staging.runner import StageFailure, UserFrame

__all__ = ["to_json", "fields_from_json"]


def _failure_json(f: StageFailure | None):
    if f is None:
        return None
    return {"stage": f.stage, "type": f.error_type, "message": f.message,
            "frames": [{"file": u.file, "line": u.line, "function": u.function, "code": u.code}
                       for u in f.frames]}


def _failure_from(d) -> StageFailure | None:
    if d is None:
        return None
    return StageFailure(d["stage"], d["type"], d["message"],
                        tuple(UserFrame(u["file"], u["line"], u["function"], u["code"])
                              for u in d.get("frames", ())))


def _copy(figures: Mapping[str, float] | None) -> dict[str, float] | None:
    return None if figures is None else dict(figures)


def to_json(report) -> dict[str, Any]:
    """A :class:`~olympus_jupyter.report.StageReport` as JSON-ready data."""
    a = report.analyses
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "name": report.name,
        "platforms": list(report.platforms),
        "stages": list(report.stages),
        "stage_table": [stage_registry.stage(s).info() for s in report.stages],
        "debug_info": report.debug_info,
        "timings": {k: round(v, 6) for k, v in report.timings.items()},
        "failure": _failure_json(report.failure),
        "unavailable": dict(report.unavailable),
        "texts": dict(report.texts),
        # Copies: what a caller does to the data is not done to the report.
        "analyses": {"cost": {"lowered": _copy(a.cost_lowered),
                              "compiled": _copy(a.cost_compiled),
                              # For viewers: each key named for people (cost_names.py)
                              **cost_names.bundle_json(a.cost_lowered, a.cost_compiled)},
                     "memory": _copy(a.memory)},
        "provenance": report.provenance.to_json() if report.provenance else None,
        # The lines that call the function, as the text and static HTML find them: the
        # view takes them from here rather than applying the rule again.
        **({"callers": sorted([f, line] for f, line in caller_lines(report.provenance))}
           if report.provenance else {}),
        **({"notes": list(report.notes)} if report.notes else {}),
        **({"passes": report.passes} if report.passes is not None else {}),
        **({"costs": report.costs} if report.costs is not None else {}),
    }


def fields_from_json(data: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a report from :func:`to_json` data, this version's or version 1's
    (``StageReport.from_json`` makes the report). Stages this release does not know
    are left out. Raises ``ValueError`` for another schema or a newer version, and
    :class:`~olympus_jupyter.report.validate.BundleError` (a ``ValueError``) naming
    the field for data that does not follow the schema."""
    if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
        got = data.get("schema") if isinstance(data, Mapping) else type(data).__name__
        raise ValueError(f"Not an Olympus report: schema is {got!r}, expected {SCHEMA!r}.")
    if data.get("version") not in (1, VERSION):
        raise ValueError(f"Report version {data.get('version')!r} is not supported; this "
                         f"olympus_jupyter reads versions 1 to {VERSION}.")
    check_bundle(data)
    version = data["version"]
    known = set(stage_registry.names())
    texts = dict(data.get("texts") or {})
    if version == 1 and data.get("hlo_text") is not None:
        texts["hlo"] = data["hlo_text"]  # version 1 held the compiler's input HLO alone
    cost = data["analyses"]["cost"]
    passes, costs = data.get("passes"), data.get("costs")
    files = len(data["provenance"]["files"]) if data["provenance"] else 0
    try:
        if passes is not None:
            check_passes(passes, files)
        if costs is not None:
            check_costs(costs, files)
    except ValueError as e:
        raise BundleError(f"Not a readable Olympus report: {e}") from None
    return dict(
        name=data["name"], platforms=tuple(data["platforms"]),
        stages=tuple(s for s in data["stages"] if s in known),
        provenance=Provenance.from_json(data["provenance"]) if data["provenance"] else None,
        texts=texts,
        analyses=Analyses(cost["lowered"], cost["compiled"], data["analyses"]["memory"]),
        timings=dict(data["timings"]), failure=_failure_from(data["failure"]),
        unavailable=dict(data["unavailable"]), debug_info=data["debug_info"],
        notes=tuple(data.get("notes", ())), passes=passes, costs=costs)
