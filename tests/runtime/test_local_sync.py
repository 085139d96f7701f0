"""The local-sync driver's queue operations: inline, ordered by fences, failures through the
signal fence."""

from __future__ import annotations

import numpy as np
import pytest

from weir.errors import LoadError, RuntimeFault
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.drivers import default_driver_registry
from weir.runtime.hal.drivers.local_sync import LocalSyncDevice, LocalSyncOptions
from weir.runtime.hal.drivers.null import NullDevice
from weir.runtime.hal.fence import Fence


def test_registry_lists_drivers_for_unknown_names() -> None:
    registry = default_driver_registry()
    assert isinstance(registry.create_device("local-sync"), LocalSyncDevice)
    assert isinstance(registry.create_device("local-sync://0"), LocalSyncDevice)
    with pytest.raises(LoadError, match=r"unknown device driver 'vulkan' \(available: local-sync, local-task\)"):
        registry.create_device("vulkan")


def test_alloca_fill_copy_execute_in_order() -> None:
    dev = LocalSyncDevice()
    f1 = Fence.create()
    buf = dev.queue_alloca(None, f1, 16)
    assert f1.query()
    f2 = Fence.create()
    dev.queue_fill(f1, f2, buf, 0, 16, b"\x01\x02\x03\x04")
    dst = dev.allocator.allocate(8)
    f3 = Fence.create()
    dev.queue_copy(f2, f3, buf, 4, dst, 0, 8)
    assert f3.wait(0)
    assert dst.data.tolist() == [1, 2, 3, 4, 1, 2, 3, 4]
    cb = CommandBuffer()
    cb.fill_buffer(dst, 0, 4, b"\xff")
    cb.execution_barrier()
    cb.copy_buffer(dst, 0, buf, 12, 4)
    cb.finalize()
    f4 = Fence.create()
    dev.queue_execute(f3, f4, [cb])
    dev.queue_barrier(f4, Fence.create())
    assert buf.data[12:].tolist() == [255] * 4


def test_failed_wait_fails_the_signal_with_the_original_message() -> None:
    dev = LocalSyncDevice()
    wait, signal = Fence.create(), Fence.create()
    wait.fail("upstream dispatch failed")
    dev.queue_barrier(wait, signal)
    with pytest.raises(RuntimeFault, match="^upstream dispatch failed$"):
        signal.wait(0)


def test_failed_work_fails_the_signal() -> None:
    dev = LocalSyncDevice()
    cb = CommandBuffer()  # never finalized
    signal = Fence.create()
    dev.queue_execute(None, signal, [cb])
    with pytest.raises(RuntimeFault, match="was not finalized"):
        signal.wait(0)


def test_unsignalled_wait_times_out_with_a_clear_error() -> None:
    dev = LocalSyncDevice(LocalSyncOptions(wait_timeout_s=0))
    signal = Fence.create()
    with pytest.raises(RuntimeFault, match="wait fence was not reached within 0 s"):
        dev.queue_barrier(Fence.create(), signal)
    with pytest.raises(RuntimeFault, match="not reached"):
        signal.wait(0)


def test_writes_to_rodata_buffers_fail() -> None:
    dev = LocalSyncDevice()
    ro = dev.allocator.import_readonly(memoryview(b"abcd"))
    assert ro.read_only and bytes(ro.data) == b"abcd"
    signal = Fence.create()
    dev.queue_fill(None, signal, ro, 0, 4, b"\0")
    with pytest.raises(RuntimeFault, match="read-only"):
        signal.wait(0)


@pytest.mark.parametrize("driver", ["local-sync", "local-task"])
def test_a_failed_alloca_raises_and_fails_its_signal(driver: str) -> None:
    # Both local drivers share their queue operations (weir/runtime/hal/local_device.py).
    dev = default_driver_registry().create_device(driver)
    signal = Fence.create()
    with pytest.raises(RuntimeFault, match="cannot allocate -1 bytes"):
        dev.queue_alloca(None, signal, -1)
    with pytest.raises(RuntimeFault, match="^cannot allocate -1 bytes$"):
        signal.wait(0)


def test_null_driver_says_what_is_missing() -> None:
    with pytest.raises(RuntimeFault, match="queue_barrier is not implemented by the null driver"):
        NullDevice().queue_barrier(None, Fence.create())


def test_buffer_view_round_trip() -> None:
    from weir.runtime.hal.buffer_view import BufferView
    arr = np.arange(6, dtype=np.int16).reshape(2, 3)
    view = BufferView.from_numpy(arr)
    assert view.dtype == "i16" and view.shape == (2, 3)
    np.testing.assert_array_equal(view.to_numpy(), arr)
    assert np.shares_memory(view.to_numpy(), view.buffer.data)
    b = BufferView.from_numpy(np.array([True, False]))
    assert b.dtype == "i1" and b.to_numpy().tolist() == [True, False]
