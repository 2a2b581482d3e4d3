"""Runs the benchmarks, checks every budget on the median of repeated runs, and can
write the figures into benchmarks/README.md.

Each benchmark script runs as a child process of its own
(``python benchmarks/bench_<name>.py [--short] --json TMP``), one at a time, and is run
``--repeats`` times (3 by default); the slow ones (memory, the 50,000-equation
program: one to two minutes each in short mode; the JupyterLab ones in Chromium; the
real models: several) run ``--slow-repeats`` times (1 by default), since each already
repeats inside. The repeats go in rounds (every benchmark once, then again), so that
a passing burst of load on the machine falls on different benchmarks rather than on
all the runs of one.

A benchmark that compiles for TPU slices and GPUs this machine does not have
(``targets=True``: bench_targets.py) needs libtpu and JAX's CUDA plugin, which live in
an environment of their own: it runs with ``.venvs/targets-<JAX version>/bin/python``
(the version of this Python's JAX; ``./run.sh --test`` makes that environment before
it runs the benchmarks). Without that environment it does not run, and the table says
so as a benchmark that did not complete (a failure, never a silent pass).

A budget is judged on the median of its runs: it fails only if that median is over,
and the summary shows the spread (the lowest and the highest run) beside it. A run
that is over budget on its own does not fail anything. The exit status is 1 when a
median is over budget or a benchmark did not run to its end (crashed, timed out,
wrote no figures), else 0.

    python benchmarks/run_all.py --short                  # what CI runs (./run.sh --test)
    python benchmarks/run_all.py --short --readme         # ... and rewrite the README's figures
    python benchmarks/run_all.py --only call stages       # some of them, full mode
    python benchmarks/run_all.py --from-json R.json --readme   # the README from a saved run

``--readme`` rewrites only what lies between ``<!-- figures:begin -->`` and
``<!-- figures:end -->`` in benchmarks/README.md (date, machine, versions, and per
figure: median, spread, budget, verdict); the rest of the file is left as it is.
"""

from __future__ import annotations

import argparse
import dataclasses
import datetime
import importlib.metadata
import json
import os
import pathlib
import platform
import re
import shlex
import signal
import statistics
import subprocess
import sys
import tempfile
import threading
import time

HERE = pathlib.Path(__file__).resolve().parent
ROOT = HERE.parent
README = HERE / "README.md"
BEGIN, END = "<!-- figures:begin -->", "<!-- figures:end -->"


@dataclasses.dataclass(frozen=True)
class Benchmark:
    name: str  # what --only takes: "call" for bench_call.py
    slow: bool = False  # runs --slow-repeats times, not --repeats
    timeout_s: int = 300
    targets: bool = False  # runs in the targets environment (see python_for)

    @property
    def script(self) -> str:
        return f"bench_{self.name}.py"


#: Every benchmark with a budget, in the order they run. bench_lexers.py has no budget and is
#: not run here.
BENCHMARKS = (
    Benchmark("call"),
    Benchmark("stages"),
    Benchmark("provenance"),
    Benchmark("report"),
    Benchmark("inspector"),
    Benchmark("validation"),
    Benchmark("compare"),
    Benchmark("passes"),
    Benchmark("costs", timeout_s=900),
    # The browser's: each repeats inside (the median of its displays, switches, fresh
    # pages), starts a JupyterLab of its own and makes a big program's report first
    # (a minute or more a run in CI), and reads a third of its budget or less.
    Benchmark("lab_paint", slow=True, timeout_s=900),
    Benchmark("pass_view", slow=True, timeout_s=900),
    Benchmark("heat_toggle", slow=True, timeout_s=900),
    Benchmark("magic", timeout_s=900),
    Benchmark("memory", slow=True, timeout_s=1200),
    Benchmark("big_program", slow=True, timeout_s=1200),
    Benchmark("saved_page", slow=True, timeout_s=900),
    Benchmark("targets", slow=True, timeout_s=1800, targets=True),
)
NO_BUDGET = ("bench_lexers.py",)
#: Benchmarks whose budget is not met yet: run by hand, their figures in README.md's
#: hand-written sections; CI enforces the budgets above, and a budget moves there once
#: it is met (it is never loosened to get there).
NOT_MET_YET: tuple[str, ...] = (
    "bench_passes_costs.py",
    "bench_real_models.py",
    "bench_costs_lines.py",
)


