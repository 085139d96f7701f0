"""Command-buffer replay: consecutive native dispatches run as one native call (batches), and
reusable command buffers, recorded once with binding slots, run with each execution's binding
table. Results, dispatch counts and failure messages are those of dispatch-by-dispatch replay."""

from __future__ import annotations

from typing import Iterator

import numpy as np
import pytest
from native_kernels import add_one_executable

from weir.errors import RuntimeFault
from weir.runtime.executables.native_replay import NativeBatch
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.command_buffer import CommandBuffer, DispatchCommand
from weir.runtime.hal.command_replay import one_shot_plan
from weir.runtime.hal.device import Device
from weir.runtime.hal.drivers.local_sync import LocalSyncDevice
from weir.runtime.hal.drivers.local_task import LocalTaskDevice, LocalTaskOptions
from weir.runtime.hal.fence import Fence

DEADLINE_S = 10.0
N = 16
EXE = add_one_executable()


@pytest.fixture(params=["local-sync", "local-task"])
def device(request: pytest.FixtureRequest) -> Iterator[Device]:
    if request.param == "local-sync":
        yield LocalSyncDevice()
    else:
        with LocalTaskDevice(LocalTaskOptions(worker_count=2)) as dev:
            yield dev


def _buffer(device: Device, values: np.ndarray | None = None, n: int = N) -> Buffer:
    buffer = device.allocator.allocate(8 * n)
    if values is not None:
        buffer.data.view(np.int64)[:] = values
    return buffer


def _submit(device: Device, cb: CommandBuffer,
            table: tuple[Buffer, ...] | None = None) -> Fence:
    signal = Fence.create(device.create_semaphore(0), 1)
    device.queue_execute(None, signal, [cb], table)
    return signal


def _run(device: Device, cb: CommandBuffer, table: tuple[Buffer, ...] | None = None) -> None:
    assert _submit(device, cb, table).wait(DEADLINE_S)


def _chain(cb: CommandBuffer, bindings: list[tuple[object, ...]]) -> None:
    """add_one from each binding to the next, with barriers (a binding: a buffer, or a
    (slot, offset, length) triple)."""
    for i in range(len(bindings) - 1):
        if i:
            cb.execution_barrier()
        cb.dispatch(EXE, 0, (N, 1, 1), (N,), (*bindings[i], *bindings[i + 1]))  # type: ignore[arg-type]
    cb.finalize()


def test_consecutive_native_dispatches_are_one_batch_and_run_in_order(device: Device) -> None:
    buffers = [_buffer(device, np.arange(N))] + [_buffer(device) for _ in range(4)]
    cb = device.create_command_buffer()
    _chain(cb, [(b,) for b in buffers])
    plan = one_shot_plan(cb.commands, threads=1)
    assert [type(step) for step in plan] == [NativeBatch]
    before = dict(device.statistics.snapshot()["dispatches_by_entry_point"])
    _run(device, cb)
    np.testing.assert_array_equal(buffers[-1].data.view(np.int64), np.arange(N) + 4)
    after = device.statistics.snapshot()["dispatches_by_entry_point"]
    assert after["k::add_one"] - before.get("k::add_one", 0) == 4


def test_on_several_threads_dispatches_of_many_workgroups_batch_to_be_shared() -> None:
    """On a runner with threads, consecutive dispatches still make one batch, which the threads
    share; a lone dispatch stays a command, whose workgroups the runner splits."""
    device = LocalSyncDevice()
    buffers = [_buffer(device, np.arange(N))] + [_buffer(device) for _ in range(2)]
    cb = device.create_command_buffer()
    _chain(cb, [(b,) for b in buffers])
    plan = one_shot_plan(cb.commands, threads=2)
    assert [type(step) for step in plan] == [NativeBatch]
    assert plan[0].shared  # type: ignore[union-attr]
    lone = device.create_command_buffer()
    _chain(lone, [(b,) for b in buffers[:2]])
    assert [type(step) for step in one_shot_plan(lone.commands, threads=2)] == [DispatchCommand]


