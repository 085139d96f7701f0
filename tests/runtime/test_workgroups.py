"""Workgroup runners: every workgroup runs exactly once, ranges are contiguous, a failure in any
range reaches the dispatching thread, and a stopped runner still finishes work inline."""

from __future__ import annotations

import threading

import pytest

from weir.errors import RuntimeFault
from weir.runtime.hal.workgroups import InlineWorkgroups, ParallelWorkgroups


def _record(count: int, runner: InlineWorkgroups | ParallelWorkgroups) -> list[tuple[int, int]]:
    ranges: list[tuple[int, int]] = []
    lock = threading.Lock()

    def body(begin: int, end: int) -> None:
        with lock:
            ranges.append((begin, end))
    runner.run(count, body)
    return sorted(ranges)


def test_inline_runs_all_workgroups_as_one_range() -> None:
    assert _record(7, InlineWorkgroups()) == [(0, 7)]
    assert _record(0, InlineWorkgroups()) == []


@pytest.mark.parametrize("count", [1, 2, 3, 17, 1000])
def test_parallel_ranges_cover_every_workgroup_once(count: int) -> None:
    runner = ParallelWorkgroups(threads=3)
    try:
        ranges = _record(count, runner)
    finally:
        runner.stop()
    covered = [w for begin, end in ranges for w in range(begin, end)]
    assert covered == list(range(count))
    assert len(ranges) == min(count, 3)


def test_parallel_runs_ranges_on_several_threads() -> None:
    runner = ParallelWorkgroups(threads=2)
    arrived = threading.Barrier(2, timeout=30)  # both ranges must be running at once
    names: set[str] = set()

    def body(begin: int, end: int) -> None:
        names.add(threading.current_thread().name)
        arrived.wait()
    try:
        runner.run(2, body)
    finally:
        runner.stop()
    assert len(names) == 2


def test_a_failing_range_raises_in_the_dispatching_thread_after_all_ranges_end() -> None:
    runner = ParallelWorkgroups(threads=2)
    finished: list[int] = []

    def body(begin: int, end: int) -> None:
        if begin > 0:
            raise RuntimeFault(f"workgroup {begin} failed")
        finished.append(begin)
    try:
        with pytest.raises(RuntimeFault, match="workgroup 1 failed"):
            runner.run(2, body)
    finally:
        runner.stop()
    assert finished == [0]


def test_a_stopped_runner_runs_inline() -> None:
    runner = ParallelWorkgroups(threads=4)
    runner.stop()
    assert _record(10, runner) == [(0, 10)]
