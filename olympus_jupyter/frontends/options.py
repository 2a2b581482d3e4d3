"""The options of reports, checked in one place for every frontend; and how a
``%olympus_lower`` line splits into options and a call.

Each option takes the values a user would pass, in Python (``inspect``, the
widgets) and on a command line (the magic, the CLI): :func:`check_option`
turns each into one canonical form, or raises one :class:`OptionError` that
names the option, what was given and what it takes, before anything is staged.
:class:`ReportOptions` checks all of its fields that way. Parsing is separate from
IPython so it can be tested and reused by the CLI.

>>> ReportOptions(platforms="cpu,tpu", static_argnums=1, stages="hlo").stages
('hlo',)
>>> check_option("compiler_options", {"xla_backend_optimization_level": 0})
(('xla_backend_optimization_level', 0),)
>>> check_option("static_argnums", "1")
Traceback (most recent call last):
olympus_jupyter.frontends.options.OptionTypeError: static_argnums must be an argument position such as 1, several as (0, 2), or None; got '1' (str).
>>> opts, call = split_line("--platform cpu,tpu --static-argnums 1 f(x, 3)")
>>> opts.platforms, opts.static_argnums, call
(('cpu', 'tpu'), (1,), 'f(x, 3)')
>>> parse_compiler_option("xla_backend_optimization_level=0")
('xla_backend_optimization_level', 0)
"""
from __future__ import annotations

import argparse
import ast
import dataclasses
import functools
import keyword
import math
import re
import numbers
import os
import shlex
from collections.abc import Callable, Iterable, Mapping, Sequence, Set
from typing import Any

import numpy as np

from olympus import platforms as _platforms
from olympus import stage_registry
from olympus.platforms import KNOWN_PLATFORMS
from olympus_jupyter.staging.lru import LRU
from olympus_jupyter.staging.runner import StagingError, unknown_platform


class OptionError(StagingError):
    """An option given a value it does not take; nothing was staged.

    A ``ValueError`` (and a :class:`~olympus_jupyter.staging.runner.StagingError`).
    The message names the option, the value given and what the option takes.
    """


class OptionTypeError(OptionError, TypeError):
    """An option given a value of a type it does not take (also a ``TypeError``)."""


class _Rejected(Exception):
    """Raised by a check: ``detail`` says what is wrong (or None: the value as a whole);
    ``complete`` when ``detail`` already says what is taken."""

    def __init__(self, detail: str | None = None, *, type_error: bool = False,
                 complete: bool = False):
        super().__init__(detail)
        self.detail, self.type_error, self.complete = detail, type_error, complete


@dataclasses.dataclass(frozen=True)
class Option:
    """One option: how Python (``keyword``) and command lines (``flag``) name it,
    what it takes in each, and its ``check(value, text)`` (``text``: the value came
    from a command line, as a string), which returns the canonical value."""
    keyword: str
    flag: str | None
    accepts: str
    accepts_text: str | None
    check: Callable[[Any, bool], Any]


# -- the checks ---------------------------------------------------------------------------

def _flag_value(value, text: bool):
    """True or False (numpy's too); None for the default."""
    if isinstance(value, (bool, np.bool_)):
        return bool(value)
    raise _Rejected(type_error=True)


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
                raise _Rejected(f"{item!r} ({type(item).__name__}) is not a name",
                                type_error=True)
        items = [t.strip() for t in items]
    else:
        raise _Rejected(type_error=True)
    items = [t for t in items if t]  # 'a,b,' and ('a', '') as 'a,b' and ('a',)
    return tuple(items) or None


def _platforms_value(value, text: bool) -> tuple[str, ...] | None:
    names = _names(value, text)
    if names is None:
        return None
    try:
        names = _platforms.normalize_platforms(names, argument="platform")
    except _platforms.PlatformError as e:
        raise _Rejected(str(e).rstrip("."), complete=True) from None
    problem = unknown_platform(names)
    if problem:
        raise _Rejected(problem, complete=True)
    return names


