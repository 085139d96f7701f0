"""The runtime's live-object counts (weir/runtime/hal/live_objects.py): buffers (count and bytes,
pooled memory apart), semaphores, pending queue operations and threads, per device
(`device.statistics.snapshot()`) and for the process (`runtime_statistics()`), go up when
something is made and down when it goes, so a leak shows in them; `weir-run-module
--print_statistics` prints them. Devices release their threads on `shutdown`, on `Context.close`
for the devices a context owns, and when collected unused.

Deterministic: fences are checked with zero-timeout waits and signalled explicitly; the only
bounded waits are joins of threads the test has already told to stop."""

from __future__ import annotations

import gc
import threading
import weakref
from pathlib import Path
from typing import Iterator

import numpy as np
import pytest
from load_programs import compiled, settled

import weir.api as weir
from weir.errors import RuntimeFault, UsageError
from weir.runtime.api import BufferView, Fence, Semaphore, runtime_statistics
from weir.runtime.hal.buffer_pool import POOL_MIN_BYTES
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.device import Device
from weir.runtime.hal.drivers.local_sync import LocalSyncDevice
from weir.runtime.hal.drivers.local_task import LocalTaskDevice, LocalTaskOptions
from weir.runtime.hal.statistics import RuntimeStatistics
from weir.tools.run_module import main as run_module

JOIN_S = 10.0


def delta(before: RuntimeStatistics, after: RuntimeStatistics) -> dict[str, int]:
    """What changed, keys with no change left out."""
    return {k: after[k] - before[k] for k in before if after[k] != before[k]}  # type: ignore[literal-required]


def buffer_delta(before: RuntimeStatistics, after: RuntimeStatistics) -> dict[str, int]:
    return {k: v for k, v in delta(before, after).items() if k.startswith("buffer")}


def assert_back_to(before: RuntimeStatistics) -> None:
    """Nothing more alive than before (other tests' devices, and what they hold, may be
    collected meanwhile, so a count may also drop)."""
    after = settled()
    assert {k: v for k, v in delta(before, after).items() if v > 0} == {}


@pytest.fixture
def local_task() -> Iterator[LocalTaskDevice]:
    with LocalTaskDevice(LocalTaskOptions(worker_count=2, workgroup_threads=1)) as device:
        yield device


@pytest.mark.parametrize("driver", [LocalSyncDevice, LocalTaskDevice])
def test_buffers_count_while_referenced(driver: type[Device]) -> None:
    with driver() as device:
        before = settled()
        small = device.allocator.allocate(100)
        copy = device.allocator.allocate_copy(np.arange(3, dtype=np.int64))
        s = device.statistics.snapshot()
        assert (s["buffers_alive"], s["buffer_bytes_alive"]) == (2, 124)
        # Buffers only: a thread of an earlier test's collected device may end meanwhile.
        assert buffer_delta(before, runtime_statistics()) == {"buffers_alive": 2,
                                                              "buffer_bytes_alive": 124}
        del small
        assert device.statistics.buffers.count == 1
        del copy
        assert device.statistics.snapshot()["buffers_alive"] == 0
        assert buffer_delta(before, runtime_statistics()) == {}


def test_pooled_memory_is_counted_apart_and_freed_at_shutdown() -> None:
    device = LocalSyncDevice()
    big = device.allocator.allocate(POOL_MIN_BYTES)
    s = device.statistics.snapshot()
    assert (s["buffers_alive"], s["buffer_bytes_alive"], s["pooled_bytes"]) == \
        (1, POOL_MIN_BYTES, 0)
    del big  # nothing else sees its memory: back to the pool, no longer a live buffer
    s = device.statistics.snapshot()
    assert (s["buffers_alive"], s["buffer_bytes_alive"], s["pooled_bytes"]) == \
        (0, 0, POOL_MIN_BYTES)
    again = device.allocator.allocate(POOL_MIN_BYTES)  # reused: the pool empties
    assert (device.statistics.pooled_bytes, device.statistics.buffers.count) == (0, 1)
    del again
    assert runtime_statistics()["pooled_bytes"] >= POOL_MIN_BYTES
    device.shutdown()
    assert device.statistics.pooled_bytes == 0
    dropped_after_shutdown = device.allocator.allocate(POOL_MIN_BYTES)
    del dropped_after_shutdown  # a shut-down device pools nothing more
    assert device.statistics.snapshot()["pooled_bytes"] == 0


