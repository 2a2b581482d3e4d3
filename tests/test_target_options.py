"""Compiling for hardware this machine lacks, as users ask for it: the names of targets,
meshes and shardings, and the answers every form gives, checked without libtpu or the
CUDA plugin (tests/test_targets.py compiles for real targets, in the targets
environment)."""

import jax
import numpy as np
import pytest
from jax.sharding import PartitionSpec as P

import olympus_jupyter
from olympus import hardware, placement
from olympus_jupyter.report.device_memory import device_memory, memory_words, target_lines
from olympus_jupyter.report.option_table import OptionError, check_option
from olympus_jupyter.staging.runner import StagingError

GiB = 2**30


@pytest.mark.parametrize(
    ("name", "parsed"),
    [
        ("v5e:4x4", ("tpu", "v5e", "v5e:4x4")),
        (" V5P:2x2x2 ", ("tpu", "v5p", "v5p:2x2x2")),
        ("v6e:8x8_twisted", ("tpu", "v6e", "v6e:8x8_twisted")),
        ("h100:8", ("cuda", "h100", "h100:8")),
        ("B200:2x8", ("cuda", "b200", "b200:2x8")),
    ],
)
def test_target_names_are_libtpus_and_gpu_kinds(name, parsed):
    assert hardware.parse_target(name) == parsed


@pytest.mark.parametrize(
    ("name", "says"),
    [
        ("v5e-16", "is not a target name"),
        ("v9:2x2", "'v9' is not a TPU generation"),
        ("v5e", "is not a target name"),
        ("tpu", "such as 'v5e:4x4'"),
        ("h100", "'<kind>:<count>' such as 'h100:8'"),
    ],
)
def test_a_name_that_is_not_a_target_says_what_one_looks_like(name, says):
    with pytest.raises(hardware.TargetError, match="name a TPU slice") as e:
        hardware.parse_target(name)
    assert says in str(e.value)


def test_the_target_option_is_checked_before_anything_is_staged():
    assert check_option("target", " V5E:2x2 ") == "v5e:2x2"
    assert check_option("target", None) is None
    with pytest.raises(OptionError, match="target 'tpu-v5e' is not a target name"):
        check_option("target", "tpu-v5e")
    with pytest.raises(TypeError, match="target must be a TPU slice named as libtpu names it"):
        check_option("target", 5)
    with pytest.raises(OptionError, match="num_slices must be a whole number"):
        check_option("num_slices", 0)
    assert check_option("num_slices", "2", text=True) == 2
    assert check_option("mesh", "data=4, model=2") == (("data", 4), ("model", 2))
    with pytest.raises(OptionError, match="write NAME=SIZE"):
        check_option("mesh", "data:4")


def test_shardings_are_kept_hashable_and_compared_by_value():
    given = ({"w": P(None, "model"), "b": P()}, P("data"))
    a, b = check_option("shardings", given), check_option("shardings", given)
    assert a == b and hash(a) == hash(b) and a.tree == given
    assert check_option("shardings", "data,None; None,model", text=True).tree == (
        P("data", None),
        P(None, "model"),
    )
    with pytest.raises(TypeError, match="PartitionSpecs, NamedShardings or None"):
        check_option("shardings", ("data",))


def test_placement_turns_arrays_into_sharded_shapes_and_leaves_the_rest():
    mesh = jax.make_mesh((1,), ("data",))
    params = {"w": np.ones((4, 2), np.float32), "b": jax.ShapeDtypeStruct((2,), np.float32)}
    (placed, n, x), kwargs = placement.place(
        (params, 3, np.ones((8, 4), np.float32)),
        {},
        mesh,
        ({"w": P(None, "data"), "b": None}, None, P("data")),
    )
    assert isinstance(placed["w"], jax.ShapeDtypeStruct) and placed["w"].sharding.spec == P(
        None, "data"
    )
    assert placed["b"].sharding.spec == P() and n == 3 and x.sharding.spec == P("data")
    assert kwargs == {}


def test_placement_names_the_argument_and_the_axis_it_lacks():
    mesh = jax.make_mesh((1,), ("data",))
    with pytest.raises(
        placement.PlacementError, match="argument 0 is sharded over mesh axis 'model'"
    ):
        placement.place((np.ones(4),), {}, mesh, (P("model"),))
    with pytest.raises(placement.PlacementError, match="2 entries for a call with 1"):
        placement.place((np.ones(4),), {}, mesh, (None, None))
    with pytest.raises(placement.PlacementError, match="keyword argument\\(s\\) 'y'"):
        placement.place((), {"x": np.ones(4)}, mesh, {"y": P()})


