"""Targets: the devices of hardware this machine does not have, to compile for.

A :class:`Target` holds compile-only devices that JAX describes without the
hardware: a TPU slice from libtpu (``'v5e:4x4'``, with ``num_slices`` for a
multi-slice job), or GPUs from XLA's target descriptions (``'h100:8'``, see
:mod:`olympus.gpu_targets`). A program whose arguments are placed on a mesh of them
(:func:`olympus.placement.place`) traces, lowers and compiles for that hardware on
this machine: its HLO, ``memory_analysis()``, ``cost_analysis()`` and XLA's
dumps are the TPU compiler's. Nothing runs: the devices have no memory.

Names are libtpu's: ``'<generation>:<AxB[xC]>'`` with a generation of
:func:`olympus.chips.tpu_generations` (``v2`` ... ``v6e``, ``tpu7x``) and an
optional ``_twisted``. The descriptions come from ``jax.experimental.topologies``
and need libtpu (``pip install "jax[tpu]"``); each is made once per process.

libtpu takes a lock file that a second process loading it fails on, and prints
warnings when it finds no TPU. For Olympus's own load (on a machine whose JAX
does not run on TPU) the variables libtpu reads then are set for the call alone,
each only if the user has not set it, and put back after: the user's
environment is left as it was.

>>> t = target("v5e:2x2")  # doctest: +SKIP
>>> t.describe()  # doctest: +SKIP
'TPU v5e (TPU v5 lite), 4 chips, compiled here without one'
>>> parse_target("v5e-16")
Traceback (most recent call last):
olympus.target_devices.TargetError: target 'v5e-16' is not a target name; name a TPU slice as libtpu does, '<generation>:<topology>' such as 'v5e:4x4' or 'v5p:2x2x2' (generations: v2, v3, v4, v5e, v5p, v6e, tpu7x), or GPUs as '<kind>:<count>' such as 'h100:8' (kinds: a100, a100_40gb, b200, gb200, h100, h100_pcie, h200).
"""

from __future__ import annotations

import contextlib
import functools
import importlib.util
import os
import re
from collections.abc import Iterator

import jax

from olympus import chips as _chips
from olympus import gpu_targets as _gpu_targets
from olympus.target_devices import Target, TargetError, first_line

__all__ = [
    "COMMON_TARGETS",
    "Target",
    "TargetError",
    "parse_target",
    "target",
    "libtpu_installed",
]

#: Targets users train on, offered by the Inspector's choice (any name is taken).
COMMON_TARGETS = (
    "v5e:2x2",
    "v5e:4x4",
    "v5e:8x8",
    "v5p:2x2x2",
    "v5p:4x4x4",
    "v6e:2x2",
    "v6e:4x4",
    "h100:8",
    "h200:8",
    "a100:8",
    "b200:8",
)


_NAME = re.compile(r"^(?P<gen>[a-z0-9]+):(?P<shape>[0-9]+(?:x[0-9]+){1,2})(?P<twist>_twisted)?$")
_GPU_NAME = re.compile(r"^(?P<kind>[a-z0-9_]+):(?:(?P<hosts>[0-9]+)x)?(?P<count>[0-9]+)$")


def parse_target(name: str) -> tuple[str, str, str]:
    """``(platform, generation or GPU kind, canonical name)`` of a target name, or
    a :class:`TargetError` saying what a name looks like. TPU slices are named as
    libtpu names them (``'v5e:4x4'``); GPUs by kind and count (``'h100:8'``, or
    ``'h100:2x8'`` for two hosts of eight, see :mod:`olympus.gpu_targets`).

    >>> parse_target(" V5E:4x4 "), parse_target("H100:8")
    (('tpu', 'v5e', 'v5e:4x4'), ('cuda', 'h100', 'h100:8'))
    """
    if not isinstance(name, str):
        raise TargetError(
            f"target must be a name such as 'v5e:4x4' (a str); got {name!r} "
            f"({type(name).__name__})."
        )
    text = name.strip().lower()
    gpu_kinds = _gpu_targets.gpu_kinds()
    gpu = _GPU_NAME.match(text)
    if gpu is not None and gpu["kind"] in gpu_kinds:
        return "cuda", gpu["kind"], text
    match = _NAME.match(text)
    generations = _chips.tpu_generations()
    if match is None or match["gen"] not in generations:
        why = (
            f": {match['gen']!r} is not a TPU generation libtpu describes"
            if match is not None
            else " is not a target name"
        )
        raise TargetError(
            f"target {name!r}{why}; name a TPU slice as libtpu does, "
            f"'<generation>:<topology>' such as 'v5e:4x4' or 'v5p:2x2x2' "
            f"(generations: {', '.join(generations)}), or GPUs as '<kind>:<count>' "
            f"such as 'h100:8' (kinds: {', '.join(gpu_kinds)})."
        )
    return "tpu", match["gen"], text


