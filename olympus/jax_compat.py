"""Every use of JAX internals, in one module, for each supported JAX release.

Olympus supports the JAX releases named in ``SUPPORTED`` (``pyproject.toml`` says the
same). It builds on JAX's public API (``jax.jit``, ``jax.stages``, ``jax.export``,
``jax.extend``); where it needs more, the internal it uses is named here, once, with
a note on the public API that would replace it. No other Olympus module imports
``jax._src`` or reads a private attribute of a JAX object; ``tests/test_jax_internals.py``
reads every other module to keep it so (with ``INTERNAL_ATTRIBUTES``, below).

>>> SUPPORTED
('0.9', '0.13')
>>> version_supported(jax.__version__)
True
"""

from __future__ import annotations

import inspect
import re

import jax
from jax.extend import core as _ext_core
from jax.extend import source_info_util as _ext_source_info
from jax.extend.mlir import ir

# Replaced by nothing public: internal modules, imported once here.
from jax._src import core as _core
from jax._src import source_info_util as _source_info_util
from jax._src import stages as _stages
from jax._src import traceback_util as _traceback_util
from jax._src import xla_bridge as _xla_bridge
from jax._src.export import _export as _export_impl
from jax._src.export import serialization_generated as export_flatbuffers
from jax._src.interpreters import mlir as _mlir
from jax._src.lib import _jax as _jaxlib

__all__ = [
    "SUPPORTED",
    "version_supported",
    "ir",
    "ClosedJaxpr",
    "Jaxpr",
    "SourceInfo",
    "register_internal_path",
    "is_user_filename",
    "pp_toplevel_jaxpr",
    "traceback_frames",
    "name_stack_text",
    "marked_source_info",
    "INTERNAL_ATTRIBUTES",
    "pp_with_source_map",
    "aval_short_text",
    "hlo_module_text",
    "make_args_info",
    "abstractify",
    "canonicalize_platform",
    "relabel_lowered",
    "lowering_name",
    "lowering_platforms",
    "lowering_device_platform",
    "lowered_hlo_bytecode",
    "hlo_module_from_bytecode",
    "hlo_cost_analysis",
    "hlo_print_options",
    "compiled_fast_call",
    "pmap_trace_parts",
    "physical_aval",
    "is_constant_dim",
    "make_ir_context",
    "dtype_to_ir_type",
    "export_flatbuffers",
    "location_kind",
    "hlo_sharding_text",
    "source_map_marker",
    "source_map_index",
    "known_platforms",
    "pytree_deserialization_registry",
    "read_portable_artifact",
    "PORTABLE_ARTIFACT_CHECK_SCRIPT",
    "compiled_client",
    "hlo_text_cost_analyzer",
]

#: Oldest supported release (inclusive) and the next minor not yet tried (exclusive).
SUPPORTED = ("0.9", "0.13")

#: The attributes of JAX objects that only this module reads, as dotted tails
#: (``name_stack.stack``: the ``stack`` of anything reached as ``name_stack``).
#: Together with every private (``_``) attribute of a JAX object read here, they are
#: rejected in every other module (``tests/test_jax_internals.py``), which also
#: checks that each one is read here.
INTERNAL_ATTRIBUTES = (
    "raw_frames",
    "code_addr2location",  # traceback_frames
    "source_info.name_stack",
    "name_stack.stack",  # name_stack_text, marked_source_info
    "compile_args",
    "create_cpp_call",  # a Lowering's and an executable's
    "runtime_executable.client",  # compiled_client
    "print_metadata",  # hlo_print_options
    "to_string",  # hlo_module_text (an HloModule's)
    "str_short",  # aval_short_text
)


def _release(version: str) -> tuple[int, ...]:
    return tuple(int(p) for p in re.findall(r"\d+", version)[:3])


def version_supported(version: str) -> bool:
    """Whether JAX ``version`` lies in Olympus's supported range."""
    return _release(SUPPORTED[0]) <= _release(version) < _release(SUPPORTED[1])


