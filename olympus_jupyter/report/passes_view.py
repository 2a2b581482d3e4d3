"""The ``passes`` stage of a report: XLA's pass pipeline (:mod:`olympus.passes`) as data.

The core compiles once more with XLA's per-pass dumps and reads them into a
:class:`~olympus.passes.PassPipeline` and each source line's
:class:`~olympus.passes.Journey`; this module makes that the report's ``passes``
data, which the bundle carries and every form shows:

- ``rows``: every pass XLA names, in order: a pipeline's start, a pass that
  changed the module (``changed``; a change a pipeline's start shows is the
  outer pass's it runs inside, or work outside XLA's pipelines:
  :meth:`~olympus.passes.PassPipeline.credits`), one that ran and changed
  nothing (``unchanged``: XLA writes no module for it, but names it as the pass
  that ran next; or a point inside a pass where nothing changed yet), or, with a
  pass filter, the module as it was before a kept pass (``context``). Each row
  has the instruction count before and after it, and changed rows the lines
  their diff adds and removes;
- ``before`` and ``deltas``: the module before the first pass, and after each
  dumped step, each as a delta of the one before: a list whose items are either
  ``[i, j]`` (lines ``i`` to ``j - 1`` of the previous module, kept) or a string
  (a new line). Modules are mostly alike from one pass to the next, so this keeps
  a hundred steps of a big program small; past :data:`MAX_DELTA_CHARS` (unless
  the report is ``full``) the later deltas are left out (``null``) and ``note``
  says so;
- ``journeys``: for each source line of the report's files with instructions
  before the passes, where they went: the instructions that carried it at the
  start and at the end, and the events between (fused, removed by CSE…), each
  naming the step (index into the dumped steps) of the pass that decided it.

:func:`cap_passes` cuts the data to a byte budget for an output with a size cap:
the pass table stays whole, the first lines' journeys and the first modules are
kept, and ``note`` counts what was left out.

>>> import olympus, olympus.numpy as jnp, numpy as np
>>> from olympus.passes import pass_pipeline
>>> lowered = olympus.jit(lambda x: jnp.tanh(x * 2.0)).trace(np.ones(4, np.float32)).lower()
>>> data = passes_json(pass_pipeline(lowered), files=())
>>> module_texts(data)[-1] == pass_pipeline(lowered).steps[-1].text
True
>>> any(r["kind"] == "changed" and r["pass"] == "fusion" for r in data["rows"])
True
"""

from __future__ import annotations

import re
from collections.abc import Mapping, Sequence
from typing import Any

from olympus.op_instructions import OP_STAGES, keys_by_op
from olympus.passes import (
    Carrier,
    JourneyIndex,
    PassPipeline,
    PassStep,
    instruction_count,
    journey_index,
)

from olympus_jupyter.report.data import compact_json

from olympus_jupyter.report.data_cap import MAX_MESSAGE, clip_message, json_size, kept_prefix
from olympus_jupyter.report.line_diff import id_diff, line_ids

__all__ = [
    "passes_json",
    "StepDeltas",
    "step_deltas",
    "read_deltas",
    "cap_passes",
    "module_lines",
    "module_texts",
    "delta_opcodes",
    "step_change",
    "journey_json",
    "op_journeys_json",
    "MAX_OP_JOURNEY_CHARS",
    "line_summary",
    "op_journey_rows",
    "counts",
    "check_passes",
    "MAX_DELTA_CHARS",
]

#: Characters of modules (the first one and the deltas) a report carries, uncapped
#: with ``full``: a notebook keeps a report's data twice (its JSON, and the HTML's
#: island) under output_cap's 5 MB, with the other stages.
MAX_DELTA_CHARS = 1_000_000

#: Characters of op journeys (``op_journeys``) a report carries, uncapped with ``full``.
MAX_OP_JOURNEY_CHARS = 500_000

#: Labels an event of a journey names (the schema's ``maxItems``).
MAX_LABELS = 4096


