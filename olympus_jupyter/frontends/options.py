"""The options of reports as the frontends take them: :class:`ReportOptions`, what
the user asked a report to be made of and to show, and the magic's parser, which
reads them off a ``%olympus_lower`` line; both made from the one table of options
(:mod:`olympus_jupyter.report.option_table`), when they are used.

Each option takes the values a user would pass, in Python (``inspect``, the
widgets) and on a command line (the magic, the CLI): :func:`check_option` turns
each into one canonical form, or raises one :class:`OptionError` that names the
option, what was given and what it takes, before anything is staged. Parsing is
separate from IPython so it can be tested and reused by the CLI.

>>> ReportOptions(platforms="cpu,tpu", static_argnums=1, stages="hlo").stages
('hlo',)
>>> check_option("static_argnums", "1")
Traceback (most recent call last):
olympus_jupyter.report.option_table.OptionTypeError: static_argnums must be an argument position such as 1, several as (0, 2), or None; got '1' (str).
>>> opts, call = split_line("--platform cpu,tpu --static-argnums 1 f(x, 3)")
>>> opts.platforms, opts.static_argnums, call
(('cpu', 'tpu'), (1,), 'f(x, 3)')
>>> parse_compiler_option("xla_backend_optimization_level=0")
('xla_backend_optimization_level', 0)
"""

from __future__ import annotations

import argparse
import dataclasses
import functools
import shlex
from collections.abc import Iterable, Mapping
from typing import Any

from olympus import stage_registry
from olympus_jupyter.staging.lru import LRU
from olympus_jupyter.report.option_table import (
    OPTIONS,
    Control,
    Option,
    OptionError,
    OptionTypeError,
    check_option,
    option,
    options,
    parse_compiler_option,
    register_option,
    table_version,
    unregister_option,
)

__all__ = [
    "ReportOptions",
    "OptionError",
    "OptionTypeError",
    "Option",
    "Control",
    "OPTIONS",
    "options",
    "option",
    "register_option",
    "unregister_option",
    "check_option",
    "check_cache",
    "parse_compiler_option",
    "key_options",
    "form_options",
    "option_keywords",
    "argparse_type",
    "add_arguments",
    "build_parser",
    "parse_options",
    "split_line",
]


def check_cache(value: Any, default: LRU | None) -> LRU | None:
    """The report cache ``inspect`` should use: ``default`` for True, None for False
    or None (no caching), a cache (an :class:`~olympus_jupyter.staging.lru.LRU`, such as
    a ``ReportCache``) as it is; :class:`OptionTypeError` for anything else."""
    value = check_option("cache", value)
    return default if value is True else value


def _off(value) -> bool:
    return value is None or value is False


