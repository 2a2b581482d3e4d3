"""The ``application/vnd.olympus.stages+json`` form of a report: versioned plain data.

This is the contract with the JupyterLab extension; its schema is documented in
``docs/report.md``. The provenance model is embedded as the core writes it.

>>> import olympus
>>> from olympus_jupyter import inspect
>>> data = to_json(inspect(lambda x: x + 1, 1.0))
>>> data["schema"], data["version"], data["provenance"]["schema"]
('olympus.stages', 1, 'olympus.provenance')
>>> from_json(data).name
'<lambda>'
"""
from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from olympus.provenance import Provenance

from olympus_jupyter.report.stage_report import SCHEMA, VERSION, Analyses, StageReport
from olympus_jupyter.staging.runner import StageFailure, UserFrame


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


def to_json(report: StageReport) -> dict[str, Any]:
    """The report as JSON-ready data."""
    a = report.analyses
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "name": report.name,
        "platforms": list(report.platforms),
        "stages": list(report.stages),
        "debug_info": report.debug_info,
        "timings": {k: round(v, 6) for k, v in report.timings.items()},
        "failure": _failure_json(report.failure),
        "unavailable": dict(report.unavailable),
        "hlo_text": report.hlo_text,
        "analyses": {"cost": {"lowered": a.cost_lowered, "compiled": a.cost_compiled},
                     "memory": a.memory},
        "provenance": report.provenance.to_json() if report.provenance else None,
    }


def from_json(data: Mapping[str, Any]) -> StageReport:
    """Reads :func:`to_json` data back; raises ``ValueError`` for another schema or version."""
    if data.get("schema") != SCHEMA:
        raise ValueError(f"Not an Olympus report: schema is {data.get('schema')!r}, "
                         f"expected {SCHEMA!r}.")
    if data.get("version") != VERSION:
        raise ValueError(f"Report version {data.get('version')!r} is not supported; this "
                         f"olympus_jupyter reads version {VERSION}.")
    cost = data["analyses"]["cost"]
    return StageReport(
        name=data["name"], platforms=tuple(data["platforms"]), stages=tuple(data["stages"]),
        provenance=Provenance.from_json(data["provenance"]) if data["provenance"] else None,
        hlo_text=data.get("hlo_text"),
        analyses=Analyses(cost["lowered"], cost["compiled"], data["analyses"]["memory"]),
        timings=dict(data["timings"]), failure=_failure_from(data["failure"]),
        unavailable=dict(data["unavailable"]), debug_info=data["debug_info"])
