"""What a serialized export is: the Olympus envelope around the engine's payload.

``Exported.serialize()`` returns the payload (the exported function as the engine
serializes it) inside an envelope that names the format and carries the payload's
length and SHA-256, so that a truncated or corrupted blob is caught before any
reader sees it. All integers are big-endian:

    offset  size  field
         0     8  MAGIC, b"OLYMPUSX"
         8     2  FORMAT_VERSION of the envelope (uint16)
        10     2  flags, reserved, 0 (uint16)
        12     8  payload length in bytes (uint64)
        20    32  SHA-256 digest of the payload
        52     -  payload

The payload itself follows one of the engine's calling conventions; this
Olympus calls the versions from ``minimum_supported_calling_convention_version``
to ``maximum_supported_calling_convention_version``.

>>> blob = seal(b"payload")
>>> blob[:8], len(blob) == HEADER_SIZE + 7
(b'OLYMPUSX', True)
>>> open_envelope(blob)
b'payload'
>>> open_envelope(blob[:-1])
Traceback (most recent call last):
olympus.export.DeserializationError: The blob is truncated: ...
"""

from __future__ import annotations

import hashlib
import struct

from jax import export as _jax_export

__all__ = [
    "MAGIC",
    "FORMAT_VERSION",
    "HEADER_SIZE",
    "DeserializationError",
    "seal",
    "open_envelope",
    "minimum_supported_calling_convention_version",
    "maximum_supported_calling_convention_version",
]

MAGIC = b"OLYMPUSX"
FORMAT_VERSION = 1
_HEADER = struct.Struct(">8sHHQ32s")
HEADER_SIZE = _HEADER.size  # 52

#: Calling convention versions this Olympus can call (and ``deserialize`` accepts).
minimum_supported_calling_convention_version: int = (
    _jax_export.minimum_supported_calling_convention_version
)
maximum_supported_calling_convention_version: int = (
    _jax_export.maximum_supported_calling_convention_version
)


class DeserializationError(ValueError):
    """Bytes given to :func:`deserialize` are not a readable exported function.

    The message says what is wrong with them (truncated, corrupted, written by
    an unsupported version...) and what to do about it.
    """


# Tracebacks name it as users import it: olympus.export.DeserializationError.
DeserializationError.__module__ = "olympus.export"


def seal(payload: bytes) -> bytes:
    """``payload`` inside the envelope: the header, then the payload."""
    header = _HEADER.pack(MAGIC, FORMAT_VERSION, 0, len(payload), hashlib.sha256(payload).digest())
    return header + payload


def open_envelope(data: bytes) -> bytes:
    """Checks the envelope and returns its payload; a bad one raises
    :class:`DeserializationError` saying what is wrong."""
    if len(data) < HEADER_SIZE:
        raise DeserializationError(
            f"The blob is truncated: it has {len(data)} bytes, fewer than the "
            f"{HEADER_SIZE}-byte Olympus export header. The file was cut short while "
            f"writing or copying; use an intact copy or export the function again."
        )
    magic, version, flags, length, digest = _HEADER.unpack_from(data)
    if version != FORMAT_VERSION:
        raise DeserializationError(
            f"The blob uses Olympus export format version {version}; this Olympus reads "
            f"version {FORMAT_VERSION}. Deserialize it with the Olympus version that wrote "
            f"it, or export the function again with this one."
        )
    if flags != 0:
        raise DeserializationError(
            f"The blob's header is corrupted: its reserved field is {flags:#06x}, "
            f"expected 0. Use an intact copy or export the function again."
        )
    actual = len(data) - HEADER_SIZE
    if actual < length:
        raise DeserializationError(
            f"The blob is truncated: its header announces a payload of {length} bytes "
            f"but only {actual} follow. The file was cut short while writing or copying; "
            f"use an intact copy or export the function again."
        )
    if actual > length:
        if hashlib.sha256(data[HEADER_SIZE : HEADER_SIZE + length]).digest() == digest:
            raise DeserializationError(
                f"The blob has {actual - length} unexpected bytes after its {length}-byte "
                f"payload: several blobs were concatenated or the file was appended to. "
                f"Pass exactly the bytes that Exported.serialize() returned."
            )
        raise DeserializationError(
            f"The blob is corrupted: it is {actual - length} bytes longer than its header "
            f"announces and its payload does not match the checksum in its header. "
            f"Use an intact copy or export the function again."
        )
    payload = data[HEADER_SIZE:]
    found = hashlib.sha256(payload).digest()
    if found != digest:
        raise DeserializationError(
            f"The blob is corrupted: the SHA-256 of its payload ({found.hex()[:16]}...) "
            f"does not match the checksum in its header ({digest.hex()[:16]}...). Some "
            f"bytes changed after it was written; use an intact copy or export the "
            f"function again."
        )
    return payload
