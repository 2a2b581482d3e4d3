"""The provenance model as JSON: schema ``olympus.provenance``, version 1.

Ops are stored by column (``"name": [...]``, ``"lines": [...]``...), one entry per
op, so that keys are not repeated per op; a column whose entries all hold the
default (``null``, ``""``, ``[]``) is left out. Source positions are stored once
in ``files``/``frames``/``locations`` and ops refer to a location by index. The
full schema is in ``docs/provenance.md``.

>>> model = olympus.provenance.build(olympus.jit(lambda x: x * 2).trace(1.0))
>>> data = to_json(model)
>>> data["schema"], data["version"], data["stages"]["olympuspr"]["ops"]["name"]
('olympus.provenance', 1, ['mul'])
>>> from_json(data) == model
True
"""
from __future__ import annotations

import json
from collections.abc import Mapping
from typing import Any

from olympus.provenance.model import (STAGES, Computation, Frame, FunctionInfo, Location, Op,
                                      Provenance, SourceFile, SourceLine, Stage)

__all__ = ["SCHEMA", "VERSION", "to_json", "from_json", "dumps"]

SCHEMA = "olympus.provenance"
VERSION = 1

# Op columns: (field, default, to JSON, from JSON).
_tuple_list = (lambda v: list(v), lambda v: tuple(v))
_pair = (lambda v: None if v is None else [v[0], v[1]],
         lambda v: None if v is None else (int(v[0]), int(v[1])))
_same = (lambda v: v, lambda v: v)
_OP_COLUMNS = (
    ("name", None, *_same),
    ("types", (), *_tuple_list),
    ("lines", None, *_pair),
    ("location", None, *_same),
    ("name_stack", "", *_same),
    ("parent", None, *_same),
    ("sharding", None, *_same),
    ("label", None, *_same),
    ("computation", None, *_same),
    ("fusion", None, *_same),
    ("collective", None, *_same),
)


def _ops_to_json(ops: tuple[Op, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"count": len(ops)}
    for field, default, enc, _ in _OP_COLUMNS:
        values = [getattr(op, field) for op in ops]
        if field == "name" or any(v != default for v in values):
            out[field] = [enc(v) for v in values]
    return out


def _ops_from_json(stage: str, data: Mapping[str, Any]) -> tuple[Op, ...]:
    n = int(data["count"])
    columns = {}
    for field, default, _, dec in _OP_COLUMNS:
        values = data.get(field)
        if values is None:
            columns[field] = [default] * n
        else:
            if len(values) != n:
                raise ValueError(f"Stage {stage!r}: column {field!r} has {len(values)} "
                                 f"entries for {n} ops.")
            columns[field] = [dec(v) for v in values]
    return tuple(Op(stage=stage, index=k, **{f: columns[f][k] for f in columns})
                 for k in range(n))


def _stage_to_json(stage: Stage) -> dict[str, Any]:
    out: dict[str, Any] = {"text": stage.text, "ops": _ops_to_json(stage.ops)}
    if stage.computations:
        out["computations"] = [
            {"name": c.name, "lines": [c.lines[0], c.lines[1]], "entry": c.entry,
             "caller": c.caller, "fusion": c.fusion} for c in stage.computations]
    for field in ("arg_shardings", "result_shardings", "collectives", "notes"):
        value = getattr(stage, field)
        if value:
            out[field] = list(value)
    return out


def _stage_from_json(name: str, data: Mapping[str, Any]) -> Stage:
    comps = tuple(Computation(name=c["name"], lines=(int(c["lines"][0]), int(c["lines"][1])),
                              entry=bool(c.get("entry", False)), caller=c.get("caller"),
                              fusion=c.get("fusion"))
                  for c in data.get("computations", ()))
    return Stage(name=name, text=data["text"], ops=_ops_from_json(name, data["ops"]),
                 computations=comps,
                 arg_shardings=tuple(data.get("arg_shardings", ())),
                 result_shardings=tuple(data.get("result_shardings", ())),
                 collectives=tuple(data.get("collectives", ())),
                 notes=tuple(data.get("notes", ())))


def to_json(model: Provenance) -> dict[str, Any]:
    """The model as JSON-ready data (dicts, lists, strings, numbers)."""
    fn = model.function
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "function": {"name": fn.name, "file": fn.file, "first_line": fn.first_line,
                     "last_line": fn.last_line},
        "platforms": list(model.platforms),
        "files": [{"path": f.path, "complete": f.complete,
                   "chunks": [[first, text] for first, text in f.chunks]}
                  for f in model.files],
        "frames": [[f.file, f.line, f.column, f.end_line, f.end_column, f.function]
                   for f in model.frames],
        "locations": [list(loc.frames) for loc in model.locations],
        "stages": {name: _stage_to_json(model.stages[name]) for name in model.stage_names},
        "lines": [{"file": e.file, "line": e.line,
                   "ops": {s: list(v) for s, v in e.ops.items()}} for e in model.lines],
    }


def from_json(data: Mapping[str, Any] | str) -> Provenance:
    """Reads :func:`to_json` data (or a JSON string of it) back into a model.

    Raises ``ValueError`` for a document of another schema or a newer version.
    """
    if isinstance(data, (str, bytes)):
        data = json.loads(data)
    if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
        got = data.get("schema") if isinstance(data, Mapping) else type(data).__name__
        raise ValueError(f"Not an Olympus provenance document: expected schema {SCHEMA!r}, "
                         f"got {got!r}.")
    version = data.get("version")
    if version != VERSION:
        raise ValueError(f"Provenance document version {version!r} is not readable here: "
                         f"this Olympus reads version {VERSION}. Rebuild the model with "
                         f"olympus.provenance.build, or upgrade Olympus.")
    fn = data["function"]
    stages = data.get("stages", {})  # stages this version does not know are skipped
    return Provenance(
        function=FunctionInfo(fn["name"], fn.get("file"), fn.get("first_line"),
                              fn.get("last_line")),
        platforms=tuple(data.get("platforms", ())),
        stages={s: _stage_from_json(s, stages[s]) for s in STAGES if s in stages},
        files=tuple(SourceFile(f["path"],
                               tuple((int(first), str(text)) for first, text in f.get("chunks", ())),
                               bool(f.get("complete", False)))
                    for f in data.get("files", ())),
        frames=tuple(Frame(int(a), int(b), int(c), int(d), int(e), str(g))
                     for a, b, c, d, e, g in data.get("frames", ())),
        locations=tuple(Location(tuple(int(i) for i in loc))
                        for loc in data.get("locations", ())),
        lines=tuple(SourceLine(int(e["file"]), int(e["line"]),
                               {s: tuple(v) for s, v in e["ops"].items()})
                    for e in data.get("lines", ())),
    )


def dumps(data: Mapping[str, Any], *, indent: int | None = None) -> str:
    """A JSON string of :func:`to_json` data; compact separators unless indented."""
    if indent is None:
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return json.dumps(data, indent=indent, ensure_ascii=False)
