"""Large buffers are reused once nothing refers to their memory, and never while a caller still
holds a view of it; small ones are always fresh and zeroed; large ones start on a 64-byte line."""

from __future__ import annotations

import numpy as np

from weir.runtime.hal.buffer import Allocator, BUFFER_ALIGNMENT, CLEARED_BELOW
from weir.runtime.hal.buffer_pool import POOL_MIN_BYTES, PoolingAllocator


def test_a_dropped_large_buffer_is_reused_for_the_same_size() -> None:
    pool = PoolingAllocator()
    first = pool.allocate(POOL_MIN_BYTES)
    address = first.address
    del first
    assert pool.pooled_bytes == POOL_MIN_BYTES
    again = pool.allocate(POOL_MIN_BYTES)
    assert again.address == address and pool.pooled_bytes == 0
    other = pool.allocate(2 * POOL_MIN_BYTES)
    assert other.address != address


def test_memory_a_caller_still_views_is_never_reused() -> None:
    pool = PoolingAllocator()
    buffer = pool.allocate(POOL_MIN_BYTES)
    view = buffer.data.view(np.float32)
    view[:] = 7.0
    del buffer
    assert pool.pooled_bytes == 0
    fresh = pool.allocate(POOL_MIN_BYTES)
    fresh.data[:] = 0
    assert (view == 7.0).all()


def test_small_buffers_are_fresh_and_zeroed_and_the_pool_is_bounded() -> None:
    pool = PoolingAllocator(max_pooled_bytes=2 * POOL_MIN_BYTES, max_per_size=4)
    small = pool.allocate(64)
    small.data[:] = 1
    del small
    assert not pool.allocate(64).data.any()
    buffers = [pool.allocate(POOL_MIN_BYTES) for _ in range(3)]
    del buffers
    assert pool.pooled_bytes == 2 * POOL_MIN_BYTES


def test_large_argument_copies_reuse_the_pool_in_c_order() -> None:
    """A call's large array arguments are copied into pooled buffers (a dropped one is reused
    for the next copy of that size), in C order whatever the array's strides."""
    pool = PoolingAllocator()
    count = POOL_MIN_BYTES // 4
    array = np.arange(count, dtype=np.float32)
    first = pool.allocate_copy(array)
    address = first.address
    assert np.array_equal(first.data.view(np.float32), array)
    del first
    columns = np.arange(count, dtype=np.float32).reshape(-1, 64).T  # not C-contiguous
    again = pool.allocate_copy(columns)
    assert again.address == address
    assert np.array_equal(again.data.view(np.float32), columns.ravel(order="C"))
    small = pool.allocate_copy(np.arange(16, dtype=np.float32))
    assert np.array_equal(small.data.view(np.float32), np.arange(16, dtype=np.float32))


def test_memory_a_caller_holds_as_an_array_over_the_buffer_is_never_reused() -> None:
    """As a result is handed over (BufferView.to_numpy): an array made over the buffer's bytes,
    whose base is the buffer's array itself rather than the memory's owner."""
    pool = PoolingAllocator()
    buffer = pool.allocate(POOL_MIN_BYTES)
    held = np.ndarray((POOL_MIN_BYTES // 4,), np.float32, buffer.data, 0)
    held[:] = 5.0
    del buffer
    assert pool.pooled_bytes == 0
    fresh = pool.allocate(POOL_MIN_BYTES)
    fresh.data[:] = 0
    assert (held == 5.0).all()


def test_large_buffers_start_on_a_line() -> None:
    """Fresh, reused and argument-copy buffers from CLEARED_BELOW bytes on start on a
    BUFFER_ALIGNMENT boundary, so a kernel's vectors never span two lines."""
    pool = PoolingAllocator()
    sizes = (CLEARED_BELOW, CLEARED_BELOW + 4, POOL_MIN_BYTES, POOL_MIN_BYTES + 12)
    buffers = [pool.allocate(size) for size in sizes]
    assert [b.byte_length for b in buffers] == list(sizes)
    copies = [Allocator().allocate_copy(np.arange(CLEARED_BELOW // 4 + 3, dtype=np.float32)),
              pool.allocate_copy(np.ones((POOL_MIN_BYTES // 8, 2), np.float32).T)]
    addresses = [b.address for b in buffers + copies]
    del buffers
    reused = pool.allocate(POOL_MIN_BYTES)
    assert reused.address in addresses
    assert all(a % BUFFER_ALIGNMENT == 0 for a in addresses + [reused.address])
    assert (copies[1].data.view(np.float32) == 1.0).all()
