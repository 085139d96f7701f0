"""The work board that a local-task device's idle helpers watch: a post is served by whoever
looks at it while it is open, each helper in a slot of its own below the post's slot count, and
never after `close`. Helpers are simulated on the test's thread (a `serve` with no spin), so
what runs when is fixed."""

from __future__ import annotations

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

    def share(function: int, args: Sequence[int], threads: int, lead: Callable[[], int]) -> int:
        assert board.post(function, args, threads) == 0  # nobody was watching
        seen.append(board.serve(-1))  # slot 1 takes every ticket: the chain is done
        np.testing.assert_array_equal(_last(buffers), np.arange(N) + 3)
        _last(buffers)[:] = 0
        failed = lead()  # nothing left for the leader
        board.close()
        return failed

    batch.run_shared(share)
    np.testing.assert_array_equal(_last(buffers), 0)
    assert board.serve(seen[0]) > seen[0]  # it sees the close's generation, and runs nothing


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
def test_worker_spin_us_must_be_a_number_in_range(bad: object) -> None:
    with pytest.raises(UsageError, match=r"worker_spin_us must be a number from 0 to 1000000"):
        LocalTaskOptions(worker_spin_us=bad)  # type: ignore[arg-type]