class ReportOptions:
    """What the user asked a report to be made of and to show: one attribute per
    option of the table that ``ReportOptions`` takes (``"report"`` among its
    frontends), given by keyword.

    Every value is checked and put in canonical form when the options are made
    (see :mod:`~olympus_jupyter.report.option_table`):
    ``ReportOptions(platforms='cpu,tpu', static_argnums=1)`` holds ``('cpu', 'tpu')``
    and ``(1,)``; a value an option does not take raises :class:`OptionError`. An
    option that turns on a stage (``passes``, ``costs``) adds it to ``stages``, and
    the stage asked for by name sets the option. Frozen, hashable, compared by value.

    >>> "costs" in ReportOptions(costs=True).stages, ReportOptions(stages="hlo,passes").passes
    (True, '.*')
    """

    # The built-in options, for readers and type checkers (tests/test_option_table.py
    # checks them against the table); an option registered later is an attribute too.
    platforms: tuple[str, ...] | None
    #: The hardware compiled for (a target name such as ``'v5e:4x4'``), or None:
    #: this machine's (:mod:`olympus.hardware`); with its slices, the mesh
    #: (``(axis, size)`` pairs) and the arguments' shardings (:mod:`olympus.placement`).
    target: str | None
    num_slices: int
    mesh: tuple[tuple[str, int], ...] | None
    shardings: Any
    static_argnums: tuple[int, ...] | None
    static_argnames: tuple[str, ...] | None
    stages: tuple[str, ...]
    debug_info: bool
    compiler_options: tuple[tuple[str, object], ...]
    #: What is the user's own code (folders, files, modules), or None: every file
    #: that is not installed (:mod:`olympus.provenance.focus`).
    focus: tuple[str, ...] | None
    save: str | None
    name: str | None
    interactive: bool
    full: bool
    timeout: float | None
    # The options of the built-in stage kinds (report/builtin_kinds.py declares them):
    #: XLA's passes to show (a regular expression), or None: no passes stage.
    passes: str | None
    #: Whether to show where the cost goes, by line (the ``costs`` stage).
    costs: bool

    def __init__(self, **given: Any):
        rows = {row.name: row for row in options("report")}
        unknown = [name for name in given if name not in rows]
        if unknown:
            raise OptionTypeError(
                f"ReportOptions takes no option {unknown[0]!r}; it takes {', '.join(rows)}."
            )
        values = {
            name: check_option(name, given.get(name, row.default)) for name, row in rows.items()
        }
        order = stage_registry.names()
        for row in rows.values():  # an option that turns on a stage, and the stage
            if row.stage is None or row.stage not in order:
                continue
            if not _off(values[row.name]) and row.stage not in values["stages"]:
                values["stages"] = tuple(sorted(values["stages"] + (row.stage,), key=order.index))
            elif _off(values[row.name]) and row.stage in values["stages"]:
                values[row.name] = check_option(row.name, row.stage_value)
        if values.get("interactive"):
            for row in rows.values():
                if row.static_only and values[row.name] != check_option(row.name, row.default):
                    raise OptionError(
                        f"{row.flags[0]} {row.static_only}; leave it out with --interactive."
                    )
        self._values: dict[str, Any]  # declared here, not in the class: not an option
        object.__setattr__(self, "_values", values)
        for name, value in values.items():
            object.__setattr__(self, name, value)

    def __setattr__(self, name: str, value: Any) -> None:
        raise dataclasses.FrozenInstanceError(
            f"cannot assign to option {name!r}: ReportOptions are frozen"
        )

    def __delattr__(self, name: str) -> None:
        raise dataclasses.FrozenInstanceError(
            f"cannot delete option {name!r}: ReportOptions are frozen"
        )

    def __eq__(self, other):
        if not isinstance(other, ReportOptions):
            return NotImplemented
        return self._values == other._values

    def __hash__(self):
        return hash(tuple(self._values.items()))

    def __repr__(self):
        return f"ReportOptions({', '.join(f'{k}={v!r}' for k, v in self._values.items())})"

    def values(self) -> dict[str, Any]:
        """Every option's value, by name (the table's order)."""
        return dict(self._values)

    def keywords(self, frontend: str) -> dict[str, Any]:
        """These options as ``frontend`` (``"inspect"``, ``"inspector"``) takes them:
        by its keywords, those it takes."""
        return {
            row.keyword: self._values[row.name]
            for row in options(frontend)
            if row.name in self._values
        }

    @property
    def needs_compile(self) -> bool:
        return any(s in self.stages for s in stage_registry.made_by("compile"))


def form_options() -> dict[str, Control]:
    """The options the Inspector's form shows (in JupyterLab, and as the page's form
    in marimo): each :class:`Control` the table gives, by its option's name, in the
    table's order.

    >>> list(form_options())
    ['platforms', 'target', 'stages', 'debug_info', 'compiler_options', 'passes']
    """
    return {row.name: row.control for row in options("inspector") if row.control is not None}


def key_options(report_options: ReportOptions) -> dict[str, Any]:
    """The options that tell cached reports apart (``in_key`` in the table), by name."""
    return {
        row.name: getattr(report_options, row.name)
        for row in options()
        if row.in_key and hasattr(report_options, row.name)
    }


def option_keywords(
    frontend: str, given: Mapping[str, Any], kwargs: dict[str, Any]
) -> dict[str, Any]:
    """The options a call to ``frontend`` was given, by name: ``given`` holds its
    declared keywords (by keyword), and ``kwargs`` its other keyword arguments, from
    which the keywords of options registered since are taken out (the rest are the
    function's)."""
    found = {}
    for row in options(frontend):
        if row.keyword in given:
            found[row.name] = given[row.keyword]
        elif row.keyword in kwargs:
            found[row.name] = kwargs.pop(row.keyword)
    return found


def argparse_type(name: str):
    """An argparse ``type=`` for option ``name``: the same check (or the row's
    ``parse_text``), for command-line text (argparse names the option in its error)."""
    row = option(name)

    def parse(text: str):
        try:
            if row.parse_text is not None:
                return row.parse_text(text)
            return check_option(name, text, text=True)
        except OptionError as e:
            raise argparse.ArgumentTypeError(str(e)) from None

    parse.__name__ = name
    return parse