def test_a_reusable_command_buffer_runs_each_table_it_is_given(device: Device) -> None:
    cb = device.create_command_buffer(binding_count=3)
    # slot 0 -> slot 1 (the whole buffer) -> the second half of slot 2's buffer
    cb.dispatch(EXE, 0, (N, 1, 1), (N,), (0, 0, -1, 1, 0, -1))
    cb.execution_barrier()
    cb.dispatch(EXE, 0, (N, 1, 1), (N,), (1, 0, -1, 2, 8 * N, 8 * N))
    cb.finalize()
    for start in (0, 100, 1000):
        out = _buffer(device, n=2 * N)
        table = (_buffer(device, np.arange(start, start + N)), _buffer(device), out)
        _run(device, cb, table)
        values = out.data.view(np.int64)
        np.testing.assert_array_equal(values[N:], np.arange(start, start + N) + 2)
        np.testing.assert_array_equal(values[:N], 0)


def test_a_reusable_command_buffer_binds_its_own_buffers_beside_the_tables(
        device: Device) -> None:
    """A buffer given in a slot's place is bound by the command buffer itself (a constant of
    the program): each execution's table fills only the slots."""
    constant = _buffer(device, np.arange(N) * 10)
    cb = device.create_command_buffer(binding_count=2)
    # the constant -> slot 0; the constant again and slot 0 -> slot 1 (a chain of two)
    _chain(cb, [(constant, 0, -1), (0, 0, -1), (1, 0, -1)])
    for start in (0, 7):
        table = (_buffer(device, np.full(N, start)), _buffer(device))
        _run(device, cb, table)
        np.testing.assert_array_equal(table[0].data.view(np.int64), np.arange(N) * 10 + 1)
        np.testing.assert_array_equal(table[1].data.view(np.int64), np.arange(N) * 10 + 2)
    np.testing.assert_array_equal(constant.data.view(np.int64), np.arange(N) * 10)


def test_a_buffer_bound_by_the_command_buffer_too_small_fails_at_its_dispatch(
        device: Device) -> None:
    short = _buffer(device, n=N - 1)
    cb = device.create_command_buffer(binding_count=2)
    _chain(cb, [(0, 0, -1), (1, 0, -1), (short, 0, -1)])
    for _ in range(2):  # the plan's first execution, then a later one
        middle = _buffer(device)
        failed = _submit(device, cb, (_buffer(device, np.arange(N)), middle))
        with pytest.raises(RuntimeFault, match=r"dispatch 'k::add_one' failed: .*store to "
                                               r"binding 1.*outside the buffer of 120 bytes"):
            failed.wait(DEADLINE_S)
        np.testing.assert_array_equal(middle.data.view(np.int64), np.arange(N) + 1)


def test_a_table_too_small_fails_at_its_dispatch_and_the_next_call_works(device: Device) -> None:
    cb = device.create_command_buffer(binding_count=3)
    _chain(cb, [(0, 0, -1), (1, 0, -1), (2, 0, -1)])
    good = (_buffer(device, np.arange(N)), _buffer(device), _buffer(device))
    _run(device, cb, good)
    middle, short = _buffer(device), _buffer(device, n=N - 1)
    failed = _submit(device, cb, (_buffer(device, np.arange(N)), middle, short))
    with pytest.raises(RuntimeFault, match=r"dispatch 'k::add_one' failed: .*store to binding 1"
                                           r".*outside the buffer of 120 bytes"):
        failed.wait(DEADLINE_S)
    np.testing.assert_array_equal(middle.data.view(np.int64), np.arange(N) + 1)  # ran first
    out = _buffer(device)
    _run(device, cb, (_buffer(device, np.arange(N)), _buffer(device), out))
    np.testing.assert_array_equal(out.data.view(np.int64), np.arange(N) + 2)


