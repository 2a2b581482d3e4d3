"""GPU targets (olympus.gpu_targets): compile-only CUDA devices of a kind and a count,
compiled for on a machine with or without a GPU, and the GPUs' figures (olympus.chips)."""

import re

import jax
import jax.numpy as jnp
import numpy as np
import pytest
from jax.sharding import Mesh, NamedSharding, PartitionSpec as P

from olympus import chips, gpu_targets
from olympus.gpu_targets import gpu_kinds, gpu_target, gpu_target_config
from olympus.hardware import Target, TargetError

# Compiles for CUDA with JAX's plugin: run in the targets environment (run.sh), never skipped.
needs_plugin = pytest.mark.targets


def _mlp(x, w1, w2):
    return jnp.sum(jnp.tanh(x @ w1) @ w2, axis=0)


@needs_plugin
def test_a_sharded_program_compiles_for_four_h100s():
    t = gpu_target("h100", 4)
    assert isinstance(t, Target) and t.name == "h100:4" and t.platform == "cuda"
    assert len(t.devices) == t.chips == 4
    assert t.device_kind == "NVIDIA H100 80GB HBM3"
    mesh = Mesh(np.array(t.devices).reshape(2, 2), ("data", "model"))

    def arg(shape, spec):
        return jax.ShapeDtypeStruct(shape, jnp.bfloat16, sharding=NamedSharding(mesh, spec))

    x = arg((256, 512), P("data", "model"))
    w1 = arg((512, 1024), P("model", None))
    w2 = arg((1024, 256), P(None, "model"))
    compiled = jax.jit(_mlp).trace(x, w1, w2).lower().compile()

    memory = compiled.memory_analysis()
    # Each device holds its shard: x 128x256, w1 256x1024, w2 1024x128 in bf16.
    assert memory.argument_size_in_bytes == 2 * (128 * 256 + 256 * 1024 + 1024 * 128)
    assert memory.temp_size_in_bytes > 0
    text = compiled.as_text()
    assert "num_partitions=4" in text
    # The GPU compiler's kernels: a Triton (or cuBLAS) matmul fusion, loop fusions.
    assert re.search(r"kind=kCustom", text) and re.search(r"kind=kLoop|kind=kInput", text)
    assert "__triton" in text or "__cublas" in text
    # The contraction over the sharded axis ends in an all-reduce between devices.
    assert re.search(r"all-reduce(-start)?\(", text)


@needs_plugin
@pytest.mark.parametrize("kind", gpu_kinds())
def test_every_kind_describes_its_gpu_and_compiles(kind):
    t = gpu_target(kind, 2)
    chip = chips.chip("cuda", kind)
    assert t.chip is chip and t.device_kind in chip.kinds
    assert chips.chip_of("gpu", t.device_kind) is chip  # as the devices name their platform
    mesh = Mesh(np.array(t.devices), ("d",))
    x = jax.ShapeDtypeStruct((64, 128), jnp.float32, sharding=NamedSharding(mesh, P("d")))
    compiled = jax.jit(lambda a: jnp.sum(jnp.sin(a))).trace(x).lower().compile()
    assert compiled.memory_analysis().argument_size_in_bytes == 32 * 128 * 4
    assert "fusion(" in compiled.as_text()


@needs_plugin
def test_a_target_is_made_once_and_hosts_split_the_devices():
    assert gpu_target("h100", 4) is gpu_target(" H100", 4)
    t = gpu_target("b200", 16, hosts=2)
    assert t.name == "b200:2x8" and len(t.devices) == 16
    assert [d.process_index for d in t.devices] == [0] * 8 + [1] * 8
    mesh = t.mesh({"host": 2, "gpu": 8})
    assert mesh.devices.shape == (2, 8)


def test_an_unknown_kind_names_the_known_ones():
    with pytest.raises(TargetError, match=r"'h900'.*known kinds: a100, a100_40gb, b200"):
        gpu_target("h900", 8)
    with pytest.raises(TargetError, match="known kinds"):
        gpu_target(None, 8)  # type: ignore[arg-type]


@pytest.mark.parametrize("count", [0, -2, 2.0, True, "4"])
def test_a_count_must_be_a_whole_number_of_gpus(count):
    with pytest.raises(TargetError, match=r"whole number of GPUs, 1 or more; got"):
        gpu_target("h100", count)


def test_hosts_must_divide_the_count():
    with pytest.raises(TargetError, match="whole number of hosts"):
        gpu_target("h100", 8, hosts=0)
    with pytest.raises(TargetError, match="cannot be spread evenly over 3 hosts"):
        gpu_target("h100", 8, hosts=3)


def test_without_the_plugin_the_error_says_what_to_install(monkeypatch):
    monkeypatch.setattr(gpu_targets, "cuda_plugin_installed", lambda: False)
    with pytest.raises(
        TargetError, match=r"pip install \"jax-cuda12-plugin==.*\" \"jax-cuda12-pjrt=="
    ):
        gpu_target("a100", 3)


def test_the_gpus_figures_are_their_target_descriptions():
    for kind in gpu_kinds():
        text = gpu_target_config(kind)
        chip = chips.chip("cuda", kind)
        assert chip is not None

        def field(name, text=text):
            return float(re.search(rf"\n  {name}: ([0-9.]+)", text).group(1))

        assert chip.hbm_bytes == field("device_memory_size")
        assert chip.clock_hz == pytest.approx(field("clock_rate_ghz") * 1e9)
        assert chip.hbm_bandwidth == pytest.approx(field("memory_bandwidth"))
        assert re.search(rf'device_description_str: "{re.escape(chip.kinds[0])}"', text)
    assert chips.chip("cuda", "h100").peak_flops == pytest.approx(989e12, rel=0.01)
    assert chips.chip("tpu", "v5e").platform == "tpu" and chips.chip("cuda", "v5e") is None
