"""A flax ``nnx`` decoder-only transformer LM and its train step, fully sharded
(FSDP) over 8 devices, its blocks rematerialized, its gradients accumulated over 4
micro-batches by ``optax.MultiSteps``: written with ``jax.sharding`` and a plain
``jax.jit``, as a JAX user who keeps the model's state as a pytree writes it.

The model is split once (``nnx.split``) into its graph and its parameters; the
step is a pure function of the parameters, the optimizer state and a batch, jitted
with ``in_shardings``/``out_shardings`` (``NamedSharding`` on a one-axis ``fsdp``
mesh: every parameter's first dimension that divides by 8, and the batch, sharded
over it) and the parameters and optimizer state donated. The optimizer is
``optax.MultiSteps(optax.adamw(...), every_k_schedule=4)``: its state holds int32
step counters beside the accumulated gradients, and the inner adamw step runs on
every fourth call.

It needs 8 devices: ``make()`` says so where there are fewer (on a CPU, set
``XLA_FLAGS=--xla_force_host_platform_device_count=8`` before JAX starts;
``tests/eight_devices.py`` runs a child process so).

>>> tuple(fsdp_spec((64, 256))), tuple(fsdp_spec((4,))), tuple(fsdp_spec(()))
(('fsdp', None), (None,), ())
"""

from __future__ import annotations

import dataclasses

import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax import nnx
from jax.sharding import Mesh, NamedSharding
from jax.sharding import PartitionSpec as P

from .program import Program

#: Devices on the one mesh axis.
DEVICES = 8


@dataclasses.dataclass(frozen=True)
class Config:
    vocab: int = 256
    d_model: int = 64
    heads: int = 4
    d_ff: int = 256
    layers: int = 3
    seq: int = 32
    batch: int = 8  # one micro-batch: MultiSteps accumulates 4 of them
    accumulate: int = 4


