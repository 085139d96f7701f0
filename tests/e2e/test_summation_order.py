"""IREE's arithmetic order, on every target and driver: a matmul sums k in order into its
accumulator (each step rounding, across the GEMM's depth blocks too: 1024 x 0.4f is 409.596, not
the 409.601 of partial sums), a float sum reduction on llvm-cpu reassociates within tolerance of
the exact sum by default and is strictly sequential with --iree-llvmcpu-reassociate-fp-reductions
=false, which the reference target (vmvx) follows too: the two targets then give the same
in-order sums, from the accumulator's initial value."""

from __future__ import annotations

import numpy as np

import weir.api as weir
from conftest import Runner


def sequential_sum(values: np.ndarray, axis: int) -> np.ndarray:
    """The f32 sum along `axis`, rounding after each addition, in index order."""
    moved = np.moveaxis(values.astype(np.float32), axis, 0)
    total = np.zeros(moved.shape[1:], np.float32)
    for row in moved:
        total = (total + row).astype(np.float32)
    return total


MATMUL = """
func.func @f(%a: tensor<4x1024xf32>, %b: tensor<1024x64xf32>) -> tensor<4x64xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<4x64xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<4x64xf32>) -> tensor<4x64xf32>
  %r = linalg.matmul ins(%a, %b : tensor<4x1024xf32>, tensor<1024x64xf32>)
                     outs(%c : tensor<4x64xf32>) -> tensor<4x64xf32>
  return %r : tensor<4x64xf32>
}
"""


def test_matmul_sums_k_in_order(run: Runner) -> None:
    # A = 1: every product is exact, so fused or not, only the order of the sums decides.
    a = np.ones((4, 1024), np.float32)
    b = np.random.default_rng(0).uniform(0.1, 1.0, (1024, 64)).astype(np.float32)
    b[:, 0] = np.float32(0.4)
    got = np.asarray(run(MATMUL, "f", a, b))
    expected = np.broadcast_to(sequential_sum(b, 0), (4, 64))
    np.testing.assert_array_equal(got, expected)
    assert abs(got[0, 0] - 409.596) <= 1e-4  # IREE's large_linalg_matmul value and tolerance


SUM = """
func.func @f(%x: tensor<2x40960xf32>) -> tensor<2xf32> {
  %zero = arith.constant 0.0 : f32
  %e = tensor.empty() : tensor<2xf32>
  %c = linalg.fill ins(%zero : f32) outs(%e : tensor<2xf32>) -> tensor<2xf32>
  %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                        affine_map<(d0, d1) -> (d0)>],
                       iterator_types = ["parallel", "reduction"]}
      ins(%x : tensor<2x40960xf32>) outs(%c : tensor<2xf32>) {
  ^bb0(%in: f32, %acc: f32):
    %s = arith.addf %in, %acc : f32
    linalg.yield %s : f32
  } -> tensor<2xf32>
  return %r : tensor<2xf32>
}
"""
X = np.full((2, 40960), 0.001, np.float32)


def test_sum_reduction_lands_near_the_exact_sum(run: Runner) -> None:
    got = np.asarray(run(SUM, "f", X))
    np.testing.assert_allclose(got, [40.96, 40.96], rtol=0, atol=1e-4)


def _llvm_cpu_sum(reassociate: bool) -> np.ndarray:
    options = weir.CompilerOptions(target_backends=("llvm-cpu",),
                                   llvmcpu_reassociate_fp_reductions=reassociate)
    ctx = weir.load([weir.compile_string(SUM, "sum.mlir", options)], device="local-task")
    return np.asarray(ctx.lookup_function("f")(X))


def test_sum_reduction_in_order_without_reassociation() -> None:
    got = _llvm_cpu_sum(False)
    np.testing.assert_array_equal(got, sequential_sum(X, 1))
    assert abs(got[0] - 40.96) > 1e-3  # the sequential sum drifts: the flag changed the order


