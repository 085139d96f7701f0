"""What a module written in Python returns, checked where it returns it: the count its signature
declares, an int for `i`/`I` (in range), a float for `f`/`F`, and for `r` a value a caller can
hold (a BufferView, Buffer, Fence or None).

Without this, a method that returns a numpy array or a string where its cconv says `r` is found
out only by whatever uses the value next (`hal.buffer_view.dim: view must be a BufferView, got
str`), far from the function that made the mistake; IREE's native modules are typed C functions
and cannot make it. numpy scalars are accepted as the Python numbers they hold, and an int where
a float is declared as that float: Python code writes `return 0` and `return array.sum()`."""

from __future__ import annotations

from typing import Any, Callable

import numpy as np

from weir.errors import RuntimeFault
from weir.format.image import Signature
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.buffer_view import BufferView
from weir.runtime.hal.fence import Fence

ResultCheck = Callable[[Any], Any]

_REFERENCES = (BufferView, Buffer, Fence, type(None))
_INT_RANGES = {"i": (-(1 << 31), 1 << 32), "I": (-(1 << 63), 1 << 64)}  # signless: both readings
_DECLARED = {"i": "an integer (i32, 'i')", "I": "an integer (i64, 'I')",
             "f": "a float (f32, 'f')", "F": "a float (f64, 'F')",
             "r": "a reference ('r': a BufferView, Buffer, Fence or None)"}


def _type_name(value: Any) -> str:
    cls = type(value)
    return cls.__name__ if cls.__module__ == "builtins" else f"{cls.__module__}.{cls.__name__}"


def _converter(letter: str) -> Callable[[Any], Any]:
    """The value in its register form, or raises `TypeError` / `OverflowError`."""
    if letter == "r":
        def reference(value: Any) -> Any:
            if type(value) not in _REFERENCES and not isinstance(value, _REFERENCES):
                raise TypeError
            return value
        return reference
    if letter in "iI":
        low, high = _INT_RANGES[letter]

        def integer(value: Any) -> int:
            if type(value) is not int and not isinstance(value, (bool, np.integer, np.bool_)):
                raise TypeError
            number = int(value)
            if not low <= number < high:
                raise OverflowError
            return number
        return integer

    def real(value: Any) -> float:
        if type(value) is not float and (isinstance(value, (bool, np.bool_))
                                         or not isinstance(value, (int, np.integer, np.floating))):
            raise TypeError
        return float(value)
    return real


def result_check(qualified: str, signature: Signature) -> ResultCheck:
    """A function that takes what the method returned and gives the results as the VM passes
    them on (None, one value, or a tuple), or raises a one-line `RuntimeFault` naming the
    function, the result and what its signature declares."""
    letters = signature.results
    converters = tuple(_converter(t) for t in letters)

    def wrong(value: Any, n: int, problem: str = "") -> RuntimeFault:
        hint = "; wrap a numpy array with BufferView.from_numpy" \
            if isinstance(value, np.ndarray) and letters[n] == "r" else ""
        return RuntimeFault(f"{qualified}: returned {problem or _type_name(value)} where its "
                            f"signature {signature.cconv} declares {_DECLARED[letters[n]]} "
                            f"(result {n}){hint}")

    def one(value: Any, n: int) -> Any:
        try:
            return converters[n](value)
        except TypeError:
            raise wrong(value, n) from None
        except OverflowError:
            raise wrong(value, n, f"{value}, out of range,") from None

    if not letters:
        def none(value: Any) -> None:
            if value is not None:
                raise RuntimeFault(f"{qualified}: returned {_type_name(value)} where its "
                                   f"signature {signature.cconv} declares no result")
        return none
    if len(letters) == 1:
        return lambda value: one(value, 0)

    def several(value: Any) -> tuple[Any, ...]:
        if not isinstance(value, (tuple, list)) or len(value) != len(letters):
            got = f"{len(value)} values" if isinstance(value, (tuple, list)) \
                else f"one {_type_name(value)}"
            raise RuntimeFault(f"{qualified}: returned {got} where its signature "
                               f"{signature.cconv} declares {len(letters)} results (return a "
                               f"tuple)")
        return tuple(one(v, n) for n, v in enumerate(value))
    return several
