"""The parameters a collective serves (``olympus.collective_parameters``), on small
HLO modules written out: a combined all-reduce named element by element, the
asynchronous halves, and the cases where nothing can be told exactly and nothing
is said. The 8-device programs of the real-model corpus check it on real steps
(``tests/test_real_model_answers.py``)."""

from __future__ import annotations

from olympus.collective_parameters import output_names, served_parameters

#: Outputs of an adamw-like step: two parameters, their ``mu``, and the loss.
NAMES = [
    "result/0/params/a",
    "result/0/params/b",
    "result/1/mu/a",
    "result/1/mu/b",
    "result/2",
]


def module(body: str) -> list[str]:
    return (
        "HloModule m\n\n%add (x: f32[], y: f32[]) -> f32[] {\n  ROOT %s = f32[] add(%x, %y)\n}\n\n"
        "ENTRY %main (pa: f32[4], pb: f32[2], ma: f32[4], mb: f32[2], ga: f32[4], "
        "gb: f32[2], l: f32[]) -> (f32[4], f32[2], f32[4], f32[2], f32[]) {\n"
        "  %pa = f32[4]{0} parameter(0)\n  %pb = f32[2]{0} parameter(1)\n"
        "  %ma = f32[4]{0} parameter(2)\n  %mb = f32[2]{0} parameter(3)\n"
        "  %ga = f32[4]{0} parameter(4)\n  %gb = f32[2]{0} parameter(5)\n"
        "  %l = f32[] parameter(6)\n" + body + "\n}\n"
    ).split("\n")


def test_a_combined_all_reduce_names_each_parameter_it_serves():
    lines = module(
        "  %ar = (f32[4]{0}, f32[2]{0}, f32[]) all-reduce(%ga, %gb, %l), to_apply=%add\n"
        "  %g0 = f32[4]{0} get-tuple-element(%ar), index=0\n"
        "  %g1 = f32[2]{0} get-tuple-element(%ar), index=1\n"
        "  %g2 = f32[] get-tuple-element(%ar), index=2\n"
        "  %na = f32[4]{0} subtract(%pa, %g0)\n  %nb = f32[2]{0} subtract(%pb, %g1)\n"
        "  %xa = f32[4]{0} add(%ma, %g0)\n  %xb = f32[2]{0} add(%mb, %g1)\n"
        "  ROOT %t = (f32[4]{0}, f32[2]{0}, f32[4]{0}, f32[2]{0}, f32[]) "
        "tuple(%na, %nb, %xa, %xb, %g2)"
    )
    assert served_parameters(lines, NAMES) == {"ar": ("a", "b", "result/2")}


def test_an_async_pair_is_read_at_its_done():
    lines = module(
        "  %s = ((f32[4]{0}), f32[4]{0}) all-reduce-start(%ga), to_apply=%add\n"
        "  %d = f32[4]{0} all-reduce-done(%s)\n"
        "  %na = f32[4]{0} subtract(%pa, %d)\n  %xa = f32[4]{0} add(%ma, %d)\n"
        "  ROOT %t = (f32[4]{0}, f32[2]{0}, f32[4]{0}, f32[2]{0}, f32[]) "
        "tuple(%na, %pb, %xa, %mb, %l)"
    )
    assert served_parameters(lines, NAMES) == {"s": ("a",)}


def test_a_value_feeding_outputs_of_no_one_leaf_names_nothing():
    """One output is named whole; ``a`` and ``b`` share no trailing path; outputs
    sharing ``w`` are not all the outputs ending with ``w``."""
    body = (
        "  %g = f32[4]{0} all-reduce(%ga), to_apply=%add\n"
        "  %h = f32[2]{0} all-reduce(%gb), to_apply=%add\n"
        "  %na = f32[4]{0} subtract(%pa, %g)\n"
        "  %xb = f32[2]{0} add(%mb, %h)\n"
        "  ROOT %t = (f32[4]{0}, f32[2]{0}, f32[4]{0}, f32[2]{0}, f32[]) "
        "tuple(%na, %pb, %na, %xb, %l)"
    )
    lines = module(body)
    # g feeds outputs 0 and 2, params/a and mu/b: no trailing path shared; h feeds
    # output 3 alone.
    names = ["result/0/params/a", "result/0/params/b", "result/1/mu/b", "result/1/mu/a", "r"]
    assert served_parameters(lines, names) == {"h": ("result/1/mu/a",)}
    assert served_parameters(lines, ["result/0/x/w", "p", "result/1/y/w", "result/2/w", "r"]) == {
        "h": ("result/2/w",)
    }  # g: x/w and y/w share ``w``, but so does result/2/w, which it does not feed


def test_a_multi_output_instruction_not_followed_element_by_element_names_nothing():
    lines = module(
        "  %g = f32[4]{0} all-reduce(%ga), to_apply=%add\n"
        "  %f = (f32[4]{0}, f32[4]{0}) fusion(%pa, %ma, %g), kind=kLoop, calls=%fused\n"
        "  %na = f32[4]{0} get-tuple-element(%f), index=0\n"
        "  %xa = f32[4]{0} get-tuple-element(%f), index=1\n"
        "  ROOT %t = (f32[4]{0}, f32[2]{0}, f32[4]{0}, f32[2]{0}, f32[]) "
        "tuple(%na, %pb, %xa, %mb, %l)"
    )
    assert served_parameters(lines, NAMES) == {}


def test_a_forward_collective_reaching_the_loss_and_the_parameters_names_nothing():
    lines = module(
        "  %g = f32[4]{0} all-gather(%pa), dimensions={0}\n"
        "  %na = f32[4]{0} subtract(%pa, %g)\n  %xa = f32[4]{0} add(%ma, %g)\n"
        "  %r = f32[] reduce(%g, %l), dimensions={0}, to_apply=%add\n"
        "  ROOT %t = (f32[4]{0}, f32[2]{0}, f32[4]{0}, f32[2]{0}, f32[]) "
        "tuple(%na, %pb, %xa, %mb, %r)"
    )
    assert served_parameters(lines, NAMES) == {}


def test_without_names_or_with_outputs_not_lined_up_nothing_is_said():
    lines = module(
        "  %g = f32[4]{0} all-reduce(%ga), to_apply=%add\n"
        "  ROOT %t = (f32[4]{0}, f32[4]{0}) tuple(%g, %g)"
    )
    assert served_parameters(lines, NAMES) == {}
    assert served_parameters(lines, None) == {}


def test_output_names_are_read_from_the_lowered_main():
    import jax
    import jax.numpy as jnp

    lowered = jax.jit(lambda p, x: ({"w": p["w"] * x}, x.sum())).lower(
        {"w": jnp.ones(3)}, jnp.ones(3)
    )
    assert output_names(lowered.as_text()) == ["result/0/w", "result/1"]
    assert output_names("module {}") is None
