"""A corpus of real programs, written with flax (``nnx`` and linen), equinox and
optax as their users write them: the train steps of issue 33.

Each module defines a model and its train step and has ``make()``, which returns a
:class:`~real_models.program.Program`: the jitted step (``fn``), concrete arguments
of modest size (``args``, ``kwargs``: compiling takes seconds on a CPU), the file
the user wrote (``user_file``) and ``notes``.

- :mod:`.cnn_nnx`: a flax ``nnx`` CNN (Conv, BatchNorm, Dropout, Linear) trained by
  SGD with momentum, jitted by ``nnx.jit`` (``make_jax()``: the same step under
  ``jax.jit`` through ``nnx.split``/``nnx.merge``).
- :mod:`.scan_nnx`: 8 identical MLP blocks created by ``nnx.vmap`` and applied by
  ``nnx.scan`` (``make_unrolled()``: the same 8 blocks, with the same weights, in a
  Python loop).
- :mod:`.transformer_linen`: a flax linen decoder-only transformer LM trained with
  adamw, sharded fsdp 4 x tensor 2 over 8 devices by logical axis rules, its
  blocks rematerialized (needs 8 devices: see ``tests/eight_devices.py``).
- :mod:`.vit_equinox`: an equinox ViT trained with adamw, jitted by
  ``eqx.filter_jit``.
- :mod:`.decoder_nnx`: a flax ``nnx`` decoder-only transformer LM, split into its
  graph and parameters and trained by a plain ``jax.jit`` step, fully sharded
  (fsdp) over 8 devices by ``jax.sharding``, its blocks rematerialized
  (``nnx.remat``), its gradients accumulated over 4 micro-batches by
  ``optax.MultiSteps(optax.adamw(...))``, the parameters and optimizer state
  donated (needs 8 devices).

``SINGLE_DEVICE`` names the ``make`` functions that run in any process;
``EIGHT_DEVICES`` those of the sharded programs, which need 8 devices.

>>> sorted(EIGHT_DEVICES)
['decoder_nnx', 'transformer_linen']

>>> sorted(SINGLE_DEVICE)
['cnn_nnx', 'cnn_nnx_jax', 'scan_nnx', 'scan_nnx_unrolled', 'vit_equinox']
"""

from __future__ import annotations

import importlib
from collections.abc import Callable

from .program import Program

__all__ = ["Program", "SINGLE_DEVICE", "EIGHT_DEVICES", "make"]

#: Program name -> (module, its function that makes it), for the programs that run on
#: one device.
SINGLE_DEVICE: dict[str, tuple[str, str]] = {
    "cnn_nnx": ("cnn_nnx", "make"),
    "cnn_nnx_jax": ("cnn_nnx", "make_jax"),
    "scan_nnx": ("scan_nnx", "make"),
    "scan_nnx_unrolled": ("scan_nnx", "make_unrolled"),
    "vit_equinox": ("vit_equinox", "make"),
}

#: The same, for the sharded programs, which need 8 devices.
EIGHT_DEVICES: dict[str, tuple[str, str]] = {
    "transformer_linen": ("transformer_linen", "make"),
    "decoder_nnx": ("decoder_nnx", "make"),
}


def make(name: str) -> Program:
    """The program ``name`` (a key of :data:`SINGLE_DEVICE`, or of
    :data:`EIGHT_DEVICES`: those need 8 devices), made afresh."""
    table = {**SINGLE_DEVICE, **EIGHT_DEVICES}
    if name not in table:
        raise KeyError(f"no real-model program {name!r}; there are: {', '.join(sorted(table))}")
    module, function = table[name]
    maker: Callable[[], Program] = getattr(
        importlib.import_module(f".{module}", __name__), function
    )
    return maker()
