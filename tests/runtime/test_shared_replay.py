"""The shared executor: one batch of native dispatches run by several threads taking tickets, in
phases that keep dependent dispatches in order. Helpers are simulated deterministically: a
`share` that runs the helper's native call before the leader starts (the helper does
everything), or only after the leader's run ended (a helper that arrives too late finds nothing
to do)."""

from __future__ import annotations

import ctypes
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from native_kernels import add_one_executable

from weir.runtime.executables.native_replay import BatchFault, NativeBatch
from weir.runtime.executables.shared_replay import SHARED_TYPE
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.command_buffer import CommandBuffer
from weir.runtime.hal.command_replay import one_shot_plan, Phases
from weir.runtime.hal.drivers.local_sync import LocalSyncDevice
from weir.runtime.hal.drivers.local_task import LocalTaskDevice, LocalTaskOptions
from weir.runtime.hal.fence import Fence

N = 16  # add_one runs one workgroup per element
EXE = add_one_executable()
Lead = Callable[[], int]


def _helper(function: int, args: Sequence[int], slot: int) -> None:
    """What a device's helper thread does with a post on its work board."""
    SHARED_TYPE(function)(*args, slot)


def _buffers(device: LocalSyncDevice, count: int, first: np.ndarray) -> list[Buffer]:
    buffers = [device.allocator.allocate(8 * N) for _ in range(count)]
    buffers[0].data.view(np.int64)[:] = first
    return buffers


def _chain_batch(buffers: list[Buffer], threads: int = 2) -> NativeBatch:
    device = LocalSyncDevice()
    cb = device.create_command_buffer()
    for i in range(len(buffers) - 1):
        if i:
            cb.execution_barrier()
        cb.dispatch(EXE, 0, (N, 1, 1), (N,), (buffers[i], buffers[i + 1]))
    cb.finalize()
    (batch,) = one_shot_plan(cb.commands, threads)
    assert isinstance(batch, NativeBatch) and batch.shared
    return batch


def test_a_helper_that_takes_every_ticket_leaves_the_leader_nothing() -> None:
    device = LocalSyncDevice()
    buffers = _buffers(device, 5, np.arange(N))
    batch = _chain_batch(buffers)
    started: list[int] = []

    def share(function: int, args: Sequence[int], threads: int, lead: Lead) -> int:
        started.extend(range(1, threads))
        for slot in range(1, threads):
            _helper(function, args, slot)  # before the leader: it runs all four dispatches
        return lead()

    batch.run_shared(share)
    assert started == [1]
    np.testing.assert_array_equal(buffers[-1].data.view(np.int64), np.arange(N) + 4)


def test_a_helper_that_arrives_after_the_batch_finds_nothing_to_do() -> None:
    device = LocalSyncDevice()
    buffers = _buffers(device, 3, np.arange(N))
    batch = _chain_batch(buffers)

    def share(function: int, args: Sequence[int], threads: int, lead: Lead) -> int:
        failed = lead()
        np.testing.assert_array_equal(buffers[-1].data.view(np.int64), np.arange(N) + 2)
        buffers[-1].data.view(np.int64)[:] = 0
        _helper(function, args, 1)  # every ticket is taken: nothing runs again
        return failed

    batch.run_shared(share)
    np.testing.assert_array_equal(buffers[-1].data.view(np.int64), 0)


def test_a_check_failing_on_a_helper_fails_the_batch_with_the_helpers_record() -> None:
    device = LocalSyncDevice()
    start = np.arange(N)
    start[7] = -2  # -1 when the second dispatch reads it
    buffers = _buffers(device, 4, start)
    batch = _chain_batch(buffers)

    def share(function: int, args: Sequence[int], threads: int, lead: Lead) -> int:
        _helper(function, args, 1)
        return lead()

    with pytest.raises(BatchFault, match=r"input must not be -1") as failure:
        batch.run_shared(share)
    assert failure.value.row == 1
    # The third dispatch waits for the second, which never finished: it did not run.
    np.testing.assert_array_equal(buffers[3].data.view(np.int64), 0)
    # The same batch runs again once its input is good.
    buffers[0].data.view(np.int64)[:] = np.arange(N)
    batch.run_shared(share)
    np.testing.assert_array_equal(buffers[3].data.view(np.int64), np.arange(N) + 3)


