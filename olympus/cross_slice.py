"""Collectives across the slices of a multi-slice TPU job, as the compiled HLO says them.

Between the slices of a multi-slice job (``olympus.hardware.target("v5e:2x2",
num_slices=2)``) XLA's TPU compiler writes no collective instruction: an
``all-reduce`` over devices of several slices becomes one within each slice and a
``send`` and a ``recv`` (each with its ``-done``) that the multi-slice
("megascale") runtime carries over the data-center network. Their frontend
attributes say what the pair does (``_xla_megascale_transfer_type``:
``ALL_REDUCE``, ``ALL_GATHER``, ``ALL_TO_ALL``, ``REDUCE_SCATTER``, ``ONE_TO_ONE``),
the name both halves share (``_xla_host_transfer_rendezvous``) and between whom
(``_xla_megascale_target``: explicit groups of global device ids such as
``{{100000,200003},...}``, source-target pairs ``{{100000->200003},...}``, or slices by
devices ``"{1,2}x{0:3}"``). :func:`transfer` reads them from an instruction's text.

>>> text = ('%send = (f32[1,1,128]{2,1,0}, u32[], token[]) send(%x, %after-all), '
...         'frontend_attributes={_xla_host_transfer_handler_name="xla_megascale_runtime",'
...         '_xla_host_transfer_rendezvous="all-reduce_0",'
...         '_xla_megascale_target={{100000,200003},{200000,100003}},'
...         '_xla_megascale_transfer_type="ALL_REDUCE"}')
>>> is_cross_slice(text)
True
>>> transfer(text)
Transfer(collective='all-reduce', rendezvous='all-reduce_0', target='{{100000,200003},{200000,100003}}')
"""

from __future__ import annotations

import re
from typing import NamedTuple

__all__ = ["Transfer", "transfer", "is_cross_slice", "CROSS_SLICE", "OPCODES"]

#: What the name of a collective across slices ends with: ``all-reduce (cross-slice)``.
CROSS_SLICE = " (cross-slice)"

#: The instructions that carry a collective across slices (with other attributes,
#: the same opcodes move data to and from the host).
OPCODES = frozenset({"send", "recv", "send-done", "recv-done"})

_RUNTIME = 'handler_name="xla_megascale_runtime"'
#: A transfer's kind as the collective it does.
_COLLECTIVES = {
    "ALL_REDUCE": "all-reduce",
    "ALL_GATHER": "all-gather",
    "ALL_TO_ALL": "all-to-all",
    "REDUCE_SCATTER": "reduce-scatter",
    "ONE_TO_ONE": "collective-permute",
}
_KIND = re.compile(r'_xla_megascale_transfer_type="(\w+)"')
_RENDEZVOUS = re.compile(r'_xla_host_transfer_rendezvous="([^"]*)"')
_TARGET = re.compile(r'_xla_megascale_target=("[^"]*"|\{\{.*?\}\})')


class Transfer(NamedTuple):
    """What a cross-slice ``send`` or ``recv`` says of its collective: which one it
    is (``all-reduce``...; a kind not known here, lower-cased), the rendezvous its
    two halves share and its target as printed (``None`` where not said)."""

    collective: str
    rendezvous: str | None
    target: str | None


def is_cross_slice(text: str) -> bool:
    """Whether an instruction (its text) is handled by the multi-slice runtime: a
    half of a collective across slices, or its ``-done``."""
    return _RUNTIME in text


def transfer(text: str) -> Transfer:
    """The :class:`Transfer` of a cross-slice ``send``/``recv`` (its text)."""
    kind = _KIND.search(text)
    name = kind.group(1) if kind else "TRANSFER"
    rendezvous = _RENDEZVOUS.search(text)
    target = _TARGET.search(text)
    return Transfer(
        _COLLECTIVES.get(name, name.lower().replace("_", "-")),
        rendezvous.group(1) if rendezvous else None,
        target.group(1) if target else None,
    )
