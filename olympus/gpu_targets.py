"""GPU targets: compile-only CUDA devices of a kind and a count, on a machine
without a GPU.

``gpu_target("h100", 8)`` is a :class:`olympus.target_devices.Target` holding eight
devices that XLA's CUDA compiler describes from a GPU's *target description*
(XLA's ``GpuTargetConfigProto``: the compute capability, the number of cores
and their limits, the clock, the memory and its bandwidth). A program whose
arguments are placed on a mesh of them traces, lowers and compiles for those
GPUs here: its HLO (Triton and cuBLAS fusions, NCCL collectives),
``memory_analysis()`` and XLA's dumps are the CUDA compiler's. Nothing runs;
``cost_analysis()`` is None on these devices.

The descriptions are the ones XLA keeps in its source for common GPUs, shipped
with Olympus in ``olympus/gpu_specs/`` (their README says where each came
from); :func:`gpu_kinds` names them. The compiler is JAX's CUDA plugin,
``pip install "jax-cuda12-plugin==<jaxlib version>" "jax-cuda12-pjrt==<jaxlib
version>"`` (without NVIDIA's libraries: no GPU is needed to compile).

The devices are described as JAX's ``get_topology_desc(platform="cuda",
target_config=<description>, topology="<partitions>x<hosts>x<devices per
host>")`` makes them: one partition, ``hosts`` hosts of ``count / hosts``
devices each (one host by default). A host's devices share its NVLink
domain; XLA picks its collectives' algorithms by it (a one-shot all-reduce
within a host).

On a machine without CUDA, the plugin refuses to load when JAX starts it
(its check of the CUDA libraries' versions fails, and JAX logs that) unless
``JAX_PLATFORMS`` names platforms without CUDA. Olympus then loads it itself
for its descriptions, with the check skipped for that call alone
(``JAX_SKIP_CUDA_CONSTRAINTS_CHECK``, unset after), once JAX's own backends
are set up: the plugin adds no backend where there is no GPU.

>>> gpu_kinds()
('a100', 'a100_40gb', 'b200', 'gb200', 'h100', 'h100_pcie', 'h200')
>>> gpu_target("h100", 0)
Traceback (most recent call last):
olympus.target_devices.TargetError: a GPU target needs a whole number of GPUs, 1 or more; got 0.
"""

from __future__ import annotations

import contextlib
import functools
import importlib
import importlib.metadata
import importlib.resources
import importlib.util
import os
from collections.abc import Iterator

import jax

from olympus import chips as _chips
from olympus.target_devices import Target, TargetError, first_line

__all__ = ["gpu_target", "gpu_kinds", "gpu_target_config", "cuda_plugin_installed"]

#: Each kind's target description, a file of ``olympus/gpu_specs/`` (XLA's name).
_SPEC_FILES = {
    "a100": "a100_sxm_80.txtpb",
    "a100_40gb": "a100_sxm_40.txtpb",
    "b200": "b200.txtpb",
    "gb200": "gb200.txtpb",
    "h100": "h100_sxm.txtpb",
    "h100_pcie": "h100_pcie.txtpb",
    "h200": "h200.txtpb",
}

_PLUGIN_MODULES = ("jax_plugins.xla_cuda12", "jax_cuda12_plugin")


def gpu_kinds() -> tuple[str, ...]:
    """The GPU kinds a target may name, in alphabetical order."""
    return tuple(sorted(_SPEC_FILES))


def gpu_target_config(kind: str) -> str:
    """The target description of a GPU kind (XLA's ``GpuTargetConfigProto`` as
    text), as the CUDA compiler reads it.

    >>> "core_count: 132" in gpu_target_config("h100")
    True
    """
    return _read_spec(_known_kind(kind))


def cuda_plugin_installed() -> bool:
    """Whether JAX's CUDA plugin (both its packages) is installed here.

    >>> isinstance(cuda_plugin_installed(), bool)
    True
    """
    try:
        return all(importlib.util.find_spec(m) is not None for m in _PLUGIN_MODULES)
    except ImportError:  # no jax_plugins namespace at all
        return False


