"""Per-line costs of a CUDA program compiled without a GPU: XLA's HLO cost analysis
applied to the CUDA compiler's optimized HLO.

A program compiled for GPUs this machine does not have (:mod:`olympus.gpu_targets`)
has no ``cost_analysis()``: JAX's CUDA plugin gives ``None``, and XLA's GPU cost
analysis cannot be called from here. :func:`olympus.line_costs.cost_by_line` then
counts the compiled program's own optimized HLO with XLA's HLO cost analysis as
the CPU backend runs it (:func:`cuda_analyzer`): the instructions are the CUDA
compiler's (Triton gemm fusions, loop fusions, asynchronous NCCL collectives,
``while`` loops), the counting rules XLA's generic ones. The figures are named so
in every form (:data:`COUNTED_BY`, :data:`COUNTED_BY_NOTE`).

The CPU's analysis knows nothing of the GPU libraries' custom-calls (it counts
each at -1 flops and -1 bytes). :func:`library_calls_as_ops` rewrites each cuBLAS
gemm and cuDNN convolution, before costing, into the ``dot`` or ``convolution``
it computes, with the call's own dimensions (a gemm's
``backend_config.gemm_backend_config.dot_dimension_numbers``, a convolution's
``window`` and ``dim_labels``), its result the first element of the call's
result tuple (not the workspace): what XLA's GPU cost analysis
(``GpuHloCostAnalysis::HandleCustomCall``) counts for these calls. As there, the
extras a call fuses in (``alpha``, ``beta·C``, a bias or activation epilogue) are
not counted, and nor are the bytes of operands past the first two (a bias, a
scale). Where XLA's GPU analysis differs otherwise (it counts an elementwise op's
flops from per-GPU profiles, a ``tanh`` as several), these figures are the
generic analysis's, as on the CPU.

What the CPU's analysis cannot cost (other custom-calls: cuDNN attention, Pallas
Triton kernels, sorts) is counted as nothing, and the notes say which
(:func:`olympus.line_costs.cost_by_line`).

>>> line = ('  %custom-call.1 = (f32[64,16]{1,0}, s8[1024]{0}) custom-call(%a, %b), '
...         'custom_call_target="__cublas$lt$matmul", backend_config={"gemm_backend_config":'
...         '{"dot_dimension_numbers":{"lhs_contracting_dimensions":["1"],'
...         '"rhs_contracting_dimensions":["0"],"lhs_batch_dimensions":[],'
...         '"rhs_batch_dimensions":[]}}}')
>>> print(library_calls_as_ops(line))
  %custom-call.1 = f32[64,16]{1,0} dot(%a, %b), lhs_contracting_dims={1}, rhs_contracting_dims={0}
"""

from __future__ import annotations

import json
import re
from collections.abc import Callable, Mapping

__all__ = [
    "COUNTED_BY",
    "COUNTED_BY_NOTE",
    "NO_COST_ANALYSIS",
    "NO_COMPILED_COST_ANALYSIS",
    "no_cost_analysis",
    "GPU_PLATFORMS",
    "GEMM_TARGETS",
    "CONVOLUTION_TARGETS",
    "library_calls_as_ops",
    "cuda_analyzer",
    "compiled_platform",
    "counted_by",
]

#: The platforms whose programs :func:`cuda_analyzer` counts (``compiled_platform``).
GPU_PLATFORMS = frozenset({"cuda", "rocm"})
#: cuBLAS gemms, costed as the ``dot`` each computes.
GEMM_TARGETS = frozenset({"__cublas$gemm", "__cublas$lt$matmul", "__cublas$lt$matmul$f8"})
#: cuDNN convolutions, costed as the ``convolution`` each computes.
CONVOLUTION_TARGETS = frozenset(
    {
        "__cudnn$convForward",
        "__cudnn$convBackwardInput",
        "__cudnn$convBackwardFilter",
        "__cudnn$convBiasActivationForward",
        "__cudnn$convForwardGraph",
    }
)

#: What counted the figures of a CUDA program, in a few words: every form of its
#: costs says it (:attr:`olympus.line_costs.CostByLine.counted_by`).
COUNTED_BY = (
    "XLA's HLO cost analysis (as the CPU backend runs it) of the CUDA program's "
    "optimized HLO, not a GPU's own cost_analysis() (None for CUDA)"
)
#: The same said in full: the first of the cost by line's notes.
COUNTED_BY_NOTE = (
    "counted by XLA's HLO cost analysis (as the CPU backend runs it) applied to the "
    "CUDA program's optimized HLO, instruction by instruction: a CUDA compile gives no "
    "cost_analysis() (it is None), so these are not a GPU's own figures; cuBLAS and "
    "cuDNN calls are counted as the dot or convolution each computes, as XLA's GPU "
    "cost analysis counts them"
)

