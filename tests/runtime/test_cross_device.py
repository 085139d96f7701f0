"""Several devices of one driver in one process: each has its own queue, workers and counters,
and fences order work across them exactly as within one device. Deterministic: no sleeps; the
user opens a gate fence explicitly, zero-timeout waits check what must not have happened yet,
and bounded waits (`wait(DEADLINE_S)`) only give local-task workers time to finish."""

from __future__ import annotations

import gc
import threading
from typing import Callable, Iterator, Sequence

import numpy as np
import pytest

from host_executable import HostExecutable

from weir.errors import RuntimeFault
from weir.runtime.api import Instance
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.device import Device
from weir.runtime.hal.drivers.local_task import LocalTaskDevice
from weir.runtime.hal.executable import Executable
from weir.runtime.hal.fence import Fence
from weir.runtime.hal.semaphore import Semaphore

DEADLINE_S = 5.0


def dispatch_cb(device: Device, executable: Executable, entry: int) -> CommandBuffer:
    cb = device.create_command_buffer()
    cb.dispatch(executable, entry, (1, 1, 1), (), ())
    cb.finalize()
    return cb


@pytest.fixture
def devices() -> Iterator[Callable[[str, int], list[Device]]]:
    """Creates `count` devices of one driver, each separately through `Instance.create_device`;
    local-task ones are shut down afterwards."""
    instance = Instance()
    created: list[Device] = []

    def make(driver: str, count: int) -> list[Device]:
        made = [instance.create_device(driver) for _ in range(count)]
        created.extend(made)
        return made

    yield make
    for dev in created:
        if isinstance(dev, LocalTaskDevice):
            dev.shutdown()


@pytest.mark.parametrize("count", [2, 3])
def test_local_task_devices_do_not_share_workers(devices: Callable[[str, int], list[Device]],
                                                 count: int) -> None:
    devs = devices("local-task", count)
    ran_on: list[set[threading.Thread]] = [set() for _ in devs]

    def record(i: int) -> Body:
        return lambda _: ran_on[i].add(threading.current_thread())

    exe = HostExecutable({f"dev{i}": record(i) for i in range(count)}, name="where")
    fences = []
    for i, dev in enumerate(devs):
        for _ in range(8):
            fences.append(Fence.create())
            dev.queue_execute(None, fences[-1], [dispatch_cb(dev, exe, i)])
    assert Fence.join(fences).wait(DEADLINE_S)
    me = threading.current_thread()
    for i, threads in enumerate(ran_on):
        assert threads and me not in threads
        for j in range(i + 1, count):
            assert not threads & ran_on[j], f"devices {i} and {j} ran work on the same thread"
    internals = [(d._pool, d._monitor, d.allocator, d.statistics)  # type: ignore[attr-defined]
                 for d in devs]
    for k in range(4):
        assert len({id(parts[k]) for parts in internals}) == count
    for i, dev in enumerate(devs):
        assert dev.statistics.dispatches_by_entry_point == {f"where::dev{i}": 8}


def test_a_copy_on_b_waits_for_a_barrier_on_a(devices: Callable[[str, int], list[Device]]) -> None:
    a, b = devices("local-task", 2)
    user, a_done, b_done = Fence.create(), Fence.create(), Fence.create()
    src = a.allocator.allocate(8)
    src.data[...] = np.arange(1, 9, dtype=np.uint8)
    dst = b.allocator.allocate(8)
    a.queue_barrier(user, a_done)
    b.queue_copy(a_done, b_done, src, 0, dst, 0, 8)
    assert a_done.wait(0) is False and b_done.wait(0) is False
    assert dst.data.tolist() == [0] * 8
    assert b.statistics.queue_completed == 0
    user.signal()
    assert a_done.wait(0)  # a barrier signals on the thread that reached its wait: this one
    assert b_done.wait(DEADLINE_S)
    assert dst.data.tolist() == list(range(1, 9))
    assert a.statistics.queue_submitted["barrier"] == 1 and a.statistics.queue_submitted["copy"] == 0
    assert b.statistics.queue_submitted["copy"] == 1 and b.statistics.queue_submitted["barrier"] == 0
    assert a.statistics.queue_completed == b.statistics.queue_completed == 1


def test_b_copies_only_after_a_filled(devices: Callable[[str, int], list[Device]]) -> None:
    """Work on both sides: B's copy reads what A's worker wrote, so it ran after it."""
    a, b = devices("local-task", 2)
    user, filled, copied = Fence.create(), Fence.create(), Fence.create()
    src, dst = a.allocator.allocate(8), b.allocator.allocate(8)
    a.queue_fill(user, filled, src, 0, 8, b"\x07")
    b.queue_copy(filled, copied, src, 0, dst, 0, 8)
    assert filled.wait(0) is False and copied.wait(0) is False
    user.signal()
    assert copied.wait(DEADLINE_S)
    assert dst.data.tolist() == [7] * 8


def test_local_sync_waits_inline_for_a_local_task_device(
        devices: Callable[[str, int], list[Device]]) -> None:
    (a,), (b,) = devices("local-task", 1), devices("local-sync", 1)
    user, filled, copied = Fence.create(), Fence.create(), Fence.create()
    src, dst = a.allocator.allocate(4), b.allocator.allocate(4)
    a.queue_fill(user, filled, src, 0, 4, b"\x05")
    user.signal()
    b.queue_copy(filled, copied, src, 0, dst, 0, 4)  # blocks this thread until A's worker is done
    assert copied.wait(0) and dst.data.tolist() == [5] * 4


def explode(_: Sequence[Buffer]) -> None:
    raise RuntimeFault("kernel exploded on device A")


@pytest.mark.parametrize("a_driver, b_driver", [("local-task", "local-task"),
                                                 ("local-sync", "local-sync"),
                                                 ("local-task", "local-sync")])