def gpu_target(kind: str, count: int, *, hosts: int = 1) -> Target:
    """The :class:`~olympus.target_devices.Target` of ``count`` GPUs of ``kind`` (one
    of :func:`gpu_kinds`, any case), spread over ``hosts`` hosts; the same object
    for the same arguments in a process (JAX keys compiled programs on the
    devices, which must then be the same objects).

    Its ``name`` is ``'<kind>:<count>'`` on one host (``'h100:8'``),
    ``'<kind>:<hosts>x<per host>'`` on several (``'h100:2x8'``, 16 GPUs);
    ``platform`` ``'cuda'`` (as JAX lowers for them; the devices' own
    ``platform`` says ``'gpu'``), ``num_slices`` 1, ``topology`` JAX's
    description (for ``Target.mesh``), ``chip`` the kind's figures
    (:data:`olympus.chips.GPU_CHIPS`).

    Raises :class:`~olympus.target_devices.TargetError` for a kind Olympus has no
    description of (naming those it has), a count or host count that is not one,
    the CUDA plugin missing (with the command to install it), or the compiler's
    refusal (with its reason).
    """
    canonical = _known_kind(kind)
    for what, value in (("GPUs", count), ("hosts", hosts)):
        if isinstance(value, bool) or not isinstance(value, int) or value < 1:
            raise TargetError(
                f"a GPU target needs a whole number of {what}, 1 or more; got {value!r}."
            )
    if count % hosts:
        raise TargetError(
            f"{count} GPUs cannot be spread evenly over {hosts} hosts; give a count "
            f"that {hosts} divides."
        )
    return _gpu_target(canonical, count, hosts)


def _known_kind(kind: str) -> str:
    text = kind.strip().lower() if isinstance(kind, str) else None
    if text not in _SPEC_FILES:
        raise TargetError(
            f"GPU kind {kind!r} is not one Olympus has a target description of; "
            f"known kinds: {', '.join(gpu_kinds())}."
        )
    return text


@functools.cache
def _read_spec(kind: str) -> str:
    return (
        importlib.resources.files("olympus")
        .joinpath("gpu_specs", _SPEC_FILES[kind])
        .read_text(encoding="utf-8")
    )


@functools.lru_cache(maxsize=32)
def _gpu_target(kind: str, count: int, hosts: int) -> Target:
    name = f"{kind}:{count}" if hosts == 1 else f"{kind}:{hosts}x{count // hosts}"
    if not cuda_plugin_installed():
        version = _jaxlib_version()
        raise TargetError(
            f"target {name!r} needs JAX's CUDA plugin to describe GPUs: pip install "
            f'"jax-cuda12-plugin=={version}" "jax-cuda12-pjrt=={version}" (it compiles '
            f"for CUDA on this machine; no GPU and no CUDA libraries are needed)."
        )
    topology_text = f"1x{hosts}x{count // hosts}"
    config = _read_spec(kind)
    try:
        topology = _describe(config, topology_text)
    except Exception as e:  # noqa: BLE001 - the compiler's refusal, with its reason
        raise TargetError(
            f"JAX's CUDA plugin cannot describe target {name!r}: {first_line(e)}"
        ) from None
    devices = tuple(topology.devices)
    return Target(
        name=name,
        platform="cuda",
        num_slices=1,
        devices=devices,
        topology=topology,
        chip=_chips.chip("cuda", kind) or _chips.chip_of("cuda", devices[0].device_kind),
    )