class CausalSelfAttention(nnx.Module):
    def __init__(self, cfg: Config, rngs: nnx.Rngs):
        self.heads = cfg.heads
        self.qkv = nnx.Linear(cfg.d_model, 3 * cfg.d_model, use_bias=False, rngs=rngs)
        self.proj = nnx.Linear(cfg.d_model, cfg.d_model, use_bias=False, rngs=rngs)

    def __call__(self, x):
        b, t, d = x.shape
        q, k, v = jnp.split(self.qkv(x), 3, axis=-1)
        q, k, v = (z.reshape(b, t, self.heads, d // self.heads) for z in (q, k, v))
        scores = jnp.einsum("bqhd,bkhd->bhqk", q, k) / jnp.sqrt(d // self.heads)
        causal = jnp.tril(jnp.ones((t, t), bool))
        weights = jax.nn.softmax(jnp.where(causal, scores, -1e9), axis=-1)
        y = jnp.einsum("bhqk,bkhd->bqhd", weights, v).reshape(b, t, d)
        return self.proj(y)


class Block(nnx.Module):
    """A pre-norm decoder block."""

    def __init__(self, cfg: Config, rngs: nnx.Rngs):
        self.norm1 = nnx.LayerNorm(cfg.d_model, rngs=rngs)
        self.attention = CausalSelfAttention(cfg, rngs)
        self.norm2 = nnx.LayerNorm(cfg.d_model, rngs=rngs)
        self.up = nnx.Linear(cfg.d_model, cfg.d_ff, rngs=rngs)
        self.down = nnx.Linear(cfg.d_ff, cfg.d_model, rngs=rngs)

    def __call__(self, x):
        x = x + self.attention(self.norm1(x))
        return x + self.down(jax.nn.gelu(self.up(self.norm2(x))))


class Decoder(nnx.Module):
    """Token and position embeddings, rematerialized blocks, a tied output layer."""

    def __init__(self, cfg: Config, rngs: nnx.Rngs):
        self.embed = nnx.Embed(cfg.vocab, cfg.d_model, rngs=rngs)
        self.positions = nnx.Param(0.02 * jax.random.normal(rngs.params(), (cfg.seq, cfg.d_model)))
        self.blocks = nnx.List([Block(cfg, rngs) for _ in range(cfg.layers)])
        self.norm = nnx.LayerNorm(cfg.d_model, rngs=rngs)

    def __call__(self, tokens):
        x = self.embed(tokens) + self.positions[: tokens.shape[1]]
        for block in self.blocks:
            # Recompute each block's activations in the backward pass.
            x = nnx.remat(lambda block, x: block(x))(block, x)
        return self.embed.attend(self.norm(x))


def fsdp_spec(shape: tuple[int, ...]) -> P:
    """Shard an array's first dimension over ``fsdp`` where it divides; replicate
    the rest (scalars, small vectors)."""
    if shape and shape[0] % DEVICES == 0 and shape[0] >= DEVICES:
        return P("fsdp", *([None] * (len(shape) - 1)))
    return P(*([None] * len(shape)))


def make_mesh() -> Mesh:
    """A one-axis ``fsdp`` mesh over the first 8 devices; a clear error with fewer."""
    devices = jax.devices()
    if len(devices) < DEVICES:
        raise RuntimeError(
            f"decoder_nnx needs {DEVICES} devices (a mesh of {DEVICES} fsdp); JAX sees "
            f"{len(devices)} {jax.default_backend()} device(s). On a CPU, set "
            f"XLA_FLAGS=--xla_force_host_platform_device_count={DEVICES} before JAX "
            "starts (tests/eight_devices.py runs a child process so)."
        )
    return Mesh(np.array(devices[:DEVICES]), ("fsdp",))


def make(cfg: Config = Config()) -> Program:
    """The sharded train step, its parameters, optimizer state and a micro-batch,
    placed on the mesh."""
    mesh = make_mesh()
    graphdef, params = nnx.split(Decoder(cfg, nnx.Rngs(0)), nnx.Param)
    tx = optax.MultiSteps(
        optax.adamw(learning_rate=3e-4, weight_decay=0.1), every_k_schedule=cfg.accumulate
    )

    def loss_fn(params, tokens):
        model = nnx.merge(graphdef, params)
        logits = model(tokens[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()

    def train_step(params, opt_state, tokens):
        """One micro-batch's gradients into the accumulator; every 4th call, one
        adamw step on their mean."""
        loss, grads = jax.value_and_grad(loss_fn)(params, tokens)
        updates, opt_state = tx.update(grads, opt_state, params)
        return optax.apply_updates(params, updates), opt_state, loss

    def shard(tree):
        return jax.tree.map(lambda x: NamedSharding(mesh, fsdp_spec(x.shape)), tree)

    params_sharding = shard(params)
    opt_sharding = shard(jax.eval_shape(tx.init, params))
    params = jax.device_put(params, params_sharding)
    opt_state = jax.jit(tx.init, out_shardings=opt_sharding)(params)
    batch_sharding = NamedSharding(mesh, P("fsdp", None))
    tokens = jax.device_put(
        jax.random.randint(jax.random.key(1), (cfg.batch, cfg.seq + 1), 0, cfg.vocab),
        batch_sharding,
    )
    step = jax.jit(
        train_step,
        in_shardings=(params_sharding, opt_sharding, batch_sharding),
        out_shardings=(params_sharding, opt_sharding, NamedSharding(mesh, P())),
        donate_argnums=(0, 1),
    )
    return Program(
        name="decoder_nnx",
        fn=step,
        args=(params, opt_state, tokens),
        kwargs={},
        user_file=__file__,
        notes=f"flax nnx decoder LM, {cfg.layers} remat blocks of width {cfg.d_model}, "
        f"micro-batch {cfg.batch} x {cfg.seq} tokens; fsdp over {DEVICES} devices by "
        f"jax.sharding; optax.MultiSteps(adamw) accumulating {cfg.accumulate} micro-batches; "
        "parameters and optimizer state donated",
    )