def test_buffers_without_a_device_and_outliving_theirs_count_process_wide() -> None:
    before = settled()
    view = BufferView.from_numpy(np.ones(4, np.float32))  # no allocator: the host's
    device = LocalSyncDevice()
    kept = device.allocator.allocate(8)
    counter, gone = weakref.ref(device.statistics.buffers), weakref.ref(device)
    del device
    gc.collect()
    assert gone() is None and counter() is not None  # the buffer keeps its counter alive
    assert delta(before, runtime_statistics()) == {"buffers_alive": 2, "buffer_bytes_alive": 24}
    del view, kept
    assert delta(before, settled()) == {}


def test_semaphores_count_while_referenced() -> None:
    before = settled()
    sem = Semaphore(0)
    fence = Fence.create()  # makes one
    assert delta(before, runtime_statistics()) == {"semaphores_alive": 2}
    joined = Fence.join([fence, Fence.create(sem, 3)])  # makes none
    del fence
    assert delta(before, runtime_statistics()) == {"semaphores_alive": 2}  # `joined` holds it
    del sem
    assert delta(before, runtime_statistics()) == {"semaphores_alive": 2}
    del joined
    assert delta(before, runtime_statistics()) == {}


def test_pending_operations_go_up_and_down(local_task: LocalTaskDevice) -> None:
    before = settled()
    gate, filled, last = Fence.create(), Fence.create(), Fence.create()
    buf = local_task.allocator.allocate(4)
    local_task.queue_fill(gate, filled, buf, 0, 4, b"\x07")
    local_task.queue_barrier(filled, last)
    assert local_task.statistics.snapshot()["queue_pending"] == 2
    assert runtime_statistics()["queue_pending"] - before["queue_pending"] == 2
    assert not last.wait(0)
    gate.signal()
    assert last.wait(JOIN_S)  # each operation is counted just before its fence settles
    assert buf.data.tolist() == [7] * 4
    s = local_task.statistics.snapshot()
    assert (s["queue_pending"], s["queue_completed"]) == (0, 2)
    assert runtime_statistics()["queue_pending"] == before["queue_pending"]


def test_a_failed_wait_leaves_nothing_pending(local_task: LocalTaskDevice) -> None:
    gate, failed = Fence.create(), Fence.create()
    local_task.queue_barrier(gate, failed)
    assert local_task.statistics.queue_pending == 1
    gate.fail("upstream failed")
    with pytest.raises(RuntimeFault, match="upstream failed"):
        failed.wait(JOIN_S)
    s = local_task.statistics.snapshot()
    assert (s["queue_pending"], s["queue_failed"]) == (0, 1)


def test_threads_start_with_work_and_end_at_shutdown() -> None:
    before = settled()
    device = LocalTaskDevice(LocalTaskOptions(worker_count=3, workgroup_threads=1))
    assert device.statistics.threads.alive == 0  # nothing started before the first work
    cb = CommandBuffer()
    cb.finalize()
    done = Fence.create()
    device.queue_execute(None, done, [cb])
    assert done.wait(JOIN_S)
    assert device.statistics.snapshot()["threads_alive"] == 3
    assert runtime_statistics()["threads_alive"] - before["threads_alive"] == 3
    # This device's threads only: devices of other tests may still be alive in this process.
    names = {t.name for t in threading.enumerate() if t.name.startswith(f"{device._name}-")}
    assert len(names) == 3
    device.shutdown()  # joins them
    assert device.statistics.threads.alive == 0
    assert not names & {t.name for t in threading.enumerate()}
    assert runtime_statistics()["threads_alive"] <= before["threads_alive"]


