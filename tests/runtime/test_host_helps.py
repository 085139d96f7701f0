"""A host thread about to wait for a local-task fence runs the device's ready queue work itself
(`Device.help_until`) instead of sleeping while a worker runs it: a synchronous call then costs
no hand-off. Workers that already took work keep it; the host only takes what is still queued."""

from __future__ import annotations

import threading
from typing import Sequence

from host_executable import HostExecutable

from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.device import Device
from weir.runtime.hal.drivers.local_sync import LocalSyncDevice
from weir.runtime.hal.drivers.local_task import LocalTaskDevice, LocalTaskOptions
from weir.runtime.hal.fence import Fence

DEADLINE_S = 10.0


def _execute(dev: Device, body: object, name: str) -> Fence:
    cb = dev.create_command_buffer()
    cb.dispatch(HostExecutable({name: body}, name="k"), 0, (1, 1, 1), (), ())  # type: ignore[dict-item]
    cb.finalize()
    signal = Fence.create(dev.create_semaphore(0), 1)
    dev.queue_execute(None, signal, [cb])
    return signal


def test_the_host_runs_queued_work_while_the_worker_is_busy() -> None:
    with LocalTaskDevice(LocalTaskOptions(worker_count=1)) as dev:
        started, release = threading.Event(), threading.Event()
        ran_on: list[int] = []

        def block(_: Sequence[Buffer]) -> None:
            started.set()
            release.wait(DEADLINE_S)

        def note(_: Sequence[Buffer]) -> None:
            ran_on.append(threading.get_ident())

        first = _execute(dev, block, "block")
        assert started.wait(DEADLINE_S)  # the only worker is inside `block` now
        second = _execute(dev, note, "note")
        assert not second.reached()
        dev.help_until(second.reached)
        assert second.reached() and ran_on == [threading.get_ident()]
        assert not first.reached()  # a worker's work is not the host's to finish
        release.set()
        assert first.wait(DEADLINE_S)
        assert dev.statistics.snapshot()["dispatches_by_entry_point"] == {"k::block": 1,
                                                                          "k::note": 1}


def test_nothing_queued_returns_at_once() -> None:
    with LocalTaskDevice(LocalTaskOptions(worker_count=1)) as dev:
        never = Fence.create(dev.create_semaphore(0), 1)
        dev.help_until(never.reached)  # nothing to run: returns, the fence still pending
        assert not never.reached()
    LocalSyncDevice().help_until(never.reached)  # local-sync has no queue: a no-op