def libtpu_installed() -> bool:
    """Whether libtpu (``pip install "jax[tpu]"``) is installed here.

    >>> isinstance(libtpu_installed(), bool)
    True
    """
    return importlib.util.find_spec("libtpu") is not None


def target(name: str | Target, *, num_slices: int = 1) -> Target:
    """The :class:`Target` of a name (``'v5e:4x4'``); a Target is returned as it is.

    Raises :class:`TargetError` for a name that is not one, a topology libtpu
    refuses (with its reason), or libtpu missing (with the command to install it).
    """
    if isinstance(name, Target):
        return name
    platform, generation, canonical = parse_target(name)
    if isinstance(num_slices, bool) or not isinstance(num_slices, int) or num_slices < 1:
        raise TargetError(
            f"num_slices must be a whole number of slices, 1 or more; got {num_slices!r}."
        )
    if platform == "cuda":
        if num_slices != 1:
            raise TargetError(
                f"num_slices is for TPU slices; for GPUs on several hosts name them "
                f"'<kind>:<hosts>x<per host>', e.g. '{generation}:2x8'."
            )
        match = _GPU_NAME.match(canonical)
        assert match is not None  # parse_target matched it
        hosts = int(match["hosts"] or 1)
        return _gpu_targets.gpu_target(generation, hosts * int(match["count"]), hosts=hosts)
    return _tpu_target(canonical, generation, num_slices)


@functools.lru_cache(maxsize=32)
def _tpu_target(name: str, generation: str, num_slices: int) -> Target:
    """One description per name in a process: JAX keys compiled programs on the
    devices, which must then be the same objects."""
    if not libtpu_installed():
        raise TargetError(
            f"target {name!r} needs libtpu to describe TPU devices: "
            f'pip install "jax[tpu]=={jax.__version__}" (it compiles for TPU on this '
            f"machine; no TPU is needed)."
        )
    from jax.experimental import topologies

    try:
        with _libtpu_environment(generation):
            topology = topologies.get_topology_desc(
                platform="tpu", topology_name=name, num_slices=num_slices
            )
    except Exception as e:  # noqa: BLE001 - libtpu's refusal, with its reason
        raise TargetError(f"libtpu cannot describe target {name!r}: {first_line(e)}") from None
    devices = tuple(topology.devices)
    return Target(
        name=name,
        platform="tpu",
        num_slices=num_slices,
        devices=devices,
        topology=topology,
        chip=_chips.chip("tpu", generation)
        or _chips.chip_of("tpu", str(getattr(devices[0], "device_kind", ""))),
    )


@contextlib.contextmanager
def _libtpu_environment(generation: str) -> Iterator[None]:
    """What libtpu reads when it loads, set for the load alone where unset: it
    then loads beside another process using it (``ALLOW_MULTIPLE_LIBTPU_LOAD``)
    without looking for TPU hosts this machine does not have."""
    if jax.default_backend() == "tpu":  # a real TPU host: libtpu is loaded, as set up
        yield
        return
    wanted = {
        "ALLOW_MULTIPLE_LIBTPU_LOAD": "1",
        "TPU_ACCELERATOR_TYPE": f"{'v5litepod' if generation == 'v5e' else generation}-8",
        "TPU_WORKER_HOSTNAMES": "localhost",
        "TPU_SKIP_MDS_QUERY": "1",
    }
    added = [k for k in wanted if k not in os.environ]
    for k in added:
        os.environ[k] = wanted[k]
    try:
        yield
    finally:
        for k in added:
            os.environ.pop(k, None)