def _positions(value, text: bool) -> tuple[int, ...] | None:
    if value is None:
        return None
    if text and isinstance(value, str):
        items = [t.strip() for t in value.split(",") if t.strip()]
        try:
            return tuple(int(t) for t in items) or None
        except ValueError:
            raise _Rejected() from None
    if isinstance(value, numbers.Integral) and not isinstance(value, (bool, np.bool_)):
        return (int(value),)
    if isinstance(value, (Sequence, Set)) and not isinstance(value, (str, bytes, bytearray)):
        out = []
        for item in value:
            if not isinstance(item, numbers.Integral) or isinstance(item, (bool, np.bool_)):
                raise _Rejected(f"{item!r} ({type(item).__name__}) is not a position",
                                type_error=True)
            out.append(int(item))
        return tuple(out) or None
    raise _Rejected(type_error=True)


def _argnames(value, text: bool) -> tuple[str, ...] | None:
    names = _names(value, text)
    for name in names or ():
        if not name.isidentifier():
            raise _Rejected(f"{name!r} is not a Python argument name")
    return names


def _stages_value(value, text: bool) -> tuple[str, ...]:
    if value is None:
        return stage_registry.default_names()
    if isinstance(value, str) and value.strip().lower() == "all":
        return stage_registry.names()
    names = _names(value, text)
    if not names:
        raise _Rejected("no stage named")
    known = stage_registry.names()
    for name in names:
        if stage_registry.canonical(name.lower()) not in known:
            if text:
                raise _Rejected(f"unknown stage {name!r}; choose from {','.join(known)} or all",
                                complete=True)
            raise _Rejected(f"Unknown stage {name!r}")
    chosen = {stage_registry.canonical(n.lower()) for n in names}  # former names too
    return tuple(s for s in known if s in chosen)


