"""Asynchronous faults (issue 7, item 4): an exception inside a module written in Python, a
failed wait fence, a failing dispatch. Each must reach every wait that depends on it (the call's
signal fence, queue operations chained on that fence, a second call waiting on it) as a
`RuntimeFault` holding the original message and the name of the call that failed; afterwards a
fresh call on the same context gives the right result and no local-task worker thread is lost.

Deterministic: fences are looked at with zero-timeout waits or waited for with a bound that only
guards against a hang; nothing sleeps to order things."""

from __future__ import annotations

import re
import threading
from collections.abc import Iterator

import numpy as np
import pytest
from fault_programs import DRIVERS, EXPECTED, X, Custom, CustomState, compiled

import weir.api as weir
from weir.errors import RuntimeFault
from weir.runtime.api import BufferView, Context, Fence
from weir.runtime.hal.device import Device
from weir.runtime.hal.drivers.local_task import LocalTaskDevice

HANG_GUARD_S = 10.0  # waits below end at once; this bound only turns a hang into a failure


@pytest.fixture(params=DRIVERS)
def ctx(request: pytest.FixtureRequest) -> Iterator[Context]:
    with weir.load([Custom(), compiled("async-external")], device=request.param) as context:
        yield context


def state_of(context: Context) -> CustomState:
    state = context.module_state("custom")
    assert isinstance(state, CustomState)
    return state


def view(context: Context) -> BufferView:
    return BufferView.from_numpy(X, context.devices[0].allocator)


def fences(device: Device) -> tuple[Fence, Fence]:
    """A reached wait fence and a fresh signal fence, each on its own semaphore (a failure
    fails a whole semaphore, so sharing one would fail the wait fence too)."""
    wait = Fence.create(device.create_semaphore(0), 1)
    wait.signal()
    return wait, Fence.create(device.create_semaphore(0), 1)


def chain(device: Device, after: Fence) -> Fence:
    """A queue operation waiting on `after`; returns its signal fence."""
    done = Fence.create()
    device.queue_barrier(after, done)
    return done


def fails_with(fence: Fence, message: str) -> None:
    with pytest.raises(RuntimeFault) as info:
        fence.wait(HANG_GUARD_S)
    assert str(info.value) == message


def assert_every_dependent_fails(context: Context, signal: Fence, message: str,
                                 pending: list[Fence]) -> None:
    """The signal fence, operations chained on it before and after it failed, and a second
    export called with it as its wait fence all fail with `message`."""
    device = context.devices[0]
    fails_with(signal, message)
    for fence in pending + [chain(device, signal)]:
        fails_with(fence, message)
    second = Fence.create(device.create_semaphore(0), 1)
    context.lookup("prog.plain").invoke_async([view(context)], signal, second)
    fails_with(second, message)


def assert_context_still_works(context: Context) -> None:
    """A fresh call gives the right answer and every local-task worker is alive and working."""
    state_of(context).mode = "ok"
    device = context.devices[0]
    assert np.array_equal(context.lookup("prog.main")(X), EXPECTED)
    assert np.array_equal(context.lookup("prog.with_sync")(X), EXPECTED)
    if isinstance(device, LocalTaskDevice):
        prefix = f"{device._name}-worker-"
        workers = [t for t in threading.enumerate() if t.name.startswith(prefix)]
        assert sorted(t.name for t in workers) == [
            f"{prefix}{i}" for i in range(device.options.worker_count)]
        assert all(t.is_alive() for t in workers)
        # Enough independent work for every worker, all of it finishing.
        done = [Fence.create() for _ in range(4 * device.options.worker_count)]
        buffers = [device.allocator.allocate(4) for _ in done]
        for fence, buffer in zip(done, buffers):
            device.queue_fill(None, fence, buffer, 0, 4, b"\x07")
        assert all(f.wait(HANG_GUARD_S) for f in done)
        assert all(b.data.tolist() == [7] * 4 for b in buffers)


def pending_on(context: Context, signal: Fence) -> list[Fence]:
    """On local-task, operations queued on `signal` before anything failed (local-sync would
    wait for it inline, so there they are chained only afterwards)."""
    device = context.devices[0]
    return [chain(device, signal)] if isinstance(device, LocalTaskDevice) else []


# --- an exception inside a module written in Python ---------------------------------------------


def test_a_coarse_fences_import_that_raises(ctx: Context) -> None:
    state_of(ctx).mode = "raise"
    main = ctx.lookup("prog.main")
    message = "custom.call.async: ValueError: boom"
    wait, signal = fences(ctx.devices[0])
    pending = pending_on(ctx, signal)
    with pytest.raises(RuntimeFault, match=f"^{re.escape(message)}$"):
        main.invoke_async([view(ctx)], wait, signal)
    # The import's own signal fence carries it too, for anything the program queued on it.
    with pytest.raises(RuntimeFault, match=f"^{re.escape(message)}$"):
        state_of(ctx).signals[-1].wait(0)
    assert_every_dependent_fails(ctx, signal, message, pending)
    with pytest.raises(RuntimeFault, match=f"^{re.escape(message)}$"):
        main(X)  # the synchronous form of the same call
    assert_context_still_works(ctx)


