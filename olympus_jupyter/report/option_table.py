"""Every option of reports, declared once: one :class:`Option` row each, in one table
that every frontend reads when it is used.

A row says what the option is called in Python (``keyword``) and on command lines
(``flags``), its default, the one help text the magic's and the CLI's ``--help``
show, what it takes (the words of its errors) and its check, how the Inspector
shows it, and where it is offered (``frontends``). From the table are made, each
time they are asked for: the magic's parser and the CLI's
(:mod:`olympus_jupyter.frontends.options`, :mod:`~olympus_jupyter.frontends.cli`),
the keyword checks of ``inspect()`` and the Inspector, and the fields of
``ReportOptions``. A stage kind that brings an option adds its row with
:func:`register_option`; ``tests/test_option_table.py`` checks that every frontend
offers exactly the table's options.

:func:`check_option` turns what a user wrote, in Python or on a command line
(``text=True``), into one canonical form, or raises one :class:`OptionError` that
names the option, what was given and what it takes, before anything is staged.
The table sits in the report floor so that the stage kinds' handlers can declare
their options; the frontends above read it.

>>> check_option("compiler_options", {"xla_backend_optimization_level": 0})
(('xla_backend_optimization_level', 0),)
>>> check_option("static_argnums", "1")
Traceback (most recent call last):
olympus_jupyter.report.option_table.OptionTypeError: static_argnums must be an argument position such as 1, several as (0, 2), or None; got '1' (str).
>>> option("platforms").keyword, option("platforms").flags
('platform', ('--platform',))
>>> [o.name for o in options("cli demo")]  # the built-in kinds' options come last
['stages', 'output', 'passes', 'costs']
"""

from __future__ import annotations

import ast
import dataclasses
import keyword
import math
import numbers
import os
import re
import types
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from typing import Any

import numpy as np

from olympus import hardware as _hardware
from olympus import placement as _placement
from olympus import platforms as _platforms
from olympus import stage_registry
from olympus.platforms import KNOWN_PLATFORMS
from olympus.provenance.focus import focus_of
from olympus_jupyter.staging.lru import LRU
from olympus_jupyter.staging.runner import StagingError, unknown_platform

__all__ = [
    "Option",
    "Control",
    "OptionError",
    "OptionTypeError",
    "Rejected",
    "FRONTENDS",
    "OPTIONS",
    "options",
    "option",
    "register_option",
    "unregister_option",
    "option_registered",
    "check_option",
    "parse_compiler_option",
    "table_version",
    "REPORT",
    "EVERYWHERE",
    "CLI",
    "true_false",
    "pass_filter",
]


class OptionError(StagingError):
    """An option given a value it does not take; nothing was staged.

    A ``ValueError`` (and a :class:`~olympus_jupyter.staging.runner.StagingError`).
    The message names the option, the value given and what the option takes.
    """


class OptionTypeError(OptionError, TypeError):
    """An option given a value of a type it does not take (also a ``TypeError``)."""


class Rejected(Exception):
    """Raised by a check: ``detail`` says what is wrong (or None: the value as a whole);
    ``complete`` when ``detail`` already says what is taken."""

    def __init__(
        self, detail: str | None = None, *, type_error: bool = False, complete: bool = False
    ):
        super().__init__(detail)
        self.detail, self.type_error, self.complete = detail, type_error, complete


# -- a row -----------------------------------------------------------------------------

#: Where an option can be offered: ``ReportOptions`` (``"report"``), the magic's
#: parser, ``inspect()``, the Inspector, and the CLI's two commands.
FRONTENDS = ("report", "magic", "inspect", "inspector", "cli report", "cli demo")
#: How a command line takes an option: ``value`` (``--timeout 30``), ``switch``
#: (``--full``; ``--no-debug-info`` for an option that is on by default), ``repeat``
#: (``--compiler-option A=1 --compiler-option B=2``), ``optional`` (``--passes`` alone
#: takes ``const``, ``--passes 'fusion|cse'`` a value).
TAKES = ("value", "switch", "repeat", "optional")

