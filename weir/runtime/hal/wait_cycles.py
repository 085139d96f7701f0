"""Finding wait cycles among queue operations, so a host wait that can never end says which
operations wait on each other instead of blocking until a deadline.

Drivers that defer queue operations (local-task) register each operation that has to wait as the
pending signaller of its signal semaphores (`Semaphore.add_signaller`) until it settles. When a
host wait has slept a slice (or is about to time out) without its timepoints being reached, it
asks `find_wait_cycle` whether they can still be reached:

- a timepoint is *live* when it is reached or failed, when no pending operation signals its
  semaphore to exactly that value (the host, or an operation not yet submitted, may still signal
  it), or when one of the operations that signal it far enough is live;
- a registered operation is live when it is no longer waiting (queued or running: it will
  signal) or when every timepoint it still waits for is live.

What is not live can never settle: operations waiting, directly or through a chain, on each
other. The search costs nothing on the submission path (registration is two list operations per
signalled semaphore) and runs only in waits that are already blocked."""

from __future__ import annotations

from collections.abc import Sequence
from typing import TYPE_CHECKING, Protocol

from weir.errors import RuntimeFault

if TYPE_CHECKING:
    from weir.runtime.hal.semaphore import Semaphore

Timepoint = tuple["Semaphore", int]


class PendingSignal(Protocol):
    """A queue operation registered with the semaphores it will signal."""

    @property
    def waiting(self) -> bool:
        """Still waiting for its wait timepoints (not yet queued, running or settled)."""

    def wait_points(self) -> tuple[Timepoint, ...]:
        """The timepoints it waits for."""

    def signal_points(self) -> tuple[Timepoint, ...]:
        """The timepoints it signals once it has run."""

    def describe(self) -> str:
        """What it is and where, e.g. `queue execute [m::d0] on weir-local-task-0`."""

    def expire(self, message: str) -> bool:
        """Fails it (its signal timepoints) if it is still waiting."""


def _settled(point: Timepoint) -> bool:
    """Reached or failed: either way no longer blocking anyone."""
    sem, value = point
    try:
        return sem.reached(value)
    except RuntimeFault:
        return True


def find_wait_cycle(points: Sequence[Timepoint]) -> list[PendingSignal] | None:
    """The operations of a cycle that keeps one of `points` from ever being reached, in wait
    order (each waits for what the next signals; the last for what the first signals), or None
    when every point can still be reached."""
    # Explore what the points depend on: timepoints whose every signaller is a waiting operation
    # (with those signallers), and those operations (with the timepoints they still wait for).
    blocked_on: dict[Timepoint, list[PendingSignal]] = {}
    waits_of: dict[int, list[Timepoint]] = {}
    ops: dict[int, PendingSignal] = {}
    live_points: set[Timepoint] = set()
    live_ops: set[int] = set()
    seen: set[Timepoint] = set()
    todo = list(points)
    while todo:
        point = todo.pop()
        if point in seen:
            continue
        seen.add(point)
        sem, value = point
        signallers = [op for op in sem.signallers() if _signals_at_least(op, sem, value)]
        if (_settled(point) or not _signalled_exactly(signallers, sem, value)
                or not all(op.waiting for op in signallers)):
            live_points.add(point)
            continue
        blocked_on[point] = signallers
        for op in signallers:
            if id(op) in ops:
                continue
            ops[id(op)] = op
            waits = [w for w in op.wait_points() if not _settled(w)]
            waits_of[id(op)] = waits
            if not waits:
                live_ops.add(id(op))  # all reached: it is becoming ready right now
            todo.extend(waits)
    if not blocked_on:
        return None
    _propagate_liveness(blocked_on, waits_of, live_points, live_ops)
    start = next((p for p in points if p in blocked_on and p not in live_points), None)
    if start is None:
        return None
    # Every dead timepoint has only dead signallers, and every dead operation waits for at least
    # one dead timepoint: walking dead successors must come back to an operation already seen.
    path: list[PendingSignal] = []
    index: dict[int, int] = {}
    point = start
    while True:
        op = next(o for o in blocked_on[point] if id(o) not in live_ops)
        if id(op) in index:
            return path[index[id(op)]:]
        index[id(op)] = len(path)
        path.append(op)
        point = next(w for w in waits_of[id(op)] if w not in live_points)


def _signals_at_least(op: PendingSignal, sem: Semaphore, value: int) -> bool:
    return any(s is sem and v >= value for s, v in op.signal_points())


def _signalled_exactly(signallers: list[PendingSignal], sem: Semaphore, value: int) -> bool:
    """Whether a pending operation is the one that signals `value` itself. If they all signal
    more, anyone else (the host) may still signal `value` first, as a timeline allows: an
    operation waiting for S>=1 behind one that signals S=2 is no cycle while the host owns 1."""
    return any(s is sem and v == value for op in signallers for s, v in op.signal_points())


def _propagate_liveness(blocked_on: dict[Timepoint, list[PendingSignal]],
                        waits_of: dict[int, list[Timepoint]], live_points: set[Timepoint],
                        live_ops: set[int]) -> None:
    """Grows the live sets to their fixed point: a timepoint is live once one of its signallers
    is, an operation once all the timepoints it waits for are."""
    signalled_by: dict[int, list[Timepoint]] = {}
    for point, signallers in blocked_on.items():
        for op in signallers:
            signalled_by.setdefault(id(op), []).append(point)
    waited_by: dict[Timepoint, list[int]] = {}
    unmet = {}
    for op_id, waits in waits_of.items():
        unmet[op_id] = len(waits)
        for w in waits:
            waited_by.setdefault(w, []).append(op_id)
    point_todo = list(live_points)
    op_todo = list(live_ops)
    while point_todo or op_todo:
        if point_todo:
            for op_id in waited_by.get(point_todo.pop(), ()):
                unmet[op_id] -= 1
                if unmet[op_id] == 0 and op_id not in live_ops:
                    live_ops.add(op_id)
                    op_todo.append(op_id)
        else:
            for point in signalled_by.get(op_todo.pop(), ()):
                if point not in live_points:
                    live_points.add(point)
                    point_todo.append(point)


def cycle_message(cycle: Sequence[PendingSignal], waited: Sequence[Timepoint],
                  waiting_for: str | None) -> str:
    """One line naming each operation of the cycle with the semaphore values it waits for and
    signals; semaphores are numbered S1, S2, ... in order of appearance."""
    labels: dict[int, str] = {}

    def label(point: Timepoint) -> str:
        sem, value = point
        name = labels.setdefault(id(sem), f"S{len(labels) + 1}")
        return f"{name}>={value}"

    parts = []
    for op in cycle:
        waits = ", ".join(label(p) for p in op.wait_points() if not _settled(p))
        signals = ", ".join(label(p).replace(">=", "=") for p in op.signal_points())
        parts.append(f"{op.describe()} (waits for {waits}; signals {signals})")
    host = " and ".join(label(p) for p in waited if not _settled(p))
    where = f"{waiting_for} ({host})" if waiting_for else f"waiting for {host}"
    return (f"wait cycle: {len(cycle)} queue operation(s) wait on each other and can never run: "
            f"{' -> '.join(parts)} -> back to the first; found while {where}")
