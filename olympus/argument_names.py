"""The names of a compiled program's arguments: each parameter's pytree path.

A compiled program's parameters are the leaves of the pytrees it was called with,
flattened. XLA labels them as it likes (``param.136`` once a program is
sharded), so Olympus names each one by its place in the user's pytree, the path
of keys from the argument down to the leaf, joined with ``/``:
``params/decoder/encoderdecoderblock_0/MlpBlock_0/Dense_0/kernel``.

Why ``/``: it is how flax prints module paths (and the module tree of a report
reads the same), it reads alike for dict keys, sequence indices and attributes,
and it has none of :func:`jax.tree_util.keystr`'s brackets and quotes, which
make a deep path hard to read (``params['params']['decoder']...``). A dict key
holding a ``/`` itself reads as two keys; the raw name JAX gave stays in
:attr:`EntryParameter.jax_name`.

Where the names come from, all public:

* JAX names each argument leaf when it lowers a function (the Python parameter's
  name, then :func:`~jax.tree_util.keystr` of the path below it, static arguments
  left out: ``state[0].mu['params']['Dense_0']['bias']``) and puts that name in
  the StableHLO ``main`` function's argument locations. XLA carries it into the
  compiled program, as the ``op_name`` of each entry ``parameter``'s metadata,
  sharded or not (JAX 0.9 to 0.12). :func:`entry_parameters` reads it from the
  optimized HLO text, keyed by parameter number: no mapping to work out, and the
  arguments JAX pruned (unused, ``keep_unused=False``) are not there at all.
* Where a parameter has no such name, :func:`fallback_names` makes one from
  the public ``args_info`` pytree (:func:`jax.tree_util.tree_flatten_with_path`),
  leaving out the arguments the program does not take (``None`` in the public
  ``Compiled.input_shardings``), in the order of the program's
  :func:`argument_parameters` (its parameters but the tokens of ordered
  effects): ``args/0/params/...`` for a positional argument (numbered among the
  non-static ones: its Python name is not public), ``c/...`` for a keyword.

>>> readable("state[0].mu['params']['Dense_0']['bias']")
'state/0/mu/params/Dense_0/bias'
>>> hlo = '''ENTRY %main (p: f32[2]) -> f32[2] {
...   %param.7 = f32[2]{0} parameter(0), metadata={op_name="p[\\\\'w\\\\']"}
...   ROOT %n = f32[2]{0} negate(%param.7)
... }'''
>>> entry_parameters(hlo)[0]
EntryParameter(number=0, label='param.7', type='f32[2]{0}', name='p/w', jax_name="p['w']")
"""

from __future__ import annotations

import codecs
import dataclasses
import re
from collections.abc import Sequence
from typing import Any

__all__ = [
    "EntryParameter",
    "readable",
    "unescape",
    "keypath_name",
    "entry_parameters",
    "parameter_names",
    "argument_parameters",
    "input_names",
    "fallback_names",
    "flat_input_names",
]

# One step of a JAX argument name: [3], ['key'] / ["key"], .attr, or [<flat index 2>].
_STEP = re.compile(
    r"\[(-?\d+)\]"
    r"|\['((?:[^'\\]|\\.)*)'\]"
    r'|\["((?:[^"\\]|\\.)*)"\]'
    r"|\.([A-Za-z_][\w]*)"
    r"|\[<flat index (\d+)>\]"
)
_HEAD = re.compile(r"[^\[\].]+")


def unescape(text: str) -> str:
    """A string as HLO text or a Python literal prints it, without its escapes.

    >>> unescape("p[\\\\'w\\\\']")
    "p['w']"
    """
    if "\\" not in text:
        return text
    try:
        return codecs.decode(text.encode("latin-1", "backslashreplace"), "unicode_escape")
    except (UnicodeDecodeError, ValueError):
        return text


