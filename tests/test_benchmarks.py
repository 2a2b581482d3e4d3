"""The benchmark runner (benchmarks/run_all.py) and what it needs of every benchmark script:
the README's figures rewritten from a run, a budget judged on the median of repeats, and
``--short`` / ``--json`` in each script. No benchmark is timed here but one quick run of
``bench_call.py --short`` (its figures are not judged: the suite runs beside other work)."""

import importlib
import importlib.metadata
import importlib.util
import json
import pathlib
import subprocess
import sys

import pytest

ROOT = pathlib.Path(__file__).resolve().parents[1]
BENCH = ROOT / "benchmarks"
RECORD_KEYS = {"benchmark", "what", "value", "unit", "budget", "ok"}


@pytest.fixture(scope="module")
def run_all():
    spec = importlib.util.spec_from_file_location("benchmarks_run_all", BENCH / "run_all.py")
    module = importlib.util.module_from_spec(spec)
    sys.modules[spec.name] = module  # its dataclass looks itself up there
    try:
        spec.loader.exec_module(module)
        yield module
    finally:
        del sys.modules[spec.name]


def record(bench, what, value, unit="x", budget=1.10):
    return {
        "benchmark": bench,
        "what": what,
        "value": value,
        "unit": unit,
        "budget": budget,
        "ok": None if budget is None else value <= budget,
    }


def fake_run(run_all, runs):
    """A run as run_all.run() returns it, from the records of each repeat."""
    result = {
        "command": "python benchmarks/run_all.py --short --readme",
        "mode": "short",
        "date": "2026-11-24 10:00 UTC",
        "seconds": 301.0,
        "note": "a test run",
        "machine": {"cores": 2, "cpu": "Some CPU", "memory_gib": 23.5},
        "software": {
            "jax": "0.10.2",
            "jaxlib": "0.10.2",
            "python": "3.11.7",
            "platform": "cpu",
            "devices": ["cpu"],
            "commit": "abc1234",
            "dirty": True,
        },
        "load": [0.5, 1.5],
        "repeats": 3,
        "slow_repeats": 1,
        "benchmarks": [
            {
                "name": "call",
                "script": "bench_call.py",
                "slow": False,
                "planned": 3,
                "seconds": [2.0] * 3,
                "exit": [0, 1, 0],
                "errors": [],
            },
            {
                "name": "memory",
                "script": "bench_memory.py",
                "slow": True,
                "planned": 1,
                "seconds": [70.0],
                "exit": [1],
                "errors": [],
            },
        ],
        "figures": run_all.summarize(runs),
    }
    result["ok"] = run_all.verdict(result)
    return result


def test_a_budget_is_judged_on_the_median_of_repeats(run_all):
    # One run over budget (1.30) fails nothing: the median (1.05) is within 1.10.
    runs = [
        [record("bench_call", "ratio", v), record("bench_call", "call", v * 6, "us", None)]
        for v in (1.00, 1.30, 1.05)
    ]
    ratio, call = run_all.summarize(runs)
    assert (ratio["median"], ratio["min"], ratio["max"], ratio["ok"]) == (1.05, 1.00, 1.30, True)
    assert ratio["values"] == [1.00, 1.30, 1.05]
    assert call["ok"] is None and call["budget"] is None
    # Two of three over: the median is over.
    (over,) = run_all.summarize([[record("bench_call", "ratio", v)] for v in (1.2, 1.0, 1.15)])
    assert over["median"] == 1.15 and over["ok"] is False


def test_the_readme_section_shows_median_spread_budget_and_verdict(run_all):
    runs = [
        [
            record("bench_call", "calling a Compiled / JAX", v),
            record("bench_call", "Olympus call", 6.0 + v, "us", None),
        ]
        for v in (0.98, 1.02, 0.99)
    ]
    runs.append(
        [
            record("bench_memory", "peak RSS ratio", 2.4, "x", 2.0),
            record("bench_memory", "RSS growth", 3.0, "%", 5.0),
        ]
    )
    result = fake_run(run_all, runs)
    assert result["ok"] is False
    section = run_all.render_section(result)
    rows = {
        line.split(" | ")[1]: line for line in section.splitlines() if line.startswith("| `bench_")
    }
    ok_row = rows["calling a Compiled / JAX"]
    assert "**0.99×**" in ok_row and "0.98× – 1.02× (3 runs)" in ok_row
    assert "≤ 1.10×" in ok_row and ok_row.endswith("| ok |")
    over_row = rows["peak RSS ratio"]
    assert "**2.40×**" in over_row and "(1 run)" in over_row and over_row.endswith("| **over** |")
    assert rows["RSS growth"].endswith("| ok |") and "≤ 5 %" in rows["RSS growth"]
    assert "| `bench_call.py` | Olympus call | 6.99 µs |" in section  # reported, no budget
    for said in (
        "2026-11-24",
        "2 cores",
        "23.5 GiB",
        "GPU: none",
        "JAX 0.10.2",
        "Python 3.11.7",
        "Note: a test run",
        "median",
        "`bench_memory.py`",
        "1 budget over",
    ):
        assert said in section, said
    table = run_all.summary_table(result)
    assert "OVER BUDGET" in table and "FAILED" in table and "0.98x - 1.02x (3 runs)" in table


