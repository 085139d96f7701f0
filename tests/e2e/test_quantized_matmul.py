"""linalg.quantized_matmul and linalg.generic with scalar inputs on every target and driver:
the product of i8 matrices less their zero points, accumulated in i32 onto the output, against
numpy, with the int8 range's ends and zero points either side of zero; and a generic that reads
two scalar arguments (its `()` maps) beside a tensor."""

from __future__ import annotations

from typing import Callable

import numpy as np
import pytest

Runner = Callable[..., object]  # the `run` fixture (conftest.py)


@pytest.mark.parametrize("zero_points", [(0, 0), (-128, 127), (3, -5)])
def test_quantized_matmul_matches_numpy(run: Runner, zero_points: tuple[int, int]) -> None:
    src = """
    func.func @f(%a: tensor<5x7xi8>, %b: tensor<7x3xi8>, %za: i32, %zb: i32,
                 %c: tensor<5x3xi32>) -> tensor<5x3xi32> {
      %0 = linalg.quantized_matmul ins(%a, %b, %za, %zb : tensor<5x7xi8>, tensor<7x3xi8>, i32, i32)
          outs(%c : tensor<5x3xi32>) -> tensor<5x3xi32>
      return %0 : tensor<5x3xi32>
    }"""
    rng = np.random.default_rng(5)
    a = rng.integers(-128, 128, (5, 7)).astype(np.int8)
    b = rng.integers(-128, 128, (7, 3)).astype(np.int8)
    a[0, :], b[:, 0] = -128, 127
    c = rng.integers(-1000, 1000, (5, 3)).astype(np.int32)
    za, zb = zero_points
    got = run(src, "f", a, b, np.int32(za), np.int32(zb), c)
    want = c + (a.astype(np.int64) - za) @ (b.astype(np.int64) - zb)
    np.testing.assert_array_equal(got, want.astype(np.int32))


def test_generic_reads_scalar_arguments(run: Runner) -> None:
    src = """
    func.func @f(%m: tensor<2x3xf32>, %s: f32, %t: f32) -> tensor<2x3xf32> {
      %e = tensor.empty() : tensor<2x3xf32>
      %r = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                             affine_map<(d0, d1) -> ()>, affine_map<(d0, d1) -> ()>,
                                             affine_map<(d0, d1) -> (d0, d1)>],
                            iterator_types = ["parallel", "parallel"]}
          ins(%m, %s, %t : tensor<2x3xf32>, f32, f32) outs(%e : tensor<2x3xf32>) {
      ^bb0(%x: f32, %k: f32, %d: f32, %o: f32):
        %p = arith.mulf %x, %k : f32
        %q = arith.addf %p, %d : f32
        linalg.yield %q : f32
      } -> tensor<2x3xf32>
      return %r : tensor<2x3xf32>
    }"""
    m = np.arange(6, dtype=np.float32).reshape(2, 3)
    got = run(src, "f", m, np.float32(2.5), np.float32(-1.0))
    np.testing.assert_array_equal(got, m * np.float32(2.5) - np.float32(1.0))
