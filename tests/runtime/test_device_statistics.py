"""Per-device statistics (weir/runtime/hal/statistics.py): what each device's queue submitted,
completed, failed and dispatched, counted on the device that ran the work. Deterministic: no
sleeps; bounded waits (`wait(DEADLINE_S)`) only give local-task workers time to finish."""

from __future__ import annotations

import threading
from typing import Callable, Iterator, Sequence

import numpy as np
import pytest
from host_executable import HostExecutable
from runtime_builders import mul_kernel, mul_module

from weir.errors import RuntimeFault
from weir.format.module_file import serialize
from weir.runtime.api import Context, Instance, load_module_bytes
from weir.runtime.executables import default_loader_registry
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.device import Device
from weir.runtime.hal.drivers import default_driver_registry
from weir.runtime.hal.drivers.local_task import LocalTaskDevice, LocalTaskOptions
from weir.runtime.hal.drivers.null import NullDevice
from weir.runtime.hal.executable import Executable
from weir.runtime.hal.fence import Fence
from weir.runtime.hal.statistics import QUEUE_OP_KINDS, DeviceStatistics, dispatch_name

DEADLINE_S = 5.0
DRIVERS = ["local-sync", "local-task"]


def nothing(_: Sequence[Buffer]) -> None:
    pass


@pytest.fixture
def make_device() -> Iterator[Callable[[str], Device]]:
    """Creates devices through the driver registry and shuts local-task ones down afterwards."""
    registry = default_driver_registry()
    created: list[Device] = []

    def make(driver: str) -> Device:
        created.append(registry.create_device(driver))
        return created[-1]

    yield make
    for dev in created:
        if isinstance(dev, LocalTaskDevice):
            dev.shutdown()


def zero_counts(**submitted: int) -> dict[str, int]:
    return {kind: submitted.get(kind, 0) for kind in QUEUE_OP_KINDS}


@pytest.mark.parametrize("driver", DRIVERS)
def test_every_queue_operation_kind_is_counted(make_device: Callable[[str], Device],
                                               driver: str) -> None:
    dev = make_device(driver)
    assert dev.statistics.snapshot() == {
        "queue_submitted": zero_counts(), "queue_completed": 0, "queue_failed": 0,
        "command_buffers_executed": 0, "dispatches_executed": 0, "dispatches_by_entry_point": {},
        "queue_pending": 0, "buffers_alive": 0, "buffer_bytes_alive": 0, "pooled_bytes": 0,
        "threads_alive": 0, "in_flight": 0, "in_flight_peak": 0, "in_flight_peak_ops": ()}
    fences = [Fence.create() for _ in range(7)]
    buf = dev.queue_alloca(None, fences[0], 8)
    dev.queue_fill(fences[0], fences[1], buf, 0, 8, b"\x03")
    dst = dev.allocator.allocate(8)
    dev.queue_copy(fences[1], fences[2], buf, 0, dst, 0, 8)
    cb = dev.create_command_buffer()
    cb.fill_buffer(dst, 0, 2, b"\x09")
    cb.finalize()
    dev.queue_execute(fences[2], fences[3], [cb])
    dev.queue_execute(fences[3], fences[4], [cb, cb])
    dev.queue_barrier(fences[4], fences[5])
    dev.queue_dealloca(fences[5], fences[6], buf)
    assert fences[6].wait(DEADLINE_S)
    assert dst.data.tolist() == [9, 9, 3, 3, 3, 3, 3, 3]
    s = dev.statistics.snapshot()
    assert s["queue_submitted"] == zero_counts(alloca=1, fill=1, copy=1, execute=2, barrier=1,
                                               dealloca=1)
    assert (s["queue_completed"], s["queue_failed"]) == (7, 0)
    assert s["command_buffers_executed"] == 3
    assert (s["dispatches_executed"], s["dispatches_by_entry_point"]) == (0, {})


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_failed_wait_fence_counts_as_failed(make_device: Callable[[str], Device],
                                              driver: str) -> None:
    dev = make_device(driver)
    wait, filled, copied = Fence.create(), Fence.create(), Fence.create()
    wait.fail("upstream failed")
    buf = dev.allocator.allocate(4)
    dev.queue_fill(wait, filled, buf, 0, 4, b"\x01")
    dev.queue_copy(filled, copied, buf, 0, buf, 0, 4)  # fails through `filled`
    with pytest.raises(RuntimeFault, match="^upstream failed$"):
        copied.wait(DEADLINE_S)
    s = dev.statistics.snapshot()
    assert s["queue_submitted"] == zero_counts(fill=1, copy=1)
    assert (s["queue_completed"], s["queue_failed"]) == (0, 2)
    assert buf.data.tolist() == [0] * 4


