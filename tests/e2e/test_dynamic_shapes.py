"""Dynamic shapes end to end on every target and driver: `?` dimensions in arguments and results,
`tensor.dim` on the host, and dispatches (elementwise, matmul, reductions, transposes) whose sizes
arrive as push constants. Each module is called with several shapes, so nothing may have been
specialised to the first call. Integers compare exactly, f32 within 1e-5 relative."""

from __future__ import annotations

from typing import Callable

import numpy as np

Runner = Callable[..., object]  # the `run` fixture (conftest.py)
RNG = np.random.default_rng(5)
SHAPES = [(3, 5), (1, 7), (8, 2)]


def _f32(*shape: int) -> np.ndarray:
    return RNG.standard_normal(shape).astype(np.float32)


def test_dynamic_elementwise_arguments_and_result(run: Runner) -> None:
    src = """
    func.func @axpy(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
      %0 = arith.mulf %a, %b : tensor<?x?xf32>
      %1 = arith.addf %0, %a : tensor<?x?xf32>
      return %1 : tensor<?x?xf32>
    }"""
    for shape in SHAPES:
        a, b = _f32(*shape), _f32(*shape)
        got = run(src, "axpy", a, b)
        assert got.shape == shape  # type: ignore[union-attr]
        np.testing.assert_allclose(got, a * b + a, rtol=1e-6)


def test_tensor_dim_results_and_shape_math_on_the_host(run: Runner) -> None:
    src = """
    func.func @dims(%a: tensor<?x4x?xi32>) -> (index, index, index, index) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %c2 = arith.constant 2 : index
      %d0 = tensor.dim %a, %c0 : tensor<?x4x?xi32>
      %d1 = tensor.dim %a, %c1 : tensor<?x4x?xi32>
      %d2 = tensor.dim %a, %c2 : tensor<?x4x?xi32>
      %p = arith.muli %d0, %d2 : index
      %n = arith.muli %p, %d1 : index
      return %d0, %d1, %d2, %n : index, index, index, index
    }"""
    for shape in [(2, 4, 3), (5, 4, 1), (0, 4, 7)]:
        got = run(src, "dims", np.zeros(shape, np.int32))
        assert [int(g) for g in got] == [*shape, int(np.prod(shape))]  # type: ignore[union-attr]


def test_dynamic_matmul(run: Runner) -> None:
    src = """
    func.func @mm(%a: tensor<?x?xf32>, %b: tensor<?x?xf32>) -> tensor<?x?xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %m = tensor.dim %a, %c0 : tensor<?x?xf32>
      %n = tensor.dim %b, %c1 : tensor<?x?xf32>
      %zero = arith.constant 0.0 : f32
      %e = tensor.empty(%m, %n) : tensor<?x?xf32>
      %acc = linalg.fill ins(%zero : f32) outs(%e : tensor<?x?xf32>) -> tensor<?x?xf32>
      %0 = linalg.matmul ins(%a, %b : tensor<?x?xf32>, tensor<?x?xf32>)
                         outs(%acc : tensor<?x?xf32>) -> tensor<?x?xf32>
      return %0 : tensor<?x?xf32>
    }"""
    for m, k, n in [(3, 5, 4), (1, 9, 2), (17, 3, 33)]:
        a, b = _f32(m, k), _f32(k, n)
        got = run(src, "mm", a, b)
        assert got.shape == (m, n)  # type: ignore[union-attr]
        np.testing.assert_allclose(got, a @ b, rtol=1e-5, atol=1e-5)


def test_dynamic_reductions_over_rows_and_columns(run: Runner) -> None:
    src = """
    func.func @sums(%a: tensor<?x?xi32>) -> (tensor<?xi32>, tensor<?xi32>) {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %m = tensor.dim %a, %c0 : tensor<?x?xi32>
      %n = tensor.dim %a, %c1 : tensor<?x?xi32>
      %zero = arith.constant 0 : i32
      %er = tensor.empty(%m) : tensor<?xi32>
      %rows0 = linalg.fill ins(%zero : i32) outs(%er : tensor<?xi32>) -> tensor<?xi32>
      %rows = linalg.reduce ins(%a : tensor<?x?xi32>) outs(%rows0 : tensor<?xi32>) dimensions = [1]
        (%x: i32, %acc: i32) {
          %s = arith.addi %x, %acc : i32
          linalg.yield %s : i32
        }
      %ec = tensor.empty(%n) : tensor<?xi32>
      %cols0 = linalg.fill ins(%zero : i32) outs(%ec : tensor<?xi32>) -> tensor<?xi32>
      %cols = linalg.generic {indexing_maps = [affine_map<(d0, d1) -> (d0, d1)>,
                                               affine_map<(d0, d1) -> (d1)>],
                              iterator_types = ["reduction", "parallel"]}
          ins(%a : tensor<?x?xi32>) outs(%cols0 : tensor<?xi32>) {
      ^bb0(%x: i32, %acc: i32):
        %s = arith.maxsi %x, %acc : i32
        linalg.yield %s : i32
      } -> tensor<?xi32>
      return %rows, %cols : tensor<?xi32>, tensor<?xi32>
    }"""
    for shape in SHAPES:
        a = RNG.integers(-2**31, 2**31 - 1, shape, dtype=np.int64).astype(np.int32)
        rows, cols = run(src, "sums", a)  # type: ignore[misc]
        np.testing.assert_array_equal(rows, a.sum(axis=1, dtype=np.int32))  # wraps
        np.testing.assert_array_equal(cols, np.maximum(a.max(axis=0), 0))


