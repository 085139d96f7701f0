"""Arrays through a synchronous `Function.__call__` without copies: a declared tensor argument
is lent to the call (the buffer is the caller's memory, read-only) and a result only this call
made comes back as the caller's array. Each test checks the copy semantics this must keep:
later changes on either side are not seen by the other, a program that keeps an argument keeps
its own copy, and no two results share memory."""

from __future__ import annotations

import tracemalloc
from typing import Any

import numpy as np
import pytest

import weir.api as weir
from weir.runtime.hal.buffer_view import BufferView
from weir.runtime.vm.native_module import NativeModule, export

PROGRAM = """
func.func private @keeper.keep(tensor<4096xf32>) -> tensor<4096xf32>
func.func @double(%x: tensor<131072xf32>) -> tensor<131072xf32> {
  %0 = arith.addf %x, %x : tensor<131072xf32>
  return %0 : tensor<131072xf32>
}
func.func @same(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  return %x : tensor<4096xf32>
}
func.func @twice(%x: tensor<4096xf32>) -> (tensor<4096xf32>, tensor<4096xf32>) {
  %0 = arith.addf %x, %x : tensor<4096xf32>
  return %0, %0 : tensor<4096xf32>, tensor<4096xf32>
}
func.func @kept_result(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %0 = arith.addf %x, %x : tensor<4096xf32>
  %1 = func.call @keeper.keep(%0) : (tensor<4096xf32>) -> tensor<4096xf32>
  return %1 : tensor<4096xf32>
}
func.func @kept(%x: tensor<4096xf32>) -> tensor<4096xf32> {
  %0 = func.call @keeper.keep(%x) : (tensor<4096xf32>) -> tensor<4096xf32>
  %1 = arith.addf %0, %0 : tensor<4096xf32>
  return %1 : tensor<4096xf32>
}
"""
TARGETS = ["llvm-cpu", "reference"]


class Keeper(NativeModule):
    """Keeps the view it is given, as a module with state may, and says whether it was the
    caller's memory while the call ran."""

    module_name = "keeper"

    def create_state(self, context: Any) -> dict[str, Any]:
        return {}

    @export("0r_r")
    def keep(self, state: dict[str, Any], view: BufferView) -> BufferView:
        state["view"] = view
        state["lent"] = view.buffer.borrowed
        return view


def _context(target: str) -> weir.Context:
    module = weir.compile_string(PROGRAM, "lent.mlir", weir.CompilerOptions(
        target_backends=(target,)))
    instance = weir.Instance()
    return weir.Context(instance, devices=[instance.create_device("local-sync")],
                        modules=[Keeper(), weir.load_module_bytes(module)], owns_devices=True)


@pytest.fixture(scope="module", params=TARGETS)
def context(request: pytest.FixtureRequest) -> weir.Context:
    return _context(request.param)


def test_an_argument_is_lent_and_the_result_handed_over() -> None:
    """With one copy in and one out, a 512 KiB call would allocate 1.5 MiB; lent and handed over,
    only the result's buffer. (On llvm-cpu: the reference target's kernels allocate numpy
    temporaries of their own.)"""
    double = _context("llvm-cpu").lookup_function("double")
    x = np.arange(131072, dtype=np.float32)
    double(x)  # compiles nothing later, warms the argument checks
    tracemalloc.start()
    try:
        y = double(x)
        _, peak = tracemalloc.get_traced_memory()
    finally:
        tracemalloc.stop()
    assert peak < 1.5 * x.nbytes, peak
    np.testing.assert_array_equal(y, x * 2)
    x[:] = -1
    y[:] = 5  # the caller's array: writable, and nothing else sees it
    np.testing.assert_array_equal(double(x), np.full(131072, -2, np.float32))
    assert (y == 5).all()


def test_an_argument_returned_as_it_is_comes_back_as_a_copy(context: weir.Context) -> None:
    x = np.arange(4096, dtype=np.float32)
    out = context.lookup_function("same")(x)
    assert not np.shares_memory(out, x)
    out[:] = 9
    np.testing.assert_array_equal(x, np.arange(4096, dtype=np.float32))


def test_two_results_over_one_buffer_are_two_arrays(context: weir.Context) -> None:
    a, b = context.lookup_function("twice")(np.arange(4096, dtype=np.float32))
    assert not np.shares_memory(a, b)
    a[:] = 0
    np.testing.assert_array_equal(b, np.arange(4096, dtype=np.float32) * 2)


def test_an_argument_a_module_keeps_is_its_own_copy(context: weir.Context) -> None:
    x = np.arange(4096, dtype=np.float32)  # 16 KiB: lent (smaller arrays are copied)
    np.testing.assert_array_equal(context.lookup_function("kept")(x), x * 2)
    state = context.module_state("keeper")
    assert state["lent"]  # the caller's memory during the call ...
    x[:] = -7  # ... and not after it
    np.testing.assert_array_equal(state["view"].to_numpy(), np.arange(4096, dtype=np.float32))
    assert not state["view"].buffer.borrowed


def test_a_result_a_module_keeps_comes_back_as_a_copy(context: weir.Context) -> None:
    x = np.arange(4096, dtype=np.float32)
    out = context.lookup_function("kept_result")(x)
    np.testing.assert_array_equal(out, x * 2)
    out[:] = -1  # the caller's array, apart from the buffer the module holds
    np.testing.assert_array_equal(context.module_state("keeper")["view"].to_numpy(), x * 2)
