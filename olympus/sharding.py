"""``olympus.sharding`` is ``jax.sharding``, under Olympus's name."""

from jax.sharding import *  # noqa: F403
from olympus._alias import forward as _forward

__getattr__, __dir__ = _forward("jax.sharding")