@pytest.mark.parametrize("driver", DRIVERS)
def test_failing_work_and_allocation_count_as_failed(make_device: Callable[[str], Device],
                                                     driver: str) -> None:
    dev = make_device(driver)
    unfinalized, bad_fill, bad_alloca = Fence.create(), Fence.create(), Fence.create()
    dev.queue_execute(None, unfinalized, [CommandBuffer()])
    dev.queue_fill(None, bad_fill, dev.allocator.import_readonly(b"ro"), 0, 2, b"\0")
    with pytest.raises(RuntimeFault, match="cannot allocate"):
        dev.queue_alloca(None, bad_alloca, -1)
    for fence in (unfinalized, bad_fill, bad_alloca):
        with pytest.raises(RuntimeFault):
            fence.wait(DEADLINE_S)
    s = dev.statistics.snapshot()
    assert s["queue_submitted"] == zero_counts(execute=1, fill=1, alloca=1)
    assert (s["queue_completed"], s["queue_failed"], s["command_buffers_executed"]) == (0, 3, 0)


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_signal_fence_failed_by_someone_else_counts_as_failed(
        make_device: Callable[[str], Device], driver: str) -> None:
    dev = make_device(driver)
    signal = Fence.create()
    signal.fail("cancelled by the host")
    if driver == "local-sync":
        with pytest.raises(RuntimeFault, match="^cancelled by the host$"):
            dev.queue_barrier(None, signal)  # inline: the refused signal raises to the caller
    else:
        dev.queue_barrier(None, signal)
    s = dev.statistics
    assert (s.queue_completed, s.queue_failed) == (0, 1)


def test_local_task_counts_an_operation_only_when_it_settles() -> None:
    with LocalTaskDevice(LocalTaskOptions(worker_count=1)) as dev:
        gate, done, later = Fence.create(), Fence.create(), Fence.create()
        dev.queue_fill(gate, done, dev.allocator.allocate(1), 0, 1, b"\1")
        dev.queue_barrier(Fence.create(), later)  # never signalled: fails at shutdown
        s = dev.statistics
        assert sum(s.queue_submitted.values()) == 2
        assert (s.queue_completed, s.queue_failed) == (0, 0)
        gate.signal()
        # Counted before the fence is signalled, so seeing the fence means seeing the count.
        assert done.wait(DEADLINE_S) and s.queue_completed == 1
        dev.shutdown()
        assert (s.queue_completed, s.queue_failed) == (1, 1)
        after = Fence.create()
        dev.queue_copy(None, after, dev.allocator.allocate(1), 0, dev.allocator.allocate(1), 0, 1)
        assert s.queue_submitted["copy"] == 1 and s.queue_failed == 2


def named_mul_executable() -> Executable:
    """The runtime builders' real reference kernel, loaded with its module name."""
    return default_loader_registry().load("reference", memoryview(mul_kernel()),
                                          name="mul_dispatch_0")


def f32_buffer(dev: Device, values: list[float]) -> Buffer:
    buf = dev.allocator.allocate(4 * len(values))
    buf.data.view(np.float32)[...] = values
    return buf


@pytest.mark.parametrize("driver", DRIVERS)
def test_dispatches_are_counted_by_entry_point(make_device: Callable[[str], Device],
                                               driver: str) -> None:
    dev = make_device(driver)
    mul = named_mul_executable()
    assert mul.name == "mul_dispatch_0" and mul.entry_points == ("mul_dispatch_0",)
    a, b = f32_buffer(dev, [1, 2, 3, 4]), f32_buffer(dev, [5, 6, 7, 8])
    out = dev.allocator.allocate(16)
    host = HostExecutable({"first": nothing, "second": nothing}, name="host")
    anonymous = HostExecutable({"": nothing})  # neither executable nor entry point names
    cb = dev.create_command_buffer()
    cb.dispatch(mul, 0, (1, 1, 1), (), (a, b, out))
    cb.dispatch(host, 1, (1, 1, 1), (), ())
    cb.dispatch(host, 1, (1, 1, 1), (), ())
    cb.dispatch(anonymous, 0, (1, 1, 1), (), ())
    cb.finalize()
    done = Fence.create()
    dev.queue_execute(None, done, [cb, cb])
    assert done.wait(DEADLINE_S)
    np.testing.assert_array_equal(out.data.view(np.float32), [5, 12, 21, 32])
    s = dev.statistics
    assert s.command_buffers_executed == 2 and s.dispatches_executed == 8
    assert s.dispatches_by_entry_point == {"mul_dispatch_0::mul_dispatch_0": 2,
                                           "host::second": 4, "HostExecutable#0": 2}