# -- running ----------------------------------------------------------------------------------


def select(names: list[str] | None) -> list[Benchmark]:
    """The benchmarks ``--only`` names (``call``, ``bench_call`` or ``bench_call.py``)."""
    if not names:
        return list(BENCHMARKS)
    by_name = {b.name: b for b in BENCHMARKS}
    chosen = []
    for n in names:
        key = n.removesuffix(".py").removeprefix("bench_")
        if key not in by_name:
            raise SystemExit(
                f"run_all.py: no benchmark {n!r}; there are: "
                + ", ".join(b.name for b in BENCHMARKS)
            )
        chosen.append(by_name[key])
    return [b for b in BENCHMARKS if b in chosen]


def python_for(bench: Benchmark) -> tuple[str | None, str | None]:
    """The Python that runs ``bench``, and why there is none (else None).

    This one (``sys.executable``), but for a benchmark with ``targets=True``: that runs
    in the targets environment, ``.venvs/targets-<version>/bin/python`` under the
    repository, ``<version>`` being the JAX this Python has (the environment
    ``./run.sh --test`` makes, with libtpu and JAX's CUDA plugin at that version).
    Where it does not exist there is no Python, and the reason says what to do.

    >>> python_for(Benchmark("call")) == (sys.executable, None)
    True
    """
    if not bench.targets:
        return sys.executable, None
    version = importlib.metadata.version("jax")
    python = ROOT / ".venvs" / f"targets-{version}" / "bin" / "python"
    if python.exists():
        return str(python), None
    return None, (
        f"not run: it needs the targets environment (libtpu, JAX's CUDA plugin) for "
        f"JAX {version}, and .venvs/targets-{version}/bin/python does not exist "
        "(./run.sh --test makes it)"
    )


def run_one(bench: Benchmark, short: bool, prefix: str = "    | ") -> dict:
    """One run of one benchmark in a child process (with :func:`python_for`'s Python):
    its exit status, seconds, records, and an error (None when it ran to its end and
    wrote its figures). Its output is passed on, indented."""
    python, why_not = python_for(bench)
    if python is None:
        print(prefix + why_not, flush=True)
        return {"exit": None, "seconds": 0.0, "records": [], "error": why_not}
    with tempfile.TemporaryDirectory() as tmp:
        out = pathlib.Path(tmp) / "results.json"
        cmd = [
            python,
            str(HERE / bench.script),
            *(["--short"] if short else []),
            "--json",
            str(out),
        ]
        start = time.perf_counter()
        tail: list[str] = []
        # A session of its own, so that a timeout ends the benchmark's own children too
        # (Jupyter servers, Chromium, the children of bench_memory.py).
        proc = subprocess.Popen(
            cmd,
            cwd=ROOT,
            stdout=subprocess.PIPE,
            stderr=subprocess.STDOUT,
            text=True,
            errors="replace",
            start_new_session=True,
            env={**os.environ, "PYTHONUNBUFFERED": "1"},
        )

        def relay():
            for line in proc.stdout:
                print(prefix + line.rstrip("\n"), flush=True)
                tail.append(line.rstrip("\n"))
                del tail[:-20]

        reader = threading.Thread(target=relay, daemon=True)
        reader.start()
        error = None
        try:
            proc.wait(timeout=bench.timeout_s)
        except subprocess.TimeoutExpired:
            error = f"timed out after {bench.timeout_s} s"
            try:
                os.killpg(proc.pid, signal.SIGKILL)
            except OSError:
                proc.kill()
            proc.wait()
        reader.join(timeout=10)
        seconds = time.perf_counter() - start
        records = []
        if error is None and out.exists():
            try:
                records = json.loads(out.read_text())
            except ValueError as e:
                error = f"unreadable figures: {e}"
        if error is None and proc.returncode not in (0, 1):
            error = f"exit status {proc.returncode}: " + " / ".join(tail[-3:])
        elif error is None and not records:
            error = f"wrote no figures (exit status {proc.returncode})" + (
                f": {tail[-1]}" if tail else ""
            )
    return {"exit": proc.returncode, "seconds": seconds, "records": records, "error": error}


