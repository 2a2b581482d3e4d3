"""The ``application/vnd.olympus.stages+json`` form of a report: versioned plain data.

This is the contract with the JupyterLab extension; its schema is documented in
``docs/report.md``. The provenance model is embedded as the core writes it. The
bundle carries its own stage table (name, title, label, kind, language, unit,
whether its ops link to source, and which of the viewer's views shows it) from
:mod:`olympus.stage_registry` and the stage kinds (:mod:`.kinds`), so that a viewer
shows any stage the registry has without knowing it in advance: a kind's data is
under its own key (``passes``, ``costs``) or in ``data``, by stage name. Version 1
and 2 bundles, from saved notebooks of earlier releases, still read (version 2
called the cost analysis ``cost``). The cost figures
carry their names for people (``analyses.cost.names``: label, unit, explanation,
from :mod:`.cost_names`); readers name the keys themselves, so bundles without
them read as well.

>>> from olympus_jupyter import inspect
>>> data = to_json(inspect(lambda x: x + 1, 1.0))
>>> data["schema"], data["version"], data["provenance"]["schema"]
('olympus.stages', 3, 'olympus.provenance')
>>> [s["title"] for s in data["stage_table"]][:2]
['Source', 'olympuspr: traced program']
>>> fields_from_json(data)["name"]
'<lambda>'
"""

from __future__ import annotations

import copy
import dataclasses
from collections.abc import Mapping
from typing import Any

from olympus import stage_registry
from olympus.provenance import Provenance

from olympus_jupyter.report import cost_names, kinds
from olympus_jupyter.report.data import SCHEMA, VERSION, Analyses
from olympus_jupyter.report.data_cap import group_notes
from olympus_jupyter.report.device_memory import target_lines
from olympus_jupyter.report.html import caller_lines
from olympus_jupyter.report.validate import BundleError, check_bundle
from olympus_jupyter.staging.runner import StageFailure, UserFrame

__all__ = ["to_json", "fields_from_json", "MAX_NOTES", "MAX_STAGE_NOTES"]

#: The report's notes a bundle holds, and a stage's (the schema's ``maxItems``):
#: past them, notes are grouped by reason (:func:`.data_cap.group_notes`).
MAX_NOTES = 16
MAX_STAGE_NOTES = 1000


def _failure_json(f: StageFailure | None):
    if f is None:
        return None
    return {
        "stage": f.stage,
        "type": f.error_type,
        "message": f.message,
        "frames": [
            {"file": u.file, "line": u.line, "function": u.function, "code": u.code}
            for u in f.frames
        ],
    }


def _failure_from(d) -> StageFailure | None:
    if d is None:
        return None
    return StageFailure(
        d["stage"],
        d["type"],
        d["message"],
        tuple(
            UserFrame(u["file"], u["line"], u["function"], u["code"]) for u in d.get("frames", ())
        ),
    )


def _copy(figures: Mapping[str, float] | None) -> dict[str, float] | None:
    return None if figures is None else dict(figures)


def _target_from(data: Mapping[str, Any] | None) -> dict[str, Any] | None:
    """A report's target as the report keeps it (the header's lines are made again)."""
    if data is None:
        return None
    return {k: v for k, v in data.items() if k != "lines"}