def _describe(config: str, topology_text: str):
    """JAX's description of the devices, loading the CUDA plugin first where JAX
    did not (:func:`_load_plugin`). An older XLA that does not know some fields of
    the description (``thread_dim_limit_x`` before JAX 0.10) is given the
    description without them (:func:`trimmed_config`)."""
    from jax.experimental import topologies

    def describe(text: str):
        try:
            return topologies.get_topology_desc(
                platform="cuda", target_config=text, topology=topology_text
            )
        except NotImplementedError:  # "topology not implemented for cuda": not loaded
            _load_plugin()
        return topologies.get_topology_desc(
            platform="cuda", target_config=text, topology=topology_text
        )

    try:
        return describe(config)
    except Exception as e:  # an older parser (re-raised otherwise): the fields it knows
        if "GpuTargetConfigProto" not in str(e):
            raise
        return describe(trimmed_config(config))


#: The fields of a description's ``gpu_device_info`` that every supported XLA reads
#: (those added since, such as the thread and unit limits, are left out by
#: :func:`trimmed_config`).
_LASTING_FIELDS = frozenset(
    {
        "threads_per_block_limit",
        "threads_per_warp",
        "shared_memory_per_block",
        "shared_memory_per_core",
        "threads_per_core_limit",
        "core_count",
        "fpus_per_core",
        "block_dim_limit_x",
        "block_dim_limit_y",
        "block_dim_limit_z",
        "memory_bandwidth",
        "l2_cache_size",
        "clock_rate_ghz",
        "device_memory_size",
        "shared_memory_per_block_optin",
        "cuda_compute_capability",
        "registers_per_core_limit",
        "registers_per_block_limit",
        "major",
        "minor",
    }
)


def trimmed_config(config: str) -> str:
    r"""A target description with only the fields of its ``gpu_device_info`` that
    every supported XLA reads (:data:`_LASTING_FIELDS`); the other parts kept.

    >>> trimmed_config(
    ...     "gpu_device_info {\n  core_count: 132\n  thread_dim_limit_x: 1024\n"
    ...     "  scalar_unit_description {\n    x: 1\n  }\n}\nplatform_name: 'CUDA'\n"
    ... ).splitlines()
    ['gpu_device_info {', '  core_count: 132', '}', "platform_name: 'CUDA'"]
    """
    out: list[str] = []
    blocks: list[str] = []  # the blocks open at this line, outermost first
    skip_below = None  # the depth of a block being left out, with all it holds
    for line in config.splitlines():
        text = line.strip()
        name = text.split(":")[0].split("{")[0].strip()
        opens = text.endswith("{")
        closes = text.startswith("}")
        if skip_below is not None:
            if opens:
                blocks.append(name)
            elif closes:
                blocks.pop()
                if len(blocks) < skip_below:
                    skip_below = None
            continue
        inside_info = blocks[:1] == ["gpu_device_info"]
        if inside_info and name and not closes and name not in _LASTING_FIELDS:
            if opens:
                blocks.append(name)
                skip_below = len(blocks)
            continue
        if opens:
            blocks.append(name)
        elif closes:
            blocks.pop()
        out.append(line)
    return "\n".join(out) + "\n"


def _load_plugin() -> None:
    """Registers JAX's CUDA plugin as the plugin does itself, without its check
    of the CUDA libraries (which a machine without CUDA fails).

    JAX's backends are set up first, so that the plugin cannot become one of
    them: JAX adds no CUDA backend where it sees no GPU, and where it sees one
    it has loaded the plugin itself.
    """
    jax.devices()  # JAX's backends, set up as the user's environment says
    module = importlib.import_module(_PLUGIN_MODULES[0])
    with _environment("JAX_SKIP_CUDA_CONSTRAINTS_CHECK", "1"):
        module.initialize()


@contextlib.contextmanager
def _environment(key: str, value: str) -> Iterator[None]:
    """``key`` set for the block alone, unless the user has set it."""
    if key in os.environ:
        yield
        return
    os.environ[key] = value
    try:
        yield
    finally:
        os.environ.pop(key, None)


def _jaxlib_version() -> str:
    try:
        return importlib.metadata.version("jaxlib")
    except importlib.metadata.PackageNotFoundError:
        return jax.__version__
