"""XLA's pass pipeline, pass by pass: what each pass that changed the module made of it.

:func:`pass_pipeline` compiles a ``Lowered`` once more with XLA's per-pass dumps
turned on as compiler options of that one compile (``xla_dump_to`` a private
temporary folder, ``xla_dump_hlo_pass_re``, ``xla_dump_hlo_as_text``), never
through the process's ``XLA_FLAGS``, and reads the dump into a
:class:`PassPipeline`; the folder is removed afterwards, even when the compile
fails. :func:`read_dump` reads such a folder.

XLA writes the module as it enters each pipeline (``after_pipeline-start``) and
after each pass that changed it, in the order they ran (a pass that changed
nothing writes nothing), each to a file named
``module_N.NAME.STEP.PIPELINE.after_PASS.before_NEXT.txt``. With a pass filter it
also writes the module just before each pass the filter keeps (named after the
pass before it), so :meth:`PassPipeline.changed` counts only the passes the
filter keeps.

>>> lowered = olympus.jit(lambda x: jnp.tanh(x * 2.0) + 1.0).trace(np.ones(4, np.float32)).lower()
>>> pipeline = pass_pipeline(lowered)
>>> pipeline.steps[0].after, pipeline.before.count("parameter(") >= 1
('pipeline-start', True)
>>> any(step.after == "fusion" for step in pipeline.changed())
True
"""
from __future__ import annotations

import dataclasses
import os
import re
import tempfile
from collections.abc import Mapping
from typing import Any

__all__ = ["PassStep", "PassPipeline", "pass_pipeline", "read_dump", "instruction_count"]

# module_0006.jit_f.0014.HLO_passes_after_layout_assignment.after_fusion.before_fusion-wrapper.txt
_STEP_FILE = re.compile(r"^module_(\d+)\.(.+)\.(\d{4})\.(.+?)\.after_(.+?)(?:\.before_(.+))?\.txt$")
_INSTRUCTION = re.compile(r"^\s+(?:ROOT )?%?[^\s=]+ = \S")


def instruction_count(text: str) -> int:
    """The number of instructions in an HLO module's text.

    >>> instruction_count("ENTRY %m (x: f32[]) -> f32[] {\\n  %x = f32[] parameter(0)\\n"
    ...                   "  ROOT %y = f32[] negate(%x)\\n}")
    2
    """
    return sum(1 for line in text.split("\n") if _INSTRUCTION.match(line))


@dataclasses.dataclass(frozen=True)
class PassStep:
    """The module after one pass that changed it (or as a pipeline got it)."""
    index: int          # the order in which XLA ran it (its dump's step number)
    pipeline: str       # the pipeline the pass runs in, e.g. "simplification"
    after: str          # the pass, or "pipeline-start" for the module a pipeline got
    before: str | None  # the pass that runs next
    text: str           # the HLO module's text after it
    instructions: int   # how many instructions that text holds

    @property
    def is_pipeline_start(self) -> bool:
        return self.after == "pipeline-start"


@dataclasses.dataclass(frozen=True)
class PassPipeline:
    """Every step of one compile's pass pipeline, in order, with the module before
    the first pass (``before``) and after the last (``after``)."""
    module: str
    before: str
    after: str
    steps: tuple[PassStep, ...]
    pass_re: str = ".*"

    def changed(self) -> tuple[PassStep, ...]:
        """The steps of passes that changed the module: not a pipeline's start, nor
        the module as it was before a pass the filter keeps."""
        keep = re.compile(self.pass_re)
        return tuple(s for s in self.steps
                     if not s.is_pipeline_start and keep.search(s.after))

    def previous(self, step: PassStep) -> str:
        """The module's text just before ``step`` (what its diff starts from)."""
        k = self.steps.index(step)
        return self.steps[k - 1].text if k else self.before


def read_dump(folder: str | os.PathLike, pass_re: str = ".*") -> PassPipeline:
    """The pass pipeline of the one module XLA dumped into ``folder`` (with the
    pass filter ``pass_re``)."""
    names = os.listdir(folder)
    steps_by_module: dict[tuple[str, str], list] = {}
    for name in names:
        m = _STEP_FILE.match(name)
        if m:
            steps_by_module.setdefault((m.group(1), m.group(2)), []).append((m, name))
    if not steps_by_module:
        raise ValueError(f"XLA wrote no pass dumps into {os.fspath(folder)!r}")
    # One compile dumps one module; take the one with the most steps if there are more.
    (number, module), found = max(steps_by_module.items(), key=lambda kv: len(kv[1]))

    def read(name: str) -> str:
        with open(os.path.join(folder, name), encoding="utf-8", errors="replace") as f:
            return f.read()

    steps = []
    for m, name in sorted(found, key=lambda item: int(item[0].group(3))):
        text = read(name)
        steps.append(PassStep(int(m.group(3)), m.group(4), m.group(5), m.group(6), text,
                              instruction_count(text)))
    prefix = f"module_{number}.{module}."
    before_name = prefix + "before_optimizations.txt"
    before = read(before_name) if before_name in names else (steps[0].text if steps else "")
    after_names = sorted(n for n in names if n.startswith(prefix)
                         and n.endswith("_after_optimizations.txt"))
    after = read(after_names[0]) if after_names else steps[-1].text
    return PassPipeline(module, before, after, tuple(steps), pass_re)


def pass_pipeline(lowered, *, pass_re: str = ".*",
                  compiler_options: Mapping[str, Any] | None = None) -> PassPipeline:
    """Compiles ``lowered`` (an Olympus or JAX ``Lowered``) once more with XLA's
    per-pass dumps, into a private folder removed afterwards, and reads them.

    ``pass_re`` keeps the passes whose names it matches (XLA's
    ``xla_dump_hlo_pass_re``); ``compiler_options`` are the compile's own, as for
    ``compile()``. Nothing of the process (``XLA_FLAGS``, JAX's configuration) is
    changed; a compile that fails raises as ``compile()`` does.
    """
    options = dict(compiler_options or {})
    with tempfile.TemporaryDirectory(prefix="olympus-passes-") as folder:
        options.update(xla_dump_to=folder, xla_dump_hlo_pass_re=pass_re,
                       xla_dump_hlo_as_text=True)
        lowered.compile(options)
        return read_dump(folder, pass_re)