def summarize(records_per_run: list[list[dict]]) -> list[dict]:
    """The figures of several runs of benchmarks, one per (benchmark, what) in the order
    first seen: every run's value, their median, lowest and highest, and whether the
    median is within the budget (None without a budget).

    >>> runs = [[{"benchmark": "b", "what": "w", "value": v, "unit": "x", "budget": 1.1,
    ...           "ok": v <= 1.1}] for v in (1.0, 1.3, 1.05)]
    >>> f, = summarize(runs)
    >>> f["median"], f["min"], f["max"], f["ok"]
    (1.05, 1.0, 1.3, True)
    """
    figures: dict[tuple[str, str], dict] = {}
    for records in records_per_run:
        for r in records:
            key = (r["benchmark"], r["what"])
            f = figures.setdefault(
                key,
                {
                    "benchmark": r["benchmark"],
                    "what": r["what"],
                    "unit": r["unit"],
                    "budget": r["budget"],
                    "values": [],
                },
            )
            f["values"].append(r["value"])
    for f in figures.values():
        v = f["values"]
        f.update(median=statistics.median(v), min=min(v), max=max(v))
        f["ok"] = None if f["budget"] is None else bool(f["median"] <= f["budget"])
    return list(figures.values())


def machine() -> dict:
    """Cores, memory and CPU from /proc (where there is one)."""
    info = {"cores": os.cpu_count(), "system": platform.system(), "cpu": platform.processor()}
    try:
        info["cores_usable"] = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        pass
    try:
        for line in pathlib.Path("/proc/cpuinfo").read_text().splitlines():
            if line.startswith("model name"):
                info["cpu"] = line.split(":", 1)[1].strip()
                break
        for line in pathlib.Path("/proc/meminfo").read_text().splitlines():
            if line.startswith("MemTotal:"):
                info["memory_gib"] = int(line.split()[1]) / 2**20
                break
    except OSError:
        pass
    return info


_SOFTWARE = """\
import json, sys, jax, jaxlib
devices = jax.devices()
print(json.dumps({"jax": jax.__version__, "jaxlib": jaxlib.__version__,
                  "python": sys.version.split()[0],
                  "platform": devices[0].platform,
                  "devices": [getattr(d, "device_kind", d.platform) for d in devices]}))
"""


