"""Turning IR positions into `weir.errors.CompileError`s for the compiler passes.

Every op parsed by `weir.ir.parse` carries a `FileLineColLoc`; ops created later by passes
usually carry `UnknownLoc`, so `location_of` falls back to the nearest located ancestor.
"""

from __future__ import annotations

from xdsl.dialects.builtin import CallSiteLoc, FileLineColLoc, FusedLoc, NameLoc
from xdsl.ir import Attribute, Operation

from weir.errors import CompileError

UNKNOWN_FILE = "<unknown>"


def one_line(message: str) -> str:
    """Collapse a (possibly multi-line) xDSL message into one clean line; characters a terminal
    would act on (from a binary input quoted in the message) are shown escaped."""
    text = " ".join(message.split())
    return "".join(c if c.isprintable() else f"\\x{ord(c):02x}" if ord(c) < 256 else
                   f"\\u{ord(c):04x}" for c in text)


def _file_line_col(loc: Attribute) -> tuple[str, int, int] | None:
    """The first concrete position inside a location attribute, if it has one."""
    match loc:
        case FileLineColLoc():
            return loc.filename.data, loc.line.data, loc.column.data
        case NameLoc():
            return _file_line_col(loc.location)
        case CallSiteLoc():
            return _file_line_col(loc.callee) or _file_line_col(loc.caller)
        case FusedLoc():
            for inner in loc.locations.data:
                if (found := _file_line_col(inner)) is not None:
                    return found
            return None
        case _:
            return None


def location_of(op: Operation) -> tuple[str, int, int]:
    """`(filename, line, col)` of `op`, or of its nearest ancestor that has one."""
    current: Operation | None = op
    while current is not None:
        if (found := _file_line_col(current.location)) is not None:
            return found
        current = current.parent_op()
    return UNKNOWN_FILE, 0, 0


def error_at(op: Operation, message: str) -> CompileError:
    """A CompileError located at `op`; the caller raises it (`raise error_at(op, "...")`)."""
    filename, line, col = location_of(op)
    return CompileError(one_line(message), filename, line, col)


def locate_created(op: Operation) -> None:
    """Gives the ops a rewrite inserted just before `op` `op`'s location, so that an error about
    one of them later points at the source op it came from instead of the top of the file. They
    are the ops back from `op` without a position or already at `op`'s (the rewrite placed
    some itself)."""
    prev = op.prev_op
    while prev is not None and (prev.location == op.location or
                                _file_line_col(prev.location) is None):
        prev.location = op.location
        prev = prev.prev_op