def test_rewriting_the_readme_keeps_the_markers_and_everything_else(run_all):
    before = "# Benchmarks\n\nIntro.\n\n"
    after = "\n\n## Earlier measurements\n\n| old | table |\n"
    readme = before + run_all.BEGIN + "\nold figures\n" + run_all.END + after
    new = run_all.replace_section(readme, "## Measured figures\n\nnew figures\n")
    assert new == (
        before + run_all.BEGIN + "\n## Measured figures\n\nnew figures\n" + run_all.END + after
    )
    assert run_all.replace_section(new, "again") == (
        before + run_all.BEGIN + "\nagain\n" + run_all.END + after
    )
    # Without markers, the section goes after the title, in its markers.
    bare = run_all.replace_section("# Benchmarks\nText.\n", "figures")
    assert bare == f"# Benchmarks\n\n{run_all.BEGIN}\nfigures\n{run_all.END}\nText.\n"
    with pytest.raises(ValueError):
        run_all.replace_section(f"# B\n{run_all.END}\n{run_all.BEGIN}\n", "x")
    # A marker named in the text (not on a line of its own) is not a marker.
    named = f"# B\nThe section between `{run_all.BEGIN}` and `{run_all.END}`.\n"
    assert run_all.replace_section(named + readme, "x") == named + run_all.replace_section(
        readme, "x"
    )


def test_the_repository_readme_has_the_markers(run_all):
    lines = (BENCH / "README.md").read_text().splitlines()
    assert lines.count(run_all.BEGIN) == 1 and lines.count(run_all.END) == 1
    assert (
        lines.index(run_all.BEGIN)
        < lines.index(run_all.END)
        < lines.index("## Earlier measurements (by hand, kept as history)")
    )
    text = "\n".join(lines)
    assert "python benchmarks/run_all.py --short --readme" in text


