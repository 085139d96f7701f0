"""Wait cycles (issue 7, item 5): on local-task, a host wait whose timepoints depend on queue
operations that wait on each other raises `WaitCycleError` naming each operation (kind, device,
the dispatches of an execute, the semaphore values it waits for and signals) instead of
blocking; the operations of the cycle fail with the same message, so everything behind them ends
too. Waits that can still end (a fence the host will signal, another operation that can reach
the value) are never reported. Cycles through host code are not visible to the driver: there the
caller's deadline ends the wait.

Queue operations are built by hand and looked at with zero-timeout waits; nothing sleeps."""

from __future__ import annotations

import re
from collections.abc import Iterator

import numpy as np
import pytest
from fault_programs import EXPECTED, Custom, HostKernel, X, compiled

import weir.api as weir
from weir.errors import DeadlineExceeded, RuntimeFault, WaitCycleError
from weir.runtime.api import BufferView, deadline
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.drivers.local_sync import LocalSyncDevice, LocalSyncOptions
from weir.runtime.hal.drivers.local_task import LocalTaskDevice, LocalTaskOptions
from weir.runtime.hal.fence import Fence

HANG_GUARD_S = 10.0


@pytest.fixture
def device() -> Iterator[LocalTaskDevice]:
    # The per-operation timeout turns a cycle the host wait failed to find into a failure of the
    # test rather than a hang.
    with LocalTaskDevice(LocalTaskOptions(worker_count=2, wait_timeout_s=HANG_GUARD_S)) as dev:
        yield dev


def kernel(name: str) -> CommandBuffer:
    """A command buffer with one dispatch of `cyc::name` (which does nothing)."""
    cb = CommandBuffer()
    cb.dispatch(HostKernel("cyc", name, lambda _: None), 0, (1, 1, 1), (), ())
    cb.finalize()
    return cb


def cycle_error(fence: Fence, timeout: float | None = 0) -> str:
    with pytest.raises(WaitCycleError) as info:
        fence.wait(timeout)
    message = str(info.value)
    assert "\n" not in message
    return message


def assert_device_works(device: LocalTaskDevice) -> None:
    wait, done = Fence.create(), Fence.create()
    buffer = device.allocator.allocate(4)
    device.queue_fill(wait, done, buffer, 0, 4, b"\x05")
    assert done.wait(0) is False
    wait.signal()
    assert done.wait(HANG_GUARD_S) and buffer.data.tolist() == [5] * 4


def test_two_operations_waiting_on_each_other(device: LocalTaskDevice) -> None:
    a_done, b_done, after = Fence.create(), Fence.create(), Fence.create()
    device.queue_barrier(b_done, a_done)                       # A waits for B ...
    device.queue_execute(a_done, b_done, [kernel("square")])   # ... and B for A
    device.queue_barrier(b_done, after)                        # C waits behind the cycle
    message = cycle_error(after)
    dev = device._name
    assert message == (
        "wait cycle: 2 queue operation(s) wait on each other and can never run: "
        f"queue execute [cyc::square] on {dev} (waits for S1>=1; signals S2=1) -> "
        f"queue barrier on {dev} (waits for S2>=1; signals S1=1) -> back to the first; "
        "found while waiting for S3>=1")
    # The cycle's operations failed with the same message, and so did what waited on them.
    for fence in (a_done, b_done, after):
        with pytest.raises(RuntimeFault, match=f"^{re.escape(message)}$"):
            fence.wait(0)
    assert_device_works(device)


def test_a_blocking_wait_on_a_cycle_raises_instead_of_hanging(device: LocalTaskDevice) -> None:
    a_done, b_done = Fence.create(), Fence.create()
    device.queue_barrier(b_done, a_done)
    device.queue_barrier(a_done, b_done)
    message = cycle_error(a_done, timeout=None)
    assert message.count("queue barrier on ") == 2


def test_a_cycle_across_two_devices_and_three_operations() -> None:
    with LocalTaskDevice() as dev_a, LocalTaskDevice() as dev_b:
        s1, s2, s3 = Fence.create(), Fence.create(), Fence.create()
        src, dst = dev_a.allocator.allocate(4), dev_b.allocator.allocate(4)
        dev_a.queue_execute(s3, s1, [kernel("first")])
        dev_b.queue_copy(s1, s2, src, 0, dst, 0, 4)
        dev_a.queue_fill(s2, s3, src, 0, 4, b"\x01")
        message = cycle_error(Fence.join([s2, s3]))
        assert f"queue execute [cyc::first] on {dev_a._name}" in message
        assert f"queue copy on {dev_b._name}" in message
        assert f"queue fill on {dev_a._name}" in message
        assert message.count(" -> ") == 3  # three operations, then back to the first


def test_a_wait_the_host_can_still_end_is_not_a_cycle(device: LocalTaskDevice) -> None:
    user = Fence.create()
    chain = [user]
    for _ in range(50):  # a long chain behind a fence only the host signals
        chain.append(Fence.create())
        device.queue_barrier(chain[-2], chain[-1])
    assert chain[-1].wait(0) is False
    user.signal()
    assert chain[-1].wait(HANG_GUARD_S)