def readable(jax_name: str) -> str:
    """JAX's name of one argument leaf (the Python parameter's name, then
    :func:`~jax.tree_util.keystr` of the path below it) as keys joined with ``/``.
    What cannot be read as keys is kept as it is, in one piece.

    >>> readable("params['params']['decoder']['Dense_0']['kernel']")
    'params/params/decoder/Dense_0/kernel'
    >>> readable("x"), readable("args[0][1]"), readable("opt.count"), readable("")
    ('x', 'args/0/1', 'opt/count', '')
    >>> readable("f[weird")
    'f/[weird'
    """
    m = _HEAD.match(jax_name)
    if m is None:
        return jax_name
    parts = [m.group(0)]
    at = m.end()
    while at < len(jax_name):
        step = _STEP.match(jax_name, at)
        if step is None:
            parts.append(jax_name[at:])
            break
        index, single, double, attr, flat = step.groups()
        if single is not None or double is not None:
            parts.append(unescape(single if single is not None else double))
        else:
            parts.append(next(p for p in (index, attr, flat) if p is not None))
        at = step.end()
    return "/".join(parts)


def keypath_name(path: Sequence[Any]) -> str:
    """A :func:`jax.tree_util.tree_flatten_with_path` key path as keys joined with
    ``/`` (dict keys, sequence indices, attribute names, flattened indices).

    >>> import jax
    >>> [keypath_name(p) for p, _ in jax.tree_util.tree_flatten_with_path(
    ...     {"w": [1, 2], "b": 3})[0]]
    ['b', 'w/0', 'w/1']
    """
    parts = []
    for key in path:
        for attr in ("key", "idx", "name"):
            if hasattr(key, attr):
                parts.append(str(getattr(key, attr)))
                break
        else:
            parts.append(str(key))
    return "/".join(parts)


@dataclasses.dataclass(frozen=True)
class EntryParameter:
    """One parameter of a compiled program's entry computation: its ``number``, the
    ``label`` XLA gave it, its HLO ``type``, and its pytree ``name``
    (:func:`readable` of ``jax_name``, the name the program carries; both ``None``
    when it carries none)."""

    number: int
    label: str
    type: str
    name: str | None
    jax_name: str | None


#   %param.2 = f32[8,32]{1,0} parameter(1), sharding={...}, metadata={op_name="x"}
_PARAMETER = re.compile(r"^\s*(?:ROOT\s+)?%?([^\s=]+) = (.*?)\s*parameter\((\d+)\)(.*)$")
_OP_NAME = re.compile(r'op_name="((?:[^"\\]|\\.)*)"')


def entry_parameters(hlo_text: str) -> dict[int, EntryParameter]:
    """The parameters of the entry computation of an HLO module's text (the
    optimized HLO of ``Compiled.as_text()``), by number, each with the pytree name
    the program carries in its metadata (``op_name``).

    >>> hlo = '''%fused (param_0: f32[2]) -> f32[2] {
    ...   %param_0 = f32[2]{0} parameter(0), metadata={op_name="neg"}
    ... }
    ... ENTRY %main (x: f32[2]) -> f32[2] {
    ...   %x.1 = f32[2]{0} parameter(0)
    ... }'''
    >>> entry_parameters(hlo)
    {0: EntryParameter(number=0, label='x.1', type='f32[2]{0}', name=None, jax_name=None)}
    """
    out: dict[int, EntryParameter] = {}
    at = hlo_text.find("\nENTRY ")
    if at < 0:
        if not hlo_text.startswith("ENTRY "):
            return out
        at = 0
    for line in hlo_text[at + 1 :].split("\n")[1:]:
        if line.startswith("}"):
            break
        if "parameter(" not in line:
            continue
        m = _PARAMETER.match(line)
        if m is None:
            continue
        op_name = _OP_NAME.search(m.group(4))
        jax_name = unescape(op_name.group(1)) if op_name else None
        number = int(m.group(3))
        out[number] = EntryParameter(
            number,
            m.group(1),
            m.group(2),
            readable(jax_name) if jax_name else None,
            jax_name,
        )
    return out


