"""Will it fit? A report's program against the memory of the devices it was compiled for.

:func:`device_memory` answers from a report's data: the target's devices (a
:class:`olympus.hardware.Target`'s ``as_json()``, kept as ``report.target``)
with their memory from :mod:`olympus.chips` (compile-only devices report none),
and the program's peak per device, each figure named by what measured it:

* the live-range peak of XLA's buffer assignment, what is live at once,
  temporaries included, in the device's own memory (HBM: on TPU the live-range
  peak of the ``costs`` stage adds the on-chip memories' values too);
* else ``memory_analysis()``'s figures: arguments + outputs + temporaries −
  aliased (XLA:TPU gives no ``peak_memory_in_bytes``), plus the generated code;
* for a program XLA refused, the figures of its out-of-memory error (the
  memory required and the memory available);
* where the arguments and results alone exceed the memory and the peak read says
  less (libtpu 0.0.34, JAX 0.9, compiles such a program), those.

>>> target = {"device_kind": "TPU v5 lite", "hbm_bytes": 16 * 2**30, "title": "TPU v5e"}
>>> fit = device_memory(target, {"argument_size_in_bytes": 2**30, "output_size_in_bytes": 0,
...     "alias_size_in_bytes": 0, "temp_size_in_bytes": 2**30,
...     "generated_code_size_in_bytes": 0, "peak_memory_in_bytes": 0}, None, None)
>>> fit["fits"], fit["peak_bytes"] == 2 * 2**30, fit["headroom_bytes"] == 14 * 2**30
(True, True, True)
>>> memory_words(fit)
'fits: 2.0 GiB of 16.0 GiB per device (memory_analysis(): arguments + outputs + temporaries), 14.0 GiB free'
>>> oom = "RESOURCE_EXHAUSTED: Ran out of memory in memory space hbm. ... the total memory required for HLO temporaries (31.33G) exceeds available HBM (15.75G)"
>>> memory_words(device_memory(target, None, None, oom))
'does not fit: needs 31.3 GiB, 15.8 GiB available per device (XLA out of memory): cut 15.6 GiB'
"""

from __future__ import annotations

import os
import re
from collections.abc import Mapping, Sequence
from typing import Any

from olympus_jupyter.report.cost_names import format_bytes
from olympus_jupyter.report.peak_words import LIVE, live_peak

__all__ = ["device_memory", "memory_words", "out_of_memory", "target_lines", "ANALYSED"]

#: How the live-range peak in the device's own memory is named.
LIVE_HBM = "live in device memory (buffer assignment)"
#: How the arguments and results together are named, where they alone exceed the
#: memory and the peak read says less.
HELD = "memory_analysis(): arguments + outputs, more than the live-range peak read"
#: How the peak from memory_analysis() is named.
ANALYSED = "memory_analysis(): arguments + outputs + temporaries"
#: How many of the biggest buffers at the peak an answer names.
MAX_LARGEST = 8
#: What comes before the biggest buffers in the words (a line of its own in headers).
BIGGEST = "; biggest at the peak: "
#: How the figures of XLA's refusal are named.
REFUSED = "XLA out of memory"

_UNITS = {"": 1, "K": 2**10, "M": 2**20, "G": 2**30, "T": 2**40}
_USED = re.compile(
    r"Used (?P<need>[0-9.]+)(?P<nu>[KMGT]?)i?B? of (?P<have>[0-9.]+)(?P<hu>[KMGT]?)i?B? \w+"
)
_OOM = re.compile(
    r"required for (?P<what>[^(]*?)\s*\((?P<need>[0-9.]+)(?P<nu>[KMGT]?)i?B?\)\s*exceeds available "
    r"(?P<where>\w+)\s*\((?P<have>[0-9.]+)(?P<hu>[KMGT]?)i?B?\)"
)