def test_no_helper_beyond_the_threads_the_batch_was_planned_for() -> None:
    device = LocalSyncDevice()
    buffers = _buffers(device, 3, np.arange(N))
    batch = _chain_batch(buffers, threads=3)
    asked: list[int] = []

    def share(function: int, args: Sequence[int], threads: int, lead: Lead) -> int:
        asked.append(threads)
        return lead()

    batch.run_shared(share)
    assert asked == [3]
    np.testing.assert_array_equal(buffers[-1].data.view(np.int64), np.arange(N) + 2)


def test_phases_start_at_barriers_and_at_data_dependencies() -> None:
    phases = Phases()
    phases.add([(0, 0, 64, False), (0, 64, 128, True)])   # reads [0, 64), writes [64, 128)
    phases.add([(0, 0, 64, False), (0, 128, 192, True)])  # same input, another output
    phases.add([(1, 64, 128, False), (1, 0, 8, True)])    # another slot: independent
    phases.add([(0, 100, 108, False), (2, 0, 8, True)])   # reads what the first one wrote
    phases.barrier()
    phases.add([(3, 0, 8, False), (4, 0, 8, True)])       # after a barrier
    phases.add([(0, 0, 8, True)])  # slot 0 again, but nothing of this phase touches it
    assert phases.take() == [False, False, False, True, True, False]  # the first: nothing before it
    assert phases.take() == []


def test_a_write_after_read_also_starts_a_phase() -> None:
    phases = Phases()
    phases.add([(0, 0, 64, False), (1, 0, 64, True)])
    phases.add([(0, 32, 40, True)])  # overwrites what the first row reads
    assert phases.take() == [False, True]


def test_a_local_task_device_shares_a_recorded_chain_and_counts_every_dispatch() -> None:
    with LocalTaskDevice(LocalTaskOptions(worker_count=1, workgroup_threads=2)) as device:
        buffers = [device.allocator.allocate(8 * N) for _ in range(9)]
        buffers[0].data.view(np.int64)[:] = np.arange(N)
        cb = CommandBuffer()
        for i in range(8):
            if i:
                cb.execution_barrier()
            cb.dispatch(EXE, 0, (N, 1, 1), (N,), (buffers[i], buffers[i + 1]))
        cb.finalize()
        signal = Fence.create(device.create_semaphore(0), 1)
        device.queue_execute(None, signal, [cb])
        assert signal.wait(10.0)
        np.testing.assert_array_equal(buffers[-1].data.view(np.int64), np.arange(N) + 8)
        counts = device.statistics.snapshot()["dispatches_by_entry_point"]
        assert counts["k::add_one"] == 8


@pytest.mark.parametrize("slot, first_failure", [(0, 3), (1, 12)])
def test_each_thread_runs_its_own_ticket_before_taking_another(slot: int,
                                                               first_failure: int) -> None:
    """One thread alone runs both halves of the first row, its own half first: the failing
    element it reports is in the half whose ticket is its home (slot 0: workgroups 0-7, slot 1:
    8-15). Tickets taken in arrival order would give a lone helper the first half."""
    device = LocalSyncDevice()
    start = np.arange(N)
    start[3] = start[12] = -1
    buffers = _buffers(device, 3, start)
    batch = _chain_batch(buffers)
    records: list[list[int]] = []

    def share(function: int, args: Sequence[int], threads: int, lead: Lead) -> int:
        if slot:
            _helper(function, args, 1)  # alone: the leader comes after it, to nothing
        failed = lead()
        faults = (ctypes.c_int64 * (4 * threads)).from_address(args[5])
        records.append(list(faults[4 * slot:4 * slot + 4]))
        return failed

    with pytest.raises(BatchFault, match=r"input must not be -1") as failure:
        batch.run_shared(share)
    assert failure.value.row == 0
    assert records == [[1, 0, first_failure, -1]]
