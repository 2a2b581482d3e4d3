"""Platforms a program is lowered for, and the one this process would run it on.

Platform names are JAX's: the built-in ``'cpu'``, ``'cuda'``, ``'rocm'`` and
``'tpu'``, and the name of any PJRT plugin, installed here or not (a program can
be lowered for a platform this machine lacks). :func:`normalize_platforms`
accepts every name JAX accepts.

JAX compiles a lowering for the local device whatever platforms it was lowered
for, which silently runs a TPU program's branches on the CPU. Olympus checks
first: :func:`check_compilable` refuses a lowering that does not include the
local platform, naming both.

>>> normalize_platforms(('CPU', 'tpu'))
('cpu', 'tpu')
>>> normalize_platforms('my_plugin')  # a PJRT plugin's name
('my_plugin',)
"""

from __future__ import annotations

from collections.abc import Sequence

import jax
from olympus import jax_compat

#: JAX's built-in platforms. Plugins add others: see :func:`known_platforms`.
KNOWN_PLATFORMS = ("cpu", "cuda", "rocm", "tpu")


class PlatformError(ValueError):
    """A lowering or compilation asked for a platform it cannot have."""


class PlatformTypeError(PlatformError, TypeError):
    """Platforms given as something other than names (strings).

    A ``TypeError``, as JAX raises for them, and a :class:`PlatformError`.
    """


class PlatformUnavailableError(PlatformError, RuntimeError):
    """An alias such as ``'gpu'`` named on a machine that has none of its platforms.

    A ``RuntimeError``, as JAX raises for it, and a :class:`PlatformError`.
    """


def local_platform() -> str:
    """The platform this process compiles for by default, spelled as in lowerings.

    ``'cpu'``, ``'cuda'``, ``'rocm'``, ``'tpu'`` or a plugin's name (``'gpu'`` is
    resolved to ``'cuda'`` or ``'rocm'``).

    >>> import olympus
    >>> local_platform() == olympus.export.default_export_platform()
    True
    """
    return jax_compat.canonicalize_platform(jax.default_backend())


def known_platforms() -> tuple[str, ...]:
    """The platform names JAX knows in this process, in alphabetical order.

    The built-in platforms, aliases (``'gpu'``) and the plugins registered here.
    Other names are accepted too: a plugin need not be installed to lower for it.

    >>> set(KNOWN_PLATFORMS) <= set(known_platforms())
    True
    """
    return tuple(sorted(set(KNOWN_PLATFORMS) | set(jax_compat.known_platforms()), key=str.lower))


def normalize_platforms(
    platforms: Sequence[str] | str | None, *, argument: str = "lowering_platforms"
) -> tuple[str, ...] | None:
    """Checks user-given lowering platforms and spells them as JAX does.

    Every name JAX accepts is accepted, the names of plugins that are not
    installed included, and a name may be listed twice, as in JAX. Spaces around
    a name are dropped; a name JAX knows, in another case, is spelled JAX's way
    (``'CPU'`` -> ``'cpu'``); an alias is resolved (``'gpu'`` -> ``'cuda'`` or
    ``'rocm'``, whichever this machine has); other names are kept. ``None`` and
    an empty sequence mean this machine's platform (returned as ``None``), a
    single string means that one platform. ``argument`` is the parameter name
    used in messages.

    Raises :class:`PlatformTypeError` (a ``TypeError``) for entries that are not
    strings and :class:`PlatformUnavailableError` (a ``RuntimeError``) for an
    alias this machine cannot resolve, as JAX does.

    >>> normalize_platforms(['tpu', ' Cuda ']), normalize_platforms(())
    (('tpu', 'cuda'), None)
    >>> normalize_platforms(('cpu', 3))
    Traceback (most recent call last):
    olympus.platforms.PlatformTypeError: lowering_platforms entries must be strings, platform names such as 'cpu' or 'tpu'; got 3 (int).
    """
    if platforms is None:
        return None
    if isinstance(platforms, str):
        platforms = (platforms,)
    try:
        items = tuple(platforms)
    except TypeError:
        raise PlatformTypeError(
            f"{argument} must be a tuple of platform names such as ('cpu', 'tpu'), "
            f"got {platforms!r}."
        ) from None
    if not items:
        return None  # as in JAX: this machine's platform
    spellings = {known.lower(): known for known in known_platforms()}
    return tuple(_normalize_one(p, argument, spellings) for p in items)