def to_json(report) -> dict[str, Any]:
    """A :class:`~olympus_jupyter.report.StageReport` as JSON-ready data."""
    a = report.analyses
    out = {
        "schema": SCHEMA,
        "version": VERSION,
        "name": report.name,
        "platforms": list(report.platforms),
        "stages": list(report.stages),
        "stage_table": [kinds.kind(s).info() for s in report.stages],
        "debug_info": report.debug_info,
        "timings": {k: round(v, 6) for k, v in report.timings.items()},
        "failure": _failure_json(report.failure),
        "unavailable": dict(report.unavailable),
        "texts": dict(report.texts),
        # Copies: what a caller does to the data is not done to the report.
        "analyses": {
            "cost": {
                "lowered": _copy(a.cost_lowered),
                "compiled": _copy(a.cost_compiled),
                # For viewers: each key named for people (cost_names.py)
                **cost_names.bundle_json(a.cost_lowered, a.cost_compiled),
            },
            "memory": _copy(a.memory),
        },
        "provenance": report.provenance.to_json() if report.provenance else None,
        # The lines that call the function, as the text and static HTML find them: the
        # view takes them from here rather than applying the rule again.
        **(
            {"callers": sorted([f, line] for f, line in caller_lines(report.provenance))}
            if report.provenance
            else {}
        ),
        **({"notes": group_notes(report.notes, MAX_NOTES)} if report.notes else {}),
        # The header's lines too, for viewers (the view writes them as they come).
        **(
            {"target": {**copy.deepcopy(dict(report.target)), "lines": target_lines(report.target)}}
            if report.target
            else {}
        ),
    }
    if out["provenance"] is not None:  # its stages' notes, within the schema's limit
        for stage in out["provenance"]["stages"].values():
            if len(stage.get("notes") or ()) > MAX_STAGE_NOTES:
                stage["notes"] = group_notes(stage["notes"], MAX_STAGE_NOTES)
    # Each kind's data: under its own key (passes, costs), or in ``data`` by stage name.
    for handler in kinds.kinds():
        data = handler.data(report)
        if data is None:
            continue
        if handler.field is not None:
            out[handler.field] = data
        else:
            out.setdefault("data", {})[handler.name] = data
    return out


def fields_from_json(data: Mapping[str, Any]) -> dict[str, Any]:
    """The fields of a report from :func:`to_json` data, this version's or an earlier one's
    (``StageReport.from_json`` makes the report). Stages this release does not know
    are left out. Raises ``ValueError`` for another schema or a newer version, and
    :class:`~olympus_jupyter.report.validate.BundleError` (a ``ValueError``) naming
    the field for data that does not follow the schema."""
    if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
        got = data.get("schema") if isinstance(data, Mapping) else type(data).__name__
        raise ValueError(f"Not an Olympus report: schema is {got!r}, expected {SCHEMA!r}.")
    if data.get("version") not in (1, 2, VERSION):
        raise ValueError(
            f"Report version {data.get('version')!r} is not supported; this "
            f"olympus_jupyter reads versions 1 to {VERSION}."
        )
    check_bundle(data)
    version = data["version"]
    # Stages are read by their names now (a report before version 3 calls the cost
    # analysis ``cost``); stages this release does not know are left out.
    rename = stage_registry.canonical
    texts = dict(data.get("texts") or {})
    if version == 1 and data.get("hlo_text") is not None:
        texts["hlo"] = data["hlo_text"]  # version 1 held the compiler's input HLO alone
    cost = data["analyses"]["cost"]
    files = len(data["provenance"]["files"]) if data["provenance"] else 0
    fields: dict[str, Any] = {}
    stage_data: dict[str, Any] = {}
    held = data.get("data") or {}
    try:
        for handler in kinds.kinds():
            value = data.get(handler.field) if handler.field is not None else held.get(handler.name)
            if value is None:
                continue
            handler.check(value, files)
            if handler.field is not None:
                fields[handler.field] = value
            else:
                stage_data[handler.name] = value
    except BundleError:
        raise
    except ValueError as e:
        raise BundleError(f"Not a readable Olympus report: {e}") from None
    failure = _failure_from(data["failure"])
    if failure is not None and failure.stage != rename(failure.stage):
        failure = dataclasses.replace(failure, stage=rename(failure.stage))
    return dict(
        name=data["name"],
        platforms=tuple(data["platforms"]),
        stages=tuple(dict.fromkeys(rename(s) for s in data["stages"] if kinds.known(rename(s)))),
        provenance=Provenance.from_json(data["provenance"]) if data["provenance"] else None,
        texts=texts,
        analyses=Analyses(cost["lowered"], cost["compiled"], data["analyses"]["memory"]),
        timings=dict(data["timings"]),
        failure=failure,
        unavailable={rename(k): v for k, v in data["unavailable"].items()},
        debug_info=data["debug_info"],
        notes=tuple(data.get("notes", ())),
        target=_target_from(data.get("target")),
        stage_data=stage_data,
        **fields,
    )
