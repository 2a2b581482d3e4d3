"""What every program of the real-model corpus gives: :class:`Program`.

>>> p = Program("double", lambda x: 2 * x, (3.0,), {}, __file__, "a tiny example")
>>> p.fn(*p.args, **p.kwargs)
6.0
>>> p.user_file.endswith("program.py")
True
"""

from __future__ import annotations

import dataclasses
from collections.abc import Callable, Mapping
from typing import Any


@dataclasses.dataclass(frozen=True)
class Program:
    """One program as its user would hand it over.

    ``fn`` is what the user jits and calls (the jitted train step: a ``jax.jit``,
    ``nnx.jit`` or ``eqx.filter_jit`` function), ``fn(*args, **kwargs)`` runs one
    step, ``user_file`` is the file the user wrote (the module defining the model
    and the step), ``notes`` says what the program is and what to look for in it.
    """

    name: str
    fn: Callable[..., Any]
    args: tuple[Any, ...]
    kwargs: Mapping[str, Any]
    user_file: str
    notes: str
