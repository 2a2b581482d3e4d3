"""A flax ``nnx`` CNN train step: Conv, BatchNorm, Dropout and Linear layers,
cross-entropy loss, SGD with momentum through ``nnx.Optimizer`` and optax, jitted
with ``nnx.jit``; as the flax ``nnx`` tutorials teach a user to write one.

``make()`` gives the ``nnx.jit`` step, called as ``train_step(model, optimizer,
images, labels)``; ``make_jax()`` gives the same step under ``jax.jit``, on the
model's and optimizer's state (``nnx.split`` outside, ``nnx.merge`` inside), as a
user writes it to hand JAX a pure function.

What to look for: the weight gradients of the convolutions are the step's largest
ops after the forward convolutions; they belong to the model's lines (the
``self.conv1(x)`` calls), not to the optimizer's update.

>>> program = make()
>>> model, optimizer, images, labels = program.args
>>> type(model).__name__, images.shape, labels.shape
('CNN', (32, 28, 28, 1), (32,))
"""

from __future__ import annotations

import jax
import jax.numpy as jnp
import optax
from flax import nnx

from .program import Program

BATCH = 32
IMAGE = (28, 28, 1)
CLASSES = 10


class CNN(nnx.Module):
    """Two convolution blocks (conv, batch norm, relu, average pooling) and a
    two-layer classifier with dropout."""

    def __init__(self, classes: int, *, rngs: nnx.Rngs):
        self.conv1 = nnx.Conv(1, 16, kernel_size=(3, 3), rngs=rngs)
        self.bn1 = nnx.BatchNorm(16, rngs=rngs)
        self.conv2 = nnx.Conv(16, 32, kernel_size=(3, 3), rngs=rngs)
        self.bn2 = nnx.BatchNorm(32, rngs=rngs)
        self.dropout = nnx.Dropout(rate=0.25, rngs=rngs)
        self.linear1 = nnx.Linear(7 * 7 * 32, 128, rngs=rngs)
        self.linear2 = nnx.Linear(128, classes, rngs=rngs)

    def __call__(self, x):
        x = nnx.avg_pool(nnx.relu(self.bn1(self.conv1(x))), window_shape=(2, 2), strides=(2, 2))
        x = nnx.avg_pool(nnx.relu(self.bn2(self.conv2(x))), window_shape=(2, 2), strides=(2, 2))
        x = x.reshape(x.shape[0], -1)
        x = self.dropout(nnx.relu(self.linear1(x)))
        return self.linear2(x)


def loss_fn(model: CNN, images, labels):
    logits = model(images)
    loss = optax.softmax_cross_entropy_with_integer_labels(logits, labels).mean()
    return loss, logits


def step(model: CNN, optimizer: nnx.Optimizer, images, labels):
    """One step of SGD: the loss and its gradient, then the optimizer's update (the
    model's parameters and batch statistics change in place)."""
    grad_fn = nnx.value_and_grad(loss_fn, has_aux=True)
    (loss, _logits), grads = grad_fn(model, images, labels)
    optimizer.update(model, grads)
    return loss


train_step = nnx.jit(step)


def init(seed: int = 0):
    """A model in training mode, its optimizer, and a batch of images and labels."""
    model = CNN(CLASSES, rngs=nnx.Rngs(params=seed, dropout=seed + 1))
    model.train()  # batch statistics from the batch, dropout on
    optimizer = nnx.Optimizer(model, optax.sgd(learning_rate=0.01, momentum=0.9), wrt=nnx.Param)
    keys = jax.random.split(jax.random.key(seed + 2))
    images = jax.random.normal(keys[0], (BATCH, *IMAGE), jnp.float32)
    labels = jax.random.randint(keys[1], (BATCH,), 0, CLASSES)
    return model, optimizer, images, labels


def make() -> Program:
    """The ``nnx.jit`` train step and its arguments."""
    model, optimizer, images, labels = init()
    return Program(
        name="cnn_nnx",
        fn=train_step,
        args=(model, optimizer, images, labels),
        kwargs={},
        user_file=__file__,
        notes=f"flax nnx CNN, batch {BATCH} of {IMAGE} images; nnx.jit; SGD with momentum",
    )


def make_jax() -> Program:
    """The same step under ``jax.jit``: it takes and returns the state of the model and
    the optimizer (``nnx.split``), and rebuilds them inside (``nnx.merge``)."""
    model, optimizer, images, labels = init()
    graphdef, state = nnx.split((model, optimizer))

    @jax.jit
    def jax_train_step(state, images, labels):
        model, optimizer = nnx.merge(graphdef, state)
        loss = step(model, optimizer, images, labels)
        _, state = nnx.split((model, optimizer))
        return loss, state

    return Program(
        name="cnn_nnx_jax",
        fn=jax_train_step,
        args=(state, images, labels),
        kwargs={},
        user_file=__file__,
        notes=f"flax nnx CNN, batch {BATCH} of {IMAGE} images; jax.jit over nnx.split state",
    )
