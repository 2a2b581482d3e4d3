"""The provenance model as JSON: schema ``olympus.provenance``, version 2.

Ops are stored by column, one entry per op, each column compact: strings are
dictionary-encoded (``{"values": [...], "codes": "0,1,0,,2"}``), integers and line
spans are one comma-separated string (``"3,,5"``, ``"2,4:9"``); a column whose
entries all hold the default (``null``, ``""``, ``[]``) is left out. The ``lines``
table stores op indices as runs (``"0-4,7"``). Source positions are stored once
in ``files``/``frames``/``locations`` and ops refer to a location by index. The
full schema is in ``docs/provenance.md``.

>>> model = olympus.provenance.build(olympus.jit(lambda x: x * 2).trace(1.0))
>>> data = to_json(model)
>>> data["schema"], data["version"], data["stages"]["olympuspr"]["ops"]["name"]
('olympus.provenance', 2, {'values': ['mul'], 'codes': '0'})
>>> type(model)(**fields_from_json(data)) == model
True
"""

from __future__ import annotations

import json
import operator
from collections.abc import Mapping
from typing import Any

from olympus import stage_registry
from olympus.provenance.parts import (
    Computation,
    Frame,
    FunctionInfo,
    Location,
    Op,
    SourceFile,
    SourceLine,
    Stage,
)

__all__ = [
    "SCHEMA",
    "VERSION",
    "to_json",
    "fields_from_json",
    "dumps",
    "encode_indices",
    "decode_indices",
]

SCHEMA = "olympus.provenance"
VERSION = 2
#: Version 1 named the compiled program's stage ``hlo``; it reads as ``compiled``.
_V1_STAGE_NAMES = {"hlo": "compiled"}

# Op columns, by how they are encoded: dictionary-encoded strings (``types``: a
# tuple of strings per op), integers, and line spans.
_DICT_COLUMNS = (
    ("name", None),
    ("types", ()),
    ("name_stack", ""),
    ("sharding", None),
    ("label", None),
    ("collective", None),
)
_INT_COLUMNS = ("location", "parent", "computation", "fusion")
_FIELDS = (
    "name",
    "types",
    "lines",
    "location",
    "name_stack",
    "parent",
    "sharding",
    "label",
    "computation",
    "fusion",
    "collective",
)
_DEFAULTS = {**dict(_DICT_COLUMNS), **{f: None for f in _INT_COLUMNS}, "lines": None}
_GETTERS = {f: operator.attrgetter(f) for f in _FIELDS}


def _encode_dict(values: list[Any], default: Any) -> dict[str, Any]:
    table: dict[Any, int] = {}
    code = table.setdefault  # a value's code: its place in the table, given when first seen
    codes = ["" if v == default else str(code(v, len(table))) for v in values]
    return {
        "values": [list(v) if isinstance(v, tuple) else v for v in table],
        "codes": ",".join(codes),
    }


def _decode_dict(col: Mapping[str, Any], default: Any, tuples: bool) -> list[Any]:
    values = [tuple(v) for v in col["values"]] if tuples else list(col["values"])
    return [values[int(c)] if c else default for c in col["codes"].split(",")]


def _encode_ints(values: list[int | None]) -> str:
    return ",".join(["" if v is None else str(v) for v in values])


def _decode_ints(text: str) -> list[int | None]:
    return [int(c) if c else None for c in text.split(",")]


def _encode_spans(values: list[tuple[int, int] | None]) -> str:
    return ",".join(
        ["" if v is None else str(v[0]) if v[0] == v[1] else f"{v[0]}:{v[1]}" for v in values]
    )


def _decode_span(item: str) -> tuple[int, int] | None:
    if not item:
        return None
    a, _, b = item.partition(":")
    first = int(a)
    return (first, int(b) if b else first)


def encode_indices(indices: tuple[int, ...] | list[int]) -> str:
    """Op indices as one string, consecutive runs as ``start-end``: ``"0-4,7"``.

    >>> encode_indices([0, 1, 2, 3, 4, 7]), decode_indices("0-4,7")
    ('0-4,7', (0, 1, 2, 3, 4, 7))
    """
    parts = []
    k, n = 0, len(indices)
    while k < n:
        start = end = indices[k]
        k += 1
        while k < n and indices[k] == end + 1:
            end = indices[k]
            k += 1
        parts.append(str(start) if start == end else f"{start}-{end}")
    return ",".join(parts)


