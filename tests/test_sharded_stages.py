"""The staged API on 8 CPU devices: shardings survive every stage.

XLA must see ``--xla_force_host_platform_device_count=8`` before JAX starts, so
these cases run in a fresh interpreter.
"""

import textwrap
from eight_devices import run_on_8_devices

SCRIPT = textwrap.dedent("""
    import json
    import numpy as np
    import olympus, olympus.numpy as jnp
    from olympus.sharding import NamedSharding, PartitionSpec as P, AxisType
    import jax
    from olympus_jupyter.staging.specialization import format_partition_spec

    out = {"devices": len(olympus.devices())}
    mesh = jax.make_mesh((4, 2), ("x", "y"), axis_types=(AxisType.Auto,) * 2)
    rows = NamedSharding(mesh, P("x", None))
    cols = NamedSharding(mesh, P(None, "y"))

    def matmul(a, b):
        return a @ b

    a_spec = olympus.ShapeDtypeStruct((8, 16), jnp.float32, sharding=rows)
    b_spec = olympus.ShapeDtypeStruct((16, 4), jnp.float32, sharding=cols)
    lowered = olympus.jit(matmul, out_shardings=rows).trace(a_spec, b_spec).lower()
    out["stablehlo_has_shardings"] = ("sdy.sharding" in lowered.as_text()
                                      or "mhlo.sharding" in lowered.as_text())
    out["partitions"] = "mhlo.num_partitions = 8" in lowered.as_text()
    compiled = lowered.compile()
    (sa, sb), _ = compiled.input_shardings
    out["in_shardings"] = [format_partition_spec(sa.spec), format_partition_spec(sb.spec)]
    out["out_sharding"] = format_partition_spec(compiled.output_shardings.spec)
    a = jax.device_put(np.arange(128, dtype=np.float32).reshape(8, 16), rows)
    b = jax.device_put(np.ones((16, 4), np.float32), cols)
    result = compiled(a, b)
    out["correct"] = bool(np.allclose(result, np.asarray(a) @ np.asarray(b)))
    out["result_sharding"] = format_partition_spec(result.sharding.spec)

    # A contraction over a sharded dimension needs a collective.
    k_sharded = NamedSharding(mesh, P(None, "x"))
    kb = NamedSharding(mesh, P("x", None))
    c2 = olympus.jit(matmul).trace(
        olympus.ShapeDtypeStruct((8, 16), jnp.float32, sharding=k_sharded),
        olympus.ShapeDtypeStruct((16, 4), jnp.float32, sharding=kb)).lower().compile()
    out["collective"] = "all-reduce" in c2.as_text() or "reduce-scatter" in c2.as_text()
    print(json.dumps(out))
""")


def test_shardings_survive_every_stage_on_8_devices():
    out = run_on_8_devices(SCRIPT)
    assert out["devices"] == 8
    assert out["stablehlo_has_shardings"] and out["partitions"]
    assert out["in_shardings"] == ["P('x', None)", "P(None, 'y')"]
    assert out["out_sharding"] == "P('x', None)"
    assert out["correct"]
    assert out["result_sharding"] == "P('x', None)"
    assert out["collective"]
