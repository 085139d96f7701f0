"""`Device.execute_indirect_now`, a compiled program's usual execute (one reusable command buffer
awaited at once): the local drivers replay a plan of one native batch without the layers of
`execute_now`, and must count, record and fail exactly as `execute_now` does."""

from __future__ import annotations

import ctypes
import re
import threading
from typing import Any, Iterator

import numpy as np
import pytest
from native_kernels import add_one_executable

from weir.errors import RuntimeFault
from weir.runtime.executables.native_replay import WORDS_HEADER, _Executor, array_data_offset
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.drivers.local_sync import LocalSyncDevice
from weir.runtime.hal.drivers.local_task import LocalTaskDevice, LocalTaskOptions
from weir.runtime.hal.fence import Fence
from weir.runtime.hal.local_device import LocalDevice
from weir.runtime.hal.replay_words import words_function
from weir.runtime.jit import LLVM_LOCK

N = 16
EXE = add_one_executable()
# What a snapshot holds about the device's live objects rather than its queue's work.
_LIVE = ("buffers_alive", "buffer_bytes_alive", "pooled_bytes", "threads_alive")


def _device(driver: str, workgroup_threads: int = 1) -> LocalDevice:
    """`workgroup_threads` 1: local-task's batches are its calling thread's alone (a batch that
    its threads would share is left to the general path)."""
    if driver == "local-sync":
        return LocalSyncDevice()
    return LocalTaskDevice(LocalTaskOptions(worker_count=2, workgroup_threads=workgroup_threads))


@pytest.fixture(params=["local-sync", "local-task"])
def devices(request: pytest.FixtureRequest) -> Iterator[tuple[LocalDevice, LocalDevice]]:
    """Two devices of one driver: one takes `execute_indirect_now`, the other `execute_now`."""
    pair = (_device(request.param), _device(request.param))
    yield pair
    for device in pair:
        device.shutdown()


def _buffer(device: LocalDevice, values: Any = None, n: int = N) -> Buffer:
    buffer = device.allocator.allocate(8 * n)
    if values is not None:
        buffer.data.view(np.int64)[:] = values
    return buffer


def _two_adds(device: LocalDevice) -> CommandBuffer:
    """add_one from slot 0 to slot 1, then from slot 1 to slot 2: one batch of two rows."""
    cb = device.create_command_buffer(binding_count=3)
    cb.dispatch(EXE, 0, (N, 1, 1), (N,), (0, 0, -1, 1, 0, -1))
    cb.execution_barrier()
    cb.dispatch(EXE, 0, (N, 1, 1), (N,), (1, 0, -1, 2, 0, -1))
    cb.finalize()
    return cb


def _table(device: LocalDevice, start: Any, out: int = N) -> tuple[Buffer, ...]:
    return (_buffer(device, start), _buffer(device), _buffer(device, n=out))


def _queue_record(device: LocalDevice) -> dict[str, Any]:
    """The snapshot without live objects, local-task's device names made alike."""
    snapshot = {k: v for k, v in device.statistics.snapshot().items() if k not in _LIVE}
    snapshot["in_flight_peak_ops"] = tuple(
        re.sub(r"weir-local-task-\d+$", "DEVICE", op) for op in snapshot["in_flight_peak_ops"])
    return snapshot


def _planned(device: LocalDevice) -> CommandBuffer:
    """A command buffer whose plan the first execute made, through `execute_now` (then only the
    shortened path may run: `execute_now` refuses any further call)."""
    cb = _two_adds(device)
    assert device.execute_now(None, (cb,), _table(device, np.arange(N)))

    def refused(*args: object) -> bool:
        raise AssertionError("execute_indirect_now took the general path")
    device.execute_now = refused  # type: ignore[method-assign]
    return cb


def test_replays_count_and_record_as_execute_now(
        devices: tuple[LocalDevice, LocalDevice]) -> None:
    fast, general = devices
    cb = _planned(fast)
    other = _two_adds(general)
    assert general.execute_now(None, (other,), _table(general, np.arange(N)))
    for start in range(0, 1000, 100):
        table = _table(fast, np.arange(start, start + N))
        assert fast.execute_indirect_now(None, cb, table)
        np.testing.assert_array_equal(table[2].data.view(np.int64), np.arange(start, start + N) + 2)
        assert general.execute_now(None, (other,), _table(general, np.arange(start, start + N)))
    record = _queue_record(fast)
    assert record == _queue_record(general)
    assert record["queue_submitted"]["execute"] == record["queue_completed"] == 11
    assert (record["command_buffers_executed"], record["dispatches_executed"]) == (11, 22)
    assert record["dispatches_by_entry_point"] == {"k::add_one": 22}
    assert (record["queue_pending"], record["in_flight"], record["in_flight_peak"]) == (0, 0, 1)


