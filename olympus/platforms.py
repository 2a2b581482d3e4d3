"""Platforms a program is lowered for, and the one this process would run it on.

JAX compiles a lowering for the local device whatever platforms it was lowered
for, which silently runs a TPU program's branches on the CPU. Olympus checks
first: :func:`check_compilable` refuses a lowering that does not include the
local platform, naming both.

>>> normalize_platforms(('CPU', 'tpu'))
('cpu', 'tpu')
"""
from __future__ import annotations

from collections.abc import Sequence

import jax
from jax._src import xla_bridge

KNOWN_PLATFORMS = ("cpu", "cuda", "rocm", "tpu")
_ALIASES = {"gpu": None}  # resolved to the local GPU flavour when there is one


class PlatformError(ValueError):
    """A lowering or compilation asked for a platform it cannot have."""


def local_platform() -> str:
    """The platform this process compiles for by default: 'cpu', 'cuda', 'rocm' or 'tpu'."""
    return xla_bridge.canonicalize_platform(jax.default_backend())


def normalize_platforms(platforms: Sequence[str] | str | None) -> tuple[str, ...] | None:
    """Validates user-given lowering platforms and returns them lower-cased.

    Raises :class:`PlatformError` naming the bad entry and the choices.
    """
    if platforms is None:
        return None
    if isinstance(platforms, str):
        platforms = (platforms,)
    try:
        items = tuple(platforms)
    except TypeError:
        raise PlatformError(
            f"lowering_platforms must be a tuple of platform names such as "
            f"('cpu', 'tpu'), got {platforms!r}.") from None
    if not items:
        raise PlatformError(
            "lowering_platforms is empty; name at least one of "
            f"{', '.join(KNOWN_PLATFORMS)}.")
    out = []
    for p in items:
        if not isinstance(p, str):
            raise PlatformError(
                f"lowering_platforms entries must be strings, got {p!r}.")
        name = p.strip().lower()
        if name == "gpu":
            name = xla_bridge.canonicalize_platform("gpu") if _has_gpu() else "cuda"
        if name not in KNOWN_PLATFORMS:
            raise PlatformError(
                f"Unknown lowering platform {p!r}. Choose among "
                f"{', '.join(KNOWN_PLATFORMS)}, e.g. lowering_platforms=('cpu', 'tpu').")
        if name in out:
            raise PlatformError(f"Platform {name!r} is listed twice in {items!r}.")
        out.append(name)
    return tuple(out)


def _has_gpu() -> bool:
    try:
        return bool(jax.devices("gpu"))
    except RuntimeError:
        return False


def check_compilable(lowered_for: tuple[str, ...], fun_name: str) -> str:
    """Returns the local platform, or raises if ``lowered_for`` does not include it."""
    here = local_platform()
    if here not in lowered_for:
        raise PlatformError(
            f"Cannot compile '{fun_name}' here: it was lowered for "
            f"{_describe(lowered_for)}, but this process would run it on {here!r}. "
            f"Compile it on a machine with {_describe(lowered_for)} devices, "
            f"lower it again with lowering_platforms=({here!r},), or export it with "
            f"olympus.export.export(..., platforms={lowered_for!r}) to serialize it "
            f"for those platforms.")
    return here


def _describe(platforms: tuple[str, ...]) -> str:
    return " and ".join(repr(p) for p in platforms)