def out_of_memory(message: str | None) -> dict[str, Any] | None:
    """The required and available bytes of XLA's out-of-memory error, or None. XLA:TPU
    words it two ways (the first since JAX 0.10's libtpu):

    >>> out_of_memory("the total memory required for HLO temporaries (1.5G) exceeds available HBM (1G)")["required_bytes"]
    1610612736
    >>> out_of_memory("RESOURCE_EXHAUSTED: ... Ran out of memory in memory space hbm. Used 16.00G of 15.75G hbm.")["available_bytes"] / 2**30
    15.75
    """
    if not message or "RESOURCE_EXHAUSTED" not in message and "exceeds available" not in message:
        return None
    match = _OOM.search(message)
    if match is not None:
        need, have, what = (match["need"], match["nu"]), (match["have"], match["hu"]), match["what"]
    else:
        match = _USED.search(message)
        if match is None:
            return None
        need, have, what = (match["need"], match["nu"]), (match["have"], match["hu"]), "the program"
    return {
        "required_bytes": int(float(need[0]) * _UNITS[need[1]]),
        "available_bytes": int(float(have[0]) * _UNITS[have[1]]),
        "what": what.strip(),
    }


def _held(memory: Mapping[str, Any] | None) -> int | None:
    """Arguments + outputs − what outputs reuse of donated arguments: memory a
    program holds at its end, whatever it needs before.

    >>> _held({"argument_size_in_bytes": 8, "output_size_in_bytes": 4, "alias_size_in_bytes": 4})
    8
    """
    if not memory:
        return None
    return int(
        memory.get("argument_size_in_bytes", 0)
        + memory.get("output_size_in_bytes", 0)
        - memory.get("alias_size_in_bytes", 0)
    )


def _analysed_peak(memory: Mapping[str, Any] | None) -> int | None:
    if not memory:
        return None
    peak = memory.get("peak_memory_in_bytes") or 0
    total = (_held(memory) or 0) + memory.get("temp_size_in_bytes", 0)
    return int(max(peak, total)) if max(peak, total) > 0 else None


def device_memory(
    target: Mapping[str, Any] | None,
    memory: Mapping[str, Any] | None,
    costs: Mapping[str, Any] | None,
    failure_message: str | None,
    live_bytes: int | None = None,
    largest: Sequence[Mapping[str, Any]] = (),
) -> dict[str, Any] | None:
    """The program's memory per device against the device's: ``device_kind``,
    ``capacity_bytes`` (None where unknown) and where it is from, ``peak_bytes``
    and what measured it (``peak_source``), ``headroom_bytes`` and ``fits``
    (None where either is unknown); for a program XLA refused, ``required_bytes``
    and ``available_bytes`` from its error, and ``fits`` False. ``live_bytes``
    is the live-range peak in the device's memory, read from the compile's dump;
    ``largest`` the biggest buffers live at the peak (``label``, ``bytes``,
    ``shape``, ``kind``, ``lines``: the user's lines that made it; ``argument``:
    the argument's pytree name), kept as they come. None for a report of this machine's devices."""
    if target is None:
        return None
    capacity = target.get("hbm_bytes")
    answer: dict[str, Any] = {
        "device_kind": target.get("device_kind"),
        "capacity_bytes": int(capacity) if capacity else None,
        "capacity_source": f"Olympus's table of chips ({target.get('chip', target.get('device_kind'))})"
        if capacity
        else "not known: compile-only devices report no memory, and Olympus has no figure",
        "largest": [dict(b) for b in largest[:MAX_LARGEST]],
    }
    refused = out_of_memory(failure_message)
    if refused is not None:
        answer.update(
            peak_bytes=refused["required_bytes"],
            peak_source=REFUSED,
            required_bytes=refused["required_bytes"],
            available_bytes=refused["available_bytes"],
            headroom_bytes=refused["available_bytes"] - refused["required_bytes"],
            fits=False,
        )
        return answer
    peak, source = live_bytes, LIVE_HBM
    if peak is None:
        peak, source = live_peak(costs), LIVE
    if peak is None:
        peak, source = _analysed_peak(memory), ANALYSED
    held = _held(memory)
    if capacity and held is not None and held > capacity and (peak is None or peak < held):
        # The arguments (which the caller keeps) and the results are in memory together
        # at the end, whatever a dump says of the peak: libtpu 0.0.34 (JAX 0.9)
        # compiles such a program and its buffer assignment shows less.
        peak, source = held, HELD
    answer.update(peak_bytes=peak, peak_source=source if peak is not None else None)
    if peak is not None and capacity:
        answer.update(headroom_bytes=int(capacity) - peak, fits=peak <= capacity)
    else:
        answer.update(headroom_bytes=None, fits=None)
    return answer


