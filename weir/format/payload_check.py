"""Executable payloads of the formats weir defines are decoded (and so fully verified) when the
module is, and must describe the entry points the module says the executable has, in order:
dispatches name an entry point by its position, so a payload that belongs to another executable
(a damaged segment table) would otherwise run the wrong kernel."""

from __future__ import annotations

from weir.errors import ModuleFormatError
from weir.format import native_executable, kernel_codec
from weir.format.json_fields import printable


def payload_entry_points(format: str, payload: memoryview | bytes) -> tuple[str, ...] | None:
    """The entry point names of a payload, decoded and verified; None for a format this
    package does not define (its loader verifies it)."""
    if format == "reference":
        exe = kernel_codec.decode_reference_executable(payload)
        return tuple(e.name for e in exe.entry_points)
    if format == native_executable.FORMAT:
        return tuple(e.name for e in native_executable.decode_native_executable(payload).entries)
    return None


def check_payload(format: str, payload: memoryview | bytes, entry_points: tuple[str, ...],
                  where: str) -> None:
    try:
        names = payload_entry_points(format, payload)
    except ModuleFormatError as e:
        raise ModuleFormatError(f"{where}: {e}") from None
    if names is not None and names != tuple(entry_points):
        raise ModuleFormatError(
            f"{where}: the payload has entry points {', '.join(map(printable, names)) or 'none'}, "
            f"the executable declares {', '.join(map(printable, entry_points)) or 'none'}")
