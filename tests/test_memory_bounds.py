"""What a long session leaves behind: caches hold no user function alive, and the
memory they keep is bounded."""

import gc
import weakref

import olympus.numpy as jnp
from olympus_jupyter import ReportCache, inspect


def make_function(k):
    def f(x):
        return jnp.sin(x) * k

    return f


def test_cached_reports_keep_no_function_alive():
    cache = ReportCache(size=8)
    f = make_function(1)
    alive = weakref.ref(f)
    first = inspect(f, jnp.ones(3), cache=cache)
    assert inspect(f, jnp.ones(3), cache=cache) is first  # still a cache hit
    del f
    gc.collect()
    assert alive() is None


def test_many_distinct_functions_stay_within_the_cache_size():
    cache = ReportCache(size=8)
    kept, refs = [], []
    for k in range(40):
        f = make_function(k)
        kept.append(f)  # alive: their reports may be asked for again
        refs.append(weakref.ref(f))
        inspect(f, jnp.ones(2), cache=cache)
    assert len(cache) == 8
    del f
    kept.clear()
    gc.collect()
    assert sum(r() is not None for r in refs) == 0  # the cache keeps no function alive
    # The reports of functions that are gone are forgotten at the next report.
    again = make_function(99)
    inspect(again, jnp.ones(2), cache=cache)
    assert len(cache) == 1


def test_a_function_defined_again_leaves_one_report_behind():
    # A cell that defines f and inspects it, run five times: one report stays.
    cache = ReportCache(size=8)
    for k in range(5):
        f = make_function(k)
        inspect(f, jnp.ones(2), cache=cache)
    assert len(cache) == 1


def test_the_inspectors_history_is_bounded_in_entries_and_bytes():
    from olympus_jupyter.frontends.inspector import Inspector

    def layer(w, x):
        return jnp.tanh(x @ w)

    ins = Inspector(layer, jnp.ones((4, 4)), jnp.ones((2, 4)), history_size=5)
    for rows in range(3, 15):
        ins.editors[1].value = f"f32[{rows},4]"
    assert len(ins.history) == 5
    assert ins.history[-1].label.endswith("f32[14,4]")  # the current one stays
    assert len(ins.compare_with.options) == 4
    one = ins.history[-1].size
    small = Inspector(layer, jnp.ones((4, 4)), jnp.ones((2, 4)), history_bytes=3 * one)
    for rows in range(3, 10):
        small.editors[1].value = f"f32[{rows},4]"
    assert 1 <= len(small.history) <= 3
    assert sum(e.size for e in small.history) <= 3 * one + one  # within one entry's slack


def test_what_jax_keeps_for_a_specialization_goes_when_the_stage_cache_lets_it_go():
    """JAX's caches hold every trace, lowering and executable of a function while the
    function lives; an inspector keeps its function alive, so each specialization is
    staged through a function of its own that dies with the cache's entry."""
    from olympus_jupyter.staging.cache import StageCache
    from olympus_jupyter.staging.specialization import Specialization

    def f(x):
        return jnp.sin(x) * 2

    cache = StageCache(f, size=2)
    staged = []
    for n in range(1, 5):
        x = jnp.ones(n)
        spec = Specialization.of(cache.wrapped.fun, (x,))
        run = cache.stage(spec, (x,))
        assert run.compiled is not None and run.name == "f"
        staged.append(weakref.ref(run.wrapped.fun))
        del run
    gc.collect()
    assert [ref() is None for ref in staged] == [True, True, False, False]


def test_the_inspector_history_keeps_no_rendered_forms():
    from olympus_jupyter.frontends.inspector import Inspector

    ins = Inspector(lambda x: jnp.sin(x) * 2, jnp.ones(3))
    ins.editors[-1].value = "f32[5]"
    assert len(ins.history) == 2
    assert all(entry.report._memo == {} for entry in ins.history)
    assert ins.history[-1].report.provenance is ins.report.provenance  # data shared, not copied
