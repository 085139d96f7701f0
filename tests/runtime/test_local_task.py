"""The local-task driver: queue operations return at once, run on worker threads when their wait
fences are reached, and report every failure through the signal fence. Deterministic: no sleeps;
host waits are bounded (`wait(timeout=5)` is a deadline for the workers, not a delay)."""

from __future__ import annotations

import gc
import re
import threading
from typing import Callable, Iterator, Sequence

import numpy as np
import pytest
from runtime_builders import mul_module

from weir.errors import LoadError, RuntimeFault, UsageError
from weir.format.module_file import serialize
from weir.runtime.api import Context, Instance, load_module_bytes
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.drivers import default_driver_registry
from weir.runtime.hal.drivers.local_task import LocalTaskDevice, LocalTaskOptions
from weir.runtime.hal.executable import Executable
from weir.runtime.hal.workgroups import WorkgroupRunner
from weir.runtime.hal.fence import Fence
from weir.runtime.hal.semaphore import Semaphore

DEADLINE_S = 5.0


class HostKernel(Executable):
    """An executable whose one entry point runs a Python function: lets tests block or fail
    inside a worker."""

    def __init__(self, body: Callable[[Sequence[Buffer]], None]) -> None:
        self._body = body

    @property
    def entry_points(self) -> tuple[str, ...]:
        return ("host",)

    def dispatch(self, entry: int, workgroups: tuple[int, ...], constants: Sequence[int],
                 bindings: Sequence[Buffer], runner: WorkgroupRunner) -> None:
        self._body(bindings)


def dispatch_of(body: Callable[[Sequence[Buffer]], None], *bindings: Buffer) -> CommandBuffer:
    cb = CommandBuffer()
    cb.dispatch(HostKernel(body), 0, (1, 1, 1), (), bindings)
    cb.finalize()
    return cb


def copy_cb(src: Buffer, src_offset: int, dst: Buffer, dst_offset: int, length: int) -> CommandBuffer:
    cb = CommandBuffer()
    cb.copy_buffer(src, src_offset, dst, dst_offset, length)
    cb.finalize()
    return cb


@pytest.fixture
def device() -> Iterator[LocalTaskDevice]:
    with LocalTaskDevice(LocalTaskOptions(worker_count=2)) as dev:
        yield dev


def test_registry_creates_local_task_devices() -> None:
    registry = default_driver_registry()
    assert registry.names() == ("local-sync", "local-task")
    for name in ("local-task", "local-task://0"):
        dev = registry.create_device(name)
        assert isinstance(dev, LocalTaskDevice) and dev.driver_name == "local-task"
    custom = registry.create_device("local-task", LocalTaskOptions(worker_count=1))
    assert isinstance(custom, LocalTaskDevice) and custom.options.worker_count == 1
    with pytest.raises(LoadError, match="local-task takes LocalTaskOptions"):
        registry.create_device("local-task", object())


def test_options_are_validated() -> None:
    assert 1 <= LocalTaskOptions().worker_count <= 4
    with pytest.raises(UsageError, match="worker_count"):
        LocalTaskOptions(worker_count=0)
    with pytest.raises(UsageError, match="wait_timeout_s"):
        LocalTaskOptions(wait_timeout_s=-1)


def test_operations_return_before_their_wait_is_signalled(device: LocalTaskDevice) -> None:
    wait, filled = Fence.create(), Fence.create()
    buf = device.allocator.allocate(4)
    device.queue_fill(wait, filled, buf, 0, 4, b"\x05")
    barrier = Fence.create()
    device.queue_barrier(wait, barrier)
    assert not filled.query() and filled.wait(0) is False and not barrier.query()
    assert buf.data.tolist() == [0] * 4
    wait.signal()
    # A barrier has no work: it signals on the thread that reached its wait, before returning.
    assert barrier.query()
    assert filled.wait(timeout=DEADLINE_S)
    assert buf.data.tolist() == [5] * 4


def test_alloca_fill_copy_execute_chain_runs_in_fence_order(device: LocalTaskDevice) -> None:
    gate, f1, f2, f3, f4 = (Fence.create() for _ in range(5))
    buf = device.queue_alloca(gate, f1, 16)
    assert buf.byte_length == 16
    dst = device.allocator.allocate(8)
    # Submitted last-first: only fences order operations, not submission order.
    device.queue_execute(f3, f4, [copy_cb(dst, 0, buf, 12, 4)])
    device.queue_copy(f2, f3, buf, 4, dst, 0, 8)
    device.queue_fill(f1, f2, buf, 0, 16, b"\x01\x02\x03\x04")
    assert not any(f.query() for f in (f1, f2, f3, f4))
    gate.signal()
    assert f4.wait(timeout=DEADLINE_S)
    assert dst.data.tolist() == [1, 2, 3, 4, 1, 2, 3, 4]
    assert buf.data[12:].tolist() == [1, 2, 3, 4]
    done = Fence.create()
    device.queue_dealloca(f4, done, buf)
    assert done.query()


