"""`Function.call_async`: weir calls awaited from asyncio, on local-task.

The pending calls are held by imports written in Python whose completion the test controls (a
fence or an event it releases from a coroutine on the same loop), so "the loop is not blocked" is
shown by the release running at all: a blocking `call_async` would deadlock, which the bounded
waits below (the device's `wait_timeout_s`, the import's own wait, `asyncio.wait_for`) turn into
a failure. Nothing sleeps."""

from __future__ import annotations

import asyncio
import gc
import threading
import weakref
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import weir.api as weir
from weir.errors import DeadlineExceeded, InputError, RuntimeFault, UsageError, WeirError
from weir.runtime.api import (
    BufferView,
    Context,
    Fence,
    Function,
    Instance,
    NativeModule,
    export,
    runtime_statistics,
)
from weir.runtime.hal.drivers.local_task import LocalTaskOptions
from weir.runtime.vm.python_module_loader import load_python_module

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
CUSTOM = f"{SAMPLES / 'custom_module_async' / 'custom_module.py'}:CustomModule"
ASYNC = weir.CompilerOptions(execution_model="async-external")
DONE_S = 10.0  # bound for work the test has released; reached in milliseconds in practice

X = np.array([1, 2, 3, 4, 5], dtype=np.int32)

# The import's result is the program's result: once the import signals, only barriers are left,
# and local-task runs those on the signalling thread before `signal()` returns.
GATED = """
module @gated {
  func.func private @custom.call.async(tensor<?xi32>) -> tensor<?xi32> attributes {
    iree.abi.model = "coarse-fences",
    nosideeffects
  }
  func.func @main(%arg0: tensor<?xi32>) -> tensor<?xi32> {
    %0 = call @custom.call.async(%arg0) : (tensor<?xi32>) -> tensor<?xi32>
    return %0 : tensor<?xi32>
  }
}
"""

# A synchronous-ABI program whose import blocks its caller until the test releases it.
BLOCKING = """
module @blocking {
  func.func private @custom.block(tensor<?xi32>) -> tensor<?xi32>
  func.func @main(%arg0: tensor<?xi32>) -> tensor<?xi32> {
    %0 = call @custom.block(%arg0) : (tensor<?xi32>) -> tensor<?xi32>
    return %0 : tensor<?xi32>
  }
}
"""

SCALARS = "func.func @scale(%n: i32, %x: f32) -> i32 {\n  return %n : i32\n}\n"


class Gated(NativeModule):
    """`custom.call.async` returns at once; its work (doubling the input, then signalling) runs
    when the test reaches `gate`, on the thread that reaches it; a failed gate fails the call
    with the gate's message."""

    module_name = "custom"

    def __init__(self, gate: Fence, expected_calls: int = 1) -> None:
        super().__init__()
        self.gate = gate
        self.signals: list[Fence] = []  # the signal fence of every call, in call order
        self._expected_calls = expected_calls
        self.called = asyncio.Event()  # set once `expected_calls` calls have returned

    @export("0rrr_r", name="call.async", model="coarse-fences")
    def call_async(self, state: Any, arg: BufferView, wait: Fence,
                   signal: Fence) -> BufferView:
        result = BufferView.from_numpy(np.zeros(arg.shape, np.int32))

        def work(failure: str | None) -> None:
            try:
                if failure is None and not wait.wait(0):
                    failure = "custom.call.async: the input was not ready when the gate opened"
            except WeirError as e:
                failure = str(e)
            if failure is not None:
                signal.fail(failure)
                return
            result.to_numpy()[...] = arg.to_numpy() * 2
            signal.signal()

        for sem, value in self.gate.points:
            sem.on_reached(value, work)
        self.signals.append(signal)
        if len(self.signals) == self._expected_calls:
            self.called.set()  # the import runs on the loop's thread (call_async invokes there)
        return result


class Blocking(NativeModule):
    """A synchronous import that returns its input doubled once `release` is set, and fails if
    that does not happen within DONE_S (a `call_async` that blocked the loop would never let the
    test set it)."""

    module_name = "custom"

    def __init__(self) -> None:
        super().__init__()
        self.release = threading.Event()
        self.threads: list[threading.Thread] = []

    @export("0r_r", name="block")
    def block(self, state: Any, arg: BufferView) -> BufferView:
        self.threads.append(threading.current_thread())
        if not self.release.wait(DONE_S):
            raise RuntimeFault("custom.block: not released: the event loop was blocked")
        return BufferView.from_numpy(arg.to_numpy() * 2)


@pytest.fixture(scope="module")
def example() -> bytes:
    source = (SAMPLES / "custom_module_async" / "example.mlir").read_text()
    return weir.compile_string(source, "example.mlir", ASYNC)


