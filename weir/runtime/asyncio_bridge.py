"""Awaiting weir calls from asyncio (`Function.call_async`).

A coarse-fences function (compiled with `--iree-execution-model=async-external`) only schedules
its work when called, so it is called right on the event loop's thread, with a wait fence that
is already reached and a fresh signal fence, and the loop then awaits that fence the way the
local-task driver waits for anything: a `Semaphore.on_reached` callback per pending point, run on
whichever thread reaches or fails it, hands the outcome to the loop with `call_soon_threadsafe`.
No thread is started or blocked per call, so any number of calls can be in flight at once.
(Host waits inside the call itself, such as an import without `nosideeffects` or local-sync's
inline queue, run on the loop's thread for as long as they take.)

A synchronous-ABI function blocks its caller until its work is done, so it runs on the loop's
default executor instead, one of that pool's threads per call in flight.

Cancelling the awaiting task (or `asyncio.wait_for` / `timeout=` running out) ends the await at
once. Queued work cannot be recalled: it finishes or fails in the background and its results are
dropped. Until it settles, its semaphores hold one small callback that refers to the loop and the
abandoned future, nothing else (the results stay with the work); it then finds the future done,
or the loop closed, and does nothing."""

from __future__ import annotations

import asyncio
import time
from typing import Awaitable, Callable, TypeVar

from weir.errors import DeadlineExceeded, RuntimeFault
from weir.runtime.hal.deadline import deadline
from weir.runtime.hal.fence import Fence

T = TypeVar("T")


async def await_scheduled(name: str, timeout: float | None,
                          schedule: Callable[[Fence], T]) -> T:
    """Calls `schedule(signal)` on this thread with a fresh signal fence, then returns what it
    returned once the fence is reached. A failed fence raises `RuntimeFault` naming `name` with
    the original message; `timeout` (seconds, as in `Function.__call__`) bounds the call's own
    host waits and then the await, and raises `DeadlineExceeded` naming `name`."""
    loop = asyncio.get_running_loop()
    signal = Fence.create()
    with deadline(timeout, name):  # checks `timeout` as every timeout= of the API does
        end = None if timeout is None else loop.time() + timeout
        results = schedule(signal)
    failure = await _within(end, _settled(signal, loop), name, timeout,
                            f"waiting for the signal fence of {name}")
    if failure is not None:
        raise RuntimeFault(failure if failure.startswith(f"{name}: ") else f"{name}: {failure}")
    return results


async def run_in_executor(name: str, timeout: float | None, call: Callable[[], T]) -> T:
    """Runs `call` on the loop's default executor; `timeout` bounds both the await and, through
    the thread's deadline, every wait of the call, so the thread is not held for ever either."""
    loop = asyncio.get_running_loop()
    with deadline(timeout, name):  # checks `timeout`
        end = None if timeout is None else loop.time() + timeout
        end_monotonic = None if timeout is None else time.monotonic() + timeout

    def bounded() -> T:
        left = None if end_monotonic is None else max(0.0, end_monotonic - time.monotonic())
        with deadline(left, name):
            return call()

    return await _within(end, loop.run_in_executor(None, bounded), name, timeout,
                         f"waiting for {name} on an executor thread")


async def _within(end: float | None, awaitable: Awaitable[T], name: str,
                  timeout: float | None, waiting_for: str) -> T:
    """`await awaitable` until loop time `end`; running out raises `DeadlineExceeded` worded as
    a thread's deadline is (deadline.py)."""
    if end is None:
        return await awaitable
    limit = asyncio.timeout_at(end)
    try:
        async with limit:
            return await awaitable
    except TimeoutError:
        if not limit.expired():
            raise
        raise DeadlineExceeded(f"{name} (timeout {timeout:g} s): deadline exceeded while "
                               f"{waiting_for}") from None


def _settled(fence: Fence, loop: asyncio.AbstractEventLoop) -> Awaitable[str | None]:
    """Completes with None once every point of `fence` is reached, or with the first failure's
    message."""
    future: asyncio.Future[str | None] = loop.create_future()
    pending = [(sem, value) for sem, value in fence.points if sem.pending(value)]
    failure = fence.failure()
    if failure is not None or not pending:
        future.set_result(failure)
        return future
    waiter = _FenceWaiter(loop, future, len(pending))
    for sem, value in pending:
        sem.on_reached(value, waiter.on_point)
    return future


class _FenceWaiter:
    """Counts a fence's pending points down on the loop's thread. Its callbacks run on the
    signalling thread (a device worker, another call's completion, the loop itself), where they
    must never raise: a semaphore runs its callbacks in the signaller's stack."""

    __slots__ = ("_loop", "_future", "_pending")

    def __init__(self, loop: asyncio.AbstractEventLoop, future: asyncio.Future[str | None],
                 pending: int) -> None:
        self._loop = loop
        self._future = future
        self._pending = pending

    def on_point(self, failure: str | None) -> None:
        try:
            self._loop.call_soon_threadsafe(self._settle, failure)
        except RuntimeError:  # the loop is closed: nobody is awaiting this any more
            pass

    def _settle(self, failure: str | None) -> None:
        future = self._future
        if future.done():  # cancelled (results dropped), or an earlier point failed
            return
        if failure is None:
            self._pending -= 1
            if self._pending:
                return
        future.set_result(failure)
