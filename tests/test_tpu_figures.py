"""The figures Olympus gives on TPU executables, compiled here without a TPU
(``olympus.hardware.target``): what each collective moves counts its data, not the
semaphores of its synchronization; a multi-slice collective (a ``send`` and a
``recv`` over the data-center network) is a collective; a cost figure that is no
figure (XLA's -1s for what it cannot cost, added in) is shown with a note saying
so in every form; and the peak of ``memory_analysis()`` is explained. Each program
is small: it compiles in a second or two."""

import functools
import re

import jax
import jax.numpy as jnp
import pytest
from jax.sharding import NamedSharding, PartitionSpec as P

import olympus
import olympus_jupyter
from olympus import hardware
from olympus.buffers import peak_memory
from olympus.collectives import collectives
from olympus_jupyter.report.validate import check_bundle

# Compiles for TPU with libtpu: run in the targets environment (run.sh), never skipped.
pytestmark = pytest.mark.targets


def _spec(mesh, shape, spec, dtype=jnp.float32):
    return jax.ShapeDtypeStruct(shape, dtype, sharding=NamedSharding(mesh, spec))


def _collectives(f, *args):
    compiled = olympus.jit(f).trace(*args).lower().compile()
    return compiled.as_text(), collectives(olympus.provenance.build(compiled))


def roll(x):
    return jnp.roll(x, 1, axis=0) * 2


def total(x):
    return jnp.sum(x, axis=0)


def layer(h, w):
    return jax.nn.gelu(h @ w) + h, None


def loss(ws, x):
    h, _ = jax.lax.scan(layer, x, ws)
    return jnp.mean(h**2)


def train_step(ws, x):
    value, grads = jax.value_and_grad(loss)(ws, x)
    return ws - 0.1 * grads, value


def small_step(w, x):
    grads = jax.grad(lambda w, x: jnp.sum(jnp.tanh(x @ w) ** 2))(w, x)
    return w - 0.1 * grads


def test_a_collective_permute_counts_its_data_not_its_semaphores():
    """A roll along a sharded axis sends each device's last row to its neighbour: a
    ``collective-permute-start`` whose result ends in two ``u32[]`` semaphores. Its
    bytes are the row's, 128 f32 (512 B), not a semaphore's 4 B."""
    mesh = hardware.target("v5e:2x2").mesh({"data": 2, "model": 2})
    text, found = _collectives(roll, _spec(mesh, (256, 128), P("data", None)))
    assert re.search(r"collective-permute-start\(", text) and "u32[]{:S(2)}" in text, text
    (permute,) = [c for c in found if c.opcode == "collective-permute"]
    assert permute.result_bytes == 128 * 4 and permute.moved_bytes == 128 * 4, permute
    assert permute.lines[0][1] == roll.__code__.co_firstlineno + 1
    assert "512 B per device" in permute.describe()


def test_a_multi_slice_all_reduce_is_a_cross_slice_collective_with_its_bytes_and_line():
    """Summing over a batch sharded across two slices: XLA's TPU compiler reduces
    within each slice (an ``all-reduce``), then across the slices with a ``send``
    and a ``recv`` for the multi-slice runtime. That pair is one collective, its
    bytes the 128 f32 of the sum, its group one device of each slice, its line the
    sum's."""
    mesh = hardware.target("v5e:2x2", num_slices=2).mesh({"data": 8})
    text, found = _collectives(total, _spec(mesh, (256, 128), P("data", None)))
    assert '_xla_megascale_transfer_type="ALL_REDUCE"' in text and " send(" in text, text
    (cross,) = [c for c in found if c.opcode == "all-reduce (cross-slice)"]
    assert cross.result_bytes == 128 * 4, cross
    assert cross.group_size == 2 and cross.moved_bytes == 128 * 4, cross
    assert cross.lines and cross.lines[0][1] == total.__code__.co_firstlineno + 1, cross
    if jax.__version_info__ >= (0, 10):  # JAX 0.9's XLA: the send's users name no result
        assert cross.parameters == ("result",), cross  # its data is what the program returns
    # Its recv and the -done halves are not collectives of their own.
    assert [c.opcode for c in found].count("all-reduce (cross-slice)") == 1
    assert not any(c.opcode.startswith(("send", "recv")) for c in found), found


def test_a_train_step_across_slices_reports_its_cross_slice_gradient_sum():
    """A data-parallel train step over two slices: the gradient is summed within
    each slice (a reduce-scatter over the model axis) and across the slices; the
    report's collectives (data form) say so, each with a line of the step."""
    mesh = hardware.target("v5e:2x2", num_slices=2).mesh({"data": 4, "model": 2})
    args = (_spec(mesh, (128, 256), P(None, "model")), _spec(mesh, (64, 128), P("data", None)))
    report = olympus_jupyter.inspect(small_step, *args, costs=True, cache=False)
    assert report.failure is None, report.failure
    rows = report.collectives()
    cross = [c for c in rows if c["opcode"].endswith("(cross-slice)")]
    assert cross and all(c["lines"] for c in rows), rows
    # The gradient of w's 128 x 128 f32 shard, scattered over a slice's 2 data devices.
    assert cross[0]["result_bytes"] == 128 * 128 * 4 // 2, cross
    assert "(cross-slice)" in report.text()