def test_failed_wait_fails_every_signal_with_the_original_message(device: LocalTaskDevice) -> None:
    a, b = Fence.create(), Fence.create()
    wait = Fence.join([a, b])
    signal = Fence.join([Fence.create(), Fence.create()])
    executed = Fence.create()
    device.queue_barrier(wait, signal)
    device.queue_execute(wait, executed, [dispatch_of(lambda _: None)])
    a.signal()
    assert not signal.query()
    b.fail("upstream dispatch failed")
    for sem, _ in signal.points:
        assert sem.failure == "upstream dispatch failed"
    with pytest.raises(RuntimeFault, match="^upstream dispatch failed$"):
        executed.wait(timeout=DEADLINE_S)
    late = Fence.create()
    device.queue_copy(wait, late, Buffer(np.zeros(1, np.uint8)), 0,
                      Buffer(np.zeros(1, np.uint8)), 0, 1)
    with pytest.raises(RuntimeFault, match="^upstream dispatch failed$"):
        late.wait(0)


def test_failing_work_fails_the_signal_and_keeps_the_worker() -> None:
    with LocalTaskDevice(LocalTaskOptions(worker_count=1)) as dev:
        unfinalized, buggy = Fence.create(), Fence.create()
        dev.queue_execute(None, unfinalized, [CommandBuffer()])
        dev.queue_execute(None, buggy, [dispatch_of(lambda _: [][1])])
        with pytest.raises(RuntimeFault, match="was not finalized"):
            unfinalized.wait(timeout=DEADLINE_S)
        with pytest.raises(RuntimeFault, match=r"^dispatch 'host' failed: IndexError: list index out of range$"):
            buggy.wait(timeout=DEADLINE_S)
        ro = dev.allocator.import_readonly(memoryview(b"abcd"))
        readonly = Fence.create()
        dev.queue_fill(None, readonly, ro, 0, 4, b"\0")
        with pytest.raises(RuntimeFault, match="read-only"):
            readonly.wait(timeout=DEADLINE_S)
        # The single worker survived all of that.
        buf, ok = dev.allocator.allocate(2), Fence.create()
        dev.queue_fill(None, ok, buf, 0, 2, b"\x09")
        assert ok.wait(timeout=DEADLINE_S) and buf.data.tolist() == [9, 9]


def test_wait_cycle_ends_in_a_deadline_error() -> None:
    with LocalTaskDevice(LocalTaskOptions(wait_timeout_s=0.05)) as dev:
        a_done, b_done = Fence.create(), Fence.create()
        dev.queue_barrier(b_done, a_done)  # A waits on B ...
        dev.queue_execute(a_done, b_done, [dispatch_of(lambda _: None)])  # ... and B on A
        # Learn of A's failure from a callback, not a host wait: a blocked host wait would find
        # the cycle itself (tests/reliability/test_wait_cycles.py) before the monitor fires.
        settled: list[str | None] = []
        done = threading.Event()
        ((sem, value),) = a_done.points
        sem.on_reached(value, lambda failure: (settled.append(failure), done.set()))
        assert done.wait(DEADLINE_S)
        message = r"the wait fence was not reached within 0\.05 s \(a wait cycle"
        assert settled[0] is not None and re.match("^queue barrier: " + message, settled[0])
        with pytest.raises(RuntimeFault, match="^queue barrier: " + message):
            a_done.wait(timeout=DEADLINE_S)
        # B's wait failed with A's deadline message, carried unchanged.
        with pytest.raises(RuntimeFault, match="^queue barrier: " + message):
            b_done.wait(timeout=DEADLINE_S)


def test_a_zero_timeout_fails_an_unmet_wait_at_once_but_not_a_met_one() -> None:
    with LocalTaskDevice(LocalTaskOptions(wait_timeout_s=0)) as dev:
        met, unmet = Fence.create(), Fence.create()
        dev.queue_barrier(None, met)
        assert met.query()
        dev.queue_fill(Fence.create(), unmet, dev.allocator.allocate(1), 0, 1, b"\1")
        with pytest.raises(RuntimeFault, match="^queue fill: the wait fence was not reached within 0 s"):
            unmet.wait(timeout=DEADLINE_S)


def test_no_deadline_when_the_timeout_is_none() -> None:
    with LocalTaskDevice(LocalTaskOptions(wait_timeout_s=None)) as dev:
        before = set(threading.enumerate())
        wait, signal = Fence.create(), Fence.create()
        dev.queue_barrier(wait, signal)
        assert set(threading.enumerate()) <= before  # no monitor thread without deadlines
        wait.signal()
        assert signal.query()


