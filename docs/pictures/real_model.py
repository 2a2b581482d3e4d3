"""A small flax linen model and its optax train step: the program the pictures of
docs/report.md show (``make_real_model_picture.py`` reports it)."""

from __future__ import annotations

import flax.linen as nn
import jax
import jax.numpy as jnp
import optax  # type: ignore[import-untyped]


class Block(nn.Module):
    """A residual MLP block: two Dense layers and a layer norm."""

    width: int

    @nn.compact
    def __call__(self, x):
        h = nn.Dense(4 * self.width)(nn.LayerNorm()(x))
        h = nn.gelu(h)
        return x + nn.Dense(self.width)(h)


class Model(nn.Module):
    """An embedding, a few blocks, a head."""

    width: int = 64
    depth: int = 3
    classes: int = 10

    @nn.compact
    def __call__(self, x):
        x = nn.Dense(self.width)(x)
        for _ in range(self.depth):
            x = Block(self.width)(x)
        return nn.Dense(self.classes)(x)


model = Model()
optimizer = optax.adam(1e-3)


def loss_fn(params, x, y):
    logits = model.apply(params, x)
    return optax.softmax_cross_entropy_with_integer_labels(logits, y).mean()


def train_step(params, opt_state, x, y):
    loss, grads = jax.value_and_grad(loss_fn)(params, x, y)
    updates, opt_state = optimizer.update(grads, opt_state, params)
    params = optax.apply_updates(params, updates)
    return params, opt_state, loss


def example(batch: int = 32, features: int = 32):
    """The train step's arguments: parameters, optimizer state, a batch.

    >>> params, opt_state, x, y = example(batch=2)
    >>> x.shape, y.shape
    ((2, 32), (2,))
    """
    x = jnp.ones((batch, features), jnp.float32)
    y = jnp.zeros((batch,), jnp.int32)
    params = model.init(jax.random.key(0), x)
    return params, optimizer.init(params), x, y
