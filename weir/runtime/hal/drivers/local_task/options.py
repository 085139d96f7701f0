"""Options of the local-task driver (an options object, never environment variables)."""

from __future__ import annotations

import os
from dataclasses import dataclass, field

from weir.errors import UsageError


def _default_worker_count() -> int:
    # More workers than cores only adds wake-ups (DESIGN.md §12: 50-100 µs each); a few suffice
    # to overlap independent queue operations.
    return max(1, min(os.cpu_count() or 1, 4))


@dataclass(frozen=True)
class LocalTaskOptions:
    # Worker threads that run execute/copy/fill; created on first use and never more.
    worker_count: int = field(default_factory=_default_worker_count)
    # Threads that run the workgroups of one dispatch (the dispatching worker is one of them):
    # one per core, since native workgroups run without the GIL and keep a core busy each.
    workgroup_threads: int = field(default_factory=lambda: os.cpu_count() or 1)
    # Microseconds a device thread that ran out of work spins, watching for more, before it
    # sleeps (IREE's --task_worker_spin_us): a sleeping thread takes 50-100 µs to wake, longer
    # than a small dispatch or the host's work between two calls. 0: sleep at once.
    worker_spin_us: float = 100.0
    # Microseconds the workgroup threads watch for work once a call through `weir.api` begins
    # on the device (sleeping ones wake then): the call's host part (argument checks, the
    # program's walk to its first execute) runs while they wake, and its first dispatch finds
    # them watching. 0: no such watch; they wake when work is posted.
    call_spin_us: float = 1000.0
    # An operation whose wait fence is not reached within this many seconds fails its signal
    # fence, so a wait cycle or a fence nobody signals ends in an error instead of a hang.
    # None: wait forever.
    wait_timeout_s: float | None = 600.0

    def __post_init__(self) -> None:
        if type(self.worker_count) is not int or self.worker_count < 1:
            raise UsageError(f"local-task worker_count must be a positive integer, "
                             f"got {self.worker_count!r}")
        if type(self.workgroup_threads) is not int or self.workgroup_threads < 1:
            raise UsageError(f"local-task workgroup_threads must be a positive integer, "
                             f"got {self.workgroup_threads!r}")
        for name in ("worker_spin_us", "call_spin_us"):
            spin = getattr(self, name)
            if isinstance(spin, bool) or not isinstance(spin, (int, float)) or \
                    not 0 <= spin <= 1e6:
                raise UsageError(f"local-task {name} must be a number from 0 to 1000000, "
                                 f"got {spin!r}")
        timeout = self.wait_timeout_s
        if timeout is not None and (isinstance(timeout, bool) or not isinstance(timeout, (int, float))
                                    or not timeout >= 0):
            raise UsageError(f"local-task wait_timeout_s must be None or a number >= 0, "
                             f"got {timeout!r}")
