"""Stage reports from the command line, for machines without a browser.

    python -m olympus_jupyter report MODULE:FUNCTION --arg 'f32[16,16]' --arg 'i32[]' -o report.html
    python -m olympus_jupyter demo -o report.html

``MODULE`` is imported from the current directory. ``FUNCTION`` names a function
(plain, ``jax.jit``, ``olympus.jit``, ``flax.nnx.jit``, ``equinox.filter_jit``) or a
stage object the module made (a ``Traced``, ``Lowered`` or ``Compiled``, given
without ``--arg``). Options are checked as the
magic's and ``inspect``'s are (:mod:`~olympus_jupyter.frontends.options`), before
anything is imported or staged. Bad input gets a one-line error and exit status
2; a function that fails to stage still gets a report (showing the failure) and
exit status 1.
"""

from __future__ import annotations

import argparse
import importlib
import os
import re
import sys

from olympus.specs import SpecError, parse_spec
from olympus_jupyter.frontends.options import add_arguments, options


class CliError(Exception):
    """Bad command-line input: reported in one line."""


_CONTROL = re.compile(r"[\x00-\x08\x0b-\x1f\x7f-\x9f]")


def printable(text: str) -> str:
    """``text`` safe for a terminal: control characters (escape sequences that could
    clear the screen, move the cursor or retitle the window) shown as ``\\x1b``.

    >>> printable("ok\\n\\x1b[2J")
    'ok\\n\\\\x1b[2J'
    """
    return _CONTROL.sub(lambda m: f"\\x{ord(m.group()):02x}", text)


def load_function(target: str):
    """``'pkg.module:function'`` (or ``module:Class.method``) imported from the current
    directory: a function (plain, ``jax.jit``, ``flax.nnx.jit``, ``equinox.filter_jit``...),
    or a stage object the module made (``lowered = jax.jit(f).lower(x)``)."""
    module_name, sep, attr = target.partition(":")
    if not sep or not module_name or not attr:
        raise CliError(f"expected MODULE:FUNCTION, e.g. mymodel:loss, got {target!r}")
    cwd = os.getcwd()
    if cwd not in sys.path:
        sys.path.insert(0, cwd)
    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        if e.name and module_name.startswith(e.name):
            raise CliError(
                f"cannot find module {module_name!r} in {cwd} "
                f"(run from the folder that holds {module_name.replace('.', '/')}.py)"
            ) from None
        raise CliError(f"importing {module_name!r} failed: {e}") from None
    except Exception as e:  # noqa: BLE001 - the user's module failed at import
        raise CliError(f"importing {module_name!r} failed: {type(e).__name__}: {e}") from None
    obj = module
    for part in attr.split("."):
        try:
            obj = getattr(obj, part)
        except AttributeError:
            raise CliError(f"module {module_name!r} has no {attr!r}") from None
    from olympus_jupyter.staging.targets import stage_of

    if not callable(obj) and stage_of(obj) is None:
        raise CliError(
            f"{target} is not a function (it is a {type(obj).__name__}); name a function, "
            f"or a Traced, Lowered or Compiled made at import (given without --arg)"
        )
    return obj


def demo_function():
    """The example of the staged-API guide, a little richer: a two-layer network's loss."""
    import olympus
    import olympus.numpy as jnp

    def predict(params, x):
        w1, w2 = params
        hidden = jnp.tanh(x @ w1)
        return hidden @ w2

    def loss(params, x, y):
        error = predict(params, x) - y
        return jnp.mean(error**2)

    grad_loss = olympus.jit(olympus.value_and_grad(loss))
    params = (
        olympus.ShapeDtypeStruct((8, 16), jnp.float32),
        olympus.ShapeDtypeStruct((16, 1), jnp.float32),
    )
    x = olympus.ShapeDtypeStruct((32, 8), jnp.float32)
    y = olympus.ShapeDtypeStruct((32, 1), jnp.float32)
    return grad_loss, (params, x, y)


class _Parser(argparse.ArgumentParser):
    """Usage errors in one line, as every other bad input: ``error: ...``, status 2."""

    def error(self, message):
        print(printable(f"error: {message}. See {self.prog} --help."), file=sys.stderr)
        sys.exit(2)


def build_parser() -> argparse.ArgumentParser:
    """The CLI's parser: each command's options from the table of options (those with
    ``cli report`` or ``cli demo`` among their frontends), made when called."""
    parser = _Parser(
        prog="python -m olympus_jupyter",
        description="Write a standalone HTML report of what each compilation stage made "
        "of a function.",
    )
    sub = parser.add_subparsers(dest="command", required=True)
    rep = sub.add_parser("report", help="report on MODULE:FUNCTION for argument specs")
    rep.add_argument("function", metavar="MODULE:FUNCTION")
    rep.add_argument(
        "--arg",
        action="append",
        default=[],
        metavar="SPEC",
        help="an argument as DTYPE[DIMS], e.g. 'f32[16,16]' or 'i32[]'; in order",
    )
    add_arguments(rep, options("cli report"))
    add_arguments(sub.add_parser("demo", help="report on a built-in example"), options("cli demo"))
    return parser


def main(argv=None) -> int:
    args = build_parser().parse_args(argv)
    try:
        if args.command == "demo":
            fun, fargs = demo_function()
        else:
            fun = load_function(args.function)
            try:
                fargs = tuple(parse_spec(s) for s in args.arg)
            except SpecError as e:
                raise CliError(str(e)) from None
        # The command's options that inspect() takes, by its keywords.
        chosen = {
            row.keyword: getattr(args, row.name)
            for row in options(f"cli {args.command}")
            if "inspect" in row.frontends
        }
        from olympus_jupyter.frontends.inspection import inspect
        from olympus_jupyter.staging.progress import shown_on

        # Long work says what runs and for how long, on standard error (Ctrl+C stops it).
        with shown_on(sys.stderr) as progress:
            try:
                report = inspect(fun, *fargs, **chosen, cache=None, progress=progress)
            except ValueError as e:
                raise CliError(str(e)) from None
            progress.step("save")
            report.save(args.output)
    except CliError as e:
        print(printable(f"error: {e}"), file=sys.stderr)
        return 2
    except KeyboardInterrupt:  # Ctrl+C: stopped, nothing written
        print("interrupted: no report written", file=sys.stderr)
        return 130
    print(printable(report.text()))
    print(printable(f"wrote {args.output}"))
    return 0 if report.ok else 1
