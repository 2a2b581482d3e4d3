"""A flax linen decoder-only transformer LM and its train step, sharded fsdp 4 x
tensor 2 over 8 devices: parameters and activations carry logical axis names
(``nn.with_logical_partitioning``, ``nn.with_logical_constraint``), logical axis
rules map them to the mesh (``nn.logical_to_mesh_sharding``), the blocks are
rematerialized (``nn.remat``), the optimizer is optax adamw in a flax
``TrainState``, and the step is ``jax.jit`` with the state's shardings and the
state donated; as a user of flax's sharding guide writes it.

It needs 8 devices: ``make()`` says so where there are fewer. On a CPU, XLA makes
8 of them with ``XLA_FLAGS=--xla_force_host_platform_device_count=8`` set before
JAX starts (the tests run it in a child process: ``tests/eight_devices.py``).

>>> tuple(nn.logical_to_mesh_axes(("batch", "length", "embed"), RULES))
('fsdp', None, None)
>>> tuple(nn.logical_to_mesh_axes(("embed", "mlp"), RULES))
('fsdp', 'tensor')
"""

from __future__ import annotations

import dataclasses
import functools

import flax.linen as nn
import jax
import jax.numpy as jnp
import numpy as np
import optax
from flax.training import train_state
from jax.sharding import Mesh
from jax.sharding import PartitionSpec as P

from .program import Program

#: The mesh: 4-way fully sharded data parallel by 2-way tensor parallel.
MESH_SHAPE = {"fsdp": 4, "tensor": 2}

#: Logical axis -> mesh axis. A mesh axis that an array's earlier dimension took
#: already is not used again (activations: the batch takes ``fsdp``, so the
#: embedding dimension is not sharded there, while the parameters' is).
RULES = (
    ("batch", "fsdp"),
    ("length", None),
    ("embed", "fsdp"),
    ("mlp", "tensor"),
    ("heads", "tensor"),
    ("kv", None),
    ("vocab", "tensor"),
)


@dataclasses.dataclass(frozen=True)
class Config:
    vocab: int = 256
    d_model: int = 64
    heads: int = 4
    d_ff: int = 256
    layers: int = 4
    seq: int = 32
    batch: int = 8

    @property
    def head_dim(self) -> int:
        return self.d_model // self.heads


def kernel(*names: str | None):
    """A dense kernel's initializer, its dimensions named."""
    return nn.with_logical_partitioning(nn.initializers.lecun_normal(), names)


def bias(name: str):
    """A bias's initializer, its dimension named."""
    return nn.with_logical_partitioning(nn.initializers.zeros, (name,))


class Attention(nn.Module):
    cfg: Config
    mesh: Mesh | None = None

    @nn.compact
    def __call__(self, x):
        cfg = self.cfg
        qkv = functools.partial(
            nn.DenseGeneral,
            features=(cfg.heads, cfg.head_dim),
            use_bias=False,
            kernel_init=kernel("embed", "heads", "kv"),
        )
        q, k, v = (qkv(name=name)(x) for name in ("query", "key", "value"))
        q = nn.with_logical_constraint(q, ("batch", "length", "heads", "kv"), mesh=self.mesh)
        causal = nn.make_causal_mask(jnp.ones(x.shape[:2], bool))
        y = nn.dot_product_attention(q, k, v, mask=causal)
        return nn.DenseGeneral(
            cfg.d_model,
            axis=(-2, -1),
            use_bias=False,
            kernel_init=kernel("heads", "kv", "embed"),
            name="out",
        )(y)


class Mlp(nn.Module):
    cfg: Config
    mesh: Mesh | None = None

    @nn.compact
    def __call__(self, x):
        h = nn.Dense(
            self.cfg.d_ff, kernel_init=kernel("embed", "mlp"), bias_init=bias("mlp"), name="up"
        )(x)
        h = nn.with_logical_constraint(nn.gelu(h), ("batch", "length", "mlp"), mesh=self.mesh)
        return nn.Dense(
            self.cfg.d_model,
            kernel_init=kernel("mlp", "embed"),
            bias_init=bias("embed"),
            name="down",
        )(h)


def norm(name: str) -> nn.LayerNorm:
    return nn.LayerNorm(
        scale_init=nn.with_logical_partitioning(nn.initializers.ones, ("embed",)),
        bias_init=nn.with_logical_partitioning(nn.initializers.zeros, ("embed",)),
        name=name,
    )