def test_thousand_chained_operations_create_no_threads(device: LocalTaskDevice) -> None:
    # Warm-up: starts the workers and the deadline monitor.
    warm_wait, warm = Fence.create(), Fence.create()
    device.queue_copy(warm_wait, warm, Buffer(np.zeros(1, np.uint8)), 0,
                      Buffer(np.zeros(1, np.uint8)), 0, 1)
    warm_wait.signal()
    assert warm.wait(timeout=DEADLINE_S)
    threads_before = set(threading.enumerate())

    sem = Semaphore(0)
    buf = device.allocator.allocate(1001)
    buf.data[0] = 7
    copied = 0
    for value in range(1, 1001):  # one timeline: operation k waits for k, signals k + 1
        wait, signal = Fence.create(sem, value), Fence.create(sem, value + 1)
        kind = value % 4
        if kind == 0:
            device.queue_barrier(wait, signal)
            continue
        if kind == 1:
            device.queue_copy(wait, signal, buf, copied, buf, copied + 1, 1)
        elif kind == 2:
            device.queue_execute(wait, signal, [copy_cb(buf, copied, buf, copied + 1, 1)])
        else:
            device.queue_alloca(wait, signal, 8)
            continue
        copied += 1
    assert sem.query() == 0 and buf.data[1] == 0
    sem.signal(1)
    assert sem.wait(1001, timeout=30 * DEADLINE_S)
    # Each copy ran after the one before it, or a zero would have been copied along.
    assert buf.data[:copied + 1].tolist() == [7] * (copied + 1)
    assert not buf.data[copied + 1:].any()
    # A set, not active_count(): a thread of an earlier test ending meanwhile is not growth.
    assert set(threading.enumerate()) <= threads_before


def test_long_chains_of_barriers_signal_without_recursion(device: LocalTaskDevice) -> None:
    sem = Semaphore(0)
    for value in range(1, 3001):
        device.queue_barrier(Fence.create(sem, value), Fence.create(sem, value + 1))
    sem.signal(1)
    assert sem.query() == 3001  # drained on this thread, iteratively


def test_operations_from_several_caller_threads(device: LocalTaskDevice) -> None:
    start = threading.Barrier(4)
    results: list[tuple[Buffer, Fence]] = []
    lock = threading.Lock()

    def submit(pattern: int) -> None:
        start.wait(timeout=DEADLINE_S)
        buf = device.allocator.allocate(64)
        fence = Fence.create()
        device.queue_fill(None, fence, buf, 0, 64, bytes([pattern]))
        for i in range(50):  # each caller's own chain
            nxt = Fence.create()
            device.queue_copy(fence, nxt, buf, i, buf, i + 1, 1)
            fence = nxt
        with lock:
            results.append((buf, fence))

    callers = [threading.Thread(target=submit, args=(p,)) for p in (1, 2, 3, 4)]
    for t in callers:
        t.start()
    for t in callers:
        t.join(DEADLINE_S)
    assert len(results) == 4
    for buf, fence in results:
        assert fence.wait(timeout=DEADLINE_S)
        assert len(set(buf.data.tolist())) == 1 and buf.data[0] in (1, 2, 3, 4)


def test_shutdown_fails_pending_operations() -> None:
    dev = LocalTaskDevice(LocalTaskOptions(worker_count=1))
    started, release = threading.Event(), threading.Event()

    def blocking(_: Sequence[Buffer]) -> None:
        started.set()
        assert release.wait(DEADLINE_S)

    running, queued, waiting = Fence.create(), Fence.create(), Fence.create()
    dev.queue_execute(None, running, [dispatch_of(blocking)])
    assert started.wait(DEADLINE_S)
    dev.queue_fill(None, queued, dev.allocator.allocate(1), 0, 1, b"\1")  # behind the blocked one
    dev.queue_barrier(Fence.create(), waiting)  # its wait is never signalled
    dev.shutdown(wait=False)
    with pytest.raises(RuntimeFault, match="^queue barrier: device shut down"):
        waiting.wait(0)
    release.set()
    assert running.wait(timeout=DEADLINE_S)  # running work finishes
    with pytest.raises(RuntimeFault, match="^queue fill: device shut down"):
        queued.wait(timeout=DEADLINE_S)
    after = Fence.create()
    dev.queue_copy(None, after, dev.allocator.allocate(1), 0, dev.allocator.allocate(1), 0, 1)
    with pytest.raises(RuntimeFault, match="^queue copy: device shut down"):
        after.wait(0)
    dev.shutdown()  # idempotent; joins the threads


def test_end_to_end_dispatch_through_the_vm_on_local_task() -> None:
    instance = Instance()
    device = instance.create_device("local-task")
    ctx = Context(instance, devices=[device], modules=[load_module_bytes(serialize(mul_module()))])
    out = ctx.lookup("module.mul")(np.array([1, 2, 3, 4], np.float32),
                                   np.array([5, 6, 7, 8], np.float32))
    np.testing.assert_array_equal(out, [5, 12, 21, 32])
    assert isinstance(device, LocalTaskDevice)
    device.shutdown()


def test_a_dropped_device_stops_its_threads() -> None:
    before = set(threading.enumerate())
    dev = LocalTaskDevice(LocalTaskOptions(worker_count=2, wait_timeout_s=60))
    wait, done = Fence.create(), Fence.create()
    dev.queue_fill(wait, done, dev.allocator.allocate(1), 0, 1, b"\1")
    wait.signal()
    assert done.wait(timeout=DEADLINE_S)
    started = set(threading.enumerate()) - before
    assert len(started) == 3  # two workers and the deadline monitor
    del dev
    gc.collect()
    for t in started:
        t.join(DEADLINE_S)
        assert not t.is_alive()