def test_dispatch_names_say_only_what_the_executable_knows() -> None:
    named = HostExecutable({"a": nothing, "": nothing}, name="exe")
    unnamed = HostExecutable({"a": nothing, "": nothing})
    assert dispatch_name(named, 0) == "exe::a"
    assert dispatch_name(named, 1) == "exe#1"  # an entry point without a name: its ordinal
    assert dispatch_name(unnamed, 0) == "a"
    assert dispatch_name(unnamed, 1) == "HostExecutable#1"


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_failing_dispatch_counts_what_ran_before_it(make_device: Callable[[str], Device],
                                                      driver: str) -> None:
    def explode(_: Sequence[Buffer]) -> None:
        raise RuntimeFault("kernel exploded")

    dev = make_device(driver)
    exe = HostExecutable({"ok": nothing, "boom": explode}, name="k")
    cb = dev.create_command_buffer()
    for entry in (0, 1, 0):
        cb.dispatch(exe, entry, (1, 1, 1), (), ())
    cb.finalize()
    signal = Fence.create()
    dev.queue_execute(None, signal, [cb])
    with pytest.raises(RuntimeFault, match="^dispatch 'k::boom' failed: kernel exploded$"):
        signal.wait(DEADLINE_S)
    s = dev.statistics.snapshot()
    assert s["dispatches_by_entry_point"] == {"k::ok": 1} and s["dispatches_executed"] == 1
    assert (s["command_buffers_executed"], s["queue_failed"], s["queue_completed"]) == (0, 1, 0)


def test_dispatches_count_on_the_executing_device_not_the_recording_one(
        make_device: Callable[[str], Device]) -> None:
    recorder, executor = make_device("local-task"), make_device("local-task")
    cb = recorder.create_command_buffer()
    cb.dispatch(HostExecutable({"e": nothing}, name="x"), 0, (1, 1, 1), (), ())
    cb.finalize()
    done = Fence.create()
    executor.queue_execute(None, done, [cb])
    assert done.wait(DEADLINE_S)
    assert executor.statistics.dispatches_by_entry_point == {"x::e": 1}
    assert recorder.statistics.snapshot() == DeviceStatistics().snapshot()


def test_ten_thousand_executions_keep_counters_not_logs(make_device: Callable[[str], Device]) -> None:
    dev = make_device("local-sync")
    cb = dev.create_command_buffer()
    cb.dispatch(HostExecutable({"e": nothing}, name="x"), 0, (1, 1, 1), (), ())
    cb.finalize()
    for _ in range(10_000):
        dev.queue_execute(None, Fence.create(), [cb])
    s = dev.statistics.snapshot()
    assert s["dispatches_by_entry_point"] == {"x::e": 10_000}
    assert s["queue_submitted"]["execute"] == s["queue_completed"] == 10_000


def test_concurrent_workers_and_submitters_lose_no_counts() -> None:
    calls = 250
    with LocalTaskDevice(LocalTaskOptions(worker_count=4)) as dev:
        exe = HostExecutable({"e": nothing}, name="x")
        cb = dev.create_command_buffer()
        cb.dispatch(exe, 0, (1, 1, 1), (), ())
        cb.finalize()
        start = threading.Barrier(4)
        fences: list[Fence] = []
        lock = threading.Lock()

        def submit() -> None:
            start.wait(DEADLINE_S)
            mine = [Fence.create() for _ in range(calls)]
            for fence in mine:  # independent operations: the workers run them concurrently
                dev.queue_execute(None, fence, [cb])
            with lock:
                fences.extend(mine)

        callers = [threading.Thread(target=submit) for _ in range(4)]
        for t in callers:
            t.start()
        for t in callers:
            t.join(DEADLINE_S)
        assert len(fences) == 4 * calls
        assert Fence.join(fences).wait(DEADLINE_S)
        s = dev.statistics.snapshot()
        assert s["queue_submitted"]["execute"] == s["queue_completed"] == 4 * calls
        assert s["dispatches_by_entry_point"] == {"x::e": 4 * calls}


def test_snapshots_are_copies_and_the_property_is_live(make_device: Callable[[str], Device]) -> None:
    dev = make_device("local-sync")
    stats = dev.statistics
    before = stats.snapshot()
    before["queue_submitted"]["fill"] = 99
    stats.queue_submitted["fill"] = 99
    assert stats.queue_submitted["fill"] == 0
    dev.queue_barrier(None, Fence.create())
    assert dev.statistics is stats and stats.queue_completed == 1
    assert "completed=1" in repr(stats)


def test_end_to_end_program_counts_on_its_device() -> None:
    instance = Instance()
    used, idle = instance.create_device("local-task"), instance.create_device("local-task")
    ctx = Context(instance, devices=[used], modules=[load_module_bytes(serialize(mul_module()))])
    out = ctx.lookup("module.mul")(np.array([1, 2, 3, 4], np.float32),
                                   np.array([5, 6, 7, 8], np.float32))
    np.testing.assert_array_equal(out, [5, 12, 21, 32])
    s = used.statistics.snapshot()
    assert s["queue_submitted"]["execute"] == 1 and s["dispatches_executed"] == 1
    # Keyed "mul_dispatch_0::mul_dispatch_0" once the VM passes executable names to the loader
    # registry, the entry point's name alone until then.
    (name,) = s["dispatches_by_entry_point"]
    assert name.endswith("mul_dispatch_0")
    assert idle.statistics.dispatches_executed == 0
    for dev in (used, idle):
        assert isinstance(dev, LocalTaskDevice)
        dev.shutdown()


def test_every_device_has_statistics() -> None:
    assert NullDevice().statistics.snapshot() == DeviceStatistics().snapshot()