def test_a_mesh_without_a_target_is_made_of_this_machines_devices():
    devices = len(jax.devices())
    report = olympus_jupyter.inspect(
        lambda x: x * 2,
        np.ones((devices * 2, 3), np.float32),
        mesh={"data": devices},
        shardings=(P("data"),),
        cache=False,
    )
    assert report.ok and report.target is None and report.device_memory() is None
    assert report.platforms == (jax.default_backend(),)
    with pytest.raises(StagingError, match=f"this machine has {devices}"):
        olympus_jupyter.inspect(lambda x: x, np.ones(4), mesh={"data": devices + 1}, cache=False)


def test_platform_and_target_must_agree():
    with pytest.raises(StagingError, match="platform=cpu and target='v5e:2x2' disagree"):
        olympus_jupyter.inspect(lambda x: x, np.ones(4), platform="cpu", target="v5e:2x2")


def test_a_stage_given_already_placed_cannot_take_a_target():
    lowered = jax.jit(lambda x: x).lower(np.ones(4))
    with pytest.raises(StagingError, match="already placed on its devices"):
        olympus_jupyter.inspect(lowered, target="v5e:2x2")


V5E = {
    "title": "TPU v5e (TPU v5 lite), 4 chips, compiled here without one",
    "device_kind": "TPU v5 lite",
    "hbm_bytes": 16 * GiB,
}
MEMORY = {
    "argument_size_in_bytes": 3 * GiB,
    "output_size_in_bytes": GiB,
    "alias_size_in_bytes": GiB,
    "temp_size_in_bytes": 2 * GiB,
    "generated_code_size_in_bytes": 0,
    "peak_memory_in_bytes": 0,
}


def test_will_it_fit_names_each_figure_by_what_measured_it():
    by_analysis = device_memory(V5E, MEMORY, None, None)
    assert by_analysis["peak_bytes"] == 5 * GiB and by_analysis["fits"] is True
    assert by_analysis["headroom_bytes"] == 11 * GiB
    assert "memory_analysis()" in memory_words(by_analysis)
    live = device_memory(V5E, MEMORY, {"peak": {"bytes": 20 * GiB}}, None)
    assert live["fits"] is False and live["peak_source"] == "live (buffer assignment)"
    assert memory_words(live) == (
        "does not fit: 20.0 GiB of 16.0 GiB per device (live (buffer assignment)): cut 4.0 GiB"
    )
    unknown = device_memory({"title": "x", "device_kind": "TPU v9"}, MEMORY, None, None)
    assert unknown["fits"] is None and "not known" in memory_words(unknown)


def test_a_program_xla_refused_says_how_much_to_cut_and_its_biggest_buffer():
    message = (
        "RESOURCE_EXHAUSTED: Ran out of memory on HBM, the total memory required for HLO "
        "temporaries (24.00G) exceeds available HBM (15.75G)."
    )
    largest = [
        {
            "label": "add.3",
            "bytes": 8 * GiB,
            "shape": "f32[2,1024,1024,1024]",
            "kind": "temporary",
            "lines": [["/home/me/model.py", 6]],
        }
    ]
    answer = device_memory(V5E, None, None, message, largest=largest)
    assert answer["fits"] is False and answer["required_bytes"] == 24 * GiB
    assert answer["available_bytes"] == int(15.75 * GiB)
    assert memory_words(answer) == (
        "does not fit: needs 24.0 GiB, 15.8 GiB available per device (XLA out of memory): "
        "cut 8.2 GiB; biggest at the peak: 8.0 GiB temporary f32[2,1024,1024,1024] from line 6 "
        "(model.py)"
    )
    assert target_lines({**V5E, "memory": {"words": memory_words(answer)}})[1:] == [
        "device memory: does not fit: needs 24.0 GiB, 15.8 GiB available per device (XLA out "
        "of memory): cut 8.2 GiB",
        "biggest at the peak: 8.0 GiB temporary f32[2,1024,1024,1024] from line 6 (model.py)",
    ]
    assert target_lines({**V5E, "mesh": {"data": 4}, "memory": {"words": "x"}}) == [
        V5E["title"] + "; mesh data=4",
        "device memory: x",
    ]


def test_arguments_and_results_beyond_the_memory_never_fit():
    """libtpu 0.0.34 (JAX 0.9) compiles a program over the memory, and its dump's
    peak can read less than the arguments and results it holds at the end."""
    memory = {**MEMORY, "argument_size_in_bytes": 12 * GiB, "output_size_in_bytes": 12 * GiB}
    answer = device_memory(V5E, memory, None, None, live_bytes=13 * GiB)
    assert answer["fits"] is False and answer["peak_bytes"] == 23 * GiB
    assert answer["peak_source"].startswith("memory_analysis(): arguments + outputs")
    small = device_memory(V5E, MEMORY, None, None, live_bytes=1 * GiB)  # below: the dump's
    assert small["peak_bytes"] == GiB and small["fits"] is True
