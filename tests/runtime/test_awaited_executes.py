"""An execute whose signal fence the program awaits at once is submitted as `awaited`
(vm/awaited_executes.py), and local-task runs such work on the calling thread when it is ready
then, instead of waking a worker to run it while the caller blocks. Work whose wait is still
pending is queued as before, so wait-before-signal order holds; failures still reach the fence."""

from __future__ import annotations

import dataclasses
import threading
from typing import Sequence

import numpy as np
import pytest
from host_executable import HostExecutable
from runtime_builders import mul_module

from weir.errors import RuntimeFault
from weir.format.image import Block, FunctionDef, ModuleImage, Signature
from weir.format.module_file import serialize
from weir.format.vm_isa import Call, Const, Instruction, Return
from weir.runtime.api import Context, Instance, load_module_bytes
from weir.runtime.hal.buffer import Buffer
from weir.runtime.hal.device import Device
from weir.runtime.hal.drivers.local_sync import LocalSyncDevice
from weir.runtime.hal.drivers.local_task import LocalTaskDevice, LocalTaskOptions
from weir.runtime.hal.fence import Fence
from weir.runtime.modules.hal import HalModule, HalState
from weir.runtime.vm.awaited_executes import plan_function

DEADLINE_S = 10.0
CREATE = Call((15,), "hal.fence.create", (6,))
EXECUTE = Call((), "hal.device.queue.execute", (6, 16, 15, (11,)))
AWAIT = Call((), "hal.fence.await", (17, (15,)))


@pytest.mark.parametrize("between, found", [
    ([Const(17, -1)], {0}),  # what the compiler emits
    ([], {0}),
    ([Const(17, -1), Const(15, None)], set()),  # the fence's register written over
    ([Call((18,), "hal.device.get", (5,))], set()),  # another call runs before the await
])
def test_an_execute_is_awaited_only_when_the_next_call_awaits_its_signal(
        between: list[Instruction], found: set[int]) -> None:
    assert _awaited([EXECUTE, *between, AWAIT]) == found


def test_an_await_of_another_or_of_several_fences_is_not_the_executes() -> None:
    other = Call((), "hal.fence.await", (17, (14,)))
    several = Call((), "hal.fence.await", (17, (15, 14)))
    assert _awaited([EXECUTE, other]) == set()
    assert _awaited([EXECUTE, several]) == set()


def _function(body: list[Instruction]) -> FunctionDef:
    return FunctionDef("f", Signature.parse("0_"), 30, (Block((), (*body, Return(()))),))


def _awaited(body: list[Instruction]) -> set[int]:
    [plan] = plan_function(_function(body))
    return plan.awaited


def test_a_fence_made_for_the_pair_alone_fuses_the_three_calls() -> None:
    [plan] = plan_function(_function([CREATE, Const(16, None), EXECUTE, Const(17, -1), AWAIT]))
    assert plan.dropped == {0, 2} and list(plan.fused) == [4]
    assert plan.fused[4].args == (6, 6, 16, (11,), 17)  # fence device, execute's, timeout
    # Read once more (a second await): the fence is not the pair's own.
    [plan] = plan_function(_function([CREATE, EXECUTE, Const(17, -1), AWAIT, AWAIT]))
    assert plan.awaited == {1} and not plan.dropped and not plan.fused


def _with_call_before_await(image: ModuleImage) -> ModuleImage:
    """mul_module with a `hal.device.get` between its execute and its await."""
    return _with_inserted(image, AWAIT, Call((20,), "hal.device.get", (5,)))


def _with_second_await(image: ModuleImage) -> ModuleImage:
    """mul_module awaiting its fence twice: the execute is awaited, the fence not its own."""
    return _with_inserted(image, AWAIT, AWAIT)


def _with_inserted(image: ModuleImage, before: Instruction, ins: Instruction) -> ModuleImage:
    main = image.functions[1]
    body = list(main.blocks[0].instructions)
    body.insert(body.index(before), dataclasses.replace(ins, dsts=(main.num_registers,))
                if isinstance(ins, Call) and ins.dsts else ins)
    changed = dataclasses.replace(main, num_registers=main.num_registers + 1,
                                  blocks=(Block(main.blocks[0].params, tuple(body)),))
    return dataclasses.replace(image, functions=(image.functions[0], changed))