#: Why a CUDA program's report has no ``cost_analysis()`` table: said in its place
#: (JAX 0.9, 0.10: the compile-only client of a CUDA target analyses no module).
NO_COST_ANALYSIS = (
    "a CUDA compile gives no cost_analysis() (None, before and after optimization); "
    "the costs stage counts the program with XLA's HLO cost analysis instead"
)
#: Why a CUDA program's ``cost_analysis()`` table has figures before optimization
#: and none after: said in place of the compiled column (JAX 0.12, whose target
#: clients analyse no module either: :func:`olympus.jax_compat.hlo_cost_analysis`
#: has the CPU analyse the unoptimized one).
NO_COMPILED_COST_ANALYSIS = (
    "a CUDA compile gives no cost_analysis() after optimization (None); the costs "
    "stage counts the optimized program with XLA's HLO cost analysis instead"
)

# ``[ROOT] %name = <shape> custom-call(<operands>)<attributes>``: the result a
# tuple of arrays (no nested tuples) or one array.
_CALL = re.compile(
    r"^(\s*)(ROOT )?(%?[\w.\-]+) = (\(([^()]*)\)|[^\s(]\S*) custom-call\(([^()]*)\)(.*)$"
)
_TARGET = re.compile(r'custom_call_target="([^"]+)"')
_METADATA = re.compile(r', metadata=\{(?:[^{}"]|"(?:[^"\\]|\\.)*")*\}')
_CONV_ATTRS = re.compile(
    r", (window=\{[^}]*\}|dim_labels=[\w>\-]+|feature_group_count=\d+|batch_group_count=\d+)"
)
# A computation's header: ``[ENTRY ]%name (params) -> <result> {``.
_HEADER = re.compile(r"^(ENTRY )?%?[\w.\-]+ \(.*\) -> (.*) \{$")


def _first_shape(inside: str) -> str:
    """The first element of a tuple shape's text (inside its parentheses)."""
    depth = 0
    for i, ch in enumerate(inside):
        if ch in "[{(":
            depth += 1
        elif ch in "]})":
            depth -= 1
        elif ch == "," and depth == 0:
            return inside[:i].strip()
    return inside.strip()


def _backend_config(attrs: str) -> dict | None:
    """The JSON of ``backend_config={...}`` in an instruction's attributes."""
    at = attrs.find("backend_config={")
    if at < 0:
        return None
    start = at + len("backend_config=")
    try:
        found, _ = json.JSONDecoder().raw_decode(attrs[start:])
    except ValueError:
        return None
    return found if isinstance(found, dict) else None


def _dims(config: Mapping, key: str) -> str:
    return "{" + ",".join(str(d) for d in config.get(key) or ()) + "}"


