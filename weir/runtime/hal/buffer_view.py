"""A BufferView is how tensors cross the VM boundary: a buffer plus offset, element type and
shape. `to_numpy` is a view (no copy) so native modules and tools can read results in place."""

from __future__ import annotations

import math

import numpy as np

from weir.errors import InputError
from weir.runtime.hal.buffer import Allocator, Buffer
from weir.runtime.hal.element_types import element_type_of, numpy_dtype


class BufferView:
    __slots__ = ("buffer", "byte_offset", "dtype", "shape")

    def __init__(self, buffer: Buffer, byte_offset: int, dtype: str, shape: tuple[int, ...]) -> None:
        np_dtype = numpy_dtype(dtype)
        shape = tuple(int(d) for d in shape)
        if any(d < 0 for d in shape):
            raise InputError(f"negative dimension in shape {shape}")
        nbytes = math.prod(shape) * np_dtype.itemsize
        if byte_offset < 0 or byte_offset + nbytes > buffer.byte_length:
            raise InputError(f"a {format_type(dtype, shape)} view at offset {byte_offset} needs "
                             f"{nbytes} bytes, the buffer has {buffer.byte_length}")
        self.buffer = buffer
        self.byte_offset = byte_offset
        self.dtype = dtype
        self.shape = shape

    @property
    def byte_length(self) -> int:
        return math.prod(self.shape) * numpy_dtype(self.dtype).itemsize

    def to_numpy(self) -> np.ndarray:
        """A view on the buffer (read-only if the buffer is)."""
        raw = self.buffer.data[self.byte_offset:self.byte_offset + self.byte_length]
        return raw.view(numpy_dtype(self.dtype)).reshape(self.shape)

    @staticmethod
    def from_numpy(array: np.ndarray, allocator: Allocator | None = None) -> BufferView:
        """Copies `array` into a fresh buffer (callers keep ownership of their array)."""
        arr = np.asarray(array)
        dtype = element_type_of(arr.dtype)
        buffer = (allocator or Allocator()).allocate(arr.nbytes)
        buffer.data.view(arr.dtype).reshape(arr.shape)[...] = arr
        return BufferView(buffer, 0, dtype, arr.shape)

    def __repr__(self) -> str:
        return f"<hal.buffer_view {format_type(self.dtype, self.shape)}>"


def format_type(dtype: str, shape: tuple[int, ...]) -> str:
    """IREE's spelling: `4x2xf32`, `f32` for a scalar."""
    return "x".join([*(str(d) for d in shape), dtype])