# --------------------------------------------------------------------------
# Programs and source locations
# --------------------------------------------------------------------------

#: Public since jax.extend; on 0.12 a ClosedJaxpr *is* a Jaxpr (with its consts).
ClosedJaxpr = _ext_core.ClosedJaxpr
Jaxpr = _ext_core.Jaxpr
SourceInfo = _ext_source_info.SourceInfo


def register_internal_path(path: str) -> None:
    """Leaves files under ``path`` out of tracebacks and out of source lines.

    Public: ``jax.extend.source_info_util.register_exclusion`` covers source lines;
    traceback filtering has no public registration (``jax._src.traceback_util``).
    """
    _traceback_util.register_exclusion(path)
    _ext_source_info.register_exclusion(path)


def is_user_filename(path: str) -> bool:
    """Whether JAX counts ``path`` as user code (not JAX's own, nor excluded).

    Internal: ``jax._src.source_info_util.is_user_filename``; no public equivalent.
    """
    return _source_info_util.is_user_filename(path)


def pp_toplevel_jaxpr(jaxpr, **options):
    """JAX's printer document for a program, whose ``format(source_map=...)`` maps
    printed regions back to equations.

    Internal: ``jax._src.core.pp_toplevel_jaxpr``; ``Jaxpr.pretty_print`` is public
    but gives no source map.
    """
    return _core.pp_toplevel_jaxpr(jaxpr, **options)


def pp_with_source_map(jaxpr, **options) -> tuple[str, list]:
    """The program's text as JAX's printer formats it (no color), and its source map:
    for each printed line, the ``(start, end, marker)`` regions of the equations on
    it, where ``marker`` is what the equation's traceback slot held
    (:func:`source_map_index` reads it).

    Internal: ``format(source_map=...)`` of the printer's document
    (``jax._src.pretty_printer``); public: ``Jaxpr.pretty_print``, without the map.
    """
    source_map: list = []
    text = pp_toplevel_jaxpr(jaxpr, **options).format(use_color=False, source_map=source_map)
    return text, source_map


def aval_short_text(aval) -> str:
    """An abstract value's type as the printed program writes it: ``f32[3]``.

    Internal: ``str_short(short_dtypes=True)`` of JAX's abstract values; public:
    ``str(jax.typeof(x))``, the long form (``float32[3]``, ``~`` for weak types).
    """
    return aval.str_short(short_dtypes=True)


def traceback_frames(traceback, keep=None) -> list[tuple[str, int, int, int, int, str]]:
    """The frames of an equation's traceback (``source_info.traceback``), innermost
    first, as ``(file, line, column, end line, end column, function)`` tuples; only
    those whose file ``keep(path)`` accepts, if given.

    Internal: jaxlib's ``Traceback.raw_frames()`` and ``Traceback.code_addr2location``
    (``jaxlib._jax``); public: none (``jax.extend.source_info_util.summarize`` gives
    the user's frame as text, without columns).
    """
    if traceback is None:
        return []
    code, lasti = traceback.raw_frames()
    addr2loc = type(traceback).code_addr2location
    out = []
    for c, i in zip(code, lasti):
        if keep is not None and not keep(c.co_filename):
            continue
        start_line, start_col, end_line, end_col = addr2loc(c, i)
        out.append(
            (
                c.co_filename,
                start_line,
                start_col,
                end_line,
                end_col,
                getattr(c, "co_qualname", c.co_name),
            )
        )
    return out


def name_stack_text(source_info) -> str:
    """An equation's name stack as JAX prints it (``jit(f)/sin``...), ``''`` if empty.

    Internal: the ``stack`` of a ``NameStack`` (``jax.extend.source_info_util``
    exports the class, not its fields); public: ``str(source_info.name_stack)``,
    without the test for an empty stack.
    """
    name_stack = source_info.name_stack
    return str(name_stack) if name_stack.stack else ""


