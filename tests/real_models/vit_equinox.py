"""An equinox vision transformer and its train step: patch embedding (a strided
convolution), a class token and learned positions, pre-norm attention blocks with
dropout, and an MLP head; cross-entropy loss, optax adamw, jitted with
``eqx.filter_jit``; as equinox users write it (the model works on one example and
is ``jax.vmap``-ed over the batch; the step takes the model, the optax optimizer and
its state, and returns the new model and state).

>>> model = ViT(key=jax.random.key(0))
>>> model(jnp.zeros(IMAGE), key=jax.random.key(1)).shape
(10,)
"""

from __future__ import annotations

import equinox as eqx
import jax
import jax.numpy as jnp
import optax

from .program import Program

BATCH = 16
IMAGE = (3, 32, 32)  # channels first, as equinox's convolutions take them
PATCH = 4
DIM = 64
HEADS = 4
DEPTH = 3
CLASSES = 10


class PatchEmbedding(eqx.Module):
    """Non-overlapping patches, each projected to ``dim`` features."""

    conv: eqx.nn.Conv2d

    def __init__(self, channels: int, dim: int, patch: int, *, key):
        self.conv = eqx.nn.Conv2d(channels, dim, kernel_size=patch, stride=patch, key=key)

    def __call__(self, image):
        x = self.conv(image)  # (dim, rows, columns)
        return x.reshape(x.shape[0], -1).T  # (patches, dim)


class Block(eqx.Module):
    """Pre-norm self-attention and MLP, each with a residual connection."""

    norm1: eqx.nn.LayerNorm
    attention: eqx.nn.MultiheadAttention
    norm2: eqx.nn.LayerNorm
    mlp_in: eqx.nn.Linear
    mlp_out: eqx.nn.Linear
    dropout: eqx.nn.Dropout

    def __init__(self, dim: int, heads: int, *, key, dropout: float = 0.1):
        k1, k2, k3 = jax.random.split(key, 3)
        self.norm1 = eqx.nn.LayerNorm(dim)
        self.attention = eqx.nn.MultiheadAttention(heads, dim, key=k1)
        self.norm2 = eqx.nn.LayerNorm(dim)
        self.mlp_in = eqx.nn.Linear(dim, 4 * dim, key=k2)
        self.mlp_out = eqx.nn.Linear(4 * dim, dim, key=k3)
        self.dropout = eqx.nn.Dropout(dropout)

    def __call__(self, x, *, key):
        k1, k2 = jax.random.split(key)
        h = jax.vmap(self.norm1)(x)
        x = x + self.dropout(self.attention(h, h, h), key=k1)
        h = jax.vmap(self.norm2)(x)
        h = jax.vmap(self.mlp_out)(jax.nn.gelu(jax.vmap(self.mlp_in)(h)))
        return x + self.dropout(h, key=k2)


class ViT(eqx.Module):
    embed: PatchEmbedding
    cls_token: jax.Array
    positions: jax.Array
    blocks: list[Block]
    norm: eqx.nn.LayerNorm
    head: eqx.nn.Linear

    def __init__(self, *, key):
        keys = jax.random.split(key, DEPTH + 4)
        patches = (IMAGE[1] // PATCH) * (IMAGE[2] // PATCH)
        self.embed = PatchEmbedding(IMAGE[0], DIM, PATCH, key=keys[0])
        self.cls_token = 0.02 * jax.random.normal(keys[1], (1, DIM))
        self.positions = 0.02 * jax.random.normal(keys[2], (patches + 1, DIM))
        self.blocks = [Block(DIM, HEADS, key=k) for k in keys[4:]]
        self.norm = eqx.nn.LayerNorm(DIM)
        self.head = eqx.nn.Linear(DIM, CLASSES, key=keys[3])

    def __call__(self, image, *, key):
        x = jnp.concatenate([self.cls_token, self.embed(image)]) + self.positions
        for block, k in zip(self.blocks, jax.random.split(key, len(self.blocks))):
            x = block(x, key=k)
        return self.head(self.norm(x[0]))


def loss_fn(model: ViT, images, labels, key):
    keys = jax.random.split(key, images.shape[0])
    logits = jax.vmap(model)(images, key=keys)
    return optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()


@eqx.filter_jit
def train_step(model: ViT, optim: optax.GradientTransformation, opt_state, images, labels, key):
    loss, grads = eqx.filter_value_and_grad(loss_fn)(model, images, labels, key)
    updates, opt_state = optim.update(grads, opt_state, eqx.filter(model, eqx.is_array))
    model = eqx.apply_updates(model, updates)
    return model, opt_state, loss


def make() -> Program:
    """The ``eqx.filter_jit`` train step, its model, optimizer and optimizer state, and
    a batch."""
    kmodel, kx, ky, kdrop = jax.random.split(jax.random.key(0), 4)
    model = ViT(key=kmodel)
    optim = optax.adamw(learning_rate=3e-4, weight_decay=1e-4)
    opt_state = optim.init(eqx.filter(model, eqx.is_array))
    images = jax.random.normal(kx, (BATCH, *IMAGE), jnp.float32)
    labels = jax.random.randint(ky, (BATCH,), 0, CLASSES)
    return Program(
        name="vit_equinox",
        fn=train_step,
        args=(model, optim, opt_state, images, labels, kdrop),
        kwargs={},
        user_file=__file__,
        notes=f"equinox ViT, {DEPTH} blocks of width {DIM}, batch {BATCH} of {IMAGE} images; "
        "eqx.filter_jit; adamw",
    )