def decode_indices(text: str, limit: int | None = None) -> tuple[int, ...]:
    """Reads :func:`encode_indices` back; with ``limit`` (the number of ops the indices
    refer to), an index outside ``range(limit)`` raises ``ValueError`` before any run
    is expanded, so a few characters cannot make millions of integers.

    >>> decode_indices("0-999999999", limit=12)
    Traceback (most recent call last):
    ValueError: op index 999999999 is out of range: the stage has 12 ops.
    """
    out: list[int] = []
    if not text:
        return ()
    for item in text.split(","):
        a, _, b = item.partition("-")
        first, last = int(a), int(b) if b else int(a)
        if limit is not None and not 0 <= first <= last < limit:
            bad = last if 0 <= first <= last else first
            raise ValueError(f"op index {bad} is out of range: the stage has {limit} ops.")
        if b:
            out.extend(range(first, last + 1))
        else:
            out.append(first)
    return tuple(out)


def _ops_to_json(ops: tuple[Op, ...]) -> dict[str, Any]:
    out: dict[str, Any] = {"count": len(ops)}
    for field in _FIELDS:
        default = _DEFAULTS[field]
        values = list(map(_GETTERS[field], ops))
        if field != "name" and values.count(default) == len(values):
            continue
        if field == "lines":
            out[field] = _encode_spans(values)
        elif field in _INT_COLUMNS:
            out[field] = _encode_ints(values)
        else:
            out[field] = _encode_dict(values, default)
    return out


def _ops_from_json(stage: str, data: Mapping[str, Any]) -> tuple[Op, ...]:
    n = int(data["count"])
    names = data.get("name", {}).get("codes", "") if n else ""
    if n < 0 or (n and names.count(",") + 1 != n):
        raise ValueError(
            f"Stage {stage!r}: it claims {n} ops but names {names.count(',') + 1 if names else 0}."
        )
    columns: dict[str, list[Any]] = {}
    for field in _FIELDS:
        default = _DEFAULTS[field]
        col = data.get(field)
        if col is None or n == 0:
            columns[field] = [default] * n
            continue
        if field == "lines":
            values: list[Any] = [_decode_span(c) for c in col.split(",")]
        elif field in _INT_COLUMNS:
            values = _decode_ints(col)
        else:
            values = _decode_dict(col, default, tuples=field == "types")
        if len(values) != n:
            raise ValueError(
                f"Stage {stage!r}: column {field!r} has {len(values)} entries for {n} ops."
            )
        columns[field] = values
    return tuple(Op(stage=stage, index=k, **{f: columns[f][k] for f in columns}) for k in range(n))


def _stage_to_json(stage: Stage) -> dict[str, Any]:
    out: dict[str, Any] = {"text": stage.text, "ops": _ops_to_json(stage.ops)}
    if stage.computations:
        out["computations"] = [
            {
                "name": c.name,
                "lines": [c.lines[0], c.lines[1]],
                "entry": c.entry,
                "caller": c.caller,
                "fusion": c.fusion,
            }
            for c in stage.computations
        ]
    for field in ("arg_shardings", "result_shardings", "collectives", "notes"):
        value = getattr(stage, field)
        if value:
            out[field] = list(value)
    return out


def _stage_from_json(name: str, data: Mapping[str, Any]) -> Stage:
    comps = tuple(
        Computation(
            name=c["name"],
            lines=(int(c["lines"][0]), int(c["lines"][1])),
            entry=bool(c.get("entry", False)),
            caller=c.get("caller"),
            fusion=c.get("fusion"),
        )
        for c in data.get("computations", ())
    )
    return Stage(
        name=name,
        text=data["text"],
        ops=_ops_from_json(name, data["ops"]),
        computations=comps,
        arg_shardings=tuple(data.get("arg_shardings", ())),
        result_shardings=tuple(data.get("result_shardings", ())),
        collectives=tuple(data.get("collectives", ())),
        notes=tuple(data.get("notes", ())),
    )