def marked_source_info(source_info, index: int):
    """``source_info`` with the marker of equation ``index`` (:func:`source_map_marker`)
    in its traceback slot, and its name stack kept.

    Internal: what JAX's printer reads from the slot; public:
    ``jax.extend.source_info_util.SourceInfo`` (a traceback and a name stack).
    """
    return SourceInfo(source_map_marker(index), source_info.name_stack)


# --------------------------------------------------------------------------
# Stages
# --------------------------------------------------------------------------


def make_args_info(in_tree, in_avals, donate_argnums):
    """A pytree of ``jax.stages.ArgInfo`` (public) for flat avals.

    Internal: ``jax._src.stages.make_args_info``; building ``ArgInfo``s by hand is
    public but their constructor's signature is not.
    """
    return _stages.make_args_info(in_tree, in_avals, donate_argnums)


def abstractify(x):
    """The abstract value of an array argument. Public: ``jax.typeof``."""
    return _core.shaped_abstractify(x)


def canonicalize_platform(name: str) -> str:
    """'gpu' -> 'cuda' or 'rocm' (what is installed); other names as JAX spells them.

    Internal: ``jax._src.xla_bridge.canonicalize_platform``; no public equivalent.
    """
    return _xla_bridge.canonicalize_platform(name)


def relabel_lowered(jax_lowered, args_info, out_tree=None):
    """The same lowering with other argument (and result) pytrees: pmap's user-level ones.

    Internal: the ``jax.stages.Lowered`` constructor; JAX's pmap does the same.
    """
    return _stages.Lowered(
        jax_lowered._lowering,
        args_info,
        out_tree if out_tree is not None else jax_lowered.out_tree,
        no_kwargs=jax_lowered._no_kwargs,
    )


def lowering_name(jax_lowered) -> str | None:
    """The function name JAX recorded for a lowering (private ``_name``)."""
    return getattr(jax_lowered._lowering, "_name", None)


def lowering_platforms(jax_lowered) -> tuple[str, ...] | None:
    """The platforms a lowering was made for (private ``_platforms``); None if unknown.

    Public: none before ``jax.export.Exported.platforms``, which only exports have.
    """
    found = getattr(jax_lowered._lowering, "_platforms", None)
    return tuple(found) if found else None


def lowering_device_platform(jax_lowered) -> str | None:
    """The platform of the devices a lowering is placed on (its arguments' shardings
    name them): ``'tpu'`` for a program placed on compile-only TPU devices
    (:mod:`olympus.hardware`), this machine's for an ordinary one; None if unknown.

    Internal: the private ``compile_args['backend']`` (the client that compiles it).
    Public: none (``jax.stages.Lowered`` names no devices).
    """
    args = getattr(getattr(jax_lowered, "_lowering", None), "compile_args", None) or {}
    backend = args.get("backend") if isinstance(args, dict) else None
    platform = getattr(backend, "platform", None)
    if not isinstance(platform, str):
        return None
    if platform == "gpu":  # a compile-only GPU client: JAX has no 'gpu' backend to ask
        version = str(getattr(backend, "platform_version", "")).lower()
        return "rocm" if "rocm" in version else "cuda"
    return canonicalize_platform(platform)


def lowered_hlo_bytecode(jax_lowered) -> tuple[bytes, bool]:
    """What :func:`hlo_module_from_bytecode` converts: the lowering's MLIR bytecode, and
    whether its arguments are passed as one tuple (as JAX's ``Lowering.hlo()``
    takes them). Taking the bytecode first lets the conversion run apart from the
    MLIR module (in another thread, while ``compile()`` works on the module).

    Public: none (``Lowered.as_text('hlo')`` converts and prints in one call).
    """
    lowering = jax_lowered._lowering
    return (
        _mlir.module_to_bytecode(lowering.stablehlo()),
        bool(lowering.compile_args["tuple_args"]),
    )


