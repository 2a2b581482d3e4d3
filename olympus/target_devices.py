"""A target's compile-only devices and what Olympus knows of them (the data that
:mod:`olympus.hardware` and :mod:`olympus.gpu_targets` make; both import it).

>>> issubclass(TargetError, ValueError)
True
"""

from __future__ import annotations

import dataclasses
import math
from collections.abc import Mapping
from typing import Any

import jax

from olympus import chips as _chips

__all__ = ["Target", "TargetError", "first_line"]


class TargetError(ValueError):
    """A target that cannot be had: a name that is not one, or what it needs missing."""


@dataclasses.dataclass(frozen=True)
class Target:
    """Compile-only devices of a hardware target, and what Olympus knows of them.

    ``name`` is the canonical name (``'v5e:4x4'``), ``platform`` JAX's
    (``'tpu'``), ``devices`` the devices of every slice, ``topology`` JAX's
    description (for :func:`jax.experimental.topologies.make_mesh`), ``chip`` the
    figures of :mod:`olympus.chips` (None for a generation without them).
    """

    name: str
    platform: str
    num_slices: int
    devices: tuple[Any, ...] = dataclasses.field(repr=False)
    topology: Any = dataclasses.field(repr=False, compare=False)
    chip: _chips.Chip | None = None

    @property
    def device_kind(self) -> str:
        """JAX's name of the devices (``'TPU v5 lite'``)."""
        return self.devices[0].device_kind

    @property
    def devices_per_chip(self) -> int:
        """How many devices JAX shows a chip as (two cores on v2, v3, v4, TPU7x)."""
        cores = {getattr(d, "core_on_chip", 0) for d in self.devices}
        return max(1, len(cores))

    @property
    def chips(self) -> int:
        """The chips of all slices."""
        return len(self.devices) // self.devices_per_chip

    def per_device(self) -> dict[str, float | None]:
        """Memory, peak FLOP/s, bandwidth (each device's share) and clock, from
        :mod:`olympus.chips`; every figure None for a chip without them."""
        if self.chip is None:
            return dict.fromkeys(("hbm_bytes", "peak_flops", "hbm_bandwidth", "clock_hz"))
        return self.chip.per_device(self.devices_per_chip)

    def describe(self) -> str:
        """The target in words, as every report's header names it."""
        title = self.chip.title if self.chip is not None else self.device_kind
        kind = f" ({self.device_kind})" if self.device_kind != title else ""
        slices = f" in {self.num_slices} slices" if self.num_slices > 1 else ""
        unit = "GPUs" if self.platform in ("cuda", "rocm") else "chips"
        return f"{title}{kind}, {self.chips} {unit}{slices}, compiled here without one"

    def mesh(self, axes: Mapping[str, int] | None = None) -> jax.sharding.Mesh:
        """A mesh of the target's devices with these axes (name -> size, in
        order), laid onto the torus by JAX; one axis ``'devices'`` by default.

        A product of sizes other than the number of devices, or a shape the
        torus cannot take, is a :class:`TargetError` naming both.
        """
        from jax.experimental import topologies

        axes = dict(axes or {"devices": len(self.devices)})
        sizes = tuple(axes.values())
        total = math.prod(sizes)
        if total != len(self.devices):
            raise TargetError(
                f"mesh {_axes_text(axes)} has {total} devices; {self.name}"
                f"{'' if self.num_slices == 1 else f' in {self.num_slices} slices'} has "
                f"{len(self.devices)}. Give axis sizes whose product is {len(self.devices)}."
            )
        try:
            if self.num_slices > 1:
                return self._multi_slice_mesh(sizes, tuple(axes))
            return topologies.make_mesh(self.topology, sizes, tuple(axes))
        except Exception as e:  # noqa: BLE001 - JAX's refusal, explained
            raise TargetError(
                f"mesh {_axes_text(axes)} cannot be laid onto {self.name}'s devices: {e}"
            ) from None

    def _multi_slice_mesh(self, sizes: tuple[int, ...], names: tuple[str, ...]):
        """A mesh over several slices, as JAX lays one out for a multi-slice job
        (``mesh_utils.create_hybrid_device_mesh``): the first axis whose size the
        number of slices divides spans the slices (over the data-center network),
        every axis spans each slice's chips."""
        from jax.experimental import mesh_utils

        across = next((k for k, n in enumerate(sizes) if n % self.num_slices == 0), None)
        if across is None:
            raise TargetError(
                f"no mesh axis of {dict(zip(names, sizes))} spans the {self.num_slices} "
                f"slices: give one axis a size that {self.num_slices} divides."
            )
        dcn = [1] * len(sizes)
        dcn[across] = self.num_slices
        ici = [n // d for n, d in zip(sizes, dcn)]
        devices = mesh_utils.create_hybrid_device_mesh(ici, dcn, devices=list(self.devices))
        return jax.sharding.Mesh(devices, names)

    def as_json(self) -> dict[str, Any]:
        """What a report keeps of the target (plain data)."""
        return {
            "name": self.name,
            "platform": self.platform,
            "device_kind": self.device_kind,
            "title": self.describe(),
            "chip": self.chip.title if self.chip is not None else self.device_kind,
            "devices": len(self.devices),
            "chips": self.chips,
            "num_slices": self.num_slices,
            "compile_only": True,
            **self.per_device(),
        }


def _axes_text(axes: Mapping[str, int]) -> str:
    return ",".join(f"{k}={v}" for k, v in axes.items())


def first_line(e: BaseException) -> str:
    r"""The first line of an error's message (a compiler's refusal runs on), or its
    type's name where it has none.

    >>> first_line(ValueError("INVALID_ARGUMENT: no\nmore"))
    'INVALID_ARGUMENT: no'
    """
    text = str(e).strip()
    return text.splitlines()[0] if text else type(e).__name__
