"""The stages Olympus shows, in one table that every consumer reads.

Each :class:`StageSpec` says what a stage is called, which compilation step makes
it, how its text is read, which language highlights it, whether its ops are tied
to source (``linked``), and whether reports show it by default. The provenance
builder, the report and its forms (JSON bundle, HTML, text), the magic's
``--stages`` option, the inspector's checkboxes, the CLI and the JupyterLab view
(through the bundle) all read this table: adding a stage is one row here and one
module that makes its text; a linked stage also gets its reader in
:data:`olympus.provenance.readers.READERS`, under the stage's name.

The table is plain data at the base of the package: it imports nothing of
:mod:`olympus.provenance`, whose readers look their stages up here.

One word, one meaning: ``hlo`` is the HLO the compiler takes (before
optimization), ``compiled`` the HLO it made (after optimization), in the report
and in the provenance model alike.

>>> [s.name for s in STAGES if s.default]
['source', 'olympuspr', 'stablehlo', 'hlo', 'compiled', 'cost_analysis', 'memory']
>>> canonical("cost")  # its former name: still read
'cost_analysis'
>>> stage("compiled").title
'Compiled HLO: after optimization'
>>> [s.name for s in provenance_stages()]
['olympuspr', 'stablehlo', 'compiled', 'partitioned']
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable
from typing import Any

from olympus.errors import StageUnavailable

__all__ = [
    "StageSpec",
    "STAGES",
    "STEPS",
    "KINDS",
    "ALIASES",
    "stage",
    "names",
    "default_names",
    "canonical",
    "register",
    "unregister",
    "all_stages",
    "program_stages",
    "provenance_stages",
    "made_by",
    "UnknownStage",
    "StageUnavailable",
]

#: The compilation steps, in order; each stage is made by one of them (or none).
STEPS = ("trace", "lower", "compile")
#: What the built-in stages can be (see :class:`StageSpec`); a stage kind registered
#: later (``olympus_jupyter.report.kinds.register_kind``) may be another.
KINDS = ("source", "program", "passes", "costs", "analysis")


@dataclasses.dataclass(frozen=True)
class StageSpec:
    """One stage: where it comes from and how it is shown.

    ``kind`` is ``'source'`` (the user's code), ``'program'`` (a program text with
    ops), ``'passes'`` (XLA's pass pipeline, pass by pass: :mod:`olympus.passes`),
    ``'costs'`` (flops, bytes and peak memory by source line, and the collectives
    a sharding costs) or ``'analysis'`` (figures). ``step`` is the compilation step that makes
    it (``None`` for the source). ``text(stage_object, debug_info)`` gives a
    program's text from the object that step made (a ``Traced``, ``Lowered`` or
    ``Compiled``), or ``None`` where it does not exist; a ``linked`` stage's ops
    are tied to source instead: its provenance reader
    (:func:`olympus.provenance.readers.reader`, by the stage's name) builds them
    from that object. ``language`` names the highlighter (the
    Pygments lexer and the extension's CodeMirror language); ``unit`` what its
    ops are called; ``default`` whether reports show it unless asked otherwise
    (stages that cost an extra compile are not).
    """

    name: str
    title: str
    label: str
    kind: str
    step: str | None = None
    language: str | None = None
    unit: str = "ops"
    default: bool = True
    text: Callable[[Any, bool], str | None] | None = None
    #: Whether the stage's ops are tied to source (it has a provenance reader).
    linked: bool = False

    def info(self) -> dict[str, Any]:
        """What the JSON bundle says of this stage (for the JupyterLab view)."""
        return {
            "name": self.name,
            "title": self.title,
            "label": self.label,
            "kind": self.kind,
            "step": self.step,
            "language": self.language,
            "unit": self.unit,
            "linked": self.linked,
        }


def _hlo_text(lowered, debug_info: bool) -> str | None:
    return lowered.as_text("hlo")


STAGES: tuple[StageSpec, ...] = (
    StageSpec("source", "Source", "source", "source", language="python", unit="lines"),
    StageSpec(
        "olympuspr",
        "olympuspr: traced program",
        "olympuspr",
        "program",
        step="trace",
        language="olympuspr",
        unit="equations",
        linked=True,
    ),
    StageSpec(
        "stablehlo",
        "StableHLO: lowered program",
        "StableHLO",
        "program",
        step="lower",
        language="stablehlo",
        linked=True,
    ),
    StageSpec(
        "hlo",
        "HLO: compiler input",
        "HLO",
        "program",
        step="lower",
        language="hlo",
        unit="instructions",
        text=_hlo_text,
    ),
    StageSpec(
        "compiled",
        "Compiled HLO: after optimization",
        "compiled",
        "program",
        step="compile",
        language="hlo",
        unit="instructions",
        linked=True,
    ),
    StageSpec(
        "partitioned",
        "HLO after SPMD partitioning",
        "partitioned",
        "program",
        step="compile",
        language="hlo",
        unit="instructions",
        default=False,
        linked=True,
    ),
    StageSpec(
        "passes",
        "XLA passes: what each pass did",
        "passes",
        "passes",
        step="compile",
        language="hlo",
        unit="passes",
        default=False,
    ),
    StageSpec(
        "costs",
        "Where the cost goes: by line",
        "cost by line",
        "costs",
        step="compile",
        unit="lines",
        default=False,
    ),
    # XLA's ``cost_analysis()`` figures; called ``cost`` before, a name too close to
    # ``costs`` (the cost by line): ``cost`` is still read (ALIASES).
    StageSpec("cost_analysis", "Cost analysis", "cost", "analysis", step="compile"),
    StageSpec("memory", "Memory analysis", "memory", "analysis", step="compile"),
)

#: Former stage names, still accepted wherever a stage is named (``stages=["cost"]``,
#: ``--stages cost``, a saved report): old name -> name.
ALIASES = {"cost": "cost_analysis"}

_BY_NAME = {s.name: s for s in STAGES}


class UnknownStage(KeyError, ValueError):
    """A stage name that is not in the table."""

    def __str__(self) -> str:
        return str(self.args[0])


def all_stages() -> tuple[StageSpec, ...]:
    """Every stage: the built-in ones (:data:`STAGES`), then those registered, in order."""
    return tuple(_BY_NAME.values())


def names() -> tuple[str, ...]:
    """Every stage name, in order."""
    return tuple(_BY_NAME)


def default_names() -> tuple[str, ...]:
    """The stages a report shows when none are named."""
    return tuple(s.name for s in all_stages() if s.default)


def canonical(name: str) -> str:
    """``name``, or the stage's name now when ``name`` is a former one (:data:`ALIASES`).

    >>> canonical("cost"), canonical("hlo")
    ('cost_analysis', 'hlo')
    """
    return ALIASES.get(name, name) if isinstance(name, str) else name


def register(spec: StageSpec) -> StageSpec:
    """Adds a stage to the table, after the others (what
    ``olympus_jupyter.report.kinds.register_kind`` does for a new stage kind).
    Registering the same row again does nothing; another row under a name taken
    raises ``ValueError``.

    >>> register(stage("hlo")) is stage("hlo")
    True
    """
    if not (isinstance(spec.name, str) and spec.name.isidentifier() and len(spec.name) <= 64):
        raise ValueError(
            f"A stage name is a Python identifier of at most 64 characters; got {spec.name!r}."
        )
    if spec.step not in (None, *STEPS):
        raise ValueError(f"Stage {spec.name!r}: step {spec.step!r} is not one of {STEPS}.")
    taken = _BY_NAME.get(spec.name)
    if taken is not None and taken != spec:
        raise ValueError(
            f"Stage {spec.name!r} is already registered (as {taken.title!r}); choose another name."
        )
    if spec.name in ALIASES:
        raise ValueError(
            f"{spec.name!r} is the former name of stage "
            f"{ALIASES[spec.name]!r}; choose another name."
        )
    _BY_NAME.setdefault(spec.name, spec)
    return _BY_NAME[spec.name]


def stage(name: str) -> StageSpec:
    """The row of stage ``name``; raises :class:`UnknownStage` (a ``KeyError`` and a
    ``ValueError``) naming the choices.

    >>> stage("hlo").unit
    'instructions'
    """
    try:
        return _BY_NAME[canonical(name)]
    except (KeyError, TypeError):
        raise UnknownStage(f"Unknown stage {name!r}; choose from {', '.join(names())}.") from None


def unregister(name: str) -> None:
    """Takes a stage added by :func:`register` out of the table (a built-in one stays)."""
    if any(s.name == name for s in STAGES):
        raise ValueError(f"Stage {name!r} is built in; it cannot be unregistered.")
    _BY_NAME.pop(name, None)


def program_stages() -> tuple[StageSpec, ...]:
    """The stages that are program texts, in order."""
    return tuple(s for s in all_stages() if s.kind == "program")


def provenance_stages() -> tuple[StageSpec, ...]:
    """The stages whose ops are tied to source, in order."""
    return tuple(s for s in all_stages() if s.linked)


def made_by(step: str) -> tuple[str, ...]:
    """The stages made by ``step`` or a later one: what a failure at ``step`` leaves
    unmade.

    >>> made_by("compile")
    ('compiled', 'partitioned', 'passes', 'costs', 'cost_analysis', 'memory')
    """
    later = STEPS[STEPS.index(step) :]
    return tuple(s.name for s in all_stages() if s.step in later)
