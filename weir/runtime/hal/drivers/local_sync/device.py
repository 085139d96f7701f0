"""The local-sync device: every queue operation runs inline on the caller's thread, after its
wait fence is reached. Cheapest possible submission (no thread hand-off) and deterministic, which
makes it the reference for the asynchronous drivers.

The inline wait is bounded by `LocalSyncOptions.wait_timeout_s` and by the calling thread's
deadline (deadline.py), and Ctrl-C interrupts it; whichever ends it fails the operation's signal
fence too, so nothing queued behind it waits for a signal that cannot come."""

from __future__ import annotations

from weir.errors import DeadlineExceeded, RuntimeFault, WaitCycleError
from weir.runtime.hal.drivers.local_sync.options import LocalSyncOptions
from weir.runtime.hal.fence import Fence
from weir.runtime.hal.local_device import LocalDevice, QueueWork
from weir.runtime.hal.queue_work import run_work


class LocalSyncDevice(LocalDevice):
    def __init__(self, options: LocalSyncOptions | None = None) -> None:
        super().__init__()
        self.options = options or LocalSyncOptions()

    @property
    def driver_name(self) -> str:
        return "local-sync"

    def _fail(self, signal: Fence, message: str) -> None:
        self._statistics.record_failed()
        signal.fail(message)

    def _wait(self, wait: Fence | None, signal: Fence, what: str) -> bool:
        """False when the wait fence failed (the signal fence then carries that failure)."""
        if wait is None:
            return True
        if not isinstance(wait, Fence):
            self._statistics.record_failed()
            raise RuntimeFault(f"{what}: wait/signal must be fences")
        try:
            reached = wait.wait(self.options.wait_timeout_s,
                                f"waiting inline for the wait fence of {what}")
        except (DeadlineExceeded, WaitCycleError) as e:
            # This wait's own end, not an upstream failure: the caller hears of it directly.
            self._fail(signal, str(e))
            raise
        except RuntimeFault as e:
            self._fail(signal, str(e))
            return False
        except BaseException:  # Ctrl-C: the operation never runs, so nothing may wait for it
            self._fail(signal, f"{what}: interrupted while waiting for its wait fence")
            raise
        if not reached:
            message = (f"{what}: the wait fence was not reached within "
                       f"{self.options.wait_timeout_s:g} s; local-sync runs queue operations "
                       f"inline, so only another thread could have signalled it")
            self._fail(signal, message)
            raise RuntimeFault(message)
        return True

    def _enqueue(self, what: str, wait: Fence | None, signal: Fence, work: QueueWork) -> None:
        if not isinstance(signal, Fence):
            self._statistics.record_failed()
            raise RuntimeFault(f"{what}: the signal fence is missing")
        if wait is not None and not self._wait(wait, signal, what):
            return
        if work is not None:
            op = _InlineOperation(what)
            self._statistics.record_started(op)
            try:
                failure = run_work(what, work)
            finally:  # before the signal, as on local-task
                self._statistics.record_ended(op)
            if failure is not None:
                self._fail(signal, failure)
                return
        self._statistics.record_completed()
        try:
            signal.signal()
        except RuntimeFault:
            self._statistics.record_signal_refused()
            raise


class _InlineOperation:
    """What the in-flight record holds while local-sync runs an operation's work inline: an
    identity, and a description only asked for when the operation is part of a new peak (peaks
    above 1 only when several host threads submit to one device at once)."""

    __slots__ = ("what",)

    def __init__(self, what: str) -> None:
        self.what = what

    def describe(self) -> str:
        """`queue execute on local-sync`: the work is a closure, so no dispatch names."""
        return f"{self.what} on local-sync"
