"""Tensor arguments at the Python API: a numpy array becomes a device buffer, after its shape
and element type were checked against what the function declares: lent as it is to a
synchronous call when its memory is C-contiguous in the host's order (no copy: a decode step
passes its whole KV cache), else a fresh buffer in one copy.

A compiled function checks its arguments itself (`hal.buffer_view.assert`), but only once they
are in device buffers: a wrong 256 MiB input would be copied whole before being refused. Its
`iree.abi.declaration` reflection (`sync func @f(%input0: tensor<4x?xf32>) -> (...)`) says the
same thing earlier, so the API refuses it first, with the same message, having copied nothing.
A big-endian array (a `>f4` npy file) is swapped to the host's order by that one copy."""

from __future__ import annotations

import re
import sys
from dataclasses import dataclass
from typing import Any, Callable, Mapping, Sequence

import numpy as np

from weir.errors import InputError
from weir.format.element_types import VALUE_TYPES
from weir.runtime.hal.buffer import Allocator
from weir.runtime.hal.buffer_view import BufferView, format_type
from weir.runtime.hal.element_types import element_type_of

DECLARATION_KEY = "iree.abi.declaration"
Converter = Callable[[Any, Any], Any]  # (value, allocator) -> VM value

_INPUT = re.compile(r"%input(\d+): tensor<((?:(?:\d+|\?)x)*)([a-z][a-z0-9]*)>")
_ELEMENT_TYPES = frozenset(t.name for t in VALUE_TYPES)


@dataclass(frozen=True)
class TensorType:
    """A declared tensor argument: its element type name and shape, -1 for a dynamic size."""

    dtype: str
    shape: tuple[int, ...]

    def matches(self, dtype: str, shape: tuple[int, ...]) -> bool:
        """As `hal.buffer_view.assert` decides: same element type and rank, every static
        dimension equal."""
        return dtype == self.dtype and len(shape) == len(self.shape) and \
            all(e == -1 or e == a for e, a in zip(self.shape, shape))

    def __str__(self) -> str:
        return format_type(self.dtype, tuple("?" if d == -1 else d for d in self.shape))  # type: ignore[misc]


def declared_tensor_types(reflection: Mapping[str, str],
                          num_args: int) -> tuple[TensorType | None, ...]:
    """Per user argument, its declared tensor type; None for a scalar, for a type the
    declaration spells in a way not read here (an encoding, `index` elements), or when the
    function has no declaration. Advice only: the function's own checks stay the authority."""
    found: list[TensorType | None] = [None] * num_args
    for match in _INPUT.finditer(reflection.get(DECLARATION_KEY, "")):
        index, dims, dtype = int(match.group(1)), match.group(2), match.group(3)
        if index >= num_args or dtype not in _ELEMENT_TYPES:
            continue
        shape = tuple(-1 if d == "?" else int(d) for d in dims.split("x")[:-1])
        found[index] = TensorType(dtype, shape)
    return tuple(found)


def _describe(dtype: str, shape: tuple[int, ...]) -> str:
    return format_type(dtype, shape)


def array_to_view(array: np.ndarray, dtype: str, allocator: Allocator | None) -> BufferView:
    """`array` in a fresh buffer, in C order and the host's byte order: one copy either way."""
    if array.dtype.isnative and array.flags.c_contiguous:
        return BufferView.from_numpy(array, allocator)
    native = array.dtype.newbyteorder("=")
    buffer = (allocator or Allocator()).allocate(array.size * native.itemsize)
    np.copyto(np.ndarray(array.shape, native, buffer.data), array, casting="equiv")
    return BufferView(buffer, 0, dtype, array.shape)


def _element_type(array: np.ndarray) -> str:
    dtype = array.dtype
    return element_type_of(dtype if dtype.isnative else dtype.newbyteorder("="))


def tensor_argument(expected: TensorType | None, function: str, index: int,
                    borrow: bool = False) -> Converter:
    """The converter of an `r` argument: arrays (and numpy scalars) checked against `expected`
    (when known) and copied into a fresh buffer, or with `borrow` lent without a copy when
    their memory allows (`BufferView.borrow`: a synchronous call, which `release_borrowed`
    ends); other values (buffer views, fences, Python scalars passed through `r`) as they
    are."""
    # (numpy dtype, shape) pairs already checked and accepted, with their element type: a
    # program is called with the same few layouts, so the check is done once for each (a few
    # dozen kept; the others are checked on every call, as before).
    accepted: dict[tuple[np.dtype, tuple[int, ...]], str] = {}

    def convert(value: Any, allocator: Any) -> Any:
        if type(value) is np.ndarray and allocator is not None:
            dtype = accepted.get((value.dtype, value.shape))
            if dtype is not None:
                if borrow and _lendable(value):
                    return BufferView.borrow(value, dtype)
                return BufferView.from_numpy_as(value, dtype, allocator)
        if not isinstance(value, (np.ndarray, np.generic)):
            return value
        array = value if isinstance(value, np.ndarray) else np.asarray(value)
        dtype = _element_type(array)
        if expected is not None and not expected.matches(dtype, array.shape):
            raise InputError(f"function '{function}': argument {index} (%input{index}) expects "
                             f"{expected}, got {_describe(dtype, array.shape)}")
        if array.dtype.isnative and len(accepted) < _ACCEPTED_LAYOUTS:
            accepted[(array.dtype, array.shape)] = dtype
        if borrow and array is value and array.dtype.isnative and _lendable(array):
            return BufferView.borrow(array, dtype)
        return array_to_view(array, dtype, allocator)
    return convert


# Arrays smaller than this are copied even where they could be lent: a copy of a few KiB costs
# less than making a buffer over the caller's memory (0.4 us more per argument for `tiny`).
LEND_MIN_BYTES = 16 << 10


def _lendable(array: np.ndarray) -> bool:
    """Memory a buffer can be over as it is, worth not copying: C order, aligned, at least
    LEND_MIN_BYTES (numpy's dtype checks come before: native order, a weir element type)."""
    flags = array.flags
    return array.nbytes >= LEND_MIN_BYTES and flags.c_contiguous and flags.aligned


def release_borrowed(views: Sequence[Any]) -> None:
    """Ends the loan of the call's borrowed arguments (`views`, the converted arguments, the
    caller's only reference to them after the call): one the program still refers to keeps a
    copy of the caller's bytes. References counted: `views`, the loop's name and
    getrefcount's argument for the view; the view's attribute, `buffer` and getrefcount's
    argument for its buffer."""
    for view in views:
        if type(view) is BufferView and view.buffer.borrowed:
            buffer = view.buffer
            if sys.getrefcount(view) > 3 or sys.getrefcount(buffer) > 3:
                buffer.keep_private()


_ACCEPTED_LAYOUTS = 32
