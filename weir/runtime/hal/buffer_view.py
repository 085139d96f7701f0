"""A BufferView is how tensors cross the VM boundary: a buffer plus offset, element type and
shape. `to_numpy` is a view (no copy) so native modules and tools can read results in place."""

from __future__ import annotations

import functools
import math

import numpy as np

from weir.errors import InputError
from weir.runtime.hal.buffer import Allocator, Buffer
from weir.runtime.hal.element_types import element_type_of, numpy_dtype


class BufferView:
    # `byte_length` and the numpy dtype are derived once here: every call creates views and
    # reads them back, so nothing about a view is recomputed per use.
    __slots__ = ("buffer", "byte_offset", "dtype", "shape", "byte_length", "_np_dtype")

    def __init__(self, buffer: Buffer, byte_offset: int, dtype: str, shape: tuple[int, ...]) -> None:
        shape = shape if type(shape) is tuple else tuple(shape)
        try:
            np_dtype, shape, nbytes = _layout(dtype, shape)
        except TypeError:  # something unhashable in it: the uncached check says what is wrong
            np_dtype, shape, nbytes = _layout.__wrapped__(dtype, shape)
        if byte_offset < 0 or byte_offset + nbytes > buffer.byte_length:
            raise InputError(f"a {format_type(dtype, shape)} view at offset {byte_offset} needs "
                             f"{nbytes} bytes, the buffer has {buffer.byte_length}")
        self.buffer = buffer
        self.byte_offset = byte_offset
        self.dtype = dtype
        self.shape = shape
        self.byte_length = nbytes
        self._np_dtype = np_dtype

    def to_numpy(self) -> np.ndarray:
        """A view on the buffer (read-only if the buffer is)."""
        return np.ndarray(self.shape, self._np_dtype, self.buffer.data, self.byte_offset)

    def to_numpy_copy(self) -> np.ndarray:
        """A copy the caller owns: later calls and other holders of the buffer cannot change it."""
        return np.ndarray(self.shape, self._np_dtype, self.buffer.data, self.byte_offset).copy()

    @staticmethod
    def from_numpy(array: np.ndarray, allocator: Allocator | None = None) -> BufferView:
        """Copies `array` into a fresh buffer (callers keep ownership of their array)."""
        arr = array if type(array) is np.ndarray else np.asarray(array)
        return BufferView._whole(
            (allocator or Allocator()).allocate_copy(arr), element_type_of(arr.dtype), arr)

    @staticmethod
    def from_numpy_as(array: np.ndarray, dtype: str, allocator: Allocator) -> BufferView:
        """`from_numpy` for an array of a native dtype whose element type the caller already
        knows (`dtype`): a call's arguments, checked once per layout."""
        return BufferView._whole(allocator.allocate_copy(array), dtype, array)

    @staticmethod
    def borrow(array: np.ndarray, dtype: str) -> BufferView:
        """`from_numpy_as` without the copy, for a synchronous call (`Buffer.borrow`): a
        native, aligned, non-empty C-contiguous array of element type `dtype`."""
        return BufferView._whole(Buffer.borrow(array), dtype, array)

    @staticmethod
    def _whole(buffer: Buffer, dtype: str, array: np.ndarray) -> BufferView:
        """A view of all of `buffer`, which holds `array`'s elements in C order: checked by
        construction, so `__init__`'s checks are skipped (arguments are made on every call)."""
        view = BufferView.__new__(BufferView)
        view.buffer = buffer
        view.byte_offset = 0
        view.dtype = dtype
        view.shape = array.shape
        view.byte_length = buffer.byte_length
        view._np_dtype = array.dtype
        return view

    def __repr__(self) -> str:
        return f"<hal.buffer_view {format_type(self.dtype, self.shape)}>"


@functools.lru_cache(maxsize=1024)
def _layout(dtype: str, shape: tuple[int, ...]) -> tuple[np.dtype, tuple[int, ...], int]:
    """The numpy dtype, the shape as Python ints, and the byte size of a view, checked. Programs
    create views of the same few layouts on every call, so the answers are kept."""
    np_dtype = numpy_dtype(dtype)
    shape = tuple(map(int, shape))
    if shape and min(shape) < 0:
        raise InputError(f"negative dimension in shape {shape}")
    return np_dtype, shape, math.prod(shape) * np_dtype.itemsize


def format_type(dtype: str, shape: tuple[int, ...]) -> str:
    """IREE's spelling: `4x2xf32`, `f32` for a scalar."""
    return "x".join([*(str(d) for d in shape), dtype])
