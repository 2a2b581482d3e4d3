"""The options of ``%olympus_lower`` and how a magic line splits into options and a call.

Parsing is separate from IPython so it can be tested and reused by the CLI.

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
import shlex

from olympus import stage_registry
from olympus.platforms import KNOWN_PLATFORMS
from olympus_jupyter.staging.time_limit import check_timeout


class OptionError(ValueError):
    """A magic option that could not be understood."""


@dataclasses.dataclass(frozen=True)
class ReportOptions:
    """What the user asked a report to be made of and to show."""
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

  %%olympus_lower --stages olympuspr,hlo
  def g(x):
      return jnp.tanh(x) @ x.T
  g(jnp.ones((4, 4)))
"""


def _csv(text: str) -> tuple[str, ...]:
    items = tuple(t.strip() for t in text.split(",") if t.strip())
    if not items:
        raise argparse.ArgumentTypeError("expected a comma-separated list")
    return items


def _ints(text: str) -> tuple[int, ...]:
    try:
        return tuple(int(t) for t in _csv(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"expected argument positions like 0 or 0,2, got {text!r}") from None


def stage_list(text: str) -> tuple[str, ...]:
    """``--stages`` value: registry stage names, comma-separated, or ``all``."""
    items = _csv(text)
    if items == ("all",):
        return stage_registry.names()
    names = stage_registry.names()
    unknown = [s for s in items if s not in names]
    if unknown:
        raise argparse.ArgumentTypeError(
            f"unknown stage {unknown[0]!r}; choose from {','.join(names)} or all")
    return tuple(s for s in names if s in items)


def parse_compiler_option(text: str) -> tuple[str, object]:
    """``KEY=VALUE`` with VALUE read as a Python literal when it is one (0, True, 1.5)."""
    key, sep, value = text.partition("=")
    if not sep or not key.strip():
        raise argparse.ArgumentTypeError(
            f"expected KEY=VALUE such as xla_backend_optimization_level=0, got {text!r}")
    try:
        parsed = ast.literal_eval(value.strip())
        if not isinstance(parsed, (bool, int, float, str)):
            parsed = value.strip()
    except (ValueError, SyntaxError):
        parsed = value.strip()
    return key.strip(), parsed


class _Parser(argparse.ArgumentParser):
    def error(self, message):
        raise OptionError(f"{message}. See %olympus_lower? for the options.")


def build_parser(prog: str = "%olympus_lower") -> argparse.ArgumentParser:
    """The option parser shared by the magics (and their ``?`` help)."""
    p = _Parser(prog=prog, add_help=False, epilog=EXAMPLES,
                formatter_class=argparse.RawDescriptionHelpFormatter,
                description="Stage a function for its arguments and show what each "
                            "compilation stage made of it, op by op, tied to your source lines.")
    p.add_argument("--platform", dest="platforms", type=_csv, metavar="NAME[,NAME]",
                   help=f"lower for these platforms ({', '.join(KNOWN_PLATFORMS)}, or a "
                        f"plugin's); stages that cannot exist on this machine are shown "
                        f"with the reason")
    p.add_argument("--static-argnums", type=_ints, metavar="N[,N]",
                   help="positions of static arguments (plain functions only)")
    p.add_argument("--static-argnames", type=_csv, metavar="NAME[,NAME]",
                   help="names of static arguments (plain functions only)")
    p.add_argument("--stages", type=stage_list, default=stage_registry.default_names(),
                   metavar="LIST",
                   help=f"stages to show, any of {','.join(stage_registry.names())}, or all "
                        f"(default: {','.join(stage_registry.default_names())})")
    p.add_argument("--no-debug-info", dest="debug_info", action="store_false",
                   help="leave out source locations")
    p.add_argument("--compiler-option", dest="compiler_options", action="append",
                   type=parse_compiler_option, default=[], metavar="KEY=VALUE",
                   help="an XLA compiler option; repeatable")
    p.add_argument("--save", metavar="PATH.html", help="also write a standalone HTML report")
    p.add_argument("--name", metavar="NAME", help="keep the report in this variable")
    p.add_argument("--interactive", action="store_true",
                   help="show the interactive inspector: edit shapes, dtypes, static values "
                        "and options, and watch every stage change")
    p.add_argument("--full", action="store_true",
                   help="show stage texts in full, however long (default: long texts are capped)")
    p.add_argument("--timeout", type=seconds, metavar="SECONDS",
                   help="stop staging after this long (a function that hangs while traced); "
                        "the report shows the line it was stopped at")
    return p


def seconds(text: str) -> float:
    """A ``--timeout`` value: a positive number of seconds."""
    try:
        return check_timeout(float(text))
    except ValueError:
        raise argparse.ArgumentTypeError(
            f"--timeout takes a positive number of seconds, got {text!r}") from None


def _to_options(ns: argparse.Namespace) -> ReportOptions:
    if ns.save is not None and not ns.save.endswith((".html", ".htm")):
        raise OptionError(f"--save writes HTML: give a path ending in .html, got {ns.save!r}.")
    if ns.name is not None and not ns.name.isidentifier():
        raise OptionError(f"--name must be a Python variable name, got {ns.name!r}.")
    return ReportOptions(
        platforms=ns.platforms, static_argnums=ns.static_argnums,
        static_argnames=ns.static_argnames, stages=ns.stages, debug_info=ns.debug_info,
        compiler_options=tuple(ns.compiler_options), save=ns.save, name=ns.name,
        full=ns.full, interactive=ns.interactive, timeout=ns.timeout)


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