def software() -> dict:
    """JAX, jaxlib and Python versions and JAX's devices (asked of a child, so that this
    process stays light), and the repository's commit."""
    info: dict = {"python": platform.python_version()}
    try:
        out = subprocess.run(
            [sys.executable, "-c", _SOFTWARE],
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        info.update(json.loads(out.stdout.strip().splitlines()[-1]))
    except (subprocess.SubprocessError, ValueError, IndexError) as e:
        info["error"] = str(e)
    try:
        git = ["git", "-C", str(ROOT)]
        info["commit"] = subprocess.run(
            git + ["rev-parse", "--short", "HEAD"], text=True, capture_output=True, check=True
        ).stdout.strip()
        info["dirty"] = bool(
            subprocess.run(
                git + ["status", "--porcelain", "--untracked-files=no"],
                text=True,
                capture_output=True,
            ).stdout.strip()
        )
    except (OSError, subprocess.SubprocessError):
        pass
    return info


def load() -> float | None:
    try:
        return os.getloadavg()[0]
    except OSError:
        return None


def run(
    benches: list[Benchmark],
    short: bool,
    repeats: int,
    slow_repeats: int,
    command: str,
    note: str | None,
) -> dict:
    """Runs ``benches`` in rounds and returns the whole run (what --json writes)."""
    start = time.perf_counter()
    started = datetime.datetime.now(datetime.timezone.utc)
    load_start = load()
    plan = {b.name: slow_repeats if b.slow else repeats for b in benches}
    runs: dict[str, list[dict]] = {b.name: [] for b in benches}
    for i in range(max(plan.values(), default=0)):
        for b in benches:
            if i >= plan[b.name]:
                continue
            print(
                f"== {b.script}{' --short' if short else ''}: run {i + 1} of {plan[b.name]}"
                + (" (a slow one: run once)" if b.slow and plan[b.name] == 1 else ""),
                flush=True,
            )
            r = run_one(b, short)
            print(
                f"   ({r['seconds']:.1f} s, "
                + ("not run" if r["exit"] is None else f"exit status {r['exit']}")
                + (f"; DID NOT COMPLETE: {r['error']}" if r["error"] else "")
                + ")",
                flush=True,
            )
            runs[b.name].append(r)
    benchmarks = [
        {
            "name": b.name,
            "script": b.script,
            "slow": b.slow,
            "planned": plan[b.name],
            "seconds": [r["seconds"] for r in runs[b.name]],
            "exit": [r["exit"] for r in runs[b.name]],
            "errors": [r["error"] for r in runs[b.name] if r["error"]],
        }
        for b in benches
    ]
    figures = summarize([r["records"] for b in benches for r in runs[b.name]])
    result = {
        "command": command,
        "mode": "short" if short else "full",
        "date": started.strftime("%Y-%m-%d %H:%M UTC"),
        "seconds": time.perf_counter() - start,
        "note": note,
        "machine": machine(),
        "software": software(),
        "load": [load_start, load()],
        "repeats": repeats,
        "slow_repeats": slow_repeats,
        "benchmarks": benchmarks,
        "figures": figures,
    }
    result["ok"] = verdict(result)
    return result


def verdict(result: dict) -> bool:
    """True when every budget's median is within it and every run completed."""
    return all(f["ok"] is not False for f in result["figures"]) and not any(
        b["errors"] for b in result["benchmarks"]
    )


# -- formatting -------------------------------------------------------------------------------

_UNITS = {"us": "µs", "x": "×"}


def fmt(value: float, unit: str) -> str:
    """A figure with its unit: ``1.02×``, ``41.5 ms``, ``0.52 %``, ``5.87 µs``, ``0.0532 s``,
    ``1,234 ms``."""
    if unit == "x":
        return f"{value:.2f}×"
    number = f"{value:,.0f}" if abs(value) >= 100 else f"{value:#.3g}".rstrip(".")  # 3 digits
    return f"{number} {_UNITS.get(unit, unit)}"


def fmt_budget(budget: float | None, unit: str) -> str:
    if budget is None:
        return "—"
    if unit == "x":
        return f"≤ {budget:.2f}×"
    return f"≤ {budget:g} {_UNITS.get(unit, unit)}"


def fmt_spread(f: dict) -> str:
    n = len(f["values"])
    if n == 1:
        return "— (1 run)"
    return f"{fmt(f['min'], f['unit'])} – {fmt(f['max'], f['unit'])} ({n} runs)"


def fmt_verdict(f: dict, markdown: bool = True) -> str:
    if f["ok"] is None:
        return "reported"
    if f["ok"]:
        return "ok"
    return "**over**" if markdown else "OVER BUDGET"


def fmt_duration(seconds: float) -> str:
    m, s = divmod(round(seconds), 60)
    return f"{m} min {s} s" if m else f"{s} s"


def _ascii(text: str) -> str:
    for a, b in (("×", "x"), ("µ", "u"), ("≤", "<="), ("–", "-"), ("—", "-")):
        text = text.replace(a, b)
    return text


def summary_table(result: dict) -> str:
    """The console's table: every budget, then what did not complete, then the verdict."""
    rows = [("benchmark", "figure", "median", "spread (min - max)", "budget", "verdict")]
    for f in result["figures"]:
        if f["budget"] is not None:
            rows.append(
                (
                    f["benchmark"],
                    f["what"],
                    fmt(f["median"], f["unit"]),
                    fmt_spread(f),
                    fmt_budget(f["budget"], f["unit"]),
                    fmt_verdict(f, markdown=False),
                )
            )
    rows = [tuple(_ascii(c) for c in r) for r in rows]
    widths = [max(len(r[i]) for r in rows) for i in range(len(rows[0]))]
    lines = ["  ".join(c.ljust(w) for c, w in zip(r, widths)).rstrip() for r in rows]
    lines.insert(1, "  ".join("-" * w for w in widths))
    for b in result["benchmarks"]:
        for e in b["errors"]:
            lines.append(f"{b['script']}: DID NOT COMPLETE: {e}")
    over = [f"{f['benchmark']}: {f['what']}" for f in result["figures"] if f["ok"] is False]
    lines.append("")
    budgets = len([f for f in result["figures"] if f["budget"] is not None])
    lines.append(
        f"{budgets} budget{'s' if budgets != 1 else ''}, "
        f"judged on the median of the runs; {len(over)} over"
        + (": " + "; ".join(over) if over else "")
        + f". {fmt_duration(result['seconds'])} in all."
    )
    lines.append("benchmarks: " + ("all budgets met" if result["ok"] else "FAILED"))
    return "\n".join(lines)


def describe_machine(result: dict) -> list[str]:
    m, s = result["machine"], result["software"]
    cores = m.get("cores")
    usable = m.get("cores_usable")
    parts = [f"{cores} cores" + (f" ({usable} usable)" if usable and usable != cores else "")]
    if m.get("cpu"):
        parts.append(m["cpu"])
    if m.get("memory_gib"):
        parts.append(f"{m['memory_gib']:.1f} GiB memory")
    devices = s.get("devices") or []
    if s.get("platform") in (None, "cpu"):
        parts.append("GPU: none" + (" (JAX's devices: cpu)" if devices else ""))
    else:
        parts.append(
            f"{s['platform'].upper()}: " + ", ".join(sorted(set(devices))) + f" ({len(devices)})"
        )
    soft = []
    if s.get("jax"):
        soft.append(f"JAX {s['jax']}" + (f" (jaxlib {s['jaxlib']})" if s.get("jaxlib") else ""))
    soft.append(f"Python {s.get('python', '?')}")
    if s.get("commit"):
        soft.append(
            f"the repository at {s['commit']}"
            + (" with uncommitted changes" if s.get("dirty") else "")
        )
    lines = ["- Machine: " + ", ".join(parts), "- Software: " + ", ".join(soft)]
    start, end = result.get("load") or [None, None]
    if start is not None:
        lines.append(
            f"- Load average (1 minute): {start:.1f} at the start, {end:.1f} at the end"
            f" (on {usable or cores} cores)"
        )
    return lines


def render_section(result: dict) -> str:
    """The README's generated section (without its markers) for one run."""
    slow = [b["script"] for b in result["benchmarks"] if b["slow"]]
    fast = [b["script"] for b in result["benchmarks"] if not b["slow"]]
    out = [
        "<!-- Written by benchmarks/run_all.py --readme: edit the runner, not this section. -->",
        "## Measured figures: the latest run",
        "",
        f"`{result['command']}`, {result['date']}, {result['mode']} mode, "
        f"{fmt_duration(result['seconds'])} in all.",
        "",
        *describe_machine(result),
    ]
    if result.get("note"):
        out.append(f"- Note: {result['note']}")
    runs = []
    if fast:
        runs.append(
            f"the fast benchmarks ran {result['repeats']} time"
            f"{'s' if result['repeats'] != 1 else ''} each"
        )
    if slow:
        runs.append(
            f"the slow ones ({', '.join(f'`{s}`' for s in slow)}) "
            + ("once" if result["slow_repeats"] == 1 else f"{result['slow_repeats']} times")
            + " (each repeats inside)"
        )
    runs_line = " and ".join(runs)
    out += [
        "",
        runs_line[:1].upper() + runs_line[1:] + ". A budget is judged on the median of its "
        "runs (it fails only if the median is over); the spread is the lowest and the "
        "highest run.",
        "",
    ]
    out += [
        "| benchmark | figure | median | spread (min – max) | budget | verdict |",
        "| --- | --- | --- | --- | --- | --- |",
    ]
    for f in result["figures"]:
        if f["budget"] is not None:
            out.append(
                f"| `{f['benchmark']}.py` | {f['what']} | "
                f"**{fmt(f['median'], f['unit'])}** | {fmt_spread(f)} | "
                f"{fmt_budget(f['budget'], f['unit'])} | {fmt_verdict(f)} |"
            )
    reported = [f for f in result["figures"] if f["budget"] is None]
    if reported:
        out += [
            "",
            "Reported beside them (no budget of their own):",
            "",
            "| benchmark | figure | median | spread (min – max) |",
            "| --- | --- | --- | --- |",
        ]
        for f in reported:
            out.append(
                f"| `{f['benchmark']}.py` | {f['what']} | {fmt(f['median'], f['unit'])} "
                f"| {fmt_spread(f)} |"
            )
    errors = [(b["script"], e) for b in result["benchmarks"] for e in b["errors"]]
    if errors:
        out += ["", "Did not complete:", ""] + [f"- `{s}`: {e}" for s, e in errors]
    over = [f for f in result["figures"] if f["ok"] is False]
    out += [
        "",
        "Verdict: "
        + (
            "every budget met."
            if result["ok"]
            else f"{len(over)} budget{'s' if len(over) != 1 else ''} over"
            + (
                f", {len(errors)} run{'s' if len(errors) != 1 else ''} did not complete"
                if errors
                else ""
            )
            + "."
        ),
    ]
    return "\n".join(out)


def replace_section(readme: str, section: str) -> str:
    """``readme`` with what lies between the markers (each on a line of its own) replaced
    by ``section``; the markers and everything outside them are kept as they are. Without
    markers, the section (in its markers) goes after the first heading."""
    block = f"{BEGIN}\n{section.strip()}\n{END}"
    begins = [m.start() for m in re.finditer(f"^{re.escape(BEGIN)}$", readme, re.M)]
    ends = [m.start() for m in re.finditer(f"^{re.escape(END)}$", readme, re.M)]
    if len(begins) == len(ends) == 1 and begins[0] < ends[0]:
        return readme[: begins[0]] + block + readme[ends[0] + len(END) :]
    if begins or ends:
        raise ValueError(
            f"the README must have {BEGIN} and then {END}, once each, each on a line of its own"
        )
    lines = readme.splitlines(keepends=True)
    at = next((i + 1 for i, line in enumerate(lines) if line.startswith("# ")), 0)
    return "".join(lines[:at]) + "\n" + block + "\n" + "".join(lines[at:])


# -- the command ------------------------------------------------------------------------------


def main(argv: list[str] | None = None) -> int:
    p = argparse.ArgumentParser(
        description=__doc__.split("\n\n")[0].replace("\n", " "),
        formatter_class=argparse.RawDescriptionHelpFormatter,
        epilog="\n\n".join(__doc__.split("\n\n")[1:]),
    )
    p.add_argument(
        "--short", action="store_true", help="each benchmark's short mode (what CI runs)"
    )
    p.add_argument(
        "--repeats",
        type=int,
        default=3,
        metavar="N",
        help="runs of each fast benchmark (default 3)",
    )
    p.add_argument(
        "--slow-repeats",
        type=int,
        default=1,
        metavar="N",
        help="runs of each slow one: memory, big_program, saved_page, targets (default 1)",
    )
    p.add_argument(
        "--only",
        nargs="+",
        metavar="NAME",
        help="only these benchmarks (call, stages, ..., or bench_call.py)",
    )
    p.add_argument(
        "--readme",
        nargs="?",
        const=str(README),
        metavar="PATH",
        help="rewrite the figures section of benchmarks/README.md (or PATH)",
    )
    p.add_argument("--json", metavar="OUT", help="write the whole run (figures, machine) to OUT")
    p.add_argument(
        "--from-json", metavar="RUN", help="run nothing: take the run that --json wrote to RUN"
    )
    p.add_argument("--note", help="a line for the README about the run (say, the machine's load)")
    args = p.parse_args(argv)
    if args.repeats < 1 or args.slow_repeats < 1:
        p.error("--repeats and --slow-repeats are at least 1")

    if args.from_json:
        result = json.loads(pathlib.Path(args.from_json).read_text())
        if args.note:
            result["note"] = args.note
    else:
        shown = list(sys.argv[1:] if argv is None else argv)
        if "--note" in shown:  # the note has a line of its own
            del shown[shown.index("--note") : shown.index("--note") + 2]
        shown = [a for a in shown if not a.startswith("--note=")]
        command = shlex.join(["python", "benchmarks/run_all.py", *shown])
        result = run(
            select(args.only), args.short, args.repeats, args.slow_repeats, command, args.note
        )
    print()
    print(summary_table(result))
    if args.json:
        path = pathlib.Path(args.json)
        path.parent.mkdir(parents=True, exist_ok=True)
        path.write_text(json.dumps(result, indent=1) + "\n")
        print(f"the run: {path}")
    if args.readme:
        path = pathlib.Path(args.readme)
        path.write_text(replace_section(path.read_text(), render_section(result)))
        print(f"figures written to {path}")
    return 0 if result["ok"] else 1


if __name__ == "__main__":
    sys.exit(main())