def _as_op(line: str, shapes: Mapping[str, str]) -> tuple[list[str], str] | None:
    """A library call's line as the ``dot`` or ``convolution`` it computes (the
    lines that replace it) and the shape of the new result; ``None`` for any other
    line, or a call it cannot read. ``shapes``: the module's instructions' shapes,
    by name (a backward convolution's operands')."""
    m = _CALL.match(line)
    if m is None:
        return None
    indent, root, name, shape, inside, operands, rest = m.groups()
    target = _TARGET.search(rest)
    if target is None:
        return None
    target_name = target.group(1)
    args = [o.strip() for o in operands.split(",") if o.strip()]
    if len(args) < 2:
        return None
    # An operand may be printed with its shape (``f32[8]{0} %a``): its name is last.
    lhs, rhs = (a.rsplit(" ", 1)[-1] for a in args[:2])
    out_shape = _first_shape(inside) if inside is not None else shape
    meta = _METADATA.search(rest)
    tail = meta.group(0) if meta else ""
    head = f"{indent}{root or ''}{name} = "
    if target_name in GEMM_TARGETS:
        config = _backend_config(rest)
        gemm = (config or {}).get("gemm_backend_config") or {}
        numbers = gemm.get("dot_dimension_numbers")
        if not isinstance(numbers, dict):
            return None
        attrs = ""
        if numbers.get("lhs_batch_dimensions"):
            attrs += f", lhs_batch_dims={_dims(numbers, 'lhs_batch_dimensions')}"
        attrs += f", lhs_contracting_dims={_dims(numbers, 'lhs_contracting_dimensions')}"
        if numbers.get("rhs_batch_dimensions"):
            attrs += f", rhs_batch_dims={_dims(numbers, 'rhs_batch_dimensions')}"
        attrs += f", rhs_contracting_dims={_dims(numbers, 'rhs_contracting_dimensions')}"
        return [f"{head}{out_shape} dot({lhs}, {rhs}){attrs}{tail}"], out_shape
    if target_name not in CONVOLUTION_TARGETS:
        return None
    keep = "".join(a.group(0) for a in _CONV_ATTRS.finditer(rest.split(", metadata=")[0]))
    if "window=" not in keep or "dim_labels=" not in keep:
        return None
    # A cuDNN call carries the forward convolution's window and dimension labels
    # whatever it computes; a backward one computes the same products as the
    # forward convolution of input x and filter w into y: it is costed as that
    # (x, w, y: its result and operands in their roles, the same bytes too).
    if target_name == "__cudnn$convBackwardInput":  # (dy, w) -> dx
        x, w, y = out_shape, None, shapes.get(lhs.lstrip("%"))
    elif target_name == "__cudnn$convBackwardFilter":  # (x, dy) -> dw
        x, w, y = None, out_shape, shapes.get(rhs.lstrip("%"))
    else:  # (x, w, [bias, side input]) -> y
        return [f"{head}{out_shape} convolution({lhs}, {rhs}){keep}{tail}"], out_shape
    if y is None or y.startswith("("):
        return None
    # The operand of the forward shape the call does not have: a bitcast of the
    # one it has in its place, which the analysis counts as nothing.
    made = f"%{name.lstrip('%')}.as_forward"
    if x is not None:
        lines = [f"{indent}{made} = {x} bitcast({lhs})"]
        conv = f"convolution({made}, {rhs})"
    else:
        lines = [f"{indent}{made} = {w} bitcast({rhs})"]
        conv = f"convolution({lhs}, {made})"
    return [*lines, f"{head}{y} {conv}{keep}{tail}"], y


# An instruction's name and shape: ``[ROOT] %name = <shape> ``.
_SHAPED = re.compile(r"^\s*(?:ROOT )?%?([\w.\-]+) = ([^\s(]\S*) ")


def library_calls_as_ops(text: str) -> str:
    """HLO module text with each cuBLAS gemm and cuDNN convolution custom-call
    rewritten into the ``dot`` or ``convolution`` it computes (see the module's
    docstring; a backward convolution into the forward one of the same products);
    any other text is kept as it is. A call that is its computation's ``ROOT``
    changes the computation's result shape in its header too. What is left
    inconsistent (a ``get-tuple-element`` of a call now an array, a bitcast to
    another size) XLA's parser reads without verifying the module, and its
    analysis counts as nothing, as it counted them before.

    >>> text = '''ENTRY %e (p0: f32[2,3,3,4], p1: f32[3,3,4,5]) -> (f32[2,1,1,5], u8[0]) {
    ...   %p0 = f32[2,3,3,4]{3,2,1,0} parameter(0)
    ...   %p1 = f32[3,3,4,5]{3,2,1,0} parameter(1)
    ...   ROOT %r = (f32[2,1,1,5]{3,2,1,0}, u8[0]{0}) custom-call(%p0, %p1), window={size=3x3}, dim_labels=b01f_01io->b01f, custom_call_target="__cudnn$convForward"
    ... }'''
    >>> print(library_calls_as_ops(text))  # doctest: +NORMALIZE_WHITESPACE
    ENTRY %e (p0: f32[2,3,3,4], p1: f32[3,3,4,5]) -> f32[2,1,1,5]{3,2,1,0} {
      %p0 = f32[2,3,3,4]{3,2,1,0} parameter(0)
      %p1 = f32[3,3,4,5]{3,2,1,0} parameter(1)
      ROOT %r = f32[2,1,1,5]{3,2,1,0} convolution(%p0, %p1), window={size=3x3}, dim_labels=b01f_01io->b01f
    }
    """
    if "custom-call(" not in text:
        return text
    lines = text.split("\n")
    shapes: dict[str, str] | None = None  # read at the first backward convolution
    out: list[str] = []
    header = None  # where the computation being read starts, in ``out``
    for line in lines:
        if not line.startswith(" "):
            if line.endswith("{") and " -> " in line:
                header = len(out)
            out.append(line)
            continue
        if "custom-call(" not in line or "custom_call_target=" not in line:
            out.append(line)
            continue
        if shapes is None and "$convBackward" in line:
            shapes = {m.group(1): m.group(2) for m in map(_SHAPED.match, lines) if m}
        found = _as_op(line, shapes or {})
        if found is None:
            out.append(line)
            continue
        made, shape = found
        out.extend(made)
        if line.lstrip().startswith("ROOT ") and header is not None:
            m = _HEADER.match(out[header])
            if m is not None:
                out[header] = out[header][: m.start(2)] + shape + " {"
    return "\n".join(out)