def to_json(model) -> dict[str, Any]:
    """A :class:`~olympus.provenance.model.Provenance` as JSON-ready data (dicts, lists,
    strings, numbers)."""
    fn = model.function
    return {
        "schema": SCHEMA,
        "version": VERSION,
        "function": {
            "name": fn.name,
            "file": fn.file,
            "first_line": fn.first_line,
            "last_line": fn.last_line,
        },
        "platforms": list(model.platforms),
        "files": [
            {
                "path": f.path,
                "complete": f.complete,
                "chunks": [[first, text] for first, text in f.chunks],
                **({"library": True} if f.library else {}),
            }
            for f in model.files
        ],
        "frames": [
            [f.file, f.line, f.column, f.end_line, f.end_column, f.function] for f in model.frames
        ],
        "locations": [list(loc.frames) for loc in model.locations],
        "stages": {name: _stage_to_json(model.stages[name]) for name in model.stage_names},
        "unavailable": dict(model.unavailable),
        "lines": [
            {
                "file": e.file,
                "line": e.line,
                "ops": {s: encode_indices(v) for s, v in e.ops.items()},
            }
            for e in model.lines
        ],
    }


def fields_from_json(data: Mapping[str, Any] | str) -> dict[str, Any]:
    """The fields of a :class:`~olympus.provenance.model.Provenance` from :func:`to_json`
    data (or a JSON string of it); ``Provenance.from_json`` makes the model.

    Reads this version and version 1 (whose compiled stage was named ``hlo``).
    Raises ``ValueError`` for a document of another schema or a newer version.
    """
    if isinstance(data, (str, bytes)):
        data = json.loads(data)
    if not isinstance(data, Mapping) or data.get("schema") != SCHEMA:
        got = data.get("schema") if isinstance(data, Mapping) else type(data).__name__
        raise ValueError(
            f"Not an Olympus provenance document: expected schema {SCHEMA!r}, got {got!r}."
        )
    version = data.get("version")
    if version not in (1, VERSION):
        raise ValueError(
            f"Provenance document version {version!r} is not readable here: "
            f"this Olympus reads versions 1 to {VERSION}. Rebuild the model with "
            f"olympus.provenance.build, or upgrade Olympus."
        )
    renamed = _V1_STAGE_NAMES if version == 1 else {}
    fn = data["function"]
    # Stages this version does not know are skipped.
    stages = {renamed.get(name, name): value for name, value in data.get("stages", {}).items()}
    made = {
        s.name: _stage_from_json(s.name, stages[s.name])
        for s in stage_registry.provenance_stages()
        if s.name in stages
    }
    return dict(
        function=FunctionInfo(
            fn["name"], fn.get("file"), fn.get("first_line"), fn.get("last_line")
        ),
        platforms=tuple(data.get("platforms", ())),
        stages=made,
        unavailable=dict(data.get("unavailable", {})),
        files=tuple(
            SourceFile(
                f["path"],
                tuple((int(first), str(text)) for first, text in f.get("chunks", ())),
                bool(f.get("complete", False)),
                bool(f.get("library", False)),
            )
            for f in data.get("files", ())
        ),
        frames=tuple(
            Frame(int(a), int(b), int(c), int(d), int(e), str(g))
            for a, b, c, d, e, g in data.get("frames", ())
        ),
        locations=tuple(Location(tuple(int(i) for i in loc)) for loc in data.get("locations", ())),
        lines=tuple(
            SourceLine(
                int(e["file"]),
                int(e["line"]),
                {
                    s: decode_indices(v, len(made[s].ops))
                    for s, v in ((renamed.get(s, s), v) for s, v in e["ops"].items())
                    if s in made
                },
            )
            for e in data.get("lines", ())
        ),
    )


def dumps(data: Mapping[str, Any], *, indent: int | None = None) -> str:
    """A JSON string of :func:`to_json` data; compact separators unless indented."""
    if indent is None:
        return json.dumps(data, separators=(",", ":"), ensure_ascii=False)
    return json.dumps(data, indent=indent, ensure_ascii=False)
