"""Argument specs as text: ``f32[16,16]``, ``i32[]``, ``bf16[8,128]`` ⇄ ``ShapeDtypeStruct``.

The short dtype names are those printed in olympuspr and HLO; full NumPy names
(``float32``) work too. A trailing ``~`` marks a weak type (``f32[]~``), the way a
Python scalar traces.

>>> parse_spec("f32[16,16]")
ShapeDtypeStruct(shape=(16, 16), dtype=float32)
>>> format_spec(parse_spec("bf16[8, 128]"))
'bf16[8,128]'
>>> format_spec(parse_spec("f32[]~"))
'f32[]~'
"""

from __future__ import annotations

import re

import jax
import numpy as np

SHORT_NAMES = {
    "pred": "bool",
    "bool": "bool",
    "i4": "int4",
    "i8": "int8",
    "i16": "int16",
    "i32": "int32",
    "i64": "int64",
    "s8": "int8",
    "s16": "int16",
    "s32": "int32",
    "s64": "int64",
    "u4": "uint4",
    "u8": "uint8",
    "u16": "uint16",
    "u32": "uint32",
    "u64": "uint64",
    "bf16": "bfloat16",
    "f16": "float16",
    "f32": "float32",
    "f64": "float64",
    "c64": "complex64",
    "c128": "complex128",
    "f8_e4m3fn": "float8_e4m3fn",
    "f8_e5m2": "float8_e5m2",
}
_LONG_TO_SHORT = {
    "bool": "bool",
    "int4": "i4",
    "int8": "i8",
    "int16": "i16",
    "int32": "i32",
    "int64": "i64",
    "uint4": "u4",
    "uint8": "u8",
    "uint16": "u16",
    "uint32": "u32",
    "uint64": "u64",
    "bfloat16": "bf16",
    "float16": "f16",
    "float32": "f32",
    "float64": "f64",
    "complex64": "c64",
    "complex128": "c128",
    "float8_e4m3fn": "f8_e4m3fn",
    "float8_e5m2": "f8_e5m2",
}

_SPEC = re.compile(r"^\s*(?P<dtype>[A-Za-z][\w]*)\s*\[(?P<dims>[^\]]*)\]\s*(?P<weak>~?)\s*$")


class SpecError(ValueError):
    """An argument spec that could not be read."""


def _dtype(name: str) -> np.dtype:
    long = SHORT_NAMES.get(name, name)
    try:
        return np.dtype(getattr(jax.numpy, long)) if hasattr(jax.numpy, long) else np.dtype(long)
    except TypeError:
        raise SpecError(
            f"Unknown dtype {name!r}. Use a short name such as "
            f"{', '.join(['f32', 'bf16', 'i32', 'u8', 'pred', 'c64'])} or a NumPy name "
            f"such as 'float32'."
        ) from None


def parse_spec(text: str) -> jax.ShapeDtypeStruct:
    """Reads ``DTYPE[DIMS]`` (optionally ending in ``~`` for a weak type)."""
    if not isinstance(text, str):
        raise SpecError(f"An argument spec is text like 'f32[16,16]', got {text!r}.")
    m = _SPEC.match(text)
    if not m:
        raise SpecError(
            f"Cannot read argument spec {text!r}: write DTYPE[DIMS], e.g. 'f32[16,16]' "
            f"for a 16x16 float32 array or 'i32[]' for an int32 scalar."
        )
    dims_text = m.group("dims").strip()
    dims: tuple[int, ...] = ()
    if dims_text:
        try:
            dims = tuple(int(d) for d in dims_text.split(","))
        except ValueError:
            raise SpecError(
                f"Cannot read the dimensions of {text!r}: they must be whole numbers "
                f"separated by commas, e.g. 'f32[8,128]'."
            ) from None
        if any(d < 0 for d in dims):
            raise SpecError(f"Dimensions of {text!r} must not be negative.")
    return jax.ShapeDtypeStruct(dims, _dtype(m.group("dtype")), weak_type=bool(m.group("weak")))


def format_spec(x) -> str:
    """The spec text of anything with ``shape`` and ``dtype`` (weak types end in ``~``)."""
    dtype = np.dtype(x.dtype)
    short = _LONG_TO_SHORT.get(dtype.name, dtype.name)
    weak = "~" if getattr(x, "weak_type", False) else ""
    return f"{short}[{','.join(str(d) for d in x.shape)}]{weak}"
