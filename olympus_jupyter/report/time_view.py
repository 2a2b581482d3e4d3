"""The time column of the ``costs`` stage, for a report made for a target: each
source line's and module's time before any run (:mod:`olympus.line_time`), beside
its flops and bytes.

The data (only in a target's report; a report of this machine's devices has none):

- ``costs['time']``: what the figure is (``figure``: ``cycles``, the TPU
  compiler's estimate, or ``roofline``, from a GPU's peak FLOP/s and memory
  bandwidth), ``what`` it is in words (every form says it), a column ``label``, the
  ``chip`` and the per-device figures used (``clock_hz``, ``peak_flops``,
  ``hbm_bandwidth``: ``null`` where not known or not used), the totals the rows add
  up to (``cycles``, ``seconds``) and ``notes`` (what the figures leave out);
- each row of ``costs['lines']`` (and each library line of its ``via``) and of
  ``costs['modules']``: ``cycles`` (TPU) and ``seconds`` (``null`` where the chip's
  clock is not known); a roofline row's ``bound`` says which of ``flops`` and
  ``bytes`` set it.

:func:`row_fields` and :func:`shares` give the rows of ``report.cost_by_line()``
and ``report.cost_by_module()`` their ``cycles``, ``seconds`` and ``time_share``
(of the total the rows add up to); :func:`time_words` writes a row's time as the
text and static HTML forms do.

>>> from olympus.line_time import LineTime, TimeByLine
>>> time = TimeByLine("cycles", "the compiler's estimate of cycles, before any run",
...                   "time (compiler's estimate)", "TPU v5e",
...                   (LineTime("/m.py", 3, 3000.0, 2e-6),), {"": {"cycles": 3000.0,
...                   "seconds": 2e-6}}, clock_hz=1.5e9)
>>> data = {"lines": [{"what": "line", "file": 0, "path": None, "line": 3, "flops": 8.0,
...          "transcendentals": 0.0, "bytes": 96.0, "peak": 0, "via": []}],
...         "modules": [{"path": "", "flops": 8.0, "transcendentals": 0.0, "bytes": 96.0}]}
>>> add_time(data, time, ["/m.py"])
>>> data["lines"][0]["cycles"], data["time"]["seconds"], time_words(data["time"], data["lines"][0])
(3000.0, 2e-06, '3.0 k cycles, 2 µs')
"""

from __future__ import annotations

import math
import textwrap
from collections.abc import Mapping, MutableMapping, Sequence
from typing import Any

from olympus.line_time import CYCLES, ROOFLINE, TimeByLine, roofline_seconds

from olympus_jupyter.report.cost_names import format_flops, format_share, format_value
from olympus_jupyter.report.data import cost_row, file_index

__all__ = [
    "TIME_KEYS",
    "add_time",
    "time_json",
    "row_fields",
    "module_fields",
    "shares",
    "total",
    "text_lines",
    "text_figure",
    "time_value",
    "time_words",
]

#: The keys a row's time is kept under.
TIME_KEYS = ("cycles", "seconds")


def time_json(time: TimeByLine) -> dict[str, Any]:
    """``costs['time']``: the figure, named, with the chip's figures and totals."""
    return {
        "figure": time.figure,
        "what": time.what,
        "label": time.label,
        "chip": time.chip,
        "clock_hz": time.clock_hz,
        "peak_flops": time.peak_flops,
        "hbm_bandwidth": time.hbm_bandwidth,
        "cycles": time.cycles,
        "seconds": time.seconds,
        "notes": list(time.notes),
    }


