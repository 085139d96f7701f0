"""HAL buffers: host memory every local device can use directly. A buffer is a numpy uint8 array
so views of any element type can be made over it without copies; read-only buffers wrap rodata
memoryviews (an mmap of the module file) and refuse writes."""

from __future__ import annotations

import numpy as np

from weir.errors import RuntimeFault


class Buffer:
    """A range of device-visible, host-mappable bytes."""

    __slots__ = ("data", "__weakref__")

    def __init__(self, data: np.ndarray) -> None:
        if data.dtype != np.uint8 or data.ndim != 1:
            raise TypeError("a Buffer wraps a 1-D uint8 array")
        self.data = data

    @staticmethod
    def wrap_readonly(data: memoryview | bytes) -> Buffer:
        """No copy: the array is a view on `data` (numpy marks it read-only)."""
        arr = np.frombuffer(data, dtype=np.uint8)
        arr.flags.writeable = False
        return Buffer(arr)

    @property
    def byte_length(self) -> int:
        return int(self.data.shape[0])

    @property
    def read_only(self) -> bool:
        return not self.data.flags.writeable

    def check_range(self, offset: int, length: int, what: str) -> None:
        if offset < 0 or length < 0 or offset + length > self.byte_length:
            raise RuntimeFault(f"{what}: range [{offset}, {offset + length}) is outside the "
                               f"buffer of {self.byte_length} bytes")

    def writable_bytes(self, offset: int, length: int, what: str) -> np.ndarray:
        self.check_range(offset, length, what)
        if self.read_only:
            raise RuntimeFault(f"{what}: the buffer is read-only (rodata)")
        return self.data[offset:offset + length]

    def __repr__(self) -> str:
        return f"<hal.buffer {self.byte_length} bytes{' read-only' if self.read_only else ''}>"


class Allocator:
    """Allocates zeroed host buffers (np.zeros maps lazily-zeroed pages, as cheap as np.empty,
    and keeps results deterministic when a kernel leaves bytes unwritten)."""

    def allocate(self, size: int) -> Buffer:
        if type(size) is not int or size < 0:
            raise RuntimeFault(f"cannot allocate {size!r} bytes")
        return Buffer(np.zeros(size, dtype=np.uint8))

    def import_readonly(self, data: memoryview | bytes) -> Buffer:
        return Buffer.wrap_readonly(data)