def hlo_module_from_bytecode(code: bytes, tuple_args: bool):
    """An XLA ``HloModule`` from a lowering's MLIR bytecode (:func:`lowered_hlo_bytecode`),
    converted in a context of its own, as JAX's ``Lowering.hlo()`` converts it.

    Public: ``Lowered.as_text('hlo')`` gives its text only; the module object (for
    printing options and cost analysis) is internal.
    """
    return _jaxlib.mlir.mlir_module_to_xla_computation(
        code, use_tuple_args=tuple_args
    ).as_hlo_module()


def hlo_cost_analysis(jax_lowered, hlo_module):
    """XLA's cost analysis of the unoptimized HLO, or what ``Lowered.cost_analysis()``
    (public) says where the backend cannot analyse a module directly. A target's
    compile-only client analyses none (JAX 0.12): the unoptimized module, the same
    on every platform, is analysed by the CPU's."""
    backend = jax_lowered._lowering.compile_args.get("backend")
    if backend is None or _xla_bridge.using_pjrt_c_api(backend):
        return jax_lowered.cost_analysis()
    try:
        return _jaxlib.hlo_module_cost_analysis(backend, hlo_module)
    except Exception as e:  # a compile-only client (a target's, JAX 0.12): the CPU's
        if "PjRt-compatible" not in str(e):
            raise
        return _jaxlib.hlo_module_cost_analysis(_xla_bridge.get_backend("cpu"), hlo_module)


def hlo_print_options(*, metadata: bool):
    """Printing options for ``HloModule.to_string``: parsable, metadata optional.

    Internal: ``HloPrintOptions`` moved from ``jaxlib._jax`` (0.9) to
    ``jaxlib._hlo`` (0.10); ``Lowered.as_text('hlo')`` (public) prints without
    metadata.
    """
    try:
        from jax._src.lib import hlo as _hlo  # 0.10 and later

        options_type = _hlo.HloPrintOptions
    except ImportError:
        options_type = _jaxlib.HloPrintOptions
    options = options_type.short_parsable()
    options.print_metadata = metadata
    return options


def hlo_module_text(hlo_module, *, metadata: bool) -> str:
    """The text of an XLA ``HloModule`` (:func:`hlo_module_from_bytecode`), parsable,
    with its metadata (source locations) or without.

    Internal: ``HloModule.to_string`` with :func:`hlo_print_options`; public:
    ``Lowered.as_text('hlo')``, without metadata.
    """
    return hlo_module.to_string(hlo_print_options(metadata=metadata))


def compiled_fast_call(jax_compiled):
    """The C++ fast path that calls a ``jax.stages.Compiled``, or its ``__call__``.

    Public ``Compiled.__call__`` creates the same path on its first call; taking it
    here saves the Python wrapper on every call (see benchmarks/bench_call.py).
    """
    try:
        call = jax_compiled._executable.create_cpp_call(jax_compiled._params)
    except AttributeError:
        call = None
    if call is None:
        return jax_compiled.__call__
    jax_compiled._call = call
    return call


def pmap_trace_parts(pmapped):
    """``jax.pmap(f)``'s own argument processing, as ``parts(*args, **kwargs)``.

    ``parts`` returns ``(jitted_f, args_flat, in_tree, donate_argnums, out_tree)``:
    the inner jit that pmap stages out (taking the flat arguments), the arguments,
    the user's argument pytree and donations, and a thunk giving the user's result
    pytree once traced (None where the inner jit's own is the user's).

    Internal: ``infer_params``, a closure of ``jax.pmap(f).lower``, whose results
    changed between 0.9 and 0.10. Public: ``jax.pmap(f)`` has ``lower`` but no
    ``trace``; when it gains one, this goes.
    """
    try:
        infer_params = inspect.getclosurevars(pmapped.lower).nonlocals["infer_params"]
        old_style = "__check" in inspect.signature(infer_params).parameters
    except (KeyError, AttributeError, TypeError, ValueError):
        raise NotImplementedError(
            f"olympus.pmap(...).trace is not available with jax {jax.__version__}: its "
            f"pmap has no argument processing Olympus can reuse. Use "
            f"olympus.pmap(f).lower(*args), or olympus.jit with shardings."
        ) from None

    def parts(*args, **kwargs):
        if old_style:  # 0.9: (jitted_f, flat_args, prepared, mesh, out_specs, donate)
            jitted_f, args_flat, p, _, _, donated = infer_params(*args, __check=False, **kwargs)
            return jitted_f, args_flat, p.in_tree, donated, p.out_tree
        # 0.10 on: (cached, jitted_f, flat_args, in_tree, donate, nprocs, clean)
        _, jitted_f, args_flat, in_tree, donated, _, _ = infer_params(*args, **kwargs)
        return jitted_f, args_flat, in_tree, donated, None

    return parts


