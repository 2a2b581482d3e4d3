"""The checks of lesson 09_will_it_fit: a train step compiled for a TPU slice this
machine does not have (``v5e:4x4``, 16 chips of 16 GiB, described by libtpu), whether
it fits, and the all-gathers its shardings cost.

The checks compile programs of their own for the target, with Olympus
(``inspect(..., target=...)``), and read what the report says: ``device_memory()``
for the first, ``collectives()`` for the second. They need libtpu (``pip install
"jax[tpu]"``, Olympus's ``targets`` extra); without it they say so. What they send
the compiler is the student's numbers and partition specs, never the student's code.
"""

from __future__ import annotations

import functools
import json
import linecache
from collections import defaultdict
from typing import Any

import numpy as np

from olympus_jupyter.teaching.checks import NotYet, Verdict, attempt, first_line

__all__ = ["check_fit_on_pod", "check_dominant_gather_line"]

#: The slice the lesson compiles for, and the mesh its programs are laid on.
TARGET = "v5e:4x4"
MESH = {"data": 4, "model": 4}
CHIPS = 16
#: Exercise 1's train step: the output layer of a language model (a vocabulary of
#: 262,144 words, width 4,096) and its Adam step; a step of at least MIN_TOKENS tokens.
VOCAB, WIDTH = 262_144, 4_096
MIN_TOKENS = 65_536
ARGUMENTS = ("w", "m", "v", "h", "labels")
WEIGHTS = ("w", "m", "v")

_STEP_SOURCE = """\
def loss(w, h, labels):
    logits = h @ w
    top = logits.max(axis=1, keepdims=True)
    log_z = jnp.log(jnp.exp(logits - top).sum(axis=1)) + top[:, 0]
    picked = jnp.take_along_axis(logits, labels[:, None], axis=1)[:, 0]
    return (log_z - picked).mean()


def train_step(w, m, v, h, labels):
    g = olympus.grad(loss)(w, h, labels)
    m = 0.9 * m + 0.1 * g
    v = 0.999 * v + 0.001 * g * g
    return w - 1e-3 * m / (jnp.sqrt(v) + 1e-8), m, v
"""

#: Exercise 2's programs, each with its arguments' shapes and partition specs (None:
#: not split; a tuple: split over both axes, all 16 chips). Where the all-gathers go:
#: 1, a weight gathered per line (FSDP), the biggest in the middle; 2, three small
#: gathers on one line that together send more than the one big gather of the next;
#: 3, an all-gather on one line and a bigger all-reduce on the next.
_ALL = ["data", "model"]
_FSDP = [_ALL, None]
_GATHER_PROGRAMS: tuple[tuple[str, tuple, tuple], ...] = (
    (
        """\
def program_1(x, w1, w2, w3):
    h = jnp.tanh(x @ w1)
    h = jnp.tanh(h @ w2)
    return h @ w3
""",
        ((512, 256), (256, 1024), (1024, 2048), (2048, 128)),
        (["data"], _FSDP, _FSDP, _FSDP),
    ),
    (
        """\
def program_2(x, a, b, c, d):
    h = jnp.tanh(x @ a) + jnp.tanh(x @ b) + jnp.tanh(x @ c)
    return h @ d
""",
        ((512, 256), (256, 1024), (256, 1024), (256, 1024), (1024, 512)),
        (["data"], _FSDP, _FSDP, _FSDP, _FSDP),
    ),
    (
        """\
def program_3(x, w1, w2):
    h = jnp.tanh(x @ w1)
    return h @ w2
""",
        ((512, 1024), (1024, 1024), (1024, 1024)),
        ([None, _ALL], [None, _ALL], _FSDP),
    ),
)


def _gib(n: float) -> str:
    from olympus_jupyter.report.cost_names import format_bytes

    return format_bytes(n)


