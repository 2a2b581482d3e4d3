"""Compiling for a TPU slice or GPUs this machine does not have, and asking whether the
program fits: real compiles with libtpu and JAX's CUDA plugin (the targets extra; run.sh
runs these in .venvs/targets-<JAX>)."""

import json
import os
import subprocess
import sys
import textwrap

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import PartitionSpec as P

import olympus_jupyter
from olympus import hardware
from olympus_jupyter.report.validate import check_bundle

pytestmark = pytest.mark.targets

GiB = 2**30
HERE = os.path.abspath(__file__)


def layer(x, w):
    return jnp.tanh(x @ w)  # the line of the matmul and its all-gather


LAYER_LINE = layer.__code__.co_firstlineno + 1
X = jax.ShapeDtypeStruct((256, 512), jnp.float32)
W = jax.ShapeDtypeStruct((512, 1024), jnp.float32)
FSDP = dict(mesh="data=2,model=2", shardings=(P("data", None), P("data", "model")))


@pytest.fixture(scope="module")
def fsdp_report():
    return olympus_jupyter.inspect(layer, X, W, target="v5e:2x2", costs=True, **FSDP)


def test_a_tpu_slice_is_described_by_libtpu_with_the_chips_figures():
    v5e = hardware.target("v5e:2x2")
    assert v5e is hardware.target(" V5E:2x2 ")  # one set of devices per name
    assert (v5e.platform, v5e.device_kind, v5e.chips, len(v5e.devices)) == (
        "tpu",
        "TPU v5 lite",
        4,
        4,
    )
    assert v5e.describe() == "TPU v5e (TPU v5 lite), 4 chips, compiled here without one"
    assert v5e.per_device()["hbm_bytes"] == 16 * GiB
    v4 = hardware.target("v4:2x2x1")  # two devices a chip: each has half its memory
    assert (v4.chips, len(v4.devices), v4.per_device()["hbm_bytes"]) == (4, 8, 16 * GiB)
    slices = hardware.target("v5e:2x2", num_slices=2)
    assert len(slices.devices) == 8 and "8 chips in 2 slices" in slices.describe()
    # Over several slices, the first axis the slices divide spans them (JAX's hybrid mesh).
    four = hardware.target("v5e:2x2", num_slices=4).mesh({"slice": 4, "chip": 4})
    assert [[d.slice_index for d in row] for row in four.devices] == [[k] * 4 for k in range(4)]
    with pytest.raises(hardware.TargetError, match="libtpu cannot describe target 'v5e:3x3'"):
        hardware.target("v5e:3x3")
    with pytest.raises(hardware.TargetError, match="mesh a=3 has 3 devices; v5e:2x2 has 4"):
        v5e.mesh({"a": 3})


def test_the_report_names_the_target_everywhere(fsdp_report):
    report = fsdp_report
    assert report.ok and report.platforms == ("tpu",)
    title = "TPU v5e (TPU v5 lite), 4 chips, compiled here without one; mesh data=2, model=2"
    assert title in report.text()
    assert title in str(report.html())
    data = report.to_json()
    check_bundle(data)
    assert data["target"]["name"] == "v5e:2x2" and data["target"]["mesh"] == {"data": 2, "model": 2}
    again = type(report).from_json(json.loads(json.dumps(data)))
    assert again.device_memory() == report.device_memory()


def test_a_sharded_matmul_all_gathers_its_weights_with_its_line_and_bytes(fsdp_report):
    gathers = [c for c in fsdp_report.collectives() if c["opcode"].startswith("all-gather")]
    assert len(gathers) == 1
    (gather,) = gathers
    assert gather["lines"] == [(HERE, LAYER_LINE)]
    assert gather["arguments"] == ["w"] and gather["group_size"] == 2
    # Each device gathers w's rows (512 of them) for its half of the columns, in the
    # precision XLA:TPU multiplies in (bfloat16 or float32).
    assert gather["result_bytes"] in (512 * 512 * 2, 512 * 512 * 4)


def test_a_program_that_fits_says_so_with_its_live_peak(fsdp_report):
    answer = fsdp_report.device_memory()
    assert answer["fits"] is True and answer["capacity_bytes"] == 16 * GiB
    assert answer["peak_source"] == "live in device memory (buffer assignment)"
    # The costs stage's peak adds what sits in the TPU's on-chip memories (VMEM).
    assert 0 < answer["peak_bytes"] <= fsdp_report.costs["peak"]["bytes"]
    assert answer["headroom_bytes"] == 16 * GiB - answer["peak_bytes"]
    verdict, _, biggest = answer["words"].partition("; ")
    assert f"  device memory: {verdict}\n  {biggest}" in fsdp_report.text()