def test_a_failed_check_in_a_replay_fails_with_its_message_and_the_next_runs(
        devices: tuple[LocalDevice, LocalDevice]) -> None:
    """The second row fails its check: the first ran and is counted, the execute failed with
    the check's message named by its dispatch, and the next table runs."""
    fast, general = devices
    cb = _planned(fast)
    other = _two_adds(general)
    assert general.execute_now(None, (other,), _table(general, np.arange(N)))
    bad = np.arange(N)
    bad[3] = -2  # -1 when it reaches the second row
    table = _table(fast, bad)
    message = r"^dispatch 'k::add_one' failed: cf\.assert at k\.mlir:3:5 failed: " \
              r"input must not be -1$"
    with pytest.raises(RuntimeFault, match=message):
        fast.execute_indirect_now(None, cb, table)
    with pytest.raises(RuntimeFault, match=message):
        general.execute_now(None, (other,), _table(general, bad))
    np.testing.assert_array_equal(table[1].data.view(np.int64), bad + 1)  # the first row ran
    np.testing.assert_array_equal(table[2].data.view(np.int64)[3:], 0)  # stopped at the check
    record = _queue_record(fast)
    assert record == _queue_record(general)
    assert (record["queue_failed"], record["dispatches_executed"], record["in_flight"]) == (1, 3, 0)
    table = _table(fast, np.arange(N))
    assert fast.execute_indirect_now(None, cb, table)
    np.testing.assert_array_equal(table[2].data.view(np.int64), np.arange(N) + 2)


@pytest.mark.parametrize("driver", ["local-sync", "local-task"])
def test_what_the_shortened_path_does_not_take_goes_the_general_way(driver: str) -> None:
    """A first execute (no plan yet), a table that does not fit, a wait still pending, and on
    local-task a batch its threads share are left to `execute_now`, which runs them, says what
    is wrong or declines."""
    device = _device(driver, workgroup_threads=2)
    try:
        cb = _two_adds(device)
        table = _table(device, np.arange(N))
        for _ in range(2):  # planned by the first
            assert device.execute_indirect_now(None, cb, table)
            np.testing.assert_array_equal(table[2].data.view(np.int64), np.arange(N) + 2)
        assert device.statistics.snapshot()["dispatches_executed"] == 4
        with pytest.raises(RuntimeFault, match=r"dispatch 'k::add_one' failed: .*store to "
                                               r"binding 1.*outside the buffer of 120 bytes"):
            device.execute_indirect_now(None, cb, _table(device, np.arange(N), out=N - 1))
        pending = Fence.create(device.create_semaphore(0), 1)
        before = device.statistics.snapshot()
        assert not device.execute_indirect_now(pending, cb, _table(device, np.arange(N)))
        assert device.statistics.snapshot() == before
        after_shutdown = device.statistics.snapshot()["queue_failed"] + 1
        device.shutdown()
        if driver == "local-task":
            with pytest.raises(RuntimeFault, match="device shut down before the operation ran"):
                device.execute_indirect_now(None, cb, _table(device, np.arange(N)))
            assert device.statistics.snapshot()["queue_failed"] == after_shutdown
    finally:
        device.shutdown()


def test_the_executor_finds_each_arrays_data_where_numpy_keeps_it() -> None:
    """Where numpy's C ABI is as `array_data_offset` expects, a slot's word is its array and the
    executor reads the data pointer there: right for owning arrays, views, read-only memory and
    empty arrays alike."""
    offset = array_data_offset()
    if offset is None:
        pytest.skip("this numpy keeps its data pointer elsewhere: the words carry addresses")
    rodata = Buffer.wrap_readonly(memoryview(bytes(range(64))))
    owning = Buffer(np.zeros(32, np.uint8))
    for buffer in (owning, owning.subspan(8, 16), rodata, Buffer(np.zeros(0, np.uint8))):
        word = ctypes.c_uint64.from_address(id(buffer.data) + offset).value
        assert word == buffer.data.ctypes.data


def test_the_words_carry_addresses_where_the_executor_cannot_read_arrays() -> None:
    device = LocalSyncDevice()
    cb = _planned(device)
    plan = cb.plans[1]
    batch = plan.single  # type: ignore[attr-defined]
    table = _table(device, np.arange(N))
    words = plan.inline_words(table)  # type: ignore[attr-defined]
    expected = [id(b.data) for b in table] if batch.words_hold_arrays else \
        [b.address for b in table]
    assert list(words[WORDS_HEADER:]) == expected
    with LLVM_LOCK:
        by_address = _Executor(None)
    batch._run_words, batch.words_hold_arrays = by_address.run_words, False
    plan.inline_words = words_function(batch, plan._needs, plan._append_addresses)  # type: ignore[attr-defined]
    words = plan.inline_words(table)  # type: ignore[attr-defined]
    assert list(words[WORDS_HEADER:]) == [b.address for b in table]
    assert device.execute_indirect_now(None, cb, table)
    np.testing.assert_array_equal(table[2].data.view(np.int64), np.arange(N) + 2)
    bad = np.arange(N)
    bad[0] = -1
    with pytest.raises(RuntimeFault, match="input must not be -1"):
        device.execute_indirect_now(None, cb, _table(device, bad))


