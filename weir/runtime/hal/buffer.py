"""HAL buffers: host memory every local device can use directly. A buffer is a numpy uint8 array
so views of any element type can be made over it without copies; read-only buffers wrap rodata
memoryviews (an mmap of the module file) and refuse writes."""

from __future__ import annotations

import ctypes
import threading

import numpy as np

from weir.errors import RuntimeFault

_UINT8 = np.dtype(np.uint8)


class Buffer:
    """A range of device-visible, host-mappable bytes."""

    __slots__ = ("data", "byte_length", "read_only", "_address", "__weakref__")

    def __init__(self, data: np.ndarray) -> None:
        if not isinstance(data, np.ndarray) or data.ndim != 1 or data.dtype != _UINT8:
            raise TypeError("a Buffer wraps a 1-D uint8 array")
        self.data = data
        # Fixed for the buffer's life (its array is never replaced), so read once here instead
        # of asking numpy on every range check of every dispatch.
        self.byte_length: int = len(data)
        self.read_only: bool = not data.flags.writeable
        self._address: int | None = None

    @property
    def address(self) -> int:
        """Where the bytes start, for native code. Cached, and found through ctypes' buffer
        protocol (about 0.5 µs) rather than numpy's `ctypes.data` (about 1.6 µs): buffers are
        fresh on every call and each dispatch passes every binding."""
        address = self._address
        if address is None:
            address = self._address = _address_of(self.data)
        return address

    @staticmethod
    def _owning(data: np.ndarray, address: int | None = None) -> Buffer:
        """A buffer over a fresh writable 1-D uint8 array made by this module (and its address,
        when known): made without `__init__`, whose checks of a caller's array cannot fail for it
        and cost more than the rest (allocations happen on every call)."""
        buffer = Buffer.__new__(Buffer)
        buffer.data = data
        buffer.byte_length = len(data)
        buffer.read_only = False
        buffer._address = address
        return buffer

    @staticmethod
    def wrap_readonly(data: memoryview | bytes) -> Buffer:
        """No copy: the array is a view on `data` (numpy marks it read-only)."""
        arr = np.frombuffer(data, dtype=np.uint8)
        arr.flags.writeable = False
        return Buffer(arr)

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


def _address_of(data: np.ndarray) -> int:
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(data))
    except (TypeError, ValueError):  # ctypes maps only writable, contiguous, non-empty memory
        return int(data.ctypes.data)


# Buffers up to _SMALL_BYTES are carved from shared blocks of _BLOCK_BYTES, each starting on an
# _ALIGN boundary (a cache line; the widest vector loads).
_SMALL_BYTES = 256
_BLOCK_BYTES = 4096
_ALIGN = 64


class Allocator:
    """Allocates zeroed host buffers.

    Small programs allocate a few small buffers on every call, so those are carved from shared
    zeroed blocks: a slice of a block costs a fraction of a fresh array, and its address is the
    block's plus an offset, where asking numpy (through ctypes) costs about a microsecond per
    buffer, which a native dispatch needs for every binding. A block is freed with the last of
    its buffers: a small buffer kept alive keeps at most one block. Larger buffers are arrays of
    their own: np.zeros maps lazily-zeroed pages, as cheap as np.empty, and keeps results
    deterministic when a kernel leaves bytes unwritten."""

    def __init__(self) -> None:
        self._block_lock = threading.Lock()
        self._block = np.zeros(0, _UINT8)  # the block being carved, its address, and how much
        self._block_address = 0            # of it is taken (all: the first carve makes one)
        self._used = _BLOCK_BYTES

    def allocate(self, size: int) -> Buffer:
        if type(size) is not int or size < 0:
            raise RuntimeFault(f"cannot allocate {size!r} bytes")
        if size > _SMALL_BYTES:
            return Buffer._owning(np.zeros(size, _UINT8))
        block, offset, address = self._carve(size)
        return Buffer._owning(block[offset:offset + size], address)

    def allocate_copy(self, array: np.ndarray) -> Buffer:
        """A fresh buffer holding `array`'s bytes in C order (the array itself is not kept)."""
        size = array.nbytes
        if size <= _SMALL_BYTES:
            block, offset, address = self._carve(size)
            data = block[offset:offset + size]
            data.data[:] = array.tobytes()
            return Buffer._owning(data, address)
        try:
            raw = bytearray(array)  # one copy, straight from the array's memory
        except ValueError:  # a dtype the buffer protocol cannot describe (bfloat16)
            raw = bytearray(array.tobytes())
        return Buffer._owning(np.frombuffer(raw, _UINT8))

    def import_readonly(self, data: memoryview | bytes) -> Buffer:
        return Buffer.wrap_readonly(data)

    def _carve(self, size: int) -> tuple[np.ndarray, int, int]:
        """Reserves `size` bytes of a block: (block, offset, address of the bytes)."""
        with self._block_lock:
            offset = self._used
            if offset + size > _BLOCK_BYTES:
                self._new_block()
                offset = 0
            self._used = offset + -(-size // _ALIGN) * _ALIGN
            return self._block, offset, self._block_address + offset

    def _new_block(self) -> None:
        raw = np.zeros(_BLOCK_BYTES + _ALIGN, _UINT8)
        address = _address_of(raw)
        skip = -address % _ALIGN
        self._block = raw[skip:skip + _BLOCK_BYTES]
        self._block_address = address + skip
