"""NumPy on accelerators: ``olympus.numpy`` is ``jax.numpy``.

>>> import olympus.numpy as jnp
>>> jnp.arange(3) * 2
Array([0, 2, 4], dtype=int32)
"""

from jax.numpy import *  # noqa: F403
from jax.numpy import fft, linalg  # noqa: F401
from olympus._alias import forward as _forward

__getattr__, __dir__ = _forward("jax.numpy")
