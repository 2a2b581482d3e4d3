"""Report bundles are checked before they are read: they may come from anywhere (a
saved notebook someone sent, a file, a page).

:func:`check_bundle` validates ``application/vnd.olympus.stages+json`` data against
the published schema (``bundle.schema.json`` beside this module, JSON Schema draft 7:
types, sizes, the form of every string that is decoded) and raises
:class:`BundleError` naming the first field that is wrong. The schema is compiled
once (fastjsonschema) for the check of every bundle; jsonschema finds the field to
name when a bundle is refused. The index ranges the schema cannot express (an op's
call stack, a source line's ops) are checked by the provenance reader against the
data they describe.

>>> check_bundle({"schema": "olympus.stages", "version": 2})
Traceback (most recent call last):
olympus_jupyter.report.validate.BundleError: Not a readable Olympus report: (top level): 'name' is a required property.
"""

from __future__ import annotations

import functools
import json
import pathlib
from collections.abc import Mapping
from typing import Any

import fastjsonschema
import jsonschema

__all__ = ["BundleError", "check_bundle", "SCHEMA_PATH"]

SCHEMA_PATH = pathlib.Path(__file__).with_name("bundle.schema.json")


class BundleError(ValueError):
    """Report data that does not follow the schema; the message names the field."""


@functools.lru_cache(maxsize=1)
def _schema() -> dict:
    return json.loads(SCHEMA_PATH.read_text(encoding="utf-8"))


@functools.lru_cache(maxsize=1)
def _fast_check():
    """The schema compiled to Python (fastjsonschema): the check of every bundle."""
    return fastjsonschema.compile(_schema())


@functools.lru_cache(maxsize=1)
def _validator() -> jsonschema.protocols.Validator:
    """The schema for jsonschema, which names the field a bundle gets wrong: only run
    on a bundle the fast check refused."""
    return jsonschema.Draft7Validator(_schema())


def _where(error: jsonschema.ValidationError) -> str:
    path = ".".join(str(p) for p in error.absolute_path)
    return path or "(top level)"


_SAYS = {
    "maxLength": "is longer than {} characters",
    "maxItems": "has more than {} items",
    "maxProperties": "has more than {} entries",
    "pattern": "does not match {!r}",
}


def _what(error: jsonschema.ValidationError) -> str:
    """The error in a few words: without the (maybe huge, maybe hostile) value where
    the rule says enough."""
    if error.validator in _SAYS:
        return _SAYS[error.validator].format(error.validator_value)
    message = error.message
    return message if len(message) <= 200 else message[:200] + "..."


#: No bundle Olympus writes nests deeper than this; deeper data is refused before
#: it reaches the validator (whose recursion it would exhaust).
MAX_DEPTH = 32


def _check_depth(data: Any) -> None:
    stack = [(data, 0, "(top level)")]
    while stack:
        node, depth, where = stack.pop()
        if depth > MAX_DEPTH:
            raise BundleError(
                f"Not a readable Olympus report: {where}: nested deeper than {MAX_DEPTH} levels."
            )
        if isinstance(node, Mapping):
            stack.extend(
                (v, depth + 1, f"{where}.{k}" if depth else str(k)) for k, v in node.items()
            )
        elif isinstance(node, list):
            stack.extend(
                (v, depth + 1, f"{where}.{i}" if depth else str(i)) for i, v in enumerate(node)
            )


def check_bundle(data: Any) -> None:
    """Raises :class:`BundleError` unless ``data`` is a report bundle that follows the
    schema (this version's or version 1's)."""
    if not isinstance(data, Mapping):
        raise BundleError(
            f"Not a readable Olympus report: expected a JSON object, got {type(data).__name__}."
        )
    _check_depth(data)
    try:
        _fast_check()(data)
        return
    except fastjsonschema.JsonSchemaException:
        pass
    error = jsonschema.exceptions.best_match(_validator().iter_errors(data))
    if error is not None:
        raise BundleError(f"Not a readable Olympus report: {_where(error)}: {_what(error)}.")
    raise BundleError("Not a readable Olympus report: it does not follow the schema.")