def _normalize_one(platform, argument: str, spellings: dict[str, str]) -> str:
    """One platform name, spelled as JAX spells it (``spellings``: lower-cased known
    name -> JAX's spelling); see :func:`normalize_platforms`."""
    if not isinstance(platform, str):
        raise PlatformTypeError(
            f"{argument} entries must be strings, platform names such as 'cpu' or "
            f"'tpu'; got {platform!r} ({type(platform).__name__})."
        )
    name = platform.strip()
    if name not in spellings.values():
        name = spellings.get(name.lower(), name)
    try:
        return jax_compat.canonicalize_platform(name)
    except RuntimeError as e:
        raise PlatformUnavailableError(
            f"{argument} names {platform!r}, an alias for this machine's platform of "
            f"that kind ('gpu': 'cuda' or 'rocm'), and this machine has none ({e}). "
            f"Name the platform itself, e.g. {argument}=('cuda',): a program can be "
            f"lowered for a platform this machine lacks."
        ) from None


def unknown_platforms(platforms: Sequence[str] | None) -> tuple[str, ...]:
    """The names in ``platforms`` that no platform known in this process has (see
    :func:`known_platforms`): plugins not installed here, or typos.

    >>> unknown_platforms(('cpu', 'tpux'))
    ('tpux',)
    """
    known = known_platforms()
    return tuple(p for p in platforms or () if p not in known)


def unknown_platforms_note(platforms: Sequence[str] | None) -> str | None:
    """A note for an error about a lowering for ``platforms``, naming those not
    known in this process (see :func:`known_platforms`): a plugin not installed
    here, or a typo.

    >>> unknown_platforms_note(('cpu', 'tpux'))  # doctest: +ELLIPSIS
    "Olympus: no platform named 'tpux' is known in this process (known: 'cpu', ...). ..."
    >>> unknown_platforms_note(('cpu',)) is None
    True
    """
    unknown = unknown_platforms(platforms)
    if not unknown:
        return None
    return (
        f"Olympus: no platform named {' or '.join(map(repr, unknown))} is known in "
        f"this process (known: {', '.join(map(repr, known_platforms()))}). That is expected for "
        f"a plugin that is not installed here; otherwise check the spelling."
    )


def check_compilable(
    lowered_for: tuple[str, ...], fun_name: str, placed_on: str | None = None
) -> str:
    """Returns the platform the lowering compiles for: the local platform, or
    ``placed_on``, the platform of the devices its arguments are placed on where
    it was lowered for those alone (compile-only devices of a target, see
    :mod:`olympus.hardware`, whose compiler is at hand). Raises if neither.

    >>> here = local_platform()
    >>> check_compilable((here, 'my_plugin'), 'f') == here
    True
    >>> check_compilable(('my_plugin',), 'f')  # doctest: +ELLIPSIS
    Traceback (most recent call last):
    olympus.platforms.PlatformError: Cannot compile 'f' here: it was lowered for 'my_plugin', but this process would run it on ...
    """
    here = local_platform()
    if placed_on is not None and placed_on != here and tuple(lowered_for) == (placed_on,):
        return placed_on
    if here not in lowered_for:
        raise PlatformError(
            f"Cannot compile '{fun_name}' here: it was lowered for "
            f"{_describe(lowered_for)}, but this process would run it on {here!r}. "
            f"Compile it on a machine with {_describe(lowered_for)} devices, "
            f"lower it again with lowering_platforms=({here!r},), or export it with "
            f"olympus.export.export(..., platforms={lowered_for!r}) to serialize it "
            f"for those platforms."
        )
    return here


def _describe(platforms: tuple[str, ...]) -> str:
    return " and ".join(repr(p) for p in platforms)
