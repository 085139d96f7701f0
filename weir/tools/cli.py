"""The one wrapper every weir tool's `main` goes through, so user errors always print as one line
and exit 1, Ctrl-C exits 130, and only bugs in weir ever show a traceback."""

from __future__ import annotations

import os
import re
import sys
from collections.abc import Callable

from weir.errors import WeirError

# A message that already says where (`input.mlir:3:7: error: ...`) is printed as it is.
_LOCATED = re.compile(r"^[^\s:][^:\n]*:\d+:\d+: ")

EXIT_USER_ERROR = 1
EXIT_INTERRUPTED = 130


def error_line(tool: str, message: str) -> str:
    """`tool: error: message` on one line (or the message alone if it starts with a location)."""
    one_line = "; ".join(part.strip() for part in str(message).splitlines() if part.strip())
    if _LOCATED.match(one_line):
        return one_line
    return f"{tool}: error: {one_line}"


def run_tool(name: str, body: Callable[[], int]) -> int:
    """Runs `body` and turns what it raises into the tool's exit code."""
    try:
        return body()
    except WeirError as error:
        _flush_stdout()
        print(error_line(name, str(error)), file=sys.stderr)
        return EXIT_USER_ERROR
    except BrokenPipeError:
        # The reader of our output went away (`| head`): nothing left to say to anyone.
        _silence_stdout()
        return EXIT_USER_ERROR
    except OSError as error:
        # Files the user named (unreadable, missing, a full disk) are user errors, not bugs.
        _flush_stdout()
        where = f"'{error.filename}': " if error.filename else ""
        print(error_line(name, f"{where}{error.strerror or error}"), file=sys.stderr)
        return EXIT_USER_ERROR
    except KeyboardInterrupt:
        _flush_stdout()
        print(f"{name}: interrupted", file=sys.stderr)
        return EXIT_INTERRUPTED
    except Exception as error:  # noqa: BLE001 - the last line of defence, reported as a bug
        # A defect in weir itself: still one line for the user, naming it as weir's fault.
        _flush_stdout()
        print(error_line(name, f"internal error ({type(error).__name__}: {error}); this is a "
                               "bug in weir, please report it with the input that caused it"),
              file=sys.stderr)
        return EXIT_USER_ERROR


def _flush_stdout() -> None:
    """Flush what the tool printed before its error, and survive a closed pipe (`| head`)."""
    try:
        sys.stdout.flush()
    except BrokenPipeError:
        _silence_stdout()


def _silence_stdout() -> None:
    """Point stdout at /dev/null so the interpreter's final flush cannot fail again."""
    try:
        fd = sys.stdout.fileno()
    except (AttributeError, OSError, ValueError):
        return  # not a real file (captured in tests): nothing will flush to a pipe
    devnull = os.open(os.devnull, os.O_WRONLY)
    os.dup2(devnull, fd)
    os.close(devnull)
