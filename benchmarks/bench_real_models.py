"""Reports of real programs: the flax, equinox and optax train steps of the corpus
(``tests/real_models/``) against JAX compiling the same step.

Budgets, per program (issue 33):

1. The default report, ``inspect(fn, *args)``, takes at most 1.3x a plain trace,
   lower and compile of the same step (``fn.trace(*args).lower().compile()``, or
   ``fn.lower(*args).compile()`` for a wrapper without ``trace``: equinox's).
2. With passes and costs, ``inspect(fn, *args, passes=True, costs=True)``: at most
   2.0x.
3. That report's display bundle, capped as the magic caps it
   (``olympus_jupyter/report/output_cap.py``), is at most 5 MB.
4. The peak RSS of that full report, its display bundle included, is at most 2x
   the peak of JAX compiling the step, each in a fresh process of its own.
5. ``inspect`` builds a report of every program (the count of programs it fails on
   is at most 0): the framework entry points (``nnx.jit``, ``eqx.filter_jit``) are
   what a user of these libraries hands it.

Each program runs in child processes of its own (fresh, as a user's first report of
a program): one for the timings, one for each side's peak RSS. The sharded
programs' children (the transformer's, the decoder's) see 8 CPU devices
(``--xla_force_host_platform_device_count=8`` and ``JAX_PLATFORMS=cpu`` unless
set), as in the tests. Timings go in rounds: the
plain compile, the default report and the full report, the order turning each round,
JAX's caches cleared (``jax.clear_caches()``) before each and nothing cached by
Olympus (``cache=False``); the figure is the median of the rounds' ratios.

``--short`` (for CI): three programs (the ``nnx`` CNN under ``jax.jit``, the
equinox ViT, the sharded transformer), 3 rounds each; the full mode adds the
``nnx.jit`` CNN, the ``nnx.scan`` MLP and the fsdp ``nnx`` decoder with
``optax.MultiSteps``, 7 rounds each.

Run: python benchmarks/bench_real_models.py [--short] [--json PATH]
"""

from __future__ import annotations

import argparse
import gc
import json
import os
import pathlib
import resource
import statistics
import subprocess
import sys
import time
from collections.abc import Callable
from typing import Any

from _results import Results, name_of, parser

HERE = pathlib.Path(__file__).resolve().parent
TESTS = HERE.parent / "tests"

BUDGET_DEFAULT, BUDGET_FULL, BUDGET_RSS = 1.3, 2.0, 2.0
BUDGET_BUNDLE_MB = 5.0  # output_cap.MAX_OUTPUT_BYTES, checked below
#: Programs (names of ``real_models``) and rounds, per mode.
PROGRAMS = {
    "short": ("cnn_nnx_jax", "vit_equinox", "transformer_linen"),
    "full": (
        "cnn_nnx",
        "cnn_nnx_jax",
        "scan_nnx",
        "vit_equinox",
        "transformer_linen",
        "decoder_nnx",
    ),
}
ROUNDS = {"short": 3, "full": 7}
#: Programs that need 8 devices.
SHARDED = ("transformer_linen", "decoder_nnx")
CHILD_TIMEOUT_S = 1200


# -- in a child: one program ------------------------------------------------------------------


def make(name: str):
    sys.path.insert(0, str(TESTS))
    import real_models

    return real_models.make(name)


def plain_compile(program) -> Any:
    """What a user runs to compile the step: ``trace -> lower -> compile`` where the
    wrapper has ``trace`` (``jax.jit``, ``nnx.jit``), else ``lower -> compile``."""
    fn: Any = program.fn
    if hasattr(fn, "trace"):
        return fn.trace(*program.args, **program.kwargs).lower().compile()
    return fn.lower(*program.args, **program.kwargs).compile()


def report_of(program, full: bool):
    """``inspect``'s report (passes and costs where ``full``), or the error it raised
    or the failure it shows."""
    from olympus_jupyter import inspect

    options: dict[str, Any] = dict(passes=True, costs=True) if full else {}
    try:
        report = inspect(program.fn, *program.args, cache=False, **options, **program.kwargs)
    except Exception as e:  # noqa: BLE001 - an entry point inspect cannot take yet is a figure
        return None, f"inspect raised {type(e).__name__}: {e}"
    if not report.ok:
        return None, f"the report failed: {report.failure}"
    return report, None


def bundle_bytes(report) -> int:
    """The display bundle as the notebook gets it (capped: ``_repr_mimebundle_``)."""
    from olympus_jupyter.report.output_cap import output_size

    return output_size(report._repr_mimebundle_(include=None, exclude=None))


def child_time(name: str, rounds: int) -> dict:
    import jax

    program = make(name)
    report, error = report_of(program, full=False)
    if report is None:
        return dict(error=error)
    sides = {
        "plain": lambda: plain_compile(program),
        "default": lambda: report_of(program, full=False),
        "full": lambda: report_of(program, full=True),
    }
    plain_compile(program), sides["full"]()  # warm up
    times: dict[str, list[float]] = {side: [] for side in sides}
    full = report
    order = list(sides)
    for r in range(rounds):
        for side in order[r % 3 :] + order[: r % 3]:
            jax.clear_caches()
            gc.collect()
            start = time.perf_counter()
            out = sides[side]()
            times[side].append(time.perf_counter() - start)
            if side != "plain":
                assert out[0] is not None, out[1]
                if side == "full":
                    full = out[0]
    return dict(
        backend=jax.default_backend(),
        devices=len(jax.devices()),
        plain=statistics.median(times["plain"]),
        default=statistics.median(times["default"]),
        full=statistics.median(times["full"]),
        default_ratio=statistics.median(d / p for d, p in zip(times["default"], times["plain"])),
        full_ratio=statistics.median(f / p for f, p in zip(times["full"], times["plain"])),
        bundle=bundle_bytes(full),
    )