@pytest.fixture(scope="module")
def gated() -> bytes:
    return weir.compile_string(GATED, "gated.mlir", ASYNC)


def _context(program: bytes, custom: NativeModule | None = None) -> Context:
    instance = Instance()
    device = instance.create_device("local-task", LocalTaskOptions(wait_timeout_s=DONE_S))
    return Context(instance, devices=[device],
                   modules=[custom or load_python_module(CUSTOM), weir.load_module_bytes(program)])


def _gated(program: bytes, expected_calls: int = 1) -> tuple[Function, Gated, Fence]:
    """`gated.main` and the fence that opens its gate. The gate is reached through a device
    barrier, so when the test never gets to open it (a `call_async` that blocked the loop) the
    device fails it after DONE_S and every gated call ends in an error instead of a hang."""
    instance = Instance()
    device = instance.create_device("local-task", LocalTaskOptions(wait_timeout_s=DONE_S))
    gate, opened = Fence.create(), Fence.create()
    device.queue_barrier(gate, opened)
    module = Gated(opened, expected_calls)
    context = Context(instance, devices=[device],
                      modules=[module, weir.load_module_bytes(program)])
    return context.lookup("gated.main"), module, gate


def test_one_call_and_64_gathered_calls_return_their_results(example: bytes) -> None:
    main = _context(example).lookup("example.main")

    async def scenario() -> tuple[Any, list[Any]]:
        one = await main.call_async(X)
        many = await asyncio.wait_for(
            asyncio.gather(*(main.call_async(X + i) for i in range(64))), DONE_S)
        return one, many

    one, many = asyncio.run(scenario())
    assert isinstance(one, np.ndarray)
    np.testing.assert_array_equal(one, (X * X * 2) ** 2)
    assert len(many) == 64
    for i, result in enumerate(many):
        np.testing.assert_array_equal(result, ((X + i) ** 2 * 2) ** 2)


def test_64_calls_are_all_in_flight_at_once_without_a_thread_each(gated: bytes) -> None:
    main, module, gate = _gated(gated, expected_calls=64)
    inputs = [(X + i).astype(np.int32) for i in range(64)]
    before = set(threading.enumerate())

    async def scenario() -> tuple[int, set[threading.Thread], list[Any]]:
        calls = [asyncio.create_task(main.call_async(x)) for x in inputs]
        await asyncio.wait_for(module.called.wait(), DONE_S)
        pending = sum(not call.done() for call in calls)
        threads = set(threading.enumerate())
        gate.signal()  # completes all 64 on this thread
        return pending, threads, await asyncio.wait_for(asyncio.gather(*calls), DONE_S)

    pending, threads, results = asyncio.run(scenario())
    assert pending == 64
    # The device starts its deadline monitor for the first operation that has to wait.
    assert [t.name for t in threads - before if not t.name.startswith("weir-local-task")] == []
    for x, result in zip(inputs, results):
        np.testing.assert_array_equal(result, x * 2)


def test_the_loop_runs_other_coroutines_while_a_call_is_pending(gated: bytes) -> None:
    main, module, gate = _gated(gated)
    seen_pending: list[bool] = []

    async def scenario() -> Any:
        call = asyncio.create_task(main.call_async(X))

        async def release() -> None:
            await module.called.wait()  # the call has been made and has returned...
            seen_pending.append(not call.done())  # ...but its result is not there yet
            gate.signal()

        await asyncio.wait_for(release(), DONE_S)
        return await asyncio.wait_for(call, DONE_S)

    result = asyncio.run(scenario())
    assert seen_pending == [True]
    np.testing.assert_array_equal(result, X * 2)


def test_a_cancelled_call_finishes_in_the_background_and_leaves_nothing_behind(
        gated: bytes) -> None:
    main, module, gate = _gated(gated)
    statistics = main.context.devices[0].statistics
    loops: list[weakref.ref[asyncio.AbstractEventLoop]] = []
    gc.collect()
    buffers_before = runtime_statistics()["buffers_alive"]

    async def scenario() -> tuple[int, int, Any]:
        loops.append(weakref.ref(asyncio.get_running_loop()))
        call = asyncio.create_task(main.call_async(X))
        await asyncio.wait_for(module.called.wait(), DONE_S)
        pending_while_queued = statistics.queue_pending
        call.cancel()
        with pytest.raises(asyncio.CancelledError):
            await call
        assert call.cancelled()
        gate.signal()  # the abandoned work runs now, on this thread
        assert module.signals[0].wait(DONE_S)
        pending_after = statistics.queue_pending
        return pending_while_queued, pending_after, await asyncio.wait_for(main.call_async(X),
                                                                           DONE_S)

    pending_while_queued, pending_after, again = asyncio.run(scenario())
    # Queued: the gate's barrier and the one to the call's signal fence.
    assert (pending_while_queued, pending_after) == (2, 0)
    np.testing.assert_array_equal(again, X * 2)  # the context still works
    gc.collect()
    assert loops[0]() is None  # no callback outlived the work holding the loop
    assert runtime_statistics()["buffers_alive"] <= buffers_before  # the dropped results too


