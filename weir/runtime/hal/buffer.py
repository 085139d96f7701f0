"""HAL buffers: host memory every local device can use directly. A buffer is a numpy uint8 array
so views of any element type can be made over it without copies; read-only buffers wrap rodata
memoryviews (an mmap of the module file), or a caller's array lent to one call (`borrow`), and
refuse writes.

Buffers an allocator makes are counted while alive (`Allocator.live_buffers`, shown by the
device's statistics), so a leak shows up in the runtime's own numbers."""

from __future__ import annotations

import ctypes

import numpy as np

from weir.errors import RuntimeFault
from weir.runtime.hal.live_objects import HOST_BUFFERS, LiveObjects

_UINT8 = np.dtype(np.uint8)


class Buffer:
    """A range of device-visible, host-mappable bytes."""

    __slots__ = ("data", "byte_length", "read_only", "borrowed", "_address", "_counter",
                 "_lent", "__weakref__")

    def __init__(self, data: np.ndarray) -> None:
        if not isinstance(data, np.ndarray) or data.ndim != 1 or data.dtype != _UINT8:
            raise TypeError("a Buffer wraps a 1-D uint8 array")
        self.data = data
        # Fixed for the buffer's life (its array is never replaced), so read once here instead
        # of asking numpy on every range check of every dispatch.
        self.byte_length: int = len(data)
        self.read_only: bool = not data.flags.writeable
        # The memory is a caller's array, lent for one synchronous call (`borrow`).
        self.borrowed = False
        self._address: int | None = None
        # The counter of the allocator that made it (None: memory someone else owns). Held so
        # the counter, and the process-wide totals, outlive the allocator while this lives.
        self._counter: LiveObjects | None = None

    @property
    def address(self) -> int:
        """Where the bytes start, for native code. Cached, and found through ctypes' buffer
        protocol (about 0.5 µs) rather than numpy's `ctypes.data` (about 1.6 µs): buffers are
        fresh on every call and each dispatch passes every binding."""
        address = self._address
        if address is None:
            address = self._address = address_of(self.data)
        return address

    @property
    def owns_memory(self) -> bool:
        """Whether an allocator made this buffer's memory for it alone: not a slab's part
        (`subspan`), a constant or a caller's array. (Its array may still be a window of a
        larger one: `fresh_bytes` aligns large buffers so.)"""
        return self._counter is not None

    @staticmethod
    def _owning(data: np.ndarray, counter: LiveObjects) -> Buffer:
        """A buffer over a fresh writable 1-D uint8 array an allocator made, counted by
        `counter` while alive: made without `__init__`, whose checks of a caller's array cannot
        fail for it and cost more than the rest (allocations happen on every call)."""
        buffer = Buffer.__new__(Buffer)
        buffer.data = data
        buffer.byte_length = length = len(data)
        buffer.read_only = False
        buffer.borrowed = False
        buffer._address = None
        buffer._counter = counter
        counter.track(buffer, length)  # the one place buffers are counted (a meter hooks it)
        return buffer

    @staticmethod
    def wrap_readonly(data: memoryview | bytes) -> Buffer:
        """No copy: the array is a view on `data` (numpy marks it read-only)."""
        arr = np.frombuffer(data, dtype=np.uint8)
        arr.flags.writeable = False
        return Buffer(arr)

    @staticmethod
    def borrow(array: np.ndarray) -> Buffer:
        """The memory of a caller's non-empty C-contiguous array, read-only, for the length of
        one synchronous call: its argument is then not copied (a decode step's KV cache is
        most of what it reads). Programs never write their arguments (dispatches write fresh
        results; a write would find the buffer read-only and fail); what the program still
        holds after the call gets a copy of its own (`keep_private`), so the caller keeps
        ownership of the array as with a copy."""
        data = np.frombuffer(array, _UINT8)
        data.flags.writeable = False
        buffer = Buffer.__new__(Buffer)
        buffer.data = data
        buffer.byte_length = len(data)
        buffer.read_only = buffer.borrowed = True
        # Found through the caller's array while it is writable: ctypes refuses the read-only
        # view, and numpy's way costs three times as much (a call passes every binding).
        buffer._address = address_of(array) if array.flags.writeable else None
        buffer._counter = None
        return buffer

    def keep_private(self) -> None:
        """A borrowed buffer the program kept past the call (a global, a custom module's
        state) takes a copy of the caller's bytes: later changes to the array do not reach
        it. Native code finds the new memory: addresses are looked up per call."""
        data = self.data.copy()
        data.flags.writeable = False
        # The caller's memory stays referenced: work still in flight after a failed or
        # timed-out call may have been handed its array.
        self._lent = self.data
        self.data = data
        self._address = None
        self.borrowed = False

    def subspan(self, offset: int, length: int) -> Buffer:
        """`length` bytes from `offset`, as a buffer over the same memory (no copy): a packed
        transient's place in its slab. Its memory is kept alive by the view, not counted twice."""
        self.check_range(offset, length, "buffer subspan")
        return Buffer(self.data[offset:offset + length])

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


