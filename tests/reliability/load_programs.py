"""What the load, memory-growth and leak-counter tests share: one small program (an elementwise
multiply of 4xf32 and a 4x8 @ 8x4 matmul, plus a 1 MiB multiply whose output takes the buffer
pool's path), compiled once per test session per target and execution model, and inputs that
differ on every call yet have exact f32 results, so each result is compared exactly with numpy.

Also what the memory-growth worker process runs (memory_growth_worker.py): `call` makes one
invocation the way each test variant does, synchronously or with the caller's own fences."""

from __future__ import annotations

import gc

from typing import Any

import numpy as np

from weir.runtime.api import BufferView, Fence, Function, runtime_statistics
from weir.runtime.hal.statistics import RuntimeStatistics

PROGRAM = """
func.func @mul(%a: tensor<4xf32>, %b: tensor<4xf32>) -> tensor<4xf32> {
  %0 = arith.mulf %a, %b : tensor<4xf32>
  return %0 : tensor<4xf32>
}
func.func @matmul(%a: tensor<4x8xf32>, %b: tensor<8x4xf32>) -> tensor<4x4xf32> {
  %z = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x4xf32>
  %f = linalg.fill ins(%z : f32) outs(%e : tensor<4x4xf32>) -> tensor<4x4xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4x8xf32>, tensor<8x4xf32>)
                     outs(%f : tensor<4x4xf32>) -> tensor<4x4xf32>
  return %r : tensor<4x4xf32>
}
func.func @big_mul(%a: tensor<262144xf32>, %b: tensor<262144xf32>) -> tensor<262144xf32> {
  %0 = arith.mulf %a, %b : tensor<262144xf32>
  return %0 : tensor<262144xf32>
}
"""

TARGETS = ("reference", "llvm-cpu")
MODELS = ("async-internal", "async-external")
BIG_ELEMENTS = 262144  # 1 MiB of f32: at the buffer pool's threshold
DONE_S = 30.0  # bound for work the test has released (reached in milliseconds in practice)

_compiled: dict[tuple[str, str], bytes] = {}
_BIG_FACTORS = np.arange(BIG_ELEMENTS, dtype=np.float32) % 16  # read-only use: made once


def compiled(target: str, model: str) -> bytes:
    """The program's module file, compiled once per session per (target, model)."""
    key = (target, model)
    if key not in _compiled:
        import weir.api as weir  # the compiler: only the parent test process needs it

        options = weir.CompilerOptions(target_backends=(target,),
                                       execution_model=model)  # type: ignore[arg-type]
        _compiled[key] = weir.compile_string(PROGRAM, "load_programs.mlir", options)
    return _compiled[key]


def inputs(function: str, seed: int) -> tuple[np.ndarray, np.ndarray]:
    """Arguments that differ for every seed (integers small enough that every product and sum
    is exact in f32, so a wrong or mixed-up result cannot pass as rounding)."""
    if function == "mul":
        return (np.arange(4, dtype=np.float32) + np.float32(seed % 100_000),
                np.array([1, 2, 3, 4], np.float32) * np.float32(seed % 13 + 1))
    if function == "matmul":
        grid = np.arange(32)
        return (((grid + seed) % 17 - 8).astype(np.float32).reshape(4, 8),
                ((grid * 3 + seed // 7) % 11 - 5).astype(np.float32).reshape(8, 4))
    if function == "big_mul":
        return np.full(BIG_ELEMENTS, seed % 1000, np.float32), _BIG_FACTORS
    raise KeyError(function)


def expected(function: str, args: tuple[np.ndarray, np.ndarray]) -> np.ndarray:
    a, b = args
    return a @ b if function == "matmul" else a * b


def call(fn: Function, args: tuple[np.ndarray, ...], own_fences: bool) -> np.ndarray:
    """One invocation. `own_fences` (async-external): the caller's wait and signal fences; the
    call must return before anything ran (its wait fence is not signalled yet), and the result
    is read once the signal fence is reached."""
    if not own_fences:
        result: Any = fn(*args)
        return result  # type: ignore[no-any-return]
    allocator = fn.context.devices[0].allocator
    views = [BufferView.from_numpy(a, allocator) for a in args]
    wait, signal = Fence.create(), Fence.create()
    (out,) = fn.invoke_async(views, wait, signal)
    if signal.wait(0):
        raise AssertionError(f"{fn.name}: its signal fence was reached before its wait fence")
    wait.signal()
    if not signal.wait(DONE_S):
        raise AssertionError(f"{fn.name}: not done {DONE_S:g} s after its wait fence")
    return out.to_numpy_copy()  # type: ignore[no-any-return]


def settled() -> RuntimeStatistics:
    """The process-wide counts once garbage (cycles of finished calls) is collected."""
    gc.collect()
    return runtime_statistics()