def add_time(data: MutableMapping[str, Any], time: TimeByLine, files: Sequence[str]) -> None:
    """Puts ``time`` in the ``costs`` data (:func:`olympus_jupyter.report.costs_view.costs_json`'s):
    ``data['time']``, and each row's, library line's and module's ``cycles`` and
    ``seconds`` (0 where the time holds none of it; a line with time and no cost
    of its own gets a row)."""
    data["time"] = time_json(time)
    clocked = time.figure != CYCLES or bool(time.clock_hz)

    def zero() -> dict[str, Any]:
        return {
            "cycles": 0.0 if time.figure == CYCLES else None,
            "seconds": 0.0 if clocked else None,
        }

    rows: dict[tuple, dict] = {}
    for r in data.get("lines") or ():
        r.update(zero())
        if time.figure == ROOFLINE:
            r["bound"] = None
        for v in r.get("via") or ():
            v.update(zero())
        rows[r["what"], r["file"], r["path"], r["line"]] = r
    added = []
    for t in time.lines:
        file, path = file_index(files, t.file)
        what = "line" if t.file is not None else "compiler-made"
        row = rows.get((what, file, path, t.line))
        if row is None:
            row = rows[what, file, path, t.line] = {**cost_row(what, file, path, t.line), **zero()}
            added.append(row)
        row["cycles"], row["seconds"] = t.cycles, t.seconds
        if time.figure == ROOFLINE:
            row["bound"] = t.bound
        via = {(v["file"], v["path"], v["line"], v["function"]): v for v in row.get("via") or ()}
        for part in t.library:
            v = via.get((*file_index(files, part.file), part.line, part.function))
            if v is not None:
                v["cycles"], v["seconds"] = part.cycles, part.seconds
    if added:  # after the source lines, before the compiler-made and arguments rows
        lines = list(data.get("lines") or ())
        at = sum(1 for r in lines if r["what"] == "line")
        data["lines"] = lines[:at] + [r for r in added if r["what"] == "line"] + lines[at:]
        data["lines"] += [r for r in added if r["what"] != "line"]
    modules = {m["path"]: m for m in data.get("modules") or ()}
    for m in modules.values():
        m.update(zero())
    for path, figures in time.modules.items():
        m = modules.get(path)
        if m is None:
            m = {"path": path, "flops": 0.0, "transcendentals": 0.0, "bytes": 0.0}
            data.setdefault("modules", []).append(m)
        m["cycles"], m["seconds"] = figures.get("cycles"), figures.get("seconds")


def _number(value: Any) -> float:
    try:
        v = float(value)
    except (TypeError, ValueError):
        return 0.0
    return v if math.isfinite(v) and v > 0 else 0.0


def time_value(time: Mapping[str, Any], row: Mapping[str, Any]) -> float:
    """What a row's share of time is counted in: its cycles (TPU) or seconds."""
    return _number(row.get("cycles") if time.get("figure") == CYCLES else row.get("seconds"))


def row_fields(data: Mapping[str, Any], row: Mapping[str, Any]) -> dict[str, Any]:
    """A row's time (``cycles``, ``seconds``, and a roofline's ``bound``) as
    ``report.cost_by_line()`` and ``cost_by_module()`` give it, from the row of the
    data (``{}`` where the data has no time). A roofline row whose figures were
    moved (``frames="innermost"``) is worked out again from its flops and bytes."""
    time = data.get("time")
    if not time:
        return {}
    out = {"cycles": row.get("cycles"), "seconds": row.get("seconds")}
    if time.get("figure") == ROOFLINE:
        peak, bandwidth = _number(time.get("peak_flops")), _number(time.get("hbm_bandwidth"))
        if peak and bandwidth:
            flops = _number(row.get("flops")) + _number(row.get("transcendentals"))
            seconds, bound = roofline_seconds(flops, _number(row.get("bytes")), peak, bandwidth)
            out["seconds"], out["bound"] = seconds, bound if seconds else None
    return out


def module_fields(data: Mapping[str, Any], figures: Mapping[str, float]) -> dict[str, Any]:
    """A module tree node's ``cycles`` and ``seconds`` (its modules' own, added up:
    ``figures``), as ``report.cost_by_module()`` gives them; ``{}`` without time."""
    time = data.get("time")
    if not time:
        return {}
    return {
        "cycles": figures.get("cycles", 0.0) if time.get("figure") == CYCLES else None,
        "seconds": figures.get("seconds") if time.get("seconds") is not None else None,
    }


