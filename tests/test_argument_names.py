"""Names from the pytree: argument buffers, shardings and collectives name the
parameter by its path in the user's pytree (``params/Dense_0/kernel``), on one
device and sharded over eight (real compiles, flax and optax programs)."""

import functools
import textwrap

import jax
import numpy as np
import optax
import pytest
from eight_devices import run_on_8_devices

import olympus
import olympus.numpy as jnp
from olympus.argument_names import (
    entry_parameters,
    fallback_names,
    input_names,
    keypath_name,
    parameter_names,
    readable,
)
from olympus.buffers import peak_memory
from olympus_jupyter import inspect
from olympus_jupyter.report import StageReport
from olympus_jupyter.report.markup import concat

PARAMS = {
    "params": {
        "encoder": {
            "Dense_0": {"kernel": np.ones((32, 64), np.float32), "bias": np.zeros(64, np.float32)}
        },
        "decoder": {"Dense_0": {"kernel": np.ones((64, 8), np.float32)}},
    }
}
X = np.ones((16, 32), np.float32)
OPTIMIZER = optax.adam(1e-3)


def train_step(params, opt_state, x):
    def loss(p):
        h = jnp.tanh(x @ p["params"]["encoder"]["Dense_0"]["kernel"])
        h = h + p["params"]["encoder"]["Dense_0"]["bias"]
        return jnp.mean(h @ p["params"]["decoder"]["Dense_0"]["kernel"])

    grads = olympus.grad(loss)(params)
    updates, opt_state = OPTIMIZER.update(grads, opt_state, params)
    return optax.apply_updates(params, updates), opt_state


KERNELS = (
    "params/params/encoder/Dense_0/kernel",
    "params/params/decoder/Dense_0/kernel",
)


@pytest.mark.parametrize(
    "jax_name, name",
    [
        (
            "params['params']['decoder']['Dense_0']['kernel']",
            "params/params/decoder/Dense_0/kernel",
        ),
        ("state[0].mu['params']['w']", "state/0/mu/params/w"),
        ("state.params['a b']", "state/params/a b"),
        ('d["it\'s"][2]', "d/it's/2"),
        ("args[0][<flat index 3>]", "args/0/3"),
        ("x", "x"),
    ],
)
def test_jax_argument_names_read_as_paths(jax_name, name):
    assert readable(jax_name) == name


def test_a_keypath_reads_as_its_keys():
    flat = jax.tree_util.tree_flatten_with_path({"a": [{"b": 1}], "c": (2,)})[0]
    assert [keypath_name(p) for p, _ in flat] == ["a/0/b", "c/0"]


def test_entry_parameters_are_those_of_the_entry_computation_only():
    hlo = textwrap.dedent("""\
        HloModule m
        %fused (param_0: f32[2]) -> f32[2] {
          %param_0 = f32[2]{0} parameter(0), metadata={op_name="not an argument"}
        }
        ENTRY %main (a: f32[2], b: f32[]) -> f32[2] {
          %param.3 = f32[2]{0} parameter(1), metadata={op_name="p[\\'w\\']"}
          %param = f32[] parameter(0)
        }
        """)
    found = entry_parameters(hlo)
    assert sorted(found) == [0, 1]
    assert found[1].label == "param.3" and found[1].name == "p/w"
    assert found[1].jax_name == "p['w']" and found[0].name is None
    assert parameter_names(hlo, {0: "args/0", 1: "other"}) == {0: "args/0", 1: "p/w"}


def test_static_and_unused_arguments_do_not_shift_the_names():
    def f(scale, unused, params, *, bias):
        return params["w"] * scale + bias

    compiled = (
        olympus.jit(f, static_argnums=(0,))
        .trace(2.0, np.ones(3, np.float32), {"w": np.ones(3, np.float32)}, bias=np.ones(3))
        .lower()
        .compile()
    )
    names = parameter_names(compiled.as_text())
    assert names == {0: "params/w", 1: "bias"}
    # Without the metadata: args_info's paths, numbered as the program takes them.
    assert fallback_names(compiled) == ["args/1/w", "bias"]


def test_the_token_of_an_ordered_effect_is_no_argument():
    def f(params, x):
        jax.debug.print("x {}", x, ordered=True)
        return params["w"] * x

    compiled = (
        olympus.jit(f)
        .trace({"w": np.ones(3, np.float32)}, np.ones(3, np.float32))
        .lower()
        .compile()
    )
    hlo = compiled.as_text()
    assert entry_parameters(hlo)[0].type.startswith("token[")  # JAX puts it first
    assert input_names(hlo, fallback_names(compiled)) == ["params/w", "x"]
    # A module without the names: the fallback, in place, the token left out.
    bare = hlo.replace('op_name="', 'op_nam="')
    assert parameter_names(bare, fallback_names(compiled)) == {1: "args/0/w", 2: "args/1"}
    report = inspect(f, {"w": np.ones(3, np.float32)}, np.ones(3, np.float32), costs=True)
    assert report.costs["shardings"]["input_names"] == ["params/w", "x"]


@functools.lru_cache(maxsize=1)
def _train_report():
    opt_state = OPTIMIZER.init(PARAMS)
    jitted = olympus.jit(train_step, donate_argnums=(1,))
    return inspect(jitted, PARAMS, opt_state, X, costs=True, cache=False)


