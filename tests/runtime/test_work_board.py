"""The work board that a local-task device's idle helpers watch: a post is served by whoever
looks at it while it is open, each helper in a slot of its own below the post's slot count, and
never after `close`. Helpers are simulated on the test's thread (a `serve` with no spin), so
what runs when is fixed."""

from __future__ import annotations

import threading
import time
from collections.abc import Callable, Sequence

import numpy as np
import pytest
from native_kernels import add_one_executable

from weir.errors import UsageError
from weir.runtime.executables.native_replay import NativeBatch
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.command_replay import one_shot_plan
from weir.runtime.hal.drivers.local_sync import LocalSyncDevice
from weir.runtime.hal.drivers.local_task import LocalTaskDevice, LocalTaskOptions
from weir.runtime.hal.work_board import WorkBoard

N = 16
EXE = add_one_executable()
Share = Callable[[int, Sequence[int], int, Callable[[], int]], int]


def _chain(steps: int) -> tuple[NativeBatch, list[Buffer]]:
    device = LocalSyncDevice()
    buffers = [device.allocator.allocate(8 * N) for _ in range(steps + 1)]
    buffers[0].data.view(np.int64)[:] = np.arange(N)
    cb = device.create_command_buffer()
    for i in range(steps):
        if i:
            cb.execution_barrier()
        cb.dispatch(EXE, 0, (N, 1, 1), (N,), (buffers[i], buffers[i + 1]))
    cb.finalize()
    (batch,) = one_shot_plan(cb.commands, 2)
    assert isinstance(batch, NativeBatch) and batch.shared
    return batch, buffers


def _last(buffers: list[Buffer]) -> np.ndarray:
    return buffers[-1].data.view(np.int64)


def test_a_helper_that_looks_while_the_post_is_open_runs_it() -> None:
    batch, buffers = _chain(3)
    board = WorkBoard(spin_us=0)
    seen: list[int] = []
    # Nobody was watching; slot 1, served here, takes every ticket.
    batch.run_shared(_served_by_a_helper(board, buffers, lambda: seen.append(board.serve(-1)),
                                         watching=0))
    np.testing.assert_array_equal(_last(buffers), 0)
    assert board.serve(seen[0]) > seen[0]  # it sees the close's generation, and runs nothing


def _served_by_a_helper(board: WorkBoard, buffers: list[Buffer], helper: Callable[[], object],
                        watching: int | None = None) -> Share:
    """A share that posts the chain, lets `helper` run it all (slot 1 takes every ticket
    while the leader waits), and checks that nothing was left for the leader."""
    def share(function: int, args: Sequence[int], threads: int, lead: Callable[[], int]) -> int:
        helpers = board.post(function, args, threads)
        assert watching is None or helpers == watching
        helper()
        np.testing.assert_array_equal(_last(buffers), np.arange(N) + 3)
        _last(buffers)[:] = 0
        failed = lead()  # nothing left for the leader
        board.close()
        return failed
    return share


def test_a_closed_post_is_not_run() -> None:
    batch, buffers = _chain(2)
    board = WorkBoard(spin_us=0)

    def share(function: int, args: Sequence[int], threads: int, lead: Callable[[], int]) -> int:
        board.post(function, args, threads)
        board.close()
        board.serve(-1)
        np.testing.assert_array_equal(_last(buffers), 0)
        return lead()

    batch.run_shared(share)
    np.testing.assert_array_equal(_last(buffers), np.arange(N) + 2)


def test_a_helper_beyond_the_posts_slots_does_not_run_it() -> None:
    batch, buffers = _chain(2)
    board = WorkBoard(spin_us=0)

    def share(function: int, args: Sequence[int], threads: int, lead: Callable[[], int]) -> int:
        board.post(function, args, 1)  # the leader's slot only
        board.serve(-1)
        np.testing.assert_array_equal(_last(buffers), 0)
        failed = lead()
        board.close()
        return failed

    batch.run_shared(share)
    np.testing.assert_array_equal(_last(buffers), np.arange(N) + 2)


def test_a_helper_does_not_run_a_post_it_has_seen_again() -> None:
    batch, buffers = _chain(2)
    board = WorkBoard(spin_us=0)

    def share(function: int, args: Sequence[int], threads: int, lead: Callable[[], int]) -> int:
        board.post(function, args, 3)
        seen = board.serve(-1)  # runs slot 1: every ticket
        _last(buffers)[:] = 0
        assert board.serve(seen) == seen  # the same post: not run a second time
        np.testing.assert_array_equal(_last(buffers), 0)
        failed = lead()
        board.close()
        return failed

    batch.run_shared(share)


