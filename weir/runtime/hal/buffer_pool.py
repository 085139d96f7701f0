"""Reuse of large host allocations. A fresh 64 MiB buffer costs about 15 ms of page faults
before a kernel can write it at full speed, more than the kernel itself on elementwise work, so
large buffers go back to a per-device pool when nothing refers to their memory any more and the
next allocation of the same size takes one from there.

A recycled buffer is not cleared, nor is a new one of that size (`fresh_bytes`); their
contents are unspecified, as a new buffer's are in IREE. Only buffers nobody can see are
recycled: a numpy view a caller still holds keeps the memory out of the pool.

Pooled memory is not a live buffer: `pooled_bytes` reports it apart from the allocator's live
buffers, and `release_pooled` (device shutdown) gives it back."""

from __future__ import annotations

import sys
import threading
import weakref

import numpy as np

from weir.runtime.hal.buffer import Allocator, Buffer, fresh_bytes
from weir.runtime.hal.live_objects import LiveObjects

# Below this, fresh pages are cheap enough (and numpy caches small blocks itself).
POOL_MIN_BYTES = 1 << 20


class PoolingAllocator(Allocator):
    def __init__(self, max_pooled_bytes: int = 1 << 30, max_per_size: int = 4,
                 counter: LiveObjects | None = None) -> None:
        super().__init__(counter)
        self._free: dict[int, list[np.ndarray]] = {}
        self._pooled = 0
        self._max_pooled = max_pooled_bytes
        self._max_per_size = max_per_size
        self._lock = threading.Lock()

    @property
    def pooled_bytes(self) -> int:
        """Memory of dead buffers kept for reuse."""
        return self._pooled

    def release_pooled(self) -> None:
        """Drops every pooled slab (the memory goes back to the process); buffers still alive
        are not affected and are no longer recycled once they die."""
        with self._lock:
            self._free = {}
            self._pooled = 0
            self._max_pooled = 0

    def allocate(self, size: int) -> Buffer:
        if type(size) is int and 0 <= size < POOL_MIN_BYTES:
            # Every call's small buffers, inline: through Allocator.allocate they cost 0.9 µs
            # instead of 0.7 (its checks and one more frame).
            return Buffer._owning(fresh_bytes(size), self._counter)
        if type(size) is not int or size < POOL_MIN_BYTES:
            return super().allocate(size)  # its error for a size that is not one
        with self._lock:
            free = self._free.get(size)
            slab = free.pop() if free else None
            if slab is not None:
                self._pooled -= size
        if slab is None:
            slab = fresh_bytes(size)
        buffer = Buffer._owning(slab, self._counter)
        weakref.finalize(buffer, self._recycle, slab)
        return buffer

    def _recycle(self, slab: np.ndarray) -> None:
        """Runs when the buffer dies. References to `slab` at that point: this frame, the
        finalizer's arguments, getrefcount's argument, and the dying buffer's own slot; any more
        belong to views someone still holds. A pooled slab is an aligned window of a larger
        array (`fresh_bytes`), and numpy gives a view of a view that larger array as its base:
        its references are the slab's base, this frame's and getrefcount's argument; any more
        are views too."""
        owner = slab.base
        if sys.getrefcount(slab) > _UNSEEN_REFERENCES or \
                (owner is not None and sys.getrefcount(owner) > _UNSEEN_OWNER_REFERENCES):
            return
        size = slab.shape[0]
        with self._lock:
            free = self._free.setdefault(size, [])
            if len(free) < self._max_per_size and self._pooled + size <= self._max_pooled:
                free.append(slab)
                self._pooled += size


_UNSEEN_REFERENCES = 4
_UNSEEN_OWNER_REFERENCES = 3