def test_a_failure_on_a_reaches_b_with_the_original_message(
        devices: Callable[[str, int], list[Device]], a_driver: str, b_driver: str) -> None:
    (a,), (b,) = devices(a_driver, 1), devices(b_driver, 1)
    user, a_done, b_copied, b_done = (Fence.create() for _ in range(4))
    src, dst = a.allocator.allocate(4), b.allocator.allocate(4)
    src.data[...] = 9
    inline = "local-sync" in (a_driver, b_driver)
    if inline:
        user.signal()  # local-sync runs (or waits for) each operation as it is submitted
    a.queue_execute(user, a_done, [dispatch_cb(a, HostExecutable({"k": explode}, name="bad"), 0)])
    b.queue_copy(a_done, b_copied, src, 0, dst, 0, 4)
    b.queue_barrier(b_copied, b_done)
    if not inline:
        assert b_done.wait(0) is False
        user.signal()
    for fence in (a_done, b_copied, b_done):
        with pytest.raises(RuntimeFault, match="^dispatch 'bad::k' failed: kernel exploded on device A$"):
            fence.wait(DEADLINE_S)
    assert dst.data.tolist() == [0] * 4  # B's copy never ran
    assert (a.statistics.queue_failed, b.statistics.queue_failed) == (1, 2)
    assert a.statistics.queue_completed == b.statistics.queue_completed == 0


@pytest.mark.parametrize("driver", ["local-task", "local-sync"])
def test_a_diamond_across_three_devices_runs_in_order(
        devices: Callable[[str, int], list[Device]], driver: str) -> None:
    """a -> b, a -> c, then b + c -> a: the last step waits on the join of both branches."""
    dev_a, dev_b, dev_c = devices(driver, 3)
    order: list[str] = []
    lock = threading.Lock()

    def step(label: str) -> Body:
        def body(_: Sequence[Buffer]) -> None:
            with lock:
                order.append(label)
        return body

    labels = ("top", "left", "right", "bottom")
    exe = HostExecutable({label: step(label) for label in labels}, name="diamond")
    user, top, left, right, bottom = (Fence.create() for _ in range(5))
    inline = driver == "local-sync"
    if inline:
        user.signal()
    dev_a.queue_execute(user, top, [dispatch_cb(dev_a, exe, 0)])
    dev_b.queue_execute(top, left, [dispatch_cb(dev_a, exe, 1)])
    dev_c.queue_execute(top, right, [dispatch_cb(dev_a, exe, 2)])
    dev_a.queue_execute(Fence.join([left, right]), bottom, [dispatch_cb(dev_a, exe, 3)])
    if not inline:
        assert not any(f.wait(0) for f in (top, left, right, bottom)) and order == []
        user.signal()
    assert bottom.wait(DEADLINE_S)
    assert order[0] == "top" and order[-1] == "bottom"
    assert sorted(order) == sorted(labels)
    assert dev_a.statistics.dispatches_by_entry_point == {"diamond::top": 1, "diamond::bottom": 1}
    assert dev_b.statistics.dispatches_by_entry_point == {"diamond::left": 1}
    assert dev_c.statistics.dispatches_by_entry_point == {"diamond::right": 1}


def test_a_long_ping_pong_between_two_devices_does_not_deadlock(
        devices: Callable[[str, int], list[Device]]) -> None:
    """One timeline, operations alternating between devices: each completion on one device's
    worker readies the next operation on the other device's queue."""
    a, b = devices("local-task", 2)
    sem = Semaphore(0)
    buf = a.allocator.allocate(1001)
    buf.data[0] = 3
    for value in range(1, 1001):
        dev = a if value % 2 else b
        dev.queue_copy(Fence.create(sem, value), Fence.create(sem, value + 1),
                       buf, value - 1, buf, value, 1)
    assert sem.query() == 0
    sem.signal(1)
    assert sem.wait(1001, timeout=6 * DEADLINE_S)
    assert buf.data.tolist() == [3] * 1001  # each copy ran after the one before it
    assert a.statistics.queue_submitted["copy"] == b.statistics.queue_submitted["copy"] == 500
    assert a.statistics.queue_completed == b.statistics.queue_completed == 500


def test_shutting_down_a_fails_the_work_b_waits_for(
        devices: Callable[[str, int], list[Device]]) -> None:
    a, b = devices("local-task", 2)
    user, a_done, b_done = Fence.create(), Fence.create(), Fence.create()
    a.queue_barrier(user, a_done)
    b.queue_fill(a_done, b_done, b.allocator.allocate(1), 0, 1, b"\1")
    assert isinstance(a, LocalTaskDevice)
    a.shutdown()
    with pytest.raises(RuntimeFault, match="^queue barrier: device shut down before"):
        b_done.wait(DEADLINE_S)
    assert (a.statistics.queue_failed, b.statistics.queue_failed) == (1, 1)
    user.signal()  # too late: nothing runs, nothing raises


def test_a_dropped_device_still_runs_work_waiting_on_another_device(
        devices: Callable[[str, int], list[Device]]) -> None:
    (a,) = devices("local-task", 1)
    b = Instance().create_device("local-task")  # not kept by the fixture
    user, a_done, b_done = Fence.create(), Fence.create(), Fence.create()
    dst = a.allocator.allocate(2)
    a.queue_barrier(user, a_done)
    b.queue_fill(a_done, b_done, dst, 0, 2, b"\x04")
    stats = b.statistics
    del b
    gc.collect()  # B's pending operation keeps B (and its workers) alive
    user.signal()
    assert b_done.wait(DEADLINE_S) and dst.data.tolist() == [4, 4]
    assert stats.queue_completed == 1