def test_a_sync_import_that_raises(ctx: Context) -> None:
    state_of(ctx).mode = "raise"
    message = "custom.sync_double: ValueError: boom"
    wait, signal = fences(ctx.devices[0])
    pending = pending_on(ctx, signal)
    with pytest.raises(RuntimeFault, match=f"^{re.escape(message)}$"):
        ctx.lookup("prog.with_sync").invoke_async([view(ctx)], wait, signal)
    assert_every_dependent_fails(ctx, signal, message, pending)
    assert_context_still_works(ctx)


@pytest.mark.parametrize("driver", DRIVERS)
def test_a_sync_call_of_a_raising_import_under_the_synchronous_abi(driver: str) -> None:
    with weir.load([Custom(), compiled("async-internal")], device=driver) as context:
        state_of(context).mode = "raise"
        for name, call in (("prog.main", "custom.call.async"),
                           ("prog.awaits", "custom.awaited"),
                           ("prog.with_sync", "custom.sync_double")):
            with pytest.raises(RuntimeFault, match=f"^{re.escape(call)}: ValueError: boom$"):
                context.lookup(name)(X)
        assert_context_still_works(context)


def test_work_the_module_queued_fails(ctx: Context) -> None:
    """The import returns normally; the dispatch it queued raises on the device."""
    state_of(ctx).mode = "fail_work"
    message = "dispatch 'custom::double' failed: ValueError: boom in the work"
    wait, signal = fences(ctx.devices[0])
    pending = pending_on(ctx, signal)
    ctx.lookup("prog.main").invoke_async([view(ctx)], wait, signal)
    assert_every_dependent_fails(ctx, signal, message, pending)
    with pytest.raises(RuntimeFault, match=f"^{re.escape(message)}$"):
        ctx.lookup("prog.awaits")(X)  # awaited on the host inside the call
    assert_context_still_works(ctx)


# --- a failed fence -------------------------------------------------------------------------------


def test_a_failed_wait_fence_given_to_an_async_external_call(ctx: Context) -> None:
    device = ctx.devices[0]
    message = "producer: input corrupted"
    wait = Fence.create(device.create_semaphore(0), 1)
    signal = Fence.create(device.create_semaphore(0), 1)
    pending = pending_on(ctx, signal)
    if isinstance(device, LocalTaskDevice):
        # Fails after the call queued its work behind it: the failure must travel the queue.
        ctx.lookup("prog.main").invoke_async([view(ctx)], wait, signal)
        assert signal.wait(0) is False
        wait.fail(message)
    else:
        wait.fail(message)  # local-sync waits inline: fail it first
        ctx.lookup("prog.main").invoke_async([view(ctx)], wait, signal)
    assert_every_dependent_fails(ctx, signal, message, pending)
    assert_context_still_works(ctx)


# --- a failing dispatch ---------------------------------------------------------------------------


def test_a_failing_dispatch(ctx: Context) -> None:
    """A real dispatch of the compiled program's first executable with an input binding four
    times too small: the reference kernel refuses the out-of-bounds read."""
    device = ctx.devices[0]
    module = ctx.module("prog")
    image = module.image  # type: ignore[attr-defined]
    exe_def = image.executables[0]
    variant = exe_def.variants[0]
    executable = ctx.instance.executable_loaders.load(
        variant.format, image.segments[variant.segment], name=exe_def.name)
    small, out = device.allocator.allocate(4), device.allocator.allocate(16)
    cb = device.create_command_buffer()
    cb.dispatch(executable, 0, (1, 1, 1), (4,), (small, out))
    cb.finalize()
    name = f"{exe_def.name}::{exe_def.entry_points[0]}"
    failed = Fence.create(device.create_semaphore(0), 1)
    pending = pending_on(ctx, failed)
    device.queue_execute(None, failed, [cb])
    with pytest.raises(RuntimeFault) as info:
        failed.wait(HANG_GUARD_S)
    message = str(info.value)
    assert message.startswith(f"dispatch '{name}' failed: ")
    assert "outside the buffer of 4 bytes" in message
    # An async-external call waiting on the failed dispatch, and everything after it.
    signal = Fence.create(device.create_semaphore(0), 1)
    ctx.lookup("prog.main").invoke_async([view(ctx)], failed, signal)
    for fence in pending:
        fails_with(fence, message)
    assert_every_dependent_fails(ctx, signal, message, pending_on(ctx, signal))
    assert_context_still_works(ctx)