def _libtpu() -> None:
    """Raises NotYet saying how to get libtpu, where it is not installed."""
    import jax

    from olympus import hardware

    if not hardware.libtpu_installed():
        raise NotYet(
            f"Not yet: this check compiles for {TARGET}, which needs libtpu, not "
            f'installed here: pip install "jax[tpu]=={jax.__version__}" (or Olympus\'s '
            f"targets extra), then restart the kernel. No TPU is needed."
        )


def _spec(entries):
    from olympus.sharding import PartitionSpec

    return PartitionSpec(*[tuple(e) if isinstance(e, list) else e for e in entries])


def _shown(entries) -> str:
    """``P(None, 'model')``, ``P(('data', 'model'))``: a spec as one writes it."""

    def entry(e) -> str:
        return repr(e) if e is None or isinstance(e, str) else repr(tuple(e))

    return f"P({', '.join(entry(e) for e in entries)})"


# -- exercise 1: a batch and a sharding that fit -----------------------------------------


def step_shapes(tokens: int) -> list[tuple[tuple[int, ...], str]]:
    """The shapes and dtypes of ``train_step``'s arguments for a step of ``tokens``."""
    weight = ((WIDTH, VOCAB), "float32")
    return [weight, weight, weight, ((tokens, WIDTH), "float32"), ((tokens,), "int32")]


@functools.lru_cache(maxsize=None)
def _step():
    from olympus_jupyter.teaching.exercises._programs import program

    fun = program(_STEP_SOURCE, "train_step")
    return fun, fun.__code__.co_filename


@functools.lru_cache(maxsize=32)
def _fit(job_json: str) -> dict[str, Any]:
    """What the target's compiler says of the train step with ``job``'s tokens and
    partition specs: the report's ``device_memory()``, or its failure."""
    import olympus
    import olympus.numpy as jnp
    from olympus_jupyter.frontends.inspection import inspect

    job = json.loads(job_json)
    fun, _ = _step()
    args = [
        olympus.ShapeDtypeStruct(tuple(shape), getattr(jnp, dtype))
        for shape, dtype in step_shapes(job["tokens"])
    ]
    report = inspect(
        fun,
        *args,
        target=TARGET,
        mesh=MESH,
        shardings=tuple(_spec(s) for s in job["specs"]),
        cache=False,
    )
    memory = report.device_memory() or {}
    failure = report.failure.headline() if report.failure is not None else None
    return {"memory": memory, "failure": failure}


def _entries(spec, what: str, ndim: int) -> list:
    """A partition spec's entries as JSON (None, an axis name, or a list of names);
    raises NotYet saying what is wrong with it."""
    from olympus.sharding import NamedSharding, PartitionSpec

    if spec is None:
        spec = PartitionSpec()
    if isinstance(spec, NamedSharding):
        spec = spec.spec
    if not isinstance(spec, PartitionSpec):
        raise NotYet(
            f"Not yet:\n- the sharding of {what} is {spec!r}, not a PartitionSpec: "
            f"write P(...) (olympus.sharding.PartitionSpec), P() for whole on every chip."
        )
    if len(spec) > ndim:
        raise NotYet(
            f"Not yet:\n- the spec of {what}, {spec}, has {len(spec)} entries, but {what} "
            f"has {ndim} dimension{'s' if ndim != 1 else ''}."
        )
    out: list = []
    used: list[str] = []
    for e in spec:
        names = [] if e is None else [e] if isinstance(e, str) else list(e)
        unknown = [n for n in names if n not in MESH]
        if unknown:
            raise NotYet(
                f"Not yet:\n- the spec of {what}, {spec}, names the mesh axis "
                f"{unknown[0]!r}: the mesh has two axes, 'data' (4 chips) and 'model' "
                f"(4 chips), {CHIPS} chips in all."
            )
        twice = [n for n in names if n in used]
        if twice:
            raise NotYet(
                f"Not yet:\n- the spec of {what}, {spec}, splits two dimensions over the "
                f"axis {twice[0]!r}: an axis splits one dimension of an array at most."
            )
        used += names
        out.append(None if e is None else e if isinstance(e, str) else names)
    return out


