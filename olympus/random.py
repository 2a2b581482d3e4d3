"""``olympus.random`` is ``jax.random``, under Olympus's name."""

from jax.random import *  # noqa: F403
from olympus._alias import forward as _forward

__getattr__, __dir__ = _forward("jax.random")