def test_an_unused_device_that_is_collected_stops_its_threads() -> None:
    device = LocalTaskDevice(LocalTaskOptions(worker_count=2, workgroup_threads=1))
    gate, passed, ran = Fence.create(), Fence.create(), Fence.create()
    device.queue_barrier(gate, passed)  # has to wait: starts the deadline monitor
    gate.signal()
    cb = CommandBuffer()
    cb.finalize()
    device.queue_execute(passed, ran, [cb])  # starts the workers
    assert ran.wait(JOIN_S)
    stats, gone = device.statistics, weakref.ref(device)
    assert (stats.threads.alive, stats.queue_pending) == (3, 0)
    # This device's threads only: devices of other tests may still be alive in this process.
    names = {t.name for t in threading.enumerate() if t.name.startswith(f"{device._name}-")}
    assert len(names) == 3
    del device, cb
    gc.collect()
    assert gone() is None  # nothing its threads or finished work hold keeps it alive
    stats.threads.join(JOIN_S)  # told to stop by the device's finalizer
    assert stats.threads.alive == 0
    assert not names & {t.name for t in threading.enumerate()}


@pytest.fixture(scope="module")
def program() -> bytes:
    return compiled("llvm-cpu", "async-internal")


@pytest.fixture(scope="module")
def handed_off() -> bytes:
    """The program as coarse-fences functions, which await nothing inside: their work goes to
    the local-task workers (a synchronous function's runs on the calling thread, which waits
    for it anyway), so a call leaves the device with threads to end."""
    return compiled("llvm-cpu", "async-external")


def call_mul(ctx: weir.Context) -> None:
    out = ctx.lookup_function("mul")(np.ones(4, np.float32), np.full(4, 3, np.float32))
    assert out.tolist() == [3] * 4


def test_closing_a_context_ends_the_threads_of_the_devices_it_owns(handed_off: bytes) -> None:
    before = settled()
    ctx = weir.load([handed_off], device=["local-task"])
    call_mul(ctx)
    stats = ctx.devices[0].statistics
    mul = ctx.lookup_function("mul")
    assert stats.threads.alive > 0
    ctx.close()
    assert ctx.closed and stats.threads.alive == 0
    ctx.close()  # idempotent
    with pytest.raises(UsageError, match="context is closed"):
        ctx.lookup_function("mul")
    with pytest.raises(RuntimeFault, match="device shut down"):
        mul(np.ones(4, np.float32), np.ones(4, np.float32))
    del ctx, mul
    assert_back_to(before)


def test_with_block_closes_and_devices_passed_in_stay_running(handed_off: bytes) -> None:
    instance = weir.Instance()
    shared = instance.create_device("local-task")
    with weir.load([handed_off], device="local-task") as owned_ctx:
        call_mul(owned_ctx)
        owned = owned_ctx.devices[0].statistics
        with weir.Context(instance, devices=[shared],
                          modules=[weir.load_module_bytes(handed_off)]) as borrowing:
            call_mul(borrowing)
    assert owned.threads.alive == 0
    assert shared.statistics.threads.alive > 0  # the caller's device: the caller shuts it down
    shared.shutdown()
    assert shared.statistics.threads.alive == 0


def test_counts_return_to_baseline_after_many_calls(program: bytes) -> None:
    before = settled()
    with weir.load([program], device="local-task") as ctx:
        for _ in range(200):
            call_mul(ctx)
        stats = ctx.devices[0].statistics
        gc.collect()
        s = stats.snapshot()
        assert (s["queue_pending"], s["buffers_alive"]) == (0, 0)
        assert s["queue_completed"] == 200
    assert stats.threads.alive == 0
    del ctx
    assert_back_to(before)


def test_print_statistics_shows_the_live_counts(program: bytes, tmp_path: Path,
                                                capsys: pytest.CaptureFixture[str]) -> None:
    module = tmp_path / "program.wvm"
    module.write_bytes(program)
    code = run_module([f"--module={module}", "--function=mul", "--input=4xf32=1,2,3,4",
                       "--input=4xf32=2", "--device=local-task", "--print_statistics"])
    out, err = capsys.readouterr()
    assert code == 0 and "4xf32=2 4 6 8" in out
    lines = err.splitlines()
    device_line = next(line for line in lines if line.startswith("[statistics] device[0] live:"))
    # The result was copied out: no device buffer is left, nothing is pending.
    assert device_line.startswith("[statistics] device[0] live: buffers=0 (0 B) pooled=0 B "
                                  "pending=0 threads=")
    runtime_line = next(line for line in lines if line.startswith("[statistics] runtime live:"))
    for field in ("devices=", "semaphores=", "buffers=", "pooled=", "pending=", "threads="):
        assert field in runtime_line