def _ways(entries: list, dim: int) -> int:
    """Over how many chips dimension ``dim`` is split."""
    if dim >= len(entries) or entries[dim] is None:
        return 1
    names = [entries[dim]] if isinstance(entries[dim], str) else entries[dim]
    return int(np.prod([MESH[n] for n in names]))


def _group(specs: list) -> str:
    """``w, m, v: P(None, 'model'); h, labels: P('data')``."""
    groups: dict[str, list[str]] = {}
    for name, s in zip(ARGUMENTS, specs):
        groups.setdefault(_shown(s), []).append(name)
    return "; ".join(f"{', '.join(names)}: {spec}" for spec, names in groups.items())


def _buffer_words(buffer: dict, filename: str) -> str:
    size = _gib(buffer["bytes"])
    if buffer.get("argument"):
        return f"the argument {buffer['argument']} ({buffer.get('shape', '')}), {size} on each chip"
    lines = [ln for f, ln in buffer.get("lines") or () if f == filename]
    where = ""
    if lines:
        code = linecache.getline(filename, lines[0]).strip()
        where = f", made by `{code}`"
    return (
        f"a {buffer.get('kind', 'buffer')} {buffer.get('shape', '')} of {size} on each chip{where}"
    )


def check_fit_on_pod(fit_on_pod) -> None:
    """Lesson 09, exercise 1: ``(tokens, shardings)`` for ``train_step`` on v5e:4x4
    (mesh data=4, model=4): it fits, holds at least MIN_TOKENS tokens, and splits
    the weight and its optimizer state over the chips."""
    answer = attempt(fit_on_pod, name="fit_on_pod")
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        raise NotYet(
            f"Not yet:\n- fit_on_pod returned {answer!r}: return a pair, (tokens, "
            f"shardings), shardings a tuple of 5 PartitionSpecs, for w, m, v, h and labels."
        )
    tokens, shardings = answer
    if isinstance(tokens, bool) or not isinstance(tokens, (int, np.integer)) or tokens <= 0:
        raise NotYet(
            f"Not yet:\n- the number of tokens, {tokens!r}, is not a positive whole number."
        )
    tokens = int(tokens)
    if not isinstance(shardings, (tuple, list)) or len(shardings) != len(ARGUMENTS):
        raise NotYet(
            f"Not yet:\n- the shardings, {shardings!r}, are not a tuple of 5 partition "
            f"specs: train_step takes 5 arguments, (w, m, v, h, labels)."
        )
    shapes = step_shapes(tokens)
    specs = [
        _entries(s, name, len(shape)) for s, name, (shape, _) in zip(shardings, ARGUMENTS, shapes)
    ]
    for name, s, (shape, _) in zip(ARGUMENTS, specs, shapes):
        for dim, size in enumerate(shape):
            ways = _ways(s, dim)
            if size % ways:
                raise NotYet(
                    f"Not yet:\n- {name} is {list(shape)} and its spec {_shown(s)} splits "
                    f"its dimension {dim} ({size:,}) over {ways} chips: {size:,} is not a "
                    f"multiple of {ways}. Choose a number of tokens that is."
                )
    _libtpu()
    verdict = Verdict()
    shown = f"{tokens:,} tokens and {_group(specs)}"
    verdict.expect(
        tokens >= MIN_TOKENS,
        f"a step of {tokens:,} tokens is {tokens / CHIPS:,.0f} a chip: too few to keep "
        f"{CHIPS} chips busy, and a model learns slowly from small steps. The task asks "
        f"for at least {MIN_TOKENS:,} tokens ({MIN_TOKENS // CHIPS:,} a chip).",
    )
    for name, s in zip(ARGUMENTS, specs):
        if name in WEIGHTS and not any(e is not None for e in s):
            verdict.expect(
                False,
                f"{name}, f32[{WIDTH},{VOCAB}], is whole on every chip: 4.0 GiB of each "
                f"chip's 16 GiB hold the same numbers on all {CHIPS}. Split it: P(None, "
                f"'model') splits its columns (the vocabulary) over 4 chips.",
            )
    try:
        found = _fit(json.dumps({"tokens": tokens, "specs": specs}))
    except Exception as e:  # noqa: BLE001 - what refused the answer is the feedback
        verdict.stop(f"with {shown}, the step could not be staged for {TARGET}: {first_line(e)}")
    memory, failure = found["memory"], found["failure"]
    _, filename = _step()
    if memory.get("fits") is None:
        verdict.stop(
            f"with {shown}, the step did not compile for {TARGET}: "
            f"{failure or 'no figure of its memory'}."
        )
    if not memory["fits"]:
        largest = memory.get("largest") or []
        biggest = ""
        if largest:
            words = _buffer_words(largest[0], filename)
            biggest = f" The biggest buffer at the peak is {words}: split it over more chips" + (
                " (the logits' rows are split as h's, their columns as w's)."
                if "`logits =" in words
                else "."
            )
        verdict.expect(
            False,
            f"with {shown}, the step does not fit on {TARGET}: "
            f"{memory['words'].split('; biggest')[0].removeprefix('does not fit: ')}.{biggest}",
        )
    ways = _ways(specs[0], 0) * _ways(specs[0], 1)
    verdict.close(
        f"with {shown}, each chip needs {_gib(memory['peak_bytes'])} of its "
        f"{_gib(memory['capacity_bytes'])} ({_gib(memory['headroom_bytes'])} free, as "
        f"device_memory() says). w is split over {ways} chips ({_gib(4 * WIDTH * VOCAB / ways)} "
        f"of it a chip), and each chip computes the logits of its share of the tokens "
        f"and of the vocabulary, never the whole f32[{tokens},{VOCAB}] "
        f"({_gib(4 * tokens * VOCAB)})."
    )


