"""What every exercise check shares: how it says "not yet", "not implemented yet" and
"correct".

>>> verdict = Verdict()
>>> verdict.expect(1 + 1 == 2, "one and one make two")
True
>>> verdict.expect(1 + 1 == 3, "one and one make two, not three")
False
>>> verdict.close("never printed")
Traceback (most recent call last):
...
olympus_jupyter.teaching.checks.NotYet: Not yet:
- one and one make two, not three
>>> def stub(x):
...     raise NotImplementedError("not implemented yet")
>>> attempt(stub, 1, name="stub")
Traceback (most recent call last):
...
olympus_jupyter.teaching.checks.NotImplementedYet: Not implemented yet: fill in stub above (replace the line that raises NotImplementedError), then run this cell again.
"""

from __future__ import annotations

from typing import Any, Callable, NoReturn


class NotYet(AssertionError):
    """An answer that a check did not accept; the message says why.

    A notebook shows it without a traceback: the message is the feedback, and the
    frames of the check would only hide it. It is an ``AssertionError``, as the test
    cells of nbgrader raise, so that autograding gives the cell no points.
    """

    def _render_traceback_(self) -> list[str]:  # IPython's hook for custom tracebacks
        first, _, rest = str(self).partition("\n")
        return [f"\x1b[1;31m{first}\x1b[0m" + (f"\n{rest}" if rest else "")]


class NotImplementedYet(NotYet):
    """The answer is still the stub: nothing to check yet."""


def first_line(e: BaseException) -> str:
    text = str(e).strip()
    return text.splitlines()[0] if text else ""


def attempt(fun: Callable, *args, name: str | None = None, hint: str = "", **kwargs) -> Any:
    """``fun(*args, **kwargs)``, where a stub says "not implemented yet" and any other
    exception of the student's code becomes a :class:`NotYet` that names it (with
    ``hint``, what to look at)."""
    name = name or getattr(fun, "__name__", "your function")
    try:
        return fun(*args, **kwargs)
    except NotImplementedError:
        raise NotImplementedYet(
            f"Not implemented yet: fill in {name} above (replace the line that raises "
            f"NotImplementedError), then run this cell again."
        ) from None
    except NotYet:
        raise
    except Exception as e:  # noqa: BLE001 - the student's code: any error is feedback
        message = f"Not yet: {name} raised {type(e).__name__}: {first_line(e)}"
        raise NotYet(message + (f"\n{hint}" if hint else "")) from None


class Verdict:
    """Collects what is wrong with an answer, then passes it or says all of it."""

    def __init__(self) -> None:
        self.wrong: list[str] = []

    def expect(self, ok: object, why: str) -> bool:
        """Notes ``why`` (what is wrong, and what was expected) unless ``ok``."""
        if not ok:
            self.wrong.append(why)
        return bool(ok)

    def stop(self, why: str) -> NoReturn:
        """Fails now: what comes after cannot be checked."""
        self.wrong.append(why)
        raise NotYet("Not yet:\n- " + "\n- ".join(self.wrong))

    def close(self, correct: str) -> None:
        """Raises :class:`NotYet` with every reason noted, or prints ``Correct: ...``."""
        if self.wrong:
            raise NotYet("Not yet:\n- " + "\n- ".join(self.wrong))
        print(f"Correct: {correct}")