def _rows(pipeline: PassPipeline) -> tuple[list[dict], list[int]]:
    """The pass table, and for each dumped step the row that shows it: each step
    as :meth:`~olympus.passes.PassPipeline.credits` puts its change down, and after
    it the pass that ran next where that pipeline's next dump is not after it (it
    changed nothing)."""
    keep = re.compile(pipeline.pass_re)
    rows: list[dict] = []
    row_of_step: list[int] = []
    count = instruction_count(pipeline.before)
    steps = pipeline.steps
    # The next step each pipeline dumped after each step (nested pipelines' dumps
    # come between); a point inside a pass is no step of its pipeline.
    following: list[PassStep | None] = [None] * len(steps)
    last: dict[str, PassStep] = {}
    for k in range(len(steps) - 1, -1, -1):
        following[k] = last.get(steps[k].pipeline)
        if steps[k].point is None:
            last[steps[k].pipeline] = steps[k]
    for k, (step, credit) in enumerate(zip(steps, pipeline.credits())):
        row_of_step.append(len(rows))
        rows.append(
            {
                "step": k,
                "pipeline": credit.pipeline,
                "pass": credit.name,
                "kind": credit.kind,
                "instructions_before": count,
                "instructions": step.instructions,
                "added": 0,
                "removed": 0,
            }
        )
        count = step.instructions
        ran, then = step.before, following[k]
        if (
            ran
            and ran != "pipeline-end"
            and keep.search(ran)
            and (then is None or then.after != ran)
        ):
            rows.append(
                {
                    "step": None,
                    "pipeline": step.pipeline,
                    "pass": ran,
                    "kind": "unchanged",
                    "instructions_before": count,
                    "instructions": count,
                    "added": 0,
                    "removed": 0,
                }
            )
    return rows, row_of_step


class StepDeltas:
    """Each module of a pipeline as a delta of the one before (the ``deltas`` of
    the data): each module's lines numbered once, with one numbering for all of
    them (:func:`~.line_diff.line_ids`), and each delta made once, whoever asks
    first (:func:`read_deltas`, beside the compile, or :func:`passes_json`).

    >>> deltas = StepDeltas()
    >>> deltas.delta("a\\nb", "a\\nc")
    ([[0, 1], 'c'], 1, 1)
    >>> deltas.delta("a\\nc", "a\\nc")  # printed unchanged
    ([[0, 2]], 0, 0)
    """

    def __init__(self):
        self.ids: dict[str, int] = {}
        self._numbered: dict[str, list[int]] = {}
        self._made: dict[tuple[str, str], tuple[list, int, int]] = {}

    def numbered(self, text: str, lines: list[str] | None = None) -> list[int]:
        """The lines of ``text`` (split already where ``lines`` are given) as numbers."""
        found = self._numbered.get(text)
        if found is None:
            split = lines if lines is not None else text.split("\n")
            found = self._numbered[text] = line_ids(split, self.ids)
        return found

    def delta(self, old: str, new: str) -> tuple[list, int, int]:
        """``new`` as a delta of ``old`` (see the module's docstring), and the lines
        the change removed and added."""
        if new == old:  # a step that printed the module unchanged
            same = self.numbered(new)
            return _delta(same, same, None)
        found = self._made.get((old, new))
        if found is None:
            lines = new.split("\n")  # split once: numbered, and the delta's new lines
            found = self._made[(old, new)] = _delta(
                self.numbered(old), self.numbered(new, lines), lines
            )
        return found


def _delta(
    old: Sequence[int], new: Sequence[int], lines: list[str] | None
) -> tuple[list, int, int]:
    """``new`` as a delta of ``old`` (see the module's docstring), and the lines the
    change removed and added: both numbered by :func:`line_ids` (one ``ids``),
    ``lines`` the text of ``new`` (``None`` where ``new`` is ``old``: a step that
    printed the module unchanged)."""
    if lines is None:
        return ([[0, len(new)]] if new else []), 0, 0
    diff = id_diff(old, new)
    out: list = []
    for tag, i1, i2, j1, j2 in diff.opcodes:
        if tag == "equal":
            out.append([i1, i2])
        else:
            out.extend(lines[j1:j2])
    return out, diff.removed, diff.added


