"""Sleeping and waking threads in generated code, without Python and the GIL: Linux futexes,
called through libc's `syscall` from the runtime's own LLVM functions (work_board.py).

A helper thread that sleeps here is woken by a word of memory changing and one system call
from the waker; a helper sleeping in Python must, once woken, also take the GIL from the thread
that is busy preparing the very work it is woken for. Where futexes are not available (not
Linux, or a CPU whose system call number is not known here) `AVAILABLE` is False and the board
lets helpers sleep in Python as before."""

from __future__ import annotations

import platform
import sys

import llvmlite.ir as ir

_I32 = ir.IntType(32)
_I64 = ir.IntType(64)

# SYS_futex by machine; the word is the low half of a little-endian int64.
_SYS_FUTEX = {"x86_64": 202, "amd64": 202, "aarch64": 98, "arm64": 98}
_NUMBER = _SYS_FUTEX.get(platform.machine().lower()) if sys.platform.startswith("linux") \
    else None
AVAILABLE = _NUMBER is not None and sys.byteorder == "little"

_FUTEX_WAIT_PRIVATE = 0 | 128
_FUTEX_WAKE_PRIVATE = 1 | 128
_WAKE_ALL = 2**31 - 1


class Futex:
    """Declares `syscall` in `module`; `wait` and `wake` emit the calls."""

    def __init__(self, module: ir.Module) -> None:
        self._syscall = ir.Function(module, ir.FunctionType(_I64, [_I64], var_arg=True),
                                    name="syscall")

    def wait(self, b: ir.IRBuilder, word: ir.Value, expected: ir.Value,
             timeout: ir.Value) -> None:
        """Sleeps while the int64 at `word` still has `expected` in its low half, for at most
        `timeout` (a timespec*, relative); returns at once if it already differs. Spurious
        returns are allowed: the caller looks again."""
        assert _NUMBER is not None
        b.call(self._syscall, [ir.Constant(_I64, _NUMBER), b.ptrtoint(word, _I64),
                               ir.Constant(_I64, _FUTEX_WAIT_PRIVATE),
                               b.and_(expected, ir.Constant(_I64, 0xFFFFFFFF)),
                               b.ptrtoint(timeout, _I64), ir.Constant(_I64, 0),
                               ir.Constant(_I64, 0)])

    def wake_all(self, b: ir.IRBuilder, word: ir.Value) -> None:
        assert _NUMBER is not None
        b.call(self._syscall, [ir.Constant(_I64, _NUMBER), b.ptrtoint(word, _I64),
                               ir.Constant(_I64, _FUTEX_WAKE_PRIVATE),
                               ir.Constant(_I64, _WAKE_ALL), ir.Constant(_I64, 0),
                               ir.Constant(_I64, 0), ir.Constant(_I64, 0)])