# --------------------------------------------------------------------------
# Export
# --------------------------------------------------------------------------


def physical_aval(aval):
    """The array type that stores an extended dtype (keys). Internal: ``jax._src.core``."""
    return _core.physical_aval(aval)


def is_constant_dim(d) -> bool:
    """Whether a dimension is an integer, not symbolic. Public: ``not
    jax.export.is_symbolic_dim(d)`` for dimensions that are one or the other."""
    return _core.is_constant_dim(d)


def make_ir_context():
    """An MLIR context with JAX's dialects registered.

    Internal: ``jax._src.interpreters.mlir.make_ir_context``;
    ``jax.extend.lowering.JaxIrContext`` is public from 0.10 only.
    """
    return _mlir.make_ir_context()


def dtype_to_ir_type(dtype):
    """The MLIR element type for a NumPy dtype. Internal: ``jax._src.interpreters.mlir``."""
    return _mlir.dtype_to_ir_type(dtype)


# --------------------------------------------------------------------------
# MLIR locations
# --------------------------------------------------------------------------

_LOCATION_TYPES = tuple(
    (kind, getattr(ir, cls))
    for kind, cls in (
        ("name", "NameLoc"),
        ("callsite", "CallSiteLoc"),
        ("file", "FileLineColLoc"),
        ("fused", "FusedLoc"),
    )
    if hasattr(ir, cls)
)


def location_kind(loc) -> str | None:
    """What an MLIR location is: 'name', 'callsite', 'file', 'fused', or None.

    The bindings give typed locations (``ir.NameLoc``...) from jaxlib 0.10 on, and
    plain ``ir.Location``s with ``is_a_name()``-style tests before; the attributes
    (``name_str``, ``child_loc``, ``callee``, ``caller``, ``filename``,
    ``start_line``, ``locations``...) are the same in both.
    """
    if _LOCATION_TYPES:
        for kind, cls in _LOCATION_TYPES:
            if isinstance(loc, cls):
                return kind
        return None
    for kind, test in (
        ("name", "is_a_name"),
        ("callsite", "is_a_callsite"),
        ("file", "is_a_file"),
        ("fused", "is_a_fused"),
    ):
        if getattr(loc, test)():
            return kind
    return None


def hlo_sharding_text(sharding, ndim: int) -> str | None:
    """XLA's text for how ``sharding`` splits an ``ndim``-dimensional array, e.g.
    ``{devices=[4,2]<=[8]}``; None if it cannot say.

    Internal: ``Sharding._to_xla_hlo_sharding``. From jaxlib 0.12 the optimized HLO
    no longer prints shardings on the entry parameters, so they come from here.
    """
    try:
        return str(sharding._to_xla_hlo_sharding(ndim))
    except Exception:  # noqa: BLE001 - a sharding kind without an HLO form
        return None


# --------------------------------------------------------------------------
# Finding each equation in the printed program
# --------------------------------------------------------------------------

# JAX's printer records, per printed region, what an equation's traceback slot
# holds (0.10 on) or the first user frame of it (0.9). Olympus puts a marker
# there to learn which lines print which equation.
_MARKER_FILE = "<olympus.eqn.{}>"
_MARKER_CODE = compile("pass", "<olympus.eqn>", "exec")
_FRAME_STYLE = _release(jax.__version__) < (0, 10)