#: Where a pipeline's memo (``PassPipeline.memo``) keeps its :class:`StepDeltas`.
_DELTAS_KEY = ("step deltas",)


def step_deltas(memo: dict) -> StepDeltas:
    """The :class:`StepDeltas` kept in ``memo`` (a pipeline's, ``PassPipeline.memo``)."""
    found = memo.get(_DELTAS_KEY)
    if found is None:
        found = memo[_DELTAS_KEY] = StepDeltas()
    return found


def read_deltas(memo: dict, previous: str | None, text: str) -> None:
    """A reader of modules as the compile writes them
    (:class:`~olympus.dump_follow.DumpFollower`): each module's delta from the one
    before, for :func:`passes_json`."""
    deltas = step_deltas(memo)
    if previous is None:
        deltas.numbered(text)
    else:
        deltas.delta(previous, text)


def _carrier_json(c: Carrier) -> dict[str, Any]:
    return {"label": c.label, "opcode": c.opcode, "fusion": c.fusion, "fusion_kind": c.fusion_kind}


def passes_json(
    pipeline: PassPipeline,
    files: Sequence[str],
    *,
    full: bool = False,
    max_chars: int = MAX_DELTA_CHARS,
    focus=None,
    index: JourneyIndex | None = None,
    model=None,
) -> dict[str, Any]:
    """The report's ``passes`` data (see the module's docstring); ``files`` are the
    paths of the report's source files, in order: journeys name a file by its index
    there, and lines of other files (JAX's, the tools') are left out. Deltas past
    ``max_chars`` characters are left out unless ``full``. A journey is the line's
    that its instructions are charged to: the innermost of the user's own code
    (``focus``: :func:`olympus.provenance.focus.focus_of`). ``index``: the
    pipeline's modules already read (:func:`olympus.passes.journey_index`).
    ``model``: the report's provenance model, whose olympuspr and StableHLO ops'
    journeys the data carries too (``op_journeys``, :func:`op_journeys_json`), up
    to :data:`MAX_OP_JOURNEY_CHARS` unless ``full``."""
    if index is None:
        index = journey_index(pipeline, focus)
    found = index.charged()
    rows, row_of_step = _rows(pipeline)
    deltas: list = []
    budget = None if full else max_chars - len(pipeline.before)
    # Each made once, some beside the compile; let go of once used (the data holds
    # those it keeps), as the pipeline may be kept long after.
    made = pipeline.memo.pop(_DELTAS_KEY, None) or StepDeltas()
    text = pipeline.before
    for k, step in enumerate(pipeline.steps):
        delta, removed, added = made.delta(text, step.text)
        row = rows[row_of_step[k]]
        row["removed"], row["added"] = removed, added
        if budget is not None:
            # Past the budget every later delta goes too: each reads from the one before.
            budget -= sum(len(x) + 1 if isinstance(x, str) else 8 for x in delta)
        deltas.append(delta if budget is None or budget >= 0 else None)
        text = step.text
    left_out = deltas.count(None)
    before = pipeline.before if budget is None or len(pipeline.before) <= max_chars else ""
    index_of = {path: i for i, path in enumerate(files)}
    out_journeys = []
    for (path, line), j in sorted(
        found.items(), key=lambda kv: (index_of.get(kv[0][0], -1), kv[0][1])
    ):
        if path not in index_of:
            continue
        out_journeys.append(journey_json(j, index_of[path], row_of_step))
    note = None
    if left_out:
        note = (
            f"The modules after the last {left_out:,} of {len(deltas):,} passes are "
            f"left out to keep the report small (their table rows and the journeys "
            f"are complete); make the report with full=True (--full) to keep them."
        )
    if not before:
        note = (
            f"The modules are left out to keep the report small: the module XLA was "
            f"given is already {len(pipeline.before):,} characters (the table rows "
            f"and the journeys are complete); make the report with full=True "
            f"(--full) to keep them."
        )
    out: dict[str, Any] = {
        "pass_re": pipeline.pass_re,
        "module": pipeline.module,
        "before": before,
        "rows": rows,
        "deltas": deltas,
        "journeys": out_journeys,
        "note": note,
    }
    if model is not None:
        ops, left = op_journeys_json(
            index, model, row_of_step, None if full else MAX_OP_JOURNEY_CHARS
        )
        out["op_journeys"] = ops
        if left:
            said = (
                f"The journeys of {left:,} ops are left out to keep the report small "
                f"(report.journey_of_op(op) gives each)."
            )
            out["note"] = f"{note} {said}" if note else said
    return out