def _reference(source: str, *args: np.ndarray, device: str) -> np.ndarray:
    options = weir.CompilerOptions(target_backends=("reference",),
                                   llvmcpu_reassociate_fp_reductions=False)
    ctx = weir.load([weir.compile_string(source, "sum.mlir", options)], device=device)
    return np.asarray(ctx.lookup_function("f")(*args))


def test_reference_sums_in_order_without_reassociation_too() -> None:
    # IREE's regression/associative_reordering.mlir expects the in-order f32 sum (to 1e-4 of
    # 8e4, i.e. exactly): compiled with the flag, the reference target gives llvm-cpu's sum.
    for device in ("local-sync", "local-task"):
        got = _reference(SUM, X, device=device)
        np.testing.assert_array_equal(got, sequential_sum(X, 1))
        np.testing.assert_array_equal(got, _llvm_cpu_sum(False))


REDUCE_TWO_AXES = """
func.func @f(%x: tensor<3x50x40xf32>, %init: tensor<50xf32>) -> tensor<50xf32> {
  %r = linalg.reduce ins(%x : tensor<3x50x40xf32>) outs(%init : tensor<50xf32>) dimensions = [0, 2]
    (%in: f32, %acc: f32) {
      %s = arith.addf %in, %acc : f32
      linalg.yield %s : f32
    }
  return %r : tensor<50xf32>
}
"""


def test_reference_reduces_several_axes_in_loop_order_from_the_init() -> None:
    # Without reassociation the accumulator starts at init and takes x[0, j, 0], x[0, j, 1],
    # ... x[2, j, 39]: with a large init, small terms are lost one at a time, as in the loops.
    rng = np.random.default_rng(3)
    x = rng.uniform(0.0, 0.01, (3, 50, 40)).astype(np.float32)
    init = np.full(50, 3000.0, np.float32)
    total = init.copy()
    for i in range(3):
        for k in range(40):
            total = (total + x[i, :, k]).astype(np.float32)
    np.testing.assert_array_equal(_reference(REDUCE_TWO_AXES, x, init, device="local-sync"),
                                  total)


MATMUL_F16 = """
func.func @f(%a: tensor<2x2048xf16>, %b: tensor<2048x16xf16>) -> tensor<2x16xf16> {
  %zero = arith.constant 0.0 : f16
  %e = tensor.empty() : tensor<2x16xf16>
  %c = linalg.fill ins(%zero : f16) outs(%e : tensor<2x16xf16>) -> tensor<2x16xf16>
  %r = linalg.matmul ins(%a, %b : tensor<2x2048xf16>, tensor<2048x16xf16>)
                     outs(%c : tensor<2x16xf16>) -> tensor<2x16xf16>
  return %r : tensor<2x16xf16>
}
"""


def test_f16_matmul_rounds_to_f16_after_each_step(run: Runner) -> None:
    # IREE's large_linalg_matmul f16 case: 2048 x 0.01 summed in f16 stalls at 20.28, where
    # an f32 accumulator would reach 20.48.
    a = np.ones((2, 2048), np.float16)
    b = np.full((2048, 16), 0.01, np.float16)
    got = np.asarray(run(MATMUL_F16, "f", a, b))
    total = np.float16(0)
    for value in b[:, 0]:
        total = np.float16(np.float32(total) + np.float32(value))
    np.testing.assert_array_equal(got, np.full((2, 16), total, np.float16))
    assert abs(float(total) - 20.2812) < 0.01


def test_f16_matmul_in_f32_with_the_flag() -> None:
    a = np.ones((2, 2048), np.float16)
    b = np.full((2048, 16), 0.01, np.float16)
    expected = np.float16(np.float32(b[0, 0]) * 2048)  # one rounding: 20.48
    for target in ("reference", "llvm-cpu"):
        options = weir.CompilerOptions(target_backends=(target,), accumulate_f16_in_f32=True)
        ctx = weir.load([weir.compile_string(MATMUL_F16, "f16.mlir", options)],
                        device="local-sync")
        got = np.asarray(ctx.lookup_function("f")(a, b))
        np.testing.assert_array_equal(got, np.full((2, 16), expected, np.float16))
