"""Forwarding for modules Olympus takes from JAX unchanged (``olympus.lax`` is ``jax.lax``).

>>> getattr_, dir_ = forward("jax.lax")
>>> getattr_("add").__name__
'add'
"""

import importlib


def forward(module_name: str):
    """Module-level ``__getattr__`` and ``__dir__`` that forward to ``module_name``."""
    target = importlib.import_module(module_name)

    def __getattr__(name):
        return getattr(target, name)

    def __dir__():
        return sorted(dir(target))

    return __getattr__, __dir__