@pytest.mark.parametrize("table, message", [
    (None, "binds 2 slot\\(s\\), the binding table has none"),
    ((), "binds 2 slot\\(s\\), the binding table has 0 buffer"),
    (("not a buffer", "x"), "slot 0 must be a buffer, got str"),
])
def test_bad_binding_tables_fail_the_execute(table: object, message: str) -> None:
    device = LocalSyncDevice()
    cb = device.create_command_buffer(binding_count=2)
    cb.dispatch(EXE, 0, (N, 1, 1), (N,), (0, 0, -1, 1, 0, -1))
    cb.finalize()
    failed = _submit(device, cb, table)  # type: ignore[arg-type]
    with pytest.raises(RuntimeFault, match=message):
        failed.wait(DEADLINE_S)


def test_slots_and_buffers_do_not_mix() -> None:
    device = LocalSyncDevice()
    reusable = device.create_command_buffer(binding_count=2)
    with pytest.raises(RuntimeFault, match=r"\(slot or buffer, offset, length\) triples"):
        reusable.dispatch(EXE, 0, (N, 1, 1), (N,), (_buffer(device), _buffer(device)))
    with pytest.raises(RuntimeFault, match="outside the 2 slot"):
        reusable.dispatch(EXE, 0, (N, 1, 1), (N,), (0, 0, -1, 2, 0, -1))
    with pytest.raises(RuntimeFault, match="not supported in a reusable command buffer"):
        reusable.copy_buffer(_buffer(device), 0, _buffer(device), 0, 8)
    one_shot = device.create_command_buffer()
    with pytest.raises(RuntimeFault, match="bindings must be buffers, got int"):
        one_shot.dispatch(EXE, 0, (N, 1, 1), (N,), (0, 1))
    one_shot.finalize()
    failed = _submit(device, one_shot, (_buffer(device),))
    with pytest.raises(RuntimeFault, match="binding table was given for a one-shot"):
        failed.wait(DEADLINE_S)


def test_a_failed_check_in_a_batch_fails_the_execute_after_the_rows_before_it(
        device: Device) -> None:
    """The third of four batched dispatches fails its check: the two before it ran and are
    counted, the fourth never ran, the fence carries the check's message, and the device runs
    the next submission."""
    start = np.arange(N)
    start[5] = -3  # -1 when it reaches the third dispatch
    buffers = [_buffer(device, start)] + [_buffer(device) for _ in range(4)]
    cb = device.create_command_buffer()
    _chain(cb, [(b,) for b in buffers])
    assert [type(step) for step in one_shot_plan(cb.commands, threads=1)] == [NativeBatch]
    before = dict(device.statistics.snapshot()["dispatches_by_entry_point"])
    failed = _submit(device, cb)
    with pytest.raises(RuntimeFault, match=r"^dispatch 'k::add_one' failed: cf\.assert at "
                                           r"k\.mlir:3:5 failed: input must not be -1$"):
        failed.wait(DEADLINE_S)
    after = device.statistics.snapshot()["dispatches_by_entry_point"]
    assert after["k::add_one"] - before.get("k::add_one", 0) == 2
    np.testing.assert_array_equal(buffers[2].data.view(np.int64), start + 2)
    np.testing.assert_array_equal(buffers[4].data.view(np.int64), 0)
    good = [_buffer(device, np.arange(N))] + [_buffer(device) for _ in range(4)]
    cb = device.create_command_buffer()
    _chain(cb, [(b,) for b in good])
    _run(device, cb)
    np.testing.assert_array_equal(good[-1].data.view(np.int64), np.arange(N) + 4)


def test_a_failed_check_fails_a_reusable_command_buffer_and_the_next_table_runs(
        device: Device) -> None:
    cb = device.create_command_buffer(binding_count=3)
    _chain(cb, [(0, 0, -1), (1, 0, -1), (2, 0, -1)])
    bad = np.arange(N)
    bad[0] = -1
    failed = _submit(device, cb, (_buffer(device, bad), _buffer(device), _buffer(device)))
    with pytest.raises(RuntimeFault, match="input must not be -1"):
        failed.wait(DEADLINE_S)
    out = _buffer(device)
    _run(device, cb, (_buffer(device, np.arange(N)), _buffer(device), out))
    np.testing.assert_array_equal(out.data.view(np.int64), np.arange(N) + 2)