@pytest.mark.parametrize("when", ["while pending", "before the call"])
def test_a_failed_import_raises_runtime_fault_with_its_message(gated: bytes, when: str) -> None:
    main, module, gate = _gated(gated)

    async def scenario() -> Any:
        if when == "before the call":
            gate.fail("custom.call.async: sensor offline")
            return await asyncio.wait_for(main.call_async(X), DONE_S)
        call = asyncio.create_task(main.call_async(X))
        await asyncio.wait_for(module.called.wait(), DONE_S)
        gate.fail("custom.call.async: sensor offline")
        return await asyncio.wait_for(call, DONE_S)

    with pytest.raises(RuntimeFault) as raised:
        asyncio.run(scenario())
    assert str(raised.value) == "gated.main: custom.call.async: sensor offline"
    assert main.context.devices[0].statistics.queue_pending == 0


def test_timeouts_raise_and_leave_the_work_to_finish(gated: bytes) -> None:
    main, module, gate = _gated(gated, expected_calls=2)
    statistics = main.context.devices[0].statistics

    async def scenario() -> None:
        with pytest.raises(DeadlineExceeded) as raised:
            await main.call_async(X, timeout=0.01)
        assert str(raised.value) == ("gated.main (timeout 0.01 s): deadline exceeded while "
                                     "waiting for the signal fence of gated.main")
        with pytest.raises(TimeoutError):
            await asyncio.wait_for(main.call_async(X), 0.01)
        with pytest.raises(UsageError, match=r"gated\.main: timeout must be None or a number"):
            await main.call_async(X, timeout=-1)
        assert statistics.queue_pending == 3  # the gate's barrier and one per call
        gate.signal()
        assert all(signal.wait(DONE_S) for signal in module.signals)

    asyncio.run(scenario())
    assert len(module.signals) == 2  # the refused timeout never called the function
    assert statistics.queue_pending == 0


def test_a_synchronous_function_runs_on_the_default_executor() -> None:
    module = Blocking()
    main = _context(weir.compile_string(BLOCKING, "blocking.mlir"), module).lookup("blocking.main")
    assert main.model == "sync"

    async def scenario() -> Any:
        async def release() -> None:  # runs only if the call left the loop free
            module.release.set()

        result, _ = await asyncio.wait_for(asyncio.gather(main.call_async(X), release()),
                                           DONE_S)
        return result

    np.testing.assert_array_equal(asyncio.run(scenario()), X * 2)
    assert len(module.threads) == 1 and module.threads[0] is not threading.main_thread()


@pytest.mark.parametrize("model", ["async-internal", "async-external"])
def test_bad_arguments_raise_the_input_error_of_a_plain_call(model: str) -> None:
    options = weir.CompilerOptions(execution_model=model)
    scale = weir.load([weir.compile_string(SCALARS, "scalars.mlir", options)],
                      device="local-task").lookup_function("scale")
    mul_source = (SAMPLES / "simple_mul" / "simple_mul.mlir").read_text()
    mul = weir.load([weir.compile_string(mul_source, "simple_mul.mlir", options)],
                    device="local-task").lookup_function("simple_mul")
    a = np.ones(4, np.float32)
    cases: list[tuple[Function, tuple[Any, ...]]] = [
        (scale, (1, "x")), (scale, (2.5, 1.0)), (mul, (np.ones(3, np.float32), a)), (mul, (a,))]
    messages = []
    for fn, args in cases:
        with pytest.raises(InputError) as plain:
            fn(*args)
        with pytest.raises(InputError) as awaited:
            asyncio.run(fn.call_async(*args))
        assert str(awaited.value) == str(plain.value)
        messages.append(str(awaited.value))
    assert messages[:3] == [
        "function 'scale': argument 1 (%input1) expects f32, got str 'x'",
        "function 'scale': argument 0 (%input0) expects i32, got float 2.5",
        "function 'simple_mul': argument 0 (%input0) expects 4xf32, got 3xf32"]
    assert asyncio.run(scale.call_async(7, 1.0)) == 7
