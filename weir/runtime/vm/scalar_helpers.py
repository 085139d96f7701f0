"""Scalar semantics of the VM's Binary/Unary ops that Python operators do not give directly:
i64 wraparound, C-style truncating division and remainder, bounded shifts. The generated code
calls these only where plain operators would be wrong."""

from __future__ import annotations

import math

from weir.errors import RuntimeFault

_I64_MIN = -(1 << 63)
_MASK = (1 << 64) - 1


def wrap_i64(x: object) -> object:
    """Two's complement wrap of ints; anything else (floats, inf, nan) passes through."""
    if type(x) is int:
        return ((x - _I64_MIN) & _MASK) + _I64_MIN
    return x


def div(a: int | float, b: int | float) -> int | float:
    if type(a) is int and type(b) is int:
        if b == 0:
            raise RuntimeFault("integer division by zero")
        q = abs(a) // abs(b)
        return wrap_i64(q if (a < 0) == (b < 0) else -q)  # type: ignore[return-value]
    if b == 0:
        if a == 0 or math.isnan(a):
            return math.nan
        return math.copysign(math.inf, a) * math.copysign(1.0, b)
    return a / b


def rem(a: int | float, b: int | float) -> int | float:
    if type(a) is int and type(b) is int:
        if b == 0:
            raise RuntimeFault("integer remainder by zero")
        r = abs(a) % abs(b)
        return -r if a < 0 else r
    if b == 0:
        return math.nan
    return math.fmod(a, b)


def shl(a: int, b: int) -> int:
    if b < 0 or b >= 64:
        return 0
    return wrap_i64(a << b)  # type: ignore[return-value]


def shr(a: int, b: int) -> int:
    """Arithmetic shift right."""
    if b < 0 or b >= 64:
        return -1 if a < 0 else 0
    return a >> b


def to_int(a: int | float) -> int:
    if type(a) is int:
        return a
    if math.isnan(a) or math.isinf(a):
        raise RuntimeFault(f"cannot convert {a} to an integer")
    return wrap_i64(int(a))  # type: ignore[return-value]


def fail(message: object, *values: object) -> RuntimeFault:
    """The error of a `Fail` instruction: its message on one line (a module's text may hold
    anything; control characters are shown escaped), then the values it names, `: 5 vs 4`."""
    text = str(message)
    if values:
        text = f"{text}: {' vs '.join(str(v) for v in values)}"
    if not text.isprintable():
        text = repr(text)[1:-1]
    return RuntimeFault(text or "vm.fail without a message")