def parse_compiler_option(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` with VALUE read as a Python literal when it is one (0, True, 1.5)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise OptionError(
            f"expected KEY=VALUE such as xla_backend_optimization_level=0, got {text!r}")
    try:
        parsed = ast.literal_eval(value.strip())
        if not isinstance(parsed, (bool, int, float, str)):
            parsed = value.strip()
    except (ValueError, SyntaxError):
        parsed = value.strip()
    return key.strip(), parsed


def _compiler_option_pair(key, value) -> tuple[str, object]:
    if not isinstance(key, str) or not key.strip():
        raise _Rejected(f"the key {key!r} is not an option name", type_error=True)
    if isinstance(value, np.generic):
        value = value.item()
    if not isinstance(value, (bool, int, float, str)):
        raise _Rejected(f"{key}={value!r}: XLA takes a bool, int, float or str, not a "
                        f"{type(value).__name__}", type_error=True)
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
        raise _Rejected(type_error=True)
    out = []
    for item in items:
        if isinstance(item, str):
            try:
                item = parse_compiler_option(item.strip())
            except OptionError as e:
                raise _Rejected(str(e)) from None
        if not (isinstance(item, tuple) and len(item) == 2):
            raise _Rejected(f"{item!r} is neither KEY=VALUE nor a (key, value) pair",
                            type_error=True)
        out.append(_compiler_option_pair(*item))
    return tuple(out)


def _save_path(value, text: bool) -> str | None:
    if value is None:
        return None
    if not isinstance(value, (str, os.PathLike)):
        raise _Rejected(type_error=True)
    path = os.fspath(value)
    if not isinstance(path, str) or not path.strip():
        raise _Rejected(type_error=not isinstance(path, str))
    if not path.lower().endswith((".html", ".htm")):
        raise _Rejected("the report is written as HTML")
    folder = os.path.dirname(os.path.abspath(path))
    if not os.path.isdir(folder):
        raise _Rejected(f"folder {folder!r} does not exist")
    return path


def _variable_name(value, text: bool) -> str | None:
    if value is None:
        return None
    if not isinstance(value, str):
        raise _Rejected(type_error=True)
    if not value.isidentifier() or keyword.iskeyword(value):
        raise _Rejected()
    return value


def _seconds(value, text: bool) -> float | None:
    if value is None:
        return None
    if text and isinstance(value, str):
        try:
            value = float(value)
        except ValueError:
            raise _Rejected() from None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Real):
        raise _Rejected(type_error=not isinstance(value, (bool, np.bool_)))
    if not math.isfinite(value) or value <= 0:
        raise _Rejected()
    return float(value)


def _count(value, text: bool) -> int:
    if text and isinstance(value, str):
        try:
            value = int(value)
        except ValueError:
            raise _Rejected() from None
    if isinstance(value, (bool, np.bool_)) or not isinstance(value, numbers.Integral):
        raise _Rejected(type_error=True)
    if value < 1:
        raise _Rejected()
    return int(value)


def _progress_value(value, text: bool):
    """True, False or None, as they are, or a function to give the status line."""
    if value is None or isinstance(value, bool) or callable(value):
        return value
    raise _Rejected(type_error=True)


def _pass_filter(value, text: bool) -> str | None:
    """None (no passes stage), True (every pass: ``'.*'``) or a regular expression
    of pass names (XLA's ``xla_dump_hlo_pass_re``)."""
    if value is None or value is False:
        return None
    if value is True:
        return ".*"
    if not isinstance(value, str):
        raise _Rejected(type_error=True)
    try:
        re.compile(value)
    except re.error as e:
        raise _Rejected(f"{value!r} is not a regular expression ({e})", complete=False) \
            from None
    return value or ".*"


def _true_false(default: bool):
    def check(value, text):
        return default if value is None else _flag_value(value, text)
    return check


_STAGE_NAMES = ", ".join(stage_registry.names())

#: Every option a frontend takes, by its :class:`ReportOptions` field (or name).
OPTIONS: dict[str, Option] = {
    "platforms": Option(
        "platform", "--platform",
        "a platform name such as 'cpu' or 'tpu', several as ('cpu', 'tpu') or 'cpu,tpu', "
        "or None for this machine's",
        "platform names, e.g. tpu or cpu,tpu", _platforms_value),
    "static_argnums": Option(
        "static_argnums", "--static-argnums",
        "an argument position such as 1, several as (0, 2), or None",
        "argument positions, e.g. 1 or 0,2", _positions),
    "static_argnames": Option(
        "static_argnames", "--static-argnames",
        "an argument name such as 'n', several as ('n', 'mode') or 'n,mode', or None",
        "argument names, e.g. n or n,mode", _argnames),
    "stages": Option(
        "stages", "--stages",
        f"stage names from {_STAGE_NAMES}: one as 'hlo', several as ('olympuspr', 'hlo') "
        f"or 'olympuspr,hlo', 'all', or None for the defaults",
        f"stages, any of {','.join(stage_registry.names())}, or all", _stages_value),
    "debug_info": Option("debug_info", "--no-debug-info", "True or False", None,
                         _true_false(True)),
    "compiler_options": Option(
        "compiler_options", "--compiler-option",
        "a dict such as {'xla_backend_optimization_level': 0}, the text "
        "'KEY=VALUE, KEY=VALUE', (key, value) pairs, or None",
        "KEY=VALUE such as xla_backend_optimization_level=0", _compiler_options_value),
    "save": Option(
        "save", "--save",
        "a path ending in .html (a str or a pathlib.Path) in a folder that exists, or None",
        "a path ending in .html in a folder that exists", _save_path),
    "name": Option("name", "--name", "a Python variable name, or None",
                   "a Python variable name", _variable_name),
    "full": Option("full", "--full", "True or False", None, _true_false(False)),
    "interactive": Option("interactive", "--interactive", "True or False", None,
                          _true_false(False)),
    "passes": Option(
        "passes", "--passes",
        "True (every pass of XLA's pipeline), a regular expression of pass names such as "
        "'fusion|cse', or None/False (no passes stage)",
        "a regular expression of pass names, e.g. fusion|cse (default: every pass)",
        _pass_filter),
    "costs": Option("costs", "--costs", "True or False", None, _true_false(False)),
    "timeout": Option("timeout", "--timeout",
                      "a positive number of seconds (or None for no limit)",
                      "a positive number of seconds", _seconds),
    "progress": Option("progress", None,
                       "True (shown in the output), False or None, or a function taking "
                       "the status line", None, _progress_value),
    "history_size": Option("history_size", None, "a positive whole number of entries",
                           None, _count),
    "history_bytes": Option("history_bytes", None, "a positive whole number of bytes",
                            None, _count),
}


def _message(option: Option, value, rejected: _Rejected, text: bool) -> str:
    if text:  # argparse says which option: "argument --stages: ..."
        if rejected.detail and rejected.complete:
            return rejected.detail
        if rejected.detail:
            return f"{rejected.detail} (expected {option.accepts_text}, got {value!r})"
        return f"expected {option.accepts_text}, got {value!r}"
    if rejected.detail and rejected.complete:
        return f"{rejected.detail} (given {option.keyword}={value!r})."
    kind = f" ({type(value).__name__})" if rejected.type_error else ""
    if rejected.detail:
        return (f"{option.keyword}={value!r}{kind}: {rejected.detail}. "
                f"{option.keyword} must be {option.accepts}.")
    return f"{option.keyword} must be {option.accepts}; got {value!r}{kind}."


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
    option = OPTIONS[name]
    try:
        return option.check(value, text)
    except _Rejected as rejected:
        error = OptionTypeError if rejected.type_error else OptionError
        raise error(_message(option, value, rejected, text)) from None


def check_cache(value, default):
    """The report cache ``inspect`` should use: ``default`` for True, None for False
    or None (no caching), a cache (an :class:`~olympus_jupyter.staging.lru.LRU`, such as
    a ``ReportCache``) as it is; :class:`OptionTypeError` for anything else."""
    if value is None or value is False:
        return None
    if value is True:
        return default
    if isinstance(value, LRU):
        return value
    raise OptionTypeError(
        f"cache must be True (the default cache), False or None (no caching), or a "
        f"ReportCache; got {value!r} ({type(value).__name__}).")


def argparse_type(name: str):
    """An argparse ``type=`` for option ``name``: the same check, for command-line
    text (argparse names the option in its error)."""
    def parse(text: str):
        try:
            return check_option(name, text, text=True)
        except OptionError as e:
            raise argparse.ArgumentTypeError(str(e)) from None
    parse.__name__ = name
    return parse


def compiler_option_text(text: str) -> tuple[str, object]:
    """A ``--compiler-option KEY=VALUE`` (the option repeats: one pair each)."""
    try:
        return parse_compiler_option(text)
    except OptionError as e:
        raise argparse.ArgumentTypeError(str(e)) from None


@dataclasses.dataclass(frozen=True)
class ReportOptions:
    """What the user asked a report to be made of and to show.

    Every field is checked and put in canonical form when the options are made
    (see :data:`OPTIONS`): ``ReportOptions(platforms='cpu,tpu', static_argnums=1)``
    holds ``('cpu', 'tpu')`` and ``(1,)``; a value an option does not take raises
    :class:`OptionError`.
    """
    platforms: tuple[str, ...] | None = None
    static_argnums: tuple[int, ...] | None = None
    static_argnames: tuple[str, ...] | None = None
    stages: tuple[str, ...] = stage_registry.default_names()
    debug_info: bool = True
    compiler_options: tuple[tuple[str, object], ...] = ()
    save: str | None = None
    name: str | None = None
    full: bool = False
    interactive: bool = False
    timeout: float | None = None
    #: XLA's passes to show (a regular expression), or None: no passes stage.
    passes: str | None = None
    #: Whether to show where the cost goes, by line (the ``costs`` stage).
    costs: bool = False

    def __post_init__(self):
        for field in dataclasses.fields(self):
            object.__setattr__(self, field.name,
                               check_option(field.name, getattr(self, field.name)))
        # --passes adds the stage; the stage asked for by name shows every pass.
        if self.passes is not None and "passes" not in self.stages:
            order = stage_registry.names()
            object.__setattr__(self, "stages", tuple(sorted(
                self.stages + ("passes",), key=order.index)))
        elif self.passes is None and "passes" in self.stages:
            object.__setattr__(self, "passes", ".*")
        # --costs adds the stage, as the stage asked for by name does.
        if self.costs and "costs" not in self.stages:
            order = stage_registry.names()
            object.__setattr__(self, "stages", tuple(sorted(
                self.stages + ("costs",), key=order.index)))
        object.__setattr__(self, "costs", "costs" in self.stages)
        if self.interactive:
            for field, flag, why in (("save", "--save", "writes a static report"),
                                     ("timeout", "--timeout", "limits a static report")):
                if getattr(self, field) is not None:
                    raise OptionError(f"{flag} {why}; leave it out with --interactive.")

    @property
    def needs_compile(self) -> bool:
        return any(s in self.stages for s in stage_registry.made_by("compile"))


EXAMPLES = """\
examples:
  %olympus_lower f(x, y)
  %olympus_lower --platform tpu f(x)                 # cross-lower; compiled stages shown as unavailable
  %olympus_lower --platform cpu,tpu f(x)             # one program for both platforms
  %olympus_lower --static-argnums 1 f(x, 3)
  %olympus_lower --stages source,olympuspr,stablehlo f(x)
  %olympus_lower --compiler-option xla_backend_optimization_level=0 f(x)
  %olympus_lower --save report.html --name rep f(x)  # write standalone HTML, keep `rep`
  %olympus_lower --interactive f(x)                  # an inspector widget to explore shapes
  %olympus_lower --passes f(x)                       # what each XLA pass did (one more compile)
  %olympus_lower --passes 'fusion|cse' f(x)          # only the passes these names match
  %olympus_lower --costs f(x)                        # flops, bytes, peak memory by line; collectives

  %%olympus_lower --stages olympuspr,hlo
  def g(x):
      return jnp.tanh(x) @ x.T
  g(jnp.ones((4, 4)))
"""


#: argparse types of the options that take text (the CLI's too).
stage_list = argparse_type("stages")
seconds = argparse_type("timeout")


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise OptionError(f"{message}. See %olympus_lower? for the options.")


@functools.lru_cache(maxsize=4)
def build_parser(prog: str = "%olympus_lower") -> argparse.ArgumentParser:
    """The option parser shared by the magics (and their ``?`` help): made once (it
    is never changed after), as every line of the magic reads its options with it."""
    p = _Parser(prog=prog, add_help=False, epilog=EXAMPLES,
                formatter_class=argparse.RawDescriptionHelpFormatter,
                description="Stage a function for its arguments and show what each "
                            "compilation stage made of it, op by op, tied to your source lines.")
    p.add_argument("--platform", dest="platforms", type=argparse_type("platforms"),
                   metavar="NAME[,NAME]",
                   help=f"lower for these platforms ({', '.join(KNOWN_PLATFORMS)}, or a "
                        f"plugin's); stages that cannot exist on this machine are shown "
                        f"with the reason")
    p.add_argument("--static-argnums", type=argparse_type("static_argnums"), metavar="N[,N]",
                   help="positions of static arguments (plain functions only)")
    p.add_argument("--static-argnames", type=argparse_type("static_argnames"),
                   metavar="NAME[,NAME]",
                   help="names of static arguments (plain functions only)")
    p.add_argument("--stages", type=stage_list, default=stage_registry.default_names(),
                   metavar="LIST",
                   help=f"stages to show, any of {','.join(stage_registry.names())}, or all "
                        f"(default: {','.join(stage_registry.default_names())})")
    p.add_argument("--no-debug-info", dest="debug_info", action="store_false",
                   help="leave out source locations")
    p.add_argument("--compiler-option", dest="compiler_options", action="append",
                   type=compiler_option_text, default=[], metavar="KEY=VALUE",
                   help="an XLA compiler option; repeatable")
    p.add_argument("--save", type=argparse_type("save"), metavar="PATH.html",
                   help="also write a standalone HTML report")
    p.add_argument("--name", type=argparse_type("name"), metavar="NAME",
                   help="keep the report in this variable")
    p.add_argument("--interactive", action="store_true",
                   help="show the interactive inspector: edit shapes, dtypes, static values "
                        "and options, and watch every stage change")
    p.add_argument("--full", action="store_true",
                   help="show stage texts in full, however long (default: long texts are capped)")
    p.add_argument("--passes", nargs="?", const=".*", type=argparse_type("passes"),
                   metavar="REGEX",
                   help="also compile once more with XLA's per-pass dumps and show what each "
                        "pass did, and where each line's ops went (default: every pass; "
                        "REGEX keeps the passes whose names it matches)")
    p.add_argument("--costs", action="store_true",
                   help="also show where the compiled program's cost goes, line by line: "
                        "flops, bytes accessed, the buffers live at the memory peak, and "
                        "the collectives a sharding costs")
    p.add_argument("--timeout", type=seconds, metavar="SECONDS",
                   help="stop staging after this long (a function that hangs while traced); "
                        "the report shows the line it was stopped at")
    return p


def _to_options(ns: argparse.Namespace) -> ReportOptions:
    return ReportOptions(
        platforms=ns.platforms, static_argnums=ns.static_argnums,
        static_argnames=ns.static_argnames, stages=ns.stages, debug_info=ns.debug_info,
        compiler_options=tuple(ns.compiler_options), save=ns.save, name=ns.name,
        full=ns.full, interactive=ns.interactive, timeout=ns.timeout, passes=ns.passes,
        costs=ns.costs)


def parse_options(text: str) -> ReportOptions:
    """Parses an options-only line (the first line of ``%%olympus_lower``)."""
    try:
        tokens = shlex.split(text)
    except ValueError as e:
        raise OptionError(f"cannot read options {text!r}: {e}") from None
    ns, rest = build_parser().parse_known_args(tokens)
    if rest:
        raise OptionError(f"unexpected {' '.join(rest)!r} after the options. "
                          "See %olympus_lower? for the options.")
    return _to_options(ns)


def split_line(line: str) -> tuple[ReportOptions, str]:
    """Splits ``%olympus_lower`` input into its options and the call expression after them."""
    line = line.strip()
    parser = build_parser()
    takes_value = {a for action in parser._actions for a in action.option_strings
                   if action.nargs is None and not isinstance(
                       action, (argparse._StoreTrueAction, argparse._StoreFalseAction))}
    # An option whose value may be left out (--passes) takes the next token only when
    # it is quoted: --passes 'fusion|cse' f(x), but --passes f(x).
    may_take = {a for action in parser._actions for a in action.option_strings
                if action.nargs == "?"}
    pos = 0
    option_tokens: list[str] = []
    while pos < len(line) and line[pos] == "-":
        token, pos = _next_token(line, pos)
        option_tokens.append(token)
        name = token.split("=", 1)[0]
        if name in takes_value and "=" not in token:
            if pos >= len(line):
                raise OptionError(f"option {name} needs a value. "
                                  "See %olympus_lower? for the options.")
            value, pos = _next_token(line, pos)
            option_tokens.append(value)
        elif name in may_take and "=" not in token and line[pos:pos + 1] in ("'", '"'):
            value, pos = _next_token(line, pos)
            option_tokens.append(f"{name}={value}")
            option_tokens.remove(token)
    call = line[pos:].strip()
    ns = parser.parse_args(option_tokens)
    return _to_options(ns), call


def _next_token(line: str, pos: int) -> tuple[str, int]:
    """One shell-style token starting at ``pos`` (quotes allowed), and where the next starts."""
    lexer = shlex.shlex(line[pos:], posix=True)
    lexer.whitespace_split = True
    lexer.commenters = ""
    try:
        token = lexer.get_token()
    except ValueError as e:
        raise OptionError(f"cannot read options in {line!r}: {e}") from None
    consumed = len(line) - pos - len(lexer.instream.read())
    rest = pos + consumed
    while rest < len(line) and line[rest].isspace():
        rest += 1
    return token or "", rest
