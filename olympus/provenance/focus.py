"""Whose code a frame is: the user's own, or a library's they called.

An op's call stack runs from the line that made it (often inside flax, equinox,
optax or the standard library) out to the user's code that called the library.
Costs, peak buffers, collectives, journeys and the links between views are charged
to the innermost frame of the *user's own* code, with the library frames beneath
it kept as detail. By default a file is the user's unless it is installed: in a
``site-packages``/``dist-packages`` folder or the standard library (JAX's and
Olympus's own frames are left out of call stacks before this).
``Focus(("mypkg", "/home/me/lib"))`` says instead: these modules and folders are
the user's, nothing else.

>>> focus = Focus()
>>> focus.owns("/home/me/model.py"), focus.owns(os.__file__)
(True, False)
>>> only = focus_of("/home/me/lib")
>>> only.owns("/home/me/lib/layers.py"), only.owns("/home/me/model.py")
(True, False)
>>> anchor_position(["/site-packages/flax/linear.py", "/home/me/model.py"], focus.owns)
1
"""

from __future__ import annotations

import dataclasses
import functools
import importlib.util
import os
import site
import sys
import sysconfig
from collections.abc import Callable, Sequence
from typing import TypeVar

_T = TypeVar("_T")

__all__ = ["Focus", "focus_of", "anchor_position", "installed_prefixes", "FRAMES"]

#: How an op is charged to a line: its innermost frame of the user's own code
#: (``"user"``, the default), or its innermost frame whatever its file
#: (``"innermost"``, where a library line made it).
FRAMES = ("user", "innermost")

_INSTALLED_PARTS = (
    f"{os.sep}site-packages{os.sep}",
    f"{os.sep}dist-packages{os.sep}",
)


@functools.cache
def installed_prefixes() -> tuple[str, ...]:
    """The folders installed code lives in: this Python's standard library and its
    package folders (the environment's, the user's site folder)."""
    found: list[str] = []
    paths = sysconfig.get_paths()
    for key in ("stdlib", "platstdlib", "purelib", "platlib"):
        if paths.get(key):
            found.append(paths[key])
    try:
        found.extend(site.getsitepackages())
    except AttributeError:  # a virtualenv's old site.py has none
        pass
    if site.ENABLE_USER_SITE and site.getusersitepackages():
        found.append(site.getusersitepackages())
    return tuple(dict.fromkeys(os.path.join(os.path.abspath(p), "") for p in found if p))


def is_installed(path: str) -> bool:
    """Whether ``path`` is installed code (a package or the standard library).

    >>> is_installed(os.__file__), is_installed("/home/me/train.py")
    (True, False)
    """
    if any(part in path for part in _INSTALLED_PARTS):
        return True
    return path.startswith(installed_prefixes())


@dataclasses.dataclass(frozen=True)
class Focus:
    """What counts as the user's own code. ``prefixes``: absolute folders (ending
    with a separator) and files that are the user's, nothing else; empty for the
    default, everything that is not installed. ``given``: what the user wrote, to
    say it back.

    >>> Focus().owns("/home/me/train.py")
    True
    """

    prefixes: tuple[str, ...] = ()
    given: tuple[str, ...] = ()

    def owns(self, path: str) -> bool:
        """Whether frames in file ``path`` are the user's own code."""
        if self.prefixes:
            return any(path == p or path.startswith(p) for p in self.prefixes)
        return not is_installed(path)

    def describe(self) -> str:
        """In words, for a report's header or a note."""
        if not self.given:
            return "your code: every file that is not installed"
        return "your code: " + ", ".join(self.given)


def _module_path(name: str) -> str | None:
    """The folder of package ``name`` (or the file of a module), without importing
    it when it is not loaded yet and is top-level."""
    module = sys.modules.get(name)
    origin = getattr(module, "__file__", None) if module is not None else None
    search = getattr(module, "__path__", None) if module is not None else None
    if origin is None:
        try:
            spec = importlib.util.find_spec(name)
        except (ImportError, ValueError):
            return None
        if spec is None:
            return None
        origin = spec.origin
        search = spec.submodule_search_locations
    if search:
        return os.path.join(os.path.abspath(next(iter(search))), "")
    if origin and origin not in ("built-in", "frozen"):
        return os.path.abspath(origin)
    return None


def focus_of(spec: Focus | str | Sequence[str] | None) -> Focus:
    """A :class:`Focus` from what a user gives ``focus=``: ``None`` (the default),
    a path or a module name, or a list of them. A folder or a ``.py`` file is taken
    as a path; a dotted name as a module (``"mypkg.models"``).

    >>> focus_of(None) == Focus()
    True
    >>> focus_of("no_such_module_xyz")
    Traceback (most recent call last):
    ...
    ValueError: focus='no_such_module_xyz' is neither a folder, a .py file nor an importable module. Give the folders, files or modules of your own code, e.g. focus=['mypkg', '/home/me/project'].
    """
    if spec is None or isinstance(spec, Focus):
        return spec or Focus()
    items = [spec] if isinstance(spec, str) else list(spec)
    prefixes: list[str] = []
    for item in items:
        if not isinstance(item, str) or not item.strip():
            raise ValueError(
                f"focus={item!r}: give folders, .py files or module names as strings, "
                "e.g. focus=['mypkg', '/home/me/project']."
            )
        item = item.strip()
        looks_like_path = os.sep in item or "/" in item or item.endswith(".py")
        if looks_like_path or os.path.exists(item):
            path = os.path.abspath(os.path.expanduser(item))
            prefixes.append(os.path.join(path, "") if not path.endswith(".py") else path)
            continue
        found = _module_path(item) if all(p.isidentifier() for p in item.split(".")) else None
        if found is None:
            raise ValueError(
                f"focus={item!r} is neither a folder, a .py file nor an importable module. "
                "Give the folders, files or modules of your own code, e.g. "
                "focus=['mypkg', '/home/me/project']."
            )
        prefixes.append(found)
    return Focus(tuple(dict.fromkeys(prefixes)), tuple(items))


def anchor_position(files: Sequence[_T], owns: Callable[[_T], bool]) -> int:
    """The position, in a call stack given by its frames' files (innermost first),
    of the frame an op is charged to: the innermost of the user's own code, else the
    innermost frame."""
    for k, path in enumerate(files):
        if owns(path):
            return k
    return 0
