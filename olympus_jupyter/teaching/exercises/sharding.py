"""The checks of lesson 07_sharding: shardings and the collectives they cost, on 8
devices.

The lesson's kernel has 8 CPU devices (its first cell sets
``--xla_force_host_platform_device_count=8`` before JAX starts). A check asked in a
process with fewer (a kernel that started JAX without the flag, or a test process)
cannot make a mesh of 8 there: it says so, and compiles its programs in a child
process that has 8 CPU devices. What it sends there is data (the partition specs
of an answer, the shapes of its own programs), never the student's code.
"""

from __future__ import annotations

import functools
import json
import os
import subprocess
import sys


from olympus_jupyter.teaching.checks import NotYet, Verdict, attempt

DEVICES = 8
AXIS = "x"
#: Exercise 1's program: ``layer(x, w)``, x: f32[64, 32], w: f32[32, 16].
LAYER_SHAPES = ((64, 32), (32, 16))
#: Exercise 2's cases: (m, k, n, devices) of an all-reduced x @ w.
ALLREDUCE_CASES = ((64, 32, 16, 8), (128, 64, 48, 8), (128, 64, 48, 4))

_LAYER_SOURCE = """\
def layer(x, w):
    y = x @ w
    return jnp.tanh(y)
"""


def devices_here() -> int:
    """The CPU devices of this process (JAX's default backend's, when it is CPU)."""
    import jax

    return len(jax.devices()) if jax.default_backend() == "cpu" else 0


def few_devices_note() -> str:
    """What a check says when this process has fewer than 8 CPU devices; empty when
    it has them."""
    n = devices_here()
    if n >= DEVICES:
        return ""
    return (
        f"(This process has {n} CPU device{'s' if n != 1 else ''}, not {DEVICES}: "
        f"the check compiled in a child process with {DEVICES}. For the lesson's "
        f"demos, restart the kernel and run its first cell first: XLA_FLAGS must "
        f"hold --xla_force_host_platform_device_count=8 before JAX starts.)"
    )


# -- what is measured with 8 devices (here, or in a child process) --------------------