def _op_order(ident: str) -> tuple[int, int]:
    stage, _, index = ident.rpartition(":")
    return (OP_STAGES.index(stage) if stage in OP_STAGES else len(OP_STAGES), int(index))


def op_journeys_json(
    index: JourneyIndex, model, row_of_step: Sequence[int], max_chars: int | None = None
) -> tuple[list[dict[str, Any]], int]:
    """The journeys of the olympuspr and StableHLO ops of ``model`` (each of the
    instructions that came from the op itself, :mod:`olympus.op_instructions`),
    ops with the same journey together (``ops``: their ids), in the order of their
    first op. Past ``max_chars`` characters of JSON (a journey's the first time it
    is listed, and each op's id) the ops that follow are left out (an op's with
    the ops it cannot be told apart from: a Python loop's); their journeys are not
    made. Returns them and how many ops were left out."""
    keys = keys_by_op(model)
    made = index.of_each_key(keys)
    # Keys alike (the same instructions in every module: one journey), with their
    # ops (a Python loop's ops alike share one key), by their first op.
    order = sorted(
        (
            (alike[0], sorted((o for key in alike for o in keys.owners_of(key)), key=_op_order))
            for alike in made.alike()
        ),
        key=lambda item: _op_order(item[1][0]),
    )
    # The modules are read for one key of each in that order, a batch at a time:
    # the next batch as many as the room left may hold at the rate so far, with a
    # quarter more (and at least twice the last), so that little more is read
    # than is kept, in few batches.
    batch = _FIRST_KEYS if max_chars is not None else len(order)
    grouped: dict[str, dict[str, Any]] = {}  # alike journeys share one: by first op
    room, listed, ahead = max_chars, 0, 0
    for k, (key, ops) in enumerate(order):
        if k == ahead:
            if k and room is not None and max_chars is not None:
                rate = (max_chars - room) / k  # characters a key so far
                batch = max(2 * batch, int(room / max(rate, 1) * 1.25) + 1)
            made.read(key for key, _ in order[ahead : ahead + batch])
            ahead += batch
        data = journey_json(made.journey(key), 0, row_of_step)
        del data["file"], data["line"]
        text = compact_json(data)
        held = grouped.get(text)
        if room is not None:
            room -= 16 * len(ops) + (len(text) if held is None else 0)
            if room < 0:
                break
        if held is None:
            grouped[text] = held = {"ops": [], **data}
        held["ops"].extend(ops)
        listed += len(ops)
    for held in grouped.values():
        held["ops"].sort(key=_op_order)
    return list(grouped.values()), sum(len(ops) for _, ops in order) - listed


#: Keys whose journeys :func:`op_journeys_json` reads in its first batch (the next
#: batches are sized by the room left, at least twice the last).
_FIRST_KEYS = 128


#: Room kept for the note that says the ops were cut (a few hundred characters).
_NOTE_ROOM = 1024