def total(data: Mapping[str, Any]) -> float:
    """What the data's time rows add up to: its cycles (TPU) or seconds (0 without)."""
    time = data.get("time") or {}
    return _number(time.get("cycles") if time.get("figure") == CYCLES else time.get("seconds"))


def shares(
    data: Mapping[str, Any],
    rows: Sequence[Mapping[str, Any]],
    among: Sequence[MutableMapping[str, Any]] | None = None,
    *,
    summed: bool = False,
) -> None:
    """Gives each row (of ``among``, by default ``rows``) its ``time_share``: of the
    data's total (:func:`total`: what the rows by line add up to), or ``summed``,
    for a roofline, of what ``rows`` add up to (the modules', or lines whose figures
    were moved: a roofline of a sum is not the sum of the rooflines). Nothing where
    the data has no time."""
    time = data.get("time")
    if not time:
        return
    whole = total(data)
    if (summed and time.get("figure") == ROOFLINE) or not whole:
        whole = sum(time_value(time, r) for r in rows)
    for r in rows if among is None else among:
        r["time_share"] = time_value(time, r) / whole if whole else 0.0  # type: ignore[index]


def _ascii(text: str) -> str:
    """As the text form writes: ASCII (``us`` for µs, ``x`` for ×)."""
    return text.replace("\u00b5", "u").replace("\u00d7", "x").replace("\u2014", "-")


def text_lines(costs: Mapping[str, Any], width: int = 200) -> list[str]:
    """The text form's lines naming the time column and its total, with its notes
    (``[]`` without time).

    >>> print("\\n".join(text_lines({"time": {"figure": "roofline", "seconds": 2e-3,
    ...     "what": "roofline estimate from the H100's peak FLOP/s", "notes": ["a bound"]}})))
        time: 2 ms in all, roofline estimate from the H100's peak FLOP/s
          a bound
    """
    time = costs.get("time")
    if not time:
        return []
    whole = time_words(time, {"cycles": time.get("cycles"), "seconds": time.get("seconds")})
    said = [f"    time: {whole} in all, {time.get('what', '')}"]
    said.extend(f"      {note}" for note in time.get("notes") or ())
    out = []
    for line in said:  # wrapped as the summary's notes are
        indent = " " * (len(line) - len(line.lstrip()) + 2)
        out.extend(
            textwrap.wrap(
                _ascii(line),
                width,
                subsequent_indent=indent,
                break_long_words=False,
                break_on_hyphens=False,
                drop_whitespace=True,
            )
            or [""]
        )
    return out


def text_figure(costs: Mapping[str, Any], row: Mapping[str, Any]) -> str:
    """A row's time as the text form appends it to the row's figures: ``', time
    15.1 k cycles, 10.0 us (44%)'`` (``''`` without time)."""
    time = costs.get("time")
    if not time:
        return ""
    whole = total(costs)
    given = row.get("time_share")  # a module tree node's: of the modules' total
    part = given if given is not None else (time_value(time, row) / whole if whole else None)
    share = f" ({format_share(part)})" if part is not None else ""
    return _ascii(f", time {time_words(time, row)}{share}")


def time_words(time: Mapping[str, Any], row: Mapping[str, Any]) -> str:
    """A row's time as the text and static HTML forms write it: ``'15.1 k cycles,
    10.0 µs'`` (TPU; cycles alone where the clock is not known), ``'12.3 µs
    (memory-bound)'`` (a roofline).

    >>> time_words({"figure": "roofline"}, {"seconds": 1.23e-5, "bound": "bytes"})
    '12.3 µs (memory-bound)'
    >>> time_words({"figure": "cycles"}, {"cycles": 0.0, "seconds": None})
    '0 cycles'
    """
    seconds = row.get("seconds")
    said = format_value(_number(seconds), "seconds") if seconds is not None else None
    if time.get("figure") == CYCLES:
        cycles = format_flops(_number(row.get("cycles")), "cycles")
        return f"{cycles}, {said}" if said is not None else cycles
    bound = {"flops": " (compute-bound)", "bytes": " (memory-bound)"}.get(
        row.get("bound") or "", ""
    )
    return f"{said or '0 s'}{bound}"
