"""``%olympus_lower`` and ``%%olympus_lower``: stage a call and show what each stage made of it.

The line magic evaluates the call's function and arguments in the user's
namespace; the cell magic runs the cell first (its definitions stay defined)
and stages the call on its last line. A stage object (a ``Traced``, ``Lowered``
or ``Compiled``, from JAX, Olympus, flax ``nnx`` or equinox) is given alone, with
no call: ``%olympus_lower --costs lowered``. The line is read as written (as ``%timeit``
reads it): IPython's ``{expression}`` and ``$name`` expansion would change the call
(a set literal ``{n}`` would become ``n``). Bad options raise ``UsageError`` (one
line, no traceback, before anything is evaluated or staged: the options are
checked by :class:`~olympus_jupyter.frontends.options.ReportOptions`, as
``inspect``'s and the widgets' are); failures inside a stage show in the report.
Either way the kernel stays usable.
"""

from __future__ import annotations

import ast
import textwrap

from IPython.core.error import UsageError
from IPython.core.magic import Magics, cell_magic, line_magic, magics_class, no_var_expand
from IPython.display import display

from olympus_jupyter.frontends import live_comm
from olympus_jupyter.frontends.inspection import ReportCache, inspect
from olympus_jupyter.frontends.options import (
    OptionError,
    ReportOptions,
    build_parser,
    parse_options,
    split_line,
)
from olympus_jupyter.staging.progress import shown_in_output
from olympus_jupyter.staging.runner import StagingError
from olympus_jupyter.staging.targets import stage_of


def _help() -> str:
    return build_parser().format_help()


class CallError(ValueError):
    """The text after the options is not a call ``f(args)``."""


def parse_call(source: str) -> ast.Call:
    """The call expression of ``source`` (``f(x, y=2)``), or ``CallError`` saying why not."""
    text = source.strip()
    if not text:
        raise CallError("Give a call to stage, e.g. %olympus_lower f(x, y).")
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError as e:
        raise CallError(
            f"Cannot read {text!r} as a call: {e.msg}. "
            f"Write it as you would call the function, e.g. f(x, y)."
        ) from None
    if not isinstance(tree.body, ast.Call):
        raise CallError(
            f"{text!r} is not a call. Write the call to stage, e.g. f(x, y) rather than f "
            f"(a Traced, Lowered or Compiled is given alone: %olympus_lower lowered)."
        )
    return tree.body


def evaluate_call(call: ast.Call, namespace: dict):
    """Evaluates the function and the arguments of ``call`` in ``namespace`` (nothing is called)."""
    capture = "__olympus_capture_arguments__"
    packed = ast.Expression(
        ast.Call(func=ast.Name(capture, ast.Load()), args=call.args, keywords=call.keywords)
    )
    ast.fix_missing_locations(packed)
    fun_code = compile(ast.Expression(call.func), "<olympus_lower call>", "eval")
    args_code = compile(packed, "<olympus_lower call>", "eval")
    fun = eval(fun_code, namespace)  # noqa: S307 - the user's own expression
    captured = {capture: lambda *a, **k: (a, k)}
    args, kwargs = eval(args_code, namespace, captured)  # noqa: S307 - the user's own call
    return fun, args, kwargs


def stage_given(source: str, namespace: dict):
    """The stage object that ``source`` (an expression, not a call: ``lowered``,
    ``f.lower(x)`` is a call) names in ``namespace``, or None when it names
    something else or cannot be evaluated (the caller then asks for a call).

    >>> import jax
    >>> ns = {"lowered": jax.jit(abs).lower(1.0), "n": 3}
    >>> type(stage_given("lowered", ns)).__name__, stage_given("n", ns)
    ('Lowered', None)
    """
    text = source.strip()
    try:
        tree = ast.parse(text, mode="eval")
    except SyntaxError:
        return None
    if not isinstance(tree.body, (ast.Name, ast.Attribute, ast.Subscript)):
        return None
    try:
        value = eval(compile(tree, "<olympus_lower stage>", "eval"), namespace)  # noqa: S307 - the user's own expression
    except Exception:  # noqa: BLE001 - not a stage: the caller says what is expected
        return None
    return value if stage_of(value) is not None else None


