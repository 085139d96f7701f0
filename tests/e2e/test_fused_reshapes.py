"""Static collapse_shape / expand_shape fused into the dispatch that reads them, compiled and run
on every host target against numpy: a transpose behind a reshape feeding a matmul (no dispatch
of its own), head splitting as attention does it (expand, transpose, slice), and a reshape of a
function argument read by a matmul (llvm-cpu reads the argument's memory as is)."""

from __future__ import annotations

from typing import Callable

import numpy as np

import weir.api as weir

Runner = Callable[..., object]  # the `run` fixture (conftest.py): every host target
RNG = np.random.default_rng(23)


def dispatches(src: str) -> int:
    flow = weir.compile_to_phase(src, "reshapes.mlir", weir.CompilerOptions(), "flow")
    return flow.count('"flow.dispatch"(')


def normal(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def test_transpose_and_collapse_into_a_matmul(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<1x16x64xf32>, %w: tensor<64x32xf32>) -> tensor<16x32xf32> {
      %zero = arith.constant 0.0 : f32
      %t0 = tensor.empty() : tensor<16x1x64xf32>
      %t = linalg.transpose ins(%x : tensor<1x16x64xf32>) outs(%t0 : tensor<16x1x64xf32>) permutation = [1, 0, 2]
      %c = tensor.collapse_shape %t [[0], [1, 2]] : tensor<16x1x64xf32> into tensor<16x64xf32>
      %e = tensor.empty() : tensor<16x32xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<16x32xf32>) -> tensor<16x32xf32>
      %mm = linalg.matmul ins(%c, %w : tensor<16x64xf32>, tensor<64x32xf32>) outs(%acc : tensor<16x32xf32>) -> tensor<16x32xf32>
      return %mm : tensor<16x32xf32>
    }"""
    assert dispatches(src) == 1
    x, w = normal(1, 16, 64), normal(64, 32)
    np.testing.assert_allclose(np.asarray(run(src, "f", x, w)), x[0] @ w, rtol=1e-4, atol=1e-4)


def test_head_split(run: Runner) -> None:
    src = """
    func.func @f(%qkv: tensor<16x192xf32>) -> tensor<4x16x16xf32> {
      %x = tensor.expand_shape %qkv [[0], [1, 2]] output_shape [16, 3, 64] : tensor<16x192xf32> into tensor<16x3x64xf32>
      %k = tensor.extract_slice %x[0, 1, 0] [16, 1, 64] [1, 1, 1] : tensor<16x3x64xf32> to tensor<16x64xf32>
      %h = tensor.expand_shape %k [[0], [1, 2]] output_shape [16, 4, 16] : tensor<16x64xf32> into tensor<16x4x16xf32>
      %e = tensor.empty() : tensor<4x16x16xf32>
      %t = linalg.transpose ins(%h : tensor<16x4x16xf32>) outs(%e : tensor<4x16x16xf32>) permutation = [1, 0, 2]
      %y = math.exp %t : tensor<4x16x16xf32>
      return %y : tensor<4x16x16xf32>
    }"""
    assert dispatches(src) == 1
    qkv = normal(16, 192)
    expected = np.exp(qkv.reshape(16, 3, 64)[:, 1].reshape(16, 4, 16).transpose(1, 0, 2))
    np.testing.assert_allclose(np.asarray(run(src, "f", qkv)), expected, rtol=1e-5)


def test_collapsed_argument_into_a_batch_matmul(run: Runner) -> None:
    src = """
    func.func @f(%a: tensor<1x4x8x16xf32>, %b: tensor<4x16x8xf32>) -> tensor<4x8x8xf32> {
      %zero = arith.constant 0.0 : f32
      %c = tensor.collapse_shape %a [[0, 1], [2], [3]] : tensor<1x4x8x16xf32> into tensor<4x8x16xf32>
      %e = tensor.empty() : tensor<4x8x8xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
      %mm = linalg.batch_matmul ins(%c, %b : tensor<4x8x16xf32>, tensor<4x16x8xf32>) outs(%acc : tensor<4x8x8xf32>) -> tensor<4x8x8xf32>
      return %mm : tensor<4x8x8xf32>
    }"""
    assert dispatches(src) == 1
    a, b = normal(1, 4, 8, 16), normal(4, 16, 8)
    np.testing.assert_allclose(np.asarray(run(src, "f", a, b)), a[0] @ b, rtol=1e-4, atol=1e-4)


def test_reshape_of_a_dispatch_result_fuses_into_its_reader(run: Runner) -> None:
    src = """
    func.func @f(%x: tensor<6x8xf32>, %w: tensor<8x12xf32>) -> tensor<12x6xf32> {
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty() : tensor<6x12xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<6x12xf32>) -> tensor<6x12xf32>
      %mm = linalg.matmul ins(%x, %w : tensor<6x8xf32>, tensor<8x12xf32>) outs(%acc : tensor<6x12xf32>) -> tensor<6x12xf32>
      %r = tensor.expand_shape %mm [[0], [1, 2]] output_shape [6, 3, 4] : tensor<6x12xf32> into tensor<6x3x4xf32>
      %t0 = tensor.empty() : tensor<3x4x6xf32>
      %t = linalg.transpose ins(%r : tensor<6x3x4xf32>) outs(%t0 : tensor<3x4x6xf32>) permutation = [1, 2, 0]
      %c = tensor.collapse_shape %t [[0, 1], [2]] : tensor<3x4x6xf32> into tensor<12x6xf32>
      %y = math.absf %c : tensor<12x6xf32>
      return %y : tensor<12x6xf32>
    }"""
    assert dispatches(src) == 2
    x, w = normal(6, 8), normal(8, 12)
    expected = np.abs((x @ w).reshape(6, 3, 4).transpose(1, 2, 0).reshape(12, 6))
    np.testing.assert_allclose(np.asarray(run(src, "f", x, w)), expected, rtol=1e-4, atol=1e-4)
