"""``olympus.tree_util`` is ``jax.tree_util``, under Olympus's name."""

from jax.tree_util import *  # noqa: F403
from olympus._alias import forward as _forward

__getattr__, __dir__ = _forward("jax.tree_util")
