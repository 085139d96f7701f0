"""Asynchronous execution end to end: async-external programs called from Python with the
caller's own fences, a custom module written in Python in the middle, on local-task. Waits are
zero-timeout checks or bounded waits for work the test has released, never sleeps."""

from __future__ import annotations

import threading
from pathlib import Path
from typing import Any

import numpy as np
import pytest

import weir.api as weir
from weir.errors import InputError, RuntimeFault
from weir.runtime.api import BufferView, Context, Fence, Instance, NativeModule, export
from weir.runtime.vm.python_module_loader import load_python_module

SAMPLES = Path(__file__).resolve().parents[2] / "samples"
CUSTOM = f"{SAMPLES / 'custom_module_async' / 'custom_module.py'}:CustomModule"
ASYNC = weir.CompilerOptions(execution_model="async-external")
DONE_S = 10.0  # bound for work the test has released; reached in milliseconds in practice

X = np.array([1, 2, 3, 4, 5], dtype=np.int32)
EXPECTED = (X * X * 2) ** 2


@pytest.fixture(scope="module")
def example() -> bytes:
    source = (SAMPLES / "custom_module_async" / "example.mlir").read_text()
    return weir.compile_string(source, "example.mlir", ASYNC)


def _context(program: bytes, custom: NativeModule | None = None,
             device: str = "local-task") -> Context:
    instance = Instance()
    return Context(instance, devices=[instance.create_device(device)],
                   modules=[custom or load_python_module(CUSTOM), weir.load_module_bytes(program)])


def test_call_returns_before_any_work_and_completes_when_the_wait_fence_is_signalled(
        example: bytes) -> None:
    custom = load_python_module(CUSTOM)
    ctx = _context(example, custom)
    main = ctx.lookup("example.main")
    wait, signal = Fence.create(), Fence.create()
    (result,) = main.invoke_async([BufferView.from_numpy(X)], wait=wait, signal=signal)
    # Wait-before-signal: everything is queued behind `wait`, nothing has run.
    assert result.shape == (5,) and result.dtype == "i32"
    assert signal.wait(0) is False and not signal.query()
    state = ctx.module_state("custom")
    assert state.completed == 0  # type: ignore[attr-defined]
    wait.signal()
    assert signal.wait(DONE_S)
    assert state.completed == 1  # type: ignore[attr-defined]
    np.testing.assert_array_equal(result.to_numpy(), EXPECTED)


def test_one_timeline_for_wait_and_signal(example: bytes) -> None:
    ctx = _context(example)
    device = ctx.devices[0]
    timeline = device.create_semaphore(0)
    (result,) = ctx.lookup("example.main").invoke_async(
        [BufferView.from_numpy(X)], wait=Fence.create(timeline, 1),
        signal=Fence.create(timeline, 2))
    assert timeline.query() == 0
    timeline.signal(1)
    assert Fence.create(timeline, 2).wait(DONE_S)
    np.testing.assert_array_equal(result.to_numpy(), EXPECTED)


def test_a_failed_wait_fence_reaches_the_signal_fence_with_its_message(example: bytes) -> None:
    ctx = _context(example)
    wait, signal = Fence.create(), Fence.create()
    ctx.lookup("example.main").invoke_async([BufferView.from_numpy(X)], wait, signal)
    wait.fail("camera frame dropped")
    with pytest.raises(RuntimeFault, match="camera frame dropped"):
        signal.wait(DONE_S)


def test_a_failure_in_the_custom_call_reaches_the_caller(example: bytes) -> None:
    class Failing(NativeModule):
        module_name = "custom"

        @export("0rrr_r", name="call.async", model="coarse-fences")
        def call_async(self, state: Any, arg: BufferView, wait: Fence,
                       signal: Fence) -> BufferView:
            signal.fail("custom.call.async: sensor offline")
            return BufferView.from_numpy(np.zeros(arg.shape, np.int32))

    ctx = _context(example, Failing())
    wait, signal = Fence.create(), Fence.create()
    wait.signal()
    ctx.lookup("example.main").invoke_async([BufferView.from_numpy(X)], wait, signal)
    with pytest.raises(RuntimeFault, match="sensor offline"):
        signal.wait(DONE_S)
    # The synchronous form raises the same original message.
    with pytest.raises(RuntimeFault, match="sensor offline"):
        ctx.lookup("example.main")(X)


def test_fences_must_be_fences_and_sync_functions_take_none(example: bytes) -> None:
    ctx = _context(example)
    main = ctx.lookup("example.main")
    with pytest.raises(InputError, match="the wait fence must be a Fence, got int"):
        main.invoke_async([BufferView.from_numpy(X)], 1, Fence.create())  # type: ignore[arg-type]
    sync = weir.compile_string((SAMPLES / "simple_mul" / "simple_mul.mlir").read_text(), "m.mlir")
    simple = weir.load([sync], device="local-task").lookup_function("simple_mul")
    with pytest.raises(InputError, match="synchronous ABI"):
        simple.invoke_async([], Fence.create(), Fence.create())


def test_a_thousand_async_invocations_on_local_task_without_thread_growth(
        example: bytes) -> None:
    ctx = _context(example)
    main = ctx.lookup("example.main")

    def invoke(i: int) -> tuple[BufferView, Fence, np.ndarray]:
        x = (X + i % 7).astype(np.int32)
        wait, signal = Fence.create(), Fence.create()
        wait.signal()
        (result,) = main.invoke_async([BufferView.from_numpy(x)], wait, signal)
        return result, signal, (x * x * 2) ** 2

    for result, signal, expected in [invoke(i) for i in range(20)]:  # warm-up: threads exist
        assert signal.wait(DONE_S)
    before = set(threading.enumerate())
    pending = [invoke(i) for i in range(1000)]
    for result, signal, expected in pending:
        assert signal.wait(DONE_S)
        np.testing.assert_array_equal(result.to_numpy(), expected)
    assert set(threading.enumerate()) <= before


def test_sync_and_async_programs_agree_on_both_drivers(example: bytes) -> None:
    source = (SAMPLES / "simple_mul" / "simple_mul.mlir").read_text()
    a = np.arange(4, dtype=np.float32)
    b = np.full(4, 3.0, np.float32)
    for model in ("async-internal", "async-external"):
        program = weir.compile_string(source, "simple_mul.mlir",
                                      weir.CompilerOptions(execution_model=model))
        for device in ("local-sync", "local-task"):
            fn = weir.load([program], device=device).lookup_function("simple_mul")
            np.testing.assert_array_equal(fn(a, b), a * b)
            assert fn.model == ("coarse-fences" if model == "async-external" else "sync")