def grow(a, b):
    c = a * 2 + b  # an 8 GiB temporary on every device: the biggest buffer
    return c, jnp.sin(c).sum()


GROW_LINE = grow.__code__.co_firstlineno + 1


def test_a_program_that_does_not_fit_is_still_a_report_with_what_to_cut():
    big = jax.ShapeDtypeStruct((2, 1024, 1024, 1024), jnp.float32)  # 8 GiB, replicated
    report = olympus_jupyter.inspect(grow, big, big, target="v5e:2x2", cache=False)
    answer = report.device_memory()
    assert answer["fits"] is False
    if report.failure is not None:  # XLA refused it (libtpu of JAX 0.10 and later)
        assert report.failure.stage == "compile"
        assert "RESOURCE_EXHAUSTED" in report.failure.message
        assert {"olympuspr", "stablehlo"} <= set(report.provenance.stages)  # every stage before
        assert answer["peak_source"] == "XLA out of memory"
        assert answer["required_bytes"] > answer["available_bytes"] > 15 * GiB
    else:  # an older libtpu compiles it over the memory: the live-range peak says so
        assert answer["peak_source"] == "live in device memory (buffer assignment)"
        assert answer["peak_bytes"] > answer["capacity_bytes"]
    by_kind: dict = {}
    for buffer in answer["largest"]:  # biggest first
        by_kind.setdefault(buffer.get("argument") or buffer["kind"], buffer)
    assert by_kind["a"]["bytes"] == by_kind["b"]["bytes"] == 8 * GiB
    made = by_kind["output"]
    assert made["bytes"] == 8 * GiB and made["shape"] == "f32[2,1024,1024,1024]"
    assert made["lines"][0][0] == HERE and made["lines"][0][1] in (GROW_LINE, GROW_LINE + 1)
    words = answer["words"]
    assert words.startswith("does not fit: ") and "cut" in words
    assert "biggest at the peak: 8.0 GiB argument a, 8.0 GiB argument b, 8.0 GiB output" in words
    answer_words, _, biggest = words.partition("; ")
    assert f"device memory: {answer_words}\n  {biggest}" in report.text()
    check_bundle(report.to_json())


def test_shapes_from_eval_shape_are_placed_without_allocating():
    def init(key):
        return {"w": jax.random.normal(key, (4096, 4096)), "b": jnp.zeros(4096)}

    params = jax.eval_shape(init, jax.random.key(0))  # 64 MiB never allocated

    def apply(params, x):
        return x @ params["w"] + params["b"]

    report = olympus_jupyter.inspect(
        apply,
        params,
        jax.ShapeDtypeStruct((64, 4096), jnp.float32),
        target="v5e:2x2",
        mesh="data=4",
        shardings=({"w": P(None, "data"), "b": P("data")}, None),
    )
    assert report.ok
    assert report.analyses.memory["argument_size_in_bytes"] < 4096 * 4096 * 4 // 2


def test_a_multi_slice_job_compiles_over_both_slices():
    report = olympus_jupyter.inspect(
        lambda x: (x * 2).sum(0),
        jax.ShapeDtypeStruct((64, 128), jnp.float32),
        target="v5e:2x2",
        num_slices=2,
        mesh="data=8",
        shardings=(P("data"),),
        cache=False,
    )
    assert report.ok and report.target["num_slices"] == 2 and report.target["devices"] == 8
    assert "8 chips in 2 slices" in report.text()


def test_gpus_are_a_target_too():
    report = olympus_jupyter.inspect(layer, X, W, target="h100:4", cache=False, **FSDP)
    assert report.ok and report.platforms == ("cuda",)
    assert "NVIDIA H100 SXM 80GB (NVIDIA H100 80GB HBM3), 4 GPUs" in report.text()
    answer = report.device_memory()
    assert answer["fits"] is True and answer["capacity_bytes"] > 79 * GiB