@functools.lru_cache(maxsize=None)
def _negative_report(num_slices: int):
    mesh = hardware.target("v5e:2x2", num_slices=num_slices).mesh(
        {"data": 2 * num_slices, "model": 2}
    )
    ws = _spec(mesh, (4, 512, 512), P(None, None, "model"), jnp.bfloat16)
    x = _spec(mesh, (256, 512), P("data", None), jnp.bfloat16)
    report = olympus_jupyter.inspect(train_step, ws, x, cache=False)
    assert report.failure is None, report.failure
    return report


@pytest.mark.parametrize(
    "num_slices, key, words",
    [(2, "optimal_seconds", "not a time"), (1, "bytes accessed9{}", "not a size")],
)
def test_a_negative_cost_figure_is_kept_and_marked_in_every_form(num_slices, key, words):
    """On TPU XLA counts -1 for what it cannot cost (custom calls of its own) and
    adds it in: a multi-slice train step's optimal time comes out at about -2 s, a
    custom call's operand 9 at -1 B. The data keeps the figure and marks it; the
    text and HTML show it with a note saying what it is, never bare."""
    report = _negative_report(num_slices)
    raw = report.analyses.cost_compiled
    assert raw[key] < 0, raw  # what XLA gives, kept

    data = report.to_json()
    check_bundle(data)
    assert data["analyses"]["cost"]["compiled"][key] == raw[key]
    marks = data["analyses"]["cost"]["marks"]["compiled"]
    assert set(marks) == {k for k, v in raw.items() if v < 0}, marks
    assert marks[key].startswith(words), marks

    page = str(report.html())
    row = page[page.index(f'data-key="{key}"') :]
    row = row[: row.index("</tr>")]
    assert 'class="ol-mark"' in row and words in row, row
    assert re.search(r"note \d+</b>: [^<]* is " + words, page)

    text = report.text()
    for line in text.splitlines():  # every figure the text shows that is negative
        if re.search(r"  -\d", line) and "[" in line:
            assert "(note " in line, line
    if f"[{key}]" in text:
        (line,) = [t for t in text.splitlines() if t.rstrip().endswith(f"[{key}]")]
        assert "(note " in line and re.search(r"note \d+: .* is " + words, text), text


def test_the_peak_of_memory_analysis_is_explained_on_tpu():
    """TPU's ``memory_analysis()`` peak is the argument, output and constant
    allocations plus the peak of the values in the on-chip vector memory (VMEM,
    memory space 1), with no temporaries in HBM; the live-range peak adds the values
    of every memory space live at one point. The two differ, and the report says
    how, with the figures, not "not explained"."""
    mesh = hardware.target("v5e:2x2").mesh({"data": 2, "model": 2})
    args = (_spec(mesh, (128, 256), P(None, "model")), _spec(mesh, (64, 128), P("data", None)))
    peak = peak_memory(olympus.jit(small_step).trace(*args).lower())
    static = peak.allocation_bytes("argument", "output", "constant")
    vmem = dict(peak.space_peaks)[1]
    assert peak.memory_analysis_peak == static + vmem != peak.peak_bytes, peak
    assert sum(peak.by_memory_space().values()) == peak.peak_bytes
    said = peak.difference()
    assert "not explained" not in said and "VMEM" in said and f"{vmem} bytes" in said, said

    report = olympus_jupyter.inspect(small_step, *args, costs=True, cache=False)
    assert "VMEM" in report.costs["peak"]["difference"], report.costs["peak"]
    assert "not explained" not in str(report.html())


def three_layers(x, w1, w2, w3):
    h = jnp.tanh(x @ w1)
    h = jnp.tanh(h @ w2)
    return h @ w3


def test_an_async_collective_fusion_is_one_collective():
    """XLA:TPU overlaps the all-gather of a weight with the work before its use in an
    asynchronous collective fusion: a copy of the all-gather in each of its parts (its
    start, the work overlapped, its done), one channel for all. That is one all-gather,
    counted once: each weight of an FSDP MLP is gathered once, on its line."""
    mesh = hardware.target("v5e:4x4").mesh({"data": 4, "model": 4})
    fsdp = P(("data", "model"), None)
    shapes = ((256, 1024), (1024, 2048), (2048, 128))
    text, found = _collectives(
        three_layers,
        _spec(mesh, (512, 256), P("data", None)),
        *(_spec(mesh, shape, fsdp) for shape in shapes),
    )
    channels = re.findall(r"= \S+ all-gather\(.*?channel_id=(\d+)", text)
    assert len(channels) > len(set(channels)), channels  # an all-gather in copies
    gathers = [c for c in found if c.opcode == "all-gather"]
    assert len(gathers) == len(set(channels)) == 3, gathers
    first = three_layers.__code__.co_firstlineno
    by_line = {c.lines[0][1] - first: c for c in gathers}
    assert sorted(by_line) == [1, 2, 3]
    # Each the whole weight, in the bfloat16 that XLA:TPU multiplies float32 in (or float32).
    for line, (rows, columns) in zip((1, 2, 3), shapes):
        assert by_line[line].result_bytes in (rows * columns * 2, rows * columns * 4)
