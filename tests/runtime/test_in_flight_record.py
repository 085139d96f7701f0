"""The in-flight record of each device (weir/runtime/hal/statistics.py): how many queue
operations are executing, the most that ever executed at once and which ones those were. It is
how a test proves that independent work overlapped, from the runtime's own record rather than
wall-clock timing.

Deterministic, no sleeps: overlap is forced by kernels that meet at a `threading.Barrier`, which
only two operations executing at once can pass (otherwise it breaks after its timeout and the
operation fails); ordering comes from fences."""

from __future__ import annotations

import re
import threading
from typing import Iterator, Sequence

import pytest
from host_executable import Body, HostExecutable

from weir.errors import RuntimeFault
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.device import Device
from weir.runtime.hal.drivers.local_sync import LocalSyncDevice
from weir.runtime.hal.drivers.local_task import LocalTaskDevice, LocalTaskOptions
from weir.runtime.hal.fence import Fence
from weir.runtime.hal.semaphore import Semaphore
from weir.runtime.hal.statistics import DeviceStatistics
from weir.tools.run_module import device_statistics

DEADLINE_S = 10.0  # bounds every wait; a correct run never comes near it


@pytest.fixture
def task_device() -> Iterator[LocalTaskDevice]:
    """Two workers: enough for two independent operations to execute at once."""
    with LocalTaskDevice(LocalTaskOptions(worker_count=2)) as dev:
        yield dev


def execute(dev: Device, wait: Fence | None, body: Body, entry: str = "e",
            signal: Fence | None = None) -> Fence:
    """Submits one execute of a single dispatch of `body` (as `k::<entry>`); returns its signal."""
    cb = dev.create_command_buffer()
    cb.dispatch(HostExecutable({entry: body}, name="k"), 0, (1, 1, 1), (), ())
    cb.finalize()
    signal = signal or Fence.create()
    dev.queue_execute(wait, signal, [cb])
    return signal


def meet_at(barrier: threading.Barrier, stats: DeviceStatistics, seen: list[int]) -> Body:
    """A kernel that passes only once another one is executing too, then notes how many
    operations the device says are executing; the second meeting keeps both executing until
    both have looked."""
    def body(_: Sequence[Buffer]) -> None:
        barrier.wait()
        seen.append(stats.in_flight)
        barrier.wait()
    return body


def note_in_flight(stats: DeviceStatistics, seen: list[int]) -> Body:
    def body(_: Sequence[Buffer]) -> None:
        seen.append(stats.in_flight)
    return body


def nothing(_: Sequence[Buffer]) -> None:
    pass


def fail(_: Sequence[Buffer]) -> None:
    raise ValueError("kernel failed on purpose")


def test_independent_executes_overlap_on_local_task(task_device: LocalTaskDevice) -> None:
    stats = task_device.statistics
    barrier, seen = threading.Barrier(2, timeout=DEADLINE_S), []
    left = execute(task_device, None, meet_at(barrier, stats, seen), "left")
    right = execute(task_device, None, meet_at(barrier, stats, seen), "right")
    assert Fence.join([left, right]).wait(DEADLINE_S)
    assert seen == [2, 2]
    s = stats.snapshot()
    assert (s["in_flight"], s["in_flight_peak"]) == (0, 2)
    # In start order, which the two workers decide; both named, with their dispatches.
    assert sorted(re.sub(r"weir-local-task-\d+$", "DEV", op) for op in s["in_flight_peak_ops"]) \
        == ["queue execute [k::left] on DEV", "queue execute [k::right] on DEV"]
    assert (stats.in_flight, stats.in_flight_peak, stats.in_flight_peak_ops) == \
        (0, 2, s["in_flight_peak_ops"])