def cap_passes(data: Mapping[str, Any], budget: float) -> tuple[Mapping[str, Any], str | None]:
    """``data`` cut to about ``budget`` bytes of JSON: the pass table whole, the
    journeys of the first source lines (most of the room where the modules would
    take it), then the module before the passes and after the first steps (each
    module reads from the one before: the later ones go first), and ``note``
    counting what was left out; the data as it is where it fits.

    >>> data = {"rows": [], "before": "x" * 500, "deltas": [["y"]] * 10, "note": None,
    ...         "journeys": [{"file": 0, "line": k, "events": []} for k in range(50)]}
    >>> cut, note = cap_passes(data, 800)
    >>> len(cut["journeys"]) < 50, cut["before"], set(map(str, cut["deltas"])), note == cut["note"]
    (True, '', {'None'}, True)
    """
    size = json_size(data)
    if size <= budget:
        return data, None
    ops = data.get("op_journeys")
    if ops:  # the ops' journeys go first: the kernel's report gives each
        rest = {**data, "op_journeys": []}
        spare = budget - json_size(rest) - _NOTE_ROOM
        if spare > 0:
            kept_ops = kept_prefix(ops, spare)
            left = sum(len(j["ops"]) for j in ops[kept_ops:])
            note = clip_message(
                f"passes: left out to keep this output under its size cap: the journeys "
                f"of {left:,} ops (report.journey_of_op(op) gives each in the kernel "
                f"that made the report)" + (f". {data['note']}" if data.get("note") else ""),
                MAX_MESSAGE // 8,
            )
            return {**data, "op_journeys": ops[:kept_ops], "note": note}, note
        cut, said = cap_passes(rest, budget)
        every = sum(len(j["ops"]) for j in ops)
        note = clip_message(
            f"{said or 'passes:'} The journeys of {every:,} ops are left out too "
            f"(report.journey_of_op(op) gives each).",
            MAX_MESSAGE // 8,
        )
        return {**cut, "note": note}, note
    journeys, deltas, before = data["journeys"], data["deltas"], data["before"]
    room = (
        budget - json_size({**data, "before": "", "deltas": [], "journeys": []}) - MAX_MESSAGE // 8
    )
    room -= 5 * len(deltas)  # a null for each step left out
    modules = json_size(before) + json_size([d for d in deltas if d is not None])
    journeys_room = max(room - modules, room * 0.6)
    kept = kept_prefix(journeys, journeys_room)
    room -= json_size(journeys[:kept])
    steps = 0
    if json_size(before) <= room:
        room -= json_size(before)
        while steps < len(deltas) and deltas[steps] is not None:
            room -= json_size(deltas[steps]) + 1
            if room < 0:
                break
            steps += 1
    else:
        before = ""
    left_out = []
    if kept < len(journeys):
        left_out.append(
            f"the journeys of {len(journeys) - kept:,} of {len(journeys):,} source lines "
            f"(report.journey(line) gives each)"
        )
    shown = sum(d is not None for d in deltas)
    if steps < shown:
        left_out.append(
            f"the modules after {shown - steps:,} of {len(deltas):,} passes"
            + (" and the module before them" if not before and data["before"] else "")
            + " (report.passes['deltas'] holds them)"
        )
    note = clip_message(
        f"passes: left out to keep this output under its size cap: {'; '.join(left_out)} "
        "in the kernel that made the report (a saved page has what is shown; the pass "
        "table is complete)" + (f". {data['note']}" if data.get("note") else ""),
        MAX_MESSAGE // 8,
    )
    return {
        **data,
        "before": before,
        "deltas": [d if k < steps else None for k, d in enumerate(deltas)],
        "journeys": journeys[:kept],
        "note": note,
    }, note


def journey_json(j, file: int, row_of_step: Sequence[int] | Mapping[int, int]) -> dict[str, Any]:
    """One line's journey as data: its events name the row of the pass table
    (``row_of_step``: the row of each dumped step)."""
    return {
        "file": file,
        "line": j.line,
        "start": [_carrier_json(c) for c in j.start],
        "end": [_carrier_json(c) for c in j.end],
        "events": [
            {
                "row": row_of_step[e.step],
                "pass": e.pass_name,
                "pipeline": e.pipeline,
                "kind": e.kind,
                "labels": list(e.labels[:MAX_LABELS]),
                "detail": e.detail,
            }
            for e in j.events
        ],
    }