Text = str | Callable[[], str]  # words, or a function making them when shown (from the registry)


def _words(text: Text | None) -> str | None:
    return text() if callable(text) else text


@dataclasses.dataclass(frozen=True)
class Control:
    """How the Inspector shows an option: the attribute holding its widget (one the
    Inspector draws: ``platforms``, ``stages``, ``debug_info``, ``compiler_options``,
    ``pass_filter``), the widget's label and its tooltip. An option that turns on a
    stage is also ticked by that stage's checkbox; an option without a control is
    taken by the Inspector's keyword alone."""

    attribute: str
    label: str
    tooltip: str


@dataclasses.dataclass(frozen=True)
class Option:
    """One option, declared once.

    ``name`` is the ``ReportOptions`` attribute; ``keyword`` the keyword of
    ``inspect()`` and the Inspector (``name`` unless given); ``flags`` its command-line
    spelling. ``default`` is written as a user would write it (``check`` makes it
    canonical). ``help`` is the one help text of its flag; ``accepts`` (Python) and
    ``accepts_text`` (command lines) say what it takes in its errors. ``check(value,
    text)`` returns the canonical value or raises :class:`Rejected`; ``parse_text``,
    where given, reads one command-line value instead (``repeat`` options).
    ``stage``: the stage the option turns on (asked for by name, the stage sets the
    option to ``stage_value``); ``static_only``: why the option cannot go with
    ``interactive``; ``in_key``: it tells cached reports apart (so canonical values
    are hashable).

    >>> row = option("timeout")
    >>> row.default, row.flags, row.metavar, "inspect" in row.frontends
    (None, ('--timeout',), 'SECONDS', True)
    """

    name: str
    check: Callable[[Any, bool], Any]
    accepts: Text
    help: Text
    frontends: Set[str]
    default: Any = None
    keyword: str = ""
    flags: tuple[str, ...] = ()
    metavar: str | None = None
    takes: str = "value"
    const: Any = None
    accepts_text: Text | None = None
    parse_text: Callable[[str], Any] | None = None
    choices: Callable[[], tuple[str, ...]] | None = None
    required: bool = False
    control: Control | None = None
    stage: str | None = None
    stage_value: Any = None
    static_only: str | None = None
    in_key: bool = False

    def __post_init__(self):
        if not self.keyword:
            object.__setattr__(self, "keyword", self.name)
        object.__setattr__(self, "frontends", frozenset(self.frontends))
        object.__setattr__(self, "flags", tuple(self.flags))
        _valid_row(self)

    def help_text(self) -> str:
        """The help of its flag (and of the option, wherever it is described)."""
        return _words(self.help) or ""

    def accepts_words(self, text: bool = False) -> str:
        """What the option takes, in the words of its errors."""
        return _words(self.accepts_text if text else self.accepts) or ""

    @property
    def on_command_line(self) -> bool:
        return bool(self.frontends & {"magic", "cli report", "cli demo"})


def _valid_row(row: Option) -> None:
    """A row that every frontend can use, or an ``OptionError`` saying what to fix."""

    def bad(why: str):
        raise OptionError(f"option {row.name!r} cannot be declared: {why}.")

    if not row.name.isidentifier() or not row.keyword.isidentifier():
        bad("its name and keyword must be Python identifiers")
    unknown = sorted(row.frontends - set(FRONTENDS))
    if unknown:
        bad(f"unknown frontend {unknown[0]!r}; choose from {', '.join(FRONTENDS)}")
    if row.takes not in TAKES:
        bad(f"takes={row.takes!r}; choose from {', '.join(TAKES)}")
    if row.on_command_line and not row.flags:
        bad("an option of a command line needs its flags, e.g. flags=('--name',)")
    if not row.on_command_line and row.flags:
        bad("flags are for an option of the magic or the CLI (add one to frontends)")
    if any(not f.startswith("-") for f in row.flags):
        bad(f"flags start with '-', got {row.flags}")
    if row.control is not None and "inspector" not in row.frontends:
        bad("a control is shown by the Inspector (add 'inspector' to frontends)")
    if row.stage is not None and row.stage_value is None:
        bad("an option that turns on a stage needs the stage_value the stage sets")


