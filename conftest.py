"""Doctests across the project start from the spec's imports.

They run the same on every Python the project supports: the doctest of early Python
3.11 releases (3.11.2 is Debian 12's ``python3``) compares only the last line of an
exception a doctest raises, which for an exception with notes (Olympus's and JAX's
errors carry them) is the last note, never the whole message the example shows.
Later releases compare the whole of it; where the running ``doctest`` does not,
:func:`_whole_exception_messages` makes it do what they do.
"""

import doctest
import traceback
import types

import numpy as np
import pytest


@pytest.fixture(autouse=True)
def _doctest_imports(doctest_namespace):
    import olympus
    import olympus.numpy as jnp

    doctest_namespace.update(olympus=olympus, jnp=jnp, np=np)


def _compares_whole_exceptions() -> bool:
    """Whether this Python's doctest compares an exception's message with its notes."""

    def example():
        """
        >>> raise noted()
        Traceback (most recent call last):
        ValueError: the message
        a note
        """

    def noted():
        error = ValueError("the message")
        error.add_note("a note")
        return error

    test = doctest.DocTestFinder().find(example, "example", globs={"noted": noted})[0]
    runner = doctest.DocTestRunner()
    runner.run(test, out=lambda text: None)
    return runner.failures == 0


def _whole_exception_messages() -> None:
    """Makes doctest compare an exception's whole message, notes included, as Python
    3.11's later releases do (``"".join(format_exception_only(...))``, from the line
    that names the exception's type): its ``traceback.format_exception_only`` gives
    that text as one line, the last one, which is all an early release compares."""

    def format_exception_only(exc_type, value):
        lines = traceback.format_exception_only(exc_type, value)
        names = (f"{exc_type.__qualname__}:", f"{exc_type.__module__}.{exc_type.__qualname__}:")
        start = next((k for k, line in enumerate(lines) if line.startswith(names)), 0)
        return ["".join(lines[start:])]

    shim = types.ModuleType("traceback")
    shim.__dict__.update(traceback.__dict__)
    shim.format_exception_only = format_exception_only
    doctest.traceback = shim


if not _compares_whole_exceptions():
    _whole_exception_messages()
    assert _compares_whole_exceptions()