def test_peak_buffers_name_the_parameters_and_optimizer_state():
    opt_state = OPTIMIZER.init(PARAMS)
    compiled = olympus.jit(train_step).trace(PARAMS, opt_state, X).lower().compile()
    peak = peak_memory(compiled)
    arguments = {b.argument: b for b in peak.buffers if b.kind == "argument"}
    for kernel in KERNELS:
        assert kernel in arguments, sorted(arguments)
    assert "x" in arguments
    # The labels are XLA's; the names are the user's.
    assert all(b.argument != b.label for b in arguments.values())
    assert arguments[KERNELS[0]].shape.startswith("f32[32,64]")
    assert any(name.startswith("opt_state/0/mu/params/") for name in arguments)
    assert all(b.argument is None for b in peak.buffers if b.kind == "temporary")


def test_a_report_names_buffers_shardings_and_donated_outputs():
    report = _train_report()
    assert report.failure is None, report.failure
    buffers = report.peak_buffers()
    named = {b["argument"] for b in buffers if b["kind"] == "argument"}
    assert set(KERNELS) <= named, named
    # An output written over a donated optimizer state says whose memory it reuses.
    reused = [b for b in buffers if b["aliased_argument"] is not None]
    assert reused and all(b["argument"].startswith("opt_state/") for b in reused)
    shardings = report.costs["shardings"]
    assert len(shardings["input_names"]) == len(shardings["inputs"])
    assert set(KERNELS) <= set(shardings["input_names"])
    assert "result/0/params/encoder/Dense_0/kernel" in shardings["output_names"]
    assert len(shardings["output_names"]) == len(shardings["outputs"])
    # The names travel with the bundle and come back.
    again = StageReport.from_json(report.to_json())
    assert again.peak_buffers() == buffers and again.costs["shardings"] == shardings


def test_the_html_shows_the_names():
    from olympus_jupyter.report.costs_html import costs_section

    html = str(concat(costs_section(_train_report(), "ol1", full=True)))
    # A buffer by its name, XLA's label beside it; a sharding after its input's name.
    assert "<code>params/params/encoder/Dense_0/kernel</code> <span" in html
    assert '<code class="ol-cname">params/params/encoder/Dense_0/kernel</code>: ' in html


SHARDED = textwrap.dedent("""
    import json
    import flax.linen as nn
    import jax
    import numpy as np
    import optax
    import olympus, olympus.numpy as jnp
    from olympus.sharding import AxisType, NamedSharding, PartitionSpec as P
    from olympus_jupyter import inspect

    mesh = jax.make_mesh((4, 2), ("fsdp", "tp"), axis_types=(AxisType.Auto,) * 2)

    class Stack(nn.Module):
        @nn.compact
        def __call__(self, x):
            for i in range(3):
                x = nn.relu(nn.Dense(64, name=f"Dense_{i}")(x))
            return x

    model = Stack()
    x = np.ones((16, 32), np.float32)
    variables = model.init(jax.random.key(0), x)
    shardings = jax.tree_util.tree_map(
        lambda leaf: NamedSharding(mesh, P("fsdp", "tp") if leaf.ndim == 2 else P("tp")),
        variables)
    variables = jax.device_put(variables, shardings)
    optimizer = optax.adamw(1e-3)
    opt_state = optimizer.init(variables)

    def train_step(variables, opt_state, x):
        def loss(v):
            return jnp.mean(model.apply(v, x) ** 2)
        value, grads = olympus.value_and_grad(loss)(variables)
        updates, opt_state = optimizer.update(grads, opt_state, variables)
        return optax.apply_updates(variables, updates), opt_state, value

    xs = jax.device_put(x, NamedSharding(mesh, P("fsdp", None)))
    r = inspect(olympus.jit(train_step, donate_argnums=(0, 1)), variables, opt_state, xs,
                costs=True, cache=False)
    assert r.failure is None, r.failure
    print(json.dumps({"devices": r.costs["devices"], "buffers": r.peak_buffers(),
                      "collectives": r.collectives(), "shardings": r.costs["shardings"]}))
""")


@functools.lru_cache(maxsize=1)
def _sharded():
    return run_on_8_devices(SHARDED)


def test_sharded_argument_buffers_carry_their_pytree_names():
    out = _sharded()
    assert out["devices"] == 8
    arguments = [b for b in out["buffers"] if b["kind"] == "argument"]
    names = {b["argument"] for b in arguments}
    for i in range(3):
        assert f"variables/params/Dense_{i}/kernel" in names, names
    # XLA labels them param.N once partitioned; every argument buffer has its name.
    assert all(b["label"].startswith("param") for b in arguments)
    assert all(b["argument"] for b in arguments)
    # Per device: an eighth of each (fsdp 4 x tp 2) 64 x 64 f32 kernel.
    (kernel,) = [b for b in arguments if b["argument"] == "variables/params/Dense_1/kernel"]
    assert kernel["size"] == 64 * 64 * 4 // 8


def test_sharded_collectives_name_the_parameters_they_move():
    out = _sharded()
    gathered = {}
    for c in out["collectives"]:
        for name in c["arguments"]:
            gathered.setdefault(name, []).append(c)
    # FSDP: each layer's kernel is gathered over the fsdp axis before its matmul.
    for i in range(3):
        name = f"variables/params/Dense_{i}/kernel"
        assert name in gathered, [c["text"] for c in out["collectives"]]
        c = gathered[name][0]
        assert c["opcode"] == "all-gather" and c["group_size"] == 4
        assert name in c["text"]
        # The sharding of what it moves comes first, named.
        assert c["shardings"][0].startswith("argument ") and f"({name}):" in c["shardings"][0]


def test_sharded_input_shardings_are_named():
    shardings = _sharded()["shardings"]
    named = dict(zip(shardings["input_names"], shardings["inputs"]))
    assert "fsdp" in named["variables/params/Dense_0/kernel"]
    assert "opt_state/0/mu/params/Dense_2/kernel" in named and "x" in named
