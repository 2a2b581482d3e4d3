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
"""

from __future__ import annotations

import dataclasses

__all__ = ["Chip", "TPU_CHIPS", "chip", "chip_of", "tpu_generations"]

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


def tpu_generations() -> tuple[str, ...]:
    """The TPU generations a target may name, oldest first.

    >>> tpu_generations()[:3]
    ('v2', 'v3', 'v4')
    """
    return tuple(c.name for c in TPU_CHIPS)


def chip(platform: str, name: str) -> Chip | None:
    """The chip Olympus knows by this target name (``'v5e'``), or None."""
    return next((c for c in TPU_CHIPS if c.platform == platform and c.name == name), None)


def chip_of(platform: str, device_kind: str) -> Chip | None:
    """The chip whose devices JAX calls ``device_kind``, or None if Olympus has no
    figures for it."""
    return next((c for c in TPU_CHIPS if c.platform == platform and device_kind in c.kinds), None)