@magics_class
class OlympusMagics(Magics):
    """The ``%olympus_lower`` magics, with one report cache per IPython session."""

    def __init__(self, shell):
        super().__init__(shell)
        self.cache = ReportCache()

    def _report(self, options: ReportOptions, call_source: str):
        namespace = self.shell.user_ns  # type: ignore[union-attr]
        try:
            call = parse_call(call_source)
        except CallError as e:
            # A stage object (a Traced, Lowered or Compiled) is staged alone: no call.
            fun = stage_given(call_source, namespace)
            if fun is None:
                raise UsageError(str(e)) from None
            args, kwargs = (), {}
        else:
            try:
                fun, args, kwargs = evaluate_call(call, namespace)
            except Exception as e:  # noqa: BLE001 - the user's expression failed
                raise UsageError(
                    f"Evaluating {call_source.strip()!r} failed: {type(e).__name__}: {e}"
                ) from None
        if options.interactive:
            self._inspector(options, fun, args, kwargs)
            return
        # Long work shows its progress in the cell (shown_in_output), display included.
        with shown_in_output() as progress:
            try:
                report = inspect(
                    fun,
                    *args,
                    **options.keywords("inspect"),
                    cache=self.cache,
                    progress=progress,
                    **kwargs,
                )
            except (StagingError, ValueError, TypeError) as e:
                raise UsageError(str(e)) from None
            progress.step("display")
            report._repr_mimebundle_()  # made here, kept by the report for display()
        if options.save:
            try:
                report.save(options.save)
            except OSError as e:
                raise UsageError(f"Cannot save the report to {options.save!r}: {e}") from None
        if options.name:
            self.shell.user_ns[options.name] = report  # type: ignore[union-attr]
        display(report)

    def _inspector(self, options: ReportOptions, fun, args, kwargs):
        from olympus_jupyter.frontends.inspector import Inspector

        try:  # the options were checked when parsed (--save is refused with --interactive)
            widget = Inspector(fun, *args, **options.keywords("inspector"), **kwargs)
        except (StagingError, ValueError, TypeError) as e:
            raise UsageError(str(e)) from None
        if options.name:
            self.shell.user_ns[options.name] = widget  # type: ignore[union-attr]
        display(widget)

    # The line is read as written, as %timeit reads it: IPython would otherwise expand
    # {expression} and $name in it first, and stage another call than the one typed
    # (a set literal {n} became n, f"{n}" the value's text).
    @no_var_expand
    @line_magic
    def olympus_lower(self, line: str):
        try:
            options, call = split_line(line)
        except OptionError as e:
            raise UsageError(str(e)) from None
        self._report(options, call)

    @no_var_expand
    @cell_magic("olympus_lower")  # type: ignore[arg-type]  # IPython types its decorators oddly
    def olympus_lower_cell(self, line: str, cell: str):
        try:
            options = parse_options(line)
        except OptionError as e:
            raise UsageError(str(e)) from None
        body, call = split_cell(cell)
        if body.strip():
            result = self.shell.run_cell(body, store_history=False)  # type: ignore[union-attr]
            if not result.success:
                return  # the error is shown like any cell error
        self._report(options, call)


#: What a cell may end with: a call, or a name (or attribute, or item) holding a stage.
_STAGED = (ast.Call, ast.Name, ast.Attribute, ast.Subscript)


def split_cell(cell: str) -> tuple[str, str]:
    """The cell's code before its last statement, and that statement (the call)."""
    text = textwrap.dedent(cell).rstrip()
    try:
        tree = ast.parse(text)
    except SyntaxError as e:
        raise UsageError(f"The cell does not parse: {e.msg} (line {e.lineno}).") from None
    if (
        not tree.body
        or not isinstance(tree.body[-1], ast.Expr)
        or not isinstance(tree.body[-1].value, _STAGED)
    ):
        raise UsageError(
            "End the cell with the call to stage, e.g. f(x, y), or with a Traced, "
            "Lowered or Compiled alone."
        )
    last = tree.body[-1]
    lines = text.splitlines()
    body = "\n".join(lines[: last.lineno - 1])
    call = "\n".join(lines[last.lineno - 1 : last.end_lineno])
    return body, call


OlympusMagics.olympus_lower.__doc__ = _help()
OlympusMagics.olympus_lower_cell.__doc__ = _help()  # type: ignore[assignment]  # as above


def register(ipython) -> None:
    """Registers the magics (called by ``%load_ext olympus_jupyter``); their ``?`` help
    is made again, with any option registered since the import."""
    OlympusMagics.olympus_lower.__doc__ = _help()
    OlympusMagics.olympus_lower_cell.__doc__ = _help()  # type: ignore[assignment]  # as above
    ipython.register_magics(OlympusMagics)
    live_comm.register(ipython)  # in a Jupyter kernel: capped outputs fetch the rest


def unregister(ipython) -> None:
    live_comm.unregister(ipython)
    magics = ipython.magics_manager.registry.get("OlympusMagics")
    if magics is not None:
        for kind in ("line", "cell"):
            ipython.magics_manager.magics[kind].pop("olympus_lower", None)
