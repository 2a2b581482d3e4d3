"""What Olympus knows of the accelerators it compiles for without having them.

Compile-only devices (a TPU slice described by libtpu, a GPU by its target
description) report no memory size and no clock: ``device.memory_stats()`` is
refused. The figures a report needs to say whether a program fits, and how long
the compiler expects it to take, come from this table, one :class:`Chip` a
generation, from the makers' published specifications (per chip; a chip that
JAX shows as two devices has ``devices_per_chip=2`` and half its memory per
device).

>>> chip_of("tpu", "TPU v5 lite").name, chip_of("tpu", "TPU v5 lite").hbm_bytes // 2**30
('v5e', 16)
>>> chip_of("tpu", "TPU v9") is None
True
>>> chip("cuda", "h100").hbm_bytes // 2**30, chip_of("cuda", "NVIDIA H100 80GB HBM3").name
(79, 'h100')
"""

from __future__ import annotations

import dataclasses

__all__ = ["Chip", "TPU_CHIPS", "GPU_CHIPS", "chip", "chip_of", "tpu_generations"]

GiB = 2**30


@dataclasses.dataclass(frozen=True)
class Chip:
    """One accelerator generation: its names, its memory and its speed.

    ``name`` is the name Olympus takes in a target (``'v5e'``); ``kinds`` the
    ``device_kind`` strings JAX gives its devices (``'TPU v5 lite'``); ``title``
    its name in reports. Figures are per *chip*: ``hbm_bytes`` its memory,
    ``clock_hz`` its core clock (the compiler's cycle estimates become seconds
    with it), ``peak_flops`` its dense bf16 FLOP/s and ``hbm_bandwidth`` its
    memory bandwidth in bytes/s; ``None`` where the maker publishes no figure.
    Where JAX shows a chip as several devices (v2, v3, v4 and TPU7x in libtpu's
    descriptions: one a core), each has its share (:meth:`per_device`).
    """

    platform: str
    name: str
    kinds: tuple[str, ...]
    title: str
    hbm_bytes: int
    clock_hz: float | None = None
    peak_flops: float | None = None
    hbm_bandwidth: float | None = None

    def per_device(self, devices_per_chip: int) -> dict[str, float | None]:
        """The chip's figures shared among ``devices_per_chip`` devices (the clock
        is each core's).

        >>> chip("tpu", "v4").per_device(2)["hbm_bytes"] / GiB
        16.0
        """
        n = max(1, devices_per_chip)
        share = {
            "hbm_bytes": self.hbm_bytes / n,
            "peak_flops": self.peak_flops / n if self.peak_flops else None,
            "hbm_bandwidth": self.hbm_bandwidth / n if self.hbm_bandwidth else None,
        }
        return {**share, "clock_hz": self.clock_hz}


#: The TPU generations libtpu describes (``topology_name`` ``'<name>:<AxB[xC]>'``),
#: figures per chip from Google Cloud's TPU documentation (system architecture pages).
TPU_CHIPS: tuple[Chip, ...] = (
    Chip("tpu", "v2", ("TPU v2",), "TPU v2", 16 * GiB, 0.7e9, 45e12, 700e9),
    Chip("tpu", "v3", ("TPU v3",), "TPU v3", 32 * GiB, 0.94e9, 123e12, 900e9),
    Chip("tpu", "v4", ("TPU v4",), "TPU v4", 32 * GiB, 1.05e9, 275e12, 1228e9),
    Chip("tpu", "v5e", ("TPU v5 lite",), "TPU v5e", 16 * GiB, 1.5e9, 197e12, 819e9),
    Chip("tpu", "v5p", ("TPU v5",), "TPU v5p", 95 * GiB, 1.75e9, 459e12, 2765e9),
    Chip("tpu", "v6e", ("TPU v6 lite",), "TPU v6e", 32 * GiB, None, 918e12, 1640e9),
    Chip("tpu", "tpu7x", ("TPU7x",), "TPU7x", 192 * GiB, None, 2307e12, 7380e9),
)