def test_every_benchmark_with_a_budget_is_run_and_takes_short_and_json(run_all):
    scripts = sorted(p.name for p in BENCH.glob("bench_*.py"))
    budgeted = [s for s in scripts if s not in run_all.NO_BUDGET]
    enforced = [s for s in budgeted if s not in run_all.NOT_MET_YET]
    assert sorted(b.script for b in run_all.BENCHMARKS) == enforced
    # A budget not met yet is said so in the README, with its figures.
    readme = (BENCH / "README.md").read_text()
    for script in run_all.NOT_MET_YET:
        assert f"`{script}`" in readme and "Not met yet" in readme
    # Each script's --help, all in one process (imports are paid once).
    probe = (
        "import contextlib, io, json, runpy, sys\n"
        f"sys.path.insert(0, {str(BENCH)!r})\n"
        "helps = {}\n"
        "for script in sys.argv[1:]:\n"
        "    sys.argv = [script, '--help']\n"
        "    out = io.StringIO()\n"
        "    with contextlib.redirect_stdout(out):\n"
        "        try:\n"
        "            runpy.run_path(script, run_name='__main__')\n"
        "        except SystemExit:\n"
        "            pass\n"
        "    helps[script] = out.getvalue()\n"
        "print(json.dumps(helps))\n"
    )
    proc = subprocess.run(
        [sys.executable, "-c", probe, *(str(BENCH / s) for s in budgeted)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr[-2000:]
    helps = json.loads(proc.stdout.strip().splitlines()[-1])
    for script, text in helps.items():
        assert "--short" in text and "--json" in text, (script, text)


def test_a_quick_benchmark_writes_records(tmp_path):
    out = tmp_path / "call.json"
    proc = subprocess.run(
        [sys.executable, str(BENCH / "bench_call.py"), "--short", "--json", str(out)],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode in (0, 1), proc.stderr[-2000:]  # 1: over budget (a busy machine)
    assert "Compiled call, tiny inputs" in proc.stdout  # its own output is unchanged
    records = json.loads(out.read_text())
    assert records and all(set(r) == RECORD_KEYS for r in records)
    budgeted = [r for r in records if r["budget"] is not None]
    assert budgeted and budgeted[0]["unit"] == "x" and budgeted[0]["budget"] == 1.10
    for r in records:
        assert r["benchmark"] == "bench_call" and isinstance(r["value"], float)
        assert r["ok"] is (None if r["budget"] is None else r["value"] <= r["budget"])
    assert (proc.returncode == 0) == all(r["ok"] is not False for r in records)


def test_the_magic_is_enforced_and_the_real_models_are_measured(run_all):
    """Issue 33: the magic's budget, decided at 1.25x, runs in CI; the real-model
    budgets are in CI's set or, until they hold, in the not-met set (never in
    neither); the real-model benchmark runs programs the corpus has."""
    enforced = {b.script for b in run_all.BENCHMARKS}
    assert "bench_magic.py" in enforced and "bench_magic.py" not in run_all.NOT_MET_YET
    real = "bench_real_models.py"
    assert (real in enforced) != (real in run_all.NOT_MET_YET)
    sys.path[:0] = [str(BENCH), str(ROOT / "tests")]
    try:
        magic = importlib.import_module("bench_magic")
        bench = importlib.import_module("bench_real_models")
        import real_models
    finally:
        del sys.path[:2]
    assert magic.BUDGET == 1.25
    known = {*real_models.SINGLE_DEVICE, *real_models.EIGHT_DEVICES}
    for mode, names in bench.PROGRAMS.items():
        assert set(names) <= known, (mode, set(names) - known)
    assert set(bench.PROGRAMS["short"]) <= set(bench.PROGRAMS["full"])


def test_the_many_lines_costs_program_gives_each_op_a_line_and_fusions(tmp_path):
    """bench_costs_lines.py's generated module (issue 33): a line of its own for every
    op (no two lines alike), and XLA makes several fusions of each block, each with
    costs on the user's lines. A small size of it is compiled here."""
    import olympus
    from olympus_jupyter.report.stage_report import costs_data
    from olympus_jupyter.staging import run_stages

    sys.path.insert(0, str(BENCH))
    try:
        bench = importlib.import_module("bench_costs_lines")
    finally:
        del sys.path[0]
    source = bench.program_source(4, 5)
    body = [line for line in source.splitlines() if line.startswith("    ") and "=" in line]
    assert len(body) == 4 * (5 + 2) and len(set(body)) == len(body)
    for made_of in ("(x @ w)", ".mean(", ".max(", ".sum(", "keepdims=True", "jnp.tanh"):
        assert made_of in source, made_of
    program = bench.load_program(tmp_path, 4, 5, "few_lines")
    run = run_stages(program, bench.arguments(), read_peak=True)
    model = olympus.provenance.build(run.compiled)
    text = model.stages["compiled"].text
    assert text.count(" fusion(") >= 3 * 4  # the dot, the chain, the reduction, the broadcast
    made = costs_data(run, model)
    costed = {(r["file"], r["path"], r["line"]) for r in made["lines"] if r["what"] == "line"}
    assert len(costed) >= 4 * 5  # the chains' lines each have their costs


def test_the_targets_benchmark_runs_in_the_targets_environment_and_fails_without_it(
    run_all, tmp_path, monkeypatch
):
    """Issue 34: bench_targets.py needs libtpu and JAX's CUDA plugin, which only the
    targets environment has (run.sh makes it before the benchmarks): run_all runs it
    with that environment's Python, and where there is none the run fails, saying why."""
    (bench,) = [b for b in run_all.BENCHMARKS if b.script == "bench_targets.py"]
    assert bench.targets and not any(b.targets for b in run_all.BENCHMARKS if b is not bench)
    assert run_all.python_for(run_all.Benchmark("call")) == (sys.executable, None)
    version = importlib.metadata.version("jax")
    monkeypatch.setattr(run_all, "ROOT", tmp_path)  # a checkout without the environment
    python, why = run_all.python_for(bench)
    assert python is None and f".venvs/targets-{version}/bin/python does not exist" in why
    run = run_all.run_one(bench, short=True)
    assert run["error"] == why and run["records"] == [] and run["exit"] is None
    result = fake_run(run_all, [[record("bench_call", "ratio", 1.0)]])
    result["benchmarks"].append(
        {
            "name": "targets",
            "script": "bench_targets.py",
            "slow": True,
            "planned": 1,
            "seconds": [run["seconds"]],
            "exit": [run["exit"]],
            "errors": [run["error"]],
        }
    )
    assert run_all.verdict(result) is False
    assert f"bench_targets.py: DID NOT COMPLETE: {why}" in run_all.summary_table(result)
    made = tmp_path / ".venvs" / f"targets-{version}" / "bin" / "python"
    made.parent.mkdir(parents=True)
    made.touch()
    assert run_all.python_for(bench) == (str(made), None)