class _FrameMarker:
    """A traceback whose only frame is a file named for equation ``index`` (JAX 0.9)."""

    __slots__ = ("index", "_code")

    def __init__(self, index: int):
        self.index = index
        self._code = _MARKER_CODE.replace(co_filename=_MARKER_FILE.format(index))

    def raw_frames(self):
        return [self._code], [0]


def source_map_marker(index: int):
    """What to put in equation ``index``'s traceback slot before printing.

    Internal: how ``jax._src.core``'s printer fills its source map; the public
    ``Jaxpr.pretty_print`` gives no source map.
    """
    return _FrameMarker(index) if _FRAME_STYLE else index


def source_map_index(region_marker) -> int | None:
    """The equation index a printed region's source-map entry names, or None."""
    if type(region_marker) is int:
        return region_marker
    name = getattr(region_marker, "file_name", None)
    if isinstance(name, str) and name.startswith("<olympus.eqn.") and name.endswith(">"):
        digits = name[len("<olympus.eqn.") : -1]
        return int(digits) if digits.isdigit() else None
    return None


# --------------------------------------------------------------------------
# Platform names
# --------------------------------------------------------------------------


def known_platforms() -> frozenset[str]:
    """The platform names JAX knows in this process: built-in ones, aliases
    (``'gpu'``) and the PJRT plugins registered here.

    Internal: ``jax._src.xla_bridge.known_platforms``; no public equivalent
    (``jax.devices(name)`` starts the backend and knows only this machine's).
    """
    return frozenset(_xla_bridge.known_platforms())


# --------------------------------------------------------------------------
# Custom pytree nodes in serialized exports
# --------------------------------------------------------------------------


def pytree_deserialization_registry() -> dict:
    """What ``jax.export.register_pytree_node_serialization`` (and the namedtuple
    variant) registered: ``{serialized_name: (node type, deserialize_auxdata,
    from_children)}``, a copy.

    Internal: ``jax._src.export._export.deserialization_registry``; public: none
    (the registration functions only add to it).
    """
    return dict(_export_impl.deserialization_registry)


# --------------------------------------------------------------------------
# Cost analysis of HLO texts (per-line cost)
# --------------------------------------------------------------------------


def compiled_client(jax_compiled):
    """The runtime client (backend) a ``jax.stages.Compiled`` was compiled for, or
    ``None``.

    Internal: ``LoadedExecutable.client`` (``Compiled.runtime_executable()`` is
    public, what it returns is not); public: none.
    """
    try:
        return jax_compiled.runtime_executable().client
    except Exception:  # noqa: BLE001 - none to say: line costs use the CPU's, with a note
        return None


def hlo_text_cost_analyzer(client):
    """A function from an HLO module's text to XLA's cost analysis of it (a dict:
    ``flops``, ``transcendentals``, ``bytes accessed``...), as the backend of
    ``client`` counts; ``None`` where that backend cannot analyse a module itself
    (a PJRT C API plugin). A module must be whole: XLA's cost analysis crashes the
    process on an asynchronous ``-done`` instruction without its ``-start`` (seen on
    JAX 0.11.2 with an H200; :mod:`olympus.line_costs` never hands it one).

    Internal: ``hlo_module_from_text`` (``jaxlib._jax`` on 0.9, ``jaxlib._hlo`` from
    0.10) and ``hlo_module_cost_analysis``; public: ``Compiled.cost_analysis()``
    only, for a whole compiled module.
    """
    if client is None or _xla_bridge.using_pjrt_c_api(client):
        return None

    try:
        from jax._src.lib import hlo as _hlo  # 0.10 and later

        from_text = _hlo.hlo_module_from_text
    except ImportError:
        from_text = _jaxlib.hlo_module_from_text
    analyse = _jaxlib.hlo_module_cost_analysis

    def analyser(text: str) -> dict:
        return analyse(client, from_text(text))

    return analyser


# --------------------------------------------------------------------------
# Reading portable artifacts on every supported release
# --------------------------------------------------------------------------