def module_lines(data: Mapping[str, Any]) -> list[list[str] | None]:
    """The lines of the module after each dumped step, read back from the deltas
    (``None`` for the steps left out)."""
    previous = data["before"].split("\n")
    out: list[list[str] | None] = []
    for delta in data["deltas"]:
        if delta is None:
            out.append(None)
            continue
        lines: list[str] = []
        for item in delta:
            if isinstance(item, str):
                lines.append(item)
            else:
                lines.extend(previous[item[0] : item[1]])
        out.append(lines)
        previous = lines
    return out


def module_texts(data: Mapping[str, Any]) -> list[str | None]:
    """The module after each dumped step, read back from the deltas (``None`` for
    the steps left out)."""
    return [None if lines is None else "\n".join(lines) for lines in module_lines(data)]


def delta_opcodes(delta: Sequence, before: int) -> list[tuple[str, int, int, int, int]]:
    """The alignment a delta holds (of a module of ``before`` lines), as
    :class:`~olympus_jupyter.report.line_diff.LineDiff`'s opcodes: each kept range
    is equal, and what lies between two (lines gone, lines come) is one change.

    >>> delta_opcodes([[0, 2], "x", [3, 4], "y"], 5)
    [('equal', 0, 2, 0, 2), ('replace', 2, 3, 2, 3), ('equal', 3, 4, 3, 4), ('replace', 4, 5, 4, 5)]
    >>> delta_opcodes([[0, 1], "new", [1, 2]], 2)
    [('equal', 0, 1, 0, 1), ('insert', 1, 1, 1, 2), ('equal', 1, 2, 2, 3)]
    """
    out: list[tuple[str, int, int, int, int]] = []
    i = j = 0  # lines of the module before and after, read so far
    come = 0  # lines come since the last kept range

    def change(i2: int) -> None:
        if i2 > i or come:
            tag = "replace" if i2 > i and come else "delete" if i2 > i else "insert"
            out.append((tag, i, i2, j - come, j))

    for item in delta:
        if isinstance(item, str):
            come += 1
            j += 1
            continue
        start, stop = item
        change(start)
        out.append(("equal", start, stop, j, j + stop - start))
        i, j, come = stop, j + stop - start, 0
    change(before)
    return out


def step_change(
    data: Mapping[str, Any], lines: Sequence[list[str] | None], step: int
) -> tuple[list[str], list[str], list[tuple[str, int, int, int, int]]] | None:
    """The lines of the module before and after dumped step ``step`` (``lines``:
    :func:`module_lines`) and how they align (the step's delta, as
    :func:`delta_opcodes`), or None where either was left out."""
    after = lines[step]
    before = data["before"].split("\n") if step == 0 else lines[step - 1]
    if after is None or before is None:
        return None
    return before, after, delta_opcodes(data["deltas"][step], len(before))


def _where(carriers: Sequence[Mapping[str, Any]]) -> str:
    if not carriers:
        return "nothing (removed)"
    parts = []
    for c in carriers:
        if c.get("fusion"):
            kind = f", {c['fusion_kind']}" if c.get("fusion_kind") else ""
            parts.append(f"{c['label']} in {c['fusion']}{kind}")
        else:
            parts.append(f"{c['label']} ({c['opcode']})")
    return ", ".join(dict.fromkeys(parts))


def counts(data: Mapping[str, Any]) -> tuple[int, int, int]:
    """How many passes changed the module, and its instruction count before the
    first pass and after the last.

    >>> counts({"rows": [{"kind": "start", "instructions_before": 5, "instructions": 5},
    ...                  {"kind": "changed", "instructions_before": 5, "instructions": 3}]})
    (1, 5, 3)
    """
    rows = data["rows"]
    changed = sum(1 for r in rows if r["kind"] == "changed")
    first = rows[0]["instructions_before"] if rows else 0
    return changed, first, rows[-1]["instructions"] if rows else first