def add_arguments(parser: argparse.ArgumentParser, rows: Iterable[Option]) -> None:
    """Adds one argument per option of ``rows`` to ``parser``, as the table declares
    it (its flags, help, metavar, how it takes its value). Every value read is
    checked again by :class:`ReportOptions` or ``inspect()``: the parser's defaults
    are the table's."""
    for row in rows:
        spec: dict[str, Any] = {"dest": row.name, "help": row.help_text()}
        if row.takes == "switch":
            spec["action"] = "store_false" if row.default else "store_true"
        else:
            spec.update(type=argparse_type(row.name), metavar=row.metavar)
            if row.takes == "repeat":
                spec.update(action="append", default=[])
            elif row.takes == "optional":
                spec.update(nargs="?", const=row.const)
        if row.required:
            spec["required"] = True
        parser.add_argument(*row.flags, **spec)


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
  %olympus_lower --passes f(x)                       # what each XLA pass did (dumped by its compile)
  %olympus_lower --passes 'fusion|cse' f(x)          # only the passes these names match
  %olympus_lower --costs f(x)                        # flops, bytes, peak memory by line; collectives

  %%olympus_lower --stages olympuspr,hlo
  def g(x):
      return jnp.tanh(x) @ x.T
  g(jnp.ones((4, 4)))
"""


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise OptionError(f"{message}. See %olympus_lower? for the options.")


def build_parser(prog: str = "%olympus_lower") -> argparse.ArgumentParser:
    """The option parser of the magics (and their ``?`` help), made from the table
    of options: made again when the table changes, else reused, as every line of the
    magic reads its options with it (it is never changed after it is made)."""
    return _parser(prog, table_version())


@functools.lru_cache(maxsize=4)
def _parser(prog: str, version: int) -> argparse.ArgumentParser:
    p = _Parser(
        prog=prog,
        add_help=False,
        epilog=EXAMPLES,
        formatter_class=argparse.RawDescriptionHelpFormatter,
        description="Stage a function for its arguments and show what each "
        "compilation stage made of it, op by op, tied to your source lines.",
    )
    add_arguments(p, options("magic"))
    return p


def _to_options(ns: argparse.Namespace) -> ReportOptions:
    return ReportOptions(
        **{row.name: getattr(ns, row.name) for row in options("magic") if "report" in row.frontends}
    )


def parse_options(text: str) -> ReportOptions:
    """Parses an options-only line (the first line of ``%%olympus_lower``)."""
    try:
        tokens = shlex.split(text)
    except ValueError as e:
        raise OptionError(f"cannot read options {text!r}: {e}") from None
    ns, rest = build_parser().parse_known_args(tokens)
    if rest:
        raise OptionError(
            f"unexpected {' '.join(rest)!r} after the options. See %olympus_lower? for the options."
        )
    return _to_options(ns)


def split_line(line: str) -> tuple[ReportOptions, str]:
    """Splits ``%olympus_lower`` input into its options and the call expression after them."""
    line = line.strip()
    parser = build_parser()
    takes_value = {
        a
        for action in parser._actions
        for a in action.option_strings
        if action.nargs is None
        and not isinstance(action, (argparse._StoreTrueAction, argparse._StoreFalseAction))
    }
    # An option whose value may be left out (--passes) takes the next token only when
    # it is quoted: --passes 'fusion|cse' f(x), but --passes f(x).
    may_take = {
        a for action in parser._actions for a in action.option_strings if action.nargs == "?"
    }
    pos = 0
    option_tokens: list[str] = []
    while pos < len(line) and line[pos] == "-":
        token, pos = _next_token(line, pos)
        option_tokens.append(token)
        name = token.split("=", 1)[0]
        if name in takes_value and "=" not in token:
            if pos >= len(line):
                raise OptionError(
                    f"option {name} needs a value. See %olympus_lower? for the options."
                )
            value, pos = _next_token(line, pos)
            option_tokens.append(value)
        elif name in may_take and "=" not in token and line[pos : pos + 1] in ("'", '"'):
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
    consumed = len(line) - pos - len(lexer.instream.read())  # type: ignore[call-arg]
    rest = pos + consumed
    while rest < len(line) and line[rest].isspace():
        rest += 1
    return token or "", rest
