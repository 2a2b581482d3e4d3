"""notebooks/07_sharding.ipynb: shardings and the collectives they cost, on 8 CPU devices.

The lesson's kernel has 8 devices (its first cell sets XLA_FLAGS before JAX starts);
the pytest process that calls the checks directly (``RIGHT``, ``WRONG_ANSWERS``) has
fewer. The checks of ``olympus_jupyter.teaching.exercises.sharding`` handle that
themselves: with fewer than 8 CPU devices they compile their programs in a child
process with 8 (sending it the answer's partition specs, data, never code) and say
so in their message, so that the answers below are checked as they are in a kernel.
"""

import re

from notebook_outputs import MEDIA, bundles, report_of, text
from olympus.sharding import PartitionSpec as P


def shows(nb, code):
    outputs = "".join(text(c) for c in code)
    assert outputs.startswith("8 devices:")
    reports = [report_of(c) for c in code if bundles(c)]
    assert len(reports) == 1  # the good sharding's, from %olympus_lower
    data = reports[0][MEDIA]
    assert data["failure"] is None and "partitioned" in data["stages"]
    assert data["costs"]["devices"] == 8 and data["costs"]["collectives"] == []
    assert "collectives: []" in outputs
    assert "y = x @ w: 8,192 flops on each device, of 2·64·32·16 = 65,536" in outputs
    # The bad sharding: an all-reduce on the product's line, of the whole f32[64, 16].
    assert re.search(
        r"all-reduce \(inserted\) on line \[1\] of layer \(def \+ k\): 4,096 bytes "
        r"per device, ~7,168 sent by each of 8 devices",
        outputs,
    )
    assert "same result: True" in outputs
    # The MLP: an all-gather of x (64 x 32 f32) on its first line.
    assert re.search(
        r"all-gather \(inserted\) on line \[1\] of mlp: 8,192 bytes per device, "
        r"~7,168 sent by each of 8",
        outputs,
    )


#: Per exercise: a wrong body for its solution region, and what its check must say.
WRONG = {
    "no_collective_specs": (
        'return P(None, "x"), P("x", None)',
        "XLA inserted an all-reduce on line 2",
    ),
    "allreduce_bytes": ("return 4 * m * n", "is the size of what is all-reduced"),
}

#: Other correct answers its checks accept.
RIGHT = [
    ("check_no_collective_specs", lambda: (P(), P(None, "x"))),  # w's columns instead
    ("check_no_collective_specs", lambda: [P("x"), P(None, None)]),
    ("check_allreduce_bytes", lambda m, k, n, devices: 8 * m * n * (devices - 1) / devices),
]

#: Other wrong answers, and what its checks say of them.
WRONG_ANSWERS = [
    ("check_no_collective_specs", lambda: (P(), P()), "the whole of it"),
    ("check_no_collective_specs", lambda: (P("x"), P(None, "x")), "XLA inserted an all-gather"),
    ("check_no_collective_specs", lambda: (P("batch"), P()), "the mesh has one axis, 'x'"),
    (
        "check_allreduce_bytes",
        lambda m, k, n, devices: 4 * m * n * (devices - 1) // devices,
        "that is what an all-gather sends",
    ),
]