def peak_mib() -> float:
    """This process's peak RSS so far (Linux reports KiB)."""
    return resource.getrusage(resource.RUSAGE_SELF).ru_maxrss / 1024


def child_rss_jax(name: str) -> dict:
    program = make(name)
    plain_compile(program)
    return dict(peak=peak_mib())


def child_rss_report(name: str) -> dict:
    import olympus_jupyter  # noqa: F401 - its import is part of a report's peak

    program = make(name)
    report, error = report_of(program, full=True)
    if report is None:
        return dict(error=error)
    bundle_bytes(report)
    return dict(peak=peak_mib())


CHILDREN: dict[str, Callable[..., dict]] = {
    "time": child_time,
    "rss-jax": child_rss_jax,
    "rss-report": child_rss_report,
}


def run_child(kind: str, name: str, rounds: int) -> dict:
    env = dict(os.environ)
    if name in SHARDED:
        env.setdefault("JAX_PLATFORMS", "cpu")
        env["XLA_FLAGS"] = (
            env.get("XLA_FLAGS", "") + " --xla_force_host_platform_device_count=8"
        ).strip()
    cmd = [sys.executable, __file__, "--child", kind, "--program", name, "--rounds", str(rounds)]
    proc = subprocess.run(cmd, env=env, capture_output=True, text=True, timeout=CHILD_TIMEOUT_S)
    if proc.returncode != 0:
        tail = proc.stderr.strip().splitlines()[-3:]
        return dict(error=f"the {kind} child exited {proc.returncode}: " + " / ".join(tail))
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- the parent -------------------------------------------------------------------------------


def main() -> int:
    options = parser(__doc__, "3 programs, 3 rounds each, instead of 5 programs, 7 rounds")
    options.add_argument("--child", choices=sorted(CHILDREN), help=argparse.SUPPRESS)
    options.add_argument("--program", help=argparse.SUPPRESS)
    options.add_argument("--rounds", type=int, default=3, help=argparse.SUPPRESS)
    args = options.parse_args()
    if args.child:
        child = CHILDREN[args.child]
        out = child(args.program, args.rounds) if args.child == "time" else child(args.program)
        print(json.dumps(out))
        return 0

    from olympus_jupyter.report.output_cap import MAX_OUTPUT_BYTES

    assert MAX_OUTPUT_BYTES / 1e6 == BUDGET_BUNDLE_MB, "the bundle's budget is the cap"
    mode = "short" if args.short else "full"
    rounds = ROUNDS[mode]
    results = Results(name_of(__file__))
    start = time.perf_counter()
    failed = []
    for name in PROGRAMS[mode]:
        timed = run_child("time", name, rounds)
        if "error" in timed:
            print(f"{name}: NO REPORT: {timed['error'][:400]}", flush=True)
            failed.append(name)
            continue
        where = f"{timed['devices']} {timed['backend']} device{'s' if timed['devices'] > 1 else ''}"
        print(
            f"{name} ({where}, {rounds} rounds): plain trace+lower+compile "
            f"{timed['plain']:.2f} s; default report {timed['default']:.2f} s, ratio "
            f"{timed['default_ratio']:.2f} (budget <= {BUDGET_DEFAULT}); passes and costs "
            f"{timed['full']:.2f} s, ratio {timed['full_ratio']:.2f} (budget <= {BUDGET_FULL}); "
            f"display bundle {timed['bundle'] / 1e6:.2f} MB (budget <= {BUDGET_BUNDLE_MB})",
            flush=True,
        )
        results.add(
            f"default report / plain trace+lower+compile, {name}",
            timed["default_ratio"],
            "x",
            BUDGET_DEFAULT,
        )
        results.add(
            f"report with passes and costs / plain trace+lower+compile, {name}",
            timed["full_ratio"],
            "x",
            BUDGET_FULL,
        )
        results.add(
            f"display bundle with passes and costs, {name}",
            timed["bundle"] / 1e6,
            "MB",
            BUDGET_BUNDLE_MB,
        )
        jax_rss, report_rss = run_child("rss-jax", name, 0), run_child("rss-report", name, 0)
        if "error" in jax_rss or "error" in report_rss:
            print(f"{name}: peak RSS not measured: {jax_rss.get('error') or report_rss['error']}")
            failed.append(name)
            continue
        ratio = report_rss["peak"] / jax_rss["peak"]
        print(
            f"{name}: peak RSS, full report {report_rss['peak']:.0f} MiB, JAX compile "
            f"{jax_rss['peak']:.0f} MiB, ratio {ratio:.2f} (budget <= {BUDGET_RSS})",
            flush=True,
        )
        results.add(f"peak RSS, full report / JAX compile, {name}", ratio, "x", BUDGET_RSS)
    results.add(
        f"programs inspect gives no report of (of {len(PROGRAMS[mode])})",
        len(failed),
        "programs",
        0,
    )
    verdict = "all budgets met" if results.ok else "OVER BUDGET"
    print(
        f"({mode} mode, {time.perf_counter() - start:.0f} s in all; "
        f"no report of: {', '.join(failed) or 'none'}) {verdict}"
    )
    results.write(args.json)
    return 0 if results.ok else 1


if __name__ == "__main__":
    sys.exit(main())