def line_summary(j: Mapping[str, Any]) -> tuple[str, str, str]:
    """What one line's journey comes to, in words: its instructions before the
    passes, where they ended up, and the passes that decided it.

    >>> line_summary({"start": [{"label": "sin.3", "opcode": "sine"}], "end": [],
    ...               "events": [{"pass": "cse", "kind": "removed"}]})
    ('sin.3 (sine)', 'nothing (removed)', 'cse (removed)')
    """
    decided = dict.fromkeys(f"{e['pass']} ({e['kind']})" for e in j["events"])
    return _where(j["start"]), _where(j["end"]), ", ".join(decided) or "no pass changed it"


def op_journey_rows(
    data: Mapping[str, Any], model, limit: int, stage: str = "olympuspr"
) -> tuple[list[dict[str, Any]], int]:
    """The journeys of ``stage``'s ops that the ``passes`` data carries
    (``op_journeys``), in program order, up to ``limit``: each with ``ops`` (their
    ids: ops alike share one journey), ``name`` (the first op's primitive),
    ``path`` and ``line`` (the user's line it is charged to, ``None`` for none) and
    ``start``, ``end`` and ``decided`` in words (:func:`line_summary`). Returns them
    and how many more there are; ``([], 0)`` without a model or op journeys.

    >>> import olympus, olympus.numpy as jnp, numpy as np
    >>> from olympus_jupyter import inspect
    >>> def f(x):
    ...     return jnp.sin(x) * 2
    >>> report = inspect(f, np.ones(4, np.float32), passes=True, cache=False)
    >>> rows, more = op_journey_rows(report.passes, report.provenance, 10)
    >>> [(r["name"], r["line"] == report.provenance.function.first_line + 1) for r in rows], more
    ([('sin', True), ('mul', True)], 0)
    """
    stages = getattr(model, "stages", None)
    if not stages or stage not in stages:
        return [], 0
    rows: list[dict[str, Any]] = []
    more = 0
    for j in data.get("op_journeys") or ():
        ops = [i for i in j["ops"] if i.rpartition(":")[0] == stage]
        if not ops:
            continue
        if len(rows) >= limit:
            more += 1
            continue
        try:
            op = model.op(ops[0])
        except (KeyError, ValueError):  # an op the model does not hold: a foreign bundle
            continue
        where = model.lines_for_op(ops[0], frames="user")
        start, end, decided = line_summary(j)
        rows.append(
            {
                "ops": ops,
                "name": op.name,
                "path": where[0][0] if where else None,
                "line": where[0][1] if where else None,
                "start": start,
                "end": end,
                "decided": decided,
            }
        )
    return rows, more


def check_passes(data: Mapping[str, Any], files: int) -> None:
    """Raises ``ValueError`` where ``passes`` data (already checked against the
    schema) points outside itself: a row's step past the deltas, an event's row
    past the rows, a journey's file past the report's ``files``. (A delta's ``[i,
    j]`` past the module before it keeps what is there: slices clamp.)

    >>> check_passes({"rows": [], "deltas": [], "journeys": [{"file": 2, "events": []}]}, 1)
    Traceback (most recent call last):
    ValueError: passes.journeys.0.file: 2 is not a file of the report (it has 1).
    """
    steps, rows = len(data["deltas"]), len(data["rows"])
    for k, row in enumerate(data["rows"]):
        if row["step"] is not None and row["step"] >= steps:
            raise ValueError(f"passes.rows.{k}.step: {row['step']} is past the {steps} steps.")
    for k, j in enumerate(data["journeys"]):
        if j["file"] >= files:
            raise ValueError(
                f"passes.journeys.{k}.file: {j['file']} is not a file of the "
                f"report (it has {files})."
            )
        for e, event in enumerate(j["events"]):
            if event["row"] >= rows:
                raise ValueError(
                    f"passes.journeys.{k}.events.{e}.row: {event['row']} is past the {rows} rows."
                )