def cuda_analyzer(
    analyse: Callable[[str], Mapping[str, float]],
) -> Callable[[str], Mapping[str, float]]:
    """``analyse`` (HLO module text -> XLA's cost analysis, the CPU backend's) for a
    CUDA program's modules: each module's cuBLAS and cuDNN calls rewritten first
    (:func:`library_calls_as_ops`)."""

    def analyser(text: str) -> Mapping[str, float]:
        return analyse(library_calls_as_ops(text))

    return analyser


def compiled_platform(jax_compiled) -> str | None:
    """The platform a ``jax.stages.Compiled`` was compiled for, as its arguments'
    (or results') devices say: ``'cuda'`` or ``'rocm'`` for GPUs, ``'tpu'``,
    ``'cpu'``; ``None`` where no device says (a program of no arrays)."""
    for shardings in (
        getattr(jax_compiled, "input_shardings", None),
        getattr(jax_compiled, "output_shardings", None),
    ):
        device = _first_device(shardings)
        if device is None:
            continue
        platform = str(getattr(device, "platform", "") or "")
        if platform == "gpu":
            client = getattr(device, "client", None)
            version = str(getattr(client, "platform_version", "")).lower()
            return "rocm" if "rocm" in version else "cuda"
        return platform or None
    return None


def _first_device(shardings):
    todo = [shardings]
    while todo:
        item = todo.pop(0)
        if item is None:
            continue
        if isinstance(item, (list, tuple)):
            todo[:0] = list(item)
            continue
        if isinstance(item, dict):
            todo[:0] = list(item.values())
            continue
        devices = getattr(item, "device_set", None)
        if devices:
            return min(devices, key=lambda d: getattr(d, "id", 0))
    return None


def no_cost_analysis(platforms, *, lowered: bool = False) -> str | None:
    """Why a report of a program compiled for ``platforms`` has no
    ``cost_analysis()`` figures, or with ``lowered`` (it has those before
    optimization) none after optimization, where the platform is the reason (CUDA);
    ``None`` otherwise.

    >>> no_cost_analysis(("cuda",))[:46]
    'a CUDA compile gives no cost_analysis() (None,'
    >>> no_cost_analysis(("cuda",), lowered=True)[:66]
    'a CUDA compile gives no cost_analysis() after optimization (None);'
    >>> no_cost_analysis(("cpu",)) is None
    True
    """
    if "cuda" not in tuple(platforms or ()):
        return None
    return NO_COMPILED_COST_ANALYSIS if lowered else NO_COST_ANALYSIS


def counted_by(platform: str | None) -> tuple[str, str]:
    """What counted the figures of ``platform``'s program, compiled without a cost
    analysis of its own: in a few words and in full (:data:`COUNTED_BY` and
    :data:`COUNTED_BY_NOTE` for ``'cuda'``).

    >>> counted_by("rocm")[0]
    "XLA's HLO cost analysis (as the CPU backend runs it) of the ROCm program's optimized HLO, not the device's own cost_analysis() (None for ROCm)"
    """
    if platform == "cuda":
        return COUNTED_BY, COUNTED_BY_NOTE
    name = {"rocm": "ROCm", None: "compiled"}.get(platform, platform)
    short = (
        f"XLA's HLO cost analysis (as the CPU backend runs it) of the {name} program's "
        f"optimized HLO, not the device's own cost_analysis() (None for {name})"
    )
    said = (
        "counted by XLA's HLO cost analysis (as the CPU backend runs it) applied to the "
        f"{name} program's optimized HLO, instruction by instruction: its compile gives no "
        "cost_analysis() (it is None), so these are not the device's own figures"
    )
    if platform in GPU_PLATFORMS:
        said += (
            "; GPU library gemms and convolutions are counted as the dot or convolution "
            "each computes"
        )
    return short, said