class Block(nn.Module):
    """A pre-norm decoder block."""

    cfg: Config
    mesh: Mesh | None = None

    @nn.compact
    def __call__(self, x):
        x = x + Attention(self.cfg, self.mesh)(norm("ln_attention")(x))
        x = x + Mlp(self.cfg, self.mesh)(norm("ln_mlp")(x))
        return nn.with_logical_constraint(x, ("batch", "length", "embed"), mesh=self.mesh)


class Decoder(nn.Module):
    """Token and position embeddings, rematerialized blocks, a tied output layer."""

    cfg: Config
    mesh: Mesh | None = None

    @nn.compact
    def __call__(self, tokens):
        cfg = self.cfg
        embed = nn.Embed(
            cfg.vocab,
            cfg.d_model,
            embedding_init=nn.with_logical_partitioning(
                nn.initializers.normal(0.02), ("vocab", "embed")
            ),
            name="embed",
        )
        positions = nn.Embed(
            cfg.seq,
            cfg.d_model,
            embedding_init=nn.with_logical_partitioning(
                nn.initializers.normal(0.02), ("length", "embed")
            ),
            name="positions",
        )
        x = embed(tokens) + positions(jnp.arange(tokens.shape[1]))
        x = nn.with_logical_constraint(x, ("batch", "length", "embed"), mesh=self.mesh)
        for i in range(cfg.layers):
            x = nn.remat(Block)(cfg, self.mesh, name=f"block_{i}")(x)
        return embed.attend(norm("ln_final")(x))


def train_step(state: train_state.TrainState, tokens):
    """Next-token cross-entropy on ``tokens`` and one adamw step."""

    def loss_fn(params):
        with nn.logical_axis_rules(RULES):
            logits = state.apply_fn({"params": params}, tokens[:, :-1])
        return optax.softmax_cross_entropy_with_integer_labels(logits, tokens[:, 1:]).mean()

    loss, grads = jax.value_and_grad(loss_fn)(state.params)
    return state.apply_gradients(grads=grads), loss


def make_mesh() -> Mesh:
    """The fsdp x tensor mesh over the first 8 devices; a clear error with fewer."""
    need = int(np.prod(list(MESH_SHAPE.values())))
    devices = jax.devices()
    if len(devices) < need:
        raise RuntimeError(
            f"transformer_linen needs {need} devices (a mesh of "
            f"{' x '.join(f'{n} {a}' for a, n in MESH_SHAPE.items())}); JAX sees "
            f"{len(devices)} {jax.default_backend()} device(s). On a CPU, set "
            f"XLA_FLAGS=--xla_force_host_platform_device_count={need} before JAX starts "
            "(tests/eight_devices.py runs a child process so)."
        )
    grid = np.array(devices[:need]).reshape(tuple(MESH_SHAPE.values()))
    return Mesh(grid, tuple(MESH_SHAPE))


def make(cfg: Config = Config()) -> Program:
    """The sharded train step and its state and batch, placed on the mesh."""
    mesh = make_mesh()
    model = Decoder(cfg, mesh)
    tokens = jax.random.randint(jax.random.key(1), (cfg.batch, cfg.seq + 1), 0, cfg.vocab)

    def init_state(key):
        params = model.init(key, tokens[:, :-1])["params"]
        tx = optax.adamw(learning_rate=1e-3, weight_decay=0.1)
        return train_state.TrainState.create(apply_fn=model.apply, params=params, tx=tx)

    with nn.logical_axis_rules(RULES):
        abstract = jax.eval_shape(init_state, jax.random.key(0))
        state_sharding = nn.logical_to_mesh_sharding(nn.get_partition_spec(abstract), mesh, RULES)
        state = jax.jit(init_state, out_shardings=state_sharding)(jax.random.key(0))
    tokens_sharding = nn.logical_to_mesh_sharding(P("batch", "length"), mesh, RULES)
    tokens = jax.device_put(tokens, tokens_sharding)
    step = jax.jit(
        train_step,
        in_shardings=(state_sharding, tokens_sharding),
        out_shardings=(state_sharding, None),
        donate_argnums=0,
    )
    return Program(
        name="transformer_linen",
        fn=step,
        args=(state, tokens),
        kwargs={},
        user_file=__file__,
        notes=f"flax linen decoder LM, {cfg.layers} remat blocks of width {cfg.d_model}, "
        f"batch {cfg.batch} x {cfg.seq} tokens; fsdp 4 x tensor 2 by logical axis rules; "
        "adamw; the state donated",
    )
