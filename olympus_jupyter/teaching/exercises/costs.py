"""The checks of lesson 06_cost_and_memory."""

from __future__ import annotations

import functools
import linecache

import numpy as np

import olympus
from olympus_jupyter.frontends.inspection import inspect
from olympus_jupyter.teaching.checks import Verdict, attempt, first_line
from olympus_jupyter.teaching.exercises._programs import program


# -- 06_cost_and_memory: exercise 1, the line that costs the most flops ----------------

#: The check's own programs: the heaviest line is not at the same place in both, and
#: the line with the most transcendentals (a tanh) is never the one with the most flops.
_FLOPS_PROGRAMS = (
    (
        """\
def program_1(x, w):
    h = jnp.tanh(x)
    y = h @ w
    return jnp.sum(y * y)
""",
        ((128, 256), (256, 128)),
    ),
    (
        """\
def program_2(a, b):
    t = jnp.tanh(b)
    c = a.T @ a
    d = c @ t
    return d.sum()
""",
        ((16, 64), (64, 2048)),
    ),
)


@functools.lru_cache(maxsize=None)
def _flops_report(k: int):
    """The report (with the costs stage) of the check's k-th program, made once."""
    source, shapes = _FLOPS_PROGRAMS[k]
    fun = program(source, f"program_{k + 1}")
    args = [np.linspace(-1, 1, int(np.prod(s)), dtype=np.float32).reshape(s) for s in shapes]
    report = inspect(fun, *args, costs=True, cache=False)
    return report, fun.__code__.co_firstlineno, fun.__code__.co_filename


def _line_table(report, first: int, filename: str) -> str:
    rows = [r for r in report.cost_by_line() if r["what"] == "line"]
    out = []
    for r in sorted(rows, key=lambda r: r["line"]):
        code = linecache.getline(filename, r["line"]).strip()
        out.append(
            f"    line {r['line']} (def + {r['line'] - first}) {code:<22} "
            f"{r['flops']:>12,.0f} flops  {r['transcendentals']:>8,.0f} transcendentals"
        )
    return "\n".join(out)


def check_heaviest_line(heaviest_line) -> None:
    """Lesson 06, exercise 1: the source line that costs the most flops."""
    verdict = Verdict()
    for k in range(len(_FLOPS_PROGRAMS)):
        report, first, filename = _flops_report(k)
        rows = [r for r in report.cost_by_line() if r["what"] == "line"]
        by_line = {r["line"]: r for r in rows}
        want = max(rows, key=lambda r: r["flops"])["line"]
        got = attempt(heaviest_line, report, name="heaviest_line")
        table = (
            f"The check's program {k + 1} (def on line {first}), its costs by line:\n"
            + _line_table(report, first, filename)
        )
        if isinstance(got, dict):
            verdict.stop(
                "heaviest_line returned a dict (a row of report.cost_by_line()?): "
                "return its line number, row['line']."
            )
        if isinstance(got, bool) or not isinstance(got, (int, np.integer)):
            verdict.stop(
                f"heaviest_line returned {got!r}, not a line number: return the "
                f"'line' of the row of report.cost_by_line() with the most "
                f"flops.\n{table}"
            )
        got = int(got)
        if got == want:
            continue
        if got in by_line:
            mine = by_line[got]
            why = (
                f"line {got} costs {mine['flops']:,.0f} flops, line {want} "
                f"{by_line[want]['flops']:,.0f}."
            )
            most_t = max(rows, key=lambda r: r["transcendentals"])["line"]
            if got == most_t and by_line[got]["transcendentals"] > 0:
                why += (
                    " Line {got} has the most transcendentals (tanh, exp...: XLA "
                    "counts them apart from flops): flops are another column.".format(got=got)
                )
            most_b = max(rows, key=lambda r: r["bytes"])["line"]
            if got == most_b and got != most_t:
                why += f" Line {got} accesses the most bytes: the exercise asks for flops."
        elif got == first:
            why = (
                f"line {got} is the def line: it makes no instruction and costs "
                f"nothing. Line numbers are the file's, as report.cost_by_line() gives "
                f"them."
            )
        elif 0 <= got < first:
            why = (
                f"line {got} is not a line of the program (it starts on line "
                f"{first}): is it a position in a list, or a count from the def? "
                f"Return the row's 'line', the file's line number."
            )
        else:
            why = f"line {got} has no cost of its own in this program."
        verdict.expect(False, f"In program {k + 1}, expected line {want}: {why}\n{table}")
    verdict.close(
        "report.cost_by_line() puts every instruction of the optimized program "
        "down to the line that made it: a matrix product [m,k] @ [k,n] costs "
        "2·m·k·n flops, and dwarfs the elementwise lines around it (a tanh is one "
        "transcendental per element, and hardly a flop)."
    )


# -- 06_cost_and_memory: exercise 2, a peak under a budget -----------------------------

#: The shapes of q, k and v in exercise 2, and the peak the answer must stay under.
ATTENTION_SHAPE = (1024, 32)
PEAK_BUDGET = 3 * 2**20  # bytes (3 MiB): the scores alone, f32[1024,1024], are 4 MiB


