"""What a VM register may hold, as the verifier tracks it: a set of kinds, one per sort of value.

The calling convention says only `i`, `f` or `r`; IREE's VM knows more, since its registers are
typed (`!vm.ref<!hal.buffer_view>`). weir's registers are untyped Python slots, so the verifier
finds each register's kinds from where its value comes from (a string constant, what
`hal.command_buffer.create` returns, ...) and refuses a module that uses a value as another
kind: a command buffer returned where a caller receives a tensor, a string passed where
`hal.allocator.allocate` takes a device. `ANY` is a value whose kind is known only at run time
(an `r` argument, what `hal.buffer.load` read); the runtime checks those where it matters.
"""

from __future__ import annotations

Kind = frozenset[str]

INT: Kind = frozenset({"int"})
FLOAT: Kind = frozenset({"float"})
STRING: Kind = frozenset({"string"})
RODATA: Kind = frozenset({"rodata"})
NULL: Kind = frozenset({"null"})
DEVICE: Kind = frozenset({"device"})
BUFFER: Kind = frozenset({"buffer"})
BUFFER_VIEW: Kind = frozenset({"buffer_view"})
FENCE: Kind = frozenset({"fence"})
COMMAND_BUFFER: Kind = frozenset({"command_buffer"})
EXECUTABLE: Kind = frozenset({"executable"})

NUMBER: Kind = INT | FLOAT
REFERENCE: Kind = (STRING | RODATA | NULL | DEVICE | BUFFER | BUFFER_VIEW | FENCE
                   | COMMAND_BUFFER | EXECUTABLE)
ANY: Kind = NUMBER | REFERENCE
# What an `r` value may be where it crosses a function boundary (an argument of a function or
# of another module's import, a result): the values a caller can receive (numbers too: the API
# passes scalars through `r` as they are). Strings, devices, command buffers, executables and
# rodata exist only between a program and the `hal` module.
VALUE: Kind = BUFFER_VIEW | BUFFER | FENCE | NULL | NUMBER

_NAMES = {"int": "an integer", "float": "a float", "buffer_view": "a buffer view",
          "buffer": "a buffer", "fence": "a fence", "null": "null", "device": "a device",
          "command_buffer": "a command buffer", "executable": "an executable",
          "string": "a string constant", "rodata": "a rodata view"}
_ORDER = tuple(_NAMES)

# The kind of each calling-convention letter: an `r` may carry anything (the API passes
# scalars through `r` arguments as they are; `hal.buffer.load` returns one through `r`).
LETTER_KINDS: dict[str, Kind] = {"i": INT, "I": INT, "f": FLOAT, "F": FLOAT, "r": ANY}


def describe(kind: Kind) -> str:
    """`a buffer view or null`; `a run-time value` for ANY, `a number` for NUMBER."""
    if kind == ANY:
        return "a run-time value"
    if kind == NUMBER:
        return "a number"
    if kind == VALUE:
        return "a value (a buffer view, a buffer, a fence, a number or null)"
    names = [_NAMES[k] for k in _ORDER if k in kind]
    return names[0] if len(names) == 1 else ", ".join(names[:-1]) + " or " + names[-1]


def may_be(kind: Kind, wanted: Kind) -> bool:
    """Whether a register of `kind` may hold what a use wants. ANY might, and is checked where
    it is used; null is a value of every reference kind (the callee checks for it, as IREE's
    do)."""
    if kind == ANY:
        return True
    allowed = wanted | NULL if wanted & REFERENCE else wanted
    return kind <= allowed


def join(old: Kind | None, new: Kind) -> Kind | None:
    """The kinds of a register written from two places (branch arguments, a select); None when
    they cannot share a register: a number and a reference, or an integer and a float."""
    if old is None or old <= new:
        return new
    if new <= old:
        return old
    if old <= REFERENCE and new <= REFERENCE:
        return old | new
    return None
