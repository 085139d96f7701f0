"""The StableHLO ops weir reads (stablehlo.slice, stablehlo.reverse, in MLIR's generic form) on
every target and driver, against numpy: a strided slice followed by a reverse of two dimensions
(IREE's regression/xla_reverse_after_slice.mlir, generalised), and a reverse of a dynamic
dimension."""

from __future__ import annotations

import numpy as np

from tests.e2e.conftest import Runner


def test_reverse_after_strided_slice(run: Runner) -> None:
    src = """
func.func @f(%x: tensor<4x9x3xf32>) -> tensor<2x4x3xf32> {
  %s = "stablehlo.slice"(%x) {start_indices = array<i64: 1, 1, 0>, limit_indices = array<i64: 4, 9, 3>, strides = array<i64: 2, 2, 1>} : (tensor<4x9x3xf32>) -> tensor<2x4x3xf32>
  %r = "stablehlo.reverse"(%s) {dimensions = array<i64: 1, 2>} : (tensor<2x4x3xf32>) -> tensor<2x4x3xf32>
  return %r : tensor<2x4x3xf32>
}"""
    x = np.arange(4 * 9 * 3, dtype=np.float32).reshape(4, 9, 3)
    got = np.asarray(run(src, "f", x))
    np.testing.assert_array_equal(got, x[1:4:2, 1:9:2, :][:, ::-1, ::-1])


def test_reverse_of_a_dynamic_dimension(run: Runner) -> None:
    src = """
func.func @f(%x: tensor<2x?xi32>) -> tensor<2x?xi32> {
  %r = "stablehlo.reverse"(%x) <{dimensions = array<i64: 1>}> : (tensor<2x?xi32>) -> tensor<2x?xi32>
  return %r : tensor<2x?xi32>
}"""
    for n in (1, 7):
        x = np.arange(2 * n, dtype=np.int32).reshape(2, n)
        np.testing.assert_array_equal(np.asarray(run(src, "f", x)), x[:, ::-1])
