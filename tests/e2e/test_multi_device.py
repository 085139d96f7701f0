"""Programs spread over several devices, end to end from Python: the seed 004 multiply on two
devices and a diamond on three, with transfers elided (one shared allocation) and kept (queue
copies between the devices), in both execution models and on both local drivers. Where work ran
is read from each device's own statistics, never inferred from timing."""

from __future__ import annotations

from pathlib import Path

import numpy as np
import pytest

import weir.api as weir
from weir.errors import CompileError, LoadError, RuntimeFault, UsageError
from weir.runtime.api import BufferView, Fence

SAMPLES = Path(__file__).resolve().parents[2] / "samples" / "multi_device"
DONE_S = 10.0  # bound for work the test has released; reached in milliseconds in practice
DRIVERS = ["local-task", "local-sync"]
MODELS = ["async-internal", "async-external"]

X = np.array([10, 11, 12, 13], dtype=np.float32)
MUL_EXPECTED = np.array([0, 55, 144, 273], dtype=np.float32)
DISPATCH_0 = "multi_device_mul_dispatch_0::multi_device_mul_dispatch_0"
DISPATCH_1 = "multi_device_mul_dispatch_1::multi_device_mul_dispatch_1"


def _devices(*names: str) -> tuple[weir.TargetDevice, ...]:
    return tuple(weir.TargetDevice(n, "local", i) for i, n in enumerate(names))


def _compile(source: str, devices: tuple[weir.TargetDevice, ...], model: str = "async-external",
             elide: bool = True, filename: str = "program.mlir") -> bytes:
    options = weir.CompilerOptions(
        execution_model=model, target_devices=devices,  # type: ignore[arg-type]
        disabled_passes=frozenset() if elide else frozenset({"elide-transfers"}))
    return weir.compile_string(source, filename, options)


def _dispatches(ctx: weir.Context) -> list[dict[str, int]]:
    return [d.statistics.snapshot()["dispatches_by_entry_point"] for d in ctx.devices]


def _copies(ctx: weir.Context) -> list[int]:
    return [d.statistics.snapshot()["queue_submitted"]["copy"] for d in ctx.devices]


MUL = (SAMPLES / "multi_device_mul.mlir").read_text()
DIAMOND = (SAMPLES / "diamond.mlir").read_text()


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("elide", [True, False], ids=["elided", "copied"])
def test_each_dispatch_runs_on_its_device(driver: str, model: str, elide: bool) -> None:
    program = _compile(MUL, _devices("device_a", "device_b"), model, elide)
    ctx = weir.load([program], device=[driver, driver])
    result = ctx.lookup_function("multi_device_mul")(X)
    np.testing.assert_array_equal(result, MUL_EXPECTED)
    assert _dispatches(ctx) == [{DISPATCH_0: 1}, {DISPATCH_1: 1}]
    # Elided: the devices share one allocation. Copied: device_a pushes its result to device_b,
    # and device_b pushes the final result back to device_a.
    assert _copies(ctx) == ([0, 0] if elide else [1, 1])


def test_mixed_drivers_keep_order_across_devices() -> None:
    program = _compile(MUL, _devices("device_a", "device_b"), elide=False)
    ctx = weir.load([program], device=["local-task", "local-sync"])
    fn = ctx.lookup_function("multi_device_mul")
    for _ in range(20):
        np.testing.assert_array_equal(fn(X), MUL_EXPECTED)
    assert _dispatches(ctx) == [{DISPATCH_0: 20}, {DISPATCH_1: 20}]


@pytest.mark.parametrize("elide", [True, False], ids=["elided", "copied"])
def test_nothing_runs_on_either_device_before_the_wait_fence(elide: bool) -> None:
    program = _compile(MUL, _devices("device_a", "device_b"), elide=elide)
    ctx = weir.load([program], device=["local-task", "local-task"])
    fn = ctx.lookup_function("multi_device_mul")
    wait, signal = Fence.create(), Fence.create()
    (result,) = fn.invoke_async([BufferView.from_numpy(X)], wait=wait, signal=signal)
    assert signal.wait(0) is False
    assert _dispatches(ctx) == [{}, {}]
    wait.signal()
    assert signal.wait(DONE_S)
    np.testing.assert_array_equal(result.to_numpy(), MUL_EXPECTED)
    assert _dispatches(ctx) == [{DISPATCH_0: 1}, {DISPATCH_1: 1}]


