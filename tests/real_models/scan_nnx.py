"""A flax ``nnx`` MLP of 8 identical residual blocks, created by ``nnx.vmap`` (their
weights stacked on a leading axis) and applied by ``nnx.scan``, with its train step
(mean squared error, optax adam, ``nnx.jit``): the "scan over layers" a user writes to
compile one block instead of eight.

``make_unrolled()`` gives the same model written the plain way, the 8 blocks in a
Python loop, with the same weights as ``make()``'s (the same initial loss, the same
arithmetic): the scan's cost, counted over its 8 iterations, is the unrolled
program's.

>>> model = ScannedMLP(WIDTH, DEPTH, rngs=nnx.Rngs(0))
>>> model.blocks.linear.kernel.shape
(8, 64, 64)
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx

from .program import Program

BATCH = 32
WIDTH = 64
DEPTH = 8


class Block(nnx.Module):
    """A residual block: layer norm, dense, gelu."""

    def __init__(self, width: int, *, rngs: nnx.Rngs):
        self.norm = nnx.LayerNorm(width, rngs=rngs)
        self.linear = nnx.Linear(width, width, rngs=rngs)

    def __call__(self, x):
        return x + nnx.gelu(self.linear(self.norm(x)))


class ScannedMLP(nnx.Module):
    """``depth`` blocks made at once by ``nnx.vmap`` and run one after the other by
    ``nnx.scan``, then a linear head."""

    def __init__(self, width: int, depth: int, *, rngs: nnx.Rngs):
        @nnx.split_rngs(splits=depth)
        @nnx.vmap(in_axes=(0,), out_axes=0)
        def create_block(rngs: nnx.Rngs):
            return Block(width, rngs=rngs)

        self.blocks = create_block(rngs)
        self.head = nnx.Linear(width, 1, rngs=rngs)

    def __call__(self, x):
        @nnx.scan(in_axes=(nnx.Carry, 0), out_axes=nnx.Carry)
        def forward(x, block: Block):
            return block(x)

        return self.head(forward(x, self.blocks))


class UnrolledMLP(nnx.Module):
    """The same blocks in a Python loop."""

    def __init__(self, width: int, depth: int, *, rngs: nnx.Rngs):
        self.blocks = nnx.List([Block(width, rngs=rngs) for _ in range(depth)])
        self.head = nnx.Linear(width, 1, rngs=rngs)

    def __call__(self, x):
        for block in self.blocks:
            x = block(x)
        return self.head(x)


def loss_fn(model, x, y):
    return jnp.mean((model(x) - y) ** 2)


@nnx.jit
def train_step(model, optimizer: nnx.Optimizer, x, y):
    loss, grads = nnx.value_and_grad(loss_fn)(model, x, y)
    optimizer.update(model, grads)
    return loss


def data(seed: int = 1):
    """A batch of inputs and regression targets."""
    kx, ky = jax.random.split(jax.random.key(seed))
    return (
        jax.random.normal(kx, (BATCH, WIDTH), jnp.float32),
        jax.random.normal(ky, (BATCH, 1), jnp.float32),
    )


def unrolled_from(scanned: ScannedMLP) -> UnrolledMLP:
    """An :class:`UnrolledMLP` holding ``scanned``'s weights: block ``i`` takes slice
    ``i`` of each stacked parameter."""
    model = UnrolledMLP(WIDTH, DEPTH, rngs=nnx.Rngs(0))
    stacked = nnx.state(scanned.blocks, nnx.Param)
    for i, block in enumerate(model.blocks):
        nnx.update(block, jax.tree.map(lambda leaf, i=i: leaf[i], stacked))
    nnx.update(model.head, nnx.state(scanned.head, nnx.Param))
    return model


def _program(name: str, model, notes: str) -> Program:
    optimizer = nnx.Optimizer(model, optax.adam(1e-3), wrt=nnx.Param)
    x, y = data()
    return Program(name, train_step, (model, optimizer, x, y), {}, __file__, notes)


def make() -> Program:
    """The train step of the scanned MLP."""
    model = ScannedMLP(WIDTH, DEPTH, rngs=nnx.Rngs(0))
    return _program(
        "scan_nnx",
        model,
        f"flax nnx: nnx.scan over {DEPTH} MLP blocks of width {WIDTH}, batch {BATCH}; adam",
    )


def make_unrolled() -> Program:
    """The train step of the same MLP, same weights, its blocks in a Python loop."""
    model = unrolled_from(ScannedMLP(WIDTH, DEPTH, rngs=nnx.Rngs(0)))
    return _program(
        "scan_nnx_unrolled",
        model,
        f"flax nnx: the {DEPTH} MLP blocks of scan_nnx in a Python loop, same weights",
    )