def test_the_magic_takes_the_target():
    from IPython.core.interactiveshell import InteractiveShell

    shell = InteractiveShell.instance()
    shell.run_line_magic("load_ext", "olympus_jupyter")
    shell.user_ns.update(layer=layer, X=X, W=W)
    shell.run_line_magic(
        "olympus_lower",
        '--target v5e:2x2 --mesh data=2,model=2 --shardings "data,None; data,model" '
        "--costs --name rep layer(X, W)",
    )
    report = shell.user_ns["rep"]
    assert report.ok and report.target["name"] == "v5e:2x2"
    assert any(c["opcode"].startswith("all-gather") for c in report.collectives())


def test_the_cli_takes_the_target(tmp_path):
    (tmp_path / "model.py").write_text(
        textwrap.dedent(
            """
            import jax.numpy as jnp

            def layer(x, w):
                return jnp.tanh(x @ w)
            """
        )
    )
    out = tmp_path / "r.html"
    proc = subprocess.run(
        [sys.executable, "-m", "olympus_jupyter", "report", "model:layer"]
        + ["--arg", "f32[256,512]", "--arg", "f32[512,1024]", "--target", "v5e:2x2"]
        + ["--mesh", "data=2,model=2", "--shardings", "data,None; data,model", "-o", str(out)],
        cwd=tmp_path,
        capture_output=True,
        text=True,
        timeout=300,
    )
    assert proc.returncode == 0, proc.stderr
    assert "TPU v5e (TPU v5 lite), 4 chips" in proc.stdout
    assert "device memory: fits:" in out.read_text()


def test_olympus_leaves_the_environment_as_it_was_and_two_processes_compile_at_once():
    child = textwrap.dedent(
        """
        import os, jax, jax.numpy as jnp
        jax.devices()  # JAX's own start, whatever it sets
        before = dict(os.environ)
        import olympus_jupyter
        r = olympus_jupyter.inspect(lambda x: x * 2, jax.ShapeDtypeStruct((8, 128), jnp.float32),
                                    target="v5e:2x2", cache=False)
        assert r.ok, r.failure
        assert dict(os.environ) == before, set(os.environ.items()) ^ set(before.items())
        print("ok")
        """
    )
    env = {k: v for k, v in os.environ.items() if not k.startswith(("TPU_", "ALLOW_MULTIPLE"))}
    procs = [
        subprocess.Popen(
            [sys.executable, "-c", child],
            env=env,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
        )
        for _ in range(2)
    ]
    for proc in procs:
        out, err = proc.communicate(timeout=300)
        assert proc.returncode == 0 and out.strip() == "ok", err[-2000:]


def test_the_inspector_chooses_the_target_and_says_why_it_recompiled():
    from olympus_jupyter.frontends.inspector import Inspector

    ins = Inspector(layer, X, W, target="v5e:2x2", costs=True, **FSDP)
    assert ins.report.ok and ins.report.target["name"] == "v5e:2x2"
    assert any(c["opcode"].startswith("all-gather") for c in ins.report.collectives())
    ins.target.value = "v6e:2x2"
    assert ins.report.ok and ins.report.target["chip"] == "TPU v6e"
    assert "target v5e:2x2 (data=2, model=2) → v6e:2x2 (data=2, model=2)" in ins.why.value
    ins.target.value = ""  # this machine's devices: the mesh must fit them
    assert "Not re-staged" in ins.status.value or ins.report.target is None


def test_shardings_on_the_users_own_mesh_are_laid_onto_the_targets():
    """Arguments sharded on the user's mesh of this machine's devices keep their
    specs, by axis name, on the target's mesh of the same axes."""
    import numpy as np
    from jax.sharding import Mesh, NamedSharding

    own = Mesh(np.array(jax.devices()[:1]).reshape(1, 1), ("data", "model"))  # this machine's
    x = jax.ShapeDtypeStruct((256, 512), jnp.float32, sharding=NamedSharding(own, P("data", None)))
    w = jax.ShapeDtypeStruct(
        (512, 1024), jnp.float32, sharding=NamedSharding(own, P("data", "model"))
    )
    report = olympus_jupyter.inspect(
        layer, x, w, target="v5e:2x2", mesh="data=2,model=2", cache=False
    )
    assert report.ok and report.platforms == ("tpu",)
    # Each device holds its shares: x's rows halved (data), w's rows and columns halved.
    per_device = (128 * 512 + 256 * 512) * 4
    assert report.analyses.memory["argument_size_in_bytes"] == per_device