def test_a_failed_wait_fence_reaches_the_caller_through_both_devices() -> None:
    program = _compile(MUL, _devices("device_a", "device_b"), elide=False)
    ctx = weir.load([program], device=["local-task", "local-task"])
    fn = ctx.lookup_function("multi_device_mul")
    wait, signal = Fence.create(), Fence.create()
    fn.invoke_async([BufferView.from_numpy(X)], wait=wait, signal=signal)
    wait.fail("camera frame dropped")
    with pytest.raises(RuntimeFault, match="camera frame dropped"):
        signal.wait(DONE_S)
    assert _dispatches(ctx) == [{}, {}]
    # The context still works for the next call.
    np.testing.assert_array_equal(fn(X), MUL_EXPECTED)


@pytest.mark.parametrize("driver", DRIVERS)
@pytest.mark.parametrize("model", MODELS)
@pytest.mark.parametrize("elide", [True, False], ids=["elided", "copied"])
def test_diamond_over_three_devices(driver: str, model: str, elide: bool) -> None:
    program = _compile(DIAMOND, _devices("device_a", "device_b", "device_c"), model, elide)
    ctx = weir.load([program], device=[driver] * 3)
    x = np.array([1, 2, 3, 4], dtype=np.float32)
    np.testing.assert_array_equal(ctx.lookup_function("diamond")(x), (2 * x) ** 2 - (2 * x + 1))
    per_device = [sum(d.values()) for d in _dispatches(ctx)]
    assert per_device == [2, 1, 1]  # a: double and join; b: +1; c: square
    # a -> b and a -> c pushed by a; b -> a by b; c -> a by c.
    assert _copies(ctx) == ([0, 0, 0] if elide else [2, 1, 1])


IMPLICIT = """
func.func @add(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
               %y: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %sum = arith.addf %x, %y : tensor<4xf32>
  return %sum : tensor<4xf32>
}
"""


@pytest.mark.parametrize("elide", [True, False], ids=["elided", "copied"])
def test_values_used_on_another_device_move_there_without_being_asked(elide: bool) -> None:
    program = _compile(IMPLICIT, _devices("device_a", "device_b"), elide=elide)
    ctx = weir.load([program], device=["local-task", "local-task"])
    y = np.array([1, 2, 3, 4], dtype=np.float32)
    np.testing.assert_array_equal(ctx.lookup_function("add")(X, y), X + y)
    # The add runs where its first operand lives; y comes over from device_b, and the sum goes
    # back to device_b where the caller expects it.
    assert [sum(d.values()) for d in _dispatches(ctx)] == [1, 0]
    assert _copies(ctx) == ([0, 0] if elide else [1, 1])


def test_one_device_too_few_names_the_missing_device() -> None:
    program = _compile(MUL, _devices("device_a", "device_b"))
    with pytest.raises(LoadError, match="device 'device_b' has none bound"):
        weir.load([program], device=["local-task"])


def test_an_undeclared_device_is_a_compile_error_at_its_use() -> None:
    with pytest.raises(CompileError, match=r"device @device_b is not a target device") as e:
        _compile(MUL, _devices("device_a"), filename="multi.mlir")
    assert str(e.value).startswith("multi.mlir:19:3: error:")


def test_target_devices_are_checked_in_the_api() -> None:
    with pytest.raises(UsageError, match="device 'a' is named twice"):
        _compile(MUL, (weir.TargetDevice("a"), weir.TargetDevice("a", ordinal=1)))
    with pytest.raises(UsageError, match="kind 'cuda', which is not supported"):
        _compile(MUL, (weir.TargetDevice("a", "cuda"),))


INTO = """
func.func @into(%x: tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_a>},
                %out: tensor<4xf32> {iree.abi.output = 0 : index,
                                     iree.abi.affinity = #hal.device.promise<@device_b>})
    -> (tensor<4xf32> {iree.abi.affinity = #hal.device.promise<@device_b>}) {
  %0 = arith.mulf %x, %x : tensor<4xf32>
  return %0 : tensor<4xf32>
}
"""


@pytest.mark.parametrize("elide", [True, False], ids=["elided", "copied"])
def test_output_storage_on_another_device_receives_the_result(elide: bool) -> None:
    program = _compile(INTO, _devices("device_a", "device_b"), "async-internal", elide)
    ctx = weir.load([program], device=["local-task", "local-task"])
    storage = BufferView.from_numpy(np.zeros(4, np.float32), ctx.devices[1].allocator)
    (result,) = ctx.lookup_function("into").invoke_views([BufferView.from_numpy(X), storage])
    assert result.buffer is storage.buffer  # the caller's storage, not a copy of it
    np.testing.assert_array_equal(storage.to_numpy(), X * X)
    assert [sum(d.values()) for d in _dispatches(ctx)] == [1, 0]