def address_of(data: np.ndarray) -> int:
    try:
        return ctypes.addressof(ctypes.c_char.from_buffer(data))
    except (TypeError, ValueError):  # ctypes maps only writable, contiguous, non-empty memory
        return int(data.ctypes.data)


# Buffers of at least this many bytes are not cleared (`fresh_bytes`): clearing costs more
# than the allocation from 64 KiB on (2.2 against 0.9 µs; 6.5 against 1.0 at 256 KiB), and a
# decode step returns eight 128 KiB caches per call.
CLEARED_BELOW = 64 << 10


# Where a large buffer's memory starts: on a 64-byte line, as IREE's host allocations do.
# numpy's large arrays start 16 bytes into one (past malloc's header on an mmap), and then every
# 64-byte vector an AVX-512 kernel loads or stores of the buffer spans two lines (MobileNetV2
# took 1.05x, SqueezeNet 1.02x the time, their transient slabs unaligned). Buffers below
# CLEARED_BELOW stay where numpy puts them: finding the address costs 0.6 µs, 2x the allocation.
BUFFER_ALIGNMENT = 64


def fresh_bytes(size: int) -> np.ndarray:
    """A new buffer's memory: zeroed below CLEARED_BELOW (deterministic contents where nothing
    writes, for a microsecond or two), unspecified and BUFFER_ALIGNMENT-aligned from there on,
    as a new buffer's are in IREE: dispatches write what they produce, and np.zeros clears
    reused heap memory (160 µs per 4 MiB result, a third of a 1024 x 1024 softmax)."""
    if size < CLEARED_BELOW:
        return np.zeros(size, _UINT8)
    raw = np.empty(size + BUFFER_ALIGNMENT - 1, _UINT8)
    skip = -address_of(raw) % BUFFER_ALIGNMENT
    return raw[skip:skip + size]


class Allocator:
    """Allocates host buffers (`fresh_bytes`: small ones zeroed, others as they come)."""

    def __init__(self, counter: LiveObjects | None = None) -> None:
        # A device's allocator counts into the device's statistics; others into HOST_BUFFERS.
        self._counter = HOST_BUFFERS if counter is None else counter

    @property
    def live_buffers(self) -> LiveObjects:
        """The buffers this allocator made that are still referenced (count and bytes)."""
        return self._counter

    def allocate(self, size: int) -> Buffer:
        if type(size) is not int or size < 0:
            raise RuntimeFault(f"cannot allocate {size!r} bytes")
        return Buffer._owning(fresh_bytes(size), self._counter)

    def allocate_copy(self, array: np.ndarray) -> Buffer:
        """A fresh buffer holding `array`'s bytes in C order (the array itself is not kept).
        A large one comes from `allocate`, aligned as `fresh_bytes` aligns it (and reused from
        the pool, where the allocator pools: a fresh 4 MiB copy costs about ten times the copy
        itself in page faults, 1.9 ms against 0.17 ms here)."""
        if array.nbytes >= CLEARED_BELOW and not array.dtype.hasobject:
            buffer = self.allocate(array.nbytes)
            # In C order, whatever the array's strides (copyto through a view of that layout).
            np.copyto(buffer.data.view(array.dtype).reshape(array.shape), array, casting="no")
            return buffer
        try:  # a byte view of the array, copied: one copy, the cheapest way numpy offers
            data = np.frombuffer(array, _UINT8).copy()
        except ValueError:  # not C-contiguous: tobytes gathers it in C order
            data = np.frombuffer(array.tobytes(), _UINT8).copy()
        return Buffer._owning(data, self._counter)

    def import_readonly(self, data: memoryview | bytes) -> Buffer:
        return Buffer.wrap_readonly(data)