def fallback_names(compiled) -> list[str]:
    """Names for a compiled program whose parameters carry none: each argument
    leaf's path in the public ``args_info`` pytree (``args/0/...`` for a
    positional argument, the keyword for a keyword one), in the order the program
    takes them (pruned arguments, ``None`` in ``Compiled.input_shardings``,
    skipped): the order of its :func:`argument_parameters`. ``[]`` where that is
    not known.

    >>> import olympus, numpy as np
    >>> compiled = olympus.jit(lambda a, unused, b: a["w"] + b).trace(
    ...     {"w": np.ones(2)}, 1.0, b=np.ones(2)).lower().compile()
    >>> fallback_names(compiled)
    ['args/0/w', 'b']
    """
    return [n for n in flat_input_names(compiled) or () if n is not None]


def flat_input_names(compiled) -> list[str | None] | None:
    """Per flat argument leaf of ``compiled`` (an Olympus or JAX ``Compiled``), in
    the order of ``Compiled.input_shardings``' leaves (``None`` included), its name
    from the ``args_info`` pytree, or ``None`` for an argument the program does not
    take (pruned); ``None`` when the program keeps no such trees."""
    import jax

    try:
        shardings = compiled.input_shardings
        args_info = compiled.args_info
    except Exception:  # noqa: BLE001 - a Compiled without its signature
        return None
    try:
        leaves = jax.tree_util.tree_leaves(shardings, is_leaf=lambda x: x is None)
        paths = [p for p, _ in jax.tree_util.tree_flatten_with_path(args_info)[0]]
    except Exception:  # noqa: BLE001 - trees of another shape: no names
        return None
    if len(leaves) != len(paths):
        return None
    out: list[str | None] = []
    for path, sharding in zip(paths, leaves):
        if sharding is None:
            out.append(None)
            continue
        top, rest = (path[0], path[1:]) if path else (None, ())
        if getattr(top, "idx", None) == 0 and rest:  # a positional argument
            out.append("/".join(["args", keypath_name(rest)]))
        else:
            out.append(keypath_name(rest) if rest else keypath_name(path))
    return out


def argument_parameters(hlo_text: str) -> list[EntryParameter]:
    """The entry parameters that are the program's arguments, in order: all but
    the tokens JAX adds for ordered effects (``token[]``, first).

    >>> hlo = '''ENTRY %m (t: token[], a: f32[]) -> f32[] {
    ...   %Arg_0.1 = token[] parameter(0)
    ...   %a = f32[] parameter(1), metadata={op_name="a"}
    ... }'''
    >>> [(p.number, p.name) for p in argument_parameters(hlo)]
    [(1, 'a')]
    """
    found = entry_parameters(hlo_text)
    return [found[k] for k in sorted(found) if not found[k].type.startswith("token[")]


def parameter_names(hlo_text: str, fallback: Sequence[str] = ()) -> dict[int, str]:
    """The pytree name of each named parameter of an optimized HLO module, by
    number: the name it carries, else that of its place among the arguments in
    ``fallback`` (:func:`fallback_names`; used only where it names as many
    arguments as the module takes).

    >>> parameter_names('ENTRY %m (a: f32[]) -> f32[] {\\n  %p = f32[] parameter(0)\\n}',
    ...                 ["args/0"])
    {0: 'args/0'}
    """
    arguments = argument_parameters(hlo_text)
    aligned = len(fallback) == len(arguments)
    out = {}
    for k, p in enumerate(arguments):
        name = p.name or (fallback[k] if aligned else None)
        if name:
            out[p.number] = name
    return out


def input_names(hlo_text: str, fallback: Sequence[str] = ()) -> list[str | None]:
    """The pytree name of each argument the program takes, in order (as
    ``Compiled.input_shardings`` lists its leaves, pruned ones left out): those
    of :func:`parameter_names` (``None`` where not known); ``fallback`` itself for
    a module it cannot read.

    >>> input_names('ENTRY %m (t: token[], a: f32[]) -> f32[] {\\n'
    ...             '  %t = token[] parameter(0)\\n  %p = f32[] parameter(1)\\n}', ["args/0"])
    ['args/0']
    """
    arguments = argument_parameters(hlo_text)
    if not arguments:
        return list(fallback)
    names = parameter_names(hlo_text, fallback)
    return [names.get(p.number) for p in arguments]