def _mesh(devices: int):
    import jax
    from olympus.sharding import AxisType

    if devices == DEVICES:
        return jax.make_mesh((DEVICES,), (AXIS,), axis_types=(AxisType.Auto,))
    # A mesh of 8 with the contraction over an axis of `devices`: groups of that many.
    return jax.make_mesh(
        (devices, DEVICES // devices), (AXIS, "y"), axis_types=(AxisType.Auto,) * 2
    )


def _spec(entries):
    from olympus.sharding import PartitionSpec

    return PartitionSpec(*[tuple(e) if isinstance(e, list) else e for e in entries])


def _layer_report(specs, shapes, devices: int = DEVICES):
    import olympus
    import olympus.numpy as jnp
    from olympus.sharding import NamedSharding
    from olympus_jupyter.frontends.inspection import inspect
    from olympus_jupyter.teaching.exercises._programs import program

    mesh = _mesh(devices)
    fun = program(_LAYER_SOURCE, "layer")
    args = [
        olympus.ShapeDtypeStruct(s, jnp.float32, sharding=NamedSharding(mesh, _spec(p)))
        for s, p in zip(shapes, specs)
    ]
    report = inspect(fun, *args, costs=True, stages="source,hlo,partitioned,costs", cache=False)
    if report.failure is not None:
        return {"failure": report.failure.headline()}
    line = fun.__code__.co_firstlineno + 1
    assert report.costs is not None  # asked for, and no failure
    rows = [r for r in report.cost_by_line() if r["what"] == "line"]
    return {
        "failure": None,
        "line": line,
        "flops": sum(r["flops"] for r in rows if r["line"] == line),
        "collectives": [
            {
                "opcode": c["opcode"],
                "kind": c["kind"],
                "lines": [ln for _, ln in c["lines"]],
                "result_bytes": c["result_bytes"],
                "moved_bytes": c["moved_bytes"],
                "group_size": c["group_size"],
            }
            for c in report.collectives()
        ],
        "devices": report.costs["devices"],
    }


def measure(job: dict) -> dict:
    """What a check needs, measured in this process (which has 8 CPU devices)."""
    if job["what"] == "layer":
        return _layer_report(job["specs"], LAYER_SHAPES)
    if job["what"] == "allreduce":
        out = {}
        for m, k, n, d in ALLREDUCE_CASES:
            r = _layer_report([[None, AXIS], [AXIS, None]], ((m, k), (k, n)), devices=d)
            out[f"{m},{k},{n},{d}"] = r
        return out
    raise ValueError(job)


_CHILD = """\
import json, sys
from olympus_jupyter.teaching.exercises import sharding
print(json.dumps(sharding.measure(json.loads(sys.argv[1]))))
"""


@functools.lru_cache(maxsize=64)
def _measured(job_json: str) -> dict:
    job = json.loads(job_json)
    if devices_here() >= DEVICES:
        return measure(job)
    env = dict(os.environ, JAX_PLATFORMS="cpu")
    env["XLA_FLAGS"] = (
        env.get("XLA_FLAGS", "") + f" --xla_force_host_platform_device_count={DEVICES}"
    ).strip()
    root = os.path.dirname(
        os.path.dirname(os.path.dirname(os.path.dirname(os.path.abspath(__file__))))
    )
    env["PYTHONPATH"] = os.pathsep.join(p for p in (root, env.get("PYTHONPATH")) if p)
    proc = subprocess.run(
        [sys.executable, "-c", _CHILD, job_json],
        env=env,
        capture_output=True,
        text=True,
        timeout=600,
    )
    if proc.returncode != 0:
        raise NotYet(
            f"Not yet: this process has {devices_here()} CPU devices, not "
            f"{DEVICES}, and the child process that has {DEVICES} failed:\n"
            f"{proc.stderr[-1500:]}"
        )
    return json.loads(proc.stdout.strip().splitlines()[-1])


# -- exercise 1: shardings that need no collective ------------------------------------


def _entries(spec, what: str) -> list:
    """A partition spec's entries as JSON (None, an axis name, or a list of names);
    raises NotYet saying what is wrong with it."""
    from olympus.sharding import NamedSharding, PartitionSpec

    if isinstance(spec, NamedSharding):
        spec = spec.spec
    if not isinstance(spec, PartitionSpec):
        raise NotYet(
            f"Not yet:\n- the spec of {what} is {spec!r}, not a PartitionSpec: "
            f"write P(...) (olympus.sharding.PartitionSpec)."
        )
    out = []
    for e in spec:
        names = [] if e is None else [e] if isinstance(e, str) else list(e)
        unknown = [n for n in names if n != AXIS]
        if unknown:
            raise NotYet(
                f"Not yet:\n- the spec of {what}, {spec}, names the mesh axis "
                f"{unknown[0]!r}: the mesh has one axis, {AXIS!r}, of {DEVICES} "
                f"devices."
            )
        out.append(None if e is None else e if isinstance(e, str) else names)
    return out


def check_no_collective_specs(no_collective_specs) -> None:
    """Lesson 07, exercise 1: partition specs of ``layer``'s x and w over a mesh of 8
    (one axis, ``'x'``) with which its product needs no collective and each device
    does an eighth of the work."""
    answer = attempt(no_collective_specs, name="no_collective_specs")
    if not isinstance(answer, (tuple, list)) or len(answer) != 2:
        raise NotYet(
            f"Not yet:\n- no_collective_specs returned {answer!r}: return a pair, "
            f"(the PartitionSpec of x, the PartitionSpec of w)."
        )
    specs = [_entries(answer[0], "x"), _entries(answer[1], "w")]
    for spec, shape, what in zip(specs, LAYER_SHAPES, "xw"):
        if len(spec) > len(shape):
            raise NotYet(
                f"Not yet:\n- the spec of {what} has {len(spec)} entries, but {what} "
                f"has {len(shape)} dimensions."
            )
    found = _measured(json.dumps({"what": "layer", "specs": specs}))
    note = few_devices_note()
    verdict = Verdict()
    if found["failure"]:
        verdict.stop(
            f"with x sharded as P{tuple(specs[0])} and w as P{tuple(specs[1])}, "
            f"the layer did not compile: {found['failure']}"
        )
    m, k = LAYER_SHAPES[0]
    n = LAYER_SHAPES[1][1]
    total = 2 * m * k * n
    shown = f"x: P{tuple(specs[0])}, w: P{tuple(specs[1])}"
    for c in found["collectives"]:
        why = {
            "all-reduce": "each device holds a slice of the contracted dimension (k), so "
            "it computes a partial sum of every element of y: the partial "
            "sums must be added across devices",
            "all-gather": "the two operands are split in ways that no device's pieces "
            "match (x's rows and w's columns over the same devices, or a "
            "contraction split one way and not the other): a device must "
            "first gather a whole operand",
        }.get(c["opcode"], "the shardings do not line up")
        verdict.expect(
            False,
            f"with {shown}, XLA inserted an {c['opcode']} on line "
            f"{', '.join(map(str, c['lines']))} (y = x @ w) of "
            f"{c['result_bytes']:,} bytes per device, ~{c['moved_bytes']:,} "
            f"sent by each of {c['group_size']}: {why}.",
        )
    if not found["collectives"]:
        verdict.expect(
            found["flops"] <= total / DEVICES * 1.01,
            f"with {shown}, no collective is needed, but each device computes "
            f"{found['flops']:,.0f} of the product's {total:,} flops: "
            f"{'the whole of it' if found['flops'] >= total * 0.99 else 'more than an eighth'}."
            f" The work must be split over the {DEVICES} devices: shard a "
            f"dimension that is not contracted.",
        )
    if verdict.wrong and note:
        verdict.wrong.append(note)
    verdict.close(
        f"with {shown}, each device computes {found['flops']:,.0f} flops, an "
        f"eighth of the product, from the pieces it holds, and no collective is "
        f"needed: splitting x's rows (or w's columns) splits y's rows (or "
        f"columns), and each element of y needs a whole row of x and a whole "
        f"column of w, which every device has. The output stays sharded."
        + (f"\n{note}" if note else "")
    )


# -- exercise 2: the bytes an all-reduce sends -----------------------------------------


def check_allreduce_bytes(allreduce_bytes) -> None:
    """Lesson 07, exercise 2: the bytes each device sends for the all-reduce of
    ``x @ w`` with the contracted dimension split over ``devices`` devices."""
    answers = {
        case: attempt(allreduce_bytes, *case, name="allreduce_bytes") for case in ALLREDUCE_CASES
    }
    found = _measured(json.dumps({"what": "allreduce"}))
    note = few_devices_note()
    verdict = Verdict()
    for (m, k, n, d), got in answers.items():
        f = found[f"{m},{k},{n},{d}"]
        reduces = [c for c in f.get("collectives", []) if c["opcode"] == "all-reduce"]
        if f["failure"] or not reduces:
            verdict.stop(
                f"the check's own program for m={m}, k={k}, n={n} on {d} devices "
                f"has no all-reduce here ({f['failure'] or f['collectives']}): "
                f"this JAX does not partition it as expected."
            )
        c = reduces[0]
        want = c["moved_bytes"]
        try:
            value = float(got)
        except (TypeError, ValueError):
            verdict.stop(
                f"allreduce_bytes({m}, {k}, {n}, {d}) returned {got!r}, not a number of bytes."
            )
        if abs(value - want) <= 1:
            continue
        size = c["result_bytes"]
        if abs(value - size) <= 1:
            why = (
                f"{size:,} bytes is the size of what is all-reduced (each device's "
                f"partial f32[{m},{n}]), not what each device sends"
            )
        elif abs(value - size * (d - 1) / d) <= 1:
            why = (
                "that is what an all-gather sends, (d-1)/d of the result; an all-reduce "
                "is a reduce-scatter then an all-gather, and each sends that much"
            )
        elif abs(value - size / d) <= 1 or abs(value - size * 2 / d) <= 1:
            why = (
                "the all-reduced buffer is the whole f32[m,n] result on every device (a "
                "partial sum of every element), not an eighth of it"
            )
        elif abs(value - 4 * m * k * (d - 1) / d) <= 1 or abs(value - 4 * k * n * (d - 1) / d) <= 1:
            why = (
                "the operands x and w never move: each device keeps its slice of k and "
                "sends partial sums of the result y"
            )
        else:
            why = f"Olympus's report says ~{want:,} (of a result of {size:,} bytes)"
        verdict.expect(
            False,
            f"allreduce_bytes({m}, {k}, {n}, {d}) returned {got!r}; expected {want:,}: {why}.",
        )
    if verdict.wrong and note:
        verdict.wrong.append(note)
    m, k, n, d = ALLREDUCE_CASES[0]
    c = [c for c in found[f"{m},{k},{n},{d}"]["collectives"] if c["opcode"] == "all-reduce"][0]
    verdict.close(
        f"each device holds a slice of k and computes a partial f32[m,n] (for "
        f"{m}x{n}: {c['result_bytes']:,} bytes, on line {c['lines'][0]}, y = x @ w); "
        f"a ring all-reduce sends 2·(d-1)/d of it from each device (a "
        f"reduce-scatter, then an all-gather): {c['moved_bytes']:,} bytes on "
        f"{d} devices, whatever k is." + (f"\n{note}" if note else "")
    )


__all__ = ["check_no_collective_specs", "check_allreduce_bytes"]