def test_dynamic_transpose_and_broadcast(run: Runner) -> None:
    src = """
    func.func @tb(%a: tensor<?x?xf32>, %v: tensor<?xf32>) -> tensor<?x?xf32> {
      %c0 = arith.constant 0 : index
      %c1 = arith.constant 1 : index
      %m = tensor.dim %a, %c0 : tensor<?x?xf32>
      %n = tensor.dim %a, %c1 : tensor<?x?xf32>
      %et = tensor.empty(%n, %m) : tensor<?x?xf32>
      %t = linalg.transpose ins(%a : tensor<?x?xf32>) outs(%et : tensor<?x?xf32>) permutation = [1, 0]
      %eb = tensor.empty(%n, %m) : tensor<?x?xf32>
      %b = linalg.broadcast ins(%v : tensor<?xf32>) outs(%eb : tensor<?x?xf32>) dimensions = [1]
      %0 = arith.subf %t, %b : tensor<?x?xf32>
      return %0 : tensor<?x?xf32>
    }"""
    for m, n in SHAPES:
        a, v = _f32(m, n), _f32(n)
        np.testing.assert_array_equal(run(src, "tb", a, v), a.T - v[:, None])


def test_dynamic_generic_with_a_host_scalar_and_index(run: Runner) -> None:
    src = """
    func.func @ramp(%a: tensor<?xi64>, %step: i64) -> tensor<?xi64> {
      %c0 = arith.constant 0 : index
      %n = tensor.dim %a, %c0 : tensor<?xi64>
      %e = tensor.empty(%n) : tensor<?xi64>
      %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>, affine_map<(d0) -> (d0)>],
                           iterator_types = ["parallel"]}
          ins(%a : tensor<?xi64>) outs(%e : tensor<?xi64>) {
      ^bb0(%x: i64, %o: i64):
        %i = linalg.index 0 : index
        %ii = arith.index_cast %i : index to i64
        %k = arith.muli %ii, %step : i64
        %y = arith.addi %x, %k : i64
        linalg.yield %y : i64
      } -> tensor<?xi64>
      return %0 : tensor<?xi64>
    }"""
    for n in (1, 6, 40):
        a = RNG.integers(-1000, 1000, n)
        step = 2**62
        expected = (a.astype(object) + np.arange(n, dtype=object) * step)
        expected = np.array([((int(x) + 2**63) % 2**64) - 2**63 for x in expected], np.int64)
        np.testing.assert_array_equal(run(src, "ramp", a, step), expected)


def test_results_sized_from_a_host_computed_dimension(run: Runner) -> None:
    src = """
    func.func @twice(%a: tensor<?xf32>) -> tensor<?xf32> {
      %c0 = arith.constant 0 : index
      %c2 = arith.constant 2 : index
      %n = tensor.dim %a, %c0 : tensor<?xf32>
      %m = arith.muli %n, %c2 : index
      %e = tensor.empty(%m) : tensor<?xf32>
      %0 = linalg.generic {indexing_maps = [affine_map<(d0) -> (d0)>],
                           iterator_types = ["parallel"]}
          outs(%e : tensor<?xf32>) {
      ^bb0(%o: f32):
        %i = linalg.index 0 : index
        %h = arith.divui %i, %c2 : index
        %f = arith.index_cast %h : index to i32
        %x = arith.sitofp %f : i32 to f32
        linalg.yield %x : f32
      } -> tensor<?xf32>
      return %0 : tensor<?xf32>
    }"""
    for n in (1, 4, 9):
        np.testing.assert_array_equal(run(src, "twice", np.zeros(n, np.float32)),
                                      np.repeat(np.arange(n, dtype=np.float32), 2))