def _context(image: ModuleImage, driver: str) -> Context:
    instance = Instance()
    return Context(instance, devices=[instance.create_device(driver)],
                   modules=[load_module_bytes(serialize(image))], owns_devices=True)


FORMS = {"now": mul_module(), "awaited": _with_second_await(mul_module())}


@pytest.mark.parametrize("driver", ["local-sync", "local-task"])
@pytest.mark.parametrize("form", FORMS)
def test_a_synchronous_call_runs_its_awaited_execute_on_the_calling_thread(
        driver: str, form: str) -> None:
    image = FORMS[form]
    assert load_module_bytes(serialize(image)).translated.variants == (
        (f"hal.device.queue.execute#{form}", "hal.device.queue.execute", form),)
    with _context(image, driver) as ctx:
        a, b = np.arange(4, dtype=np.float32), np.full(4, 3, np.float32)
        mul = ctx.lookup("module.mul")
        np.testing.assert_array_equal(mul(a, b), a * b)
        np.testing.assert_array_equal(mul(b, b), b * b)
        stats = ctx.devices[0].statistics.snapshot()
        # local-task ran the work on this thread: no worker was ever started.
        assert stats["threads_alive"] == 0
        assert stats["queue_submitted"]["execute"] == stats["queue_completed"] == 2
        assert (stats["queue_pending"], stats["in_flight"], stats["in_flight_peak"]) == (0, 0, 1)
        assert stats["dispatches_by_entry_point"] == {"mul_dispatch_0::mul_dispatch_0": 2}


def test_an_execute_not_awaited_at_once_goes_to_the_workers() -> None:
    image = _with_call_before_await(mul_module())
    assert load_module_bytes(serialize(image)).translated.variants == ()
    with _context(image, "local-task") as ctx:
        a = np.arange(4, dtype=np.float32)
        np.testing.assert_array_equal(ctx.lookup("module.mul")(a, a), a * a)
        assert ctx.devices[0].statistics.snapshot()["threads_alive"] > 0


def test_a_shut_down_device_fails_the_fused_call_as_before() -> None:
    ctx = _context(mul_module(), "local-task")
    mul = ctx.lookup("module.mul")
    ctx.close()
    with pytest.raises(RuntimeFault, match="queue execute: device shut down"):
        mul(np.ones(4, np.float32), np.ones(4, np.float32))
    stats = ctx.devices[0].statistics.snapshot()
    assert (stats["queue_failed"], stats["queue_pending"]) == (1, 0)


def _command_buffer(dev: Device, body: object, name: str) -> object:
    cb = dev.create_command_buffer()
    cb.dispatch(HostExecutable({name: body}, name="k"), 0, (1, 1, 1), (), ())  # type: ignore[dict-item]
    cb.finalize()
    return cb


def test_ready_awaited_work_runs_on_the_calling_thread() -> None:
    with LocalTaskDevice(LocalTaskOptions(worker_count=1)) as dev:
        ran_on: list[int] = []

        def note(_: Sequence[Buffer]) -> None:
            ran_on.append(threading.get_ident())

        signal = Fence.create(dev.create_semaphore(0), 1)
        dev.queue_execute_awaited(None, signal, [_command_buffer(dev, note, "note")])
        assert signal.reached() and ran_on == [threading.get_ident()]
        reached_wait = Fence.create(dev.create_semaphore(1), 1)
        again = Fence.create(dev.create_semaphore(0), 1)
        dev.queue_execute_awaited(reached_wait, again, [_command_buffer(dev, note, "note")])
        assert again.reached() and ran_on == [threading.get_ident()] * 2
        assert dev.statistics.snapshot()["dispatches_by_entry_point"] == {"k::note": 2}