def test_a_chain_never_overlaps_its_producer(task_device: LocalTaskDevice) -> None:
    """Each operation's end is recorded before its signal starts the next one, so every kernel
    of the chain sees only itself executing, however quickly the next worker picks it up."""
    stats, seen = task_device.statistics, []
    signal = None
    for _ in range(100):
        signal = execute(task_device, signal, note_in_flight(stats, seen))
    assert signal is not None and signal.wait(DEADLINE_S)
    assert seen == [1] * 100
    assert (stats.in_flight, stats.in_flight_peak) == (0, 1)
    assert re.fullmatch(r"queue execute \[k::e\] on weir-local-task-\d+",
                        "".join(stats.in_flight_peak_ops))


@pytest.mark.parametrize("driver", ["local-sync", "local-task"])
@pytest.mark.parametrize("body", [nothing, fail], ids=["succeeds", "fails"])
def test_the_end_is_recorded_before_the_signal(driver: str, body: Body) -> None:
    """Whatever the signal starts (here: a callback on the thread that signals it) already finds
    the operation ended, whether its work succeeded or failed."""
    dev: Device = LocalSyncDevice() if driver == "local-sync" else LocalTaskDevice()
    try:
        sem, at_signal = Semaphore(), []
        sem.on_reached(1, lambda failure: at_signal.append((dev.statistics.in_flight, failure)))
        signal = execute(dev, None, body, signal=Fence.create(sem, 1))
        if body is nothing:
            assert signal.wait(DEADLINE_S)
        else:
            with pytest.raises(RuntimeFault, match="kernel failed on purpose"):
                signal.wait(DEADLINE_S)
        assert len(at_signal) == 1 and at_signal[0][0] == 0
        assert (at_signal[0][1] is None) == (body is nothing)
        assert dev.statistics.in_flight_peak == 1
    finally:
        if isinstance(dev, LocalTaskDevice):
            dev.shutdown()


def test_local_sync_runs_one_at_a_time() -> None:
    dev = LocalSyncDevice()
    stats, seen = dev.statistics, []
    signal = None
    for _ in range(3):
        signal = execute(dev, signal, note_in_flight(stats, seen))
    buf = dev.allocator.allocate(8)
    filled = Fence.create()
    dev.queue_fill(signal, filled, buf, 0, 8, b"\x01")
    assert filled.wait(0)
    assert seen == [1, 1, 1]
    assert stats.snapshot()["in_flight"] == 0
    assert (stats.in_flight_peak, stats.in_flight_peak_ops) == (1, ("queue execute on local-sync",))


def test_local_sync_records_host_threads_that_submit_at_once() -> None:
    """Local-sync runs work inline on the caller's thread: two host threads submitting to one
    device do execute at once, and the record says so rather than assuming 1."""
    dev = LocalSyncDevice()
    barrier, seen, signals = threading.Barrier(2, timeout=DEADLINE_S), [], []

    def submit() -> None:
        signals.append(execute(dev, None, meet_at(barrier, dev.statistics, seen)))

    callers = [threading.Thread(target=submit) for _ in range(2)]
    for t in callers:
        t.start()
    for t in callers:
        t.join(DEADLINE_S)
    assert len(signals) == 2 and Fence.join(signals).wait(0)
    assert seen == [2, 2]
    assert (dev.statistics.in_flight, dev.statistics.in_flight_peak) == (0, 2)
    assert dev.statistics.in_flight_peak_ops == ("queue execute on local-sync",) * 2


@pytest.mark.parametrize("driver", ["local-sync", "local-task"])
def test_operations_without_work_never_count(driver: str) -> None:
    dev: Device = LocalSyncDevice() if driver == "local-sync" else LocalTaskDevice()
    try:
        allocated, barrier, freed = Fence.create(), Fence.create(), Fence.create()
        buf = dev.queue_alloca(None, allocated, 16)
        dev.queue_barrier(allocated, barrier)
        dev.queue_dealloca(barrier, freed, buf)
        assert freed.wait(DEADLINE_S)
        s = dev.statistics.snapshot()
        assert sum(s["queue_submitted"].values()) == s["queue_completed"] == 3
        assert (s["in_flight"], s["in_flight_peak"], s["in_flight_peak_ops"]) == (0, 0, ())
    finally:
        if isinstance(dev, LocalTaskDevice):
            dev.shutdown()


