"""Timeline semaphores and fences, with zero-timeout waits and explicit signals (no sleeps)."""

from __future__ import annotations

import threading

import pytest

from weir.errors import RuntimeFault
from weir.runtime.hal.fence import Fence
from weir.runtime.hal.semaphore import Semaphore


def test_semaphore_is_monotonic() -> None:
    s = Semaphore(0)
    s.signal(3)
    assert s.query() == 3
    with pytest.raises(RuntimeFault, match="already at 3"):
        s.signal(3)
    with pytest.raises(RuntimeFault, match="already at 3"):
        s.signal(2)
    assert s.wait(3, 0) and s.wait(1, 0)
    assert not s.wait(4, 0)


def test_semaphore_failure_carries_the_original_message() -> None:
    s = Semaphore(0)
    seen: list[str | None] = []
    s.on_reached(1, seen.append)
    s.fail("dispatch 'mul' failed: out of bounds")
    s.fail("a later failure does not replace the first")
    assert seen == ["dispatch 'mul' failed: out of bounds"]
    for call in (lambda: s.wait(1, 0), s.query, lambda: s.signal(5)):
        with pytest.raises(RuntimeFault, match="^dispatch 'mul' failed: out of bounds$"):
            call()


def test_on_reached_fires_on_signal_or_immediately() -> None:
    s = Semaphore(2)
    seen: list[str | None] = []
    s.on_reached(2, seen.append)
    s.on_reached(4, seen.append)
    assert seen == [None]
    s.signal(3)
    assert seen == [None]
    s.signal(4)
    assert seen == [None, None]


def test_fence_wait_query_signal() -> None:
    f = Fence.create()
    assert not f.query()
    assert f.wait(0) is False
    f.signal()
    assert f.query() and f.wait(0)
    assert Fence().query() and Fence().wait(0)  # an empty fence is reached


def test_fence_join_keeps_the_largest_value_and_skips_none() -> None:
    s = Semaphore(0)
    a, b = Fence.create(s, 1), Fence.create(s, 5)
    other = Fence.create()
    joined = Fence.join([a, None, b, other])
    assert dict(joined.points) == {s: 5, other.points[0][0]: 1}
    a.signal()
    assert not joined.wait(0)
    s.signal(5)
    other.signal()
    assert joined.wait(0)


def test_fence_failure_propagates_to_waiters() -> None:
    a, b = Fence.create(), Fence.create()
    joined = Fence.join([a, b])
    b.fail("input 'x' had the wrong shape")
    with pytest.raises(RuntimeFault, match="^input 'x' had the wrong shape$"):
        joined.wait(0)
    with pytest.raises(RuntimeFault, match="wrong shape"):
        joined.query()


def test_on_reached_fires_in_value_then_registration_order() -> None:
    s = Semaphore(0)
    seen: list[str] = []
    for value, tag in ((3, "c"), (1, "a"), (2, "b1"), (2, "b2"), (9, "z")):
        s.on_reached(value, lambda failure, tag=tag: seen.append(tag))
    s.signal(2)
    assert seen == ["a", "b1", "b2"]
    s.signal(5)
    assert seen == ["a", "b1", "b2", "c"]
    s.fail("gone")
    assert seen == ["a", "b1", "b2", "c", "z"]


def test_a_timeline_with_many_waiters_signals_each_once() -> None:
    s = Semaphore(0)
    fired: list[int] = []
    for value in range(2000, 0, -1):
        s.on_reached(value, lambda failure, value=value: fired.append(value))
    for value in range(1, 2001):
        s.signal(value)
        assert fired[-1] == value
    assert fired == list(range(1, 2001))


def test_fence_wait_reports_a_later_point_failing_while_an_earlier_one_is_pending() -> None:
    first, second = Semaphore(0), Semaphore(0)
    fence = Fence([(first, 1), (second, 1)])
    outcome: list[str] = []

    def waiter() -> None:
        try:
            fence.wait(None)  # unbounded: only the failure can end it
            outcome.append("reached")
        except RuntimeFault as e:
            outcome.append(str(e))

    thread = threading.Thread(target=waiter, daemon=True)
    thread.start()
    second.fail("link down")
    thread.join(5)  # an upper bound for a thread that must already be finishing, not a sleep
    assert outcome == ["link down"]