def attention(q, k, v):
    """Lesson 06's ``attention``: softmax(q @ k.T) @ v, the check's own copy."""
    import olympus.numpy as jnp

    s = q @ k.T
    p = jnp.exp(s - s.max(axis=1, keepdims=True))
    p = p / p.sum(axis=1, keepdims=True)
    return p @ v


def _reference_attention(q, k, v):
    q, k, v = (np.asarray(a, np.float64) for a in (q, k, v))
    s = q @ k.T
    p = np.exp(s - s.max(axis=1, keepdims=True))
    return (p / p.sum(axis=1, keepdims=True)) @ v


def _inputs(seed: int):
    rng = np.random.default_rng(seed)
    return tuple(rng.standard_normal(ATTENTION_SHAPE).astype(np.float32) for _ in range(3))


def peak_bytes(report, fun, *args) -> tuple[int | None, str]:
    """The peak of ``fun(*args)``: the live-range peak of its report's costs stage
    (``report.costs['peak']['bytes']``), else what ``memory_analysis()`` says
    (arguments, outputs and temporaries), and which of the two it is."""
    peak = (report.costs or {}).get("peak") or {}
    if peak.get("bytes") is not None:
        return int(peak["bytes"]), "the live-range peak (report.costs['peak']['bytes'])"
    try:
        m = olympus.jit(fun).trace(*args).lower().compile().memory_analysis()
        total = (
            m.argument_size_in_bytes
            + m.output_size_in_bytes
            - m.alias_size_in_bytes
            + m.temp_size_in_bytes
        )
        return int(total), "memory_analysis(): arguments + outputs + temporaries"
    except Exception:  # noqa: BLE001 - no reading of the peak
        return None, "no reading of the peak"


def _mib(n: float) -> str:
    return f"{n:,.0f} bytes ({n / 2**20:.2f} MiB)"


def check_lean_attention(lean_attention) -> None:
    """Lesson 06, exercise 2: attention's result with a peak under ``PEAK_BUDGET``."""
    verdict = Verdict()
    for seed in (0, 1):
        q, k, v = _inputs(seed)
        got = attempt(lean_attention, q, k, v, name="lean_attention")
        try:
            got = np.asarray(got)
        except Exception as e:  # noqa: BLE001 - the error is the feedback
            verdict.stop(
                f"lean_attention returned something that is not an array: "
                f"{type(e).__name__}: {first_line(e)}"
            )
        want = _reference_attention(q, k, v)
        if got.shape != want.shape:
            verdict.stop(
                f"lean_attention returned an array of shape {got.shape}; "
                f"attention's result has shape {want.shape}."
            )
        error = float(np.max(np.abs(got - want)))
        verdict.expect(
            np.allclose(got, want, rtol=1e-3, atol=1e-4),
            f"lean_attention's result differs from attention's (by up to "
            f"{error:.2g}, seed {seed}): a rewrite that lowers the peak must "
            f"keep the result (a lower precision does not: float32 is asked).",
        )
    if verdict.wrong:
        verdict.close("")
    q, k, v = _inputs(0)
    report = inspect(lean_attention, q, k, v, costs=True, cache=False)
    if report.failure is not None:
        verdict.stop(
            f"Olympus could not compile lean_attention for the costs stage: "
            f"{report.failure.headline()}"
        )
    peak, what = peak_bytes(report, lean_attention, q, k, v)
    if peak is None:
        verdict.stop(
            f"the peak of lean_attention could not be read: "
            f"{report.costs and report.costs.get('unavailable')}"
        )
    if peak >= PEAK_BUDGET:
        biggest = []
        for b in report.peak_buffers()[:3]:
            text = (
                report.provenance.source_line(b["file"], b["line"])
                if b.get("line") and b.get("file") and report.provenance
                else None
            )
            where = (
                f"made by line {b['line']}" + (f": {text.strip()}" if text else "")
                if b.get("line")
                else ""
            )
            biggest.append(f"    {b['shape']:<22} {_mib(b['size'])}, {b['kind']} {where}")
        verdict.expect(
            False,
            f"lean_attention's peak is {_mib(peak)}, {what}: not under "
            f"{_mib(PEAK_BUDGET)}. The biggest buffers live at the peak:\n"
            + "\n".join(biggest)
            + "\nA [1024,1024] score matrix is 4 MiB by itself: compute the "
            "scores of a block of queries at a time (olympus.lax.map over "
            "blocks), so that only a block's scores are ever live. (A Python "
            "loop over blocks unrolls into one program, in which XLA may keep "
            "every block's scores alive at once; lax.map is a loop of the "
            "program: one block at a time.)",
        )
    verdict.close(
        f"the peak is {_mib(peak)} ({what}), under {_mib(PEAK_BUDGET)}, and the "
        f"result is attention's: each row of the softmax needs only its own "
        f"scores, so blocks of queries can be done one after another, and XLA "
        f"keeps only one block's scores alive at a time."
    )


__all__ = ["check_heaviest_line", "check_lean_attention"]