def _tensor_flops(clock_ghz: float, ops_per_clock: int, cores: int) -> float:
    """Dense FLOP/s of a GPU's tensor cores as its target description gives them
    (``matrix_unit_description``: a rate per element type): ``cores`` SMs of 4
    tensor cores, each ``ops_per_clock`` multiply-adds (2 flops) a cycle at
    ``clock_ghz``. For the H100 SXM's bf16, 989 TFLOP/s: NVIDIA's figure."""
    return 2 * clock_ghz * 1e9 * 4 * ops_per_clock * cores


#: The GPUs a CUDA target names (:func:`olympus.gpu_targets.gpu_kinds`), per GPU.
#: Memory, clock and bandwidth are those of the target descriptions the compiler
#: reads (``olympus/gpu_specs/``: ``device_memory_size``, ``clock_rate_ghz``,
#: ``memory_bandwidth``), so the report's figures are the compiler's; the dense
#: bf16 FLOP/s are the description's tensor-core rate for bf16 where it has one
#: (:func:`_tensor_flops`, within 1-4% of NVIDIA's datasheets: H100 SXM 989T, PCIe
#: 756T, B200 2.25P, GB200 2.5P), NVIDIA's A100 datasheet (312T) otherwise.
GPU_CHIPS: tuple[Chip, ...] = (
    Chip(
        "cuda",
        "a100",
        ("NVIDIA A100-SXM4-80GB",),
        "NVIDIA A100 SXM4 80GB",
        85100068864,
        1.41e9,
        312e12,
        2039.04e9,
    ),
    Chip(
        "cuda",
        "a100_40gb",
        ("NVIDIA A100-SXM4-40GB",),
        "NVIDIA A100 SXM4 40GB",
        42331013120,
        1.41e9,
        312e12,
        1555.2e9,
    ),
    Chip(
        "cuda",
        "b200",
        ("NVIDIA B200",),
        "NVIDIA B200",
        191514411008,
        1.965e9,
        _tensor_flops(1.8353101, 1024, 148),
        7672.32e9,
    ),
    Chip(
        "cuda",
        "gb200",
        ("NVIDIA GB200",),
        "NVIDIA GB200",
        197897748480,
        2.062e9,
        _tensor_flops(1.9259081, 1024, 152),
        7928.064e9,
    ),
    Chip(
        "cuda",
        "h100",
        ("NVIDIA H100 80GB HBM3",),
        "NVIDIA H100 SXM 80GB",
        84942979072,
        1.98e9,
        _tensor_flops(1.8295201, 512, 132),
        3352.32e9,
    ),
    Chip(
        "cuda",
        "h100_pcie",
        ("NVIDIA H100 PCIe",),
        "NVIDIA H100 PCIe",
        84942979072,
        1.755e9,
        _tensor_flops(1.62162, 512, 114),
        2039.04e9,
    ),
    Chip(
        "cuda",
        "h200",
        ("NVIDIA H200 141GB HBM3e",),
        "NVIDIA H200 SXM 141GB",
        151397597184,
        1.98e9,
        _tensor_flops(1.8295201, 512, 132),
        4800e9,
    ),
)

_ALL_CHIPS = TPU_CHIPS + GPU_CHIPS


def tpu_generations() -> tuple[str, ...]:
    """The TPU generations a target may name, oldest first.

    >>> tpu_generations()[:3]
    ('v2', 'v3', 'v4')
    """
    return tuple(c.name for c in TPU_CHIPS)


def chip(platform: str, name: str) -> Chip | None:
    """The chip Olympus knows by this target name (``'v5e'`` on ``'tpu'``,
    ``'h100'`` on ``'cuda'``), or None."""
    return next((c for c in _ALL_CHIPS if c.platform == platform and c.name == name), None)


def chip_of(platform: str, device_kind: str) -> Chip | None:
    """The chip whose devices JAX calls ``device_kind``, or None if Olympus has no
    figures for it. GPUs are found on ``'cuda'`` or on ``'gpu'`` (what the
    devices' own ``platform`` says)."""
    platform = "cuda" if platform == "gpu" else platform
    return next((c for c in _ALL_CHIPS if c.platform == platform and device_kind in c.kinds), None)
