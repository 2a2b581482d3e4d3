"""``olympus.lax`` is ``jax.lax``, under Olympus's name."""

from jax.lax import *  # noqa: F403
from olympus._alias import forward as _forward

__getattr__, __dir__ = _forward("jax.lax")