@pytest.mark.parametrize("driver", ["local-sync", "local-task"])
def test_failures_leave_nothing_in_flight(driver: str) -> None:
    """A failing kernel, work that never starts because its wait failed, and work failed by
    shutdown before it ran all leave the record settled: nothing executing, every operation
    accounted for."""
    dev: Device = LocalSyncDevice() if driver == "local-sync" else LocalTaskDevice()
    try:
        failed = execute(dev, None, fail)
        with pytest.raises(RuntimeFault, match="kernel failed on purpose"):
            failed.wait(DEADLINE_S)
        after = execute(dev, failed, nothing)  # never runs: its wait failed
        with pytest.raises(RuntimeFault, match="kernel failed on purpose"):
            after.wait(DEADLINE_S)
        s = dev.statistics.snapshot()
        assert (s["queue_failed"], s["queue_pending"]) == (2, 0)
        assert (s["in_flight"], s["in_flight_peak"]) == (0, 1)
        assert len(s["in_flight_peak_ops"]) == 1 and "queue execute" in s["in_flight_peak_ops"][0]
    finally:
        if isinstance(dev, LocalTaskDevice):
            dev.shutdown()
    if isinstance(dev, LocalTaskDevice):  # shut down: later work fails without executing
        late = execute(dev, None, nothing)
        with pytest.raises(RuntimeFault, match="shut down"):
            late.wait(0)
        assert (dev.statistics.in_flight, dev.statistics.queue_pending) == (0, 0)


def test_many_operations_keep_the_record_bounded() -> None:
    """1,000 independent executes on 4 workers: however many overlapped, the peak is at most the
    worker count, its tuple names exactly that many operations, and nothing stays executing."""
    with LocalTaskDevice(LocalTaskOptions(worker_count=4)) as dev:
        signals = [execute(dev, None, nothing) for _ in range(1000)]
        assert Fence.join(signals).wait(DEADLINE_S)
        s = dev.statistics.snapshot()
    assert s["queue_completed"] == 1000 and s["in_flight"] == 0
    assert 1 <= s["in_flight_peak"] <= 4
    assert len(s["in_flight_peak_ops"]) == s["in_flight_peak"]


def test_a_description_that_fails_still_records_the_peak() -> None:
    """`describe` runs under the statistics lock on a worker's path: when it raises, the peak
    names the operation by its type instead of the exception escaping into the worker."""
    class Broken:
        def describe(self) -> str:
            raise KeyError("no name")

    stats, op = DeviceStatistics(), Broken()
    stats.record_started(op)
    assert (stats.in_flight, stats.in_flight_peak) == (1, 1)
    assert stats.in_flight_peak_ops == ("Broken (describe failed: KeyError: 'no name')",)
    stats.record_ended(op)
    assert stats.snapshot()["in_flight"] == 0


def test_print_statistics_shows_the_in_flight_record(task_device: LocalTaskDevice) -> None:
    idle = LocalSyncDevice()
    barrier, seen = threading.Barrier(2, timeout=DEADLINE_S), []
    signals = [execute(task_device, None, meet_at(barrier, task_device.statistics, seen), name)
               for name in ("left", "right")]
    assert Fence.join(signals).wait(DEADLINE_S)
    lines = device_statistics([task_device, idle], ["device_a"]).splitlines()
    assert len(lines) == 4
    assert re.fullmatch(r"\[statistics\] device\[0\] in flight: now=0 peak=2 "
                        r"\(queue execute \[k::(left|right)\] on weir-local-task-\d+; "
                        r"queue execute \[k::(left|right)\] on weir-local-task-\d+\)", lines[1])
    assert lines[3] == "[statistics] device[1] in flight: now=0 peak=0"
