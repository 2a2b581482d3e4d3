"""How export's errors speak: the engine's messages in Olympus's words, and the fixes.

Olympus rewords errors, it never retypes them: :func:`in_olympus_words` changes
only JAX's own words in a message (the user's names, values and paths stay), and
leaves an error raised by the user's code as it is. :func:`translate_call_error`
replaces the few engine errors of ``Exported.call`` that need more than rewording
(called on the wrong platform, under ``vmap``) by ones that say what to do.

>>> e = in_olympus_words(NotImplementedError("JAX cannot do 'JAX_thing'"))
>>> type(e).__name__, str(e)
('NotImplementedError', "OLYMPUS cannot do 'JAX_thing'")
>>> brief(ValueError("jax.jit failed\\nsecond line"))
'ValueError: olympus.jit failed'
"""

from __future__ import annotations

import ast
import re
from collections.abc import Sequence

from olympus import jax_compat, naming
from olympus import platforms as _platforms
from olympus.errors import strip_jax_notes

__all__ = [
    "in_olympus_words",
    "raised_by_user_code",
    "add_note",
    "translate_call_error",
    "brief",
    "short_aval",
]


def in_olympus_words(e: BaseException, *, failed: str = "") -> BaseException:
    """``e`` itself, its message speaking of Olympus where JAX's speaks of JAX.

    Only JAX's own words change (:func:`olympus.naming.olympus_message`): what
    its messages quote (the user's names and values) and file paths stay as they
    are, and an error the user's code raised keeps its message. The type,
    attributes and traceback are ``e``'s: Olympus rewords errors, it never
    retypes them. ``failed`` (e.g. ``"Cannot serialize 'f'"``) goes before an
    engine's message, or in a note after the user's. Where a message cannot be
    replaced (a type whose ``str`` is not its argument), the Olympus wording is
    added as a note.

    >>> e = in_olympus_words(NotImplementedError("JAX cannot do 'JAX_thing'"))
    >>> type(e).__name__, str(e)
    ('NotImplementedError', "OLYMPUS cannot do 'JAX_thing'")
    """
    strip_jax_notes(e)
    if raised_by_user_code(e):
        if failed:
            add_note(e, f"Olympus: {failed}: the error above was raised by the program's own code.")
        return e
    message = str(e)
    reworded = (f"{failed}: " if failed else "") + naming.olympus_message(message)
    if reworded != message:
        if e.args == (message,):
            e.args = (reworded,)
        else:
            add_note(e, reworded)
    return e


def raised_by_user_code(e: BaseException) -> bool:
    """Whether the user's code raised ``e`` (its message is theirs, not JAX's).

    JAX's exception types are JAX's; otherwise the innermost frame of the
    traceback tells. JAX may have removed its own frames from it: an engine
    error may then look like the user's, and is left as it is.
    """
    if type(e).__module__.split(".")[0] in ("jax", "jaxlib"):
        return False
    tb = e.__traceback__
    if tb is None:
        return False
    while tb.tb_next is not None:
        tb = tb.tb_next
    return jax_compat.is_user_filename(tb.tb_frame.f_code.co_filename)


def add_note(e: BaseException, note: str) -> None:
    """Adds ``note`` to ``e`` where Python supports notes (3.11 and later)."""
    if hasattr(e, "add_note"):  # Python 3.11 and later
        e.add_note(note)


_PLATFORM_MISMATCH = re.compile(
    r"was exported for platforms '(\(.*?\))' but it is used on '(\(.*?\))'"
)


def translate_call_error(
    fun_name: str, platforms: tuple[str, ...], e: Exception
) -> Exception | None:
    """An Olympus error (of ``e``'s type) saying what to do, for the engine errors
    of calling the export of ``fun_name`` (made for ``platforms``) that need more
    than rewording; None for others."""
    message = str(e)
    m = _PLATFORM_MISMATCH.search(message) if isinstance(e, ValueError) else None
    if m:
        try:
            exported_for = tuple(ast.literal_eval(m.group(1)))
            used_on = tuple(ast.literal_eval(m.group(2)))
        except (ValueError, SyntaxError):  # pragma: no cover - format drift
            exported_for, used_on = platforms, (m.group(2),)
        both = exported_for + tuple(p for p in used_on if p not in exported_for)
        return _platforms.PlatformError(
            f"Cannot call the export of '{fun_name}' here: it was exported for "
            f"{_describe(exported_for)}, but this call runs on {_describe(used_on)}. "
            f"Call it on a machine with {_describe(exported_for)} devices, or export it "
            f"again for this platform too: olympus.export.export(olympus.jit(f), "
            f"platforms={both!r})(*args)."
        )
    if isinstance(e, NotImplementedError) and "Batching rule for 'call_exported'" in message:
        return NotImplementedError(
            f"Cannot vmap the export of '{fun_name}': an exported function has a fixed "
            f"calling convention and no batching rule. Export the batched function instead, "
            f"olympus.export.export(olympus.jit(olympus.vmap(f)))(*batched_args), export it "
            f"with a symbolic batch dimension (olympus.export.symbolic_shape('b, ...')), or "
            f"loop with olympus.lax.map(exp.call, xs)."
        )
    return None


def _describe(platforms: Sequence[str]) -> str:
    return " and ".join(repr(p) for p in platforms)


def brief(e: BaseException) -> str:
    """``e`` in one short line, in Olympus's words, for a reason a blob is rejected."""
    text = naming.olympus_message(str(e)).strip().splitlines()
    first = text[0] if text else ""
    if len(first) > 200:
        first = first[:200] + "..."
    # Builtin exception names tell something; the engine's own would only confuse.
    name = type(e).__name__ if type(e).__module__ == "builtins" else "error"
    return f"{name}: {first}" if first else name


def short_aval(aval) -> str:
    """An array type as messages show it, e.g. ``f32[3,4]``."""
    try:
        return jax_compat.aval_short_text(aval)
    except AttributeError:  # pragma: no cover - an aval kind without str_short
        return str(aval)