def test_awaited_work_with_a_pending_wait_runs_only_after_the_signal() -> None:
    with LocalTaskDevice(LocalTaskOptions(worker_count=1)) as dev:
        ran: list[str] = []
        gate = Fence.create(dev.create_semaphore(0), 1)
        signal = Fence.create(dev.create_semaphore(0), 1)
        dev.queue_execute_awaited(gate, signal,
                                  [_command_buffer(dev, lambda _: ran.append("ran"), "late")])
        assert ran == [] and not signal.reached()  # submitted before its wait is signalled
        gate.signal()
        assert signal.wait(DEADLINE_S) and ran == ["ran"]


def test_failing_awaited_work_fails_its_signal_fence() -> None:
    def boom(_: Sequence[Buffer]) -> None:
        raise RuntimeFault("out of range")

    with LocalTaskDevice(LocalTaskOptions(worker_count=1)) as dev:
        signal = Fence.create(dev.create_semaphore(0), 1)
        dev.queue_execute_awaited(None, signal, [_command_buffer(dev, boom, "boom")])
        with pytest.raises(RuntimeFault, match=r"dispatch 'k::boom' failed: out of range"):
            signal.wait(DEADLINE_S)
        failed_wait = Fence.create(dev.create_semaphore(0), 1)
        failed_wait.fail("upstream broke")
        after = Fence.create(dev.create_semaphore(0), 1)
        dev.queue_execute_awaited(failed_wait, after, [_command_buffer(dev, boom, "boom")])
        with pytest.raises(RuntimeFault, match="upstream broke"):
            after.wait(DEADLINE_S)
        assert dev.statistics.snapshot()["queue_failed"] == 2


@pytest.mark.parametrize("make", [LocalSyncDevice, LocalTaskDevice])
def test_execute_now_runs_ready_work_here_and_raises_its_failure(make: type[Device]) -> None:
    def boom(_: Sequence[Buffer]) -> None:
        raise RuntimeFault("out of range")

    dev = make()
    try:
        ran_on: list[int] = []
        cb = _command_buffer(dev, lambda _: ran_on.append(threading.get_ident()), "note")
        assert dev.execute_now(None, [cb]) and ran_on == [threading.get_ident()]
        with pytest.raises(RuntimeFault, match=r"^dispatch 'k::boom' failed: out of range$"):
            dev.execute_now(Fence(), [_command_buffer(dev, boom, "boom")])
        pending = Fence.create(dev.create_semaphore(0), 1)
        assert not dev.execute_now(pending, [cb])  # a wait to meet: nothing done
        stats = dev.statistics.snapshot()
        assert stats["queue_submitted"]["execute"] == 2 and stats["threads_alive"] == 0
        assert (stats["queue_completed"], stats["queue_failed"], stats["queue_pending"]) == \
            (1, 1, 0)
        assert stats["dispatches_by_entry_point"] == {"k::note": 1}
    finally:
        dev.shutdown()


def test_the_fused_call_falls_back_to_a_fence_when_the_device_cannot_run_it_now() -> None:
    """A wait fence with points (another queue's work): no `execute_now`; the fused call makes
    the fence, submits the execute awaited and awaits it, with the await's errors."""
    with LocalTaskDevice(LocalTaskOptions(worker_count=1)) as dev:
        ctx = Context(Instance(), devices=[dev])
        state, hal = HalState(ctx), HalModule()
        ran_on: list[int] = []
        cb = _command_buffer(dev, lambda _: ran_on.append(threading.get_ident()), "note")
        reached = Fence.create(dev.create_semaphore(1), 1)
        hal.queue_execute_now(state, dev, dev, reached, (cb,), -1)
        assert ran_on == [threading.get_ident()]  # ready when submitted: run here
        failed = Fence.create(dev.create_semaphore(0), 1)
        failed.fail("upstream broke")
        with pytest.raises(RuntimeFault, match="^upstream broke$"):
            hal.queue_execute_now(state, dev, dev, failed, (cb,), -1)
        stats = dev.statistics.snapshot()
        assert (stats["queue_completed"], stats["queue_failed"], stats["queue_pending"]) == \
            (1, 1, 0)
