"""The shortcuts of a synchronous call through the Python API (docs/command_buffers.md, "The
fixed cost of a call"): a call on local-sync takes no statistics lock and starts no thread, a
memoized execute is counted exactly, the argument checks done once per layout still refuse what
they refused, and counts made on threads that ended are kept. Deterministic: events and bounded
joins, no sleeps."""

from __future__ import annotations

import threading

import numpy as np
import pytest

import weir.api as weir
from weir.errors import InputError
from weir.runtime.hal.statistics import DeviceStatistics

TINY = """func.func @tiny(%x: tensor<4xf32>) -> tensor<4xf32> {
  %one = arith.constant dense<1.0> : tensor<4xf32>
  %0 = arith.addf %x, %one : tensor<4xf32>
  return %0 : tensor<4xf32>
}"""
X = np.array([1, 2, 3, 4], np.float32)
DONE_S = 10.0  # bound for a call the test has released; it takes microseconds


@pytest.fixture(scope="module")
def tiny() -> bytes:
    return weir.compile_string(TINY, "tiny.mlir",
                               weir.CompilerOptions(target_backends=("llvm-cpu",)))


def test_a_local_sync_call_counts_without_the_statistics_lock(tiny: bytes) -> None:
    """The lock is held by the test while another thread calls: a call that took it on its way
    (as every count did before) could not finish."""
    with weir.load([tiny], device="local-sync") as ctx:
        fn = ctx.lookup_function("tiny")
        stats = ctx.devices[0].statistics
        warmed, go, done = threading.Event(), threading.Event(), threading.Event()
        results = []

        def caller() -> None:
            results.append(fn(X))  # the thread's first count and the first peak take the lock
            warmed.set()
            go.wait(DONE_S)
            results.append(fn(X))
            done.set()

        thread = threading.Thread(target=caller)
        thread.start()
        assert warmed.wait(DONE_S)
        with stats._lock:
            go.set()
            finished = done.wait(DONE_S)
        thread.join(DONE_S)
        assert finished, "the call waited for the statistics lock"
        np.testing.assert_array_equal(results[1], X + 1)
        s = stats.snapshot()
    assert s["queue_submitted"]["execute"] == s["queue_completed"] == 2
    assert (s["queue_pending"], s["in_flight"], s["threads_alive"]) == (0, 0, 0)
    assert s["in_flight_peak_ops"] == ("queue execute on local-sync",)


def test_a_memoized_execute_is_counted_per_dispatch_and_entry_point(tiny: bytes) -> None:
    with weir.load([tiny], device="local-sync") as ctx:
        fn = ctx.lookup_function("tiny")
        for _ in range(5):
            np.testing.assert_array_equal(fn(X), X + 1)
        s = ctx.devices[0].statistics.snapshot()
    assert (s["dispatches_executed"], s["command_buffers_executed"]) == (5, 5)
    assert list(s["dispatches_by_entry_point"].values()) == [5]


def test_arguments_checked_once_per_layout_are_still_checked(tiny: bytes) -> None:
    """After a call accepted `4xf32`, other layouts get the same errors as before, and an array
    of the same layout in another byte order or memory order converts as before."""
    with weir.load([tiny], device="local-sync") as ctx:
        fn = ctx.lookup_function("tiny")
        np.testing.assert_array_equal(fn(X), X + 1)
        with pytest.raises(InputError, match=r"^function 'tiny': argument 0 \(%input0\) "
                                             r"expects 4xf32, got 4xf64$"):
            fn(X.astype(np.float64))
        with pytest.raises(InputError, match=r"expects 4xf32, got 5xf32$"):
            fn(np.zeros(5, np.float32))
        np.testing.assert_array_equal(fn(X.astype(">f4")), X + 1)
        np.testing.assert_array_equal(fn(np.arange(8, dtype=np.float32)[::2]),
                                      np.arange(8, dtype=np.float32)[::2] + 1)
        arg = X.copy()
        fn(arg)[0] = 100  # results and arguments stay the caller's own copies
        np.testing.assert_array_equal(arg, X)


def test_counts_of_threads_that_ended_are_kept_and_their_shards_folded() -> None:
    stats = DeviceStatistics()

    def count() -> None:
        for _ in range(10):
            stats.record_submitted("execute")
            stats.record_completed()

    for _ in range(20):  # one after another: each thread's shard is made, then it ends
        thread = threading.Thread(target=count)
        thread.start()
        thread.join(DONE_S)
    count()
    s = stats.snapshot()
    assert (s["queue_submitted"]["execute"], s["queue_completed"], s["queue_pending"]) == \
        (210, 210, 0)
    assert len(stats._shards) <= 2  # this thread's and at most the last one's, not 21


class _BrokenAllocator:
    """Fails as a bug would (not a `WeirError`), from inside `hal.allocator.allocate`."""

    def allocate(self, size: int) -> None:
        raise ZeroDivisionError(f"no room for {size} bytes")


def test_a_hal_import_that_fails_is_named_in_the_fault(tiny: bytes) -> None:
    """hal imports are linked without a wrapper frame; a failure that is not a `WeirError` is
    still reported as `RuntimeFault("hal.<function>: <type>: <message>")` caused by the
    original, whichever way the import is linked."""
    with weir.load([tiny], device="local-sync") as ctx:
        fn = ctx.lookup_function("tiny")
        fn(X)
        device = ctx.devices[0]
        device._allocator, kept = _BrokenAllocator(), device._allocator
        try:
            with pytest.raises(weir.RuntimeFault) as caught:
                fn(X)
        finally:
            device._allocator = kept
        assert str(caught.value) == \
            "hal.allocator.allocate: ZeroDivisionError: no room for 16 bytes"
        assert type(caught.value.__cause__) is ZeroDivisionError
        np.testing.assert_array_equal(fn(X), X + 1)  # the context still works

