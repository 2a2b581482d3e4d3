"""The olympuspr stage: every equation, nested ones included, with its lines and source.

Line spans come from the pretty printer itself, not from matching text: the
program is printed from a copy whose equations carry a marker (their index)
where JAX keeps the traceback; the printer's source map then says which text
lines each marker covers. The copy prints exactly as the original does (same
variables, same shared sub-programs), so the spans fit ``Olympuspr.pretty_print()``.

>>> traced = olympus.jit(lambda x: jnp.sin(x) * jnp.cos(x)).trace(np.ones(3, np.float32))
>>> print(traced.olympuspr)
{ lambda ; a:f32[3]. let
    b:f32[3] = sin a
    c:f32[3] = cos a
    d:f32[3] = mul b c
  in (d,) }
>>> stage = olympuspr_stage(traced.olympuspr.closed, SourceTable())
>>> [(op.name, op.lines) for op in stage.ops]
[('sin', (2, 2)), ('cos', (3, 3)), ('mul', (4, 4))]
"""

from __future__ import annotations

from olympus import jax_compat

from olympus import naming
from olympus.provenance.parts import Op, Stage
from olympus.provenance.sources import SourceTable, compose

__all__ = ["olympuspr_stage", "eqn_frames"]

_Closed = jax_compat.ClosedJaxpr
_Jaxpr = jax_compat.Jaxpr

#: The frames of an equation's traceback, innermost first, as raw tuples; only those
#: whose file ``keep(path)`` accepts, if given (:func:`olympus.jax_compat.traceback_frames`).
eqn_frames = jax_compat.traceback_frames


class _Walk:
    """Visits every equation once (pre-order) and builds the marked copy."""

    def __init__(self):
        self.eqns: list = []  # original equations, by op index
        self.parents: list = []  # parent op index, by op index
        self._memo: dict = {}  # id of a visited program -> its marked copy
        self._keep: list = []  # keeps visited jaxprs alive while ids are keys

    def jaxpr(self, jaxpr: _Jaxpr, parent: int | None) -> _Jaxpr:
        key = id(jaxpr)
        done = self._memo.get(key)
        if done is not None:
            return done
        self._keep.append(jaxpr)
        new_eqns = []
        for eqn in jaxpr.eqns:
            k = len(self.eqns)
            self.eqns.append(eqn)
            self.parents.append(parent)
            params = eqn.params
            new_params = None
            for name, value in params.items():
                new_value = self.param(value, k)
                if new_value is not value:
                    if new_params is None:
                        new_params = dict(params)
                    new_params[name] = new_value
            # The traceback slot carries the marker: it is what the printer's
            # source map reports for the equation's text.
            new_eqns.append(
                eqn.replace(
                    params=new_params, source_info=jax_compat.marked_source_info(eqn.source_info, k)
                )
            )
        new = jaxpr.replace(eqns=new_eqns)
        self._memo[key] = new
        return new

    def param(self, value, parent: int):
        # The same sub-programs JAX's printer looks for (core.jaxprs_in_params).
        # JAX's printer names a sub-program shared by several equations once, by
        # identity: a shared one must stay one object in the marked copy too.
        if isinstance(value, _Jaxpr):  # on JAX 0.12 a ClosedJaxpr is a Jaxpr
            return self.jaxpr(value, parent)
        if isinstance(value, _Closed):
            key = ("closed", id(value))
            done = self._memo.get(key)
            if done is None:
                self._keep.append(value)
                done = self._memo[key] = _Closed(self.jaxpr(value.jaxpr, parent), value.consts)
            return done
        if (
            isinstance(value, tuple)
            and value
            and any(isinstance(v, (_Closed, _Jaxpr)) for v in value)
        ):
            return tuple(
                self.param(v, parent) if isinstance(v, (_Closed, _Jaxpr)) else v for v in value
            )
        return value


def _spans(source_map: list, count: int) -> list[tuple[int, int] | None]:
    first: list[int | None] = [None] * count
    last = [0] * count
    for lineno, regions in enumerate(source_map, start=1):
        for _, _, region in regions:
            marker = jax_compat.source_map_index(region)
            if marker is not None and 0 <= marker < count:
                if first[marker] is None:
                    first[marker] = lineno
                last[marker] = lineno
    return [None if f is None else (f, last[k]) for k, f in enumerate(first)]


def print_with_spans(closed) -> tuple[str, _Walk, list[tuple[int, int] | None]]:
    """The program's text as ``Olympuspr.pretty_print()`` gives it (without color),
    the equations in pre-order, and each equation's line span."""
    jaxpr = closed.jaxpr if isinstance(closed, _Closed) else closed
    walk = _Walk()
    marked = walk.jaxpr(jaxpr, None)
    text, source_map = jax_compat.pp_with_source_map(
        marked,
        source_info=False,
        print_shapes=True,
        custom_pp_eqn_rules=True,
        name_stack=False,
        print_effects=False,
    )
    return naming.rename_param_names(text), walk, _spans(source_map, len(walk.eqns))


def _short_type(aval, known: dict) -> str:
    """:func:`olympus.jax_compat.aval_short_text`, made once per distinct aval."""
    try:
        text = known.get(aval)
    except TypeError:  # an aval that cannot be hashed
        return jax_compat.aval_short_text(aval)
    if text is None:
        text = known[aval] = jax_compat.aval_short_text(aval)
    return text


def olympuspr_stage(closed, table: SourceTable, *, name: str = "olympuspr") -> Stage:
    """The olympuspr stage of a ``ClosedJaxpr`` (or ``Jaxpr``): every equation,
    with primitive, output types, line span, source location and name stack."""
    text, walk, spans = print_with_spans(closed)
    own_frames: dict[int, tuple] = {}
    stacks: list[tuple] = []  # each equation's full user call stack
    interned: dict[int, int | None] = {}  # id of a stack -> its index in the table
    types: dict = {}  # aval -> its short text
    ops = []
    for k, eqn in enumerate(walk.eqns):
        info = eqn.source_info
        tb = info.traceback
        if tb is None:
            own: tuple = ()
        else:
            cached = own_frames.get(id(tb))
            if cached is None:
                cached = own_frames[id(tb)] = tuple(eqn_frames(tb, table.is_user_file))
            own = cached
        parent = walk.parents[k]
        stack = own if parent is None else compose(own, stacks[parent])
        stacks.append(stack)
        loc = interned.get(id(stack), -1)
        if loc == -1:
            loc = interned[id(stack)] = table.intern(stack)
        ops.append(
            Op(
                name,
                k,
                eqn.primitive.name,
                tuple(_short_type(v.aval, types) for v in eqn.outvars),
                spans[k],
                loc,
                jax_compat.name_stack_text(info),
                parent,
            )
        )
    notes: tuple[str, ...] = ()
    if any(s is None for s in spans):
        notes = ("some equations were not found in the printed text",)
    return Stage(name, text, tuple(ops), notes=notes)