def test_a_loop_another_signaller_can_break_is_not_a_cycle(device: LocalTaskDevice) -> None:
    """Y signals S=1 once `loop` is reached and Z reaches `loop` once S>=1: a loop, but X (behind
    a fence the host signals) also takes S past 1, so neither wait is reported."""
    timeline = device.create_semaphore(0)
    user, loop = Fence.create(), Fence.create()
    device.queue_barrier(user, Fence.create(timeline, 2))             # X: host fence -> S=2
    device.queue_barrier(loop, Fence.create(timeline, 1))             # Y: loop -> S=1
    device.queue_barrier(Fence.create(timeline, 1), loop)             # Z: S>=1 -> loop
    assert Fence.create(timeline, 1).wait(0) is False
    assert loop.wait(0) is False
    user.signal()
    assert loop.wait(HANG_GUARD_S)


def test_a_fence_with_one_point_in_a_cycle(device: LocalTaskDevice) -> None:
    host, a_done, b_done = Fence.create(), Fence.create(), Fence.create()
    device.queue_barrier(b_done, a_done)
    device.queue_barrier(a_done, b_done)
    both = Fence.join([host, b_done])  # the host point comes first and stays pending
    cycle_error(both)


def test_an_inline_local_sync_wait_on_a_local_task_cycle() -> None:
    with LocalTaskDevice(LocalTaskOptions(wait_timeout_s=HANG_GUARD_S)) as task, \
            LocalSyncDevice(LocalSyncOptions(wait_timeout_s=HANG_GUARD_S)) as sync:
        a_done, b_done, signal = Fence.create(), Fence.create(), Fence.create()
        task.queue_barrier(b_done, a_done)
        task.queue_barrier(a_done, b_done)
        with pytest.raises(WaitCycleError) as info:
            sync.queue_fill(a_done, signal, sync.allocator.allocate(4), 0, 4, b"\0")
        with pytest.raises(RuntimeFault, match=f"^{re.escape(str(info.value))}$"):
            signal.wait(0)


def test_a_cycle_through_host_code_ends_at_the_deadline(device: LocalTaskDevice) -> None:
    """The host means to signal `later` only after `done` is reached: the driver cannot see that
    dependency, so no cycle is reported; the caller's deadline ends the wait."""
    later, done = Fence.create(), Fence.create()
    device.queue_barrier(later, done)
    with deadline(0.05, "step"):
        with pytest.raises(DeadlineExceeded, match=r"^step \(timeout 0\.05 s\): deadline "
                                                   r"exceeded while waiting for a semaphore"):
            done.wait(HANG_GUARD_S)
    later.signal()
    assert done.wait(HANG_GUARD_S)


def test_bookkeeping_is_released(device: LocalTaskDevice) -> None:
    """Operations are registered with the semaphores they signal only while they wait."""
    wait, done = Fence.create(), Fence.create()
    buffer = device.allocator.allocate(4)
    device.queue_fill(wait, done, buffer, 0, 4, b"\x02")
    ((sem, _),) = done.points
    assert len(sem.signallers()) == 1
    wait.signal()
    assert done.wait(HANG_GUARD_S)
    assert sem.signallers() == ()
    met = Fence.create()
    device.queue_barrier(None, met)  # nothing to wait for: never registered
    assert met.points[0][0].signallers() == ()
    assert np.array_equal(buffer.data, np.full(4, 2, np.uint8))


def test_a_compiled_call_whose_wait_fence_is_its_own_signal_fence() -> None:
    """A caller's mistake: the call can only start once it has finished. On local-task every
    operation of the call is queued, so the host's wait on the signal fence names them."""
    with weir.load([Custom(), compiled("async-external")], device="local-task") as context:
        device = context.devices[0]
        fence = Fence.create(device.create_semaphore(0), 1)
        arg = BufferView.from_numpy(X, device.allocator)
        context.lookup("prog.main").invoke_async([arg], fence, fence)
        message = cycle_error(fence)
        assert "queue execute [main_dispatch_0::main_dispatch_0] on " in message
        assert "queue execute [custom::double] on " in message
        assert "queue execute [main_dispatch_1::main_dispatch_1] on " in message
        assert np.array_equal(context.lookup("prog.main")(X), EXPECTED)  # still works


def test_the_same_mistake_on_local_sync_ends_at_the_deadline() -> None:
    """local-sync waits inline for the first operation's wait fence, before anything is queued:
    no operation to name, so the call's timeout is what ends it."""
    with weir.load([Custom(), compiled("async-external")], device="local-sync") as context:
        device = context.devices[0]
        fence = Fence.create(device.create_semaphore(0), 1)
        arg = BufferView.from_numpy(X, device.allocator)
        with pytest.raises(DeadlineExceeded, match=r"^prog\.main \(timeout 0\.05 s\): deadline "
                                                   r"exceeded while waiting inline for the wait "
                                                   r"fence of queue execute$"):
            context.lookup("prog.main").invoke_async([arg], fence, fence, timeout=0.05)
        with pytest.raises(RuntimeFault, match="deadline exceeded"):
            fence.wait(0)  # the call's signal fence carries the error
        assert np.array_equal(context.lookup("prog.main")(X), EXPECTED)