# -- the checks ---------------------------------------------------------------------------


def _flag_value(value, text: bool):
    """True or False (numpy's too); None for the default."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise Rejected(type_error=True)


def _names(value, text: bool) -> tuple[str, ...] | None:
    """A name, ``'a,b'``, or a sequence of names -> a tuple of names (None for none)."""
    if value is None:
        return None
    if isinstance(value, str):
        items = [t.strip() for t in value.split(",")]
    elif isinstance(value, (Sequence, Set)) and not isinstance(value, (bytes, bytearray)):
        items = list(value)
        for item in items:
            if not isinstance(item, str):
                raise Rejected(f"{item!r} ({type(item).__name__}) is not a name", type_error=True)
        items = [t.strip() for t in items]
    else:
        raise Rejected(type_error=True)
    items = [t for t in items if t]  # 'a,b,' and ('a', '') as 'a,b' and ('a',)
    return tuple(items) or None


def _platforms_value(value, text: bool) -> tuple[str, ...] | None:
    names = _names(value, text)
    if names is None:
        return None
    try:
        names = _platforms.normalize_platforms(names, argument="platform")
    except _platforms.PlatformError as e:
        raise Rejected(str(e).rstrip("."), complete=True) from None
    problem = unknown_platform(names)
    if problem:
        raise Rejected(problem, complete=True)
    return names


def _positions(value, text: bool) -> tuple[int, ...] | None:
    if value is None:
        return None
    if text and isinstance(value, str):
        items = [t.strip() for t in value.split(",") if t.strip()]
        try:
            return tuple(int(t) for t in items) or None
        except ValueError:
            raise Rejected() from None
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        return (int(value),)
    if isinstance(value, (Sequence, Set)) and not isinstance(value, (str, bytes, bytearray)):
        out = []
        for item in value:
            if not isinstance(item, numbers.Integral) or isinstance(item, (bool, np.bool_)):
                raise Rejected(
                    f"{item!r} ({type(item).__name__}) is not a position", type_error=True
                )
            out.append(int(item))
        return tuple(out) or None
    raise Rejected(type_error=True)


def _argnames(value, text: bool) -> tuple[str, ...] | None:
    names = _names(value, text)
    for name in names or ():
        if not name.isidentifier():
            raise Rejected(f"{name!r} is not a Python argument name")
    return names


def _focus_value(value, text: bool) -> tuple[str, ...] | None:
    if isinstance(value, os.PathLike):
        value = os.fspath(value)
    elif isinstance(value, (list, tuple)):
        value = [os.fspath(v) if isinstance(v, os.PathLike) else v for v in value]
    names = _names(value, text)
    if names is None:
        return None
    try:
        focus_of(names)
    except ValueError as e:
        raise Rejected(str(e), complete=True) from None
    return names


def _target_value(value, text: bool) -> str | None:
    if value is None or (text and not value.strip()):
        return None
    if isinstance(value, _hardware.Target):
        return value.name
    if not isinstance(value, str):
        raise Rejected(type_error=True)
    try:
        _hardware.parse_target(value)
    except _hardware.TargetError as e:
        raise Rejected(str(e), complete=True) from None
    return value.strip().lower()


def _slices_value(value, text: bool) -> int:
    if value is None:
        return 1
    if text and isinstance(value, str) and value.strip().isdigit():
        value = int(value)
    if isinstance(value, bool) or not isinstance(value, numbers.Integral) or value < 1:
        raise Rejected(type_error=not isinstance(value, numbers.Integral))
    return int(value)


def _mesh_value(value, text: bool) -> tuple[tuple[str, int], ...] | None:
    if value is not None and not isinstance(value, (str, Mapping, list, tuple)):
        raise Rejected(type_error=True)
    try:
        axes = _placement.parse_mesh(value)
    except _placement.PlacementError as e:
        raise Rejected(str(e), complete=True) from None
    return tuple(axes.items()) if axes is not None else None


def _shardings_value(value, text: bool):
    if value is None or (text and not value.strip()):
        return None
    if not isinstance(value, (str, Mapping, list, tuple, _placement.Shardings)) and not (
        _placement.is_spec(value)
    ):
        raise Rejected(type_error=True)
    if isinstance(value, str):
        try:
            return _placement.Shardings.of(_placement.parse_shardings(value))
        except _placement.PlacementError as e:
            raise Rejected(str(e), complete=True) from None
    try:
        return _placement.Shardings.of(value)
    except _placement.PlacementError as e:
        raise Rejected(str(e), complete=True, type_error=True) from None


def _stages_value(value, text: bool) -> tuple[str, ...]:
    if value is None:
        return stage_registry.default_names()
    if isinstance(value, str) and value.strip().lower() == "all":
        return stage_registry.names()
    names = _names(value, text)
    if not names:
        raise Rejected("no stage named")
    known = stage_registry.names()
    for name in names:
        if stage_registry.canonical(name.lower()) not in known:
            if text:
                raise Rejected(
                    f"unknown stage {name!r}; choose from {','.join(known)} or all", complete=True
                )
            raise Rejected(f"Unknown stage {name!r}")
    chosen = {stage_registry.canonical(n.lower()) for n in names}  # former names too
    return tuple(s for s in known if s in chosen)


def parse_compiler_option(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` with VALUE read as a Python literal when it is one (0, True, 1.5)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise OptionError(
            f"expected KEY=VALUE such as xla_backend_optimization_level=0, got {text!r}"
        )
    try:
        parsed = ast.literal_eval(value.strip())
        if not isinstance(parsed, (bool, int, float, str)):
            parsed = value.strip()
    except (ValueError, SyntaxError):
        parsed = value.strip()
    return key.strip(), parsed


def _compiler_option_pair(key, value) -> tuple[str, object]:
    if not isinstance(key, str) or not key.strip():
        raise Rejected(f"the key {key!r} is not an option name", type_error=True)
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (bool, int, float, str)):
        raise Rejected(
            f"{key}={value!r}: XLA takes a bool, int, float or str, not a {type(value).__name__}",
            type_error=True,
        )
    return key.strip(), value


def _compiler_options_value(value, text: bool) -> tuple[tuple[str, object], ...]:
    if value is None:
        return ()
    if isinstance(value, str):
        items: Iterable = [t for t in value.split(",") if t.strip()]
    elif isinstance(value, Mapping):
        return tuple(_compiler_option_pair(k, v) for k, v in value.items())
    elif isinstance(value, (Sequence, Set)) and not isinstance(value, (bytes, bytearray)):
        items = value
    else:
        raise Rejected(type_error=True)
    out = []
    for item in items:
        if isinstance(item, str):
            try:
                item = parse_compiler_option(item.strip())
            except OptionError as e:
                raise Rejected(str(e)) from None
        if not (isinstance(item, tuple) and len(item) == 2):
            raise Rejected(
                f"{item!r} is neither KEY=VALUE nor a (key, value) pair", type_error=True
            )
        out.append(_compiler_option_pair(*item))
    return tuple(out)


def _save_path(value, text: bool) -> str | None:
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise Rejected(type_error=True)
    path = os.fspath(value)
    if not isinstance(path, str) or not path.strip():
        raise Rejected(type_error=not isinstance(path, str))
    if not path.lower().endswith((".html", ".htm")):
        raise Rejected("the report is written as HTML")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise Rejected(f"folder {folder!r} does not exist")
    return path


def _variable_name(value, text: bool) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise Rejected(type_error=True)
    if not value.isidentifier() or keyword.iskeyword(value):
        raise Rejected()
    return value


def _seconds(value, text: bool) -> float | None:
    if value is None:
        return None
    if text and isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise Rejected() from None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise Rejected(type_error=not isinstance(value, (bool, np.bool_)))
    if not math.isfinite(value) or value <= 0:
        raise Rejected()
    return float(value)


def _count(value, text: bool) -> int:
    if text and isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            raise Rejected() from None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise Rejected(type_error=True)
    if value < 1:
        raise Rejected()
    return int(value)


def _progress_value(value, text: bool):
    """True, False or None, as they are, or a function to give the status line."""
    if value is None or isinstance(value, bool) or callable(value):
        return value
    raise Rejected(type_error=True)


def pass_filter(value, text: bool) -> str | None:
    """None (no passes stage), True (every pass: ``'.*'``) or a regular expression
    of pass names (XLA's ``xla_dump_hlo_pass_re``)."""
    if value is None or value is False:
        return None
    if value is True:
        return ".*"
    if not isinstance(value, str):
        raise Rejected(type_error=True)
    try:
        re.compile(value)
    except re.error as e:
        raise Rejected(f"{value!r} is not a regular expression ({e})", complete=False) from None
    return value or ".*"


def true_false(default: bool):
    """The check of a switch: True or False (numpy's too), ``default`` for None.

    >>> true_false(False)(None, False), true_false(False)(True, False)
    (False, True)
    """

    def check(value, text):
        return default if value is None else _flag_value(value, text)

    return check


def _cache_value(value, text: bool):
    """True (the default cache), None (no caching: False too) or a cache as it is."""
    if value is None or value is False:
        return None
    if value is True or isinstance(value, LRU):
        return value
    raise Rejected(type_error=True)


def _stage_words() -> str:
    return (
        f"stage names from {', '.join(stage_registry.names())}: one as 'hlo', several "
        f"as ('olympuspr', 'hlo') or 'olympuspr,hlo', 'all', or None for the defaults"
    )


def _stage_help() -> str:
    return (
        f"stages to show, any of {','.join(stage_registry.names())}, or all "
        f"(default: {','.join(stage_registry.default_names())})"
    )


#: Where an option is offered (``Option.frontends``): the report's own options (the
#: magic's too), every Python and notebook frontend, the command line's two commands.
REPORT = frozenset({"report", "magic"})
EVERYWHERE = frozenset({"report", "magic", "inspect", "inspector"})
CLI = frozenset({"cli report", "cli demo"})

#: The options of Olympus, in the order their help lists them (a stage kind's
#: handler adds its own with :func:`register_option`).
_BUILT_IN = (
    Option(
        "platforms",
        _platforms_value,
        keyword="platform",
        flags=("--platform",),
        frontends=EVERYWHERE | {"cli report"},
        metavar="NAME[,NAME]",
        in_key=True,
        choices=lambda: KNOWN_PLATFORMS,
        accepts="a platform name such as 'cpu' or 'tpu', several as ('cpu', 'tpu') or "
        "'cpu,tpu', or None for this machine's",
        accepts_text="platform names, e.g. tpu or cpu,tpu",
        help=f"lower for these platforms ({', '.join(KNOWN_PLATFORMS)}, or a plugin's); "
        f"stages that cannot exist on this machine are shown with the reason",
        control=Control(
            "platforms", "platforms", "the platforms to lower for; none ticked: this machine's"
        ),
    ),
    Option(
        "target",
        _target_value,
        flags=("--target",),
        frontends=EVERYWHERE | {"cli report"},
        metavar="NAME",
        in_key=True,
        accepts="a TPU slice named as libtpu names it, such as 'v5e:4x4' or 'v5p:2x2x2', "
        "GPUs by kind and count such as 'h100:8', or None for this machine's devices",
        accepts_text="a TPU slice such as v5e:4x4, or GPUs such as h100:8",
        help="compile for this hardware without having it (a TPU slice, e.g. v5e:4x4, "
        "with libtpu; GPUs, e.g. h100:8, with JAX's CUDA plugin): the arguments are "
        "placed on a mesh of its devices, and the report says whether the program fits "
        "in their memory",
        choices=lambda: _hardware.COMMON_TARGETS,
        control=Control(
            "target",
            "target",
            "the hardware to compile for without it (libtpu or JAX's CUDA plugin); "
            "this machine: its own devices",
        ),
    ),
    Option(
        "num_slices",
        _slices_value,
        default=1,
        flags=("--num-slices",),
        frontends=EVERYWHERE | {"cli report"},
        metavar="N",
        in_key=True,
        accepts="a whole number of slices, 1 or more (with target=)",
        accepts_text="a whole number of slices, e.g. 2",
        help="with --target: that many slices of it (a multi-slice job)",
    ),
    Option(
        "mesh",
        _mesh_value,
        flags=("--mesh",),
        frontends=EVERYWHERE | {"cli report"},
        metavar="AXIS=N[,AXIS=N]",
        in_key=True,
        accepts="mesh axes such as {'data': 4, 'model': 4} or 'data=4,model=4' (with "
        "target=), or None: one axis over every device",
        accepts_text="mesh axes, e.g. data=4,model=4",
        help="with --target: the mesh of its devices the arguments are sharded over",
    ),
    Option(
        "shardings",
        _shardings_value,
        flags=("--shardings",),
        frontends=EVERYWHERE | {"cli report"},
        metavar="SPEC[;SPEC]",
        in_key=True,
        accepts="a PartitionSpec (or NamedSharding, or None) per positional argument, "
        "in a tuple, each one spec or a pytree of them for the argument's leaves "
        "(with target=), or None: each argument's own sharding, else replicated",
        accepts_text="mesh axes per dimension, arguments apart by ';', e.g. 'data,None; None,model'",
        help="with --target: how each argument is sharded over the mesh",
    ),
    Option(
        "static_argnums",
        _positions,
        flags=("--static-argnums",),
        frontends=EVERYWHERE,
        metavar="N[,N]",
        in_key=True,
        accepts="an argument position such as 1, several as (0, 2), or None",
        accepts_text="argument positions, e.g. 1 or 0,2",
        help="positions of static arguments (plain functions only)",
    ),
    Option(
        "static_argnames",
        _argnames,
        flags=("--static-argnames",),
        frontends=EVERYWHERE,
        metavar="NAME[,NAME]",
        in_key=True,
        accepts="an argument name such as 'n', several as ('n', 'mode') or 'n,mode', or None",
        accepts_text="argument names, e.g. n or n,mode",
        help="names of static arguments (plain functions only)",
    ),
    Option(
        "stages",
        _stages_value,
        flags=("--stages",),
        frontends=EVERYWHERE | CLI,
        metavar="LIST",
        in_key=True,
        choices=lambda: stage_registry.names(),
        accepts=_stage_words,
        accepts_text=lambda: f"stages, any of {','.join(stage_registry.names())}, or all",
        help=_stage_help,
        control=Control("stages", "stages", "the stages to show (the display only)"),
    ),
    Option(
        "debug_info",
        true_false(True),
        default=True,
        flags=("--no-debug-info",),
        takes="switch",
        frontends=EVERYWHERE | {"cli report"},
        in_key=True,
        accepts="True or False",
        help="leave out source locations",
        control=Control(
            "debug_info", "debug info", "show source locations in the programs (the display only)"
        ),
    ),
    Option(
        "compiler_options",
        _compiler_options_value,
        flags=("--compiler-option",),
        takes="repeat",
        parse_text=parse_compiler_option,
        frontends=EVERYWHERE,
        metavar="KEY=VALUE",
        in_key=True,
        accepts="a dict such as {'xla_backend_optimization_level': 0}, the text "
        "'KEY=VALUE, KEY=VALUE', (key, value) pairs, or None",
        accepts_text="KEY=VALUE such as xla_backend_optimization_level=0",
        help="an XLA compiler option; repeatable",
        control=Control(
            "compiler_options",
            "compiler options",
            "KEY=VALUE, KEY=VALUE: XLA compiler options (press Enter)",
        ),
    ),
    Option(
        "focus",
        _focus_value,
        flags=("--focus",),
        frontends=EVERYWHERE | {"cli report"},
        metavar="PATH|MODULE[,...]",
        in_key=True,
        accepts="folders, .py files or module names of your own code, such as 'mypkg' or "
        "['mypkg', '/home/me/project'], or None for every file that is not installed",
        accepts_text="folders, .py files or modules of your own code, e.g. mypkg,/home/me/lib",
        help="what counts as your code: costs, peak buffers, collectives, journeys and "
        "links are charged to its innermost line in each call stack, with the library "
        "lines beneath it as detail (default: every file that is not installed)",
    ),
    Option(
        "save",
        _save_path,
        flags=("--save",),
        frontends=REPORT,
        metavar="PATH.html",
        static_only="writes a static report",
        accepts="a path ending in .html (a str or a pathlib.Path) in a folder that exists, or None",
        accepts_text="a path ending in .html in a folder that exists",
        help="also write a standalone HTML report",
    ),
    Option(
        "name",
        _variable_name,
        flags=("--name",),
        frontends=REPORT,
        metavar="NAME",
        accepts="a Python variable name, or None",
        accepts_text="a Python variable name",
        help="keep the report in this variable",
    ),
    Option(
        "interactive",
        true_false(False),
        default=False,
        flags=("--interactive",),
        takes="switch",
        frontends=REPORT,
        accepts="True or False",
        help="show the interactive inspector: edit shapes, dtypes, static values and "
        "options, and watch every stage change",
    ),
    Option(
        "full",
        true_false(False),
        default=False,
        flags=("--full",),
        takes="switch",
        frontends=REPORT | {"inspect"},
        in_key=True,
        accepts="True or False",
        help="show stage texts in full, however long (default: long texts are capped)",
    ),
    Option(
        "timeout",
        _seconds,
        flags=("--timeout",),
        metavar="SECONDS",
        frontends=REPORT | {"inspect", "cli report"},
        static_only="limits a static report",
        accepts="a positive number of seconds (or None for no limit)",
        accepts_text="a positive number of seconds",
        help="stop staging after this long (a function that hangs while traced); the "
        "report shows the line it was stopped at",
    ),
    Option(
        "cache",
        _cache_value,
        default=True,
        frontends={"inspect"},
        accepts="True (the default cache), False or None (no caching), or a ReportCache",
        help="the reports to reuse: True, the default cache; False or None, none",
    ),
    Option(
        "progress",
        _progress_value,
        frontends={"inspect"},
        accepts="True (shown in the output), False or None, or a function taking the status line",
        help="say which step runs and for how long once staging takes more than a second",
    ),
    Option(
        "history_size",
        _count,
        default=32,
        frontends={"inspector"},
        accepts="a positive whole number of entries",
        help="how many specializations the Inspector keeps to compare with",
    ),
    Option(
        "history_bytes",
        _count,
        default=64 * 2**20,
        frontends={"inspector"},
        accepts="a positive whole number of bytes",
        help="about how many bytes of program texts the Inspector's history keeps",
    ),
    Option(
        "output",
        _save_path,
        flags=("-o", "--output"),
        frontends=CLI,
        required=True,
        metavar="REPORT.html",
        accepts="a path ending in .html (a str or a pathlib.Path) in a folder that exists",
        accepts_text="a path ending in .html in a folder that exists",
        help="the standalone HTML report to write (its folder must exist)",
    ),
)

_TABLE: dict[str, Option] = {row.name: row for row in _BUILT_IN}
_VERSION = [0]  # counts the changes of the table: the parsers made from it are remade

#: Every option, by name: a live, read-only view of the table (registered rows too).
OPTIONS: Mapping[str, Option] = types.MappingProxyType(_TABLE)


def table_version() -> int:
    """A number that changes whenever the table does (parsers cached by it are remade)."""
    return _VERSION[0]


def options(frontend: str | None = None) -> tuple[Option, ...]:
    """The options, in the table's order; those ``frontend`` offers (one of
    :data:`FRONTENDS`) when given."""
    if frontend is not None and frontend not in FRONTENDS:
        raise ValueError(f"unknown frontend {frontend!r}; choose from {', '.join(FRONTENDS)}")
    return tuple(row for row in _TABLE.values() if frontend is None or frontend in row.frontends)


def option(name: str) -> Option:
    """The row of option ``name``; a ``KeyError`` naming the options there are."""
    try:
        return _TABLE[name]
    except KeyError:
        raise KeyError(f"no option {name!r}; the options are {', '.join(_TABLE)}") from None


def register_option(row: Option) -> Option:
    """Adds ``row`` to the table: from now on every frontend it names offers it (the
    parsers are made again, ``inspect()`` and the Inspector take its keyword,
    ``ReportOptions`` holds it). Its name, keyword and flags must be new; an
    ``OptionError`` says which is taken.

    >>> row = register_option(Option("shout", check=lambda v, text: bool(v), default=False,
    ...     flags=("--shout",), takes="switch", frontends={"report", "magic"},
    ...     accepts="True or False", help="print the report in capitals"))
    >>> [o.name for o in options("magic")][-2:], unregister_option("shout") is row
    (['costs', 'shout'], True)
    """
    for other in _TABLE.values():
        taken = (
            ("name", row.name, other.name)
            if row.name in (other.name, other.keyword)
            else ("keyword", row.keyword, other.name)
            if row.keyword in (other.name, other.keyword)
            else ("flag", next(iter(set(row.flags) & set(other.flags)), None), other.name)
        )
        if taken[1] is not None:
            raise OptionError(
                f"cannot register option {row.name!r}: its {taken[0]} "
                f"{taken[1]!r} is taken by option {taken[2]!r}; choose "
                f"another."
            )
    _TABLE[row.name] = row
    _VERSION[0] += 1
    return row


def option_registered(row: Option) -> bool:
    """Whether ``row`` itself is in the table (not merely a row of its name)."""
    return _TABLE.get(row.name) is row


def unregister_option(name: str) -> Option:
    """Takes option ``name`` out of the table (a plugin unloaded, a test's own row);
    returns its row."""
    row = option(name)
    del _TABLE[name]
    _VERSION[0] += 1
    return row


def _message(row: Option, value, rejected: Rejected, text: bool) -> str:
    if text:  # argparse says which option: "argument --stages: ..."
        if rejected.detail and rejected.complete:
            return rejected.detail
        if rejected.detail:
            return f"{rejected.detail} (expected {row.accepts_words(True)}, got {value!r})"
        return f"expected {row.accepts_words(True)}, got {value!r}"
    if rejected.detail and rejected.complete:
        return f"{rejected.detail} (given {row.keyword}={value!r})."
    kind = f" ({type(value).__name__})" if rejected.type_error else ""
    if rejected.detail:
        return (
            f"{row.keyword}={value!r}{kind}: {rejected.detail}. "
            f"{row.keyword} must be {row.accepts_words()}."
        )
    return f"{row.keyword} must be {row.accepts_words()}; got {value!r}{kind}."


def check_option(name: str, value, *, text: bool = False):
    """``value`` of option ``name`` (a key of :data:`OPTIONS`) in its canonical form.

    ``text=True``: the value came from a command line (numbers may then be
    strings). Raises :class:`OptionError` (:class:`OptionTypeError` for a value of
    the wrong type) naming the option, the value and what it takes.

    >>> check_option("platforms", ["CPU", "tpu"]), check_option("stages", "all")[:2]
    (('cpu', 'tpu'), ('source', 'olympuspr'))
    >>> check_option("timeout", "2.5", text=True)
    2.5
    """
    row = option(name)
    try:
        return row.check(value, text)
    except Rejected as rejected:
        error = OptionTypeError if rejected.type_error else OptionError
        raise error(_message(row, value, rejected, text)) from None