@pytest.mark.parametrize("spin_us", [0, 50.0, 1000])
def test_local_task_runs_shared_chains_with_or_without_spinning_helpers(spin_us: float) -> None:
    """Helpers that watch the board, helpers that sleep, helpers woken by a token: the same
    results, run after run on one device (the helpers' spins overlap the next run)."""
    options = LocalTaskOptions(worker_count=1, workgroup_threads=2, worker_spin_us=spin_us)
    with LocalTaskDevice(options) as device:
        for steps in (1, 4, 8):
            buffers = [device.allocator.allocate(8 * N) for _ in range(steps + 1)]
            buffers[0].data.view(np.int64)[:] = np.arange(N)
            cb = device.create_command_buffer()
            for i in range(steps):
                if i:
                    cb.execution_barrier()
                cb.dispatch(EXE, 0, (N, 1, 1), (N,), (buffers[i], buffers[i + 1]))
            cb.finalize()
            assert device.execute_now(None, [cb])
            np.testing.assert_array_equal(_last(buffers), np.arange(N) + steps)


@pytest.mark.parametrize("bad", [-1, 2e6, "10", True, float("nan")])
@pytest.mark.parametrize("name", ["worker_spin_us", "call_spin_us"])
def test_spins_must_be_numbers_in_range(name: str, bad: object) -> None:
    with pytest.raises(UsageError, match=rf"{name} must be a number from 0 to 1000000"):
        LocalTaskOptions(**{name: bad})  # type: ignore[arg-type]


def _until(reached: Callable[[], bool], what: str) -> None:
    """Polls a helper thread's state (native code: nothing to wait on) for up to 10 s."""
    end = time.monotonic() + 10
    while not reached():
        assert time.monotonic() < end, f"never {what}"
        time.sleep(0)


needs_native_sleep = pytest.mark.skipif(not WorkBoard.native_sleep,
                                        reason="helpers sleep in Python on this platform")


@needs_native_sleep
def test_a_sleeping_helper_returns_for_queued_python_work() -> None:
    board = WorkBoard(spin_us=0)
    returned: list[int] = []
    helper = threading.Thread(target=lambda: returned.append(board.serve(-1, sleep=True)))
    helper.start()
    _until(lambda: board.sleepers == 1, "asleep")
    assert not returned
    board.call()  # as a queue put does
    helper.join(10)
    assert returned == [0] and board.calls_queued == 1
    board.took()
    assert board.calls_queued == 0


@needs_native_sleep
def test_a_post_wakes_a_sleeping_helper_which_runs_its_slot() -> None:
    batch, buffers = _chain(3)
    board = WorkBoard(spin_us=0)
    helper = threading.Thread(target=lambda: board.serve(-1, sleep=True))
    helper.start()
    _until(lambda: board.sleepers == 1, "asleep")

    # The post rings: the helper wakes and takes every ticket.
    batch.run_shared(_served_by_a_helper(board, buffers, lambda: _until(
        lambda: bool((_last(buffers) == np.arange(N) + 3).all()), "run by the helper")))
    np.testing.assert_array_equal(_last(buffers), 0)
    board.call()  # let the helper go
    helper.join(10)
    assert not helper.is_alive()


@needs_native_sleep
def test_a_prime_wakes_a_sleeping_helper_and_keeps_it_watching() -> None:
    board = WorkBoard(spin_us=0)
    helper = threading.Thread(target=lambda: board.serve(-1, sleep=True))
    helper.start()
    _until(lambda: board.sleepers == 1, "asleep")
    board.prime(60 * 10**9)  # a minute: it watches, awake, until then
    _until(lambda: board.sleepers == 0, "woken by the prime")
    assert board.watching == 1
    board.call()
    helper.join(10)
    assert not helper.is_alive() and board.watching == 0



@needs_native_sleep
def test_a_local_task_device_expecting_work_wakes_its_sleeping_helper() -> None:
    options = LocalTaskOptions(worker_count=1, workgroup_threads=2, worker_spin_us=0,
                               call_spin_us=1e6)
    with LocalTaskDevice(options) as device:
        buffers = [device.allocator.allocate(8 * N) for _ in range(3)]
        cb = device.create_command_buffer()
        cb.dispatch(EXE, 0, (N, 1, 1), (N,), (buffers[0], buffers[1]))
        cb.execution_barrier()
        cb.dispatch(EXE, 0, (N, 1, 1), (N,), (buffers[1], buffers[2]))
        cb.finalize()
        assert device.execute_now(None, [cb])  # starts the helper, which then sleeps
        board = device._workgroups._board
        _until(lambda: board.sleepers == 1, "asleep")
        device.expect_work()
        _until(lambda: board.sleepers == 0 and board.watching == 1, "woken and watching")
    assert board.watching == 0  # shut down: the helper left the board
