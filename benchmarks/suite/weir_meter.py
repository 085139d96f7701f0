"""Bytes that weir's device allocator hands out, counted as IREE's allocator statistics count
them: the total allocated (so one call's share is a difference) and the most live at once.

weir's device statistics hold what is live now (`buffer_bytes_alive`), not a running total or a
peak, so this meter watches the one place every device buffer is counted: `LiveObjects.track`,
which each allocation calls with the buffer's size. While the meter is on, that method also adds
the size to the total and re-reads the live sum of the device's counter for the peak (a sum over
the live buffers: fine for a few measured calls, far too slow for timed ones, so the meter is
switched off before anything is timed). Used only in benchmark child processes."""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from dataclasses import dataclass

from weir.runtime.hal.live_objects import LiveObjects


@dataclass
class Counts:
    """One counter's allocations while metered."""

    allocated_bytes: int = 0
    peak_bytes: int = 0


class AllocationMeter:
    """The counts of every buffer counter that allocated while the meter was on, so a device
    made inside the metered block (its counter did not exist before) is counted from its first
    allocation: its constants' upload at load time included."""

    def __init__(self) -> None:
        self._counts: dict[int, tuple[LiveObjects, Counts]] = {}

    def record(self, counter: LiveObjects, nbytes: int) -> None:
        _, counts = self._counts.setdefault(id(counter), (counter, Counts()))
        counts.allocated_bytes += nbytes
        counts.peak_bytes = max(counts.peak_bytes, counter.nbytes)

    def of(self, counter: LiveObjects) -> Counts:
        """`counter`'s counts (zero when it allocated nothing while metered)."""
        found = self._counts.get(id(counter))
        return Counts() if found is None else Counts(found[1].allocated_bytes, found[1].peak_bytes)


@contextmanager
def metering(meter: AllocationMeter) -> Iterator[AllocationMeter]:
    """Counts every allocation into `meter` until the block ends."""
    original = LiveObjects.track

    def track(self: LiveObjects, obj: object, nbytes: int = 0) -> None:
        original(self, obj, nbytes)
        meter.record(self, nbytes)

    LiveObjects.track = track  # type: ignore[method-assign]
    try:
        yield meter
    finally:
        LiveObjects.track = original  # type: ignore[method-assign]