def read_portable_artifact(data: bytes) -> ir.Module:
    """Portable StableHLO bytecode as an ``ir.Module`` in the current context.

    Public: ``jax.extend.mlir.deserialize_portable_artifact``, which gives the
    module's text on 0.9 (parsed here) and the module from 0.10 on; this is the
    reader behind it.
    """
    found = _jaxlib.mlir.deserialize_portable_artifact(data)
    return ir.Module.parse(found) if isinstance(found, str) else found


# A script for a child process: it reads bytecode as read_portable_artifact() does,
# in a context with the dialects make_ir_context() registers, without importing all
# of JAX, and reports "OK" or "ERR <reason>"; a crash or a hang stays in the child.
# Internal: jaxlib's MLIR modules.
PORTABLE_ARTIFACT_CHECK_SCRIPT = r"""
import os, sys
def context():
    try:
        from jaxlib.mlir import ir
        from jaxlib.mlir._mlir_libs import _jax_mlir_ext
        from jaxlib.mlir.dialects import chlo, mhlo, mpmd, sdy, stablehlo
        registry = ir.DialectRegistry()
        _jax_mlir_ext.register_dialects(registry)
        ctx = ir.Context()
        ctx.append_dialect_registry(registry)
        ctx.load_all_available_dialects()
        sdy.register_dialect(ctx); mpmd.register_dialect(ctx)
        mhlo.register_mhlo_dialect(ctx); chlo.register_dialect(ctx)
        stablehlo.register_dialect(ctx)
        return ctx
    except Exception:
        from jax._src.interpreters import mlir
        return mlir.make_ir_context()
data = sys.stdin.buffer.read()
ctx = context()
from jaxlib import _jax
from jaxlib.mlir import ir
with ctx:
    try:
        module = _jax.mlir.deserialize_portable_artifact(data)
        if isinstance(module, str):  # 0.9: the module's text
            module = ir.Module.parse(module)
        module.operation.verify()
        reply = "OK"
    except Exception as e:
        reply = "ERR " + str(e).strip().replace("\n", " ")[:300]
sys.stdout.write(reply)
sys.stdout.flush()
os._exit(0)
"""


# --------------------------------------------------------------------------
# Serialized exports: what olympus.export reads of jax.export's internals
# --------------------------------------------------------------------------
# Read by olympus/export/blob_checks.py and olympus/export/exported.py. Each note
# names the public API that would replace the internal.

__all__ += ["exported_with_get_vjp", "export_table_of_contents", "is_custom_pytree_node"]


def exported_with_get_vjp(jax_exported, get_vjp):
    """A copy of ``jax_exported`` (a ``jax.export.Exported``) whose VJP is ``get_vjp()``.

    Olympus gives exports without a VJP one that raises a message saying how to
    serialize it. Internal: the private dataclass field ``_get_vjp`` of
    ``jax.export.Exported``; public: none (a way to attach or replace an
    export's VJP, or a hook for the error of a missing one).
    """
    import dataclasses

    return dataclasses.replace(jax_exported, _get_vjp=get_vjp)


def export_table_of_contents(payload: bytes):
    """The root table of a serialized ``jax.export.Exported``, read lazily: its
    fields (``InTree()``, ``OutTree()``, ``Vjp()``; a tree's ``Kind()``,
    ``ChildrenLength()``, ``Children(i)``, ``CustomName()``) are read on access,
    so that their sizes can be bounded before ``jax.export.deserialize`` reads
    everything. Internal: ``jax._src.export.serialization_generated``; public:
    none (only ``jax.export.deserialize``, which reads the whole blob at once).
    """
    return export_flatbuffers.Exported.GetRootAsExported(payload, 0)


def is_custom_pytree_node(node) -> bool:
    """Whether a tree of :func:`export_table_of_contents` is a custom pytree node
    (one registered with ``jax.export.register_pytree_node_serialization``).
    Internal: ``jax._src.export.serialization_generated.PyTreeDefKind``; public: none.
    """
    return node.Kind() == export_flatbuffers.PyTreeDefKind.custom