def memory_words(answer: Mapping[str, Any] | None) -> str | None:
    """The answer in one line, as every form's header writes it."""
    if answer is None:
        return None
    peak, capacity = answer.get("peak_bytes"), answer.get("capacity_bytes")
    if answer.get("peak_source") == REFUSED:
        need, have = answer["required_bytes"], answer["available_bytes"]
        return (
            f"does not fit: needs {format_bytes(need)}, {format_bytes(have)} available per "
            f"device ({REFUSED}): cut {format_bytes(need - have)}{_biggest(answer)}"
        )
    if peak is None:
        return "memory not known: the program was not compiled"
    measured = f"({answer['peak_source']})"
    if capacity is None:
        return f"peak {format_bytes(peak)} per device {measured}; the device's memory is not known"
    if answer["fits"]:
        return (
            f"fits: {format_bytes(peak)} of {format_bytes(capacity)} per device {measured}, "
            f"{format_bytes(answer['headroom_bytes'])} free{_biggest(answer)}"
        )
    return (
        f"does not fit: {format_bytes(peak)} of {format_bytes(capacity)} per device "
        f"{measured}: cut {format_bytes(-answer['headroom_bytes'])}{_biggest(answer)}"
    )


def _biggest(answer: Mapping[str, Any]) -> str:
    """``; biggest at the peak: 8.0 GiB argument params/w, 2 × 8.0 GiB output
    f32[...] from line 6 (model.py)``: the biggest buffers, alike ones counted
    together, three kinds at most; or nothing."""
    largest = answer.get("largest") or ()
    if not largest:
        return ""
    groups: dict[str, int] = {}  # the same buffer words, once with their count
    for buffer in largest:
        words = _buffer_words(buffer)
        if words not in groups and len(groups) == 3:
            break
        groups[words] = groups.get(words, 0) + 1
    return BIGGEST + ", ".join(f"{n} × {w}" if n > 1 else w for w, n in groups.items())


def _buffer_words(buffer: Mapping[str, Any]) -> str:
    size = format_bytes(buffer["bytes"])
    if buffer.get("argument"):
        return f"{size} argument {buffer['argument']}"
    lines = buffer.get("lines") or ()
    where = (
        f" from line {lines[0][1]} ({os.path.basename(str(lines[0][0]))})"
        if lines
        else " (made by the compiler)"
    )
    return f"{size} {buffer.get('kind', 'buffer')} {buffer.get('shape', '')}{where}"


def target_lines(target: Mapping[str, Any] | None) -> list[str]:
    """The target and its memory answer as every form's header writes them: the
    hardware with the mesh, then ``device memory: ...``; none for this machine.

    >>> target_lines({"title": "TPU v5e, 4 chips, compiled here without one",
    ...     "mesh": {"data": 2, "model": 2}, "memory": {"words": "fits: ..."}})
    ['TPU v5e, 4 chips, compiled here without one; mesh data=2, model=2', 'device memory: fits: ...']
    """
    if not target:
        return []
    mesh = target.get("mesh") or {}
    axes = ", ".join(f"{k}={v}" for k, v in mesh.items())
    lines = [f"{target.get('title', target.get('name', ''))}{f'; mesh {axes}' if axes else ''}"]
    words = (target.get("memory") or {}).get("words")
    if words:
        answer, _, biggest = words.partition(BIGGEST)
        lines.append(f"device memory: {answer}")
        if biggest:
            lines.append(f"{BIGGEST.lstrip('; ')}{biggest}")
    return lines