# -- exercise 2: the line whose all-gathers send the most ------------------------------


@functools.lru_cache(maxsize=None)
def _gather_report(k: int):
    """The report (costs stage) of exercise 2's k-th program, compiled for the target."""
    import olympus
    import olympus.numpy as jnp
    from olympus_jupyter.frontends.inspection import inspect
    from olympus_jupyter.teaching.exercises._programs import program

    source, shapes, specs = _GATHER_PROGRAMS[k]
    fun = program(source, f"program_{k + 1}")
    args = [olympus.ShapeDtypeStruct(s, jnp.float32) for s in shapes]
    report = inspect(
        fun,
        *args,
        target=TARGET,
        mesh=MESH,
        shardings=tuple(_spec(s) for s in specs),
        costs=True,
        cache=False,
    )
    return report, fun.__code__.co_firstlineno, fun.__code__.co_filename


def _by_line(rows, opcodes=("all-gather",), field="moved_bytes") -> dict[int, float]:
    """Per line: the sum of ``field`` over the collectives of ``opcodes`` on it."""
    out: dict[int, float] = defaultdict(float)
    for c in rows:
        if c["opcode"].startswith(opcodes):
            for _, line in c["lines"]:
                out[line] += c[field] or 0
    return dict(out)


def _gather_table(rows, first: int, filename: str) -> str:
    lines = sorted({line for c in rows for _, line in c["lines"]})
    out = []
    for line in lines:
        here = [c for c in rows if any(ln == line for _, ln in c["lines"])]
        code = linecache.getline(filename, line).strip()
        parts = ", ".join(
            f"{c['opcode']} of {c['result_bytes']:,} B (sends ~{c['moved_bytes'] or 0:,})"
            for c in here
        )
        out.append(f"    line {line} (def + {line - first}) {code:<28} {parts}")
    return "\n".join(out)