@pytest.mark.parametrize("driver", ["local-sync", "local-task"])
def test_replays_counted_per_batch_read_back_exactly_from_every_thread(driver: str) -> None:
    """Each thread counts its replays per batch; readers expand them into every count they
    stand for, including the counts of a thread that ended (folded into the retired shard).
    Batches with the same entry points share one entry, so the counts grow with neither the
    calls nor the command buffers."""
    device = _device(driver)
    try:
        other = _two_adds(device)
        assert device.execute_now(None, (other,), _table(device, np.arange(N)))  # plans it
        cbs = [_planned(device), other]

        def replay(times: int) -> None:
            for i in range(times):
                table = _table(device, np.arange(N) + i)
                assert device.execute_indirect_now(None, cbs[i % 2], table)
                np.testing.assert_array_equal(table[2].data.view(np.int64), np.arange(N) + i + 2)

        worker = threading.Thread(target=replay, args=(7,))
        worker.start()
        worker.join()
        replay(5)
        folds = threading.Thread(target=device.statistics.shard)  # folds the ended thread's
        folds.start()
        folds.join()
        executes = 2 + 7 + 5
        stats = device.statistics
        s = stats.snapshot()
        assert s["queue_submitted"]["execute"] == s["queue_completed"] == executes
        assert s["queue_submitted"] == {**dict.fromkeys(s["queue_submitted"], 0),
                                        "execute": executes}
        assert (s["queue_failed"], s["queue_pending"], s["in_flight"]) == (0, 0, 0)
        assert (s["command_buffers_executed"], s["dispatches_executed"]) == (executes,
                                                                             2 * executes)
        assert s["dispatches_by_entry_point"] == {"k::add_one": 2 * executes}
        assert (stats.queue_submitted, stats.queue_completed, stats.queue_failed,
                stats.queue_pending, stats.command_buffers_executed, stats.dispatches_executed,
                stats.dispatches_by_entry_point) == (
            s["queue_submitted"], s["queue_completed"], s["queue_failed"], s["queue_pending"],
            s["command_buffers_executed"], s["dispatches_executed"],
            s["dispatches_by_entry_point"])
        assert [len(shard.replays) for shard in stats._all_shards() if shard.replays] == [1, 1]
    finally:
        device.shutdown()


def test_the_words_function_refuses_every_slot_that_does_not_fit() -> None:
    """The function written for a plan checks each slot as `addresses_if_fits` does: a Buffer,
    large enough, writable where a dispatch writes it."""
    device = LocalSyncDevice()
    cb = _planned(device)
    plan = cb.plans[1]
    fits = plan.inline_words  # type: ignore[attr-defined]
    good = _table(device, np.arange(N))
    assert fits(good) is not None
    read_only = Buffer.wrap_readonly(memoryview(bytes(8 * N)))
    assert fits((read_only, *good[1:])) is not None  # slot 0 is only read
    assert fits((*good[:2], read_only)) is None
    assert fits((*good[:2], _buffer(device, n=N - 1))) is None
    assert fits((good[0], "not a buffer", good[2])) is None
    assert plan.addresses_if_fits((*good[:2], read_only)) is None  # type: ignore[attr-defined]


def test_a_buffer_the_command_buffer_binds_itself_follows_the_tables_words() -> None:
    """A constant bound by the command buffer (not through the table) is a slot after the
    table's in the words, an array or an address as the table's are, in both word modes."""
    device = LocalSyncDevice()
    constant = _buffer(device, np.arange(N) * 10)
    cb = device.create_command_buffer(binding_count=2)
    cb.dispatch(EXE, 0, (N, 1, 1), (N,), (constant, 0, -1, 0, 0, -1))
    cb.execution_barrier()
    cb.dispatch(EXE, 0, (N, 1, 1), (N,), (0, 0, -1, 1, 0, -1))
    cb.finalize()
    assert device.execute_now(None, (cb,), (_buffer(device), _buffer(device)))
    plan = cb.plans[1]
    batch = plan.single  # type: ignore[attr-defined]
    with LLVM_LOCK:
        by_address = _Executor(None)  # held here: its code lives as long as it does
    modes = [(batch.words_hold_arrays, batch._run_words), (False, by_address.run_words)]
    for holds_arrays, run_words in modes:
        batch.words_hold_arrays, batch._run_words = holds_arrays, run_words
        plan.inline_words = words_function(  # type: ignore[attr-defined]
            batch, plan._needs, plan._append_addresses, plan._fixed)  # type: ignore[attr-defined]
        table = (_buffer(device), _buffer(device))
        words = plan.inline_words(table)  # type: ignore[attr-defined]
        word = (lambda b: id(b.data)) if holds_arrays else (lambda b: b.address)
        assert list(words[WORDS_HEADER:]) == [word(b) for b in (*table, constant)]
        assert device.execute_indirect_now(None, cb, table)
        np.testing.assert_array_equal(table[1].data.view(np.int64), np.arange(N) * 10 + 2)