def check_dominant_gather_line(dominant_gather_line) -> None:
    """Lesson 09, exercise 2: the line whose all-gathers send the most bytes in all
    (``moved_bytes``, summed over the all-gathers of ``report.collectives()`` on it)."""
    _libtpu()
    verdict = Verdict()
    for k in range(len(_GATHER_PROGRAMS)):
        report, first, filename = _gather_report(k)
        rows = report.collectives()
        sent = _by_line(rows)
        if not sent:
            verdict.stop(
                f"the check's program {k + 1} has no all-gather here ({rows}): this "
                f"libtpu does not partition it as expected."
            )
        want = max(sent, key=lambda line: sent[line])
        got = attempt(dominant_gather_line, report, name="dominant_gather_line")
        table = (
            f"The check's program {k + 1} (def on line {first}), its collectives by "
            f"line:\n" + _gather_table(rows, first, filename)
        )
        if isinstance(got, (tuple, list)):
            verdict.stop(
                f"dominant_gather_line returned {got!r}: return the line number alone "
                f"(each of a collective's 'lines' is a (file, line) pair)."
            )
        if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
            verdict.stop(
                f"dominant_gather_line returned {got!r}, not a line number: return "
                f"the line (as Python numbers them) whose all-gathers send the most "
                f"bytes in all.\n{table}"
            )
        got = int(got)
        if got == want:
            continue
        biggest = max(rows, key=lambda c: c["moved_bytes"] or 0)
        single = max(
            (c for c in rows if c["opcode"].startswith("all-gather")),
            key=lambda c: c["moved_bytes"] or 0,
        )
        held = _by_line(rows, field="result_bytes")
        mine = f"line {want}'s all-gathers send {sent[want]:,.0f} bytes in all"
        if got == want - first:
            why = (
                f"{got} is line {want} counted from the def (def + {got}): return the "
                f"file's line number, as each of a collective's 'lines' gives it (not a "
                f"count from the def)."
            )
        elif got in sent and got == single["lines"][0][1]:
            count = sum(
                1
                for c in rows
                if c["opcode"].startswith("all-gather") and any(ln == want for _, ln in c["lines"])
            )
            why = (
                f"line {got} holds the biggest single all-gather (~{single['moved_bytes']:,} "
                f"bytes sent), but {mine}, {count} all-gathers together, against "
                f"{sent[got]:,.0f}: add up each line's all-gathers."
            )
        elif got not in sent and any(ln == got for _, ln in biggest["lines"]):
            why = (
                f"line {got}'s biggest collective is an {biggest['opcode']} "
                f"(~{biggest['moved_bytes']:,} bytes sent), not an all-gather; {mine}. "
                f"Keep the rows whose opcode is an all-gather."
            )
        elif got in held and got == max(held, key=lambda line: held[line]):
            why = (
                f"by result_bytes (what each device holds after the gather) line {got} "
                f"comes first, but the exercise asks what each device sends, "
                f"moved_bytes: {mine}, line {got}'s {sent.get(got, 0):,.0f}."
            )
        elif got in sent:
            why = f"line {got}'s all-gathers send {sent[got]:,.0f} bytes; {mine}."
        elif 0 <= got <= first:
            why = (
                f"line {got} is not a line of the program's body (it starts on line "
                f"{first}): is it a position in a list, or a count from the def? "
                f"Return the line of the collective's 'lines', the file's line number."
            )
        else:
            why = f"line {got} has no all-gather in this program; {mine}."
        verdict.expect(False, f"In program {k + 1}, expected line {want}: {why}\n{table}")
    verdict.close(
        "report.collectives() ties each collective XLA inserted to the line that "
        "needed it: an all-gather where a device needs the whole of an array it holds "
        "a slice of (an FSDP weight, before its matrix product), with the bytes each "
        "device sends (moved_bytes, (n-1)/n of the gathered array). The line whose "
        "all-gathers send the most is where a sharding costs the most communication: "
        "the first place to look when a step is slow."
    )
